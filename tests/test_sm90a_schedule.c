/* CPU suite: the sm_90a tile walk (fp4lr_sm90a_schedule) and a C mirror of the kernels'
 * unit walk (unit_first / unit_next / unit_bounds of tools/sm90a_ptx/walk.py and the owner's
 * peer loop of tools/sm90a_ptx/streamk.py): every (tile, K stage) is computed exactly once, each cluster hands
 * at most one partial to an owner, and every owner waits only for clusters that never
 * wait before publishing. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "sm90a_gemm.h"

/* The kernels' slice of cluster b: [b*q + min(b, r), + q + (b < r)), clipped to T. */
static void slice(const fp4lr_sm90a_sk *w, int64_t tiles, int64_t nks, uint32_t b, uint32_t *it0, uint32_t *it1)
{
    const uint32_t t = (uint32_t)((tiles - w->dp_tiles) * nks);
    uint32_t s0 = b * w->q + (b < w->r ? b : w->r);
    uint32_t s1 = s0 + w->q + (b < w->r ? 1 : 0);
    *it0 = s0 < t ? s0 : t;
    *it1 = s1 < t ? s1 : t;
}

/* Walks every cluster's units as the kernels do and checks coverage and the fixup roles. */
static void check_walk(const fp4lr_sm90a_sk *w, int64_t tiles, int64_t nks)
{
    const int g = w->clusters;
    unsigned char *done = calloc((size_t)(tiles * nks), 1);
    int *partials = calloc((size_t)g, sizeof(int));
    cr_assert(done && partials);
    for (int b = 0; b < g; b++) {
        uint32_t it0, it1;
        slice(w, tiles, nks, (uint32_t)b, &it0, &it1);
        /* data-parallel tiles, then the slice, one unit per tile it touches */
        for (int64_t tile = b; tile < w->dp_tiles; tile += g)
            for (int64_t k = 0; k < nks; k++)
                done[tile * nks + k]++;
        for (uint32_t it = it0; it < it1;) {
            const int64_t tile = w->dp_tiles + it / nks, kb = it % nks;
            int64_t ke = kb + (it1 - it);
            if (ke > nks)
                ke = nks;
            for (int64_t k = kb; k < ke; k++)
                done[tile * nks + k]++;
            if (kb > 0) { /* contributor: its first split unit only */
                cr_expect_eq(it, it0, "cluster %d: a partial that is not its first split unit", b);
                partials[b]++;
            } else if (ke < nks) { /* owner: its last unit, waiting for b+1, ... */
                cr_expect_eq(it + (uint32_t)(ke - kb), it1, "cluster %d owns a tile before its slice ends", b);
                const uint32_t tile_end = (uint32_t)((tile - w->dp_tiles + 1) * nks);
                int64_t covered = ke;
                for (uint32_t b2 = (uint32_t)b + 1; b2 < (uint32_t)g; b2++) {
                    uint32_t s0, s1;
                    slice(w, tiles, nks, b2, &s0, &s1);
                    if (s0 >= tile_end)
                        break;
                    if (s0 == s1)
                        continue;
                    covered += (s1 < tile_end ? s1 : tile_end) - s0;
                }
                cr_expect_eq(covered, nks, "tile %lld: the owner and its contributors cover %lld of %lld stages",
                             (long long)tile, (long long)covered, (long long)nks);
            }
            it += (uint32_t)(ke - kb);
        }
    }
    for (int64_t i = 0; i < tiles * nks; i++)
        cr_expect_eq(done[i], 1, "tile %lld stage %lld computed %d times", (long long)(i / nks),
                     (long long)(i % nks), done[i]);
    for (int b = 0; b < g; b++)
        cr_expect_leq(partials[b], 1, "cluster %d writes %d partials into its one slot", b, partials[b]);
    free(done);
    free(partials);
}

Test(sm90a_schedule, auto_keeps_full_waves_whole)
{
    fp4lr_sm90a_sk w;
    /* flux-qkv: 36 x 36 tiles on 132 SMs, 9.8 waves: 98 % busy (above 0.96: whole; split, it
     * lost up to 4 % on one row of the A/B that set the threshold) */
    cr_assert_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 1296, 24, 132, &w).code, FP4LR_OK);
    cr_expect_eq(w.split, 0);
    cr_expect_eq(w.clusters, 132);
    cr_expect_eq(w.dp_tiles, 1296);
    cr_expect_float_eq(w.dp_efficiency, 1296.0 / 1320.0, 1e-12);
    /* sana-out's narrow tiles (Y^T: 18 x 7 = 126 of 128 x 160) on 132 SMs, one wave 95.5 % busy:
     * whole (split, every tile pays a fix-up: 0.81-0.86x of whole in a same-call A/B on the H100) */
    cr_assert_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 126, 18, 132, &w).code, FP4LR_OK);
    cr_expect_eq(w.split, 0, "a one-wave grid at 95.5 %% busy must stay whole");
    cr_expect_eq(w.clusters, 126);
    cr_expect_eq(w.dp_tiles, 126);
}

