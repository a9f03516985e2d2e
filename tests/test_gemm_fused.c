/* GPU suite: the fused kernels (low-rank branch and per-column affine; sm_90a, and sm_100a /
 * sm_100f on a Blackwell part)
 * against the double reference.
 *
 * Outputs are NaN-poisoned before each launch.  The suite proves its sensitivity:
 * a dropped low-rank column, a changed scale byte and an unwritten output row
 * must fail the comparison.  Skips, naming the reason, without an sm_90 or sm_100 GPU. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "bf16.h"
#include "devbuf.h"
#include "scale_atom.h"
#include "shapes.h"
#include "support_gpu.h"
#include "support_gpu_case.h"

static fp4lr_problem fused(int64_t M, int64_t N, int64_t K, int64_t r, fp4lr_format f, int affine)
{
    fp4lr_problem p = {.M = M, .N = N, .K = K, .r = r, .format = f, .out = FP4LR_OUT_BF16,
                       .has_wc = affine, .has_beta = affine};
    return p;
}

static void check(fp4lr_ctx *ctx, fp4lr_problem p, uint64_t seed, int64_t rows)
{
    tsupport_case g;
    tsupport_case_setup(&g, ctx, &p, seed, FP4LR_PGEN_SCALES_REALISTIC, rows, NULL);
    cr_assert_eq(g.plan.family, FP4LR_FAMILY_FUSED, "%s", g.plan.entry);
    tsupport_case_run(&g);
    tsupport_case_expect_pass(&g);
    tsupport_case_teardown(&g);
}

/* ---- every rank of OPERATOR.md §5, with and without the affine, both formats ---- */

static const int64_t ranks[] = {0, 16, 32, 48, 128, 1024};

Test(gemm_fused, ranks_and_affine, .timeout = 600)
{
    fp4lr_ctx *ctx = tsupport_gemm_or_skip(FP4LR_FAMILY_FUSED);
    uint64_t seed = 10;
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++)
            for (int affine = 0; affine < 2; affine++) {
                if (ranks[i] == 0 && !affine)
                    continue; /* that is the dense family */
                check(ctx, fused(300, 520, 512, ranks[i], (fp4lr_format)f, affine), seed++, 0);
            }
    fp4lr_ctx_destroy(ctx);
}

/* ---- ragged edges with the low-rank branch on ---- */

Test(gemm_fused, edges, .timeout = 600)
{
    fp4lr_ctx *ctx = tsupport_gemm_or_skip(FP4LR_FAMILY_FUSED);
    static const int64_t mn[] = {1, 7, 127, 129, 255, 257, 1000};
    uint64_t seed = 200;
    for (size_t i = 0; i < 7; i++)
        for (size_t j = 0; j < 7; j += 3)
            check(ctx, fused(mn[i], mn[j], (i + j) % 2 ? 128 : 384, 32, (fp4lr_format)((i + j) % 2), 1), seed++, 0);
    fp4lr_ctx_destroy(ctx);
}

/* ---- reference shapes with their ranks (sampled rows) ---- */

