/* The comparison and its tolerance model (host/compare.c, host/TOLERANCE.md): a
 * correctly rounded reference and an emulated fp32 tensor-core kernel pass; every
 * planted fault of OPERATOR.md §5 fails; special values; the report's contents. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "compare.h"
#include "e2m1.h"
#include "fp4_pack.h"
#include "reference.h"
#include "scale_atom.h"
#include "shapes.h"
#include "problem_gen.h"
#include "ue4m3.h"
#include "ue8m0.h"

/* ---- fixtures ------------------------------------------------------------------- */

typedef struct fixture {
    fp4lr_pgen_problem t;
    double *ref, *mag; /* clean reference of every row */
} fixture;

static fp4lr_problem shape(int64_t M, int64_t N, int64_t K, int64_t r, fp4lr_format f)
{
    return (fp4lr_problem){
        .M = M, .N = N, .K = K, .r = r, .format = f, .out = FP4LR_OUT_BF16, .has_wc = 1, .has_beta = 1};
}

static void reference_into(const fp4lr_pgen_problem *t, double *ref, double *mag)
{
    fp4lr_status s = fp4lr_reference(&t->p, &t->a, NULL, t->p.M, 0, ref, mag);
    cr_assert_eq(s.code, FP4LR_OK, "reference: %s", s.msg);
}

static void setup(fixture *f, fp4lr_problem p, uint64_t seed)
{
    cr_assert_eq(fp4lr_pgen_alloc(&f->t, &p), 0);
    fp4lr_pgen_fill(&f->t, seed, FP4LR_PGEN_SCALES_REALISTIC);
    size_t n = (size_t)(p.M * p.N);
    f->ref = malloc(n * sizeof(double)), f->mag = malloc(n * sizeof(double));
    cr_assert(f->ref && f->mag);
    reference_into(&f->t, f->ref, f->mag);
    fp4lr_pgen_output_poison(&f->t);
}

static void teardown(fixture *f)
{
    free(f->ref), free(f->mag);
    fp4lr_pgen_free(&f->t);
}

static fp4lr_status compare_all(fixture *f, fp4lr_compare_report *rep)
{
    return fp4lr_compare(&f->t.p, f->t.Y, NULL, f->t.p.M, f->ref, f->mag, rep);
}

/* Y = round_out(reference of the problem as it is now), then restores nothing. */
static void store_current_reference(fixture *f)
{
    size_t n = (size_t)(f->t.p.M * f->t.p.N);
    double *r = malloc(n * sizeof(double)), *g = malloc(n * sizeof(double));
    cr_assert(r && g);
    reference_into(&f->t, r, g);
    fp4lr_pgen_output_store(&f->t, NULL, f->t.p.M, r);
    free(r), free(g);
}

/* ---- what must pass ----------------------------------------------------------------- */

Test(compare, rounded_reference_passes_bf16)
{
    fixture f;
    setup(&f, shape(37, 41, 512, 32, FP4LR_NVFP4), 1);
    fp4lr_pgen_output_store(&f.t, NULL, 37, f.ref);
    fp4lr_compare_report rep;
    fp4lr_status s = compare_all(&f, &rep);
    cr_assert_eq(s.code, FP4LR_OK, "%s", s.msg);
    cr_assert_eq(rep.checked, 37 * 41);
    cr_assert_eq(rep.failed, 0);
    cr_assert_eq(rep.nfirst, 0);
    cr_assert_eq(rep.tol_acc, fp4lr_tol_acc(&f.t.p));
    teardown(&f);
}

Test(compare, rounded_reference_passes_f16_and_f32)
{
    for (int out = FP4LR_OUT_F16; out <= FP4LR_OUT_F32; out++) {
        fixture f;
        fp4lr_problem p = shape(9, 24, 256, 16, FP4LR_MXFP4);
        p.out = (fp4lr_out_type)out;
        setup(&f, p, 2);
        fp4lr_pgen_output_store(&f.t, NULL, 9, f.ref);
        fp4lr_compare_report rep;
        fp4lr_status s = compare_all(&f, &rep);
        cr_assert_eq(s.code, FP4LR_OK, "%s: %s", fp4lr_out_name(p.out), s.msg);
        teardown(&f);
    }
}

/* Only some rows compared: Y elsewhere is poison and is not read. */
Test(compare, selected_rows_only)
{
    fixture f;
    setup(&f, shape(130, 16, 128, 0, FP4LR_NVFP4), 3);
    const int64_t rows[] = {129, 0, 64};
    double ref[3 * 16], mag[3 * 16];
    cr_assert_eq(fp4lr_reference(&f.t.p, &f.t.a, rows, 3, 0, ref, mag).code, FP4LR_OK);
    fp4lr_pgen_output_store(&f.t, rows, 3, ref);
    fp4lr_compare_report rep;
    cr_assert_eq(fp4lr_compare(&f.t.p, f.t.Y, rows, 3, ref, mag, &rep).code, FP4LR_OK);
    cr_assert_eq(rep.checked, 48);
    teardown(&f);
}