/* One wave: split below 1 - 0.11 - 5.2 / (K stages) busy (sm90a_gemm.h), the boundary the
 * H100 probe put at about 60 % for 18 K stages and 82 % for 72 */
Test(sm90a_schedule, auto_one_wave_threshold_follows_k)
{
    fp4lr_sm90a_sk w;
    const struct { int64_t tiles, k; int split; const char *why; } cases[] = {
        {120, 18, 0, "90.9 %, 18 stages: split 0.85-0.86x of whole"},
        {96, 18, 0, "72.7 %, 18 stages: split 0.84-0.93x"},
        {80, 18, 0, "60.6 %, 18 stages: split 0.99x"},
        {79, 18, 1, "59.8 %, 18 stages: just below the line"},
        {64, 18, 1, "48.5 %, 18 stages: split 1.13-1.15x"},
        {112, 72, 0, "84.8 %, 72 stages: split 0.98x"},
        {108, 72, 0, "81.8 %, 72 stages: just above the line"},
        {107, 72, 1, "81.1 %, 72 stages: just below the line"},
        {104, 72, 1, "78.8 %, 72 stages: split 1.02-1.03x"},
        {80, 72, 1, "60.6 %, 72 stages: split 1.22-1.24x"},
        {66, 4, 0, "50 %, 4 stages: the fix-up outweighs any gain"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, cases[i].tiles, cases[i].k, 132, &w).code, FP4LR_OK);
        cr_expect_eq(w.split, cases[i].split, "%lld tiles of %lld K stages on 132 SMs (%s): split %d, expected %d",
                     (long long)cases[i].tiles, (long long)cases[i].k, cases[i].why, (int)w.split, cases[i].split);
        if (w.split)
            check_walk(&w, cases[i].tiles, cases[i].k);
    }
}

Test(sm90a_schedule, dp_below_one_wave_takes_a_cluster_a_tile)
{
    fp4lr_sm90a_sk w;
    /* fewer tiles than SMs but not worth splitting for DP: one cluster per tile */
    cr_assert_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_DP, 72, 18, 132, &w).code, FP4LR_OK);
    cr_expect_eq(w.split, 0);
    cr_expect_eq(w.clusters, 72);
}

Test(sm90a_schedule, auto_splits_a_ragged_last_wave)
{
    fp4lr_sm90a_sk w;
    /* flux-out: 36 x 12 = 432 tiles, 3.27 waves (82 %): 2 waves whole, 168 tiles split */
    cr_assert_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 432, 24, 132, &w).code, FP4LR_OK);
    cr_expect_eq(w.split, 1);
    cr_expect_eq(w.clusters, 132);
    cr_expect_eq(w.dp_tiles, 264);
    cr_expect_eq((uint64_t)w.q * 132 + w.r, (432 - 264) * 24);
    check_walk(&w, 432, 24);
    /* sana-out: 8 x 9 = 72 tiles, fewer than the SMs: all split */
    cr_assert_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 72, 18, 132, &w).code, FP4LR_OK);
    cr_expect_eq(w.split, 1);
    cr_expect_eq(w.dp_tiles, 0);
    cr_expect_eq(w.q, 9);
    cr_expect_eq(w.r, 108);
    check_walk(&w, 72, 18);
    /* sana-qkv: 54 x 4 = 216 tiles, 1.64 waves; the last partial wave (84 tiles x 18 stages)
     * deals 11.5 iterations a cluster (>= FP4LR_SM90A_SK_MIN_ITERS): 1 wave whole, 84 split */
    cr_assert_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 216, 18, 132, &w).code, FP4LR_OK);
    cr_expect_eq(w.split, 1);
    cr_expect_eq(w.dp_tiles, 132);
    cr_expect_eq((uint64_t)w.q * 132 + w.r, 84 * 18);
    check_walk(&w, 216, 18);
    /* flux-fc2: 432 tiles of 96 stages: 3 waves whole, the last 36 tiles split (26 a cluster) */
    cr_assert_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 432, 96, 132, &w).code, FP4LR_OK);
    cr_expect_eq(w.dp_tiles, 396);
    check_walk(&w, 432, 96);
    /* flux-fc1: 36 x 48 = 1728 tiles, 13.09 waves (93.5 % busy, under 0.96 since 2026-12-05):
     * the last 12 tiles deal 2.2 iterations a cluster, so the last two waves' worth split */
    cr_assert_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 1728, 24, 132, &w).code, FP4LR_OK);
    cr_expect_eq(w.split, 1);
    cr_expect_eq(w.dp_tiles, 12 * 132);
    check_walk(&w, 1728, 24);
    /* qwen-qkv: 56 x 36 = 2016 tiles (95.5 %): the last 36 tiles deal 6.5 iterations a
     * cluster, so the last two waves' worth split */
    cr_assert_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 2016, 24, 132, &w).code, FP4LR_OK);
    cr_expect_eq(w.split, 1);
    cr_expect_eq(w.dp_tiles, 14 * 132);
    check_walk(&w, 2016, 24);
    /* 8192^3: 64 x 32 = 2048 tiles of 64 stages (97.0 %) and qwen-fc1: 56 x 48 = 2688 tiles
     * (97.0 %): whole (no clear change when split, in the A/B that set the threshold) */
    cr_assert_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 2048, 64, 132, &w).code, FP4LR_OK);
    cr_expect_eq(w.split, 0);
    cr_assert_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 2688, 24, 132, &w).code, FP4LR_OK);
    cr_expect_eq(w.split, 0);
    /* too little work to deal out: whole tiles */
    cr_assert_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 3, 2, 132, &w).code, FP4LR_OK);
    cr_expect_eq(w.split, 0);
}

