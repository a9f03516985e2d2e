/* The budget solver (host/budget.c) against tables computed by hand: row
 * sizes, stage counts, totals and the sm_100a tensor-memory plan for both
 * architectures, policies and formats and both cluster sizes; the infeasible
 * cases; forced stages; the slicing refusal; request validation. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"

/* sm_100a, NVFP4, 256x256x256, cluster 2, split, dense: the design point. */
static fp4lr_budget_req sm100_req(void)
{
    fp4lr_budget_req r = {.arch = FP4LR_ARCH_SM100A, .format = FP4LR_NVFP4, .tile_m = 256,
                          .tile_n = 256, .tile_k = 256, .cluster = 2, .family = FP4LR_FAMILY_DENSE,
                          .out_bytes = 2, .policy = FP4LR_POLICY_SPLIT};
    return r;
}

/* sm_90a, NVFP4, 128x256x128, cluster 1, split, dense: the Hopper default. */
static fp4lr_budget_req sm90_req(void)
{
    fp4lr_budget_req r = {.arch = FP4LR_ARCH_SM90A, .format = FP4LR_NVFP4, .tile_m = 128,
                          .tile_n = 256, .tile_k = 128, .cluster = 1, .family = FP4LR_FAMILY_DENSE,
                          .out_bytes = 2, .policy = FP4LR_POLICY_SPLIT};
    return r;
}

static fp4lr_budget_req fused(fp4lr_budget_req r, int rank)
{
    r.family = FP4LR_FAMILY_FUSED;
    r.rank = rank;
    r.has_affine = 1;
    return r;
}

static fp4lr_budget solve_ok(fp4lr_budget_req r)
{
    fp4lr_budget b;
    fp4lr_status s = fp4lr_budget_solve(&r, &b);
    cr_assert_eq(s.code, FP4LR_OK, "solve failed: %s: %s", s.rule, s.msg);
    return b;
}

static void expect_fail(fp4lr_budget_req r, fp4lr_code code, const char *rule, const char *needle)
{
    fp4lr_budget b;
    fp4lr_status s = fp4lr_budget_solve(&r, &b);
    cr_assert_eq(s.code, code, "expected %s, got code %d: %s", rule, s.code, s.msg);
    cr_assert_str_eq(s.rule, rule, "message: %s", s.msg);
    cr_assert(strstr(s.msg, needle) != NULL, "'%s' not in '%s'", needle, s.msg);
}

/* Asserts the per-stage sizes, stages and sliced flag of one row. */
static void expect_row(const fp4lr_budget *b, fp4lr_budget_obj obj, int64_t one, int64_t cta,
                       int stages)
{
    const fp4lr_budget_row *row = fp4lr_budget_row_find(b, obj);
    cr_assert_not_null(row, "row %d missing", (int)obj);
    cr_assert_eq(row->bytes_1cta, one, "%s 1-CTA %lld != %lld", row->name,
                 (long long)row->bytes_1cta, (long long)one);
    cr_assert_eq(row->bytes_cta, cta, "%s per-CTA %lld != %lld", row->name,
                 (long long)row->bytes_cta, (long long)cta);
    cr_assert_eq(row->stages, stages, "%s stages %d != %d", row->name, row->stages, stages);
    cr_assert_eq(row->total, cta * stages);
    cr_assert_eq(row->sliced, cta < one);
}

static void expect_tmem(const fp4lr_budget *b, int acc, int acc_stages, int sf, int sf_stages,
                        int lora, int in_place, int total, int alloc)
{
    const fp4lr_tmem_plan *t = &b->tmem;
    cr_assert_eq(t->acc_cols, acc);
    cr_assert_eq(t->acc_stages, acc_stages);
    cr_assert_eq(t->sf_cols_per_stage, sf);
    cr_assert_eq(t->sf_stages, sf_stages, "sf_stages %d != %d", t->sf_stages, sf_stages);
    cr_assert_eq(t->lora_cols, lora);
    cr_assert_eq(t->lora_in_place, in_place);
    cr_assert_eq(t->total_cols, total, "total_cols %d != %d", t->total_cols, total);
    cr_assert_eq(t->alloc_cols, alloc);
}

/* ---- configuration 1: sm_100a NVFP4 256x256x256 c2 split dense ---------------
 * Per CTA (128 rows), K stage 256, kb = 256/64 = 4 atom columns:
 *   A   = 128*256/2 = 16384      SFA = 1*4*512 = 2048
 *   W   = 1-CTA 256*256/2 = 32768, per CTA (pair splits B) 16384
 *   SFW = ceil(256/128)=2 * 4 * 512 = 4096 (replicated)
 *   per stage = 16384+2048+16384+4096 = 38912
 *   epilogue = 128*128 = 16384 x 2; fixed 1024
 *   stages = (232448-1024-32768)/38912 = 198656/38912 = 5
 *   total = 5*38912 + 32768 + 1024 = 228352, slack 4096
 *   barriers: 2*(5 main + 2 queue) + 2*1 acc = 16
 * TMEM: acc 256; SF 4*4 + 2*4*4 = 48/stage; 2*256+48 > 512 -> 1 acc stage;
 *   SF stages min(5, (512-256)/48 = 5) = 5; total 256+240 = 496; alloc 512. */
Test(budget, sm100_required_example_per_stage)
{
    fp4lr_budget b = solve_ok(sm100_req());
    expect_row(&b, FP4LR_OBJ_A, 16384, 16384, 5);
    expect_row(&b, FP4LR_OBJ_SFA, 2048, 2048, 5);
    expect_row(&b, FP4LR_OBJ_W, 32768, 16384, 5);
    expect_row(&b, FP4LR_OBJ_SFW, 4096, 4096, 5);
    expect_row(&b, FP4LR_OBJ_EPILOGUE, 16384, 16384, 2);
    expect_row(&b, FP4LR_OBJ_FIXED, 1024, 1024, 1);
    cr_assert_null(fp4lr_budget_row_find(&b, FP4LR_OBJ_L));
    cr_assert_null(fp4lr_budget_row_find(&b, FP4LR_OBJ_W_BF16));
    cr_assert_eq(b.n_rows, 6);
}

