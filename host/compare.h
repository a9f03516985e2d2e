/* The comparison of a kernel's output with the reference, and the tolerance model
 * (OPERATOR.md §5; the derivation is host/TOLERANCE.md).
 *
 * Pass rule for one output y against ref = fp4lr_reference's value and its mag:
 *
 *     |y - ref| <= ulp_out(ref) + tol_acc · mag
 *
 * ulp_out is one unit in the last place of the output type at ref (layouts/bf16.h).
 * Special values:
 *   - ref NaN: passes only when y is NaN; y NaN passes only when ref is NaN;
 *   - ref ±Inf (an infinite wc, beta or alpha): passes only when y is the same Inf;
 *   - y ±Inf with ref finite: passes only when the output type's round-to-nearest-even
 *     of some value within tol_acc · mag of ref overflows to that same Inf, i.e.
 *     sign(y) = sign(ref) and |ref| + tol_acc · mag >= the overflow threshold
 *     (max finite + half its ulp); with mag = 0 that is exactly "round_out(ref)
 *     overflows to y". */
#ifndef FP4LR_COMPARE_H
#define FP4LR_COMPARE_H

#include <stdint.h>
#include <stdio.h>

#include "problem.h"
#include "status.h"

/* tol_acc(K, r) = (ceil(K / 16) + ceil(r / 16) + 8) · 2^-23: one fp32 rounding
 * (truncation-sized, 2^-23) per 16-deep tensor-core step of the main and low-rank
 * chains, plus 8 for the affine and the hand-offs between them (TOLERANCE.md). */
#define FP4LR_TOL_K_STEP 16
#define FP4LR_TOL_R_STEP 16
#define FP4LR_TOL_FIXED 8
#define FP4LR_TOL_UNIT 0x1p-23

/* tol_acc for the problem's K and r; NaN when p is NULL or K, r are negative. */
double fp4lr_tol_acc(const fp4lr_problem *p);

/* One failing output: its coordinates in the full output, the values, the error
 * |got - expected| (NaN or Inf for a special-value failure) and err / mag. */
typedef struct fp4lr_mismatch {
    int64_t m, n;
    double got, expected, err, mag, err_over_mag;
} fp4lr_mismatch;

#define FP4LR_COMPARE_FIRST 16

/* Statistics of one comparison.  err and err_over_mag cover the outputs where both
 * y and ref are finite (err / mag = 0 when both are 0, +Inf when only mag is 0);
 * mean_err_over_mag averages the finite ratios.  (worst_m, worst_n) is the first
 * output with the largest err_over_mag (-1, -1 when none was finite).  first[] holds
 * the first nfirst failures in scan order (rows in the given order, then n). */
typedef struct fp4lr_compare_report {
    int64_t checked, failed, nan_expected, nan_got_unexpected;
    double max_err, max_err_over_mag, mean_err_over_mag;
    int64_t worst_m, worst_n;
    fp4lr_mismatch first[FP4LR_COMPARE_FIRST];
    int nfirst;
    double tol_acc;
} fp4lr_compare_report;

/* Compares the rows `rows[0..nrows)` of Y (a host copy of the whole output: M rows,
 * leading dimension ldY, the problem's output type) with ref and mag (nrows x N,
 * leading dimension N, as fp4lr_reference returns them for the same rows; rows ==
 * NULL means every row and nrows = M).  Fills *rep and returns FP4LR_OK when every
 * output passes, FP4LR_E_MISMATCH with rule "TOLERANCE" and a one-line summary
 * otherwise.  Other rules: the problem's, NULL_POINTER, NROWS, ROW_RANGE. */
fp4lr_status fp4lr_compare(const fp4lr_problem *p, const void *Y, const int64_t *rows, int64_t nrows,
                           const double *ref, const double *mag, fp4lr_compare_report *rep);

/* Bitwise comparison of two host copies of a whole output (M rows of N outputs, leading
 * dimension ldY, the problem's output type; the padding columns N..ldY-1 are ignored): the
 * number of outputs whose bits differ, and the first of them in row-major order in
 * (*first_m, *first_n) (-1, -1 when none).  -1 when an argument is NULL or the shape is
 * not a valid problem's. */
int64_t fp4lr_compare_bitwise(const fp4lr_problem *p, const void *a, const void *b, int64_t *first_m,
                              int64_t *first_n);

/* Prints the report: the summary counts and statistics, then the first mismatches
 * with coordinates, got, expected, error and error/mag.  FP4LR_E_IO (rule "WRITE")
 * when the stream reports an error. */
fp4lr_status fp4lr_compare_print(FILE *f, const fp4lr_compare_report *rep);

#endif
