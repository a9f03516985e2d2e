/* Output comparison against the reference and the tolerance model (compare.h;
 * derivation in host/TOLERANCE.md). */
#include "compare.h"

#include <math.h>
#include <string.h>

#include "bf16.h"
#include "reference.h"

double fp4lr_tol_acc(const fp4lr_problem *p)
{
    if (!p || p->K < 0 || p->r < 0)
        return NAN;
    int64_t steps = (p->K + FP4LR_TOL_K_STEP - 1) / FP4LR_TOL_K_STEP +
                    (p->r + FP4LR_TOL_R_STEP - 1) / FP4LR_TOL_R_STEP + FP4LR_TOL_FIXED;
    return (double)steps * FP4LR_TOL_UNIT;
}

/* One output element as a double (exact for every output type). */
static double load_out(fp4lr_out_type t, const void *Y, int64_t at)
{
    switch (t) {
    case FP4LR_OUT_BF16: return fp4lr_bf16_to_float(((const uint16_t *)Y)[at]);
    case FP4LR_OUT_F16: return fp4lr_f16_to_float(((const uint16_t *)Y)[at]);
    case FP4LR_OUT_F32: break;
    }
    return ((const float *)Y)[at];
}

static double ulp_out(fp4lr_out_type t, double x)
{
    switch (t) {
    case FP4LR_OUT_BF16: return fp4lr_bf16_ulp(x);
    case FP4LR_OUT_F16: return fp4lr_f16_ulp(x);
    case FP4LR_OUT_F32: break;
    }
    return fp4lr_f32_ulp(x);
}

/* The smallest magnitude that round-to-nearest-even takes to Inf: the largest
 * finite value plus half its ulp (the tie goes to Inf, whose neighbour below has an
 * odd significand).  bf16: 255·2^120 + 2^119; fp16: 65504 + 16; fp32: (2^24-1)·2^104
 * + 2^103. */
static double overflow_threshold(fp4lr_out_type t)
{
    switch (t) {
    case FP4LR_OUT_BF16: return 511.0 * 0x1p119;
    case FP4LR_OUT_F16: return 65520.0;
    case FP4LR_OUT_F32: break;
    }
    return 33554431.0 * 0x1p103;
}

/* Verdict for one output; *err is |y - ref| (NaN/Inf for special values). */
static int passes(fp4lr_out_type t, double y, double ref, double mag, double tol, double *err)
{
    *err = fabs(y - ref);
    if (isnan(ref) || isnan(y))
        return isnan(ref) && isnan(y);
    if (isinf(ref))
        return y == ref;
    if (isinf(y))
        return signbit(y) == signbit(ref) && fabs(ref) + tol * mag >= overflow_threshold(t);
    return *err <= ulp_out(t, ref) + tol * mag;
}

static double ratio(double err, double mag)
{
    if (mag > 0)
        return err / mag;
    return err == 0 ? 0.0 : INFINITY;
}

static void report_init(fp4lr_compare_report *rep, double tol)
{
    memset(rep, 0, sizeof *rep);
    rep->worst_m = rep->worst_n = -1;
    rep->tol_acc = tol;
}

static void note_failure(fp4lr_compare_report *rep, int64_t m, int64_t n, double y, double ref, double err,
                         double mag)
{
    rep->failed++;
    if (rep->nfirst < FP4LR_COMPARE_FIRST)
        rep->first[rep->nfirst++] = (fp4lr_mismatch){m, n, y, ref, err, mag, ratio(err, mag)};
}