Test(budget, sm100_required_example_solution)
{
    fp4lr_budget b = solve_ok(sm100_req());
    cr_assert_eq(b.per_stage_main, 38912);
    cr_assert_eq(b.stages_main, 5);
    cr_assert_eq(b.stages_lora, 0);
    cr_assert_eq(b.stages_transform, 0);
    cr_assert_eq(b.stages_wb, 2);
    cr_assert_eq(b.barriers, 16);
    cr_assert_eq(b.fixed, 1024);
    cr_assert_eq(b.total_bytes, 228352);
    cr_assert_eq(b.capacity, 232448);
    cr_assert_eq(b.slack, 4096);
    expect_tmem(&b, 256, 1, 48, 5, 0, 0, 496, 512);
}

/* ---- configuration 2: the same, naive --------------------------------------
 *   W per CTA = 32768; per stage = 16384+2048+32768+4096 = 55296
 *   stages = 198656/55296 = 3; total = 165888+32768+1024 = 199680; slack 32768
 *   TMEM SF stages min(3, 5) = 3: total 256+144 = 400, alloc 512. */
Test(budget, sm100_naive_dense)
{
    fp4lr_budget_req r = sm100_req();
    r.policy = FP4LR_POLICY_NAIVE;
    fp4lr_budget b = solve_ok(r);
    expect_row(&b, FP4LR_OBJ_W, 32768, 32768, 3);
    expect_row(&b, FP4LR_OBJ_SFW, 4096, 4096, 3);
    cr_assert_eq(b.per_stage_main, 55296);
    cr_assert_eq(b.stages_main, 3);
    cr_assert_eq(b.total_bytes, 199680);
    cr_assert_eq(b.slack, 32768);
    expect_tmem(&b, 256, 1, 48, 3, 0, 0, 400, 512);
}

/* ---- configuration 3: sm_100a NVFP4 256x256x256 c2 fused r=32 affine -------
 * split: rc = 32, 1 chunk -> 1 low-rank stage
 *   L = 128*32*2 = 8192; U 1-CTA 256*32*2 = 16384, per CTA (256/2)*32*2 = 8192
 *   wc+beta = 2*256*4 = 2048
 *   main = (232448-1024-32768-2048-16384)/38912 = 180224/38912 = 4
 *   total = 155648+16384+2048+32768+1024 = 207872; slack 24576
 * naive: U = 16384, per stage 55296
 *   main = (232448-1024-32768-2048-24576)/55296 = 172032/55296 = 3
 *   total = 165888+24576+2048+32768+1024 = 226304; slack 6144
 * TMEM: separate low-rank columns need 256+256+48 > 512 -> in place;
 *   1 acc stage; SF min(4, 5) = 4 -> 256+192 = 448, alloc 512. */
Test(budget, sm100_fused_r32_split)
{
    fp4lr_budget b = solve_ok(fused(sm100_req(), 32));
    expect_row(&b, FP4LR_OBJ_L, 8192, 8192, 1);
    expect_row(&b, FP4LR_OBJ_U, 16384, 8192, 1);
    expect_row(&b, FP4LR_OBJ_AFFINE, 2048, 2048, 1);
    cr_assert_eq(b.lora_chunk, 32);
    cr_assert_eq(b.stages_main, 4);
    cr_assert_eq(b.total_bytes, 207872);
    cr_assert_eq(b.slack, 24576);
    expect_tmem(&b, 256, 1, 48, 4, 0, 1, 448, 512);
}

Test(budget, sm100_fused_r32_naive)
{
    fp4lr_budget_req r = fused(sm100_req(), 32);
    r.policy = FP4LR_POLICY_NAIVE;
    fp4lr_budget b = solve_ok(r);
    expect_row(&b, FP4LR_OBJ_U, 16384, 16384, 1);
    cr_assert_eq(b.stages_main, 3);
    cr_assert_eq(b.total_bytes, 226304);
    cr_assert_eq(b.slack, 6144);
}

Test(budget, u_per_cta_split_vs_naive_formula)
{
    /* U per CTA = (256/2)*r*2 under split and 256*r*2 under naive while the
     * whole rank is one chunk (r <= 112 here; r = 128 naive is chunked, below). */
    for (int r = 16; r <= 112; r += 16) {
        fp4lr_budget_req q = fused(sm100_req(), r);
        fp4lr_budget b = solve_ok(q);
        cr_assert_eq(b.lora_chunk, r);
        cr_assert_eq(fp4lr_budget_row_find(&b, FP4LR_OBJ_U)->bytes_cta, 128 * r * 2, "r=%d", r);
        q.policy = FP4LR_POLICY_NAIVE;
        b = solve_ok(q);
        cr_assert_eq(b.lora_chunk, r);
        cr_assert_eq(fp4lr_budget_row_find(&b, FP4LR_OBJ_U)->bytes_cta, 256 * r * 2, "r=%d", r);
    }
}

/* ---- naive loses a stage whenever the extra bytes cross a stage boundary ----
 * r = 128 split: rc 128, one stage of L 32768 + U 32768;
 *   main = (232448-1024-32768-2048-65536)/38912 = 131072/38912 = 3.
 * r = 128 naive: rc 128 (98304 ring) leaves 98304/55296 = 1; rc 64 (2 stages of
 *   16384+32768) the same; rc 32 (2 stages of 8192+16384 = 49152) leaves
 *   147456/55296 = 2 main stages, 36864 left = one more low-rank stage -> 3. */
Test(budget, naive_fewer_stages_r128)
{
    fp4lr_budget_req r = fused(sm100_req(), 128);
    fp4lr_budget split = solve_ok(r);
    cr_assert_eq(split.stages_main, 3);
    cr_assert_eq(split.lora_chunk, 128);
    cr_assert_eq(split.stages_lora, 1);
    r.policy = FP4LR_POLICY_NAIVE;
    fp4lr_budget naive = solve_ok(r);
    cr_assert_eq(naive.stages_main, 2);
    cr_assert_eq(naive.lora_chunk, 32);
    cr_assert_eq(naive.stages_lora, 3);
    cr_assert_eq(naive.total_bytes, 110592 + 73728 + 2048 + 32768 + 1024);
}

