/* The dense reference (host/reference.c) against an independently written naive
 * triple loop, hand-checked vectors, the mag definition, NaN propagation, thread
 * independence, argument rules and the row sampler. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "scale_atom.h"
#include "problem_gen.h"

/* ---- the naive reference: own decoders, own layout arithmetic ------------------ */

static const double NAIVE_E2M1[16] = {0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6};

/* e4m3 with the sign bit honoured: 0x7F/0xFF NaN, E = 0 subnormal m·2^-9. */
static double naive_ue4m3(uint8_t c)
{
    int e = (c >> 3) & 15, m = c & 7;
    if (e == 15 && m == 7)
        return NAN;
    double v = e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
    return (c & 0x80) ? -v : v;
}

static double naive_ue8m0(uint8_t c) { return c == 0xFF ? NAN : ldexp(1.0, c - 127); }

static double naive_bf16(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* OPERATOR.md §4, written out again. */
static size_t naive_sf_at(int64_t i, int64_t c, int64_t kv)
{
    int64_t katoms = (kv + 3) / 4;
    return (size_t)(((i / 128) * katoms + c / 4) * 512 + (i % 32) * 16 + ((i % 128) / 32) * 4 + (c % 4));
}

static double naive_deq(const fp4lr_problem *p, const uint8_t *q, const uint8_t *sf, int64_t row, int64_t k)
{
    int64_t B = p->format == FP4LR_NVFP4 ? 16 : 32, kv = p->K / B;
    uint8_t byte = q[row * (p->K / 2) + k / 2];
    uint8_t code = (k % 2) ? (uint8_t)(byte >> 4) : (uint8_t)(byte & 15);
    uint8_t s = sf[naive_sf_at(row, k / B, kv)];
    return NAIVE_E2M1[code] * (p->format == FP4LR_NVFP4 ? naive_ue4m3(s) : naive_ue8m0(s));
}

static void naive_output(const fp4lr_pgen_problem *t, int64_t m, int64_t n, double *ref, double *mag)
{
    const fp4lr_problem *p = &t->p;
    double main = 0, sabs = 0, low = 0, labs = 0;
    for (int64_t k = 0; k < p->K; k++) {
        double v = naive_deq(p, t->A, t->SFA, m, k) * naive_deq(p, t->W, t->SFW, n, k);
        main += v;
        sabs += fabs(v);
    }
    for (int64_t j = 0; j < p->r; j++) {
        double v = naive_bf16(t->L[m * p->ldL + j]) * naive_bf16(t->U[n * p->ldU + j]);
        low += v;
        labs += fabs(v);
    }
    double alpha = t->a.alpha, wc = p->has_wc ? t->wc[n] : 1.0, beta = p->has_beta ? t->beta[n] : 0.0;
    *ref = wc * (alpha * main) + beta + low;
    *mag = fabs(alpha * wc) * sabs + fabs(beta) + labs;
}

/* Bitwise equal, any NaN equal to any NaN. */
static int same(double a, double b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0; }

/* ---- fixtures ---------------------------------------------------------------- */

static fp4lr_problem shape(int64_t M, int64_t N, int64_t K, int64_t r, fp4lr_format f, int wc, int beta)
{
    return (fp4lr_problem){
        .M = M, .N = N, .K = K, .r = r, .format = f, .out = FP4LR_OUT_BF16, .has_wc = wc, .has_beta = beta};
}

static void make(fp4lr_pgen_problem *t, fp4lr_problem p, uint64_t seed, fp4lr_pgen_scales s)
{
    cr_assert_eq(fp4lr_pgen_alloc(t, &p), 0, "problem %lldx%lldx%lld r=%lld rejected", (long long)p.M,
                 (long long)p.N, (long long)p.K, (long long)p.r);
    fp4lr_pgen_fill(t, seed, s);
}

/* Runs the reference on rows (NULL: all) into fresh arrays. */
static void run_ref(const fp4lr_pgen_problem *t, const int64_t *rows, int64_t nrows, int threads, double **ref,
                    double **mag)
{
    size_t n = (size_t)(nrows * t->p.N);
    *ref = malloc(n * sizeof(double));
    *mag = malloc(n * sizeof(double));
    cr_assert(*ref && *mag);
    fp4lr_status s = fp4lr_reference(&t->p, &t->a, rows, nrows, threads, *ref, *mag);
    cr_assert_eq(s.code, FP4LR_OK, "reference failed: %s (%s)", s.msg, s.rule);
}

/* Every requested output bitwise equal to the naive loop's. */
static void check_against_naive(const fp4lr_pgen_problem *t, const int64_t *rows, int64_t nrows)
{
    double *ref, *mag;
    run_ref(t, rows, nrows, 0, &ref, &mag);
    for (int64_t i = 0; i < nrows; i++)
        for (int64_t n = 0; n < t->p.N; n++) {
            int64_t m = rows ? rows[i] : i;
            double r, g;
            naive_output(t, m, n, &r, &g);
            cr_assert(same(ref[i * t->p.N + n], r), "ref(%lld,%lld) = %.17g, naive %.17g", (long long)m,
                      (long long)n, ref[i * t->p.N + n], r);
            cr_assert(same(mag[i * t->p.N + n], g), "mag(%lld,%lld) = %.17g, naive %.17g", (long long)m,
                      (long long)n, mag[i * t->p.N + n], g);
        }
    free(ref), free(mag);
}

static void naive_case(fp4lr_problem p, uint64_t seed, fp4lr_pgen_scales s)
{
    fp4lr_pgen_problem t;
    make(&t, p, seed, s);
    check_against_naive(&t, NULL, t.p.M);
    fp4lr_pgen_free(&t);
}

/* ---- against the naive loop ------------------------------------------------------ */

Test(reference, naive_nvfp4_r0_plain)
{
    naive_case(shape(7, 9, 64, 0, FP4LR_NVFP4, 0, 0), 1, FP4LR_PGEN_SCALES_REALISTIC);
}

Test(reference, naive_nvfp4_r16_affine_ragged_n)
{
    naive_case(shape(1, 129, 128, 16, FP4LR_NVFP4, 1, 1), 2, FP4LR_PGEN_SCALES_REALISTIC);
}

Test(reference, naive_mxfp4_r32_affine_ragged_m)
{
    naive_case(shape(129, 7, 256, 32, FP4LR_MXFP4, 1, 1), 3, FP4LR_PGEN_SCALES_REALISTIC);
}

/* Small MXFP4 scales (a trained model's range): every ue8m0 code at most 127 (2^0), the
 * reference still the naive loop's. */
Test(reference, naive_mxfp4_small_scales)
{
    fp4lr_problem p = shape(129, 70, 512, 16, FP4LR_MXFP4, 1, 1);
    naive_case(p, 12, FP4LR_PGEN_SCALES_SMALL);
    fp4lr_pgen_problem t;
    cr_assert_eq(fp4lr_pgen_alloc(&t, &p), 0);
    fp4lr_pgen_fill(&t, 12, FP4LR_PGEN_SCALES_SMALL);
    int top = 0;
    for (size_t i = 0; i < t.sizes.SFA; i++)
        top = t.SFA[i] > top ? t.SFA[i] : top;
    for (size_t i = 0; i < t.sizes.SFW; i++)
        top = t.SFW[i] > top ? t.SFW[i] : top;
    cr_expect_leq(top, 127, "largest ue8m0 code %d", top);
    cr_expect_geq(top, 110, "the scales are small, not all zero: largest %d", top);
    fp4lr_pgen_free(&t);
}

Test(reference, naive_mxfp4_full_scale_range)
{
    naive_case(shape(13, 17, 256, 16, FP4LR_MXFP4, 1, 0), 4, FP4LR_PGEN_SCALES_FULL);
}

Test(reference, naive_nvfp4_full_scale_range)
{
    naive_case(shape(13, 17, 192, 32, FP4LR_NVFP4, 0, 1), 5, FP4LR_PGEN_SCALES_FULL);
}

Test(reference, naive_padded_leading_dimensions)
{
    fp4lr_problem p = shape(9, 11, 128, 32, FP4LR_MXFP4, 1, 1);
    p.ldL = 40, p.ldU = 48, p.ldY = 24;
    naive_case(p, 6, FP4LR_PGEN_SCALES_REALISTIC);
}

Test(reference, naive_selected_rows_any_order_with_repeats)
{
    fp4lr_pgen_problem t;
    make(&t, shape(201, 33, 128, 16, FP4LR_NVFP4, 1, 1), 7, FP4LR_PGEN_SCALES_REALISTIC);
    const int64_t rows[] = {128, 3, 3, 0, 200, 127};
    check_against_naive(&t, rows, 6);
    fp4lr_pgen_free(&t);
}

Test(reference, selected_rows_equal_the_full_run)
{
    fp4lr_pgen_problem t;
    make(&t, shape(300, 70, 512, 32, FP4LR_MXFP4, 1, 1), 8, FP4LR_PGEN_SCALES_REALISTIC);
    double *full, *fmag, *part, *pmag;
    const int64_t rows[] = {299, 0, 150, 64};
    run_ref(&t, NULL, t.p.M, 0, &full, &fmag);
    run_ref(&t, rows, 4, 0, &part, &pmag);
    for (int i = 0; i < 4; i++)
        cr_assert(memcmp(part + i * 70, full + rows[i] * 70, 70 * sizeof(double)) == 0 &&
                      memcmp(pmag + i * 70, fmag + rows[i] * 70, 70 * sizeof(double)) == 0,
                  "row %lld differs between the sampled and the full run", (long long)rows[i]);
    free(full), free(fmag), free(part), free(pmag);
    fp4lr_pgen_free(&t);
}

/* ---- hand-checked vectors ------------------------------------------------------- */

/* NVFP4, K = 64: every A code 2 (1.0), W code 2 (1.0); SFA 0x38 (1.0), SFW 0x40
 * (2.0); main = 64·2 = 128.  alpha 0.5, wc -2, beta 3, r = 16 with L = 1, U = 0.5:
 * ref = -2·(0.5·128) + 3 + 8 = -117, mag = |0.5·-2|·128 + 3 + 8 = 139. */
Test(reference, hand_vector_nvfp4)
{
    fp4lr_pgen_problem t;
    cr_assert_eq(
        fp4lr_pgen_alloc(
            &t,
            &(fp4lr_problem){
                .M = 1, .N = 1, .K = 64, .r = 16, .format = FP4LR_NVFP4, .has_wc = 1, .has_beta = 1}),
        0);
    memset(t.A, 0x22, 32), memset(t.W, 0x22, 32);
    for (int c = 0; c < 4; c++)
        t.SFA[c] = 0x38, t.SFW[c] = 0x40;
    for (int j = 0; j < 16; j++)
        t.L[j] = 0x3F80, t.U[j] = 0x3F00;
    t.a.alpha = 0.5f, t.wc[0] = -2.0f, t.beta[0] = 3.0f;
    double ref, mag;
    cr_assert_eq(fp4lr_reference(&t.p, &t.a, NULL, 1, 1, &ref, &mag).code, FP4LR_OK);
    cr_assert_eq(ref, -117.0);
    cr_assert_eq(mag, 139.0);
    fp4lr_pgen_free(&t);
}

/* MXFP4, K = 128: A = 6 (code 7) for k < 64 and -0.5 (code 9) after; W = 1.5 (code 3)
 * everywhere; SFA 2^1 (128) for the first two blocks and 2^-1 (126) for the last two;
 * SFW 2^0 (127).  main = 64·(6·2·1.5) + 64·(-0.5·0.5·1.5) = 1152 - 24 = 1128,
 * Σ|a·w| = 1152 + 24 = 1176; no wc, beta, r: ref = 1128, mag = 1176. */
Test(reference, hand_vector_mxfp4)
{
    fp4lr_pgen_problem t;
    cr_assert_eq(
        fp4lr_pgen_alloc(&t, &(fp4lr_problem){.M = 1, .N = 1, .K = 128, .format = FP4LR_MXFP4}), 0);
    memset(t.A, 0x77, 32), memset(t.A + 32, 0x99, 32), memset(t.W, 0x33, 64);
    t.SFA[0] = t.SFA[1] = 128, t.SFA[2] = t.SFA[3] = 126;
    for (int c = 0; c < 4; c++)
        t.SFW[c] = 127;
    double ref, mag;
    cr_assert_eq(fp4lr_reference(&t.p, &t.a, NULL, 1, 2, &ref, &mag).code, FP4LR_OK);
    cr_assert_eq(ref, 1128.0);
    cr_assert_eq(mag, 1176.0);
    fp4lr_pgen_free(&t);
}

/* A scale byte with the sign bit set decodes as a negative scale (e4m3 semantics):
 * SFA 0xB8 = -1.0 on the only non-zero block flips the sign of the result. */
Test(reference, ue4m3_sign_bit_scale_is_negative)
{
    fp4lr_pgen_problem t;
    cr_assert_eq(fp4lr_pgen_alloc(&t, &(fp4lr_problem){.M = 1, .N = 1, .K = 64, .format = FP4LR_NVFP4}),
                 0);
    memset(t.A, 0x44, 8), memset(t.W, 0x22, 32); /* A = 2.0 on block 0 only, W = 1.0 */
    for (int c = 0; c < 4; c++)
        t.SFA[c] = 0x38, t.SFW[c] = 0x38;
    double pos, neg, mag;
    cr_assert_eq(fp4lr_reference(&t.p, &t.a, NULL, 1, 1, &pos, &mag).code, FP4LR_OK);
    t.SFA[0] = 0xB8;
    cr_assert_eq(fp4lr_reference(&t.p, &t.a, NULL, 1, 1, &neg, &mag).code, FP4LR_OK);
    cr_assert_eq(pos, 32.0);
    cr_assert_eq(neg, -32.0);
    cr_assert_eq(mag, 32.0);
    fp4lr_pgen_free(&t);
}

/* ---- mag -------------------------------------------------------------------------- */

/* Flipping the sign of every A element negates main exactly and leaves mag alone. */
Test(reference, mag_ignores_signs_of_a)
{
    fp4lr_pgen_problem t;
    make(&t, shape(17, 23, 256, 0, FP4LR_NVFP4, 1, 0), 11, FP4LR_PGEN_SCALES_REALISTIC);
    double *r0, *m0, *r1, *m1;
    run_ref(&t, NULL, 17, 0, &r0, &m0);
    for (size_t i = 0; i < t.sizes.A; i++)
        t.A[i] ^= 0x88;
    run_ref(&t, NULL, 17, 0, &r1, &m1);
    for (int i = 0; i < 17 * 23; i++) {
        cr_assert_eq(r1[i], -r0[i], "output %d: %.17g vs %.17g", i, r1[i], r0[i]);
        cr_assert_eq(m1[i], m0[i], "mag %d changed", i);
    }
    free(r0), free(m0), free(r1), free(m1);
    fp4lr_pgen_free(&t);
}

/* mag >= |ref| (triangle inequality, up to one rounding of each) on random data, and
 * mag is strictly larger somewhere (signs cancel). */
Test(reference, mag_bounds_ref)
{
    fp4lr_pgen_problem t;
    make(&t, shape(19, 21, 384, 32, FP4LR_NVFP4, 1, 1), 12, FP4LR_PGEN_SCALES_REALISTIC);
    double *ref, *mag;
    run_ref(&t, NULL, 19, 0, &ref, &mag);
    int strict = 0;
    for (int i = 0; i < 19 * 21; i++) {
        cr_assert(mag[i] >= fabs(ref[i]) * (1 - 0x1p-50), "mag %.17g < |ref| %.17g at %d", mag[i], ref[i], i);
        strict += mag[i] > 2 * fabs(ref[i]);
    }
    cr_assert_gt(strict, 0);
    free(ref), free(mag);
    fp4lr_pgen_free(&t);
}

/* mag may be NULL; ref is the same as with mag. */
Test(reference, mag_optional)
{
    fp4lr_pgen_problem t;
    make(&t, shape(5, 40, 128, 16, FP4LR_MXFP4, 1, 1), 13, FP4LR_PGEN_SCALES_REALISTIC);
    double *ref, *mag, ref2[5 * 40];
    run_ref(&t, NULL, 5, 0, &ref, &mag);
    cr_assert_eq(fp4lr_reference(&t.p, &t.a, NULL, 5, 0, ref2, NULL).code, FP4LR_OK);
    cr_assert(memcmp(ref, ref2, sizeof ref2) == 0);
    free(ref), free(mag);
    fp4lr_pgen_free(&t);
}

/* ---- NaN propagation ---------------------------------------------------------------- */

typedef struct nan_case {
    int64_t row, col; /* the row / column that must be NaN (-1: none / all) */
} nan_case;

/* Compares a poisoned run with the clean one: NaN (ref and mag) exactly in row
 * `row` or column `col` (both -1: everywhere), every other output bitwise clean. */
static void expect_nan_only(const fp4lr_pgen_problem *t, const double *clean_ref, const double *clean_mag,
                            nan_case c)
{
    double *ref, *mag;
    run_ref(t, NULL, t->p.M, 0, &ref, &mag);
    for (int64_t m = 0; m < t->p.M; m++)
        for (int64_t n = 0; n < t->p.N; n++) {
            int64_t i = m * t->p.N + n;
            int hit = (c.row < 0 && c.col < 0) || m == c.row || n == c.col;
            if (hit)
                cr_assert(isnan(ref[i]) && isnan(mag[i]), "(%lld,%lld) should be NaN", (long long)m,
                          (long long)n);
            else
                cr_assert(same(ref[i], clean_ref[i]) && same(mag[i], clean_mag[i]), "(%lld,%lld) changed",
                          (long long)m, (long long)n);
        }
    free(ref), free(mag);
}

static void nan_fixture(fp4lr_pgen_problem *t, fp4lr_format f, double **ref, double **mag)
{
    make(t, shape(37, 29, 256, 16, f, 1, 1), 21, FP4LR_PGEN_SCALES_REALISTIC);
    run_ref(t, NULL, 37, 0, ref, mag);
}

/* A NaN scale on a block whose elements are all zero still poisons: deq = 0·NaN. */
Test(reference, nan_sfa_poisons_its_row_even_on_a_zero_block)
{
    fp4lr_pgen_problem t;
    double *ref, *mag;
    nan_fixture(&t, FP4LR_NVFP4, &ref, &mag);
    const int64_t m = 33, c = 5, kv = 256 / 16;
    memset(t.A + m * 128 + c * 8, 0, 8);
    t.SFA[fp4lr_sf_offset(m, c, kv)] = 0x7F;
    expect_nan_only(&t, ref, mag, (nan_case){m, -1});
    free(ref), free(mag);
    fp4lr_pgen_free(&t);
}

Test(reference, nan_sfw_poisons_its_column)
{
    fp4lr_pgen_problem t;
    double *ref, *mag;
    nan_fixture(&t, FP4LR_MXFP4, &ref, &mag);
    t.SFW[fp4lr_sf_offset(28, 7, 256 / 32)] = 0xFF;
    expect_nan_only(&t, ref, mag, (nan_case){-1, 28});
    free(ref), free(mag);
    fp4lr_pgen_free(&t);
}

Test(reference, nan_wc_and_beta_poison_their_columns)
{
    fp4lr_pgen_problem t;
    double *ref, *mag;
    nan_fixture(&t, FP4LR_NVFP4, &ref, &mag);
    t.wc[3] = NAN;
    expect_nan_only(&t, ref, mag, (nan_case){-1, 3});
    t.wc[3] = t.wc[4];
    free(ref), free(mag);
    run_ref(&t, NULL, 37, 0, &ref, &mag);
    t.beta[0] = NAN;
    expect_nan_only(&t, ref, mag, (nan_case){-1, 0});
    free(ref), free(mag);
    fp4lr_pgen_free(&t);
}

/* bf16 NaN (0x7FC0) in L[m, j] poisons row m; in U[n, j] column n. */
Test(reference, nan_low_rank_poisons_row_or_column)
{
    fp4lr_pgen_problem t;
    double *ref, *mag;
    nan_fixture(&t, FP4LR_MXFP4, &ref, &mag);
    uint16_t keep = t.L[10 * 16 + 15];
    t.L[10 * 16 + 15] = 0x7FC0;
    expect_nan_only(&t, ref, mag, (nan_case){10, -1});
    t.L[10 * 16 + 15] = keep;
    t.U[21 * 16 + 0] = 0xFFC0;
    expect_nan_only(&t, ref, mag, (nan_case){-1, 21});
    free(ref), free(mag);
    fp4lr_pgen_free(&t);
}

Test(reference, nan_alpha_poisons_everything)
{
    fp4lr_pgen_problem t;
    double *ref, *mag;
    nan_fixture(&t, FP4LR_NVFP4, &ref, &mag);
    t.a.alpha = NAN;
    expect_nan_only(&t, ref, mag, (nan_case){-1, -1});
    free(ref), free(mag);
    fp4lr_pgen_free(&t);
}

/* ---- threads ------------------------------------------------------------------------ */

Test(reference, thread_count_does_not_change_a_bit)
{
    fp4lr_pgen_problem t;
    make(&t, shape(67, 45, 576, 32, FP4LR_NVFP4, 1, 1), 31, FP4LR_PGEN_SCALES_REALISTIC);
    double *r1, *m1;
    run_ref(&t, NULL, 67, 1, &r1, &m1);
    const int counts[] = {2, 3, 7, 64, 0};
    for (int c = 0; c < 5; c++) {
        double *r, *m;
        run_ref(&t, NULL, 67, counts[c], &r, &m);
        cr_assert(memcmp(r, r1, 67 * 45 * sizeof(double)) == 0, "ref differs with %d threads", counts[c]);
        cr_assert(memcmp(m, m1, 67 * 45 * sizeof(double)) == 0, "mag differs with %d threads", counts[c]);
        free(r), free(m);
    }
    free(r1), free(m1);
    fp4lr_pgen_free(&t);
}

/* ---- argument rules ------------------------------------------------------------------ */

Test(reference, rejects_bad_arguments)
{
    fp4lr_pgen_problem t;
    make(&t, shape(4, 4, 64, 16, FP4LR_NVFP4, 1, 1), 41, FP4LR_PGEN_SCALES_REALISTIC);
    double out[16];
    const int64_t bad_row[] = {0, 4};
    fp4lr_status s = fp4lr_reference(&t.p, &t.a, NULL, 4, 0, NULL, NULL);
    cr_assert_str_eq(s.rule, "NULL_POINTER");
    s = fp4lr_reference(&t.p, &t.a, NULL, 3, 0, out, NULL);
    cr_assert_str_eq(s.rule, "NROWS");
    s = fp4lr_reference(&t.p, &t.a, bad_row, 2, 0, out, NULL);
    cr_assert_str_eq(s.rule, "ROW_RANGE");
    s = fp4lr_reference(&t.p, &t.a, NULL, 4, -1, out, NULL);
    cr_assert_str_eq(s.rule, "THREADS");
    fp4lr_args a = t.a;
    a.L = NULL;
    s = fp4lr_reference(&t.p, &a, NULL, 4, 0, out, NULL);
    cr_assert_str_eq(s.rule, "NULL_POINTER");
    a = t.a, a.beta = NULL;
    s = fp4lr_reference(&t.p, &a, NULL, 4, 0, out, NULL);
    cr_assert_str_eq(s.rule, "NULL_POINTER");
    fp4lr_problem p = t.p;
    p.K = 96;
    s = fp4lr_reference(&p, &t.a, NULL, 4, 0, out, NULL);
    cr_assert_eq(s.code, FP4LR_E_INVALID);
    cr_assert_str_eq(s.rule, "K_MULTIPLE");
    fp4lr_pgen_free(&t);
}

/* ---- row sampling ---------------------------------------------------------------------- */

static int contains(const int64_t *rows, int64_t n, int64_t v)
{
    for (int64_t i = 0; i < n; i++)
        if (rows[i] == v)
            return 1;
    return 0;
}

Test(reference, sample_rows_has_edges_sorted_unique)
{
    int64_t rows[50], n = 0;
    cr_assert_eq(fp4lr_sample_rows(1000, 50, 99, rows, &n).code, FP4LR_OK);
    cr_assert_eq(n, 50);
    /* 0, 1, M-2, M-1; first tile edges; last 64-row tile starts at 960, last 128 at 896 */
    const int64_t must[] = {0, 1, 998, 999, 63, 64, 127, 128, 959, 960, 895, 896};
    for (int i = 0; i < 12; i++)
        cr_assert(contains(rows, n, must[i]), "row %lld missing", (long long)must[i]);
    for (int64_t i = 1; i < n; i++)
        cr_assert_lt(rows[i - 1], rows[i], "not sorted and unique at %lld", (long long)i);
    cr_assert(rows[0] >= 0 && rows[n - 1] < 1000);
    /* M a multiple of the tiles: the last tiles start at 192 and 128 */
    cr_assert_eq(fp4lr_sample_rows(256, 16, 3, rows, &n).code, FP4LR_OK);
    const int64_t must256[] = {0, 1, 254, 255, 63, 64, 127, 128, 191, 192};
    for (int i = 0; i < 10; i++)
        cr_assert(contains(rows, n, must256[i]), "M = 256: row %lld missing", (long long)must256[i]);
}

Test(reference, sample_rows_is_seeded)
{
    int64_t a[40], b[40], c[40], na, nb, nc;
    cr_assert_eq(fp4lr_sample_rows(4608, 40, 7, a, &na).code, FP4LR_OK);
    cr_assert_eq(fp4lr_sample_rows(4608, 40, 7, b, &nb).code, FP4LR_OK);
    cr_assert_eq(fp4lr_sample_rows(4608, 40, 8, c, &nc).code, FP4LR_OK);
    cr_assert(na == 40 && nb == 40 && nc == 40);
    cr_assert(memcmp(a, b, sizeof a) == 0, "same seed, different rows");
    cr_assert(memcmp(a, c, sizeof a) != 0, "different seeds, same rows");
}

Test(reference, sample_rows_small_m_takes_every_row)
{
    int64_t rows[16], n = 0;
    cr_assert_eq(fp4lr_sample_rows(5, 16, 1, rows, &n).code, FP4LR_OK);
    cr_assert_eq(n, 5);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(rows[i], i);
    cr_assert_eq(fp4lr_sample_rows(1, 1, 1, rows, &n).code, FP4LR_OK);
    cr_assert(n == 1 && rows[0] == 0);
    cr_assert_eq(fp4lr_sample_rows(7, 7, 1, rows, &n).code, FP4LR_OK); /* want = M < 12 */
    cr_assert(n == 7 && rows[6] == 6);
    /* M = 130: edges 0, 1, 128, 129, 63, 64, 127 (and the last 64-row tile at 128) */
    cr_assert_eq(fp4lr_sample_rows(130, 12, 1, rows, &n).code, FP4LR_OK);
    cr_assert_eq(n, 12);
    const int64_t must[] = {0, 1, 63, 64, 127, 128, 129};
    for (int i = 0; i < 7; i++)
        cr_assert(contains(rows, n, must[i]), "row %lld missing", (long long)must[i]);
}

Test(reference, sample_rows_rejects)
{
    int64_t rows[16], n;
    cr_assert_str_eq(fp4lr_sample_rows(100, 11, 1, rows, &n).rule, "SAMPLE_WANT");
    cr_assert_str_eq(fp4lr_sample_rows(12, 11, 1, rows, &n).rule, "SAMPLE_WANT");
    cr_assert_str_eq(fp4lr_sample_rows(0, 16, 1, rows, &n).rule, "M_POSITIVE");
    cr_assert_str_eq(fp4lr_sample_rows(100, 16, 1, NULL, &n).rule, "NULL_POINTER");
}
