/* e2m1 codec: exact table decode; RNE saturating encode by exact midpoint
 * comparison. */
#include "e2m1.h"

#include <math.h>

static const float e2m1_values[16] = {
    0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
    -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f,
};

/* Midpoints between consecutive magnitudes: mid[i] lies between code i and
 * code i+1.  Each has at most 3 significant bits, so mid[i] * d is exact in
 * double for any fp32-derived d with up to 50 significant bits. */
static const double e2m1_midpoints[7] = {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0};

float fp4lr_e2m1_decode(uint8_t code) { return e2m1_values[code & 0x0F]; }

uint8_t fp4lr_e2m1_encode_div(float v, double d)
{
    if (isnan(v))
        return 0; /* no NaN in e2m1: documented choice */
    uint8_t sign = signbit(v) ? 0x08 : 0x00;
    double a = fabs((double)v);
    uint8_t code = 7; /* beyond the last midpoint (and Inf): saturate to 6 */
    for (uint8_t i = 0; i < 7; i++) {
        double t = e2m1_midpoints[i] * d;
        if (a < t) {
            code = i;
            break;
        }
        if (a == t) { /* tie: the even code of i and i+1 */
            code = (i & 1) ? (uint8_t)(i + 1) : i;
            break;
        }
    }
    return (uint8_t)(sign | code);
}

uint8_t fp4lr_e2m1_encode(float v) { return fp4lr_e2m1_encode_div(v, 1.0); }
