/* GPU suite: the W-prepared sm_90a path (fp4lr_<fmt>_wprep, then the _w kernel, dense and
 * fused), forced on with fp4lr_plan_opts.w_prep, and the _x kernels that convert W themselves
 * (w_prep INLINE: the same Y as the _w kernels, bit for bit).  Ragged edges and both formats against the double
 * reference; bitwise agreement with the transform kernels (the same operand values in the
 * same K order through the same wgmma sequence); NaN scales; stream-K; and the planted faults
 * that prove the suite can fail: a W scale byte, a dropped K block of W, unwritten outputs.
 * Skips without an sm_90a GPU (no other architecture has these kernels). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "support_gpu_case.h"

typedef tsupport_case gcase;

static fp4lr_ctx *sm90a_or_skip(void)
{
    return tsupport_sm90a_or_skip("the W-prepared kernels are sm_90a kernels");
}

/* A case with the low-rank rank r and the affine (fused) or neither (dense). */
static void setup_r(gcase *g, fp4lr_ctx *ctx, int64_t M, int64_t N, int64_t K, int64_t r, int affine,
                    fp4lr_format f, uint64_t seed, int64_t rows, fp4lr_wprep w, fp4lr_schedule sch)
{
    fp4lr_problem p = {.M = M, .N = N, .K = K, .r = r, .format = f, .out = FP4LR_OUT_BF16,
                       .has_wc = affine, .has_beta = affine};
    fp4lr_plan_opts o = {.cluster = 1, .w_prep = w, .schedule = sch};
    tsupport_case_setup(g, ctx, &p, seed, FP4LR_PGEN_SCALES_REALISTIC, rows, &o);
    cr_assert_eq(g->plan.w_prep, w == FP4LR_WPREP_ON || w == FP4LR_WPREP_INLINE, "%s", g->plan.entry);
    cr_assert_eq(g->plan.w_inline, w == FP4LR_WPREP_INLINE, "%s", g->plan.entry);
}

static void setup(gcase *g, fp4lr_ctx *ctx, int64_t M, int64_t N, int64_t K, fp4lr_format f, uint64_t seed,
                  int64_t rows, fp4lr_wprep w, fp4lr_schedule sch)
{
    setup_r(g, ctx, M, N, K, 0, 0, f, seed, rows, w, sch);
}

/* ---- edges: M, N not multiples of the tile, K at the minimum and above ---- */

static void edges(fp4lr_format f)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    static const int64_t ms[] = {1, 127, 257, 1000}, ns[] = {7, 255, 1000};
    const int64_t kmin = fp4lr_format_k_multiple(f);
    uint64_t seed = 500;
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
        for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++) {
            gcase g;
            setup(&g, ctx, ms[i], ns[j], (i + j) % 2 ? kmin : 3 * kmin, f, seed++, 0, FP4LR_WPREP_ON,
                  FP4LR_SCHEDULE_AUTO);
            tsupport_case_run(&g);
            tsupport_case_expect_pass(&g);
            tsupport_case_teardown(&g);
        }
    fp4lr_ctx_destroy(ctx);
}

Test(gemm_wprep, edges_nvfp4, .timeout = 600) { edges(FP4LR_NVFP4); }
Test(gemm_wprep, edges_mxfp4, .timeout = 600) { edges(FP4LR_MXFP4); }

/* ---- the same Y as the transform kernels, bit for bit ---- */

