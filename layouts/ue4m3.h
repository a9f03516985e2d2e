/* ue4m3 (NVFP4 block scale) and e4m3fn codecs (OPERATOR.md §3).
 *
 * e4m3fn: S.EEEE.MMM, bias 7, subnormals (E = 0: M * 2^-9), max finite 448
 * (0x7E), 0x7F and 0xFF are NaN, no Inf.  ue4m3 is e4m3fn used with the sign
 * bit 0; a scale byte with bit 7 set is invalid input (fp4lr_ue4m3_valid). */
#ifndef FP4LR_UE4M3_H
#define FP4LR_UE4M3_H

#include <stdint.h>

/* Exact value with e4m3fn semantics; bit 7 is decoded as a sign, exactly as
 * the e4m3 hardware conversions do (0x80 = -0, 0xFE = -448, 0xFF = NaN). */
float fp4lr_ue4m3_decode(uint8_t code);

/* 1 when `code` is a valid finite unsigned scale (0x00..0x7E), else 0. */
int fp4lr_ue4m3_valid(uint8_t code);

/* Unsigned scale encoder used by the NVFP4 quantizer: round to nearest,
 * ties to even, saturating finite values and +Inf to 448 (0x7E).
 * +-0 -> 0x00.  NaN and every negative value (no unsigned encoding) -> 0x7F,
 * the NaN code, so a bad scale is visible rather than silently clamped. */
uint8_t fp4lr_ue4m3_encode(float v);

/* The unsigned code of the exact real quotient num / den (num >= 0 finite,
 * den > 0 finite), rounded to nearest, ties to even, saturating to 448, with
 * NO intermediate rounding: num is compared with code values and midpoints
 * times den, each product exact in double (<= 5 + 27 significant bits for
 * den with up to 27 bits, e.g. 6 * an fp32).  Used for NVFP4 block scales. */
uint8_t fp4lr_ue4m3_encode_div(float num, double den);

/* Signed e4m3fn encoder, round to nearest even, satfinite: |v| > 448 and
 * +-Inf -> +-448; NaN -> 0x7F (sign of the NaN is kept: 0xFF when set).
 * Same as `cvt.rn.satfinite.e4m3x2.f32`. */
uint8_t fp4lr_e4m3_encode_rne_sat(float v);

/* Signed e4m3fn encoder, round to nearest even, NOT saturating: a value
 * whose rounding exceeds 448 (|v| >= 464) and +-Inf become NaN (0x7F/0xFF).
 * This is ml_dtypes' float8_e4m3fn conversion; used for the oracle check. */
uint8_t fp4lr_e4m3_encode_rne_nonsat(float v);

#endif