Test(sm90a_schedule, every_forced_walk_covers_each_stage_once)
{
    const int gs[] = {1, 2, 7, 66, 132};
    for (size_t gi = 0; gi < sizeof gs / sizeof gs[0]; gi++)
        for (int64_t tiles = 1; tiles <= 300; tiles += tiles < 20 ? 1 : 37)
            for (int64_t nks = 1; nks <= 40; nks += nks < 6 ? 1 : 11) {
                fp4lr_sm90a_sk w;
                cr_assert_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_SK, tiles, nks, gs[gi], &w).code, FP4LR_OK);
                cr_assert_eq(w.split, 1);
                cr_assert_eq(w.clusters, gs[gi]);
                cr_assert_eq(w.dp_tiles % gs[gi], 0, "whole tiles come in full waves");
                cr_assert_eq((uint64_t)w.q * (uint64_t)gs[gi] + w.r, (uint64_t)(tiles - w.dp_tiles) * (uint64_t)nks);
                check_walk(&w, tiles, nks);
            }
}

Test(sm90a_schedule, bad_arguments_are_refused)
{
    fp4lr_sm90a_sk w;
    fp4lr_status st = fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 0, 4, 132, &w);
    cr_expect_eq(st.code, FP4LR_E_INVALID);
    cr_expect_str_eq(st.rule, "SK_ARGS");
    cr_expect_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 4, 0, 132, &w).code, FP4LR_E_INVALID);
    cr_expect_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 4, 4, 0, &w).code, FP4LR_E_INVALID);
    cr_expect_eq(fp4lr_sm90a_schedule((fp4lr_schedule)7, 4, 4, 132, &w).code, FP4LR_E_INVALID);
    st = fp4lr_sm90a_schedule(FP4LR_SCHEDULE_SK, 200, 40000000, 132, &w);
    cr_expect_eq(st.code, FP4LR_E_UNSUPPORTED);
    cr_expect_str_eq(st.rule, "SK_RANGE");
    /* auto falls back to whole tiles instead */
    cr_expect_eq(fp4lr_sm90a_schedule(FP4LR_SCHEDULE_AUTO, 200, 40000000, 132, &w).code, FP4LR_OK);
    cr_expect_eq(w.split, 0);
    cr_expect_eq(fp4lr_schedule_parse("sk"), FP4LR_SCHEDULE_SK);
    cr_expect_eq(fp4lr_schedule_parse("stream-k"), -1);
    cr_expect_eq(fp4lr_sm90a_sk_workspace_bytes(132), 132u * (131072u + 4u));
}

/* ---- the producer's cursor, register by register -----------------------------------------
 * A C mirror of the generator's cursor code (sk_consts, unit_first, unit_split, unit_bounds,
 * unit_next) as the producer runs it: the default producer recomputes the unit's bounds from
 * the tile after every stage (unit_bounds), the prodrot variant (FP4LR_GEN_EXPERIMENT=prodrot)
 * keeps %pke from unit_first / unit_split and never recomputes it.  Both must issue the same
 * (tile, stage) sequence, which must be the walk check_walk verifies. */
