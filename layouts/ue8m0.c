/* ue8m0 codec: exact decode, exponent construction, and the ml_dtypes-
 * compatible float encoder. */
#include "ue8m0.h"

#include <math.h>
#include <string.h>

#define UE8M0_NAN_CODE 0xFFu

float fp4lr_ue8m0_decode(uint8_t code)
{
    if (code == UE8M0_NAN_CODE)
        return NAN;
    return ldexpf(1.0f, (int)code - 127); /* 2^-127 is an exact fp32 subnormal */
}

uint8_t fp4lr_ue8m0_from_exponent(int e)
{
    long c = (long)e + 127;
    if (c < 0)
        c = 0;
    if (c > 254)
        c = 254;
    return (uint8_t)c;
}

/* ml_dtypes' float8_e8m0fnu conversion (checked against ml_dtypes 0.7 by the
 * oracle vectors): 0, negatives, Inf and NaN -> 0xFF (NaN; e8m0 has no zero
 * and no sign).  A positive finite v = 1.f * 2^e rounds on its mantissa with
 * ties AWAY from zero: f >= 0.5 (v >= 1.5 * 2^e) -> 2^(e+1), else 2^e.  This is
 * not round-to-nearest-even (1.5 and 3 both round up), despite the name the
 * API gives it.  Results below 2^-127 clamp to 0x00 (also fp32 subnormals
 * under 1.5 * 2^-127), results above 2^127 overflow to NaN. */
uint8_t fp4lr_ue8m0_encode_rne(float v)
{
    if (!(v > 0.0f) || isinf(v))
        return UE8M0_NAN_CODE;
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    int32_t efield = (int32_t)(bits >> 23);
    uint32_t mant = bits & 0x7FFFFFu;
    int32_t biased;
    if (efield == 0) {
        /* fp32 subnormal v = mant * 2^-149 < 2^-126: the candidates are
         * 2^-127 (code 0) and 2^-126 (code 1); the rounding threshold
         * 1.5 * 2^-127 is mant = 0x600000.  Below 2^-127 clamps to code 0. */
        biased = mant >= 0x600000u ? 1 : 0;
    } else {
        biased = efield + (mant >= 0x400000u ? 1 : 0);
    }
    if (biased > 254)
        return UE8M0_NAN_CODE;
    return (uint8_t)biased;
}