/* ---- an emulated fp32 tensor core passes -----------------------------------------------
 * One tensor-core step adds 16 exact products to the fp32 accumulator the way the
 * studied NVIDIA tensor cores do, taken at its least precise: every addend (the
 * accumulator included) is truncated to 24 significant bits at the largest exponent
 * of the step, the truncated terms are summed exactly and the sum is truncated to
 * fp32.  The affine runs in fp32 with truncation, the low-rank term in 16-deep steps
 * on the same accumulator (the sm_90a structure), then one bf16 rounding. */

static double trunc_f32(double v)
{
    float f = (float)v;
    if (fabs((double)f) > fabs(v))
        f = nextafterf(f, 0.0f);
    return f;
}

static double tc_step(double acc, const double *p, int n)
{
    double mx = fabs(acc);
    for (int i = 0; i < n; i++)
        mx = fmax(mx, fabs(p[i]));
    if (mx == 0)
        return acc;
    int e;
    frexp(mx, &e);
    const double q = ldexp(1.0, e - 24); /* 24 bits below the top of mx's binade */
    double s = trunc(acc / q) * q;
    for (int i = 0; i < n; i++)
        s += trunc(p[i] / q) * q;
    return trunc_f32(s);
}

static double deq(const fp4lr_pgen_problem *t, const uint8_t *q, const uint8_t *sf, int64_t row, int64_t k)
{
    const fp4lr_problem *p = &t->p;
    int64_t B = fp4lr_format_block(p->format);
    uint8_t s = fp4lr_sf_get(sf, row, k / B, p->K / B);
    double sv = p->format == FP4LR_NVFP4 ? fp4lr_ue4m3_decode(s) : fp4lr_ue8m0_decode(s);
    return fp4lr_e2m1_decode(fp4lr_fp4_get(q + row * (p->K / 2), k)) * sv;
}

static double emulated_output(const fp4lr_pgen_problem *t, int64_t m, int64_t n)
{
    const fp4lr_problem *p = &t->p;
    double acc = 0, prod[16];
    for (int64_t k0 = 0; k0 < p->K; k0 += 16) {
        for (int i = 0; i < 16; i++)
            prod[i] = deq(t, t->A, t->SFA, m, k0 + i) * deq(t, t->W, t->SFW, n, k0 + i);
        acc = tc_step(acc, prod, 16);
    }
    acc = trunc_f32(trunc_f32((double)t->a.alpha * acc) * (p->has_wc ? t->wc[n] : 1.0f));
    acc = trunc_f32(acc + (p->has_beta ? t->beta[n] : 0.0f));
    for (int64_t j0 = 0; j0 < p->r; j0 += 16) {
        for (int i = 0; i < 16; i++)
            prod[i] = (double)fp4lr_bf16_to_float(t->L[m * p->ldL + j0 + i]) *
                      fp4lr_bf16_to_float(t->U[n * p->ldU + j0 + i]);
        acc = tc_step(acc, prod, 16);
    }
    return acc;
}

static void emulate_and_compare(fp4lr_problem p, uint64_t seed, int all_positive, fp4lr_out_type out)
{
    p.out = out;
    fixture f;
    setup(&f, p, seed);
    if (all_positive) {
        /* Positive codes and W rows equal to A rows: every product positive, the
         * accumulator grows monotonically (the worst case for truncation bias). */
        for (size_t i = 0; i < f.t.sizes.A; i++)
            f.t.A[i] &= 0x77;
        memcpy(f.t.W, f.t.A, f.t.sizes.W < f.t.sizes.A ? f.t.sizes.W : f.t.sizes.A);
        memcpy(f.t.SFW, f.t.SFA, f.t.sizes.SFW < f.t.sizes.SFA ? f.t.sizes.SFW : f.t.sizes.SFA);
        for (int64_t n = 0; n < p.N; n++)
            f.t.wc[n] = fabsf(f.t.wc[n]), f.t.beta[n] = fabsf(f.t.beta[n]);
        reference_into(&f.t, f.ref, f.mag);
    }
    for (int64_t m = 0; m < p.M; m++)
        for (int64_t n = 0; n < p.N; n++)
            fp4lr_pgen_output_set(&f.t, m, n, emulated_output(&f.t, m, n));
    fp4lr_compare_report rep;
    fp4lr_status s = compare_all(&f, &rep);
    cr_assert_eq(s.code, FP4LR_OK, "K=%lld r=%lld %s: %s", (long long)p.K, (long long)p.r,
                 fp4lr_format_name(p.format), s.msg);
    cr_assert_gt(rep.max_err_over_mag, 0, "the emulation should not be exact");
    teardown(&f);
}