static void same_as_transform(fp4lr_format f, int64_t M, int64_t N, int64_t K, int64_t r, uint64_t seed)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    gcase on, off;
    setup_r(&on, ctx, M, N, K, r, r > 0, f, seed, 64, FP4LR_WPREP_ON, FP4LR_SCHEDULE_DP);
    setup_r(&off, ctx, M, N, K, r, r > 0, f, seed, 64, FP4LR_WPREP_OFF, FP4LR_SCHEDULE_DP);
    cr_expect_eq(on.plan.budget.lora_tail > 0, r > 32, "%s: lora_tail %d", on.plan.entry, on.plan.budget.lora_tail);
    cr_expect_eq(off.plan.budget.lora_tail, 0, "%s", off.plan.entry);
    tsupport_case_run(&on);
    tsupport_case_expect_pass(&on);
    tsupport_case_run(&off);
    cr_assert_eq(on.dev.sizes.Y, off.dev.sizes.Y);
    cr_expect_eq(memcmp(on.host.Y, off.host.Y, on.dev.sizes.Y), 0, "%s and %s differ", on.plan.entry,
                 off.plan.entry);
    tsupport_case_teardown(&on);
    tsupport_case_teardown(&off);
    fp4lr_ctx_destroy(ctx);
}

Test(gemm_wprep, nvfp4_bitwise_equal_to_the_transform, .timeout = 300)
{
    same_as_transform(FP4LR_NVFP4, 2304, 3000, 3072, 0, 41);
}
Test(gemm_wprep, mxfp4_bitwise_equal_to_the_transform, .timeout = 300)
{
    same_as_transform(FP4LR_MXFP4, 2304, 3000, 3072, 0, 42);
}

/* the fused kernels with the affine: r = 128 (chunks 2 and 3, past the low-rank ring, come
 * through the W ring: ltail) and r = 32 (one chunk, in the ring); r = 1024 (30 chunks through
 * the W ring, lapping its slots) against the transform kernel, which streams them all through
 * its low-rank ring; 216 tiles on 132 SMs: the W ring carries on from one tile's tail to the
 * next tile's W */
Test(gemm_wprep, fused_nvfp4_bitwise_equal_to_the_transform, .timeout = 300)
{
    same_as_transform(FP4LR_NVFP4, 2304, 3000, 3072, 128, 43);
}
Test(gemm_wprep, fused_mxfp4_bitwise_equal_to_the_transform, .timeout = 300)
{
    same_as_transform(FP4LR_MXFP4, 2304, 3000, 3072, 32, 44);
}
Test(gemm_wprep, fused_tail_through_the_w_ring_bitwise_equal_to_the_transform, .timeout = 300)
{
    same_as_transform(FP4LR_MXFP4, 2304, 3000, 3072, 128, 45);
    same_as_transform(FP4LR_NVFP4, 2304, 3000, 3072, 1024, 46);
}

/* ---- the fused kernels: every rank, with and without the affine, both formats ---- */

Test(gemm_wprep, fused_ranks_and_affine, .timeout = 600)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    static const int64_t ranks[] = {0, 16, 32, 48, 64, 128, 1024};
    uint64_t seed = 600;
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++)
            for (int affine = 0; affine < 2; affine++) {
                if (ranks[i] == 0 && !affine)
                    continue; /* the dense family */
                gcase g;
                setup_r(&g, ctx, 300, 520, 512, ranks[i], affine, (fp4lr_format)f, seed++, 0, FP4LR_WPREP_ON,
                        FP4LR_SCHEDULE_AUTO);
                cr_expect_eq(g.plan.family, FP4LR_FAMILY_FUSED);
                tsupport_case_run(&g);
                tsupport_case_expect_pass(&g);
                tsupport_case_teardown(&g);
            }
    fp4lr_ctx_destroy(ctx);
}

/* ---- the fused kernels' planted faults: a dropped low-rank column, a W scale byte ---- */