Test(budget, naive_never_more_stages_than_split)
{
    /* Sweep the capacity: naive charges more per stage (55296 vs 38912), so it
     * never has more stages, and has fewer whenever 38912*k fits but 55296*k
     * does not (e.g. at the default capacity, 5 vs 3). */
    int fewer = 0;
    for (int64_t cap = 120000; cap <= 232448; cap += 4096) {
        fp4lr_budget_req r = sm100_req();
        r.smem_capacity = cap;
        fp4lr_budget split = solve_ok(r);
        r.policy = FP4LR_POLICY_NAIVE;
        fp4lr_budget naive;
        fp4lr_status s = fp4lr_budget_solve(&r, &naive);
        int ns = s.code == FP4LR_OK ? naive.stages_main : 1;
        cr_assert_leq(ns, split.stages_main, "cap %lld", (long long)cap);
        fewer += ns < split.stages_main;
    }
    cr_assert_gt(fewer, 0);
}

/* ---- configuration 4: sm_90a NVFP4 128x256x128 c1 dense ---------------------
 * kb = 128/64 = 2: A = 128*64 = 8192; SFA = 1*2*512 = 1024; W = 256*64 = 16384;
 *   SFW = 2*2*512 = 2048; per stage 27648
 *   W bf16 = 256*64*2 = 32768 a transform slot; epilogue 16384 x 2; fixed 1024
 *   3 transform slots: main = (232448-1024-98304-32768)/27648 = 100352/27648 = 3
 *     (>= 3: the solver keeps the deep ring); total = 82944+98304+32768+1024 = 215040;
 *     slack 17408; barriers 2*(3 main + 3 transform + 2 queue) = 16
 *   2 slots forced: main = (232448-1024-65536-32768)/27648 = 133120/27648 = 4
 *     total = 110592+65536+32768+1024 = 209920; slack 22528; barriers 2*(4+2+2) = 16. */
Test(budget, sm90_default_dense)
{
    fp4lr_budget_req r = sm90_req();
    fp4lr_budget b = solve_ok(r);
    expect_row(&b, FP4LR_OBJ_A, 8192, 8192, 3);
    expect_row(&b, FP4LR_OBJ_SFA, 1024, 1024, 3);
    expect_row(&b, FP4LR_OBJ_W, 16384, 16384, 3);
    expect_row(&b, FP4LR_OBJ_SFW, 2048, 2048, 3);
    expect_row(&b, FP4LR_OBJ_W_BF16, 32768, 32768, 3);
    expect_row(&b, FP4LR_OBJ_EPILOGUE, 16384, 16384, 2);
    cr_assert_eq(b.per_stage_main, 27648);
    cr_assert_eq(b.stages_main, 3);
    cr_assert_eq(b.stages_transform, 3);
    cr_assert_eq(b.barriers, 16);
    cr_assert_eq(b.total_bytes, 215040);
    cr_assert_eq(b.slack, 17408);
    cr_assert_eq(b.tmem.alloc_cols, 0);

    r.force_transform_stages = 2;
    b = solve_ok(r);
    expect_row(&b, FP4LR_OBJ_A, 8192, 8192, 4);
    expect_row(&b, FP4LR_OBJ_W_BF16, 32768, 32768, 2);
    cr_assert_eq(b.stages_main, 4);
    cr_assert_eq(b.stages_transform, 2);
    cr_assert_eq(b.barriers, 16);
    cr_assert_eq(b.total_bytes, 209920);
    cr_assert_eq(b.slack, 22528);

    /* a forced main count the deep ring cannot hold falls back to 2 slots, one below 3 too */
    r.force_transform_stages = 0;
    r.force_main_stages = 4;
    b = solve_ok(r);
    cr_assert_eq(b.stages_transform, 2);
    r.force_main_stages = 2;
    b = solve_ok(r);
    cr_assert_eq(b.stages_transform, 2);
    r.force_main_stages = 3;
    b = solve_ok(r);
    cr_assert_eq(b.stages_transform, 3);
}

/* The pair (tile 256x256, each CTA 128 rows, W whole in each CTA) keeps 2 transform slots
 * and the deeper main ring: its per-CTA objects are those of configuration 4, so
 * main = 133120/27648 = 4 and total 209920 (measured: 3 slots with 3 stages ran the pair at
 * 0.66x of one CTA, 2 slots with 4 at 0.89x).  A forced 3 still gives the deep ring. */
Test(budget, sm90_pair_keeps_two_transform_slots)
{
    fp4lr_budget_req r = sm90_req();
    r.tile_m = 256;
    r.cluster = 2;
    fp4lr_budget b = solve_ok(r);
    expect_row(&b, FP4LR_OBJ_A, 8192, 8192, 4);
    expect_row(&b, FP4LR_OBJ_W_BF16, 32768, 32768, 2);
    cr_assert_eq(b.stages_main, 4);
    cr_assert_eq(b.stages_transform, 2);
    cr_assert_eq(b.total_bytes, 209920);
    r.force_transform_stages = 3;
    b = solve_ok(r);
    cr_assert_eq(b.stages_main, 3);
    cr_assert_eq(b.stages_transform, 3);
    cr_assert_eq(b.total_bytes, 215040);
}

Test(budget, transform_slots_are_2_or_3_on_sm90_only)
{
    fp4lr_budget_req r = sm90_req();
    r.force_transform_stages = 4;
    expect_fail(r, FP4LR_E_INVALID, "TRANSFORM_STAGES", "forced transform slots = 4");
    r.force_transform_stages = 3;
    r.force_main_stages = 4;
    expect_fail(r, FP4LR_E_INFEASIBLE, "MAIN_STAGES", "forced 4 main stages do not fit");
    fp4lr_budget_req q = sm100_req();
    q.force_transform_stages = 2;
    expect_fail(q, FP4LR_E_INVALID, "TRANSFORM_STAGES", "sm100a has no transform ring");
}

/* ---- configuration 5: sm_90a MXFP4 256x256x256 c2 fused r=64 affine ---------
 * m_cta = 128, kb = 256/128 = 2: A = 128*128 = 16384; SFA = 1*2*512 = 1024;
 *   W = 256*128 = 32768 (whole in each CTA); SFW = 2*2*512 = 2048; per stage 52224
 *   W bf16 32768 x 2 = 65536; epilogue 16384 x 1 (one buffer in the sm_90a fused family);
 *   wc and beta slices, one pair per consumer warpgroup: 2 x 2 x 256 x 4 = 4096
 *   rc 64 (1 stage: L 16384 + U 32768 = 49152):
 *     (232448-1024-16384-65536-4096-49152)/52224 = 96256/52224 = 1 -> halve
 *   rc 32 (2 stages of 8192+16384): same 49152 -> 1 -> halve
 *   rc 16 (2 stages of 4096+8192 = 24576): 120832/52224 = 2; 16384 left buys a third
 *     low-rank stage of 12288 (4096 left)
 *   2 x 52224 = 104448 is a multiple of 1024: no ring alignment row
 *   total = 104448+36864+65536+16384+4096+1024 = 228352; slack 4096
 * Nothing is split on sm_90a: naive gives the identical table. */
