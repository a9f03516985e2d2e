/* Plans (host/plan.c): family selection, per-architecture defaults and
 * overrides, entry names with the solved stage count, launch shape, and the
 * propagation of problem and budget failures. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

static fp4lr_problem problem(int64_t M, int64_t N, int64_t K, int64_t r, int wc, int beta)
{
    fp4lr_problem p = {.M = M, .N = N, .K = K, .r = r, .format = FP4LR_NVFP4,
                       .out = FP4LR_OUT_BF16, .has_wc = wc, .has_beta = beta};
    return p;
}

static fp4lr_plan plan_ok(fp4lr_problem p, fp4lr_arch arch, const fp4lr_plan_opts *o)
{
    fp4lr_plan pl;
    fp4lr_status s = fp4lr_plan_make(&p, arch, o, &pl);
    cr_assert_eq(s.code, FP4LR_OK, "plan failed: %s: %s", s.rule, s.msg);
    return pl;
}

Test(plan, sm100_default_fused)
{
    /* FLUX qkv r=32 with wc and beta: 4 main stages (test_budget config 3),
     * 207872 B; tiles ceil(4608/256) * ceil(9216/256) = 18 * 36 = 648. */
    fp4lr_plan pl = plan_ok(problem(4608, 9216, 3072, 32, 1, 1), FP4LR_ARCH_SM100A, NULL);
    cr_assert_str_eq(pl.entry, "fp4lr_sm100a_nvfp4_fused_m256n256k256_c2_s4");
    cr_assert_eq(pl.family, FP4LR_FAMILY_FUSED);
    cr_assert_eq(pl.block_threads, 256);
    cr_assert_eq(pl.cluster, 2);
    cr_assert_eq(pl.smem_bytes, 207872);
    cr_assert_eq(pl.smem_bytes, pl.budget.total_bytes);
    cr_assert_eq(pl.tiles, 648);
}

Test(plan, sm90_default_dense)
{
    /* r = 0, no wc, no beta -> dense; 3 stages beside 3 transform slots (_t3), 215040 B
     * (test_budget config 4); tiles ceil(1000/128) * ceil(1400/256) = 8 * 6 = 48 (N < 1536:
     * not swapped, test_swap_plan.c). */
    fp4lr_plan pl = plan_ok(problem(1000, 1400, 1024, 0, 0, 0), FP4LR_ARCH_SM90A, NULL);
    cr_assert_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_t3");
    cr_assert_eq(pl.family, FP4LR_FAMILY_DENSE);
    cr_assert_eq(pl.block_threads, 512);
    cr_assert_eq(pl.smem_bytes, 215040);
    cr_assert_eq(pl.tiles, 48);
}

Test(plan, family_selection)
{
    cr_assert_eq(plan_ok(problem(64, 64, 64, 0, 0, 1), FP4LR_ARCH_SM100A, NULL).family,
                 FP4LR_FAMILY_FUSED);
    cr_assert_eq(plan_ok(problem(64, 64, 64, 0, 1, 0), FP4LR_ARCH_SM100A, NULL).family,
                 FP4LR_FAMILY_FUSED);
    cr_assert_eq(plan_ok(problem(64, 64, 64, 16, 0, 0), FP4LR_ARCH_SM100A, NULL).family,
                 FP4LR_FAMILY_FUSED);
    cr_assert_eq(plan_ok(problem(64, 64, 64, 0, 0, 0), FP4LR_ARCH_SM100A, NULL).family,
                 FP4LR_FAMILY_DENSE);
}

Test(plan, mxfp4_entry)
{
    /* MXFP4 kb = 2: per stage 16384+1024+16384+2048 = 35840; 198656/35840 = 5. */
    fp4lr_problem p = problem(512, 512, 1024, 0, 0, 0);
    p.format = FP4LR_MXFP4;
    fp4lr_plan pl = plan_ok(p, FP4LR_ARCH_SM100A, NULL);
    cr_assert_str_eq(pl.entry, "fp4lr_sm100a_mxfp4_dense_m256n256k256_c2_s5");
}

/* cc 10.x parts other than 10.0 run the family-target (sm_100f) kernels: same plan, same
 * budget, the entry named for the family target; the option means nothing on sm_90a. */
