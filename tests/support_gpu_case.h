/* GPU test support: one problem run end to end on the device.
 *
 * A case generates a problem's inputs (bench/problem_gen), computes the double
 * reference of the selected rows, plans it for the device, uploads it, and runs
 * the kernel on a NaN-poisoned output (so an unwritten output cannot pass).
 * Shared by the GPU suites; symbols prefixed tsupport_. */
#ifndef FP4LR_TESTS_SUPPORT_GPU_CASE_H
#define FP4LR_TESTS_SUPPORT_GPU_CASE_H

#include "compare.h"
#include "devproblem.h"
#include "gemm.h"
#include "problem_gen.h"

typedef struct tsupport_case {
    fp4lr_ctx *ctx;
    fp4lr_runtime rt;
    fp4lr_plan plan;
    fp4lr_pgen_problem host;
    fp4lr_devproblem dev;
    int64_t *rows;
    int64_t nrows;
    double *ref, *mag;
    CUstream stream; /* where tsupport_case_run launches: NULL (the legacy stream) unless a test sets one */
} tsupport_case;

/* The device context when fp4lr has kernels of `family` for it (both families: sm_90a,
 * sm_100a and the sm_100f family target); otherwise the test skips, naming why.  The GPU
 * suites are written against fp4lr_gemm, so the same cases run on every architecture. */
fp4lr_ctx *tsupport_gemm_or_skip(fp4lr_family family);
/* 1 when the context's device runs the sm_90a kernels. */
int tsupport_ctx_is_sm90a(const fp4lr_ctx *ctx);
/* The device context when it runs the sm_90a kernels; otherwise the test skips with `why`. */
fp4lr_ctx *tsupport_sm90a_or_skip(const char *why);

/* p: shapes, rank, format, has_wc/has_beta (ldY 0 pads rows of Y to 16 bytes).  rows_wanted
 * 0 = every row.  opts may be NULL. */
void tsupport_case_setup(tsupport_case *g, fp4lr_ctx *ctx, const fp4lr_problem *p, uint64_t seed,
                         fp4lr_pgen_scales scales, int64_t rows_wanted, const fp4lr_plan_opts *opts);
/* After editing host inputs: recompute the reference and upload them again. */
void tsupport_case_refresh(tsupport_case *g);
/* Poisons Y, launches, waits, downloads into host.Y. */
void tsupport_case_run(tsupport_case *g);
fp4lr_status tsupport_case_compare(tsupport_case *g, fp4lr_compare_report *rep);
/* Criterion expectations on the comparison (the report is printed on a failure). */
void tsupport_case_expect_pass(tsupport_case *g);
void tsupport_case_expect_fail(tsupport_case *g, const char *what);
/* Planted fault: flips the low bit of the W scale byte of row n, scale block kb on the
 * device, runs, expects the comparison to fail, and restores the byte. */
void tsupport_case_expect_sfw_flip_fails(tsupport_case *g, int64_t n, int64_t kb);
/* The same for the A scale byte of row m, block kb. */
void tsupport_case_expect_sfa_flip_fails(tsupport_case *g, int64_t m, int64_t kb);
/* Planted fault: zeroes 32 bytes (one K block of 64) at byte_off of every row of A (w_side
 * 0) or W (1) on the device, runs, expects the comparison to fail, and restores them. */
void tsupport_case_expect_kblock_drop_fails(tsupport_case *g, int w_side, int64_t byte_off);
/* Planted fault (fused): zeroes rank `col` of U on the device, runs, expects a failure,
 * restores U. */
void tsupport_case_expect_u_column_drop_fails(tsupport_case *g, int64_t col);
/* Poisoned outputs: runs, overwrites output row `row` with NaN (the poison) and expects a
 * failure; runs again and does the same with column `col` (bf16 output). */
void tsupport_case_expect_unwritten_fails(tsupport_case *g, int64_t row, int64_t col);
/* Runs the case n more times (each into a poisoned Y) and expects every Y bit for bit equal to
 * the first of them: a race in a kernel shows as launches that differ (fp4lr-check --repeat
 * is the same check on the command line).  Leaves the last launch's Y in g->host.Y. */
void tsupport_case_expect_stable(tsupport_case *g, int n);
/* tsupport_case_expect_stable with the runtime's prepared-W workspace (the _x kernels'
 * converted operand, rt.wprep) filled with 0xFF bytes (NaN in f16 and bf16) before every
 * launch after the first: a bulk copy of a chunk that this launch has not converted yet
 * brings NaN into Y.  For plans that convert inside the kernel (or prepare W). */
void tsupport_case_expect_stable_stale_wp(tsupport_case *g, int n);
/* The same launches; returns how many differed (a planted fault must make some differ). */
int tsupport_case_unstable_stale_wp(tsupport_case *g, int n);
/* Loads the case's kernels from `dir` from now on (a fresh runtime; FP4LR_KERNEL_DIR is set
 * to dir in this test process, since it overrides a caller's directory). */
void tsupport_case_use_kernel_dir(tsupport_case *g, const char *dir);
/* The swapped plans' ragged edges (tests/test_gemm_swap*.c): M in {1, 127, 257, 1000}, N in
 * {7, 255, 1000, 1600}, K at the format's minimum or 3 times it, each planned with `opts` (swap
 * on; a tile_n it sets is asserted, and w_prep on must give the prepared kernels), run and
 * compared with the reference.  Seeds from `seed` on. */
void tsupport_swap_edges(fp4lr_ctx *ctx, fp4lr_format f, const fp4lr_plan_opts *opts, uint64_t seed);
/* The narrow swapped tile's epilogue across tiles (tests/test_gemm_swap*.c): the kernel's
 * problem 4096 / 128 x 1600 / 160 = 320 narrow tiles, several a CTA, data-parallel, K at the
 * format's minimum (a short K loop between two epilogues), rank r with the affine when r > 0,
 * planned with `opts` (swap on, tile_n 160 asserted); checked against the reference and bitwise
 * stable over 30 launches. */
void tsupport_swap_narrow_back_to_back(fp4lr_ctx *ctx, fp4lr_format f, int64_t r, const fp4lr_plan_opts *opts,
                                       uint64_t seed);
/* FP4LR_KERNEL_DIR as the test found it (a copy, or NULL when unset), and setting it back
 * (freeing the copy), around tsupport_case_use_kernel_dir. */
char *tsupport_kernel_dir_save(void);
void tsupport_kernel_dir_restore(char *saved);
/* Plants a NaN scale (0x7F NVFP4, 0xFF MXFP4) in W row n, scale block kb, uploads, runs, expects
 * the comparison to pass (the reference has the NaN too) and NaN in Y exactly in column n of
 * every row (bf16 output); restores nothing (the case's inputs keep the NaN). */
void tsupport_case_expect_nan_column(tsupport_case *g, int64_t n, int64_t kb);
/* Fused cases: plants NaN in wc[col] and in L (row `row`, rank 5), uploads, runs, expects the
 * comparison to pass and NaN in Y exactly in that row and that column (bf16 output). */
void tsupport_case_expect_nan_cross(tsupport_case *g, int64_t row, int64_t col);
/* After a run: expects every element of Y's rows past column N (ldY > N) to still hold the
 * poison tsupport_case_run wrote (bf16 output). */
void tsupport_case_expect_padding_untouched(tsupport_case *g);
void tsupport_case_teardown(tsupport_case *g);

#endif