Test(budget, sm90_mxfp4_pair_fused_split_equals_naive)
{
    fp4lr_budget_req r = fused(sm90_req(), 64);
    r.format = FP4LR_MXFP4;
    r.tile_m = 256, r.tile_n = 256, r.tile_k = 256, r.cluster = 2;
    for (int pol = FP4LR_POLICY_SPLIT; pol <= FP4LR_POLICY_NAIVE; pol++) {
        r.policy = (fp4lr_policy)pol;
        fp4lr_budget b = solve_ok(r);
        expect_row(&b, FP4LR_OBJ_A, 16384, 16384, 2);
        expect_row(&b, FP4LR_OBJ_SFA, 1024, 1024, 2);
        expect_row(&b, FP4LR_OBJ_W, 32768, 32768, 2);
        expect_row(&b, FP4LR_OBJ_SFW, 2048, 2048, 2);
        expect_row(&b, FP4LR_OBJ_L, 4096, 4096, 3);
        expect_row(&b, FP4LR_OBJ_U, 8192, 8192, 3);
        cr_assert_eq(b.lora_chunk, 16);
        expect_row(&b, FP4LR_OBJ_AFFINE, 4096, 4096, 1);
        expect_row(&b, FP4LR_OBJ_EPILOGUE, 16384, 16384, 1);
        cr_assert_null(fp4lr_budget_row_find(&b, FP4LR_OBJ_ALIGN));
        cr_assert_eq(b.total_bytes, 228352);
        cr_assert_eq(b.slack, 4096);
    }
}

/* ---- configuration 6: sm_100a MXFP4 128x128x256 c1 fused r=32 affine --------
 * kb = 2: A = 128*128 = 16384; SFA = 2*512 = 1024; W = 128*128 = 16384;
 *   SFW = 1*2*512 = 1024; per stage 34816; L = U = 128*32*2 = 8192 (1 stage);
 *   wc+beta = 2*128*4 = 1024; epilogue 16384 x 2
 *   main = (232448-1024-32768-1024-16384)/34816 = 181248/34816 = 5
 *   total = 174080+16384+1024+32768+1024 = 225280; slack 7168
 * TMEM: SF = 4*2 + 1*4*2 = 16/stage; separate low-rank 128 cols fit
 *   (2*128+16 <= 512); 2 acc stages fit (2*128+128+16 = 400);
 *   SF stages min(5, (512-256-128)/16 = 8) = 5; total 256+128+80 = 464, alloc 512
 *   barriers 2*(5+1+2) + 2*2 acc + 2 low-rank acc = 22. */
Test(budget, sm100_mxfp4_single_fused)
{
    fp4lr_budget_req r = fused(sm100_req(), 32);
    r.format = FP4LR_MXFP4;
    r.tile_m = 128, r.tile_n = 128, r.cluster = 1;
    fp4lr_budget b = solve_ok(r);
    expect_row(&b, FP4LR_OBJ_A, 16384, 16384, 5);
    expect_row(&b, FP4LR_OBJ_SFA, 1024, 1024, 5);
    expect_row(&b, FP4LR_OBJ_W, 16384, 16384, 5);
    expect_row(&b, FP4LR_OBJ_SFW, 1024, 1024, 5);
    expect_row(&b, FP4LR_OBJ_L, 8192, 8192, 1);
    expect_row(&b, FP4LR_OBJ_U, 8192, 8192, 1);
    expect_row(&b, FP4LR_OBJ_AFFINE, 1024, 1024, 1);
    cr_assert_eq(b.stages_main, 5);
    cr_assert_eq(b.barriers, 22);
    cr_assert_eq(b.total_bytes, 225280);
    cr_assert_eq(b.slack, 7168);
    expect_tmem(&b, 128, 2, 16, 5, 128, 0, 464, 512);
}

/* ---- configuration 7: sm_100a NVFP4 128x64x128 c1 dense ---------------------
 * kb = 2: A = 128*64 = 8192; SFA = 1024; W = 64*64 = 4096;
 *   SFW = ceil(64/128)=1 * 2 * 512 = 1024 (a whole 128-row atom); per stage 14336
 *   main = 198656/14336 = 13; barriers 2*(13+2) + 2*2 = 34 -> 320 B -> fixed 1024
 *   total = 186368+32768+1024 = 220160; slack 12288
 * TMEM: SF 8+8 = 16; 2 acc stages of 64; SF min(13, (512-128)/16 = 24) = 13;
 *   total 128+208 = 336 -> alloc 512. */
Test(budget, sm100_narrow_tile)
{
    fp4lr_budget_req r = sm100_req();
    r.tile_m = 128, r.tile_n = 64, r.tile_k = 128, r.cluster = 1;
    fp4lr_budget b = solve_ok(r);
    expect_row(&b, FP4LR_OBJ_W, 4096, 4096, 13);
    expect_row(&b, FP4LR_OBJ_SFW, 1024, 1024, 13);
    cr_assert_eq(b.stages_main, 13);
    cr_assert_eq(b.barriers, 34);
    cr_assert_eq(b.total_bytes, 220160);
    expect_tmem(&b, 64, 2, 16, 13, 0, 0, 336, 512);
}

Test(budget, fixed_area_grows_with_barriers)
{
    /* 128x64x64 c1: per stage 4096+512+2048+512 = 7168.  Forcing 64 stages:
     * barriers 2*(64+2) + 2*2 acc = 136 -> 1088+32+16 = 1136 B -> fixed 2048.
     * Unforced with 1 MiB: (1048576-1024-32768)/7168 = 141 stages; their 290
     * barriers need 2368 B -> 3072; re-solved: (1048576-3072-32768)/7168 = 141. */
    fp4lr_budget_req r = sm100_req();
    r.tile_m = 128, r.tile_n = 64, r.tile_k = 64, r.cluster = 1;
    r.smem_capacity = 1 << 20;
    r.force_main_stages = 64;
    fp4lr_budget b = solve_ok(r);
    cr_assert_eq(b.per_stage_main, 7168);
    cr_assert_eq(b.barriers, 136);
    cr_assert_eq(b.fixed, 2048);
    r.force_main_stages = 0;
    b = solve_ok(r);
    cr_assert_eq(b.stages_main, 141);
    cr_assert_eq(b.barriers, 290);
    cr_assert_eq(b.fixed, 3072);
    cr_assert_leq(b.total_bytes, b.capacity);
}

