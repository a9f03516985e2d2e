/* Element and scale formats: hand-checked vectors for e2m1, ue4m3/e4m3fn,
 * ue8m0, bf16 and fp16, and the ulp helpers (OPERATOR.md §3, §5). */
#include <criterion/criterion.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "bf16.h"
#include "e2m1.h"
#include "ue4m3.h"
#include "ue8m0.h"

static uint32_t bits_of(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static float float_of(uint32_t b)
{
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* ---- e2m1 --------------------------------------------------------------- */

Test(formats, e2m1_decode_every_code)
{
    static const float want[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                                   -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
    for (int c = 0; c < 16; c++)
        cr_expect_eq(bits_of(fp4lr_e2m1_decode((uint8_t)c)), bits_of(want[c]), "code %d", c);
    cr_expect(signbit(fp4lr_e2m1_decode(8)), "code 8 is -0");
}

Test(formats, e2m1_decode_ignores_upper_bits)
{
    cr_expect_eq(fp4lr_e2m1_decode(0xF7), 6.0f);
    cr_expect_eq(fp4lr_e2m1_decode(0x3A), -1.0f);
}

Test(formats, e2m1_encode_exact_values_round_trip)
{
    for (int c = 0; c < 16; c++)
        cr_expect_eq(fp4lr_e2m1_encode(fp4lr_e2m1_decode((uint8_t)c)), c, "code %d", c);
}

Test(formats, e2m1_positive_midpoints_go_to_even_code)
{
    cr_expect_eq(fp4lr_e2m1_encode(0.25f), 0); /* 0 | 0.5   -> 0 */
    cr_expect_eq(fp4lr_e2m1_encode(0.75f), 2); /* 0.5 | 1   -> 1 */
    cr_expect_eq(fp4lr_e2m1_encode(1.25f), 2); /* 1 | 1.5   -> 1 */
    cr_expect_eq(fp4lr_e2m1_encode(1.75f), 4); /* 1.5 | 2   -> 2 */
    cr_expect_eq(fp4lr_e2m1_encode(2.5f), 4);  /* 2 | 3     -> 2 */
    cr_expect_eq(fp4lr_e2m1_encode(3.5f), 6);  /* 3 | 4     -> 4 */
    cr_expect_eq(fp4lr_e2m1_encode(5.0f), 6);  /* 4 | 6     -> 4 */
}

Test(formats, e2m1_negative_midpoints_go_to_even_code)
{
    cr_expect_eq(fp4lr_e2m1_encode(-0.25f), 0x8);
    cr_expect_eq(fp4lr_e2m1_encode(-0.75f), 0xA);
    cr_expect_eq(fp4lr_e2m1_encode(-1.25f), 0xA);
    cr_expect_eq(fp4lr_e2m1_encode(-1.75f), 0xC);
    cr_expect_eq(fp4lr_e2m1_encode(-2.5f), 0xC);
    cr_expect_eq(fp4lr_e2m1_encode(-3.5f), 0xE);
    cr_expect_eq(fp4lr_e2m1_encode(-5.0f), 0xE);
}

Test(formats, e2m1_one_ulp_off_midpoints_rounds_to_nearest)
{
    cr_expect_eq(fp4lr_e2m1_encode(nextafterf(0.25f, 1.0f)), 1);
    cr_expect_eq(fp4lr_e2m1_encode(nextafterf(0.75f, 0.0f)), 1);
    cr_expect_eq(fp4lr_e2m1_encode(nextafterf(1.25f, 2.0f)), 3);
    cr_expect_eq(fp4lr_e2m1_encode(nextafterf(2.5f, 3.0f)), 5);
    cr_expect_eq(fp4lr_e2m1_encode(nextafterf(3.5f, 0.0f)), 5);
    cr_expect_eq(fp4lr_e2m1_encode(nextafterf(5.0f, 6.0f)), 7);
    cr_expect_eq(fp4lr_e2m1_encode(-nextafterf(5.0f, 0.0f)), 0xE);
}

Test(formats, e2m1_saturates_to_six)
{
    cr_expect_eq(fp4lr_e2m1_encode(7.0f), 7);
    cr_expect_eq(fp4lr_e2m1_encode(100.0f), 7);
    cr_expect_eq(fp4lr_e2m1_encode(FLT_MAX), 7);
    cr_expect_eq(fp4lr_e2m1_encode(INFINITY), 7);
    cr_expect_eq(fp4lr_e2m1_encode(-7.0f), 0xF);
    cr_expect_eq(fp4lr_e2m1_encode(-INFINITY), 0xF);
}

Test(formats, e2m1_signed_zero_tiny_and_nan)
{
    cr_expect_eq(fp4lr_e2m1_encode(0.0f), 0x0);
    cr_expect_eq(fp4lr_e2m1_encode(-0.0f), 0x8);
    cr_expect_eq(fp4lr_e2m1_encode(-1e-30f), 0x8);
    cr_expect_eq(fp4lr_e2m1_encode(0x1p-149f), 0x0);
    cr_expect_eq(fp4lr_e2m1_encode(NAN), 0x0); /* documented: NaN -> 0 */
    cr_expect_eq(fp4lr_e2m1_encode(-NAN), 0x0);
}

Test(formats, e2m1_encode_div_rounds_the_exact_quotient)
{
    cr_expect_eq(fp4lr_e2m1_encode_div(3.0f, 2.0), 3);      /* 1.5 */
    cr_expect_eq(fp4lr_e2m1_encode_div(7.5f, 3.0), 4);      /* 2.5 tie -> 2 */
    cr_expect_eq(fp4lr_e2m1_encode_div(-10.5f, 3.0), 0xE);  /* -3.5 tie -> -4 */
    cr_expect_eq(fp4lr_e2m1_encode_div(1.0f, 3.0), 1);      /* 0.333 -> 0.5 */
    cr_expect_eq(fp4lr_e2m1_encode_div(1.0f, 0x1p-120), 7); /* huge quotient saturates */
    /* 0.1f / 0.4f: the exact quotient is 0.25000000372529 (0.1f is just above
     * 0.1), above the midpoint 0.25 -> 0.5; no rounding before the compare. */
    cr_expect_eq(fp4lr_e2m1_encode_div(0.1f, 0.4), 1);
    cr_expect_eq(fp4lr_e2m1_encode_div(0.1f, (double)0.4f), 0); /* 0.1f/0.4f = 0.2499999990686 */
}

/* ---- ue4m3 / e4m3fn ----------------------------------------------------- */

Test(formats, ue4m3_decode_hand_checked_codes)
{
    cr_expect_eq(fp4lr_ue4m3_decode(0x00), 0.0f);
    cr_expect_eq(fp4lr_ue4m3_decode(0x01), 0x1p-9f);       /* smallest subnormal */
    cr_expect_eq(fp4lr_ue4m3_decode(0x07), 7 * 0x1p-9f);   /* largest subnormal */
    cr_expect_eq(fp4lr_ue4m3_decode(0x08), 0x1p-6f);       /* smallest normal */
    cr_expect_eq(fp4lr_ue4m3_decode(0x38), 1.0f);
    cr_expect_eq(fp4lr_ue4m3_decode(0x3F), 1.875f);
    cr_expect_eq(fp4lr_ue4m3_decode(0x77), 240.0f);
    cr_expect_eq(fp4lr_ue4m3_decode(0x78), 256.0f);
    cr_expect_eq(fp4lr_ue4m3_decode(0x7E), 448.0f);
    cr_expect(isnan(fp4lr_ue4m3_decode(0x7F)));
}

Test(formats, ue4m3_decode_sign_bit_as_hardware)
{
    cr_expect_eq(bits_of(fp4lr_ue4m3_decode(0x80)), 0x80000000u); /* -0 */
    cr_expect_eq(fp4lr_ue4m3_decode(0xB8), -1.0f);
    cr_expect_eq(fp4lr_ue4m3_decode(0xFE), -448.0f);
    cr_expect(isnan(fp4lr_ue4m3_decode(0xFF)));
}

Test(formats, ue4m3_valid_is_0x00_to_0x7e)
{
    cr_expect_eq(fp4lr_ue4m3_valid(0x00), 1);
    cr_expect_eq(fp4lr_ue4m3_valid(0x7E), 1);
    cr_expect_eq(fp4lr_ue4m3_valid(0x7F), 0);
    cr_expect_eq(fp4lr_ue4m3_valid(0x80), 0);
    cr_expect_eq(fp4lr_ue4m3_valid(0xFF), 0);
    int n = 0;
    for (int c = 0; c < 256; c++)
        n += fp4lr_ue4m3_valid((uint8_t)c);
    cr_expect_eq(n, 127);
}

Test(formats, ue4m3_encode_max_and_saturation)
{
    cr_expect_eq(fp4lr_ue4m3_encode(448.0f), 0x7E);
    cr_expect_eq(fp4lr_ue4m3_encode(464.0f), 0x7E); /* tie 448 | (480): even is 448 */
    cr_expect_eq(fp4lr_ue4m3_encode(500.0f), 0x7E); /* satfinite */
    cr_expect_eq(fp4lr_ue4m3_encode(1e30f), 0x7E);
    cr_expect_eq(fp4lr_ue4m3_encode(INFINITY), 0x7E);
    cr_expect_eq(fp4lr_ue4m3_encode(416.0f), 0x7D); /* exact: step 32 in [256, 512) */
    cr_expect_eq(fp4lr_ue4m3_encode(400.0f), 0x7C); /* tie 384 | 416 -> 384 (even) */
    cr_expect_eq(fp4lr_ue4m3_encode(432.0f), 0x7E); /* tie 416 | 448 -> 448 (even) */
}

Test(formats, ue4m3_encode_subnormals_and_tiny)
{
    cr_expect_eq(fp4lr_ue4m3_encode(0x1p-9f), 0x01);
    cr_expect_eq(fp4lr_ue4m3_encode(0x1p-10f), 0x00);       /* tie 0 | 2^-9: even 0 */
    cr_expect_eq(fp4lr_ue4m3_encode(0x1.8p-10f), 0x01);     /* 0.75 * 2^-9 */
    cr_expect_eq(fp4lr_ue4m3_encode(3 * 0x1p-10f), 0x02);   /* tie 1 | 2 -> 2 */
    cr_expect_eq(fp4lr_ue4m3_encode(5 * 0x1p-10f), 0x02);   /* tie 2 | 3 -> 2 */
    cr_expect_eq(fp4lr_ue4m3_encode(15 * 0x1p-10f), 0x08);  /* tie 7 | 8 -> 8 = 2^-6 */
    cr_expect_eq(fp4lr_ue4m3_encode(0x1p-30f), 0x00);
    cr_expect_eq(fp4lr_ue4m3_encode(0x1p-149f), 0x00);
}

Test(formats, ue4m3_encode_normal_ties)
{
    cr_expect_eq(fp4lr_ue4m3_encode(1.0625f), 0x38); /* 1 | 1.125 -> 1 (even) */
    cr_expect_eq(fp4lr_ue4m3_encode(1.1875f), 0x3A); /* 1.125 | 1.25 -> 1.25 */
    cr_expect_eq(fp4lr_ue4m3_encode(1.9375f), 0x40); /* 1.875 | 2 -> 2 (carry into exponent) */
    cr_expect_eq(fp4lr_ue4m3_encode(1.0626f), 0x39);
}

Test(formats, ue4m3_encode_negative_and_nan_are_nan_code)
{
    cr_expect_eq(fp4lr_ue4m3_encode(-1.0f), 0x7F);
    cr_expect_eq(fp4lr_ue4m3_encode(-INFINITY), 0x7F);
    cr_expect_eq(fp4lr_ue4m3_encode(NAN), 0x7F);
    cr_expect_eq(fp4lr_ue4m3_encode(-0.0f), 0x00);
}

Test(formats, e4m3_signed_sat_and_nonsat)
{
    cr_expect_eq(fp4lr_e4m3_encode_rne_sat(-500.0f), 0xFE);
    cr_expect_eq(fp4lr_e4m3_encode_rne_sat(-INFINITY), 0xFE);
    cr_expect_eq(fp4lr_e4m3_encode_rne_sat(-1.0f), 0xB8);
    cr_expect_eq(fp4lr_e4m3_encode_rne_sat(-0.0f), 0x80);
    cr_expect_eq(fp4lr_e4m3_encode_rne_nonsat(464.0f), 0x7E);
    cr_expect_eq(fp4lr_e4m3_encode_rne_nonsat(465.0f), 0x7F);
    cr_expect_eq(fp4lr_e4m3_encode_rne_nonsat(-500.0f), 0xFF);
    cr_expect_eq(fp4lr_e4m3_encode_rne_nonsat(INFINITY), 0x7F);
    cr_expect_eq(fp4lr_e4m3_encode_rne_nonsat(0.1f), 0x1D); /* 0.1 -> 0.1015625 */
}

Test(formats, ue4m3_encode_div_exact_quotient)
{
    cr_expect_eq(fp4lr_ue4m3_encode_div(6.0f, 6.0), 0x38);        /* 1 */
    cr_expect_eq(fp4lr_ue4m3_encode_div(1.0f, 3.0), 0x2B);        /* 0.333 -> 0.34375 */
    cr_expect_eq(fp4lr_ue4m3_encode_div(1e9f, 1.0), 0x7E);        /* satfinite */
    cr_expect_eq(fp4lr_ue4m3_encode_div(0.0f, 5.0), 0x00);
    cr_expect_eq(fp4lr_ue4m3_encode_div(3.1875f, 3.0), 0x38);     /* 1.0625 tie -> 1 */
    cr_expect_eq(fp4lr_ue4m3_encode_div(3.1875f, 2.9999999), 0x39); /* just above the tie */
}

/* ---- ue8m0 -------------------------------------------------------------- */

Test(formats, ue8m0_decode_hand_checked_codes)
{
    cr_expect_eq(fp4lr_ue8m0_decode(0x00), 0x1p-127f);
    cr_expect_eq(bits_of(fp4lr_ue8m0_decode(0x00)), 0x00400000u); /* an fp32 subnormal */
    cr_expect_eq(fp4lr_ue8m0_decode(0x01), 0x1p-126f);
    cr_expect_eq(fp4lr_ue8m0_decode(0x7E), 0.5f);
    cr_expect_eq(fp4lr_ue8m0_decode(0x7F), 1.0f);
    cr_expect_eq(fp4lr_ue8m0_decode(0x80), 2.0f);
    cr_expect_eq(fp4lr_ue8m0_decode(0xFE), 0x1p127f);
    cr_expect(isnan(fp4lr_ue8m0_decode(0xFF)));
}

Test(formats, ue8m0_from_exponent_clamps)
{
    cr_expect_eq(fp4lr_ue8m0_from_exponent(0), 0x7F);
    cr_expect_eq(fp4lr_ue8m0_from_exponent(-2), 0x7D);
    cr_expect_eq(fp4lr_ue8m0_from_exponent(-127), 0x00);
    cr_expect_eq(fp4lr_ue8m0_from_exponent(-200), 0x00);
    cr_expect_eq(fp4lr_ue8m0_from_exponent(127), 0xFE);
    cr_expect_eq(fp4lr_ue8m0_from_exponent(128), 0xFE); /* never NaN */
    cr_expect_eq(fp4lr_ue8m0_from_exponent(100000), 0xFE);
}

Test(formats, ue8m0_encode_like_ml_dtypes)
{
    cr_expect_eq(fp4lr_ue8m0_encode_rne(1.0f), 0x7F);
    cr_expect_eq(fp4lr_ue8m0_encode_rne(1.49f), 0x7F);
    cr_expect_eq(fp4lr_ue8m0_encode_rne(1.5f), 0x80);  /* tie rounds up */
    cr_expect_eq(fp4lr_ue8m0_encode_rne(3.0f), 0x81);  /* tie rounds up (not to even) */
    cr_expect_eq(fp4lr_ue8m0_encode_rne(0.75f), 0x7F);
    cr_expect_eq(fp4lr_ue8m0_encode_rne(0x1p-127f), 0x00);
    cr_expect_eq(fp4lr_ue8m0_encode_rne(0x1.8p-127f), 0x01);
    cr_expect_eq(fp4lr_ue8m0_encode_rne(0x1p-140f), 0x00); /* clamps to the smallest */
    cr_expect_eq(fp4lr_ue8m0_encode_rne(0x1p127f), 0xFE);
    cr_expect_eq(fp4lr_ue8m0_encode_rne(0x1.8p127f), 0xFF); /* overflow */
}

Test(formats, ue8m0_encode_no_zero_no_sign)
{
    cr_expect_eq(fp4lr_ue8m0_encode_rne(0.0f), 0xFF);
    cr_expect_eq(fp4lr_ue8m0_encode_rne(-0.0f), 0xFF);
    cr_expect_eq(fp4lr_ue8m0_encode_rne(-1.0f), 0xFF);
    cr_expect_eq(fp4lr_ue8m0_encode_rne(INFINITY), 0xFF);
    cr_expect_eq(fp4lr_ue8m0_encode_rne(NAN), 0xFF);
}

/* ---- bf16 / fp16 -------------------------------------------------------- */

Test(formats, bf16_rne_ties_and_overflow)
{
    cr_expect_eq(fp4lr_bf16_from_float(1.0f), 0x3F80);
    cr_expect_eq(fp4lr_bf16_from_float(1.0f + 0x1p-8f), 0x3F80);             /* tie -> even */
    cr_expect_eq(fp4lr_bf16_from_float(1.0f + 3 * 0x1p-8f), 0x3F82);         /* tie -> even */
    cr_expect_eq(fp4lr_bf16_from_float(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);  /* above tie */
    cr_expect_eq(fp4lr_bf16_from_float(-2.0f), 0xC000);
    cr_expect_eq(fp4lr_bf16_from_float(-0.0f), 0x8000);
    cr_expect_eq(fp4lr_bf16_from_float(FLT_MAX), 0x7F80); /* rounds up to Inf */
    cr_expect_eq(fp4lr_bf16_from_float(float_of(0x00010000)), 0x0001); /* subnormal */
}

Test(formats, bf16_nan_stays_quiet_nan)
{
    cr_expect_eq(fp4lr_bf16_from_float(float_of(0x7FC00000)), 0x7FC0);
    cr_expect_eq(fp4lr_bf16_from_float(float_of(0x7F800001)), 0x7FC0); /* signalling, would be Inf if truncated */
    cr_expect_eq(fp4lr_bf16_from_float(float_of(0xFFC12345)), 0xFFC1);
    cr_expect(isnan(fp4lr_bf16_to_float(0x7FC0)));
}

Test(formats, bf16_every_pattern_round_trips)
{
    for (uint32_t b = 0; b < 65536; b++) {
        float v = fp4lr_bf16_to_float((uint16_t)b);
        cr_assert_eq(bits_of(v), b << 16);
        if (!isnan(v))
            cr_assert_eq(fp4lr_bf16_from_float(v), b, "bf16 0x%04X", b);
    }
}

Test(formats, f16_rne_ties_subnormals_and_overflow)
{
    cr_expect_eq(fp4lr_f16_from_float(1.0f), 0x3C00);
    cr_expect_eq(fp4lr_f16_from_float(1.0f + 0x1p-11f), 0x3C00);     /* tie -> even */
    cr_expect_eq(fp4lr_f16_from_float(1.0f + 3 * 0x1p-11f), 0x3C02); /* tie -> even */
    cr_expect_eq(fp4lr_f16_from_float(65504.0f), 0x7BFF);
    cr_expect_eq(fp4lr_f16_from_float(65519.0f), 0x7BFF);
    cr_expect_eq(fp4lr_f16_from_float(65520.0f), 0x7C00); /* tie, odd max -> Inf */
    cr_expect_eq(fp4lr_f16_from_float(0x1p-24f), 0x0001);
    cr_expect_eq(fp4lr_f16_from_float(0x1p-25f), 0x0000);     /* tie -> 0 */
    cr_expect_eq(fp4lr_f16_from_float(3 * 0x1p-25f), 0x0002); /* tie 1 | 2 -> 2 */
    cr_expect_eq(fp4lr_f16_from_float(-INFINITY), 0xFC00);
    cr_expect_eq(fp4lr_f16_from_float(-0.0f), 0x8000);
    cr_expect_eq(fp4lr_f16_from_float(NAN) & 0x7E00, 0x7E00);
}

Test(formats, f16_every_pattern_round_trips)
{
    for (uint32_t h = 0; h < 65536; h++) {
        float v = fp4lr_f16_to_float((uint16_t)h);
        if (isnan(v)) {
            cr_assert_eq(h & 0x7C00, 0x7C00);
            cr_assert_neq(h & 0x03FF, 0);
            continue;
        }
        cr_assert_eq(fp4lr_f16_from_float(v), h, "f16 0x%04X", h);
    }
    cr_expect_eq(fp4lr_f16_to_float(0x0001), 0x1p-24f);
    cr_expect_eq(fp4lr_f16_to_float(0x7BFF), 65504.0f);
    cr_expect_eq(fp4lr_f16_to_float(0xC000), -2.0f);
}

Test(formats, ulp_helpers)
{
    cr_expect_eq(fp4lr_bf16_ulp(1.0), 0x1p-7);
    cr_expect_eq(fp4lr_bf16_ulp(1.5), 0x1p-7);
    cr_expect_eq(fp4lr_bf16_ulp(2.0), 0x1p-6);
    cr_expect_eq(fp4lr_bf16_ulp(-3.0), 0x1p-6);
    cr_expect_eq(fp4lr_bf16_ulp(0.0), 0x1p-133);
    cr_expect_eq(fp4lr_bf16_ulp(1e39), 0x1p120); /* beyond max: ulp at max */
    cr_expect_eq(fp4lr_f16_ulp(1.0), 0x1p-10);
    cr_expect_eq(fp4lr_f16_ulp(0.0), 0x1p-24);
    cr_expect_eq(fp4lr_f16_ulp(1e-6), 0x1p-24); /* subnormal range */
    cr_expect_eq(fp4lr_f16_ulp(0x1p-14), 0x1p-24);
    cr_expect_eq(fp4lr_f16_ulp(65504.0), 32.0);
    cr_expect_eq(fp4lr_f16_ulp(1e6), 32.0);
    cr_expect_eq(fp4lr_f32_ulp(1.0), 0x1p-23);
    cr_expect_eq(fp4lr_f32_ulp(0.0), 0x1p-149);
    cr_expect_eq(fp4lr_f32_ulp(1e39), 0x1p104);
    cr_expect(isnan(fp4lr_f32_ulp(NAN)));
}