Test(plan, family_target_entry)
{
    fp4lr_problem p = problem(512, 512, 1024, 0, 0, 0);
    p.format = FP4LR_MXFP4;
    fp4lr_plan_opts o = {.family_target = 1};
    fp4lr_plan pl = plan_ok(p, FP4LR_ARCH_SM100A, &o);
    cr_assert_str_eq(pl.entry, "fp4lr_sm100f_mxfp4_dense_m256n256k256_c2_s5");
    fp4lr_plan arch_specific = plan_ok(p, FP4LR_ARCH_SM100A, NULL);
    cr_assert_eq(pl.smem_bytes, arch_specific.smem_bytes);
    fp4lr_plan bad;
    fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &o, &bad);
    cr_assert_eq(st.code, FP4LR_E_INVALID);
    cr_assert_str_eq(st.rule, "FAMILY_TARGET");
}

Test(plan, overrides_tile_and_cluster)
{
    /* 128x128x256 c1 fused r=32: per stage 16384+2048+16384+2048 = 36864;
     * (232448-1024-32768-1024-16384)/36864 = 181248/36864 = 4;
     * tiles ceil(300/128) * ceil(304/128) = 3 * 3 = 9. */
    fp4lr_plan_opts o = {.tile_m = 128, .tile_n = 128, .cluster = 1};
    fp4lr_plan pl = plan_ok(problem(300, 304, 512, 32, 1, 0), FP4LR_ARCH_SM100A, &o);
    cr_assert_str_eq(pl.entry, "fp4lr_sm100a_nvfp4_fused_m128n128k256_c1_s4");
    cr_assert_eq(pl.tile_k, 256);
    cr_assert_eq(pl.tiles, 9);
}

Test(plan, naive_policy_changes_stage_suffix)
{
    fp4lr_plan_opts o = {.policy = FP4LR_POLICY_NAIVE};
    fp4lr_plan pl = plan_ok(problem(512, 512, 512, 0, 0, 0), FP4LR_ARCH_SM100A, &o);
    cr_assert_str_eq(pl.entry, "fp4lr_sm100a_nvfp4_dense_m256n256k256_c2_s3");
    cr_assert_eq(pl.policy, FP4LR_POLICY_NAIVE);
}

Test(plan, forced_stages_in_entry)
{
    fp4lr_plan_opts o = {.force_main_stages = 2};
    fp4lr_plan pl = plan_ok(problem(512, 512, 512, 0, 0, 0), FP4LR_ARCH_SM90A, &o);
    cr_assert_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s2");
}

/* The forced rings reach the budget through the plan options: r = 128 fused beside the
 * 3-slot transform ring with 16-rank low-rank chunks is the s3_t3 kernel (budget.c's
 * sm90_forced_lowrank_ring has the bytes). */
Test(plan, forced_rings_in_entry)
{
    fp4lr_plan_opts o = {.force_transform_stages = 3, .force_lora_chunk = 16};
    fp4lr_plan pl = plan_ok(problem(1024, 1024, 1024, 128, 1, 1), FP4LR_ARCH_SM90A, &o);
    cr_assert_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_t3");
    cr_assert_eq(pl.budget.lora_chunk, 16);
    o.force_lora_stages = 1;
    o.force_lora_chunk = 32;
    pl = plan_ok(problem(1024, 1024, 1024, 128, 1, 1), FP4LR_ARCH_SM90A, &o);
    cr_assert_eq(pl.budget.stages_lora, 1);
    cr_assert_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_t3");
}

Test(plan, resolves_leading_dimensions)
{
    fp4lr_plan pl = plan_ok(problem(64, 96, 128, 16, 0, 0), FP4LR_ARCH_SM90A, NULL);
    cr_assert_eq(pl.problem.ldL, 16);
    cr_assert_eq(pl.problem.ldU, 16);
    cr_assert_eq(pl.problem.ldY, 96);
}

Test(plan, invalid_problem_status)
{
    fp4lr_problem p = problem(64, 64, 100, 0, 0, 0);
    fp4lr_plan pl;
    fp4lr_status s = fp4lr_plan_make(&p, FP4LR_ARCH_SM100A, NULL, &pl);
    cr_assert_eq(s.code, FP4LR_E_INVALID);
    cr_assert_str_eq(s.rule, "K_MULTIPLE");
}

Test(plan, infeasible_budget_status)
{
    fp4lr_plan_opts o = {.smem_capacity = 100000};
    fp4lr_problem p = problem(64, 64, 256, 0, 0, 0);
    fp4lr_plan pl;
    fp4lr_status s = fp4lr_plan_make(&p, FP4LR_ARCH_SM100A, &o, &pl);
    cr_assert_eq(s.code, FP4LR_E_INFEASIBLE);
    cr_assert_str_eq(s.rule, "MAIN_STAGES");
}