Test(budget, extra_lora_stages_from_leftover)
{
    /* sm100 default pair, fused r = 512 split: rc 128 (4 chunks), 2 stages of
     * 32768+32768: main = (232448-1024-32768-2048-131072)/38912 = 65536/38912 = 1
     * -> rc 64, 2 stages of 16384+16384: 131072/38912 = 3, 14336 left (< 32768)
     * -> 2 low-rank stages.  With 1 MiB: rc 128, main many, low-rank up to 4. */
    fp4lr_budget_req r = fused(sm100_req(), 512);
    fp4lr_budget b = solve_ok(r);
    cr_assert_eq(b.lora_chunk, 64);
    cr_assert_eq(b.stages_main, 3);
    cr_assert_eq(b.stages_lora, 2);
    r.smem_capacity = 1 << 20;
    r.force_main_stages = 4;
    b = solve_ok(r);
    cr_assert_eq(b.lora_chunk, 128);
    cr_assert_eq(b.stages_lora, 4);
}

/* ---- forced stages ---------------------------------------------------------- */

Test(budget, forced_stages)
{
    /* Design point forced to 3: total = 3*38912+32768+1024 = 150528, slack 81920;
     * SF TMEM stages follow: min(3, 5) = 3. */
    fp4lr_budget_req r = sm100_req();
    r.force_main_stages = 3;
    fp4lr_budget b = solve_ok(r);
    cr_assert_eq(b.stages_main, 3);
    cr_assert_eq(b.total_bytes, 150528);
    cr_assert_eq(b.slack, 81920);
    cr_assert_eq(b.tmem.sf_stages, 3);
}

Test(budget, forced_one_stage_allowed)
{
    fp4lr_budget_req r = sm90_req();
    r.force_main_stages = 1;
    fp4lr_budget b = solve_ok(r);
    cr_assert_eq(b.stages_main, 1);
    cr_assert_eq(b.total_bytes, 27648 + 65536 + 32768 + 1024);
}

Test(budget, forced_too_many)
{
    fp4lr_budget_req r = sm100_req();
    r.force_main_stages = 6;
    expect_fail(r, FP4LR_E_INFEASIBLE, "MAIN_STAGES", "forced 6 main stages do not fit");
}

/* ---- infeasible --------------------------------------------------------------- */

Test(budget, tile_mma_cannot_issue_sm100_m)
{
    fp4lr_budget_req r = sm100_req();
    r.tile_m = 128; /* 64 rows per CTA in a pair */
    expect_fail(r, FP4LR_E_INFEASIBLE, "TILE_M", "tile the MMA cannot issue");
    r.tile_m = 192, r.cluster = 1;
    expect_fail(r, FP4LR_E_INFEASIBLE, "TILE_M", "tile_m = 192");
}

Test(budget, tile_mma_cannot_issue_sm100_n)
{
    fp4lr_budget_req r = sm100_req();
    r.tile_n = 200; /* a pair needs N % 16 */
    expect_fail(r, FP4LR_E_INFEASIBLE, "TILE_N", "tile_n = 200");
    r.tile_m = 128, r.cluster = 1; /* single CTA: N % 8 holds, but tile 1's SFB */
    expect_fail(r, FP4LR_E_INFEASIBLE, "TILE_N", "not on a TMEM column"); /* starts at row 72 */
    r.tile_n = 160;                /* SFB of every tile on whole TMEM columns */
    solve_ok(r);
    r.tile_n = 512;
    expect_fail(r, FP4LR_E_INFEASIBLE, "TILE_N", "tile_n = 512");
}

Test(budget, tile_mma_cannot_issue_sm90)
{
    fp4lr_budget_req r = sm90_req();
    r.tile_m = 96;
    expect_fail(r, FP4LR_E_INFEASIBLE, "TILE_M", "96 rows per CTA");
    r.tile_m = 128, r.tile_n = 260;
    expect_fail(r, FP4LR_E_INFEASIBLE, "TILE_N", "tile_n = 260");
}

Test(budget, fewer_than_two_main_stages)
{
    /* 100000 - 1024 - 32768 = 66208 holds one 38912-byte stage. */
    fp4lr_budget_req r = sm100_req();
    r.smem_capacity = 100000;
    expect_fail(r, FP4LR_E_INFEASIBLE, "MAIN_STAGES", "fewer than 2 main stages fit");
    expect_fail(r, FP4LR_E_INFEASIBLE, "MAIN_STAGES", "66208 bytes hold 1 stage(s) of 38912");
}

Test(budget, rank_cannot_be_streamed)
{
    /* 120000 B: without low-rank 84160 B hold 2 main stages; the smallest ring
     * (2 stages of L 4096 + U 4096) leaves 67776 B = 1 stage. */
    fp4lr_budget_req r = fused(sm100_req(), 8192);
    r.smem_capacity = 120000;
    expect_fail(r, FP4LR_E_INFEASIBLE, "RANK_STREAM", "rank 8192 cannot be streamed");
}

Test(budget, tmem_overflow)
{
    /* tile_k 2048: kb = 32, SF = 4*32 + 2*4*32 = 384 columns per stage;
     * 256 + 384 = 640 > 512 even with one accumulator stage. */
    fp4lr_budget_req r = sm100_req();
    r.tile_k = 2048;
    r.smem_capacity = 1 << 22;
    r.force_main_stages = 1;
    expect_fail(r, FP4LR_E_INFEASIBLE, "TMEM", "640 columns > 512");
}

/* ---- slicing refusal ------------------------------------------------------------ */

Test(budget, sm90_halving_refused)
{
    /* The converse defect: halving W, SFW, W bf16 and U on Hopper. */
    fp4lr_budget_req r = fused(sm90_req(), 32);
    r.tile_m = 256, r.cluster = 2, r.policy = FP4LR_POLICY_HALVE_ALL;
    expect_fail(r, FP4LR_E_INFEASIBLE, "SM90_NO_SPLIT", "W tile (fp4) is charged 8192");
}