typedef struct cursor {
    uint32_t tile, kb, ke, ks;
} cursor;

typedef struct sk_regs {
    uint32_t skdp, skit0, skit1, nks, ntiles, tile0, tstride;
} sk_regs;

static void unit_split_m(const sk_regs *c, cursor *u, uint32_t skit)
{
    if (skit >= c->skit1) {
        u->tile = c->ntiles;
        return;
    }
    u->tile = skit / c->nks;
    u->kb = skit - u->tile * c->nks;
    u->tile += c->skdp;
    u->ke = c->skit1 - skit + u->kb;
    if (u->ke > c->nks)
        u->ke = c->nks;
}

static void unit_first_m(const sk_regs *c, cursor *u)
{
    u->tile = c->tile0, u->kb = 0, u->ke = c->nks;
    if (u->tile >= c->skdp)
        unit_split_m(c, u, c->skit0);
    u->ks = u->kb;
}

static void unit_bounds_m(const sk_regs *c, cursor *u)
{
    u->kb = 0, u->ke = c->nks;
    if (u->tile < c->skdp)
        return;
    const uint32_t base = (u->tile - c->skdp) * c->nks;
    u->kb = (c->skit0 > base ? c->skit0 : base) - base;
    u->ke = (base + c->nks < c->skit1 ? base + c->nks : c->skit1) - base;
}

static void unit_next_m(const sk_regs *c, cursor *u)
{
    if (u->tile < c->skdp) {
        u->tile += c->tstride;
        if (u->tile < c->skdp)
            return;
        unit_split_m(c, u, c->skit0);
        return;
    }
    unit_split_m(c, u, (u->tile - c->skdp) * c->nks + u->ke);
}

/* One producer step: advance past the stage just issued; at the unit's end, the next unit. */
static void produce_step(const sk_regs *c, cursor *u, int prodrot)
{
    u->ks++;
    if (!prodrot)
        unit_bounds_m(c, u);
    if (u->ks < u->ke)
        return;
    unit_next_m(c, u);
    u->ks = u->kb;
}

Test(sm90a_schedule, prodrot_cursor_issues_the_default_sequence)
{
    const int gs[] = {1, 2, 7, 66, 132};
    for (size_t gi = 0; gi < sizeof gs / sizeof gs[0]; gi++)
        for (int64_t tiles = 1; tiles <= 300; tiles += tiles < 20 ? 1 : 37)
            for (int64_t nks = 1; nks <= 40; nks += nks < 6 ? 1 : 11)
                for (int mode = 0; mode < 2; mode++) {
                    fp4lr_sm90a_sk w;
                    cr_assert_eq(fp4lr_sm90a_schedule(mode ? FP4LR_SCHEDULE_SK : FP4LR_SCHEDULE_DP, tiles, nks,
                                                      gs[gi], &w).code,
                                 FP4LR_OK);
                    unsigned char *done = calloc((size_t)(tiles * nks), 1);
                    cr_assert_not_null(done);
                    for (int b = 0; b < gs[gi]; b++) {
                        sk_regs c = {.skdp = w.dp_tiles, .nks = (uint32_t)nks, .ntiles = (uint32_t)tiles,
                                     .tile0 = (uint32_t)b, .tstride = (uint32_t)gs[gi]};
                        slice(&w, tiles, nks, (uint32_t)b, &c.skit0, &c.skit1);
                        cursor d, r;
                        unit_first_m(&c, &d);
                        r = d;
                        while (d.tile < c.ntiles) {
                            cr_assert_eq(r.tile, d.tile, "G %d tiles %lld nks %lld cluster %d: tiles differ",
                                         gs[gi], (long long)tiles, (long long)nks, b);
                            cr_assert_eq(r.ks, d.ks, "G %d tiles %lld nks %lld cluster %d tile %u: stages differ",
                                         gs[gi], (long long)tiles, (long long)nks, b, d.tile);
                            done[(int64_t)d.tile * nks + d.ks]++;
                            produce_step(&c, &d, 0);
                            produce_step(&c, &r, 1);
                        }
                        cr_assert_eq(r.tile, c.ntiles, "the prodrot cursor runs on past the walk");
                    }
                    for (int64_t i = 0; i < tiles * nks; i++)
                        cr_assert_eq(done[i], 1, "tile %lld stage %lld issued %d times", (long long)(i / nks),
                                     (long long)(i % nks), done[i]);
                    free(done);
                }
}
