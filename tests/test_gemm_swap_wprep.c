/* GPU suite: the swapped prepared plan (plan.h: swap on with w_prep on; the _w<n>_yt kernels
 * compute Y^T = W.A^T from A prepared by its own launch, and are launched as that launch's
 * programmatic dependent unless pdl is off), on both tile widths (256 and the narrow 160).
 * Ragged edges and both formats against the
 * double reference, the SANA shapes with whole tiles and stream-K, the fused family (every
 * rank, the affine on and off), a padded Y left untouched, bitwise agreement of the
 * dependent launch with the plain one and stability with the prepared operand poisoned
 * before every launch, and the planted faults that prove the suite can fail: a scale byte of
 * either operand, a dropped K block, a dropped low-rank column, unwritten outputs, and a
 * kernel whose W producer does not wait for the preparation (FP4LR_GEN_EXPERIMENT=nogdwait),
 * which the poisoned operand must catch.  Skips without an sm_90a GPU. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "support_gpu_case.h"

typedef tsupport_case gcase;

static fp4lr_ctx *sm90a_or_skip(void) { return tsupport_sm90a_or_skip("the _w<n>_yt kernels are sm_90a kernels"); }

/* The tile width the setups below ask (0: AUTO's); the tests run with 256 and 160 in turn. */
static int tile_n;
static const int widths[] = {FP4LR_SM90A_TILE_N, FP4LR_SM90A_TILE_N_NARROW};

static void setup(gcase *g, fp4lr_ctx *ctx, int64_t M, int64_t N, int64_t K, int64_t r, int affine, int64_t ldY,
                  fp4lr_format f, uint64_t seed, int64_t rows, fp4lr_schedule sch, fp4lr_pdl pdl)
{
    fp4lr_problem p = {.M = M, .N = N, .K = K, .r = r, .format = f, .out = FP4LR_OUT_BF16, .ldY = ldY,
                       .has_wc = affine, .has_beta = affine};
    fp4lr_plan_opts o = {.swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_ON, .schedule = sch, .pdl = pdl,
                         .tile_n = tile_n};
    tsupport_case_setup(g, ctx, &p, seed, FP4LR_PGEN_SCALES_REALISTIC, rows, &o);
    cr_assert(g->plan.swap_ab && g->plan.w_prep && !g->plan.w_inline, "%lld x %lld x %lld: %s is not swapped prepared",
              (long long)M, (long long)N, (long long)K, g->plan.entry);
    cr_assert_eq(g->plan.pdl, pdl != FP4LR_PDL_OFF, "%s", g->plan.entry);
    if (tile_n)
        cr_assert_eq(g->plan.tile_n, tile_n, "%s", g->plan.entry);
}

/* ---- edges: M and N not multiples of the tile, K at the minimum and above, both launches ---- */

static void edges(fp4lr_format f, int width)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    for (int pdl = 0; pdl < 2; pdl++) { /* as the preparation's dependent, then after it */
        const fp4lr_plan_opts o = {.swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_ON, .tile_n = width,
                                   .pdl = pdl ? FP4LR_PDL_OFF : FP4LR_PDL_AUTO};
        tsupport_swap_edges(ctx, f, &o, 1100 + 100 * (uint64_t)pdl);
    }
    fp4lr_ctx_destroy(ctx);
}

Test(gemm_swap_wprep, edges_nvfp4, .timeout = 600) { edges(FP4LR_NVFP4, FP4LR_SM90A_TILE_N); }
Test(gemm_swap_wprep, edges_mxfp4, .timeout = 600) { edges(FP4LR_MXFP4, FP4LR_SM90A_TILE_N); }
Test(gemm_swap_wprep, edges_nvfp4_narrow, .timeout = 600) { edges(FP4LR_NVFP4, FP4LR_SM90A_TILE_N_NARROW); }
Test(gemm_swap_wprep, edges_mxfp4_narrow, .timeout = 600) { edges(FP4LR_MXFP4, FP4LR_SM90A_TILE_N_NARROW); }

/* ---- SANA's shapes (M = 1024), whole tiles and stream-K; the width AUTO's rule gives (sana-out
 * on 132 SMs: 160) ---- */

