/* GPU suite (sm_90a): the split tile walk (stream-K, plan.h fp4lr_schedule) against the
 * double reference, for the dense and fused families, one CTA and the pair, both formats.
 * The walk is forced (FP4LR_SCHEDULE_SK) on shapes whose tiles are all split, and on one
 * with whole-tile waves before the split ones.  Every output is NaN-poisoned before the
 * launch; a changed W scale byte in the last K block (computed by a contributor, added by
 * the owner) must fail; two runs must agree bit for bit.  Skips without an sm_90a GPU. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "support_gpu.h"
#include "support_gpu_case.h"

static fp4lr_ctx *sm90a_or_skip(fp4lr_family family)
{
    fp4lr_ctx *ctx = tsupport_gemm_or_skip(family);
    tsupport_gpu_arch_or_skip(ctx, "sm90a");
    return ctx;
}

/* wp: the plan's w_prep (AUTO: one CTA keeps the transform at these M; the pair prepares W) */
static void setup_w(tsupport_case *g, fp4lr_ctx *ctx, int64_t M, int64_t N, int64_t K, int64_t r, int affine,
                    fp4lr_format f, int cluster, uint64_t seed, int64_t rows, fp4lr_wprep wp)
{
    fp4lr_problem p = {.M = M, .N = N, .K = K, .r = r, .format = f, .out = FP4LR_OUT_BF16,
                       .has_wc = affine, .has_beta = affine};
    fp4lr_plan_opts o = {.cluster = cluster, .tile_m = 128 * cluster, .schedule = FP4LR_SCHEDULE_SK, .w_prep = wp};
    tsupport_case_setup(g, ctx, &p, seed, FP4LR_PGEN_SCALES_REALISTIC, rows, &o);
    fp4lr_sm90a_sk w;
    fp4lr_status st = fp4lr_runtime_walk(&g->rt, &g->plan, &w);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    cr_assert_eq(w.split, 1, "%s: the forced walk splits", g->plan.entry);
}

static void setup(tsupport_case *g, fp4lr_ctx *ctx, int64_t M, int64_t N, int64_t K, int64_t r, int affine,
                  fp4lr_format f, int cluster, uint64_t seed, int64_t rows)
{
    setup_w(g, ctx, M, N, K, r, affine, f, cluster, seed, rows, FP4LR_WPREP_AUTO);
}

static void run_and_pass(tsupport_case *g)
{
    tsupport_case_run(g);
    tsupport_case_expect_pass(g);
}

/* 1000 x 1300 (x 1024 or 640): 8 x 6 tiles of 128 x 256 (4 x 6 pairs) on 132 SMs, all
 * split; K 640 gives 5 stages, so many units are one or two stages long. */
static void all_split(fp4lr_family fam, int cluster)
{
    fp4lr_ctx *ctx = sm90a_or_skip(fam);
    const int fused = fam == FP4LR_FAMILY_FUSED;
    for (int f = 0; f < 2; f++)
        for (int kk = 0; kk < 2; kk++) {
            tsupport_case g;
            setup(&g, ctx, 1000, 1300, kk ? 640 : 1024, fused ? 32 : 0, fused, (fp4lr_format)f, cluster,
                  4100 + 10 * f + kk, 0);
            run_and_pass(&g);
            tsupport_case_teardown(&g);
        }
    fp4lr_ctx_destroy(ctx);
}

Test(gemm_streamk, dense_all_split, .timeout = 600) { all_split(FP4LR_FAMILY_DENSE, 1); }
Test(gemm_streamk, dense_pair_all_split, .timeout = 600) { all_split(FP4LR_FAMILY_DENSE, 2); }
Test(gemm_streamk, fused_all_split, .timeout = 600) { all_split(FP4LR_FAMILY_FUSED, 1); }
Test(gemm_streamk, fused_pair_all_split, .timeout = 600) { all_split(FP4LR_FAMILY_FUSED, 2); }

/* 4608 x 3072 x 1024 (flux-out's M, N): 432 tiles, two whole-tile waves then 168 split
 * tiles; rank 128 streams the low-rank ring; sampled rows. */
Test(gemm_streamk, whole_waves_then_split, .timeout = 600)
{
    fp4lr_ctx *ctx = sm90a_or_skip(FP4LR_FAMILY_FUSED);
    tsupport_case g;
    setup(&g, ctx, 4608, 3072, 1024, 0, 0, FP4LR_NVFP4, 1, 4200, 256);
    run_and_pass(&g);
    tsupport_case_teardown(&g);
    setup(&g, ctx, 4608, 3072, 1024, 128, 1, FP4LR_MXFP4, 1, 4201, 256);
    run_and_pass(&g);
    tsupport_case_teardown(&g);
    fp4lr_ctx_destroy(ctx);
}

/* The owner must add what the contributors computed: a W scale changed in the last K
 * block (a contributor's stages in every split tile) fails; and two runs agree bit for bit. */
Test(gemm_streamk, contributor_fault_fails_and_reruns_agree, .timeout = 600)
{
    fp4lr_ctx *ctx = sm90a_or_skip(FP4LR_FAMILY_FUSED);
    for (int fam = 0; fam < 2; fam++) {
        tsupport_case g;
        setup(&g, ctx, 1000, 1300, 1024, fam ? 32 : 0, fam, FP4LR_NVFP4, 1, 4300 + fam, 0);
        run_and_pass(&g);
        const int64_t last_block = 1024 / 16 - 1;
        tsupport_case_expect_sfw_flip_fails(&g, 700, last_block);
        run_and_pass(&g);
        void *first = malloc(g.dev.sizes.Y);
        cr_assert(first);
        memcpy(first, g.host.Y, g.dev.sizes.Y);
        tsupport_case_run(&g);
        cr_expect_eq(memcmp(first, g.host.Y, g.dev.sizes.Y), 0, "two stream-K runs of %s differ", g.plan.entry);
        free(first);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

/* Every split launch gives the same Y bit for bit (tsupport_case_expect_stable): the check
 * that found the _w kernels' race (test_gemm_wprep.c), here on the transform kernels, one CTA
 * and the pair, dense and fused (the prepared pair: test_gemm_wpair.c). */
Test(gemm_streamk, launches_are_bitwise_stable, .timeout = 600)
{
    fp4lr_ctx *ctx = sm90a_or_skip(FP4LR_FAMILY_FUSED);
    for (int fused = 0; fused < 2; fused++)
        for (int cluster = 1; cluster <= 2; cluster++) {
            tsupport_case g;
            setup_w(&g, ctx, 1000, 1300, 1024, fused ? 32 : 0, fused, FP4LR_NVFP4, cluster,
                    4400 + 2 * fused + cluster, 64, FP4LR_WPREP_OFF);
            cr_assert_eq(g.plan.w_prep, 0, "%s", g.plan.entry);
            tsupport_case_expect_stable(&g, 40);
            tsupport_case_expect_pass(&g);
            tsupport_case_teardown(&g);
        }
    fp4lr_ctx_destroy(ctx);
}