static void fused_faults(fp4lr_wprep w, int64_t r, uint64_t seed)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    for (int f = 0; f < 2; f++) {
        gcase g;
        setup_r(&g, ctx, 300, 400, 512, r, 1, (fp4lr_format)f, seed + f, 0, w, FP4LR_SCHEDULE_AUTO);
        tsupport_case_run(&g);
        tsupport_case_expect_pass(&g);
        tsupport_case_expect_u_column_drop_fails(&g, r - 28); /* r = 128: a rank in the streamed tail */
        tsupport_case_expect_sfw_flip_fails(&g, 123, 5);
        tsupport_case_expect_kblock_drop_fails(&g, 1, 64 / 2 * 3);
        tsupport_case_expect_unwritten_fails(&g, 250, 399);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

Test(gemm_wprep, fused_faults_are_caught, .timeout = 300)
{
    fused_faults(FP4LR_WPREP_ON, 128, 650);
}

/* the fused _x kernels (AUTO's choice up to r = 32): the converters read the flipped scale
 * and the dropped K block, the consumers the dropped rank */
Test(gemm_wprep, inline_fused_faults_are_caught, .timeout = 300)
{
    fused_faults(FP4LR_WPREP_INLINE, 32, 660);
}

/* ---- a reference shape under the default plan (AUTO: W converted in the kernel, _x) ---- */

Test(gemm_wprep, auto_on_a_reference_shape, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    for (int f = 0; f < 2; f++) {
        gcase g;
        fp4lr_problem p = {.M = 4608, .N = 3072, .K = 3072, .format = (fp4lr_format)f, .out = FP4LR_OUT_BF16};
        tsupport_case_setup(&g, ctx, &p, 70 + f, FP4LR_PGEN_SCALES_REALISTIC, 128, NULL);
        cr_expect_eq(g.plan.w_prep, 1, "%s", g.plan.entry);
        cr_expect_eq(g.plan.w_inline, 1, "%s", g.plan.entry);
        tsupport_case_run(&g);
        tsupport_case_expect_pass(&g);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- stream-K: the split walk over the W-prepared kernel ---- */

Test(gemm_wprep, stream_k, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    for (int f = 0; f < 2; f++) {
        gcase g;
        setup(&g, ctx, 2000, 3000, 2048, (fp4lr_format)f, 80 + f, 128, FP4LR_WPREP_ON, FP4LR_SCHEDULE_SK);
        tsupport_case_run(&g);
        tsupport_case_expect_pass(&g);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- stream-K launches are bitwise stable ----
 * Before the consumers fenced their stage reads (tools/sm90a_ptx/consumer.py, the `empty` arrive) a
 * refill could overtake them: on flux-out with stream-K the dense NVFP4 _w kernel gave a
 * different Y in about 10 % of launches, the fused one in nearly all (ptx/sm90a/README.md). */

Test(gemm_wprep, stream_k_launches_are_bitwise_stable, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    static const struct { fp4lr_format f; int64_t N, K, r; int n; } c[] = {
        {FP4LR_NVFP4, 3072, 3072, 0, 150}, {FP4LR_NVFP4, 3072, 3072, 32, 40}, {FP4LR_MXFP4, 3072, 3072, 0, 60},
        /* the low-rank tail through the W ring on split tiles (only the owner's unit carries it) */
        {FP4LR_NVFP4, 3072, 3072, 128, 40}, {FP4LR_MXFP4, 3072, 3072, 1024, 20}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        gcase g;
        setup_r(&g, ctx, 4608, c[i].N, c[i].K, c[i].r, c[i].r > 0, c[i].f, 90 + i, 64, FP4LR_WPREP_ON,
                FP4LR_SCHEDULE_SK);
        cr_expect_eq(g.plan.budget.lora_tail > 0, c[i].r > 32, "%s: lora_tail %d", g.plan.entry,
                     g.plan.budget.lora_tail);
        tsupport_case_expect_stable(&g, c[i].n);
        tsupport_case_expect_pass(&g);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- NaN in a W scale: the preparation carries it to exactly its column ---- */

Test(gemm_wprep, nan_scale_propagates, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    for (int f = 0; f < 2; f++) {
        gcase g;
        setup(&g, ctx, 200, 304, 512, (fp4lr_format)f, 90 + f, 0, FP4LR_WPREP_ON, FP4LR_SCHEDULE_AUTO);
        tsupport_case_expect_nan_column(&g, 201, 5);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- determinism and the planted faults ---- */

/* Both formats on 300 x 400 x 1024 with w_prep w: two runs agree, then the planted faults
 * fail and the restored inputs pass again. */
static void deterministic_and_faults(fp4lr_wprep w, uint64_t seed)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    for (int f = 0; f < 2; f++) {
        gcase g;
        setup(&g, ctx, 300, 400, 1024, (fp4lr_format)f, seed + f, 0, w, FP4LR_SCHEDULE_AUTO);
        tsupport_case_expect_stable(&g, 1);
        tsupport_case_expect_pass(&g);

        /* one W scale byte changed by one code: the conversion reads it */
        tsupport_case_expect_sfw_flip_fails(&g, 123, 9);

        /* one K block of 64 of W dropped (zeroed on the device) */
        tsupport_case_expect_kblock_drop_fails(&g, 1, 64 / 2 * 5);

        /* one output row, then one column, left unwritten (the poison kept) */
        tsupport_case_expect_unwritten_fails(&g, 250, 399);
        /* and the restored inputs pass again */
        tsupport_case_run(&g);
        tsupport_case_expect_pass(&g);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

Test(gemm_wprep, deterministic_and_faults_are_caught, .timeout = 300)
{
    deterministic_and_faults(FP4LR_WPREP_ON, 95);
}

/* ---- one runtime, a larger problem after a smaller one: the workspace grows ---- */

Test(gemm_wprep, workspace_grows, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    gcase small, big;
    setup(&small, ctx, 256, 512, 512, FP4LR_NVFP4, 60, 0, FP4LR_WPREP_ON, FP4LR_SCHEDULE_AUTO);
    setup(&big, ctx, 512, 2048, 2048, FP4LR_NVFP4, 61, 0, FP4LR_WPREP_ON, FP4LR_SCHEDULE_AUTO);
    /* both through the small case's runtime (handed over by value, used by one case at a
     * time): small, big (the W workspace grows), small again */
    tsupport_case_run(&small);
    tsupport_case_expect_pass(&small);
    cr_expect_geq(small.rt.wprep.bytes, (size_t)512 * 512 * 2);
    fp4lr_runtime saved = big.rt;
    big.rt = small.rt;
    tsupport_case_run(&big);
    tsupport_case_expect_pass(&big);
    cr_expect_geq(big.rt.wprep.bytes, (size_t)2048 * 2048 * 2);
    small.rt = big.rt;
    tsupport_case_run(&small);
    tsupport_case_expect_pass(&small);
    big.rt = saved;
    tsupport_case_teardown(&small);
    tsupport_case_teardown(&big);
    fp4lr_ctx_destroy(ctx);
}

/* ---- W converted in the kernel (_x, w_prep INLINE) ----
 * The converter warps write the same Wp as the preparation kernel and the consumers are the
 * _w kernels', so Y is the _w path's bit for bit (the walk is the same: it does not depend on
 * the stage count). */

static void inline_same_as_prepared_r(fp4lr_format f, int64_t M, int64_t N, int64_t K, int64_t r, int affine,
                                      fp4lr_schedule sch, uint64_t seed)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    gcase x, w;
    setup_r(&x, ctx, M, N, K, r, affine, f, seed, 64, FP4LR_WPREP_INLINE, sch);
    setup_r(&w, ctx, M, N, K, r, affine, f, seed, 64, FP4LR_WPREP_ON, sch);
    tsupport_case_run(&x);
    tsupport_case_expect_pass(&x);
    tsupport_case_run(&w);
    cr_expect_eq(fp4lr_compare_bitwise(&x.host.p, x.host.Y, w.host.Y, &(int64_t){0}, &(int64_t){0}), 0,
                 "%s and %s differ", x.plan.entry, w.plan.entry);
    tsupport_case_teardown(&x);
    tsupport_case_teardown(&w);
    fp4lr_ctx_destroy(ctx);
}

static void inline_same_as_prepared(fp4lr_format f, int64_t M, int64_t N, int64_t K, uint64_t seed)
{
    inline_same_as_prepared_r(f, M, N, K, 0, 0, FP4LR_SCHEDULE_AUTO, seed);
}

/* a ragged last N tile (3000), a K whose last K block is half (NVFP4 1088 = 17 chunks of 64),
 * a reference shape */
Test(gemm_wprep, inline_nvfp4_bitwise_equal_to_the_prepared, .timeout = 300)
{
    inline_same_as_prepared(FP4LR_NVFP4, 2304, 3000, 3072, 141);
    inline_same_as_prepared(FP4LR_NVFP4, 1000, 1300, 1088, 142);
    inline_same_as_prepared(FP4LR_NVFP4, 4608, 3072, 3072, 143);
}
Test(gemm_wprep, inline_mxfp4_bitwise_equal_to_the_prepared, .timeout = 300)
{
    inline_same_as_prepared(FP4LR_MXFP4, 2304, 3000, 3072, 144);
    inline_same_as_prepared(FP4LR_MXFP4, 1000, 1300, 1152, 145);
}

/* fused (_x fused kernels: 4 main stages at r = 0, 3 from r = 32 on): the whole operator, the
 * _w fused path's Y bit for bit, whole tiles and stream-K */
Test(gemm_wprep, inline_fused_bitwise_equal_to_the_prepared, .timeout = 600)
{
    inline_same_as_prepared_r(FP4LR_NVFP4, 2304, 3000, 3072, 32, 1, FP4LR_SCHEDULE_AUTO, 146);
    inline_same_as_prepared_r(FP4LR_NVFP4, 1000, 1300, 1088, 0, 1, FP4LR_SCHEDULE_SK, 147);
    inline_same_as_prepared_r(FP4LR_MXFP4, 2304, 3000, 3072, 128, 0, FP4LR_SCHEDULE_SK, 148);
    inline_same_as_prepared_r(FP4LR_MXFP4, 1000, 1300, 1152, 1024, 1, FP4LR_SCHEDULE_DP, 149);
}

/* the low-rank tail through the W ring in the _x kernels (AUTO's plan at every rank since
 * 2026-12-06): K = 256 with stream-K makes units of one or two K blocks, so a CTA's first unit
 * is wholly the consumers' first fill and the W producer must still issue its tile's tail
 * chunks (the first build hung there); r = 128 (3 tail chunks) and 1024 (31) */
Test(gemm_wprep, inline_tail_after_a_self_filled_first_unit, .timeout = 300)
{
    inline_same_as_prepared_r(FP4LR_NVFP4, 1000, 1300, 256, 128, 1, FP4LR_SCHEDULE_SK, 190);
    inline_same_as_prepared_r(FP4LR_MXFP4, 1000, 1300, 256, 1024, 1, FP4LR_SCHEDULE_SK, 191);
    inline_same_as_prepared_r(FP4LR_NVFP4, 4608, 3072, 3072, 128, 1, FP4LR_SCHEDULE_SK, 192);
}

Test(gemm_wprep, inline_edges, .timeout = 600)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    static const int64_t ms[] = {1, 257}, ns[] = {7, 1000};
    uint64_t seed = 700;
    for (int f = 0; f < 2; f++) {
        const int64_t kmin = fp4lr_format_k_multiple((fp4lr_format)f);
        for (size_t i = 0; i < 2; i++)
            for (size_t j = 0; j < 2; j++) {
                gcase g;
                setup(&g, ctx, ms[i], ns[j], (i + j) % 2 ? kmin : 3 * kmin, (fp4lr_format)f, seed++, 0,
                      FP4LR_WPREP_INLINE, FP4LR_SCHEDULE_AUTO);
                tsupport_case_run(&g);
                tsupport_case_expect_pass(&g);
                tsupport_case_teardown(&g);
            }
    }
    fp4lr_ctx_destroy(ctx);
}

/* every launch the same Y (the converters and the W producer meet through global flags) */
Test(gemm_wprep, inline_stream_k_launches_are_bitwise_stable, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    for (int f = 0; f < 2; f++) {
        gcase g;
        setup(&g, ctx, 4608, 3072, 3072, (fp4lr_format)f, 150 + f, 64, FP4LR_WPREP_INLINE, FP4LR_SCHEDULE_SK);
        tsupport_case_expect_stable(&g, 60);
        tsupport_case_expect_pass(&g);
        /* with the prepared W poisoned before each launch: a chunk copied before this launch
         * converted it would show (the previous launch left the same values there) */
        tsupport_case_expect_stable_stale_wp(&g, 10);
        tsupport_case_teardown(&g);
        /* the fused _x kernel (r = 32, affine) */
        setup_r(&g, ctx, 4608, 3072, 3072, 32, 1, (fp4lr_format)f, 152 + f, 64, FP4LR_WPREP_INLINE,
                FP4LR_SCHEDULE_SK);
        tsupport_case_expect_stable(&g, 40);
        tsupport_case_expect_pass(&g);
        tsupport_case_expect_stable_stale_wp(&g, 10);
        tsupport_case_teardown(&g);
        /* ragged edges, five K blocks, every unit split: the sanitizer case of tools/sanitize.sh */
        setup(&g, ctx, 1000, 1300, 640, (fp4lr_format)f, 154 + f, 64, FP4LR_WPREP_INLINE, FP4LR_SCHEDULE_SK);
        tsupport_case_run(&g);
        tsupport_case_expect_pass(&g);
        tsupport_case_expect_stable_stale_wp(&g, 20);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

Test(gemm_wprep, inline_deterministic_and_faults_are_caught, .timeout = 300)
{
    deterministic_and_faults(FP4LR_WPREP_INLINE, 160);
}

/* one runtime, shapes changing between launches: each launch's flags carry its own epoch, so
 * a flag left from a launch of another shape never passes for this one's.  The two shapes need
 * conversion-order tables (bands narrower than their N tiles and more units than one round of
 * the grid's converter warps on any Hopper part); a third, small one takes the identity order
 * (no table: the runtime's table clock does not move) between them */
Test(gemm_wprep, inline_shapes_change_on_one_runtime, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    gcase small, big, tiny;
    setup(&small, ctx, 1536, 6144, 1024, FP4LR_NVFP4, 170, 64, FP4LR_WPREP_INLINE, FP4LR_SCHEDULE_AUTO);
    setup(&big, ctx, 2048, 8192, 2048, FP4LR_NVFP4, 171, 64, FP4LR_WPREP_INLINE, FP4LR_SCHEDULE_AUTO);
    setup(&tiny, ctx, 256, 512, 512, FP4LR_NVFP4, 172, 0, FP4LR_WPREP_INLINE, FP4LR_SCHEDULE_AUTO);
    fp4lr_runtime saved = big.rt, saved_tiny = tiny.rt;
    big.rt = small.rt;
    for (int i = 0; i < 3; i++) {
        tsupport_case_run(&big);
        tsupport_case_expect_pass(&big);
        tiny.rt = big.rt;
        const unsigned long long clock = tiny.rt.xorder_clock;
        tsupport_case_run(&tiny);
        tsupport_case_expect_pass(&tiny);
        cr_expect_eq(tiny.rt.xorder_clock, clock, "the identity order takes no table");
        small.rt = tiny.rt;
        tsupport_case_run(&small);
        tsupport_case_expect_pass(&small);
        big.rt = small.rt;
    }
    cr_expect_geq(big.rt.xflags.bytes, (size_t)64 + 32 * 16 * 32, "flags for 32 N tiles x 16 K blocks");
    cr_expect_eq(big.rt.xorder_clock, 6, "one order table a launch of the two larger shapes");
    cr_expect(big.rt.xorder[0].ws.bytes >= (size_t)32 * 16 * 4 || big.rt.xorder[1].ws.bytes >= (size_t)32 * 16 * 4,
              "a table for the 32 x 16 items of the larger shape");
    tiny.rt = saved_tiny;
    tsupport_case_teardown(&tiny);
    small.rt = big.rt;
    big.rt = saved;
    tsupport_case_teardown(&small);
    tsupport_case_teardown(&big);
    fp4lr_ctx_destroy(ctx);
}
