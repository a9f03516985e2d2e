/* CPU suite: the W-prepared sm_90a dense path (plan->w_prep) - when the planner takes it,
 * the budget table it solves (no fp4 W or SFW in the main stages, the W ring as deep as 3 main
 * stages allow), the entry names, the refusals, and the preparation's size rule. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "budget.h"
#include "plan.h"
#include "support_ptx.h"
#include "sm90a_gemm.h"
#include "sm90a_wprep.h"

static fp4lr_problem dense(int64_t M, int64_t N, int64_t K, fp4lr_format f)
{
    fp4lr_problem p = {.M = M, .N = N, .K = K, .format = f, .out = FP4LR_OUT_BF16};
    return p;
}

static fp4lr_plan plan_ok(fp4lr_problem p, const fp4lr_plan_opts *o)
{
    fp4lr_plan pl;
    fp4lr_status s = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, o, &pl);
    cr_assert_eq(s.code, FP4LR_OK, "plan failed: %s: %s", s.rule, s.msg);
    return pl;
}

static void expect_refused(fp4lr_problem p, fp4lr_arch arch, const fp4lr_plan_opts *o, fp4lr_code code,
                           const char *rule)
{
    fp4lr_plan pl;
    fp4lr_status s = fp4lr_plan_make(&p, arch, o, &pl);
    cr_expect_eq(s.code, code, "%s: %s", s.rule, s.msg);
    cr_expect_str_eq(s.rule, rule, "%s", s.msg);
}

/* AUTO: prepared from M = FP4LR_SM90A_WPREP_MIN_M = 1536 on (measured: M = 1024 0.94-0.97x,
 * 1536 1.02-1.03x, 2048 1.06-1.07x, 4608 and up 1.14-1.32x), inside the kernel (_x) for dense
 * plans and fused ones up to r = 32, by the preparation above (plan.h); ON and OFF force it. */