Test(compare, emulated_tensor_core_passes_nvfp4)
{
    emulate_and_compare(shape(16, 16, 64, 0, FP4LR_NVFP4), 11, 0, FP4LR_OUT_BF16);
    emulate_and_compare(shape(16, 16, 1024, 32, FP4LR_NVFP4), 12, 0, FP4LR_OUT_BF16);
    emulate_and_compare(shape(8, 8, 4096, 128, FP4LR_NVFP4), 13, 0, FP4LR_OUT_BF16);
}

Test(compare, emulated_tensor_core_passes_mxfp4)
{
    emulate_and_compare(shape(16, 16, 128, 16, FP4LR_MXFP4), 14, 0, FP4LR_OUT_BF16);
    emulate_and_compare(shape(8, 8, 4096, 32, FP4LR_MXFP4), 15, 0, FP4LR_OUT_BF16);
}

Test(compare, emulated_tensor_core_passes_all_positive_products)
{
    emulate_and_compare(shape(8, 8, 4096, 32, FP4LR_NVFP4), 16, 1, FP4LR_OUT_BF16);
    emulate_and_compare(shape(8, 8, 4096, 0, FP4LR_MXFP4), 17, 1, FP4LR_OUT_BF16);
}

/* With an fp32 output the ulp term is 2^16 times smaller than bf16's, so tol_acc·mag
 * carries the accumulation error on its own. */
Test(compare, emulated_tensor_core_passes_with_f32_output)
{
    emulate_and_compare(shape(16, 16, 1024, 32, FP4LR_NVFP4), 18, 0, FP4LR_OUT_F32);
    emulate_and_compare(shape(8, 8, 4096, 128, FP4LR_MXFP4), 19, 0, FP4LR_OUT_F32);
    emulate_and_compare(shape(8, 8, 4096, 32, FP4LR_NVFP4), 20, 1, FP4LR_OUT_F32);
    emulate_and_compare(shape(8, 8, 256, 16, FP4LR_MXFP4), 21, 1, FP4LR_OUT_F32);
}

/* ---- planted faults fail --------------------------------------------------------------- */

/* Y from the faulty problem, compared with the clean reference: must fail. */
static fp4lr_compare_report expect_fault_caught(fixture *f, const char *what)
{
    store_current_reference(f);
    fp4lr_compare_report rep;
    fp4lr_status s = compare_all(f, &rep);
    cr_assert_eq(s.code, FP4LR_E_MISMATCH, "%s was not caught", what);
    cr_assert_str_eq(s.rule, "TOLERANCE");
    cr_assert_gt(rep.failed, 0);
    return rep;
}

/* The first W row with a non-zero wc (a zero wc hides its column's 4-bit product). */
static int64_t live_column(const fixture *f)
{
    int64_t n = 0;
    while (f->t.wc[n] == 0.0f)
        n++;
    return n;
}

/* The SFW byte of column n's largest block scale.  Faults go on a block of the
 * row's band: a block drawn far below its row (1 in 16) contributes nothing
 * measurable, and changing its scale is invisible by design. */
static uint8_t *band_scale(fixture *f, int64_t n)
{
    const int64_t kv = f->t.p.K / fp4lr_format_block(f->t.p.format);
    uint8_t *best = &f->t.SFW[fp4lr_sf_offset(n, 0, kv)];
    for (int64_t c = 1; c < kv; c++) {
        uint8_t *b = &f->t.SFW[fp4lr_sf_offset(n, c, kv)];
        best = *b > *best ? b : best;
    }
    return best;
}

/* Doubles a scale: ue4m3 exponent + 1 (or - 1 at the top), ue8m0 + 1. */
static void double_scale(fp4lr_format fmt, uint8_t *b)
{
    *b = fmt == FP4LR_NVFP4 ? (uint8_t)(*b <= 0x76 ? *b + 8 : *b - 8) : (uint8_t)(*b < 254 ? *b + 1 : *b - 1);
}

/* One SFW byte doubled: only that column fails. */
static void scale_doubled(fp4lr_format fmt, int64_t K)
{
    fixture f;
    setup(&f, shape(64, 24, K, 32, fmt), 21);
    const int64_t n = live_column(&f);
    double_scale(fmt, band_scale(&f, n));
    fp4lr_compare_report rep = expect_fault_caught(&f, "a doubled scale byte");
    for (int i = 0; i < rep.nfirst; i++)
        cr_assert_eq(rep.first[i].n, n, "a failure outside the faulty column");
    teardown(&f);
}

