/* ue8m0 (MXFP4 block scale) codec (OPERATOR.md §3, OCP MX v1.0).
 *
 * An 8-bit biased exponent: value 2^(E-127) for E = 0..254; 0xFF is NaN.
 * There is no zero, no sign and no Inf. */
#ifndef FP4LR_UE8M0_H
#define FP4LR_UE8M0_H

#include <stdint.h>

/* 2^(code-127) exactly (0x00 = 2^-127 is an fp32 subnormal); 0xFF -> NaN. */
float fp4lr_ue8m0_decode(uint8_t code);

/* The code of 2^e with e+127 clamped to 0..254 (never produces NaN). */
uint8_t fp4lr_ue8m0_from_exponent(int e);

/* float -> ue8m0 exactly as ml_dtypes' float8_e8m0fnu conversion does
 * (see ue8m0.c for the rounding rule); used for the oracle cross-check. */
uint8_t fp4lr_ue8m0_encode_rne(float v);

#endif