Test(gemm_fused, reference_shapes, .timeout = 900)
{
    fp4lr_ctx *ctx = tsupport_gemm_or_skip(FP4LR_FAMILY_FUSED);
    const char *names[] = {"flux-qkv", "sana-out", "qwen-fc1-r128", "decode-m16"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const fp4lr_shape *sh = fp4lr_shape_find(names[i]);
        cr_assert(sh, "%s", names[i]);
        check(ctx, fused(sh->M, sh->N, sh->K, sh->r, FP4LR_NVFP4, 1), 300 + i, 96);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- NaN in wc and in L: exactly the column / row they touch ---- */

Test(gemm_fused, nan_in_wc_and_l, .timeout = 300)
{
    fp4lr_ctx *ctx = tsupport_gemm_or_skip(FP4LR_FAMILY_FUSED);
    fp4lr_problem p = fused(200, 300, 256, 32, FP4LR_NVFP4, 1);
    tsupport_case g;
    tsupport_case_setup(&g, ctx, &p, 77, FP4LR_PGEN_SCALES_REALISTIC, 0, NULL);
    tsupport_case_expect_nan_cross(&g, 41, 123);
    tsupport_case_teardown(&g);
    fp4lr_ctx_destroy(ctx);
}

/* ---- forced rings: the low-rank ring deepened beside the 3-slot transform ring ----
 * r = 128 on the s2_t3 instances (2 main stages, 3 transform slots) with 2 slots of 32
 * ranks and 4 slots of 16, and the solver's s3_t3 with one slot of 32: every plan the
 * benchmark's forced A/B runs must agree with the reference (both formats, affine on). */

Test(gemm_fused, forced_lowrank_rings, .timeout = 300)
{
    fp4lr_ctx *ctx = tsupport_gemm_or_skip(FP4LR_FAMILY_FUSED);
    if (!tsupport_ctx_is_sm90a(ctx)) {
        fp4lr_ctx_destroy(ctx);
        cr_skip_test("the forced transform ring is sm_90a's");
    }
    const struct { int stages, chunk, slots; } rings[] = {{2, 32, 2}, {2, 16, 4}, {3, 32, 1}};
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof rings / sizeof rings[0]; i++) {
            fp4lr_plan_opts o = {.force_main_stages = rings[i].stages, .force_transform_stages = 3,
                                 .force_lora_chunk = rings[i].chunk, .force_lora_stages = rings[i].slots};
            fp4lr_problem p = fused(300, 520, 640, 128, f ? FP4LR_MXFP4 : FP4LR_NVFP4, 1);
            tsupport_case g;
            tsupport_case_setup(&g, ctx, &p, 700 + 10 * f + i, FP4LR_PGEN_SCALES_REALISTIC, 0, &o);
            cr_assert_eq(g.plan.budget.stages_main, rings[i].stages, "%s", g.plan.entry);
            cr_assert_eq(g.plan.budget.stages_transform, 3, "%s", g.plan.entry);
            cr_assert_eq(g.plan.budget.lora_chunk, rings[i].chunk, "%s", g.plan.entry);
            cr_assert_eq(g.plan.budget.stages_lora, rings[i].slots, "%s", g.plan.entry);
            tsupport_case_run(&g);
            tsupport_case_expect_pass(&g);
            tsupport_case_teardown(&g);
        }
    fp4lr_ctx_destroy(ctx);
}

/* ---- one runtime, one entry, two low-rank ring sizes ----
 * The fused entry sizes its low-rank ring at run time, so one cached function serves
 * plans of different shared-memory sizes: the runtime must raise the function's
 * dynamic shared-memory limit for the larger plan (the benchmark's stage sweep once
 * failed with CUDA_ERROR_INVALID_VALUE here). */

Test(gemm_fused, one_runtime_two_ring_sizes, .timeout = 300)
{
    fp4lr_ctx *ctx = tsupport_gemm_or_skip(FP4LR_FAMILY_FUSED);
    fp4lr_plan_opts o = {.force_main_stages = 2};
    fp4lr_problem small = fused(300, 520, 512, 16, FP4LR_NVFP4, 1);
    fp4lr_problem large = fused(300, 520, 512, 128, FP4LR_NVFP4, 1);
    tsupport_case a, b;
    tsupport_case_setup(&a, ctx, &small, 91, FP4LR_PGEN_SCALES_REALISTIC, 0, &o);
    tsupport_case_setup(&b, ctx, &large, 92, FP4LR_PGEN_SCALES_REALISTIC, 0, &o);
    cr_assert_str_eq(a.plan.entry, b.plan.entry);
    cr_assert_lt(a.plan.smem_bytes, b.plan.smem_bytes, "the rank-128 plan must need more shared memory");
    tsupport_case_run(&a);
    tsupport_case_expect_pass(&a);
    /* b runs on a's runtime, where the entry is already loaded for the smaller plan */
    fp4lr_runtime own = b.rt;
    b.rt = a.rt;
    tsupport_case_run(&b);
    tsupport_case_expect_pass(&b);
    a.rt = b.rt;
    b.rt = own;
    tsupport_case_teardown(&b);
    tsupport_case_teardown(&a);
    fp4lr_ctx_destroy(ctx);
}

/* ---- determinism ---- */

/* Runs the case once more and expects the output bit for bit as the previous run left it. */
static void expect_rerun_identical(tsupport_case *g)
{
    size_t bytes = g->dev.sizes.Y;
    void *first = malloc(bytes);
    cr_assert(first);
    memcpy(first, g->host.Y, bytes);
    tsupport_case_run(g);
    cr_expect_eq(memcmp(first, g->host.Y, bytes), 0, "two runs of %s differ", g->plan.entry);
    free(first);
}

Test(gemm_fused, deterministic, .timeout = 300)
{
    fp4lr_ctx *ctx = tsupport_gemm_or_skip(FP4LR_FAMILY_FUSED);
    fp4lr_problem p = fused(700, 900, 1024, 128, FP4LR_MXFP4, 1);
    tsupport_case g;
    tsupport_case_setup(&g, ctx, &p, 78, FP4LR_PGEN_SCALES_REALISTIC, 64, NULL);
    tsupport_case_run(&g);
    expect_rerun_identical(&g);
    tsupport_case_teardown(&g);
    fp4lr_ctx_destroy(ctx);
}

/* ---- the suite's sensitivity ---- */

Test(gemm_fused, fault_injection_is_caught, .timeout = 300)
{
    fp4lr_ctx *ctx = tsupport_gemm_or_skip(FP4LR_FAMILY_FUSED);
    for (int f = 0; f < 2; f++) {
        fp4lr_problem p = fused(300, 400, 512, 32, (fp4lr_format)f, 1);
        tsupport_case g;
        tsupport_case_setup(&g, ctx, &p, 900 + f, FP4LR_PGEN_SCALES_REALISTIC, 0, NULL);
        tsupport_case_run(&g);
        tsupport_case_expect_pass(&g);

        /* one low-rank column dropped: rank 7 of U zeroed on the device */
        tsupport_case_expect_u_column_drop_fails(&g, 7);

        /* one scale byte changed */
        tsupport_case_expect_sfw_flip_fails(&g, 123, 5);

        /* one output row unwritten */
        tsupport_case_run(&g);
        uint16_t *y = g.host.Y;
        for (int64_t n = 0; n < p.N; n++)
            y[250 * g.host.p.ldY + n] = 0xFFFF;
        tsupport_case_expect_fail(&g, "one output row unwritten");
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- the sm_90a pair (cluster 2: W and U multicast by rank 0, L per CTA) ---- */

/* A fused case on the sm_90a pair, the plan forced to cluster 2 (256-row cluster tile): set
 * up, run, expect a pass; the caller tears `g` down. */
static void pair_case(tsupport_case *g, fp4lr_ctx *ctx, fp4lr_problem p, uint64_t seed, int64_t rows)
{
    fp4lr_plan_opts o = {.cluster = 2, .tile_m = 256};
    tsupport_case_setup(g, ctx, &p, seed, FP4LR_PGEN_SCALES_REALISTIC, rows, &o);
    cr_assert_eq(g->plan.family, FP4LR_FAMILY_FUSED, "%s", g->plan.entry);
    cr_assert(strstr(g->plan.entry, "_fused_m256n256k128_c2_"), "%s", g->plan.entry);
    tsupport_case_run(g);
    tsupport_case_expect_pass(g);
}

static void check_pair(fp4lr_ctx *ctx, fp4lr_problem p, uint64_t seed)
{
    tsupport_case g;
    pair_case(&g, ctx, p, seed, 0);
    tsupport_case_teardown(&g);
}

Test(gemm_fused, sm90a_pair_ranks_edges_and_sensitivity, .timeout = 900)
{
    fp4lr_ctx *ctx = tsupport_gemm_or_skip(FP4LR_FAMILY_FUSED);
    tsupport_gpu_arch_or_skip(ctx, "sm90a");
    /* ranks with and without the affine, both formats; M not a multiple of the pair's 256
     * rows, so the odd CTA of the last pair has few rows or none (M = 1, 129) */
    static const int64_t pr[] = {0, 16, 32, 128, 1024};
    uint64_t seed = 3000;
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof pr / sizeof pr[0]; i++)
            for (int affine = 0; affine < 2; affine++) {
                if (pr[i] == 0 && !affine)
                    continue;
                check_pair(ctx, fused(300, 520, 512, pr[i], (fp4lr_format)f, affine), seed++);
            }
    static const int64_t mn[] = {1, 129, 257, 1000};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 4; j++)
            check_pair(ctx, fused(mn[i], mn[j], 384, 32, (fp4lr_format)((i + j) % 2), 1), seed++);

    /* sensitivity: a low-rank column dropped from U (which rank 0 multicasts) must fail */
    tsupport_case g;
    pair_case(&g, ctx, fused(256, 300, 512, 32, FP4LR_NVFP4, 1), 3900, 0);
    tsupport_case_expect_u_column_drop_fails(&g, 5);
    tsupport_case_teardown(&g);
    fp4lr_ctx_destroy(ctx);
}

Test(gemm_fused, sm90a_pair_deterministic, .timeout = 300)
{
    fp4lr_ctx *ctx = tsupport_gemm_or_skip(FP4LR_FAMILY_FUSED);
    tsupport_gpu_arch_or_skip(ctx, "sm90a");
    tsupport_case g;
    pair_case(&g, ctx, fused(700, 900, 1024, 128, FP4LR_MXFP4, 1), 3950, 64);
    expect_rerun_identical(&g);
    tsupport_case_teardown(&g);
    fp4lr_ctx_destroy(ctx);
}