/* The prepared pair (w_prep, cluster 2): its W ring is a per-CTA object too (each CTA's
 * consumers read all 256 rows of a slot; rank 0's multicast fills both), so halving it is
 * refused, and the split table's per-CTA total is one CTA's _w table. */
Test(budget, sm90_prepared_pair_is_one_cta_per_cta)
{
    fp4lr_budget_req one = fused(sm90_req(), 32);
    one.w_prep = 1;
    fp4lr_budget_req pair = one;
    pair.tile_m = 256, pair.cluster = 2;
    fp4lr_budget b1 = solve_ok(one), b2 = solve_ok(pair);
    cr_expect_eq(b2.total_bytes, b1.total_bytes);
    cr_expect_eq(b2.stages_main, b1.stages_main);
    cr_expect_eq(b2.stages_transform, b1.stages_transform);
    pair.policy = FP4LR_POLICY_HALVE_ALL;
    expect_fail(pair, FP4LR_E_INFEASIBLE, "SM90_NO_SPLIT", "W prepared");
}

Test(budget, sm90_edited_row_refused)
{
    fp4lr_budget b = solve_ok(sm90_req());
    cr_assert_eq(fp4lr_budget_check_slicing(&b).code, FP4LR_OK);
    for (int i = 0; i < b.n_rows; i++)
        if (b.rows[i].obj == FP4LR_OBJ_U || b.rows[i].obj == FP4LR_OBJ_W_BF16)
            b.rows[i].bytes_cta = b.rows[i].bytes_1cta / 2;
    fp4lr_status s = fp4lr_budget_check_slicing(&b);
    cr_assert_eq(s.code, FP4LR_E_INFEASIBLE);
    cr_assert_str_eq(s.rule, "SM90_NO_SPLIT");
    cr_assert(strstr(s.msg, "W bf16 staging is charged 16384") != NULL, "%s", s.msg);
}

Test(budget, sm100_sfb_halving_refused)
{
    /* On sm_100a the pair splits W and U only; SFB is replicated. */
    fp4lr_budget_req r = sm100_req();
    r.policy = FP4LR_POLICY_HALVE_ALL;
    expect_fail(r, FP4LR_E_INFEASIBLE, "SM100_REPLICATED", "SFW is charged 2048");
    fp4lr_budget b = solve_ok(sm100_req());
    cr_assert_eq(fp4lr_budget_check_slicing(&b).code, FP4LR_OK);
}

Test(budget, halve_all_single_cta_is_harmless)
{
    /* Without a pair nothing can be halved: the table equals split. */
    fp4lr_budget_req r = sm90_req();
    r.policy = FP4LR_POLICY_HALVE_ALL;
    fp4lr_budget b = solve_ok(r);
    cr_assert_eq(b.total_bytes, 215040);
}

/* ---- request validation ---------------------------------------------------------- */

Test(budget_req, arch)
{
    fp4lr_budget_req r = sm100_req();
    r.arch = (fp4lr_arch)3;
    expect_fail(r, FP4LR_E_INVALID, "ARCH", "arch = 3");
}

Test(budget_req, format)
{
    fp4lr_budget_req r = sm100_req();
    r.format = (fp4lr_format)2;
    expect_fail(r, FP4LR_E_INVALID, "FORMAT", "format = 2");
}

Test(budget_req, family_and_affine)
{
    fp4lr_budget_req r = sm100_req();
    r.family = (fp4lr_family)4;
    expect_fail(r, FP4LR_E_INVALID, "FAMILY", "family = 4");
    r = sm100_req();
    r.has_affine = 1;
    expect_fail(r, FP4LR_E_INVALID, "FAMILY", "dense family has no affine");
}

Test(budget_req, policy)
{
    fp4lr_budget_req r = sm100_req();
    r.policy = (fp4lr_policy)9;
    expect_fail(r, FP4LR_E_INVALID, "POLICY", "policy = 9");
}

Test(budget_req, cluster)
{
    fp4lr_budget_req r = sm100_req();
    r.cluster = 4;
    expect_fail(r, FP4LR_E_INVALID, "CLUSTER", "cluster = 4");
}

Test(budget_req, tile_m)
{
    fp4lr_budget_req r = sm100_req();
    r.tile_m = 255; /* not divisible by the pair */
    expect_fail(r, FP4LR_E_INVALID, "TILE_M", "tile_m = 255");
}

Test(budget_req, tile_n)
{
    fp4lr_budget_req r = sm100_req();
    r.tile_n = 0;
    expect_fail(r, FP4LR_E_INVALID, "TILE_N", "tile_n = 0");
}

Test(budget_req, tile_k)
{
    fp4lr_budget_req r = sm100_req();
    r.tile_k = 100;
    expect_fail(r, FP4LR_E_INVALID, "TILE_K", "tile_k = 100");
    r.tile_k = 64, r.format = FP4LR_MXFP4; /* one MXFP4 atom column is 128 */
    expect_fail(r, FP4LR_E_INVALID, "TILE_K", "multiple of 128");
}

Test(budget_req, rank)
{
    fp4lr_budget_req r = fused(sm100_req(), 17);
    expect_fail(r, FP4LR_E_INVALID, "RANK", "rank 17");
    r = sm100_req();
    r.rank = 32; /* dense */
    expect_fail(r, FP4LR_E_INVALID, "RANK", "dense has no low-rank");
}

Test(budget_req, out_bytes)
{
    fp4lr_budget_req r = sm100_req();
    r.out_bytes = 3;
    expect_fail(r, FP4LR_E_INVALID, "OUT_BYTES", "out_bytes = 3");
}

Test(budget_req, smem)
{
    fp4lr_budget_req r = sm100_req();
    r.smem_capacity = -1;
    expect_fail(r, FP4LR_E_INVALID, "SMEM", "-1");
}

Test(budget_req, stages)
{
    fp4lr_budget_req r = sm100_req();
    r.force_main_stages = -2;
    expect_fail(r, FP4LR_E_INVALID, "STAGES", "-2");
}

Test(budget_req, null)
{
    fp4lr_budget b;
    cr_assert_str_eq(fp4lr_budget_solve(NULL, &b).rule, "NULL_POINTER");
}

/* ---- names and output -------------------------------------------------------------- */