Test(compare, fault_scale_byte_doubled_nvfp4) { scale_doubled(FP4LR_NVFP4, 1024); }
Test(compare, fault_scale_byte_doubled_mxfp4) { scale_doubled(FP4LR_MXFP4, 1024); }

/* The smallest ue4m3 change, one mantissa step (1/16 to 1/8 of the scale), on an A
 * row: caught at K = 256. */
Test(compare, fault_scale_byte_one_step_nvfp4)
{
    fixture f;
    setup(&f, shape(16, 64, 256, 16, FP4LR_NVFP4), 22);
    uint8_t *b = &f.t.SFA[fp4lr_sf_offset(5, 3, 256 / 16)];
    *b = (uint8_t)(*b == 0x7E ? 0x7D : *b + 1);
    fp4lr_compare_report rep = expect_fault_caught(&f, "a one-step scale change");
    cr_assert_eq(rep.first[0].m, 5);
    teardown(&f);
}

/* One K-block of 64 dropped (its A codes zeroed, as a skipped block would contribute
 * nothing): most outputs fail. */
static void dropped_kblock(fp4lr_format fmt, int64_t K)
{
    fixture f;
    setup(&f, shape(32, 32, K, 32, fmt), 23);
    const int64_t blk = K / 64 / 2;
    for (int64_t m = 0; m < 32; m++)
        memset(f.t.A + m * (K / 2) + blk * 32, 0, 32);
    fp4lr_compare_report rep = expect_fault_caught(&f, "a dropped K-block");
    cr_assert_gt(rep.failed, 32 * 32 / 4, "only %lld outputs noticed a dropped K-block",
                 (long long)rep.failed);
    teardown(&f);
}

Test(compare, fault_dropped_kblock_nvfp4) { dropped_kblock(FP4LR_NVFP4, 3072); }
Test(compare, fault_dropped_kblock_mxfp4) { dropped_kblock(FP4LR_MXFP4, 3072); }

/* One low-rank column dropped (L[:, j] = 0). */
Test(compare, fault_dropped_low_rank_column)
{
    fixture f;
    setup(&f, shape(32, 32, 3072, 128, FP4LR_NVFP4), 24);
    for (int64_t m = 0; m < 32; m++)
        f.t.L[m * f.t.p.ldL + 77] = 0;
    fp4lr_compare_report rep = expect_fault_caught(&f, "a dropped low-rank column");
    cr_assert_gt(rep.failed, 32 * 32 / 4, "only %lld outputs noticed", (long long)rep.failed);
    teardown(&f);
}

/* One output row left unwritten (still poison): exactly that row fails. */
Test(compare, fault_unwritten_row)
{
    fixture f;
    setup(&f, shape(40, 24, 128, 16, FP4LR_MXFP4), 25);
    fp4lr_pgen_output_store(&f.t, NULL, 40, f.ref);
    for (int64_t n = 0; n < 24; n++)
        fp4lr_pgen_output_set(&f.t, 17, n, NAN);
    fp4lr_compare_report rep;
    cr_assert_eq(compare_all(&f, &rep).code, FP4LR_E_MISMATCH);
    cr_assert_eq(rep.failed, 24);
    cr_assert_eq(rep.nan_got_unexpected, 24);
    cr_assert(rep.first[0].m == 17 && rep.first[0].n == 0);
    cr_assert(isnan(rep.first[0].got) && isnan(rep.first[0].err));
    teardown(&f);
}

/* One output column left unwritten: exactly that column fails, first at row 0. */
Test(compare, fault_unwritten_column)
{
    fixture f;
    setup(&f, shape(40, 24, 128, 16, FP4LR_NVFP4), 26);
    fp4lr_pgen_output_store(&f.t, NULL, 40, f.ref);
    for (int64_t m = 0; m < 40; m++)
        fp4lr_pgen_output_set(&f.t, m, 23, NAN);
    fp4lr_compare_report rep;
    cr_assert_eq(compare_all(&f, &rep).code, FP4LR_E_MISMATCH);
    cr_assert_eq(rep.failed, 40);
    cr_assert_eq(rep.nfirst, FP4LR_COMPARE_FIRST);
    for (int i = 0; i < rep.nfirst; i++)
        cr_assert(rep.first[i].m == i && rep.first[i].n == 23);
    teardown(&f);
}

/* ---- special values ------------------------------------------------------------------- */

