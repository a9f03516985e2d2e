/* Round-to-nearest-even into small binary formats, by integer arithmetic on
 * the fp32 bit pattern (no dependence on the FPU rounding mode). */
#include "minifloat.h"

#include <string.h>

uint32_t fp4lr_minifloat_round(float a, int mbits, int emin)
{
    uint32_t bits;
    memcpy(&bits, &a, sizeof bits);
    bits &= 0x7FFFFFFFu;
    if (bits == 0)
        return 0;

    /* a = sig * 2^(exp - 23) with sig a 24-bit integer (fp32 subnormals have
     * no hidden bit and exponent -126). */
    int32_t efield = (int32_t)(bits >> 23);
    uint64_t sig = bits & 0x7FFFFFu;
    int32_t exp;
    if (efield == 0) {
        exp = -126;
    } else {
        sig |= 0x800000u;
        exp = efield - 127;
    }
    /* Normalise so the leading 1 is bit 23 (only matters for fp32 subnormals). */
    while (!(sig & 0x800000u)) {
        sig <<= 1;
        exp -= 1;
    }

    /* Target quantum (ulp): 2^(exp - mbits) in a normal binade, 2^(emin - mbits)
     * in the subnormal range.  In units of it, a = sig * 2^shift. */
    int32_t qexp = (exp >= emin ? exp : emin) - mbits; /* log2 of the target ulp */
    int32_t shift = (exp - 23) - qexp;                 /* a = sig * 2^shift ulps */
    uint64_t units;
    if (shift >= 0) {
        units = sig << shift; /* only for mbits >= 23: exact, no rounding */
    } else if (-shift > 40) {
        units = 0; /* far below half a quantum: rounds to zero */
    } else {
        int32_t s = -shift;
        uint64_t kept = sig >> s;
        uint64_t rem = sig & ((1ull << s) - 1);
        uint64_t half = 1ull << (s - 1);
        /* RNE: up when above the midpoint, or on it with an odd kept value. */
        if (rem > half || (rem == half && (kept & 1)))
            kept += 1;
        units = kept;
    }

    /* units counts target ulps of the binade (or of the subnormal range).
     * Convert to a code: subnormal codes equal units directly; in a normal
     * binade units = 2^mbits + m and the code is (bexp << mbits) + m, which
     * is units + (bexp - 1) << mbits.  A carry into the next binade
     * (units == 2^(mbits+1)) lands on the correct code by the same sum. */
    if (exp < emin)
        return (uint32_t)units;
    int32_t bexp = exp - emin + 1; /* biased exponent, bias 1 - emin */
    return (uint32_t)(units + ((uint64_t)(bexp - 1) << mbits));
}