Test(wprep_plan, auto_takes_it_from_the_threshold_on)
{
    const int64_t at = FP4LR_SM90A_WPREP_MIN_M;
    cr_expect_eq(at, 1536);
    /* below it a dense plan with N >= 1536 is swapped instead (test_swap_plan.c) */
    const fp4lr_plan_opts noswap = {.swap = FP4LR_SWAP_OFF};
    cr_expect_eq(plan_ok(dense(at - 1, 3072, 3072, FP4LR_NVFP4), &noswap).w_prep, 0);
    cr_expect_eq(plan_ok(dense(at - 1, 1400, 3072, FP4LR_NVFP4), NULL).w_prep, 0);
    cr_expect_eq(plan_ok(dense(at, 3072, 3072, FP4LR_NVFP4), NULL).w_prep, 1);
    cr_expect_eq(plan_ok(dense(at, 3072, 3072, FP4LR_NVFP4), NULL).w_inline, 1);
    cr_expect_eq(plan_ok(dense(at - 1, 3072, 3072, FP4LR_NVFP4), &noswap).w_inline, 0);
    cr_expect_eq(plan_ok(dense(at, 3072, 3072, FP4LR_NVFP4), NULL).swap_ab, 0);
    fp4lr_plan_opts on = {.w_prep = FP4LR_WPREP_ON}, off = {.w_prep = FP4LR_WPREP_OFF};
    cr_expect_eq(plan_ok(dense(1, 8, 64, FP4LR_NVFP4), &on).w_prep, 1);
    fp4lr_plan pl = plan_ok(dense(8192, 8192, 8192, FP4LR_NVFP4), &off);
    cr_expect_eq(pl.w_prep, 0);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_t3");
    /* the fused family takes it too; so does the pair, by the preparation (no _x pair) */
    fp4lr_problem fused = dense(8192, 8192, 8192, FP4LR_NVFP4);
    fused.r = 32;
    cr_expect_eq(plan_ok(fused, NULL).w_prep, 1);
    cr_expect_str_eq(plan_ok(fused, NULL).entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4");
    /* every rank converts inline (the low-rank tail through the W ring): r = 128 as 4 chunks
     * of 32 ranks, one in the ring */
    fused.r = 128;
    pl = plan_ok(fused, NULL);
    cr_expect_eq(pl.w_inline, 1);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4");
    cr_expect_eq(pl.budget.lora_chunk, 32);
    cr_expect_eq(pl.budget.stages_lora, 1);
    cr_expect_eq(pl.budget.lora_tail, 3);
    fused.r = 1024;
    cr_expect_str_eq(plan_ok(fused, NULL).entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4");
    fp4lr_plan_opts fon = {.w_prep = FP4LR_WPREP_ON};
    fused.r = 48;
    cr_expect_str_eq(plan_ok(fused, &fon).entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w4");
    fused.r = 128;
    cr_expect_str_eq(plan_ok(fused, &fon).entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_w4");
    fused.r = 32;
    cr_expect_str_eq(plan_ok(fused, &fon).entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w4");
    fp4lr_plan_opts pair = {.cluster = 2, .tile_m = 256};
    pl = plan_ok(dense(8192, 8192, 8192, FP4LR_NVFP4), &pair);
    cr_expect_eq(pl.w_prep, 1);
    cr_expect_eq(pl.w_inline, 0);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_dense_m256n256k128_c2_s3_w5");
    cr_expect_str_eq(plan_ok(fused, &pair).entry, "fp4lr_sm90a_nvfp4_fused_m256n256k128_c2_s4_w4");
    fused.r = 128;
    cr_expect_str_eq(plan_ok(fused, &pair).entry, "fp4lr_sm90a_nvfp4_fused_m256n256k128_c2_s3_w4");
    /* the pair prepares W below the threshold too; with w_prep off it keeps the transform */
    cr_expect_str_eq(plan_ok(dense(1024, 2240, 2304, FP4LR_NVFP4), &pair).entry,
                     "fp4lr_sm90a_nvfp4_dense_m256n256k128_c2_s3_w5");
    fp4lr_plan_opts pair_off = {.cluster = 2, .tile_m = 256, .w_prep = FP4LR_WPREP_OFF};
    cr_expect_str_eq(plan_ok(dense(8192, 8192, 8192, FP4LR_NVFP4), &pair_off).entry,
                     "fp4lr_sm90a_nvfp4_dense_m256n256k128_c2_s4");
}

/* The fused plans: at most 4 main stages, the rest to the W ring and the low-rank ring
 * (r = 128: 3 main, 4 W slots, 2 low-rank slots of 32 ranks: 27648 + 131072 + 49152 + 16384
 * writeback + 4096 wc/beta + 1024 = 229376 B). */
Test(wprep_plan, fused_rings)
{
    const fp4lr_plan_opts on = {.w_prep = FP4LR_WPREP_ON};
    fp4lr_problem p = dense(4608, 9216, 3072, FP4LR_NVFP4);
    p.r = 128, p.has_wc = p.has_beta = 1;
    fp4lr_plan pl = plan_ok(p, &on);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_w4");
    cr_expect_eq(pl.budget.stages_lora, 2);
    cr_expect_eq(pl.budget.lora_chunk, 32);
    cr_expect_eq(pl.smem_bytes, 229376);
    p.r = 0;
    pl = plan_ok(p, &on);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w5");
    cr_expect_eq(pl.budget.stages_main, 4, "capped at 4: A alone needs no deeper ring");
}

/* NVFP4: 3 main stages of A + SFA (9216 B) beside 5 W slots and 2 writeback buffers:
 * 27648 + 163840 + 32768 + 1024 = 225280 B.  MXFP4 (8704 B a stage) fits a 4th stage:
 * 34816 + 163840 + 32768 + 1024 = 232448, the H200's opt-in limit exactly. */
Test(wprep_plan, budget_rows_and_entries)
{
    const fp4lr_plan_opts on = {.w_prep = FP4LR_WPREP_ON};
    fp4lr_plan pl = plan_ok(dense(4608, 9216, 3072, FP4LR_NVFP4), &on);
    cr_assert_eq(pl.w_prep, 1);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5");
    const fp4lr_budget *b = &pl.budget;
    cr_expect_eq(b->per_stage_main, 9216);
    cr_expect_eq(b->stages_main, 3);
    cr_expect_eq(b->stages_transform, 5);
    cr_expect_eq(b->total_bytes, 225280);
    cr_expect_null(fp4lr_budget_row_find(b, FP4LR_OBJ_W), "no fp4 W in the main stages");
    cr_expect_null(fp4lr_budget_row_find(b, FP4LR_OBJ_SFW), "no SFW in the main stages");
    const fp4lr_budget_row *ring = fp4lr_budget_row_find(b, FP4LR_OBJ_W_BF16);
    cr_assert_not_null(ring);
    cr_expect_str_eq(ring->pipeline, "w-ring");
    cr_expect_eq(ring->bytes_cta, 32768);
    cr_expect_eq(ring->stages, 5);

    pl = plan_ok(dense(4608, 9216, 3072, FP4LR_MXFP4), &on);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_mxfp4_dense_m128n256k128_c1_s4_w5");
    cr_expect_eq(pl.budget.per_stage_main, 8704);
    cr_expect_eq(pl.smem_bytes, 232448);
    cr_expect_eq(pl.budget.slack, 0);
}

/* Forced counts: 4 main stages leave room for 4 slots (NVFP4); forced slots 2..5 are taken
 * as they are; 6 is refused, and 4 without the preparation (the transform ring has 2 or 3). */
Test(wprep_plan, forced_stages_and_slots)
{
    fp4lr_plan_opts o = {.force_main_stages = 4, .w_prep = FP4LR_WPREP_ON};
    fp4lr_plan pl = plan_ok(dense(4608, 9216, 3072, FP4LR_NVFP4), &o);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_w4");
    o = (fp4lr_plan_opts){.force_main_stages = 3, .w_prep = FP4LR_WPREP_ON};
    pl = plan_ok(dense(4608, 9216, 3072, FP4LR_MXFP4), &o);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_mxfp4_dense_m128n256k128_c1_s3_w5");
    for (int slots = 2; slots <= 5; slots++) {
        o = (fp4lr_plan_opts){.force_transform_stages = slots, .w_prep = FP4LR_WPREP_ON};
        pl = plan_ok(dense(4608, 9216, 3072, FP4LR_NVFP4), &o);
        cr_expect_eq(pl.budget.stages_transform, slots);
        cr_expect_geq(pl.budget.stages_main, 3);
    }
    o = (fp4lr_plan_opts){.force_transform_stages = 6, .w_prep = FP4LR_WPREP_ON};
    expect_refused(dense(4608, 9216, 3072, FP4LR_NVFP4), FP4LR_ARCH_SM90A, &o, FP4LR_E_INVALID, "TRANSFORM_STAGES");
    o = (fp4lr_plan_opts){.force_transform_stages = 4, .w_prep = FP4LR_WPREP_OFF};
    expect_refused(dense(4608, 9216, 3072, FP4LR_NVFP4), FP4LR_ARCH_SM90A, &o, FP4LR_E_INVALID, "TRANSFORM_STAGES");
}

/* The ping-pong tile (tile_n 128, NVFP4): the ring's slots are 16 KiB, so the solver takes 10
 * beside 3 main stages (the same 160 KiB as 5 of the 256-wide tile's); forced 4 stages with 8
 * slots is the other built dense layout; 11 slots are refused by the budget, 9 (what 4 stages
 * alone solve to) by the plan as not built; w_prep auto means on.  Fused: a low-rank ring per
 * consumer (charged twice) and two writeback buffers: r = 32 keeps 8 W slots, and a swapped
 * (yt_prepared) request keeps the 5-slot cap. */
Test(wprep_plan, pingpong_tile_budget)
{
    fp4lr_plan_opts o = {.tile_n = 128};
    fp4lr_plan pl = plan_ok(dense(4608, 3072, 3072, FP4LR_NVFP4), &o);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_dense_m128n128k128_c1_s3_w10_pp");
    cr_expect_eq(pl.w_prep, 1);
    cr_expect_eq(pl.w_inline, 0);
    cr_expect_eq(pl.schedule, FP4LR_SCHEDULE_DP);
    cr_expect_eq(pl.budget.stages_transform, 10);
    cr_expect_eq(pl.budget.total_bytes, 225280);
    cr_expect_eq(pl.tiles, 36 * 24);
    const fp4lr_budget_row *ring = fp4lr_budget_row_find(&pl.budget, FP4LR_OBJ_W_BF16);
    cr_assert_not_null(ring);
    cr_expect_eq(ring->bytes_cta, 16384);
    o = (fp4lr_plan_opts){.tile_n = 128, .force_main_stages = 4, .force_transform_stages = 8};
    pl = plan_ok(dense(4608, 3072, 3072, FP4LR_NVFP4), &o);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_dense_m128n128k128_c1_s4_w8_pp");
    cr_expect_eq(pl.budget.total_bytes, 201728);
    o = (fp4lr_plan_opts){.tile_n = 128, .force_transform_stages = 11};
    expect_refused(dense(4608, 3072, 3072, FP4LR_NVFP4), FP4LR_ARCH_SM90A, &o, FP4LR_E_INVALID, "TRANSFORM_STAGES");
    o = (fp4lr_plan_opts){.tile_n = 128, .force_main_stages = 4};
    expect_refused(dense(4608, 3072, 3072, FP4LR_NVFP4), FP4LR_ARCH_SM90A, &o, FP4LR_E_UNSUPPORTED, "TILE_N");
    fp4lr_budget_req req = {.arch = FP4LR_ARCH_SM90A, .format = FP4LR_NVFP4, .tile_m = 128, .tile_n = 128,
                            .tile_k = 128, .cluster = 1, .family = FP4LR_FAMILY_FUSED, .rank = 32, .has_affine = 1,
                            .out_bytes = 2, .w_prep = 1};
    fp4lr_budget b;
    fp4lr_status st = fp4lr_budget_solve(&req, &b);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    cr_expect_eq(b.stages_main, 3);
    cr_expect_eq(b.stages_transform, 8);
    cr_expect_eq(b.stages_wb, 2);
    cr_expect_eq(b.lora_chunk, 32);
    cr_expect_eq(b.stages_lora, 1);
    const fp4lr_budget_row *l = fp4lr_budget_row_find(&b, FP4LR_OBJ_L);
    cr_assert_not_null(l);
    cr_expect_eq(l->stages, 2, "one slot in each consumer's ring");
    cr_expect_eq(l->total, 2 * 128 * 32 * 2);
    cr_expect_eq(b.total_bytes, 227328);
    req.yt_prepared = 1; /* the swapped prepared kernels: no ping-pong, the 256-wide cap */
    st = fp4lr_budget_solve(&req, &b);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    cr_expect_leq(b.stages_transform, 5);
    req = (fp4lr_budget_req){.arch = FP4LR_ARCH_SM90A, .format = FP4LR_NVFP4, .tile_m = 128, .tile_n = 128,
                             .tile_k = 128, .cluster = 1, .family = FP4LR_FAMILY_DENSE, .out_bytes = 2, .w_prep = 1};
    st = fp4lr_budget_solve(&req, &b);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    cr_expect_eq(b.stages_transform, 10);
}

/* ON where no W-prepared kernel exists is refused by name; a bad enum too; and the budget
 * refuses a request that asks for it outside sm_90a one CTA and the plain 256-wide pair. */
Test(wprep_plan, refusals)
{
    fp4lr_plan_opts on = {.w_prep = FP4LR_WPREP_ON};
    fp4lr_plan_opts pair = {.w_prep = FP4LR_WPREP_ON, .cluster = 2, .tile_m = 256};
    cr_expect_str_eq(plan_ok(dense(4608, 9216, 3072, FP4LR_NVFP4), &pair).entry,
                     "fp4lr_sm90a_nvfp4_dense_m256n256k128_c2_s3_w5");
    fp4lr_budget_req pr = {.arch = FP4LR_ARCH_SM90A, .format = FP4LR_NVFP4, .tile_m = 256, .tile_n = 256,
                           .tile_k = 128, .cluster = 2, .family = FP4LR_FAMILY_DENSE, .out_bytes = 2, .w_prep = 1};
    fp4lr_budget pb;
    cr_expect_eq(fp4lr_budget_solve(&pr, &pb).code, FP4LR_OK);
    pr.w_inline = 1; /* no _x pair */
    cr_expect_str_eq(fp4lr_budget_solve(&pr, &pb).rule, "W_PREP");
    pr.w_inline = 0, pr.yt_prepared = 1; /* no swapped pair */
    cr_expect_str_eq(fp4lr_budget_solve(&pr, &pb).rule, "W_PREP");
    pr.yt_prepared = 0, pr.tile_n = 128; /* no 128-wide pair */
    cr_expect_str_eq(fp4lr_budget_solve(&pr, &pb).rule, "W_PREP");
    expect_refused(dense(4608, 9216, 3072, FP4LR_NVFP4), FP4LR_ARCH_SM100A, &on, FP4LR_E_UNSUPPORTED, "W_PREP");
    fp4lr_plan_opts bad = {.w_prep = (fp4lr_wprep)7};
    expect_refused(dense(4608, 9216, 3072, FP4LR_NVFP4), FP4LR_ARCH_SM90A, &bad, FP4LR_E_INVALID, "W_PREP");

    fp4lr_budget_req r = {.arch = FP4LR_ARCH_SM100A, .format = FP4LR_NVFP4, .tile_m = 128, .tile_n = 256,
                          .tile_k = 256, .cluster = 1, .family = FP4LR_FAMILY_DENSE, .out_bytes = 2, .w_prep = 1};
    fp4lr_budget b;
    fp4lr_status s = fp4lr_budget_solve(&r, &b);
    cr_expect_eq(s.code, FP4LR_E_INVALID);
    cr_expect_str_eq(s.rule, "W_PREP");
}

/* The names the parsers take, and the preparation's sizes and 31-bit rule. */
Test(wprep_plan, names_sizes_and_the_chunk_limit)
{
    cr_expect_eq(fp4lr_wprep_parse("auto"), FP4LR_WPREP_AUTO);
    cr_expect_eq(fp4lr_wprep_parse("on"), FP4LR_WPREP_ON);
    cr_expect_eq(fp4lr_wprep_parse("off"), FP4LR_WPREP_OFF);
    cr_expect_eq(fp4lr_wprep_parse("yes"), -1);
    cr_expect_eq(fp4lr_wprep_parse(NULL), -1);
    cr_expect_null(fp4lr_wprep_name((fp4lr_wprep)9));
    cr_expect_str_eq(fp4lr_sm90a_wprep_entry(FP4LR_NVFP4, 0), "fp4lr_sm90a_nvfp4_wprep");
    cr_expect_str_eq(fp4lr_sm90a_wprep_entry(FP4LR_MXFP4, 0), "fp4lr_sm90a_mxfp4_wprep");
    cr_expect_str_eq(fp4lr_sm90a_wprep_entry(FP4LR_NVFP4, 1), "fp4lr_sm90a_nvfp4_wprep_pdl");
    cr_expect_str_eq(fp4lr_sm90a_wprep_entry(FP4LR_MXFP4, 1), "fp4lr_sm90a_mxfp4_wprep_pdl");
    fp4lr_problem p = dense(4608, 9216, 3072, FP4LR_NVFP4);
    cr_expect_eq(fp4lr_sm90a_wprep_bytes(&p), (size_t)9216 * 3072 * 2);
    cr_expect_eq(fp4lr_sm90a_wprep_check(&p).code, FP4LR_OK);
    p = dense(1, ((int64_t)1 << 20) - 1, (int64_t)1 << 16, FP4LR_NVFP4); /* 2^30 - 2^10 chunks */
    cr_expect_eq(fp4lr_sm90a_wprep_check(&p).code, FP4LR_OK);
    p = dense(1, (int64_t)1 << 20, (int64_t)1 << 16, FP4LR_NVFP4); /* 2^20 * 2^10 chunks = 2^30 */
    fp4lr_status s = fp4lr_sm90a_wprep_check(&p);
    cr_expect_eq(s.code, FP4LR_E_UNSUPPORTED);
    cr_expect_str_eq(s.rule, "WPREP_SIZE");
    /* AUTO falls back to the transform for such a W; ON refuses it by the same rule */
    p.M = 4096;
    cr_expect_eq(plan_ok(p, NULL).w_prep, 0);
    fp4lr_plan_opts on = {.w_prep = FP4LR_WPREP_ON};
    expect_refused(p, FP4LR_ARCH_SM90A, &on, FP4LR_E_UNSUPPORTED, "WPREP_SIZE");
}

/* The plan's printout says what the preparation does and costs. */
Test(wprep_plan, print_names_the_preparation)
{
    const fp4lr_plan_opts on = {.w_prep = FP4LR_WPREP_ON};
    fp4lr_plan pl = plan_ok(dense(4608, 9216, 3072, FP4LR_NVFP4), &on);
    char buf[8192] = {0};
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    cr_assert_not_null(f);
    cr_assert_eq(fp4lr_plan_print(f, &pl).code, FP4LR_OK);
    fclose(f);
    cr_expect(strstr(buf, "W prepared: fp4lr_sm90a_nvfp4_wprep converts W once per launch into a 56623104-byte") != NULL,
              "%s", buf);
    cr_expect(strstr(buf, "W prepared (f16/bf16)") != NULL, "%s", buf);
}

/* INLINE (W converted in the kernel, opt-in): the _x entry, the converter warps' staging row
 * (6 x 4 KiB), which leaves 4 W slots beside 4 main stages (dense; fused 4 or 3); one CTA,
 * sm90a only; AUTO
 * never picks it; its name round-trips. */
Test(wprep_plan, inline_conversion_plans)
{
    fp4lr_plan_opts in = {.w_prep = FP4LR_WPREP_INLINE};
    fp4lr_plan pl = plan_ok(dense(4608, 3072, 3072, FP4LR_NVFP4), &in);
    cr_expect(pl.w_prep && pl.w_inline);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4");
    const fp4lr_budget_row *x = fp4lr_budget_row_find(&pl.budget, FP4LR_OBJ_XSTAGE);
    cr_assert_not_null(x);
    cr_expect_eq(x->total, 6 * 4096);
    cr_expect_null(fp4lr_budget_row_find(&pl.budget, FP4LR_OBJ_W), "no fp4 W in the main stages");
    cr_expect_eq(pl.smem_bytes, 4 * 9216 + 4 * 32768 + 2 * 16384 + 1024 + 6 * 4096);
    pl = plan_ok(dense(1000, 2240, 2240, FP4LR_NVFP4), &in);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4", "any M: the option decides");
    pl = plan_ok(dense(4608, 3072, 3072, FP4LR_MXFP4), &in);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_mxfp4_dense_m128n256k128_c1_s4_x4");
    cr_expect_eq(plan_ok(dense(4608, 3072, 3072, FP4LR_NVFP4), NULL).w_inline, 1, "AUTO takes it from M = 1536");

    /* fused: 4 main stages at r = 0 (affine only), 3 from r = 32 on with the affine slices */
    fp4lr_problem fused = dense(4608, 3072, 3072, FP4LR_NVFP4);
    fused.has_wc = fused.has_beta = 1;
    pl = plan_ok(fused, &in);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_x4");
    fused.r = 32;
    pl = plan_ok(fused, &in);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4");
    cr_expect_not_null(fp4lr_budget_row_find(&pl.budget, FP4LR_OBJ_XSTAGE));
    /* the fused _x kernels' writeback: one 64-column buffer (16 KiB) of their own, like the
     * other fused kernels, and the converters' staging as the second once they are done
     * (tools/sm90a_ptx/kstate.py XDBUF): that row must hold a whole buffer */
    const fp4lr_budget_row *wb = fp4lr_budget_row_find(&pl.budget, FP4LR_OBJ_EPILOGUE);
    cr_assert_not_null(wb);
    cr_expect_eq(wb->bytes_cta, 16384);
    cr_expect_eq(pl.budget.stages_wb, 1);
    const fp4lr_budget_row *xs = fp4lr_budget_row_find(&pl.budget, FP4LR_OBJ_XSTAGE);
    cr_expect_geq(xs->bytes_cta, wb->bytes_cta);
    cr_expect_str_eq(xs->name, "W converter staging, writeback 2");
    cr_expect_eq(pl.smem_bytes, 3 * 9216 + 4 * 32768 + 8192 + 16384 + 4096 + 16384 + 1024 + 6 * 4096,
                 "3 stages, W ring, L + U at r = 32, wc / beta, writeback, barriers, converters");
    fp4lr_plan_opts on = {.w_prep = FP4LR_WPREP_ON};
    const fp4lr_plan pw = plan_ok(fused, &on);
    wb = fp4lr_budget_row_find(&pw.budget, FP4LR_OBJ_EPILOGUE);
    cr_assert_not_null(wb);
    cr_expect_eq(wb->bytes_cta, 16384, "%s", pw.entry);
    cr_expect_eq(pw.budget.stages_wb, 1, "%s", pw.entry);
    fused.format = FP4LR_MXFP4;
    fused.r = 1024;
    cr_expect_str_eq(plan_ok(fused, &in).entry, "fp4lr_sm90a_mxfp4_fused_m128n256k128_c1_s3_x4");
    cr_expect_eq(plan_ok(fused, NULL).w_inline, 1, "AUTO converts inline at every rank");
    fp4lr_plan_opts pair = {.w_prep = FP4LR_WPREP_INLINE, .cluster = 2, .tile_m = 256};
    expect_refused(dense(4608, 3072, 3072, FP4LR_NVFP4), FP4LR_ARCH_SM90A, &pair, FP4LR_E_UNSUPPORTED, "W_PREP");
    expect_refused(dense(4608, 3072, 3072, FP4LR_NVFP4), FP4LR_ARCH_SM100A, &in, FP4LR_E_UNSUPPORTED, "W_PREP");
    fp4lr_plan_opts bad = {.w_prep = (fp4lr_wprep)4};
    expect_refused(dense(64, 64, 64, FP4LR_NVFP4), FP4LR_ARCH_SM90A, &bad, FP4LR_E_INVALID, "W_PREP");

    cr_expect_str_eq(fp4lr_wprep_name(FP4LR_WPREP_INLINE), "inline");
    cr_expect_eq(fp4lr_wprep_parse("inline"), FP4LR_WPREP_INLINE);
    fp4lr_budget_req req = {.arch = FP4LR_ARCH_SM90A, .format = FP4LR_NVFP4, .tile_m = 128, .tile_n = 256,
                            .tile_k = 128, .cluster = 1, .family = FP4LR_FAMILY_DENSE, .out_bytes = 2,
                            .w_inline = 1};
    fp4lr_budget b;
    fp4lr_status st = fp4lr_budget_solve(&req, &b);
    cr_expect_eq(st.code, FP4LR_E_INVALID, "w_inline without w_prep: %s", st.msg);
    cr_expect_str_eq(st.rule, "W_PREP");
}

/* The printout says that the kernel converts W itself. */
Test(wprep_plan, print_names_the_inline_conversion)
{
    fp4lr_plan_opts in = {.w_prep = FP4LR_WPREP_INLINE};
    fp4lr_plan pl = plan_ok(dense(4608, 3072, 3072, FP4LR_NVFP4), &in);
    char buf[8192] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    cr_assert_not_null(f);
    cr_expect_eq(fp4lr_plan_print(f, &pl).code, FP4LR_OK);
    fclose(f);
    cr_expect(strstr(buf, "W converted in the kernel") != NULL, "%s", buf);
    cr_expect(strstr(buf, "W converter staging") != NULL, "%s", buf);
    cr_expect(strstr(buf, "_wprep converts") == NULL, "no preparation launch: %s", buf);
}

/* fp4lr_sm90a_xconv_built names exactly the _x kernels the generator writes (both formats). */
Test(wprep_plan, xconv_built_matches_the_generator) { tsupport_expect_xconv_table(fp4lr_sm90a_xconv_built, ""); }

/* At any shared-memory capacity AUTO names a built _x kernel or none (below 227 KiB the
 * solver's _x layouts differ; AUTO then keeps the preparation). */
Test(wprep_plan, auto_plans_only_built_x_kernels)
{
    int inline_plans = 0, fallbacks = 0;
    for (int cap = 200704; cap <= 232448; cap += 1024)
        for (int fmt = 0; fmt < 2; fmt++)
            for (int c = 0; c < 4; c++) {
                fp4lr_problem p = dense(4608, 3072, 3072, fmt ? FP4LR_MXFP4 : FP4LR_NVFP4);
                p.r = c == 3 ? 32 : c == 2 ? 16 : 0;
                p.has_wc = p.has_beta = c > 0;
                fp4lr_plan_opts o = {.smem_capacity = cap};
                fp4lr_plan pl;
                if (fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &o, &pl).code != FP4LR_OK)
                    continue;
                if (!pl.w_inline) {
                    fallbacks += pl.w_prep;
                    continue;
                }
                inline_plans++;
                char path[256];
                snprintf(path, sizeof path, "ptx/sm90a/%s.ptx", pl.entry);
                FILE *fp = fopen(path, "r");
                cr_expect_not_null(fp, "capacity %d: AUTO plans %s, which is not built", cap, pl.entry);
                if (fp)
                    fclose(fp);
            }
    cr_expect_gt(inline_plans, 0);
    cr_expect_gt(fallbacks, 0, "some capacity solves to an unbuilt _x layout: the check can fail");
}