Test(budget, names_round_trip)
{
    fp4lr_policy p;
    fp4lr_family f;
    cr_assert_eq(fp4lr_policy_parse("naive", &p), 0);
    cr_assert_eq(p, FP4LR_POLICY_NAIVE);
    cr_assert_eq(fp4lr_family_parse("fused", &f), 0);
    cr_assert_eq(f, FP4LR_FAMILY_FUSED);
    cr_assert_eq(fp4lr_policy_parse("half", &p), -1);
    cr_assert_str_eq(fp4lr_policy_name(FP4LR_POLICY_SPLIT), "split");
    cr_assert_str_eq(fp4lr_family_name(FP4LR_FAMILY_DENSE), "dense");
}

Test(budget, print_and_json)
{
    fp4lr_budget b = solve_ok(fused(sm100_req(), 32));
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(fp4lr_budget_print(f, &b).code, FP4LR_OK);
    fclose(f);
    cr_assert(strstr(text, "U chunk (bf16)") && strstr(text, "slack 24576 B"), "%s", text);
    free(text);
    f = open_memstream(&text, &len);
    cr_assert_eq(fp4lr_budget_json(f, &b).code, FP4LR_OK);
    fclose(f);
    cr_assert(strstr(text, "\"stages_main\": 4") && strstr(text, "\"lora_in_place\": 1"), "%s",
              text);
    free(text);
}

Test(arch, names_and_capacities)
{
    fp4lr_arch a;
    cr_assert_eq(fp4lr_arch_parse("sm90a", &a), 0);
    cr_assert_eq(a, FP4LR_ARCH_SM90A);
    cr_assert_eq(fp4lr_arch_parse("sm100a", &a), 0);
    cr_assert_eq(a, FP4LR_ARCH_SM100A);
    cr_assert_eq(fp4lr_arch_parse("sm80", &a), -1);
    cr_assert_str_eq(fp4lr_arch_name(FP4LR_ARCH_SM90A), "sm90a");
    cr_assert_str_eq(fp4lr_arch_name(FP4LR_ARCH_SM100A), "sm100a");
    cr_assert_eq(fp4lr_arch_smem_default(FP4LR_ARCH_SM90A), 232448);
    cr_assert_eq(fp4lr_arch_smem_default(FP4LR_ARCH_SM100A), 232448);
    cr_assert_eq(fp4lr_arch_tmem_cols(FP4LR_ARCH_SM100A), 512);
    cr_assert_eq(fp4lr_arch_tmem_cols(FP4LR_ARCH_SM90A), 0);
}

/* ---- the main ring ends on a 1024-byte boundary ----------------------------
 * sm_90a MXFP4 128x256x128: a stage is 8192 + 512 + 16384 + 1024 = 26112 B, half a
 * KiB short of 26 KiB, so odd stage counts leave 512 B before the 1024-aligned
 * transform ring.  Fused r = 1024 without the affine, 3 stages forced:
 *   78336 + 512 pad + 65536 + 16384 (one writeback buffer) + 1024 + 4096 (wc / beta
 *   slices) = 165888 (the kernel's low-rank ring offset)
 *   + 2 low-rank stages of rc 32 (8192 + 16384) = 215040. */
Test(budget, sm90_mxfp4_odd_stages_pad_the_main_ring)
{
    fp4lr_budget_req r = fused(sm90_req(), 1024);
    r.format = FP4LR_MXFP4;
    r.has_affine = 0;
    r.force_main_stages = 3;
    r.force_transform_stages = 2;
    fp4lr_budget b = solve_ok(r);
    expect_row(&b, FP4LR_OBJ_ALIGN, 512, 512, 1);
    cr_assert_eq(b.lora_chunk, 32);
    cr_assert_eq(b.stages_lora, 2);
    cr_assert_eq(b.total_bytes, 215040);
    r.force_main_stages = 4; /* 104448 = 102 KiB: no padding row */
    r.rank = 32;
    b = solve_ok(r);
    cr_assert_null(fp4lr_budget_row_find(&b, FP4LR_OBJ_ALIGN));
}

/* The ring counts and total of one sm_90a fused plan (transform slots, main stages, low-rank
 * chunk and slots, bytes). */
static void expect_rings(const fp4lr_budget *b, int transform, int main, int chunk, int lora, int64_t total)
{
    cr_assert_eq(b->stages_transform, transform);
    cr_assert_eq(b->stages_main, main);
    cr_assert_eq(b->lora_chunk, chunk);
    cr_assert_eq(b->stages_lora, lora);
    cr_assert_eq(b->total_bytes, total);
}

/* ---- forced low-rank ring (measurement: r = 128 beside the 3-slot transform ring) -----------
 * sm_90a NVFP4 fused r = 128, affine: L chunk 128 x rc x 2, U chunk 256 x rc x 2 (rc = 16:
 * 4096 + 8192 = 12288 a slot; rc = 32: 24576).  The solver alone takes 3 transform slots and
 * shrinks the chunk to 16 ranks so that 3 main stages fit beside them: room = 232448 - 1024
 * fixed - 16384 writeback - 98304 transform - 4096 wc/beta - 2 x 12288 = 88064 -> 3 main
 * stages (82944), 5120 left (no third low-rank slot); total 227328 (measured on the H200,
 * e36a593: NVFP4 fused r = 128 +3.3 % against 2 transform slots with 2 slots of 32 ranks).
 * Forced 2 transform slots: 3 main stages, 2 slots of a 32-rank chunk (219136 B).  The 3-slot
 * total again with one slot of a 32-rank chunk. */
Test(budget, sm90_forced_lowrank_ring)
{
    fp4lr_budget_req r = fused(sm90_req(), 128);
    fp4lr_budget b = solve_ok(r);
    expect_rings(&b, 3, 3, 16, 2, 227328);

    r.force_transform_stages = 2;
    b = solve_ok(r);
    expect_rings(&b, 2, 3, 32, 2, 219136);

    r.force_transform_stages = 3;
    r.force_lora_chunk = 16;
    b = solve_ok(r);
    expect_rings(&b, 3, 3, 16, 2, 227328);
    expect_row(&b, FP4LR_OBJ_L, 4096, 4096, 2);
    expect_row(&b, FP4LR_OBJ_U, 8192, 8192, 2);

    r.force_lora_chunk = 32;
    r.force_lora_stages = 1;
    b = solve_ok(r);
    expect_rings(&b, 3, 3, 32, 1, 227328);

    /* forced slots alone: the chunk still shrinks to leave 2 main stages, no slot is added */
    r.force_lora_chunk = 0;
    r.force_lora_stages = 1;
    b = solve_ok(r);
    cr_assert_eq(b.stages_lora, 1);
    cr_assert_eq(b.lora_chunk, 64);
    cr_assert_eq(b.stages_main, 2);

    /* a forced chunk is not shrunk: 1 slot of 128 ranks (98304 B) leaves no main stage */
    r.force_lora_stages = 0;
    r.force_lora_chunk = 128;
    expect_fail(r, FP4LR_E_INFEASIBLE, "LORA_CHUNK", "forced low-rank chunk of 128 ranks");
}

