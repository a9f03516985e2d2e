/* e2m1 (FP4) element codec (OPERATOR.md §3).
 *
 * Code layout S.EE.M, bias 1.  Codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6;
 * codes 8..15 are their negatives (8 = -0).  No Inf, no NaN. */
#ifndef FP4LR_E2M1_H
#define FP4LR_E2M1_H

#include <stdint.h>

/* Exact value of a code; only the low 4 bits of `code` are used. */
float fp4lr_e2m1_decode(uint8_t code);

/* Round to nearest, ties to the even code, saturating to +-6.
 * -0 and negative values that round to zero give 8 (-0); +-Inf saturate to
 * +-6.  NaN has no e2m1 encoding: it gives 0 (documented choice; the
 * quantizers never feed NaN here except inside a NaN-scaled block). */
uint8_t fp4lr_e2m1_encode(float v);

/* The code of the exact real quotient v / d (d finite, > 0), rounded to
 * nearest, ties to even, saturating to +-6, with NO intermediate rounding:
 * |v| is compared with each midpoint times d, products exact in double.
 * Same sign, Inf and NaN rules as fp4lr_e2m1_encode (which is d = 1). */
uint8_t fp4lr_e2m1_encode_div(float v, double d);

#endif
