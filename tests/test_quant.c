/* MXFP4 / NVFP4 quantizers and the dequantizer (OPERATOR.md §3). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "e2m1.h"
#include "fp4_pack.h"
#include "quant.h"
#include "scale_atom.h"
#include "ue4m3.h"
#include "ue8m0.h"

/* Deterministic pseudo-random floats in [-1, 1) (xorshift32). */
static float rnd_unit(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return (float)((double)(*s >> 8) / (double)(1u << 23) - 1.0);
}

/* The quantizer's own buffers for a rows x K problem. */
typedef struct qbuf {
    uint8_t *q, *sf;
    float *out;
    size_t sf_bytes;
} qbuf;

static qbuf qbuf_new(fp4lr_format f, int64_t rows, int64_t K)
{
    qbuf b;
    b.sf_bytes = fp4lr_sf_bytes(rows, K / fp4lr_format_block(f));
    b.q = malloc(fp4lr_fp4_bytes(rows, K));
    b.sf = malloc(b.sf_bytes);
    b.out = malloc((size_t)(rows * K) * sizeof(float));
    memset(b.sf, 0xAA, b.sf_bytes); /* garbage: padding must come back zero */
    return b;
}

static void qbuf_free(qbuf b)
{
    free(b.q);
    free(b.sf);
    free(b.out);
}

static uint8_t code_at(const qbuf *b, int64_t K, int64_t i, int64_t k) { return fp4lr_fp4_get(b->q + i * (K / 2), k); }

/* Nearest-value property of one element: no e2m1 value times the block
 * scale d (exact in double) is strictly closer to x than the chosen code's,
 * unless x saturates (|x| > 6d, then the code is +-6); and the dequantized
 * fp32 value is that product rounded once. */
static void expect_nearest(float x, uint8_t code, float deq, double d)
{
    double chosen = (double)fp4lr_e2m1_decode(code) * d;
    cr_assert_eq(deq, (float)chosen, "x = %a", (double)x);
    if (fabs((double)x) > 6.0 * d) {
        cr_assert_eq(fabs(chosen), 6.0 * d, "saturated x = %a", (double)x);
        return;
    }
    double err = fabs(chosen - (double)x);
    for (int c = 0; c < 16; c++)
        cr_assert_leq(err, fabs((double)fp4lr_e2m1_decode((uint8_t)c) * d - (double)x), "x = %a code %d",
                      (double)x, code);
}

Test(quant, mxfp4_representable_values_round_trip_exactly)
{
    enum { R = 3, K = 256 };
    float x[R * K];
    /* Block (i, c) holds e2m1 values times 2^e with e = 7i - 5c, and a 6 so
     * that floor(log2(amax)) - 2 = e exactly. */
    for (int i = 0; i < R; i++)
        for (int k = 0; k < K; k++) {
            int e = 7 * i - 5 * (k / 32);
            float v = (k % 32 == 3) ? 6.0f : fp4lr_e2m1_decode((uint8_t)(k * 5 % 16));
            x[i * K + k] = ldexpf(v, e);
        }
    for (int mode = 0; mode < 2; mode++) {
        qbuf b = qbuf_new(FP4LR_MXFP4, R, K);
        cr_assert_eq(fp4lr_quantize_mxfp4(x, R, K, K, (fp4lr_mx_rounding)mode, b.q, b.sf).code, FP4LR_OK);
        cr_assert_eq(fp4lr_dequantize(FP4LR_MXFP4, b.q, b.sf, R, K, 1.0f, b.out).code, FP4LR_OK);
        for (int n = 0; n < R * K; n++)
            cr_assert_eq(b.out[n], x[n], "mode %d element %d", mode, n);
        cr_expect_eq(fp4lr_sf_get(b.sf, 2, 7, K / 32), 0x7F + 14 - 35);
        qbuf_free(b);
    }
}