Test(compare, nan_where_a_number_is_expected_fails)
{
    fixture f;
    setup(&f, shape(8, 16, 64, 0, FP4LR_NVFP4), 31);
    fp4lr_pgen_output_store(&f.t, NULL, 8, f.ref);
    fp4lr_pgen_output_set(&f.t, 6, 9, NAN);
    fp4lr_compare_report rep;
    cr_assert_eq(compare_all(&f, &rep).code, FP4LR_E_MISMATCH);
    cr_assert_eq(rep.failed, 1);
    cr_assert_eq(rep.nan_got_unexpected, 1);
    cr_assert(rep.first[0].m == 6 && rep.first[0].n == 9);
    teardown(&f);
}

/* Every output NaN where numbers are expected: the summary says no finite pair was measured
 * instead of a worst error of 0 at (m = -1, n = -1). */
Test(compare, all_nan_output_has_no_worst_position)
{
    fixture f;
    setup(&f, shape(8, 16, 64, 0, FP4LR_NVFP4), 33);
    for (int m = 0; m < 8; m++)
        for (int n = 0; n < 16; n++)
            fp4lr_pgen_output_set(&f.t, m, n, NAN);
    fp4lr_compare_report rep;
    fp4lr_status st = compare_all(&f, &rep);
    cr_assert_eq(st.code, FP4LR_E_MISMATCH);
    cr_expect(strstr(st.msg, "(of no finite pair)") != NULL, "%s", st.msg);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    cr_assert_not_null(m);
    cr_assert_eq(fp4lr_compare_print(m, &rep).code, FP4LR_OK);
    fclose(m);
    cr_expect(strstr(text, "none measured (no output where both y and ref are finite)") != NULL, "%s", text);
    cr_expect(strstr(text, "m=-1") == NULL, "%s", text);
    free(text);
    teardown(&f);
}

/* A NaN scale makes row 2 NaN in the reference: NaN there passes, a number fails. */
Test(compare, nan_expected_rules)
{
    fixture f;
    setup(&f, shape(8, 16, 64, 16, FP4LR_NVFP4), 32);
    f.t.SFA[fp4lr_sf_offset(2, 1, 4)] = 0x7F;
    reference_into(&f.t, f.ref, f.mag);
    fp4lr_pgen_output_store(&f.t, NULL, 8, f.ref);
    fp4lr_compare_report rep;
    cr_assert_eq(compare_all(&f, &rep).code, FP4LR_OK);
    cr_assert_eq(rep.nan_expected, 16);
    fp4lr_pgen_output_set(&f.t, 2, 4, 1.0);
    cr_assert_eq(compare_all(&f, &rep).code, FP4LR_E_MISMATCH);
    cr_assert_eq(rep.failed, 1);
    cr_assert(rep.first[0].m == 2 && rep.first[0].n == 4 && isnan(rep.first[0].expected));
    teardown(&f);
}

/* The ulp term is one whole ulp of the output type at ref (bf16 at 1: 2^-7). */
Test(compare, one_ulp_at_ref_is_allowed)
{
    const fp4lr_problem p = {.M = 1, .N = 8, .K = 64, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16};
    double ref[8] = {1 + 0.9 * 0x1p-7, 1 + 0.9 * 0x1p-7, 1.5, 1.5, 2, 2, 2, 2}, mag[8] = {0};
    uint16_t Y[8];
    fp4lr_pgen_problem t = {.p = p, .Y = Y};
    t.p.ldY = 8;
    for (int n = 4; n < 8; n++)
        fp4lr_pgen_output_set(&t, 0, n, 2.0);
    fp4lr_pgen_output_set(&t, 0, 0, 1.0);          /* 0.9 ulp away: passes */
    fp4lr_pgen_output_set(&t, 0, 1, 1 - 0x1p-8);   /* 1.4 ulp away: fails */
    fp4lr_pgen_output_set(&t, 0, 2, 1.5 + 0x1p-7); /* exactly 1 ulp: passes */
    fp4lr_pgen_output_set(&t, 0, 3, 1.5 + 0x1p-6); /* 2 ulp: fails */
    fp4lr_compare_report rep;
    cr_assert_eq(fp4lr_compare(&p, Y, NULL, 1, ref, mag, &rep).code, FP4LR_E_MISMATCH);
    cr_assert_eq(rep.failed, 2);
    cr_assert(rep.first[0].n == 1 && rep.first[1].n == 3);
}

