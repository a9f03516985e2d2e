/* GPU suite: the W-prepared sm_90a pair (cluster 2, the _w kernels of m256n256: rank 0 loads
 * each prepared W chunk once and multicasts it into both CTAs' W ring; each CTA its own A).
 * Against the double reference on ragged edges, both formats, dense and fused; bitwise
 * agreement with the one-CTA _w kernel and with the transform pair (w_prep off: the same
 * operand values in the same K order through the same wgmma sequence); stream-K launches
 * bitwise stable; and the planted faults that prove the suite can fail on the pair: a W scale
 * byte, a dropped K block of W, a dropped low-rank column, unwritten outputs in rank 1's half
 * of a cluster tile.
 * Skips without an sm_90a GPU. */
#include <criterion/criterion.h>
#include <string.h>

#include "format.h"
#include "support_gpu_case.h"

typedef tsupport_case gcase;

static fp4lr_ctx *sm90a_or_skip(void)
{
    return tsupport_sm90a_or_skip("the W-prepared pair kernels are sm_90a kernels");
}

/* A case of rank r (with the affine when `affine`) on `cluster` CTAs, W prepared (w_prep on). */
static void setup(gcase *g, fp4lr_ctx *ctx, int cluster, int64_t M, int64_t N, int64_t K, int64_t r, int affine,
                  fp4lr_format f, uint64_t seed, int64_t rows, fp4lr_schedule sch)
{
    fp4lr_problem p = {.M = M, .N = N, .K = K, .r = r, .format = f, .out = FP4LR_OUT_BF16,
                       .has_wc = affine, .has_beta = affine};
    fp4lr_plan_opts o = {.cluster = cluster, .tile_m = 128 * cluster, .w_prep = FP4LR_WPREP_ON, .schedule = sch};
    tsupport_case_setup(g, ctx, &p, seed, FP4LR_PGEN_SCALES_REALISTIC, rows, &o);
    cr_assert_eq(g->plan.cluster, cluster, "%s", g->plan.entry);
    cr_assert_eq(g->plan.w_prep, 1, "%s", g->plan.entry);
    cr_assert_eq(g->plan.w_inline, 0, "%s", g->plan.entry);
    cr_assert(strstr(g->plan.entry, cluster == 2 ? "_c2_" : "_c1_") && strstr(g->plan.entry, "_w"), "%s",
              g->plan.entry);
}

/* ---- the same Y as one CTA, bit for bit (whole tiles) ---- */

Test(gemm_wpair, bitwise_equal_to_one_cta, .timeout = 600)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    static const struct { fp4lr_format f; int64_t r; int affine; } c[] = {
        {FP4LR_NVFP4, 0, 0}, {FP4LR_MXFP4, 0, 0}, {FP4LR_NVFP4, 0, 1},    {FP4LR_NVFP4, 32, 1},
        {FP4LR_MXFP4, 16, 1}, {FP4LR_NVFP4, 128, 1}, {FP4LR_MXFP4, 1024, 0}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        gcase two, one;
        /* M = 1000: the last cluster tile's rank 1 holds rows 896..999 and 24 past M */
        setup(&two, ctx, 2, 1000, 1300, 1024, c[i].r, c[i].affine, c[i].f, 900 + i, 96, FP4LR_SCHEDULE_DP);
        setup(&one, ctx, 1, 1000, 1300, 1024, c[i].r, c[i].affine, c[i].f, 900 + i, 96, FP4LR_SCHEDULE_DP);
        tsupport_case_run(&two);
        tsupport_case_expect_pass(&two);
        tsupport_case_run(&one);
        cr_assert_eq(two.dev.sizes.Y, one.dev.sizes.Y);
        cr_expect_eq(memcmp(two.host.Y, one.host.Y, two.dev.sizes.Y), 0, "%s and %s differ (r = %lld)",
                     two.plan.entry, one.plan.entry, (long long)c[i].r);
        tsupport_case_teardown(&two);
        tsupport_case_teardown(&one);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- the transform pair (w_prep off, the _t kernels) gives the same Y, bit for bit ---- */

Test(gemm_wpair, transform_pair_bitwise_equal_to_the_prepared_pair, .timeout = 600)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    static const struct { fp4lr_format f; int64_t M, r; int affine; } c[] = {
        {FP4LR_NVFP4, 1000, 0, 0}, {FP4LR_MXFP4, 300, 32, 1}, {FP4LR_NVFP4, 129, 128, 1}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        gcase w, t;
        setup(&w, ctx, 2, c[i].M, 1300, 1024, c[i].r, c[i].affine, c[i].f, 930 + i, 0, FP4LR_SCHEDULE_DP);
        fp4lr_problem p = {.M = c[i].M, .N = 1300, .K = 1024, .r = c[i].r, .format = c[i].f,
                           .out = FP4LR_OUT_BF16, .has_wc = c[i].affine, .has_beta = c[i].affine};
        const fp4lr_plan_opts off = {.cluster = 2, .tile_m = 256, .w_prep = FP4LR_WPREP_OFF,
                                     .schedule = FP4LR_SCHEDULE_DP};
        tsupport_case_setup(&t, ctx, &p, 930 + i, FP4LR_PGEN_SCALES_REALISTIC, 0, &off);
        cr_assert_eq(t.plan.w_prep, 0, "%s", t.plan.entry);
        tsupport_case_run(&w);
        tsupport_case_expect_pass(&w);
        tsupport_case_run(&t);
        tsupport_case_expect_pass(&t);
        cr_assert_eq(w.dev.sizes.Y, t.dev.sizes.Y);
        cr_expect_eq(memcmp(w.host.Y, t.host.Y, w.dev.sizes.Y), 0, "%s and %s differ", w.plan.entry, t.plan.entry);
        tsupport_case_teardown(&w);
        tsupport_case_teardown(&t);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- edges: M below, at and past one cluster tile; N not a multiple of the tile ---- */

Test(gemm_wpair, edges, .timeout = 600)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    static const int64_t ms[] = {1, 129, 256, 300}, ns[] = {7, 1000};
    uint64_t seed = 920;
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
            for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++) {
                const int64_t kmin = fp4lr_format_k_multiple((fp4lr_format)f);
                gcase g;
                /* fused r = 16 with the affine on every other case */
                const int fused = (i + j) % 2;
                setup(&g, ctx, 2, ms[i], ns[j], (i + j + f) % 2 ? kmin : 3 * kmin, fused ? 16 : 0, fused,
                      (fp4lr_format)f, seed++, 0, FP4LR_SCHEDULE_AUTO);
                tsupport_case_run(&g);
                tsupport_case_expect_pass(&g);
                tsupport_case_expect_padding_untouched(&g);
                tsupport_case_teardown(&g);
            }
    fp4lr_ctx_destroy(ctx);
}