fp4lr_status fp4lr_compare(const fp4lr_problem *p, const void *Y, const int64_t *rows, int64_t nrows,
                           const double *ref, const double *mag, fp4lr_compare_report *rep)
{
    if (!p || !Y || !ref || !mag || !rep)
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER",
                          "compare: problem, Y, ref, mag and report are required");
    fp4lr_problem q = *p;
    fp4lr_problem_resolve(&q);
    FP4LR_TRY(fp4lr_problem_validate(&q));
    FP4LR_TRY(fp4lr_rows_validate(&q, rows, nrows));

    const double tol = fp4lr_tol_acc(&q);
    const int64_t N = q.N;
    double sum_ratio = 0.0;
    int64_t finite_ratios = 0;
    report_init(rep, tol);

    for (int64_t i = 0; i < nrows; i++) {
        const int64_t m = rows ? rows[i] : i;
        for (int64_t n = 0; n < N; n++) {
            double y = load_out(q.out, Y, m * q.ldY + n), r = ref[i * N + n], g = mag[i * N + n], err;
            rep->checked++;
            rep->nan_expected += isnan(r) != 0;
            rep->nan_got_unexpected += isnan(y) && !isnan(r);
            if (!passes(q.out, y, r, g, tol, &err))
                note_failure(rep, m, n, y, r, err, g);
            if (!isfinite(y) || !isfinite(r))
                continue;
            double e_m = ratio(err, g);
            if (err > rep->max_err)
                rep->max_err = err;
            if (e_m > rep->max_err_over_mag || rep->worst_m < 0) {
                rep->max_err_over_mag = e_m;
                rep->worst_m = m, rep->worst_n = n;
            }
            if (isfinite(e_m))
                sum_ratio += e_m, finite_ratios++;
        }
    }
    rep->mean_err_over_mag = finite_ratios ? sum_ratio / (double)finite_ratios : 0.0;

    if (rep->failed == 0)
        return fp4lr_ok();
    const fp4lr_mismatch *f = &rep->first[0];
    return fp4lr_fail(FP4LR_E_MISMATCH, "TOLERANCE",
                      "%lld of %lld outputs fail |y-ref| <= ulp_out(ref) + tol_acc*mag (tol_acc %.3g); "
                      "first at (m=%lld, n=%lld): got %.9g, expected %.9g, err/mag %.3g; "
                      "%lld NaN where a number was expected; max err/mag %.3g%s",
                      (long long)rep->failed, (long long)rep->checked, tol, (long long)f->m, (long long)f->n,
                      f->got, f->expected, f->err_over_mag, (long long)rep->nan_got_unexpected,
                      rep->max_err_over_mag, rep->worst_m < 0 ? " (of no finite pair)" : "");
}

fp4lr_status fp4lr_compare_print(FILE *f, const fp4lr_compare_report *rep)
{
    if (!f || !rep)
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER", "compare_print: stream and report are required");
    fprintf(f,
            "compare: %lld outputs checked, %lld failed (pass: |y-ref| <= ulp_out(ref) + tol_acc*mag, "
            "tol_acc %.4g)\n",
            (long long)rep->checked, (long long)rep->failed, rep->tol_acc);
    fprintf(f, "  NaN expected %lld, NaN where a number was expected %lld\n", (long long)rep->nan_expected,
            (long long)rep->nan_got_unexpected);
    if (rep->worst_m < 0) /* no output where both y and ref are finite */
        fprintf(f, "  max |y-ref|: none measured (no output where both y and ref are finite)\n");
    else
        fprintf(f, "  max |y-ref| %.6g, max |y-ref|/mag %.6g at (m=%lld, n=%lld), mean |y-ref|/mag %.6g\n",
                rep->max_err, rep->max_err_over_mag, (long long)rep->worst_m, (long long)rep->worst_n,
                rep->mean_err_over_mag);
    if (rep->nfirst > 0)
        fprintf(f, "  first %d mismatches:\n", rep->nfirst);
    for (int i = 0; i < rep->nfirst; i++) {
        const fp4lr_mismatch *x = &rep->first[i];
        fprintf(f, "    (m=%lld, n=%lld) got %.9g expected %.9g err %.6g mag %.6g err/mag %.6g\n",
                (long long)x->m, (long long)x->n, x->got, x->expected, x->err, x->mag, x->err_over_mag);
    }
    if (ferror(f))
        return fp4lr_fail(FP4LR_E_IO, "WRITE", "compare_print: the stream reported a write error");
    return fp4lr_ok();
}

int64_t fp4lr_compare_bitwise(const fp4lr_problem *p, const void *a, const void *b, int64_t *first_m,
                              int64_t *first_n)
{
    if (first_m)
        *first_m = -1;
    if (first_n)
        *first_n = -1;
    if (!p || !a || !b || !first_m || !first_n || p->M < 0 || p->N < 0 || p->ldY < p->N)
        return -1;
    const size_t ob = (size_t)fp4lr_out_bytes(p->out), row = (size_t)p->ldY * ob;
    int64_t diff = 0;
    for (int64_t m = 0; m < p->M; m++) {
        const uint8_t *ra = (const uint8_t *)a + (size_t)m * row, *rb = (const uint8_t *)b + (size_t)m * row;
        if (!memcmp(ra, rb, (size_t)p->N * ob))
            continue;
        for (int64_t n = 0; n < p->N; n++)
            if (memcmp(ra + (size_t)n * ob, rb + (size_t)n * ob, ob) && diff++ == 0)
                *first_m = m, *first_n = n;
    }
    return diff;
}