Test(budget, forced_lowrank_ring_is_validated)
{
    fp4lr_budget_req r = fused(sm90_req(), 64);
    r.force_lora_chunk = 24;
    expect_fail(r, FP4LR_E_INVALID, "LORA_CHUNK", "forced low-rank chunk = 24 with rank 64");
    r.force_lora_chunk = 128;
    expect_fail(r, FP4LR_E_INVALID, "LORA_CHUNK", "up to the rank");
    r.force_lora_chunk = 0;
    r.force_lora_stages = 5;
    expect_fail(r, FP4LR_E_INVALID, "LORA_STAGES", "forced low-rank slots = 5");
    fp4lr_budget_req d = sm90_req();
    d.force_lora_stages = 1;
    expect_fail(d, FP4LR_E_INVALID, "LORA_STAGES", "with rank 0");
    d.force_lora_stages = 0;
    d.force_lora_chunk = 16;
    expect_fail(d, FP4LR_E_INVALID, "LORA_CHUNK", "with rank 0");
}

/* The swapped prepared kernels (yt_prepared, the _w<n>_yt ones): the fused family keeps two
 * writeback buffers (the plain prepared one keeps one), both charged in the epilogue row, and
 * the flag needs a prepared W without w_inline. */
Test(budget, sm90_yt_prepared_fused_keeps_two_writeback_buffers)
{
    fp4lr_budget_req r = fused(sm90_req(), 32);
    r.w_prep = 1;
    fp4lr_budget plain = solve_ok(r);
    cr_expect_eq(plain.stages_wb, 1);
    r.yt_prepared = 1;
    fp4lr_budget yt = solve_ok(r);
    cr_expect_eq(yt.stages_wb, 2);
    expect_row(&yt, FP4LR_OBJ_EPILOGUE, 16384, 16384, 2);
    cr_expect_leq(yt.total_bytes, yt.capacity);
    r.tile_n = 160; /* the narrow tile: two 32-column buffers of 8 KiB */
    fp4lr_budget narrow = solve_ok(r);
    cr_expect_eq(narrow.stages_wb, 2);
    expect_row(&narrow, FP4LR_OBJ_EPILOGUE, 8192, 8192, 2);
    fp4lr_budget_req dense = sm90_req();
    dense.w_prep = dense.yt_prepared = 1;
    cr_expect_eq(solve_ok(dense).stages_wb, 2, "dense: two, as always");
    r.w_inline = 1;
    expect_fail(r, FP4LR_E_INVALID, "W_PREP", "yt_prepared");
    r.w_inline = 0;
    r.w_prep = 0;
    expect_fail(r, FP4LR_E_INVALID, "W_PREP", "yt_prepared");
}

/* The fused _w kernels (W prepared, not converted in the kernel, not swapped, 256 wide) take a
 * tile's low-rank chunks past the ring through the W ring, one chunk a W slot: lora_tail counts
 * them, a forced chunk larger than a slot is refused (LORA_TAIL), and the other kernels, whose
 * rings stream every chunk, count none. */
Test(budget, sm90_wprep_fused_tail_through_the_w_ring)
{
    fp4lr_budget_req r = fused(sm90_req(), 128);
    r.w_prep = 1;
    fp4lr_budget b = solve_ok(r);
    cr_expect_eq(b.lora_chunk, 32);
    cr_expect_eq(b.stages_lora, 2);
    cr_expect_eq(b.lora_tail, 2, "r = 128: chunks 2 and 3 through the W ring");
    r.rank = 1024;
    cr_expect_eq(solve_ok(r).lora_tail, 30);
    r.rank = 32;
    cr_expect_eq(solve_ok(r).lora_tail, 0, "one chunk: the ring holds it");

    /* a 64-rank chunk is 49152 B, a W slot 32768 B */
    r.rank = 128;
    r.force_lora_chunk = 64;
    r.force_lora_stages = 1;
    expect_fail(r, FP4LR_E_INFEASIBLE, "LORA_TAIL", "does not fit a W slot of 32768 bytes");
    r.force_lora_stages = 2; /* both chunks in the ring: no tail, the slot size does not matter */
    b = solve_ok(r);
    cr_expect_eq(b.lora_tail, 0);
    cr_expect_leq(b.total_bytes, b.capacity);
    r.force_lora_chunk = 0;
    r.force_lora_stages = 1; /* unforced chunk: shrunk until a tail chunk fits a slot */
    b = solve_ok(r);
    cr_expect_leq(b.lora_chunk, 32);
    cr_expect_eq(b.lora_tail, 128 / b.lora_chunk - 1);

    /* the _x kernels (w_inline) have the tail too, and keep the 32-rank chunk in a one-slot ring
     * (the converters' staging leaves no room for a second) rather than halving it */
    fp4lr_budget_req x = fused(sm90_req(), 128);
    x.w_prep = x.w_inline = 1;
    b = solve_ok(x);
    cr_expect_eq(b.lora_chunk, 32);
    cr_expect_eq(b.stages_lora, 1);
    cr_expect_eq(b.lora_tail, 3, "r = 128 inline: chunks 1-3 through the W ring");
    cr_expect_eq(b.stages_main, 3);
    x.force_lora_stages = 2; /* forced two slots: the chunk is halved instead */
    b = solve_ok(x);
    cr_expect_eq(b.lora_chunk, 16);
    cr_expect_eq(b.lora_tail, 6);
    x.force_lora_stages = 1;
    x.force_lora_chunk = 64;
    expect_fail(x, FP4LR_E_INFEASIBLE, "LORA_TAIL", "does not fit a W slot of 32768 bytes");
    /* the transform kernels (no W ring of prepared chunks) stream every chunk through their ring */
    fp4lr_budget_req t = fused(sm90_req(), 128);
    cr_expect_eq(solve_ok(t).lora_tail, 0);
}
