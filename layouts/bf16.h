/* bf16 and fp16 conversions and unit-in-the-last-place helpers, used by the
 * reference and the output comparison (OPERATOR.md §5). */
#ifndef FP4LR_BF16_H
#define FP4LR_BF16_H

#include <stdint.h>

/* float -> bf16 bits, round to nearest even; overflow -> Inf; NaN stays NaN
 * (quiet bit forced, sign kept). */
uint16_t fp4lr_bf16_from_float(float v);
/* bf16 bits -> float (exact). */
float fp4lr_bf16_to_float(uint16_t b);

/* float -> IEEE binary16 bits, round to nearest even (subnormals included);
 * overflow -> Inf; NaN stays NaN (quiet). */
uint16_t fp4lr_f16_from_float(float v);
/* binary16 bits -> float (exact). */
float fp4lr_f16_to_float(uint16_t h);

/* One unit in the last place of the type at |x|: the spacing of the binade
 * that holds |x| (the subnormal spacing below the smallest normal); beyond
 * the largest finite value, the ulp at the largest finite value.  NaN -> NaN. */
double fp4lr_bf16_ulp(double x);
double fp4lr_f16_ulp(double x);
double fp4lr_f32_ulp(double x);

#endif
