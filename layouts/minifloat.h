/* Internal: round a non-negative float to a small binary floating-point
 * format (the shared core of the e2m1, e4m3, f16 and bf16 encoders). */
#ifndef FP4LR_MINIFLOAT_H
#define FP4LR_MINIFLOAT_H

#include <stdint.h>

/* Round a (finite, >= 0) to the nearest value of a format with `mbits`
 * stored mantissa bits and smallest normal exponent `emin` (subnormals below
 * it, no implicit range limit), ties to the even code.  Returns the unsigned
 * code (biased exponent << mbits | mantissa) with bias 1 - emin; the caller
 * compares it with its format's largest finite code to saturate or overflow.
 * Independent of the floating-point rounding mode (integer arithmetic only). */
uint32_t fp4lr_minifloat_round(float a, int mbits, int emin);

#endif