Test(quant, mxfp4_floor_saturates_round_up_does_not)
{
    enum { K = 128 };
    float x[K] = {0};
    x[0] = 7.0f; /* amax 7: floor -> E = 0, 7 saturates to 6; round-up -> E = 1 */
    x[1] = 1.0f;
    x[2] = -5.0f;
    qbuf fl = qbuf_new(FP4LR_MXFP4, 1, K), up = qbuf_new(FP4LR_MXFP4, 1, K);
    cr_assert_eq(fp4lr_quantize_mxfp4(x, 1, K, K, FP4LR_MX_FLOOR, fl.q, fl.sf).code, FP4LR_OK);
    cr_assert_eq(fp4lr_quantize_mxfp4(x, 1, K, K, FP4LR_MX_ROUND_UP, up.q, up.sf).code, FP4LR_OK);
    cr_expect_eq(fl.sf[0], 0x7F); /* 2^0 */
    cr_expect_eq(up.sf[0], 0x80); /* 2^1 */
    cr_expect_eq(code_at(&fl, K, 0, 0), 0x7); /* 7 -> 6, saturated */
    cr_expect_eq(code_at(&up, K, 0, 0), 0x6); /* 3.5 tie -> 4, deq 8 */
    cr_expect_eq(code_at(&fl, K, 0, 1), 0x2); /* 1 */
    cr_expect_eq(code_at(&up, K, 0, 1), 0x1); /* 0.5 */
    cr_expect_eq(code_at(&fl, K, 0, 2), 0xE); /* -5 tie -> -4 */
    cr_expect_eq(code_at(&up, K, 0, 2), 0xC); /* -2.5 tie -> -2, deq -4 */
    /* The other three blocks are all zero: the smallest scale, 0x00. */
    cr_expect_eq(fl.sf[1], 0x00);
    cr_expect_eq(up.sf[3], 0x00);
    qbuf_free(fl);
    qbuf_free(up);
}

Test(quant, mxfp4_exponent_choice_by_amax)
{
    /* amax: floor(log2 amax) - 2 vs ceil(log2(amax / 6)). */
    static const float amax[] = {6.0f, 4.0f, 3.0f, 6.5f, 0.75f, 12.0f, 12.5f};
    static const uint8_t want_floor[] = {0x7F, 0x7F, 0x7E, 0x7F, 0x7C, 0x80, 0x80};
    static const uint8_t want_up[] = {0x7F, 0x7F, 0x7E, 0x80, 0x7C, 0x80, 0x81};
    enum { K = 128 * 7 };
    float x[K] = {0};
    for (int c = 0; c < 7; c++)
        x[c * 128 + 5] = -amax[c]; /* one block of 32 per 128, sign must not matter */
    qbuf fl = qbuf_new(FP4LR_MXFP4, 1, K), up = qbuf_new(FP4LR_MXFP4, 1, K);
    cr_assert_eq(fp4lr_quantize_mxfp4(x, 1, K, K, FP4LR_MX_FLOOR, fl.q, fl.sf).code, FP4LR_OK);
    cr_assert_eq(fp4lr_quantize_mxfp4(x, 1, K, K, FP4LR_MX_ROUND_UP, up.q, up.sf).code, FP4LR_OK);
    for (int c = 0; c < 7; c++) {
        cr_expect_eq(fp4lr_sf_get(fl.sf, 0, 4 * c, K / 32), want_floor[c], "amax %g", (double)amax[c]);
        cr_expect_eq(fp4lr_sf_get(up.sf, 0, 4 * c, K / 32), want_up[c], "amax %g", (double)amax[c]);
    }
    qbuf_free(fl);
    qbuf_free(up);
}