/* bf16 overflow: max finite 0x7F7F = 255·2^120, Inf threshold 511·2^119. */
Test(compare, inf_passes_only_where_rounding_overflows)
{
    const fp4lr_problem p = {.M = 1, .N = 8, .K = 64, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16};
    const double thr = 511 * 0x1p119, tol = fp4lr_tol_acc(&p);
    /* ref, mag, y, expected verdict */
    const struct {
        double ref, mag, y;
        int pass;
    } c[8] = {
        {thr, 0, INFINITY, 1},               /* the tie rounds to Inf */
        {thr, 0, -INFINITY, 0},              /* wrong sign */
        {nextafter(thr, 0), 0, INFINITY, 0}, /* rounds to max finite */
        {nextafter(thr, 0), 0, 255 * 0x1p120, 1},
        {thr * 0.999, 2 * thr / tol, INFINITY, 1}, /* within tol_acc·mag of overflowing */
        {1e30, 1e30, INFINITY, 0},
        {-INFINITY, INFINITY, -INFINITY, 1}, /* an infinite input: same Inf only */
        {-INFINITY, INFINITY, 255 * -0x1p120, 0},
    };
    uint16_t Y[8];
    double ref[8], mag[8];
    fp4lr_pgen_problem t = {.p = p, .Y = Y};
    t.p.ldY = 8;
    for (int i = 0; i < 8; i++) {
        ref[i] = c[i].ref, mag[i] = c[i].mag;
        fp4lr_pgen_output_set(&t, 0, i, c[i].y);
    }
    fp4lr_compare_report rep;
    cr_assert_eq(fp4lr_compare(&p, Y, NULL, 1, ref, mag, &rep).code, FP4LR_E_MISMATCH);
    int64_t fails = 0;
    for (int i = 0; i < 8; i++)
        fails += !c[i].pass;
    cr_assert_eq(rep.failed, fails);
    for (int i = 0, k = 0; i < 8; i++)
        if (!c[i].pass)
            cr_assert_eq(rep.first[k++].n, i, "case %d should fail", i);
}

/* All operands zero: ref = mag = 0; y = 0 passes, any value above bf16's smallest
 * spacing fails (err/mag = Inf). */
Test(compare, zero_problem)
{
    fp4lr_pgen_problem t;
    fp4lr_problem p = {.M = 2, .N = 8, .K = 128, .format = FP4LR_MXFP4};
    cr_assert_eq(fp4lr_pgen_alloc(&t, &p), 0);
    double ref[16], mag[16];
    cr_assert_eq(fp4lr_reference(&t.p, &t.a, NULL, 2, 0, ref, mag).code, FP4LR_OK);
    for (int i = 0; i < 16; i++)
        cr_assert(ref[i] == 0 && mag[i] == 0);
    fp4lr_compare_report rep;
    cr_assert_eq(fp4lr_compare(&t.p, t.Y, NULL, 2, ref, mag, &rep).code, FP4LR_OK);
    cr_assert_eq(rep.max_err_over_mag, 0);
    fp4lr_pgen_output_set(&t, 1, 3, 1e-3);
    cr_assert_eq(fp4lr_compare(&t.p, t.Y, NULL, 2, ref, mag, &rep).code, FP4LR_E_MISMATCH);
    cr_assert(isinf(rep.first[0].err_over_mag) && rep.worst_m == 1 && rep.worst_n == 3);
    fp4lr_pgen_free(&t);
}

/* ---- the report ----------------------------------------------------------------------- */

/* 20 planted errors on selected rows: counts, first 16 in scan order with the real
 * row numbers, the worst one located. */
