/* GPU suite: the dense kernels (sm_90a, and sm_100a / sm_100f on a Blackwell part) against
 * the double reference, through fp4lr_gemm, so every case runs unchanged on each architecture.
 *
 * Every case poisons the output (NaN pattern) before the launch, so an output
 * the kernel never writes cannot pass.  The suite proves its own sensitivity:
 * a changed scale byte, a dropped K block of 64 and an unwritten output row or
 * column must each make the comparison fail.  Skips, naming the reason, without
 * an sm_90 or sm_100 GPU. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "devbuf.h"
#include "devproblem.h"
#include "gemm.h"
#include "problem_gen.h"
#include "reference.h"
#include "scale_atom.h"
#include "shapes.h"
#include "support_gpu_case.h"

typedef tsupport_case gcase;

static fp4lr_ctx *gpu_or_skip(void) { return tsupport_gemm_or_skip(FP4LR_FAMILY_DENSE); }

/* A dense case (r = 0, no affine) of the given cluster size. */
static void setup_case(gcase *g, fp4lr_ctx *ctx, int64_t M, int64_t N, int64_t K, fp4lr_format f,
                       uint64_t seed, fp4lr_pgen_scales scales, int64_t rows_wanted, int cluster)
{
    fp4lr_problem p = {.M = M, .N = N, .K = K, .r = 0, .format = f, .out = FP4LR_OUT_BF16};
    fp4lr_plan_opts o = {.cluster = cluster, .tile_m = 128 * cluster};
    tsupport_case_setup(g, ctx, &p, seed, scales, rows_wanted, &o);
}

#define run_case tsupport_case_run
#define compare_case tsupport_case_compare
#define expect_pass tsupport_case_expect_pass
#define expect_fail tsupport_case_expect_fail
#define teardown_case tsupport_case_teardown

static void check_shape(fp4lr_ctx *ctx, int64_t M, int64_t N, int64_t K, fp4lr_format f, uint64_t seed,
                        int64_t rows, int cluster)
{
    gcase g;
    setup_case(&g, ctx, M, N, K, f, seed, FP4LR_PGEN_SCALES_REALISTIC, rows, cluster);
    run_case(&g);
    expect_pass(&g);
    teardown_case(&g);
}

/* ---- edges: M, N not multiples of any tile, K at the minimum and just above ---- */

static const int64_t edge_mn[] = {1, 7, 127, 129, 255, 257, 1000};

static void edges(fp4lr_format f)
{
    fp4lr_ctx *ctx = gpu_or_skip();
    int64_t kmin = fp4lr_format_k_multiple(f);
    uint64_t seed = 100;
    for (size_t i = 0; i < sizeof edge_mn / sizeof edge_mn[0]; i++)
        for (size_t j = 0; j < sizeof edge_mn / sizeof edge_mn[0]; j += 2)
            for (int c = 1; c <= 2; c++)
                check_shape(ctx, edge_mn[i], edge_mn[j], (i + j) % 2 ? kmin : 3 * kmin, f, seed++, 0, c);
    fp4lr_ctx_destroy(ctx);
}

Test(gemm_dense, edges_nvfp4, .timeout = 600) { edges(FP4LR_NVFP4); }
Test(gemm_dense, edges_mxfp4, .timeout = 600) { edges(FP4LR_MXFP4); }

Test(gemm_dense, k_minimum_and_odd_stage_count, .timeout = 300)
{
    fp4lr_ctx *ctx = gpu_or_skip();
    /* NVFP4 K = 64 is half a main stage; 64 * 7 an odd count of half stages. */
    for (int c = 1; c <= 2; c++) {
        check_shape(ctx, 300, 520, 64, FP4LR_NVFP4, 7, 0, c);
        check_shape(ctx, 300, 520, 448, FP4LR_NVFP4, 8, 0, c);
        check_shape(ctx, 300, 520, 128, FP4LR_MXFP4, 9, 0, c);
    }
    fp4lr_ctx_destroy(ctx);
}

/* NVFP4: every ue4m3 scale code.  MXFP4: the ends of the ue8m0 range that Hopper's
 * exact bf16 operands can hold (E = 0, the bf16 subnormal 2^-127, against E = 252;
 * e2m1 x 2^(E-127) overflows bf16 for E >= 253 with |x| >= 2, a documented limit of
 * the sm_90a path; the fp32 sums of the full ue8m0 range overflow on any path). */
Test(gemm_dense, full_scale_range, .timeout = 300)
{
    fp4lr_ctx *ctx = gpu_or_skip();
    gcase g;
    setup_case(&g, ctx, 256, 512, 512, FP4LR_NVFP4, 31, FP4LR_PGEN_SCALES_FULL, 0, 1);
    run_case(&g);
    expect_pass(&g);
    teardown_case(&g);

    setup_case(&g, ctx, 256, 512, 512, FP4LR_MXFP4, 32, FP4LR_PGEN_SCALES_REALISTIC, 0, 2);
    memset(g.host.SFA, 0x00, g.dev.sizes.SFA);
    memset(g.host.SFW, 252, g.dev.sizes.SFW);
    tsupport_case_refresh(&g);
    run_case(&g);
    expect_pass(&g);
    teardown_case(&g);
    fp4lr_ctx_destroy(ctx);
}

/* MXFP4 with small block scales (every ue8m0 code <= 127, as a trained model's): the
 * MXFP4 kernels take their one-multiply path only on such data. */