Test(quant, mxfp4_scale_clamps_to_ue8m0_range)
{
    enum { K = 128 };
    float x[2 * K] = {0};
    x[0] = 0x1p-140f;          /* E = -142 -> clamped to 0x00 (2^-127) */
    x[1] = 0x1p-149f;
    x[K] = 3.0e38f;            /* floor(log2) = 127 -> E = 125 */
    qbuf b = qbuf_new(FP4LR_MXFP4, 2, K);
    cr_assert_eq(fp4lr_quantize_mxfp4(x, 2, K, K, FP4LR_MX_FLOOR, b.q, b.sf).code, FP4LR_OK);
    cr_expect_eq(fp4lr_sf_get(b.sf, 0, 0, 4), 0x00);
    cr_expect_eq(code_at(&b, K, 0, 0), 0x0); /* 2^-13 of the scale rounds to 0 */
    cr_expect_eq(fp4lr_sf_get(b.sf, 1, 0, 4), 0xFC);
    cr_expect_eq(code_at(&b, K, 1, 0), 0x7); /* 3e38 / 2^125 = 7.05 -> 6 */
    qbuf_free(b);
}

Test(quant, mxfp4_random_is_nearest_in_round_up_mode)
{
    enum { R = 5, K = 512 };
    float *x = malloc(sizeof(float) * R * K);
    uint32_t s = 12345;
    for (int n = 0; n < R * K; n++)
        x[n] = ldexpf(rnd_unit(&s), (n / 32) % 40 - 20);
    qbuf b = qbuf_new(FP4LR_MXFP4, R, K);
    cr_assert_eq(fp4lr_quantize_mxfp4(x, R, K, K, FP4LR_MX_ROUND_UP, b.q, b.sf).code, FP4LR_OK);
    cr_assert_eq(fp4lr_dequantize(FP4LR_MXFP4, b.q, b.sf, R, K, 1.0f, b.out).code, FP4LR_OK);
    for (int i = 0; i < R; i++)
        for (int k = 0; k < K; k++) {
            double d = fp4lr_ue8m0_decode(fp4lr_sf_get(b.sf, i, k / 32, K / 32));
            cr_assert_leq(fabs((double)x[i * K + k]), 6.0 * d, "round-up never saturates");
            expect_nearest(x[i * K + k], code_at(&b, K, i, k), b.out[i * K + k], d);
        }
    free(x);
    qbuf_free(b);
}

Test(quant, mxfp4_all_zero_and_padding)
{
    enum { R = 3, K = 128 };
    float x[R * K];
    for (int n = 0; n < R * K; n++)
        x[n] = (n & 1) ? -0.0f : 0.0f;
    qbuf b = qbuf_new(FP4LR_MXFP4, R, K);
    cr_assert_eq(fp4lr_quantize_mxfp4(x, R, K, K, FP4LR_MX_FLOOR, b.q, b.sf).code, FP4LR_OK);
    for (size_t n = 0; n < b.sf_bytes; n++)
        cr_assert_eq(b.sf[n], 0x00, "byte %zu", n); /* smallest scale and zero padding */
    for (int k = 0; k < K; k++)
        cr_assert_eq(code_at(&b, K, 1, k), (k & 1) ? 0x8 : 0x0);
    cr_assert_eq(fp4lr_dequantize(FP4LR_MXFP4, b.q, b.sf, R, K, 1.0f, b.out).code, FP4LR_OK);
    for (int n = 0; n < R * K; n++)
        cr_assert_eq(b.out[n], 0.0f);
    qbuf_free(b);
}