Test(compare, report_counts_coordinates_and_worst)
{
    fixture f;
    setup(&f, shape(64, 32, 128, 0, FP4LR_NVFP4), 41);
    const int64_t rows[] = {60, 2, 33};
    double ref[3 * 32], mag[3 * 32];
    cr_assert_eq(fp4lr_reference(&f.t.p, &f.t.a, rows, 3, 0, ref, mag).code, FP4LR_OK);
    fp4lr_pgen_output_store(&f.t, rows, 3, ref);
    /* 10 errors in row 60 (n = 0, 3, ..., 27), 10 in row 33 (n = 1, 4, ..., 28), each
     * err = k·(mag + |ref|), so err/mag lies in [k, 2k]: k = 1, except k = 3 at row
     * 33, n = 13, the worst */
    for (int e = 0; e < 20; e++) {
        int i = e < 10 ? 0 : 2, n = e < 10 ? 3 * e : 3 * (e - 10) + 1;
        double x = ref[i * 32 + n], g = mag[i * 32 + n];
        fp4lr_pgen_output_set(&f.t, rows[i], n, x + (n == 13 ? 3 : 1) * (g + fabs(x)));
    }
    fp4lr_compare_report rep;
    fp4lr_status s = fp4lr_compare(&f.t.p, f.t.Y, rows, 3, ref, mag, &rep);
    cr_assert_eq(s.code, FP4LR_E_MISMATCH);
    cr_assert_eq(rep.checked, 96);
    cr_assert_eq(rep.failed, 20);
    cr_assert_eq(rep.nfirst, 16);
    for (int k = 0; k < 16; k++) {
        int64_t m = k < 10 ? 60 : 33, n = k < 10 ? 3 * k : 3 * (k - 10) + 1;
        cr_assert(rep.first[k].m == m && rep.first[k].n == n, "first[%d] = (%lld,%lld), want (%lld,%lld)", k,
                  (long long)rep.first[k].m, (long long)rep.first[k].n, (long long)m, (long long)n);
        cr_assert_eq(rep.first[k].err, fabs(rep.first[k].got - rep.first[k].expected));
    }
    cr_assert(rep.worst_m == 33 && rep.worst_n == 13, "worst at (%lld,%lld)", (long long)rep.worst_m,
              (long long)rep.worst_n);
    cr_assert_gt(rep.max_err_over_mag, 2.9);
    cr_assert_gt(rep.mean_err_over_mag, 0);
    cr_assert(strstr(s.msg, "20 of 96") && strstr(s.msg, "m=60, n=0"), "summary: %s", s.msg);
    teardown(&f);
}

Test(compare, print_shows_summary_and_mismatches)
{
    fp4lr_compare_report rep = {
        .checked = 100, .failed = 2, .nfirst = 2, .tol_acc = 1e-6, .worst_m = 4, .worst_n = 5};
    rep.first[0] = (fp4lr_mismatch){3, 5, 1.5, 1.0, 0.5, 2.0, 0.25};
    rep.first[1] = (fp4lr_mismatch){4, 5, NAN, 2.0, NAN, 2.0, NAN};
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    cr_assert(mem);
    cr_assert_eq(fp4lr_compare_print(mem, &rep).code, FP4LR_OK);
    fclose(mem);
    cr_assert(strstr(text, "100 outputs checked, 2 failed"), "%s", text);
    cr_assert(strstr(text, "(m=3, n=5) got 1.5 expected 1"), "%s", text);
    cr_assert(strstr(text, "(m=4, n=5) got nan"), "%s", text);
    free(text);
    cr_assert_str_eq(fp4lr_compare_print(NULL, &rep).rule, "NULL_POINTER");
}

Test(compare, rejects_bad_arguments)
{
    fixture f;
    setup(&f, shape(4, 8, 64, 0, FP4LR_NVFP4), 42);
    fp4lr_compare_report rep;
    const int64_t bad[] = {4};
    cr_assert_str_eq(fp4lr_compare(&f.t.p, f.t.Y, NULL, 4, f.ref, NULL, &rep).rule, "NULL_POINTER");
    cr_assert_str_eq(fp4lr_compare(&f.t.p, f.t.Y, NULL, 4, f.ref, f.mag, NULL).rule, "NULL_POINTER");
    cr_assert_str_eq(fp4lr_compare(&f.t.p, f.t.Y, bad, 1, f.ref, f.mag, &rep).rule, "ROW_RANGE");
    cr_assert_str_eq(fp4lr_compare(&f.t.p, f.t.Y, NULL, 5, f.ref, f.mag, &rep).rule, "NROWS");
    teardown(&f);
}

/* ---- the tolerance model ----------------------------------------------------------------- */

Test(compare, tol_acc_formula)
{
    fp4lr_problem p = {.K = 64, .r = 0};
    cr_assert_eq(fp4lr_tol_acc(&p), 12 * 0x1p-23); /* 4 + 0 + 8 */
    p.K = 12288, p.r = 32;
    cr_assert_eq(fp4lr_tol_acc(&p), 778 * 0x1p-23); /* 768 + 2 + 8 */
    p.K = 2240, p.r = 1024;
    cr_assert_eq(fp4lr_tol_acc(&p), 212 * 0x1p-23); /* 140 + 64 + 8 */
    cr_assert(isnan(fp4lr_tol_acc(NULL)));
}

/* TOLERANCE.md's bounds: over the shape table tol_acc lies in [2^-20, 2^-13], and it
 * grows with K and r. */
Test(compare, tol_acc_within_documented_bounds)
{
    for (int i = 0; i < fp4lr_num_shapes; i++) {
        const fp4lr_shape *s = &fp4lr_shapes[i];
        fp4lr_problem p = {.K = s->K, .r = s->r}, q = p;
        double tol = fp4lr_tol_acc(&p);
        cr_assert(tol >= 0x1p-20 && tol <= 0x1p-13, "%s: tol_acc %.3g", s->name, tol);
        q.K += 64, q.r += 16;
        cr_assert_gt(fp4lr_tol_acc(&q), tol);
    }
}