Test(plan, bad_arch_and_null)
{
    fp4lr_problem p = problem(64, 64, 256, 0, 0, 0);
    fp4lr_plan pl;
    cr_assert_str_eq(fp4lr_plan_make(&p, (fp4lr_arch)7, NULL, &pl).rule, "ARCH");
    cr_assert_str_eq(fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, NULL, NULL).rule, "NULL_POINTER");
    cr_assert_str_eq(fp4lr_plan_make(NULL, FP4LR_ARCH_SM90A, NULL, &pl).rule, "NULL_POINTER");
}

Test(plan, print)
{
    fp4lr_plan pl = plan_ok(problem(4608, 3072, 3072, 32, 1, 1), FP4LR_ARCH_SM100A, NULL);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(fp4lr_plan_print(f, &pl).code, FP4LR_OK);
    fclose(f);
    cr_assert(strstr(text, "entry: fp4lr_sm100a_nvfp4_fused_m256n256k256_c2_s4"), "%s", text);
    cr_assert(strstr(text, "tensor memory:"), "%s", text);
    free(text);
}

/* opts.graph: plans fp4lr_gemm may launch on a stream captured into a graph (no flag valued
 * per launch): whole tiles, W never converted in the kernel; AUTO swaps where it would
 * without graph (M < 1536 <= N), onto the swapped prepared plan, the dependent of its
 * preparation; every one of the shape table's large shapes has a built kernel; sk and
 * inline are refused by rule GRAPH; swap on takes the swapped prepared plan. */
Test(plan, graph_plans_have_no_per_launch_flags)
{
    static const int64_t shapes[][4] = {
        {4608, 9216, 3072, 32}, {4608, 3072, 12288, 32}, {1024, 6912, 2240, 32}, {1024, 2240, 2304, 32},
        {7168, 9216, 3072, 128}, {8192, 8192, 8192, 0}, {1024, 11200, 2240, 0},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int f = 0; f < 2; f++) {
            fp4lr_problem p = problem(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], shapes[i][3] > 0,
                                      shapes[i][3] > 0);
            p.format = f ? FP4LR_MXFP4 : FP4LR_NVFP4;
            if (p.K % fp4lr_format_k_multiple(p.format))
                continue;
            const fp4lr_plan_opts o = {.graph = 1, .sm_count = 132};
            fp4lr_plan pl = plan_ok(p, FP4LR_ARCH_SM90A, &o);
            cr_expect_eq(pl.schedule, FP4LR_SCHEDULE_DP, "%s", pl.entry);
            cr_expect(!pl.w_inline, "%s", pl.entry);
            const int small_m = shapes[i][0] < 1536 && shapes[i][1] >= 1536;
            cr_expect_eq(pl.swap_ab, small_m, "%s", pl.entry);
            if (small_m)
                cr_expect(pl.w_prep && pl.pdl && strstr(pl.entry, "_w") != NULL, "%s", pl.entry);
            char path[160];
            snprintf(path, sizeof path, "ptx/sm90a/%s.ptx", pl.entry);
            FILE *k = fopen(path, "r");
            cr_expect_not_null(k, "%s is not built", pl.entry);
            if (k)
                fclose(k);
            /* the same problem without graph: AUTO's plan may convert in the kernel */
            if (shapes[i][0] >= 1536 && shapes[i][3] <= 32 && shapes[i][2] <= 12288) {
                const fp4lr_plan_opts fast = {.sm_count = 132};
                cr_expect(plan_ok(p, FP4LR_ARCH_SM90A, &fast).w_inline, "AUTO without graph");
            }
        }
    fp4lr_problem p = problem(4608, 9216, 3072, 32, 1, 1);
    fp4lr_plan pl;
    const fp4lr_plan_opts sk = {.graph = 1, .schedule = FP4LR_SCHEDULE_SK};
    fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &sk, &pl);
    cr_expect_eq(st.code, FP4LR_E_INVALID);
    cr_expect_str_eq(st.rule, "GRAPH", "%s", st.msg);
    const fp4lr_plan_opts inl = {.graph = 1, .w_prep = FP4LR_WPREP_INLINE};
    st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &inl, &pl);
    cr_expect_str_eq(st.rule, "GRAPH", "%s", st.msg);
    fp4lr_problem sana = problem(1024, 6912, 2240, 32, 1, 1);
    const fp4lr_plan_opts sw = {.graph = 1, .swap = FP4LR_SWAP_ON, .sm_count = 132};
    pl = plan_ok(sana, FP4LR_ARCH_SM90A, &sw);
    cr_expect(pl.swap_ab && pl.w_prep && !pl.w_inline, "%s", pl.entry);
    cr_expect_eq(pl.schedule, FP4LR_SCHEDULE_DP);
    cr_expect(strstr(pl.entry, "_yt") != NULL, "%s", pl.entry);
}