/* ---- stream-K over clusters: the split walk, launches bitwise stable ---- */

Test(gemm_wpair, stream_k_launches_are_bitwise_stable, .timeout = 600)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    static const struct { fp4lr_format f; int64_t r; int n; } c[] = {
        {FP4LR_NVFP4, 0, 60}, {FP4LR_NVFP4, 32, 30}, {FP4LR_MXFP4, 0, 30}, {FP4LR_NVFP4, 128, 20}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        gcase g;
        setup(&g, ctx, 2, 4608, 3072, 3072, c[i].r, c[i].r > 0, c[i].f, 940 + i, 64, FP4LR_SCHEDULE_SK);
        tsupport_case_expect_stable(&g, c[i].n);
        tsupport_case_expect_pass(&g);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- a reference shape under the default plan of a pair: AUTO prepares W ---- */

Test(gemm_wpair, auto_on_a_reference_shape, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    for (int f = 0; f < 2; f++) {
        gcase g;
        fp4lr_problem p = {.M = 4608, .N = 3072, .K = 3072, .r = 32, .format = (fp4lr_format)f,
                           .out = FP4LR_OUT_BF16, .has_wc = 1, .has_beta = 1};
        const fp4lr_plan_opts o = {.cluster = 2, .tile_m = 256};
        tsupport_case_setup(&g, ctx, &p, 950 + f, FP4LR_PGEN_SCALES_REALISTIC, 128, &o);
        cr_expect_eq(g.plan.w_prep, 1, "%s", g.plan.entry);
        cr_expect(strstr(g.plan.entry, "_c2_") != NULL, "%s", g.plan.entry);
        tsupport_case_run(&g);
        tsupport_case_expect_pass(&g);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- the planted faults ---- */

Test(gemm_wpair, faults_are_caught, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    for (int f = 0; f < 2; f++) {
        gcase g;
        setup(&g, ctx, 2, 300, 400, 512, 128, 1, (fp4lr_format)f, 960 + f, 0, FP4LR_SCHEDULE_AUTO);
        tsupport_case_run(&g);
        tsupport_case_expect_pass(&g);
        /* a rank past the low-rank ring's first round; a W scale byte (column 123: the
         * multicast chunk both CTAs read); a K block of W; a row of rank 1's half (128..255)
         * of the first cluster tile unwritten */
        tsupport_case_expect_u_column_drop_fails(&g, 100);
        tsupport_case_expect_sfw_flip_fails(&g, 123, 5);
        tsupport_case_expect_kblock_drop_fails(&g, 1, 64 / 2 * 3);
        tsupport_case_expect_unwritten_fails(&g, 200, 399);
        tsupport_case_run(&g);
        tsupport_case_expect_pass(&g);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}
