/* The dense double-precision reference of the whole operator (OPERATOR.md §1, §5)
 * and the choice of rows to validate on a large problem.
 *
 * For every requested output (m, n):
 *
 *     main = Σ_k deq(A)[m,k] · deq(W)[n,k]        every deq and every product exact in double
 *     low  = Σ_j L[m,j] · U[n,j]                  bf16 operands, exact products
 *     ref  = wc[n] · (alpha · main) + beta[n] + low        (wc absent = 1, beta absent = 0)
 *     mag  = |alpha · wc[n]| · Σ_k |deq(A)·deq(W)| + |beta[n]| + Σ_j |L·U|
 *
 * Each sum runs in ascending k (or j) with one double accumulator, so the result is
 * bitwise the same as a naive triple loop in that order and independent of the thread
 * count.  NaN follows IEEE arithmetic of this formula literally: a NaN scale makes every
 * deq of its block NaN (0 · NaN = NaN, so an all-zero block included), and a NaN
 * product poisons its whole sum.  Hence a NaN in SFA[m,·] or L[m,·] makes row m NaN,
 * one in SFW[n,·], U[n,·], wc[n] or beta[n] makes column n NaN, and a NaN alpha makes
 * everything NaN; with finite alpha, wc and beta, mag is NaN exactly where ref is.
 * A ue4m3 scale byte with bit 7 set is decoded as the e4m3 hardware does (negative),
 * not rejected. */
#ifndef FP4LR_REFERENCE_H
#define FP4LR_REFERENCE_H

#include <stdint.h>

#include "problem.h"
#include "status.h"

/* Computes ref (and mag when non-NULL) for the output rows `rows[0..nrows)`, each a
 * row index in [0, M) (any order, repeats allowed); rows == NULL means every row,
 * and then nrows must equal M.  ref and mag are nrows x N, row-major, leading
 * dimension N: ref[i*N + n] belongs to output (rows[i], n).  `host` holds host
 * pointers in the OPERATOR.md §2 layouts; its Y is not used.  nthreads = 0 uses every
 * online CPU.  Rules: those of fp4lr_problem_validate and fp4lr_rows_validate,
 * NULL_POINTER (an operand the problem needs, or ref), THREADS (nthreads < 0);
 * FP4LR_E_NOMEM when the work buffers cannot be allocated.
 *
 * Thread model: two phases over one pool of nthreads threads, the caller's included.
 * Phase 1 dequantizes each requested A row and every W row once into shared float
 * buffers (exact, see reference.c) and converts L and U; phase 2 hands out (row block,
 * column block) work items through an atomic counter, each item writing only its own
 * part of ref and mag.  The buffers are read-only in phase 2 and nothing is written
 * twice, so no locks are needed.  A thread that cannot be created only costs speed:
 * the threads that did start finish every item.  Work buffers: (nrows + N) x (K + r)
 * floats. */
fp4lr_status fp4lr_reference(const fp4lr_problem *p, const fp4lr_args *host, const int64_t *rows,
                             int64_t nrows, int nthreads, double *ref, double *mag);

/* Checks a row selection as fp4lr_reference and fp4lr_compare take it: rows == NULL
 * needs nrows == M, otherwise nrows >= 1 and every rows[i] in [0, M).  Rules: NROWS,
 * ROW_RANGE. */
fp4lr_status fp4lr_rows_validate(const fp4lr_problem *p, const int64_t *rows, int64_t nrows);

/* The fixed rows every sample contains, at most: 0, 1, M-2, M-1 and the tile edges
 * 63, 64, 127, 128 and the first row of the last 64- and 128-row tile and the row
 * before each. */
#define FP4LR_SAMPLE_FIXED_MAX 12

/* Chooses rows to validate on a large problem: the fixed rows above (those < M) plus
 * rows drawn with a seeded generator until there are `want`, sorted ascending and
 * unique.  When want >= M every row is returned (0, 1, ..., M-1).  `rows` must hold
 * min(want, M) entries; *nrows gets that count.  Rules: NULL_POINTER, M_POSITIVE,
 * SAMPLE_WANT (want < M needs want >= FP4LR_SAMPLE_FIXED_MAX). */
fp4lr_status fp4lr_sample_rows(int64_t M, int64_t want, uint64_t seed, int64_t *rows, int64_t *nrows);

#endif