Test(quant, non_finite_block_gets_nan_scale_only)
{
    enum { K = 128 };
    float x[K];
    for (int k = 0; k < K; k++)
        x[k] = 1.0f;
    x[40] = NAN;      /* MX block 1, NVFP4 block 2 */
    x[100] = INFINITY; /* MX block 3, NVFP4 block 6 */
    qbuf m = qbuf_new(FP4LR_MXFP4, 1, K), n = qbuf_new(FP4LR_NVFP4, 1, K);
    cr_assert_eq(fp4lr_quantize_mxfp4(x, 1, K, K, FP4LR_MX_FLOOR, m.q, m.sf).code, FP4LR_OK);
    cr_assert_eq(fp4lr_quantize_nvfp4(x, 1, K, K, 1.0f, n.q, n.sf).code, FP4LR_OK);
    cr_expect_eq(m.sf[0], 0x7D); /* amax 1: E = -2 */
    cr_expect_eq(m.sf[1], 0xFF);
    cr_expect_eq(m.sf[3], 0xFF);
    cr_expect_eq(fp4lr_sf_get(n.sf, 0, 2, 8), 0x7F);
    cr_expect_eq(fp4lr_sf_get(n.sf, 0, 6, 8), 0x7F);
    cr_expect_eq(fp4lr_sf_get(n.sf, 0, 3, 8), 0x23); /* 1/6 -> 0.171875 */
    cr_assert_eq(fp4lr_dequantize(FP4LR_MXFP4, m.q, m.sf, 1, K, 1.0f, m.out).code, FP4LR_OK);
    cr_assert_eq(fp4lr_dequantize(FP4LR_NVFP4, n.q, n.sf, 1, K, 1.0f, n.out).code, FP4LR_OK);
    for (int k = 0; k < K; k++) {
        cr_expect_eq(isnan(m.out[k]) != 0, (k / 32 == 1 || k / 32 == 3), "mx k = %d", k);
        cr_expect_eq(isnan(n.out[k]) != 0, (k / 16 == 2 || k / 16 == 6), "nv k = %d", k);
    }
    cr_expect_eq(m.out[0], 1.0f);
    qbuf_free(m);
    qbuf_free(n);
}

Test(quant, nvfp4_global_scale)
{
    float x[64] = {0};
    cr_expect_eq(fp4lr_nvfp4_global_scale(x, 1, 64, 64), 1.0f); /* all zero */
    x[3] = -2688.0f;
    cr_expect_eq(fp4lr_nvfp4_global_scale(x, 1, 64, 64), 1.0f);
    x[60] = 5376.0f;
    x[10] = NAN; /* skipped */
    x[11] = INFINITY;
    cr_expect_eq(fp4lr_nvfp4_global_scale(x, 1, 64, 64), 2.0f);
    cr_expect_eq(fp4lr_nvfp4_global_scale(x, 1, 32, 64), 1.0f); /* only the first 32 */
    cr_expect_eq(fp4lr_nvfp4_global_scale(x, 1, 1, 1), 1.0f);   /* amax 0 */
    cr_expect_eq(fp4lr_nvfp4_global_scale(NULL, 1, 64, 64), 1.0f);
}

Test(quant, nvfp4_hand_checked_blocks)
{
    enum { K = 64 };
    float x[K] = {0};
    x[0] = 6.0f;       /* block 0: s = 1 -> 0x38, exact */
    x[1] = -1.5f;
    x[16] = 3.0f;      /* block 1: s = 0.5 -> 0x30 */
    x[32] = 7.0f;      /* block 2: 7/6 = 1.1667 -> 1.125 (0x39); 7/1.125 = 6.2 -> 6 */
    x[33] = 1.0f;      /* 1/1.125 = 0.889 -> 1 */
    x[48] = 6.375f;    /* block 3: 1.0625 is a ue4m3 tie -> 1 (0x38); 6.375 saturates */
    qbuf b = qbuf_new(FP4LR_NVFP4, 1, K);
    cr_assert_eq(fp4lr_quantize_nvfp4(x, 1, K, K, 1.0f, b.q, b.sf).code, FP4LR_OK);
    cr_expect_eq(b.sf[0], 0x38);
    cr_expect_eq(b.sf[1], 0x30);
    cr_expect_eq(b.sf[2], 0x39);
    cr_expect_eq(b.sf[3], 0x38);
    cr_expect_eq(code_at(&b, K, 0, 0), 0x7);
    cr_expect_eq(code_at(&b, K, 0, 1), 0xB);
    cr_expect_eq(code_at(&b, K, 0, 16), 0x7);
    cr_expect_eq(code_at(&b, K, 0, 32), 0x7);
    cr_expect_eq(code_at(&b, K, 0, 33), 0x2);
    cr_expect_eq(code_at(&b, K, 0, 48), 0x7);
    cr_assert_eq(fp4lr_dequantize(FP4LR_NVFP4, b.q, b.sf, 1, K, 1.0f, b.out).code, FP4LR_OK);
    cr_expect_eq(b.out[0], 6.0f);
    cr_expect_eq(b.out[1], -1.5f);
    cr_expect_eq(b.out[32], 6.75f);
    cr_expect_eq(b.out[33], 1.125f);
    cr_expect_eq(b.out[48], 6.0f);
    for (size_t n = 4; n < b.sf_bytes; n++)
        if (n % 16 >= 4 || n >= 16) /* everything but bytes 0..3 is padding */
            cr_assert_eq(b.sf[n], 0x00, "padding byte %zu", n);
    qbuf_free(b);
}