Test(gemm_dense, mxfp4_small_scales, .timeout = 300)
{
    fp4lr_ctx *ctx = gpu_or_skip();
    gcase g;
    setup_case(&g, ctx, 300, 520, 640, FP4LR_MXFP4, 33, FP4LR_PGEN_SCALES_SMALL, 0, 1);
    run_case(&g);
    expect_pass(&g);
    teardown_case(&g);
    fp4lr_ctx_destroy(ctx);
}

/* ---- the reference shapes that fit the test-time budget (sampled rows) ---- */

Test(gemm_dense, reference_shapes, .timeout = 900)
{
    fp4lr_ctx *ctx = gpu_or_skip();
    for (int s = 0; s < fp4lr_num_shapes; s++) {
        const fp4lr_shape *sh = &fp4lr_shapes[s];
        if (sh->r != 32 && sh->r != 0)
            continue;                 /* the dense kernel ignores r: one row per layer */
        for (int f = 0; f < 2; f++) {
            if (sh->K % fp4lr_format_k_multiple((fp4lr_format)f))
                continue;             /* e.g. SANA K = 2240 is NVFP4 only */
            for (int c = 1; c <= 2; c++)
                check_shape(ctx, sh->M, sh->N, sh->K, (fp4lr_format)f, 1000 + s, 128, c);
        }
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- determinism: two runs, bitwise equal ---- */

Test(gemm_dense, deterministic, .timeout = 300)
{
    fp4lr_ctx *ctx = gpu_or_skip();
    gcase g;
    setup_case(&g, ctx, 1000, 1500, 1024, FP4LR_NVFP4, 77, FP4LR_PGEN_SCALES_REALISTIC, 64, 2);
    run_case(&g);
    void *first = malloc(g.dev.sizes.Y);
    cr_assert(first);
    memcpy(first, g.host.Y, g.dev.sizes.Y);
    run_case(&g);
    cr_expect_eq(memcmp(first, g.host.Y, g.dev.sizes.Y), 0, "two runs differ");
    free(first);
    teardown_case(&g);
    fp4lr_ctx_destroy(ctx);
}

/* ---- NaN scales propagate exactly to the outputs they touch ---- */

Test(gemm_dense, nan_scale_propagates, .timeout = 300)
{
    fp4lr_ctx *ctx = gpu_or_skip();
    for (int f = 0; f < 2; f++) {
        gcase g;
        setup_case(&g, ctx, 200, 300, 512, (fp4lr_format)f, 55 + f, FP4LR_PGEN_SCALES_REALISTIC, 0, 1 + f);
        int64_t kv = g.host.p.K / fp4lr_format_block((fp4lr_format)f);
        uint8_t nan = f == FP4LR_NVFP4 ? 0x7F : 0xFF;
        g.host.SFA[fp4lr_sf_offset(37, 3, kv)] = nan;  /* row 37 of the output */
        g.host.SFW[fp4lr_sf_offset(201, 5, kv)] = nan; /* column 201 */
        tsupport_case_refresh(&g);
        run_case(&g);
        expect_pass(&g);
        /* and the NaNs are exactly row 37 and column 201 */
        uint16_t *y = g.host.Y;
        int64_t nans = 0;
        for (int64_t m = 0; m < 200; m++)
            for (int64_t n = 0; n < 300; n++) {
                int is_nan = (y[m * g.host.p.ldY + n] & 0x7FFF) > 0x7F80;
                nans += is_nan;
                cr_expect_eq(is_nan, m == 37 || n == 201, "NaN at (%lld,%lld)", (long long)m, (long long)n);
            }
        cr_expect_eq(nans, 300 + 200 - 1);
        teardown_case(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- the suite's sensitivity: planted faults must fail ---- */


Test(gemm_dense, fault_injection_is_caught, .timeout = 300)
{
    fp4lr_ctx *ctx = gpu_or_skip();
    for (int f = 0; f < 2; f++) {
        fp4lr_format fmt = (fp4lr_format)f;
        gcase g;
        setup_case(&g, ctx, 300, 400, 1024, fmt, 900 + f, FP4LR_PGEN_SCALES_REALISTIC, 0, 1 + f);
        run_case(&g);
        expect_pass(&g); /* the unmodified run passes */

        /* one scale byte changed (by one code) */
        tsupport_case_expect_sfw_flip_fails(&g, 123, 9);

        /* one K block of 64 dropped (zeroed in A) */
        tsupport_case_expect_kblock_drop_fails(&g, 0, 128 / 2 * 3);

        /* one output row, then one output column, left unwritten (poison kept) */
        tsupport_case_expect_unwritten_fails(&g, 250, 399);
        teardown_case(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- every forced stage count the build provides agrees with the reference ---- */

Test(gemm_dense, forced_stage_counts, .timeout = 300)
{
    fp4lr_ctx *ctx = gpu_or_skip();
    /* sm_90a builds NVFP4 1-CTA with 1..4 main stages (the stage sweep); sm_100a only the
     * solver's count, 3 */
    const int lo = tsupport_ctx_is_sm90a(ctx) ? 1 : 3, hi = tsupport_ctx_is_sm90a(ctx) ? 4 : 3;
    for (int s = lo; s <= hi; s++) {
        gcase g;
        setup_case(&g, ctx, 520, 700, 1024, FP4LR_NVFP4, 300 + s, FP4LR_PGEN_SCALES_REALISTIC, 0, 1);
        fp4lr_plan_opts o = {.force_main_stages = s};
        fp4lr_status st = fp4lr_runtime_plan(&g.rt, &g.host.p, &o, &g.plan);
        cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
        cr_assert_eq(g.plan.budget.stages_main, s);
        run_case(&g);
        expect_pass(&g);
        teardown_case(&g);
    }
    fp4lr_ctx_destroy(ctx);
}
