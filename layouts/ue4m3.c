/* ue4m3 / e4m3fn codec: exact decode, RNE encoders (unsigned satfinite,
 * signed satfinite, signed non-saturating as ml_dtypes). */
#include "ue4m3.h"

#include <math.h>

#include "minifloat.h"

#define E4M3_MAX_CODE 0x7Eu /* 448 */
#define E4M3_NAN_CODE 0x7Fu

float fp4lr_ue4m3_decode(uint8_t code)
{
    float sign = (code & 0x80) ? -1.0f : 1.0f;
    uint32_t e = (code >> 3) & 0x0F, m = code & 0x07;
    if (e == 15 && m == 7)
        return NAN;
    if (e == 0)
        return sign * ldexpf((float)m, -9); /* subnormal: m * 2^-9 */
    return sign * ldexpf((float)(8 + m), (int)e - 10); /* (1 + m/8) * 2^(e-7) */
}

int fp4lr_ue4m3_valid(uint8_t code) { return code <= E4M3_MAX_CODE; }

/* |v| rounded RNE to e4m3 (3 mantissa bits, smallest normal 2^-6); may
 * exceed the largest finite code, the caller decides. */
static uint32_t e4m3_round_abs(float v) { return fp4lr_minifloat_round(fabsf(v), 3, -6); }

uint8_t fp4lr_ue4m3_encode(float v)
{
    if (isnan(v) || (v < 0.0f))
        return E4M3_NAN_CODE;
    if (isinf(v))
        return E4M3_MAX_CODE;
    uint32_t c = e4m3_round_abs(v);
    return (uint8_t)(c > E4M3_MAX_CODE ? E4M3_MAX_CODE : c);
}

uint8_t fp4lr_ue4m3_encode_div(float num, double den)
{
    /* Largest code c with value(c) * den <= num, by bisection over the
     * monotone codes 0x00..0x7E (value(0) = 0, so c exists). */
    uint8_t lo = 0, hi = E4M3_MAX_CODE;
    while (lo < hi) {
        uint8_t mid = (uint8_t)((lo + hi + 1) / 2);
        if ((double)fp4lr_ue4m3_decode(mid) * den <= (double)num)
            lo = mid;
        else
            hi = (uint8_t)(mid - 1);
    }
    if (lo == E4M3_MAX_CODE)
        return E4M3_MAX_CODE; /* satfinite */
    /* Round between lo and lo+1 at their midpoint (5 significant bits). */
    double m = 0.5 * ((double)fp4lr_ue4m3_decode(lo) + (double)fp4lr_ue4m3_decode((uint8_t)(lo + 1)));
    double t = m * den;
    if ((double)num > t || ((double)num == t && (lo & 1)))
        return (uint8_t)(lo + 1);
    return lo;
}

uint8_t fp4lr_e4m3_encode_rne_sat(float v)
{
    uint8_t sign = signbit(v) ? 0x80 : 0x00;
    if (isnan(v))
        return (uint8_t)(sign | E4M3_NAN_CODE);
    uint32_t c = isinf(v) ? E4M3_MAX_CODE : e4m3_round_abs(v);
    return (uint8_t)(sign | (c > E4M3_MAX_CODE ? E4M3_MAX_CODE : c));
}

uint8_t fp4lr_e4m3_encode_rne_nonsat(float v)
{
    uint8_t sign = signbit(v) ? 0x80 : 0x00;
    if (isnan(v) || isinf(v))
        return (uint8_t)(sign | E4M3_NAN_CODE);
    uint32_t c = e4m3_round_abs(v);
    return (uint8_t)(sign | (c > E4M3_MAX_CODE ? E4M3_NAN_CODE : c));
}