Test(quant, nvfp4_scale_never_zero_and_saturates)
{
    enum { K = 64 };
    float x[K] = {0};
    x[0] = 1e-5f;   /* block 0: s = 1.67e-6 rounds to 0 -> bumped to 0x01 */
    x[16] = 6000.0f; /* block 1: s = 1000 -> 448 (0x7E); 6000/448 = 13.4 -> 6 */
    x[17] = 448.0f;  /* 448/448 = 1 */
    /* block 2 all zero: scale 0x00 */
    qbuf b = qbuf_new(FP4LR_NVFP4, 1, K);
    cr_assert_eq(fp4lr_quantize_nvfp4(x, 1, K, K, 1.0f, b.q, b.sf).code, FP4LR_OK);
    cr_expect_eq(b.sf[0], 0x01);
    cr_expect_eq(code_at(&b, K, 0, 0), 0x0); /* 1e-5 / 2^-9 = 0.005 -> 0 */
    cr_expect_eq(b.sf[1], 0x7E);
    cr_expect_eq(code_at(&b, K, 0, 16), 0x7);
    cr_expect_eq(code_at(&b, K, 0, 17), 0x2);
    cr_expect_eq(b.sf[2], 0x00);
    qbuf_free(b);
}

Test(quant, nvfp4_global_scale_divides_the_block_scale)
{
    enum { K = 64 };
    float x[K] = {0};
    x[0] = 6.0f; /* g = 0.5: s = 6 / (6 * 0.5) = 2 -> 0x40; element 6 / (0.5 * 2) = 6 */
    x[1] = 2.0f; /* 2 / 1 = 2 */
    qbuf b = qbuf_new(FP4LR_NVFP4, 1, K);
    cr_assert_eq(fp4lr_quantize_nvfp4(x, 1, K, K, 0.5f, b.q, b.sf).code, FP4LR_OK);
    cr_expect_eq(b.sf[0], 0x40);
    cr_expect_eq(code_at(&b, K, 0, 0), 0x7);
    cr_expect_eq(code_at(&b, K, 0, 1), 0x4);
    cr_assert_eq(fp4lr_dequantize(FP4LR_NVFP4, b.q, b.sf, 1, K, 0.5f, b.out).code, FP4LR_OK);
    cr_expect_eq(b.out[0], 6.0f);
    cr_expect_eq(b.out[1], 2.0f);
    qbuf_free(b);
}

/* Two-level form: deq_g(A) . deq_g(W) == alpha * (deq_1(A) . deq_1(W)),
 * alpha = gA * gW, and each element is the nearest value on its block grid. */
