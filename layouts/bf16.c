/* bf16 / fp16 conversions (RNE) and ulp helpers. */
#include "bf16.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "minifloat.h"

uint16_t fp4lr_bf16_from_float(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    if (isnan(v))
        return (uint16_t)((bits >> 16) | 0x0040u); /* keep sign and payload top, force quiet */
    /* RNE on the low 16 bits; a carry into the exponent gives the next
     * binade or Inf, both correct. */
    uint32_t lsb = (bits >> 16) & 1u;
    bits += 0x7FFFu + lsb;
    return (uint16_t)(bits >> 16);
}

float fp4lr_bf16_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

#define F16_MAX_CODE 0x7BFFu
#define F16_INF 0x7C00u

uint16_t fp4lr_f16_from_float(float v)
{
    uint16_t sign = signbit(v) ? 0x8000u : 0u;
    if (isnan(v))
        return (uint16_t)(sign | 0x7E00u);
    if (isinf(v))
        return (uint16_t)(sign | F16_INF);
    /* 10 mantissa bits, smallest normal 2^-14; RNE; overflow -> Inf. */
    uint32_t c = fp4lr_minifloat_round(fabsf(v), 10, -14);
    return (uint16_t)(sign | (c > F16_MAX_CODE ? F16_INF : c));
}

float fp4lr_f16_to_float(uint16_t h)
{
    float sign = (h & 0x8000u) ? -1.0f : 1.0f;
    int e = (h >> 10) & 0x1F;
    int m = h & 0x3FF;
    if (e == 31)
        return m ? NAN : sign * INFINITY;
    if (e == 0)
        return sign * ldexpf((float)m, -24);
    return sign * ldexpf((float)(1024 + m), e - 25);
}

/* Spacing of the binade of |x| for a format with `mbits` stored mantissa
 * bits, smallest normal 2^emin and largest finite `maxv`. */
static double ulp_of(double x, int mbits, int emin, double maxv)
{
    double a = fabs(x);
    if (isnan(a))
        return NAN;
    if (a > maxv)
        a = maxv;
    int e;
    if (a < ldexp(1.0, emin)) {
        e = emin; /* subnormal range: fixed spacing 2^(emin - mbits) */
    } else {
        frexp(a, &e); /* a = f * 2^e, f in [0.5, 1): binade 2^(e-1) */
        e -= 1;
    }
    return ldexp(1.0, e - mbits);
}

double fp4lr_bf16_ulp(double x) { return ulp_of(x, 7, -126, 0x1.FEp127); }
double fp4lr_f16_ulp(double x) { return ulp_of(x, 10, -14, 65504.0); }
double fp4lr_f32_ulp(double x) { return ulp_of(x, 23, -126, FLT_MAX); }