Test(gemm_swap_wprep, sana_shapes, .timeout = 600)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    tile_n = 0; /* AUTO's width */
    static const int64_t shapes[][3] = {{1024, 6912, 2240}, {1024, 2240, 2304}, {1024, 11200, 2240}};
    uint64_t seed = 1150;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int f = 0; f < 2; f++)
            for (int sch = FP4LR_SCHEDULE_DP; sch <= FP4LR_SCHEDULE_SK; sch++) {
                const fp4lr_format fmt = f ? FP4LR_MXFP4 : FP4LR_NVFP4;
                if (shapes[i][2] % fp4lr_format_k_multiple(fmt))
                    continue;
                gcase g;
                setup(&g, ctx, shapes[i][0], shapes[i][1], shapes[i][2], 0, 0, 0, fmt, seed++, 96,
                      (fp4lr_schedule)sch, FP4LR_PDL_AUTO);
                const fp4lr_problem kp = fp4lr_problem_swapped(&g.plan.problem);
                cr_expect_eq(g.plan.tile_n, fp4lr_sm90a_narrow_fits(&kp, ctx->sm_count) ? 160 : 256, "%s on %d SMs",
                             g.plan.entry, ctx->sm_count);
                tsupport_case_run(&g);
                tsupport_case_expect_pass(&g);
                tsupport_case_teardown(&g);
            }
    fp4lr_ctx_destroy(ctx);
}

/* ---- the fused family: every rank, the affine on and off, ragged N (1700: Y staged) ---- */

Test(gemm_swap_wprep, fused_ranks_and_affine, .timeout = 600)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    static const int64_t ranks[] = {0, 16, 32, 128, 1024};
    uint64_t seed = 1200;
    for (int w = 0; w < 2; w++) {
        tile_n = widths[w];
        for (int f = 0; f < 2; f++)
            for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++)
                for (int affine = 0; affine < 2; affine++) {
                    if (ranks[i] == 0 && !affine)
                        continue; /* the dense family */
                    gcase g;
                    setup(&g, ctx, 300, affine ? 1700 : 1600, 512, ranks[i], affine, 0, (fp4lr_format)f, seed++, 0,
                          i % 2 ? FP4LR_SCHEDULE_SK : FP4LR_SCHEDULE_AUTO, FP4LR_PDL_AUTO);
                    cr_expect_eq(g.plan.family, FP4LR_FAMILY_FUSED);
                    tsupport_case_run(&g);
                    tsupport_case_expect_pass(&g);
                    tsupport_case_teardown(&g);
                }
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- a padded Y (ldY > N): every output right, the padding never written ---- */