Test(quant, nvfp4_two_level_alpha_reconstructs)
{
    enum { K = 256 };
    float a[K], w[K];
    uint32_t s = 777;
    for (int k = 0; k < K; k++) {
        a[k] = 300.0f * rnd_unit(&s) * (float)(1 + k % 5);
        w[k] = 0.01f * rnd_unit(&s);
    }
    float ga = fp4lr_nvfp4_global_scale(a, 1, K, K), gw = fp4lr_nvfp4_global_scale(w, 1, K, K);
    qbuf A = qbuf_new(FP4LR_NVFP4, 1, K), W = qbuf_new(FP4LR_NVFP4, 1, K);
    cr_assert_eq(fp4lr_quantize_nvfp4(a, 1, K, K, ga, A.q, A.sf).code, FP4LR_OK);
    cr_assert_eq(fp4lr_quantize_nvfp4(w, 1, K, K, gw, W.q, W.sf).code, FP4LR_OK);
    float a1[K], w1[K];
    cr_assert_eq(fp4lr_dequantize(FP4LR_NVFP4, A.q, A.sf, 1, K, ga, A.out).code, FP4LR_OK);
    cr_assert_eq(fp4lr_dequantize(FP4LR_NVFP4, W.q, W.sf, 1, K, gw, W.out).code, FP4LR_OK);
    cr_assert_eq(fp4lr_dequantize(FP4LR_NVFP4, A.q, A.sf, 1, K, 1.0f, a1).code, FP4LR_OK);
    cr_assert_eq(fp4lr_dequantize(FP4LR_NVFP4, W.q, W.sf, 1, K, 1.0f, w1).code, FP4LR_OK);
    double direct = 0, unit = 0, mag = 0;
    for (int k = 0; k < K; k++) {
        direct += (double)A.out[k] * W.out[k];
        unit += (double)a1[k] * w1[k]; /* exact: <= 12-bit products */
        mag += fabs((double)A.out[k] * W.out[k]);
        expect_nearest(a[k], code_at(&A, K, 0, k), A.out[k],
                       (double)ga * fp4lr_ue4m3_decode(fp4lr_sf_get(A.sf, 0, k / 16, K / 16)));
    }
    double alpha = (double)ga * (double)gw;
    cr_expect_leq(fabs(direct - alpha * unit), 0x1p-22 * mag, "direct %g vs alpha*unit %g", direct, alpha * unit);
    /* With g = amax/2688 no block scale saturates: the largest is <= 448. */
    for (int c = 0; c < K / 16; c++)
        cr_expect_leq(fp4lr_sf_get(A.sf, 0, c, K / 16), 0x7E);
    qbuf_free(A);
    qbuf_free(W);
}

Test(quant, leading_dimension_is_respected)
{
    enum { R = 2, K = 128, LD = 200 };
    float padded[R * LD], compact[R * K];
    uint32_t s = 99;
    for (int n = 0; n < R * LD; n++)
        padded[n] = 1e6f; /* the columns past K must be ignored */
    for (int i = 0; i < R; i++)
        for (int k = 0; k < K; k++)
            padded[i * LD + k] = compact[i * K + k] = 10.0f * rnd_unit(&s);
    qbuf p = qbuf_new(FP4LR_NVFP4, R, K), c = qbuf_new(FP4LR_NVFP4, R, K);
    float g = fp4lr_nvfp4_global_scale(padded, R, K, LD);
    cr_expect_eq(g, fp4lr_nvfp4_global_scale(compact, R, K, K));
    cr_assert_eq(fp4lr_quantize_nvfp4(padded, R, K, LD, g, p.q, p.sf).code, FP4LR_OK);
    cr_assert_eq(fp4lr_quantize_nvfp4(compact, R, K, K, g, c.q, c.sf).code, FP4LR_OK);
    cr_expect_eq(memcmp(p.q, c.q, fp4lr_fp4_bytes(R, K)), 0);
    cr_expect_eq(memcmp(p.sf, c.sf, p.sf_bytes), 0);
    qbuf_free(p);
    qbuf_free(c);
}