/* The margin between a planted fault and the tolerance: for each fault, the median
 * over the outputs it touches of |effect| / mag must exceed tol_acc tenfold at
 * K = 3072 (TOLERANCE.md §4 has the table). */
static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1], v[j - 1] = x;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double fault_margin(fixture *f, double *faulty, int column)
{
    const int64_t M = f->t.p.M, N = f->t.p.N;
    double *ratio = malloc(sizeof(double) * (size_t)(M * N));
    int cnt = 0;
    reference_into(&f->t, faulty, faulty + M * N);
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++)
            if ((column < 0 || n == column) && f->t.wc[n] != 0.0f)
                ratio[cnt++] = fabs(faulty[m * N + n] - f->ref[m * N + n]) / f->mag[m * N + n];
    double med = median(ratio, cnt) / fp4lr_tol_acc(&f->t.p);
    free(ratio);
    return med;
}

Test(compare, faults_exceed_tolerance_tenfold_at_k3072)
{
    for (int fmt = FP4LR_NVFP4; fmt <= FP4LR_MXFP4; fmt++) {
        fixture f;
        setup(&f, shape(32, 32, 3072, 32, (fp4lr_format)fmt), 51);
        double *faulty = malloc(sizeof(double) * 32 * 32 * 2);
        const char *name = fp4lr_format_name((fp4lr_format)fmt);

        for (int64_t m = 0; m < 32; m++) /* K-block 7 of 64 dropped */
            memset(f.t.A + m * 1536 + 7 * 32, 0, 32);
        double drop = fault_margin(&f, faulty, -1);
        fp4lr_pgen_fill(&f.t, 51, FP4LR_PGEN_SCALES_REALISTIC);

        const int64_t n = live_column(&f);
        uint8_t *b = band_scale(&f, n), keep = *b;
        double_scale((fp4lr_format)fmt, b);
        double scale = fault_margin(&f, faulty, (int)n);
        *b = keep;

        for (int64_t m = 0; m < 32; m++)
            f.t.L[m * 32 + 5] = 0;
        double low = fault_margin(&f, faulty, -1);

        cr_assert_gt(drop, 10, "%s dropped K-block: median effect/mag = %.1f tol", name, drop);
        cr_assert_gt(scale, 10, "%s doubled scale: median effect/mag = %.1f tol", name, scale);
        cr_assert_gt(low, 10, "%s dropped low-rank column: median effect/mag = %.1f tol", name, low);
        free(faulty);
        teardown(&f);
    }
}

/* ---- bitwise comparison (fp4lr-check --repeat) ------------------------------------ */

Test(compare, bitwise_counts_planted_differences_and_ignores_padding)
{
    fp4lr_problem p = shape(5, 7, 64, 0, FP4LR_NVFP4);
    p.ldY = 8;
    uint16_t a[5 * 8], b[5 * 8];
    for (int i = 0; i < 5 * 8; i++)
        a[i] = b[i] = (uint16_t)(0x3f80 + i);
    int64_t fm, fn;
    cr_expect_eq(fp4lr_compare_bitwise(&p, a, b, &fm, &fn), 0);
    cr_expect(fm == -1 && fn == -1);
    b[1 * 8 + 7] ^= 1; /* padding column: not an output */
    cr_expect_eq(fp4lr_compare_bitwise(&p, a, b, &fm, &fn), 0);
    b[3 * 8 + 2] ^= 0x8000; /* -0 vs +0 style: a sign bit alone is a difference */
    b[4 * 8 + 6] ^= 1;
    cr_expect_eq(fp4lr_compare_bitwise(&p, a, b, &fm, &fn), 2);
    cr_expect(fm == 3 && fn == 2, "first difference at (%lld, %lld)", (long long)fm, (long long)fn);
    p.out = FP4LR_OUT_F32; /* 4-byte outputs: the same buffers hold 5 rows of 4, the flip
                              * in row 4 now in padding column 3 */
    p.N = 3, p.ldY = 4;
    cr_expect_eq(fp4lr_compare_bitwise(&p, a, b, &fm, &fn), 1);
    cr_expect(fm == 3 && fn == 1, "(%lld, %lld)", (long long)fm, (long long)fn);
    cr_expect_eq(fp4lr_compare_bitwise(&p, a, NULL, &fm, &fn), -1);
    p.ldY = 2;
    cr_expect_eq(fp4lr_compare_bitwise(&p, a, b, &fm, &fn), -1);
}