Test(gemm_swap_wprep, padded_y_is_left_alone, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    for (int f = 0; f < 4; f++) {
        tile_n = widths[f / 2];
        gcase g;
        setup(&g, ctx, 300, 1700, 512, 32, 1, 1736, f % 2 ? FP4LR_MXFP4 : FP4LR_NVFP4, 1250 + f, 0,
              FP4LR_SCHEDULE_SK, FP4LR_PDL_AUTO);
        tsupport_case_run(&g);
        tsupport_case_expect_pass(&g);
        tsupport_case_expect_padding_untouched(&g);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- the dependent launch: the plain launch's Y bit for bit, stable with Wp poisoned ---- */

/* A shape whose first wave reads every N tile of the prepared operand at once: the kernel's
 * M (the user's N) is 4 tiles, its N (the user's M) 32, so the first 128 CTAs start on all
 * 32 prepared tiles, and the preparation (8192 x 2048: 1024 CTAs, more than fit at once)
 * still writes its last rows when the first CTAs of the dependent start. */
enum { RACE_M = 8192, RACE_N = 512, RACE_K = 2048 };

/* A stream of the test's own (non-blocking): the dependent launch is not left to the legacy
 * stream's semantics. */
static CUstream own_stream(fp4lr_ctx *ctx)
{
    CUstream s = NULL;
    cr_assert_eq(ctx->drv->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    return s;
}

/* The narrow tile's epilogue across tiles (test_gemm_swap.c, narrow_tiles_back_to_back_are_stable):
 * several tiles a CTA, K at its minimum, both launches. */
Test(gemm_swap_wprep, narrow_tiles_back_to_back_are_stable, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    const fp4lr_plan_opts dep = {.swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_ON};
    const fp4lr_plan_opts plain = {.swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_ON, .pdl = FP4LR_PDL_OFF};
    tsupport_swap_narrow_back_to_back(ctx, FP4LR_NVFP4, 0, &dep, 1290);
    tsupport_swap_narrow_back_to_back(ctx, FP4LR_MXFP4, 0, &plain, 1291);
    tsupport_swap_narrow_back_to_back(ctx, FP4LR_NVFP4, 16, &dep, 1292);
    tsupport_swap_narrow_back_to_back(ctx, FP4LR_MXFP4, 48, &dep, 1293);
    fp4lr_ctx_destroy(ctx);
}

Test(gemm_swap_wprep, dependent_launch_matches_and_is_stable, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    tile_n = 0; /* AUTO's width: 256 for this shape */
    CUstream stream = own_stream(ctx);
    for (int f = 0; f < 2; f++) {
        const fp4lr_format fmt = f ? FP4LR_MXFP4 : FP4LR_NVFP4;
        gcase plain, dep;
        setup(&plain, ctx, RACE_M, RACE_N, RACE_K, 0, 0, 0, fmt, 1300 + f, 64, FP4LR_SCHEDULE_AUTO, FP4LR_PDL_OFF);
        setup(&dep, ctx, RACE_M, RACE_N, RACE_K, 0, 0, 0, fmt, 1300 + f, 64, FP4LR_SCHEDULE_AUTO, FP4LR_PDL_ON);
        cr_expect_str_eq(plain.plan.entry, dep.plan.entry);
        plain.stream = dep.stream = stream;
        tsupport_case_run(&plain);
        tsupport_case_expect_pass(&plain);
        tsupport_case_run(&dep);
        tsupport_case_expect_pass(&dep);
        int64_t fm = -1, fn = -1;
        const int64_t diff = fp4lr_compare_bitwise(&dep.host.p, plain.host.Y, dep.host.Y, &fm, &fn);
        cr_expect_eq(diff, 0, "%s: the dependent launch differs from the plain one in %lld outputs, from (%lld, %lld)",
                     dep.plan.entry, (long long)diff, (long long)fm, (long long)fn);
        /* the prepared A holds the previous launch's values: a kernel that copied a chunk before
         * this launch's preparation wrote it would pass the comparison above; not with the
         * workspace poisoned before every launch */
        tsupport_case_expect_stable_stale_wp(&dep, 10);
        tsupport_case_teardown(&plain);
        tsupport_case_teardown(&dep);
    }
    cr_expect_eq(ctx->drv->cuStreamDestroy(stream), CUDA_SUCCESS);
    fp4lr_ctx_destroy(ctx);
}

/* Builds the NVFP4 _w5 kernels and both preparations of experiment `flags` into dir/<sub>
 * (every NVFP4 file with "w5" or "wp" in its name); the kernel directory into kdir. */
static void build_prep_pair(const char *dir, const char *sub, const char *flags, const char *entry, char *kdir,
                            size_t cap)
{
    char cmd[768];
    snprintf(cmd, sizeof cmd,
             "sh tools/experiment_build.sh %s %s/%s '*nvfp4_*w[5p]*.ptx' > /dev/null && "
             "test -f %s/%s/sm90a/%s.cubin && test -f %s/%s/sm90a/fp4lr_sm90a_nvfp4_wprep_pdl.cubin && "
             "test -f %s/%s/sm90a/fp4lr_sm90a_nvfp4_wprep.cubin",
             flags, dir, sub, dir, sub, entry, dir, sub, dir, sub);
    cr_assert_eq(system(cmd), 0, "the %s kernels do not build", flags);
    snprintf(kdir, cap, "%s/%s", dir, sub);
}

/* A shape whose preparation is one wave of few CTAs (A: 1024 x 1024, 64 CTAs of 256 chunks),
 * so that most SMs are free for the dependent's first CTAs (the kernel's 32 x 4 tiles of
 * 128 x 256: CTA i starts on prepared rows 256 (i / 32) ..) while every preparation CTA is
 * still resident.  With RACE's 1024 preparation CTAs the dependent's CTAs only found SMs as
 * the preparation's last wave began, and those read rows written long before (2026-12-05:
 * the fault below went uncaught 10 of 10 times, slow preparation or not). */
enum { SLOW_M = 1024, SLOW_N = 4096, SLOW_K = 1024 };

/* Planted fault for the check above, and the check under a slow preparation.  The slowprep
 * preparation waits 50 us after releasing its dependent and before converting, so that a
 * dependent which reads the prepared operand early reads the poison:
 *   - the nogdwait kernel (its W producer copies the prepared operand without
 *     griddepcontrol.wait), launched as that dependent, must give a different Y in at least
 *     one of 10 launches with the operand poisoned; launched plainly (pdl off: the stream
 *     orders it after the preparation) it is right;
 *   - the committed kernel (it waits), launched as the dependent of the slow preparation, is
 *     right in all 10. */
Test(gemm_swap_wprep, a_dependent_that_does_not_wait_is_caught, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    tile_n = 0;
    CUstream stream = own_stream(ctx);
    char dir[] = "/tmp/fp4lr-nogdwait.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const char *entry = "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5_yt";
    char nowait[256], waits[256];
    build_prep_pair(dir, "nowait", "nogdwait,slowprep", entry, nowait, sizeof nowait);
    build_prep_pair(dir, "waits", "slowprep", entry, waits, sizeof waits);
    for (int run = 0; run < 3; run++) {
        const int pdl = run != 1, faulty = run < 2;
        char *kernels = tsupport_kernel_dir_save(); /* use_kernel_dir below sets it */
        gcase g;
        setup(&g, ctx, SLOW_M, SLOW_N, SLOW_K, 0, 0, 0, FP4LR_NVFP4, 1310, 64, FP4LR_SCHEDULE_AUTO,
              pdl ? FP4LR_PDL_ON : FP4LR_PDL_OFF);
        cr_assert_str_eq(g.plan.entry, entry);
        g.stream = stream;
        tsupport_case_run(&g);
        tsupport_case_expect_pass(&g);
        tsupport_case_use_kernel_dir(&g, faulty ? nowait : waits);
        const int bad = tsupport_case_unstable_stale_wp(&g, 10);
        if (run == 0)
            cr_expect_gt(bad, 0, "the nogdwait kernel, launched as the dependent of the slow preparation, gave "
                                 "the same Y in 10 of 10 launches with the prepared operand poisoned");
        else if (run == 1)
            cr_expect_eq(bad, 0, "the nogdwait kernel launched plainly differs in %d of 10 launches", bad);
        else
            cr_expect_eq(bad, 0, "the committed kernel, the dependent of the slow preparation, differs in %d of "
                                 "10 launches", bad);
        tsupport_case_teardown(&g);
        tsupport_kernel_dir_restore(kernels);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
    cr_expect_eq(ctx->drv->cuStreamDestroy(stream), CUDA_SUCCESS);
    fp4lr_ctx_destroy(ctx);
}

/* ---- planted faults: both operands reach the kernel exchanged, so each has its own ---- */

Test(gemm_swap_wprep, faults_are_caught, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    for (int f = 0; f < 4; f++) {
        tile_n = widths[f / 2];
        gcase g;
        setup(&g, ctx, 300, 1600, 512, 128, 1, 0, f % 2 ? FP4LR_MXFP4 : FP4LR_NVFP4, 1350 + f, 0,
              FP4LR_SCHEDULE_AUTO, FP4LR_PDL_AUTO);
        tsupport_case_run(&g);
        tsupport_case_expect_pass(&g);
        tsupport_case_expect_u_column_drop_fails(&g, 100);          /* a rank in the streamed tail */
        tsupport_case_expect_sfw_flip_fails(&g, 1234, 5);           /* the register operand's scale */
        tsupport_case_expect_sfa_flip_fails(&g, 211, 3);            /* the prepared operand's scale */
        tsupport_case_expect_kblock_drop_fails(&g, 0, 64 / 2 * 3);  /* a K block of A */
        tsupport_case_expect_kblock_drop_fails(&g, 1, 64 / 2 * 1);  /* a K block of W */
        tsupport_case_expect_unwritten_fails(&g, 250, 1599);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}