Test(quant, invalid_shapes_name_the_rule)
{
    float x[256] = {0};
    uint8_t q[128], sf[1024];
    cr_expect_str_eq(fp4lr_quantize_mxfp4(x, 1, 64, 64, FP4LR_MX_FLOOR, q, sf).rule, "K_MULTIPLE");
    cr_expect_str_eq(fp4lr_quantize_mxfp4(x, 1, 0, 64, FP4LR_MX_FLOOR, q, sf).rule, "K_MULTIPLE");
    cr_expect_str_eq(fp4lr_quantize_nvfp4(x, 1, 96, 96, 1.0f, q, sf).rule, "K_MULTIPLE");
    cr_expect_str_eq(fp4lr_quantize_nvfp4(x, 0, 64, 64, 1.0f, q, sf).rule, "M_POSITIVE");
    cr_expect_str_eq(fp4lr_quantize_mxfp4(x, -3, 128, 128, FP4LR_MX_FLOOR, q, sf).rule, "M_POSITIVE");
    cr_expect_str_eq(fp4lr_quantize_nvfp4(x, 1, 64, 32, 1.0f, q, sf).rule, "LD_TOO_SMALL");
    cr_expect_str_eq(fp4lr_quantize_mxfp4(x, 1, 128, 128, (fp4lr_mx_rounding)7, q, sf).rule, "MX_ROUNDING");
    cr_expect_str_eq(fp4lr_dequantize(FP4LR_NVFP4, q, sf, 1, 100, 1.0f, x).rule, "K_MULTIPLE");
    cr_expect_str_eq(fp4lr_dequantize((fp4lr_format)9, q, sf, 1, 128, 1.0f, x).rule, "FORMAT");
    fp4lr_status st = fp4lr_quantize_mxfp4(x, 1, 64, 64, FP4LR_MX_FLOOR, q, sf);
    cr_expect_eq(st.code, FP4LR_E_INVALID);
    cr_expect_neq(st.msg[0], '\0');
}

Test(quant, null_pointers_name_the_rule)
{
    float x[128] = {0};
    uint8_t q[64], sf[512];
    cr_expect_str_eq(fp4lr_quantize_mxfp4(NULL, 1, 128, 128, FP4LR_MX_FLOOR, q, sf).rule, "NULL_POINTER");
    cr_expect_str_eq(fp4lr_quantize_mxfp4(x, 1, 128, 128, FP4LR_MX_FLOOR, NULL, sf).rule, "NULL_POINTER");
    cr_expect_str_eq(fp4lr_quantize_nvfp4(x, 1, 64, 64, 1.0f, q, NULL).rule, "NULL_POINTER");
    cr_expect_str_eq(fp4lr_dequantize(FP4LR_MXFP4, q, sf, 1, 128, 1.0f, NULL).rule, "NULL_POINTER");
    cr_expect_eq(fp4lr_quantize_nvfp4(x, 1, 64, 64, 1.0f, q, NULL).code, FP4LR_E_INVALID);
}

Test(quant, bad_global_scale_and_signed_scale_rejected)
{
    float x[64] = {0};
    uint8_t q[32], sf[512] = {0};
    cr_expect_str_eq(fp4lr_quantize_nvfp4(x, 1, 64, 64, 0.0f, q, sf).rule, "GLOBAL_SCALE");
    cr_expect_str_eq(fp4lr_quantize_nvfp4(x, 1, 64, 64, -1.0f, q, sf).rule, "GLOBAL_SCALE");
    cr_expect_str_eq(fp4lr_quantize_nvfp4(x, 1, 64, 64, NAN, q, sf).rule, "GLOBAL_SCALE");
    cr_expect_str_eq(fp4lr_quantize_nvfp4(x, 1, 64, 64, INFINITY, q, sf).rule, "GLOBAL_SCALE");
    memset(q, 0x22, sizeof q);
    sf[fp4lr_sf_offset(0, 2, 4)] = 0xB8; /* -1.0: sign bit set */
    fp4lr_status st = fp4lr_dequantize(FP4LR_NVFP4, q, sf, 1, 64, 1.0f, x);
    cr_expect_str_eq(st.rule, "SCALE_SIGN");
    sf[fp4lr_sf_offset(0, 2, 4)] = 0x7F; /* NaN scale is valid input: it propagates */
    cr_assert_eq(fp4lr_dequantize(FP4LR_NVFP4, q, sf, 1, 64, 1.0f, x).code, FP4LR_OK);
    cr_expect(isnan(x[32]));
    cr_expect_eq(x[0], 0.0f); /* scale 0x00 */
}
