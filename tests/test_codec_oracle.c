/* Codec oracle: our C codecs against ml_dtypes' float4_e2m1fn, float8_e4m3fn
 * and float8_e8m0fnu, on every code and on 2^20 inputs (tests/data/codec_*,
 * written by tests/gen_codec_vectors.py; tests run from the repo root).
 *
 * Known, intended differences from ml_dtypes (each compared explicitly):
 *  - e2m1 of NaN: ml_dtypes returns a zero whose sign is the NaN's sign
 *    flipped (+NaN -> 0x8); fp4lr_e2m1_encode returns 0.  NaN inputs are
 *    excluded from the e2m1 comparison and pinned separately.
 *  - e4m3fn: ml_dtypes does not saturate (|v| >= 464 and Inf -> NaN), which
 *    is fp4lr_e4m3_encode_rne_nonsat; fp4lr_e4m3_encode_rne_sat and the
 *    unsigned fp4lr_ue4m3_encode saturate to 448 instead. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2m1.h"
#include "ue4m3.h"
#include "ue8m0.h"

#define ORACLE_N (1u << 20)

/* Reads exactly `bytes` bytes of tests/data/<name> into a new buffer. */
static void *load(const char *name, size_t bytes)
{
    char path[256];
    snprintf(path, sizeof path, "tests/data/%s", name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s (run the tests from the repo root)", path);
    void *buf = malloc(bytes + 1);
    cr_assert_not_null(buf);
    size_t got = fread(buf, 1, bytes + 1, f);
    fclose(f);
    cr_assert_eq(got, bytes, "%s: %zu bytes, expected %zu", path, got, bytes);
    return buf;
}

static uint32_t bits_of(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* Decoded values must match bit for bit (NaN only as "both NaN"). */
static void check_decode(const char *file, int ncodes, float (*decode)(uint8_t))
{
    float *ref = load(file, (size_t)ncodes * sizeof(float));
    for (int c = 0; c < ncodes; c++) {
        float ours = decode((uint8_t)c);
        if (isnan(ref[c]))
            cr_expect(isnan(ours), "%s code 0x%02X: ml_dtypes NaN, ours %a", file, c, (double)ours);
        else
            cr_expect_eq(bits_of(ours), bits_of(ref[c]), "%s code 0x%02X: ml_dtypes %a, ours %a", file, c,
                         (double)ref[c], (double)ours);
    }
    free(ref);
}

Test(codec_oracle, e2m1_decode_every_code) { check_decode("codec_decode_e2m1.f32", 16, fp4lr_e2m1_decode); }
Test(codec_oracle, e4m3fn_decode_every_code) { check_decode("codec_decode_e4m3fn.f32", 256, fp4lr_ue4m3_decode); }
Test(codec_oracle, e8m0fnu_decode_every_code) { check_decode("codec_decode_e8m0fnu.f32", 256, fp4lr_ue8m0_decode); }

/* The inputs and one format's ml_dtypes encodings. */
typedef struct oracle {
    float *x;
    uint8_t *enc;
} oracle;

static oracle load_oracle(const char *enc_file)
{
    oracle o = {load("codec_inputs.f32", ORACLE_N * sizeof(float)), load(enc_file, ORACLE_N)};
    return o;
}

static void free_oracle(oracle o)
{
    free(o.x);
    free(o.enc);
}

/* Disagreements with the oracle: how many, and the first one. */
typedef struct tally {
    unsigned bad, compared;
    uint32_t first;
    uint8_t first_ours, first_want;
} tally;

static void count(tally *t, uint32_t i, uint8_t ours, uint8_t want)
{
    t->compared++;
    if (ours != want && t->bad++ == 0) {
        t->first = i;
        t->first_ours = ours;
        t->first_want = want;
    }
}

static void expect_agreement(const tally *t, const oracle *o, const char *what)
{
    cr_assert_eq(t->bad, 0u, "%s: %u of %u inputs differ; first x = %a (0x%08X): expected 0x%02X, ours 0x%02X",
                 what, t->bad, t->compared, (double)o->x[t->first], bits_of(o->x[t->first]), t->first_want,
                 t->first_ours);
}

Test(codec_oracle, e2m1_encode_matches_on_every_non_nan_input)
{
    oracle o = load_oracle("codec_enc_e2m1.u8");
    tally t = {0};
    unsigned nnan = 0;
    for (uint32_t i = 0; i < ORACLE_N; i++) {
        if (isnan(o.x[i])) {
            /* ml_dtypes: a zero with the NaN's sign flipped; ours: +0. */
            cr_expect_eq(o.enc[i], signbit(o.x[i]) ? 0x0 : 0x8);
            cr_expect_eq(fp4lr_e2m1_encode(o.x[i]), 0x0);
            nnan++;
            continue;
        }
        uint8_t ours = fp4lr_e2m1_encode(o.x[i]);
        count(&t, i, ours, o.enc[i]);
    }
    expect_agreement(&t, &o, "e2m1");
    cr_expect_gt(nnan, 0u);
    cr_expect_gt(t.compared, ORACLE_N - 2000u);
    free_oracle(o);
}

/* The exact-quotient encoder: x * 2^k / 2^k must encode as x does. */
Test(codec_oracle, e2m1_encode_div_matches_on_scaled_inputs)
{
    oracle o = load_oracle("codec_enc_e2m1.u8");
    tally t = {0};
    for (uint32_t i = 0; i < ORACLE_N; i++) {
        float x = o.x[i];
        if (!isfinite(x) || fabsf(x) < 0x1p-100f || fabsf(x) > 0x1p100f)
            continue;
        int k = (int)(i % 61) - 30; /* scale by 2^-30 .. 2^30, exact for these x */
        uint8_t ours = fp4lr_e2m1_encode_div(ldexpf(x, k), ldexp(1.0, k));
        count(&t, i, ours, o.enc[i]);
    }
    expect_agreement(&t, &o, "e2m1 encode_div");
    cr_expect_gt(t.compared, ORACLE_N / 2);
    free_oracle(o);
}

/* An encoder that must reproduce ml_dtypes on every input, NaN included. */
static void expect_encoder_matches(const char *enc_file, uint8_t (*encode)(float), const char *what)
{
    oracle o = load_oracle(enc_file);
    tally t = {0};
    for (uint32_t i = 0; i < ORACLE_N; i++)
        count(&t, i, encode(o.x[i]), o.enc[i]);
    expect_agreement(&t, &o, what);
    free_oracle(o);
}

Test(codec_oracle, e4m3fn_nonsat_matches_every_input)
{
    expect_encoder_matches("codec_enc_e4m3fn.u8", fp4lr_e4m3_encode_rne_nonsat, "e4m3fn nonsat");
}

Test(codec_oracle, e8m0fnu_matches_every_input)
{
    expect_encoder_matches("codec_enc_e8m0fnu.u8", fp4lr_ue8m0_encode_rne, "e8m0fnu");
}

/* Saturating variant: equal to ml_dtypes wherever ml_dtypes gives a finite
 * code; where ml_dtypes overflows a non-NaN input to NaN, +-448 instead. */
Test(codec_oracle, e4m3fn_sat_matches_except_overflow)
{
    oracle o = load_oracle("codec_enc_e4m3fn.u8");
    tally t = {0};
    unsigned overflows = 0;
    for (uint32_t i = 0; i < ORACLE_N; i++) {
        float x = o.x[i];
        uint8_t ours = fp4lr_e4m3_encode_rne_sat(x);
        uint8_t want = o.enc[i];
        if ((want & 0x7F) == 0x7F && !isnan(x)) {
            want = (uint8_t)((want & 0x80) | 0x7E);
            overflows++;
        }
        count(&t, i, ours, want);
    }
    expect_agreement(&t, &o, "e4m3fn sat");
    cr_expect_gt(overflows, 1000u);
    free_oracle(o);
}

/* Unsigned scale encoder: for x >= 0 (and -0) as the saturating variant;
 * negatives and NaN -> 0x7F; and the exact-division form agrees with it. */
Test(codec_oracle, ue4m3_matches_on_non_negative_inputs)
{
    oracle o = load_oracle("codec_enc_e4m3fn.u8");
    tally t = {0};
    for (uint32_t i = 0; i < ORACLE_N; i++) {
        float x = o.x[i];
        uint8_t ours = fp4lr_ue4m3_encode(x);
        if (isnan(x) || x < 0.0f) { /* -0 is not < 0: compared below */
            cr_expect_eq(ours, 0x7F, "x = %a", (double)x);
            continue;
        }
        /* -0 is 0x80 in ml_dtypes; the unsigned scale has no sign: 0x00. */
        uint8_t want = o.enc[i] == 0x7F ? 0x7E : (uint8_t)(o.enc[i] & 0x7F);
        count(&t, i, ours, want);
        if (isfinite(x))
            cr_expect_eq(fp4lr_ue4m3_encode_div(x, 1.0), ours, "encode_div(%a, 1)", (double)x);
    }
    expect_agreement(&t, &o, "ue4m3");
    cr_expect_gt(t.compared, ORACLE_N / 3);
    free_oracle(o);
}
