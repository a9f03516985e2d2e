/* Tensor maps, parameters and launch of the sm_90a kernels (dense and fused).
 *
 * The maps follow the kernel header written by tools/gen_sm90a.py:
 *   A, W   UINT8 {K/2, rows}, box {64, 128 | 256}, 64-byte swizzle: one K stage
 *          (128 fp4 = 64 bytes) of the tile's rows; out-of-bounds rows read 0.
 *   SFA/W  UINT8 3-D view {256, 2*KA, ceil(rows/128)} of the 128x4 atom buffer
 *          (KA = atoms per 128-row block = ceil(K/block/4)); a box is the stage's
 *          atoms of one (A) or two (W) row blocks, as raw bytes.
 *   Y      BF16 {N, M}, box {64, 64}, 128-byte swizzle (fused _x: {32, 64}, 64-byte;
 *          swapped plans {64, 64} / fused {64, 32}, 128-byte); stores clip at the edges.
 *   L, U   BF16 {r, M | N}, box {rc, 128 | 256}, swizzle of 2*rc bytes (fused): one
 *          low-rank chunk of the tile; ranks past r read 0.
 * Cluster 2: the pair computes a 256-row cluster tile; tiles_m counts cluster tiles and
 * the grid is a whole number of pairs. */
#include "sm90a_gemm.h"

#include <string.h>

#include "launch.h"
#include "tmap_operands.h"

enum { TILE_M = 128, TILE_N = FP4LR_SM90A_TILE_N, TILE_K = 128 };
/* the epilogue's chunk width in tile columns (tools/sm90a_ptx/kstate.py EPI_COLS): 32 in the narrow
 * tile (160 is no multiple of 64) */
enum { SM90A_EPI_COLS = 64, SM90A_EPI_COLS_NARROW = 32 };

int fp4lr_sm90a_lora_chunk(const fp4lr_plan *plan) { return fp4lr_lowrank_chunk(plan); }

int fp4lr_sm90a_lora_slots(const fp4lr_plan *plan) { return fp4lr_lowrank_slots(plan, FP4LR_SM90A_LORA_SLOTS); }

static fp4lr_status lowrank_params(const fp4lr_ctx *ctx, const fp4lr_plan *plan, const fp4lr_args *dev,
                                   fp4lr_sm90a_lora_params *lr)
{
    FP4LR_TRY(fp4lr_lowrank_params_fill(ctx, plan, dev, TILE_M, plan->tile_n, lr));
    if (plan->swap_ab) /* the _yt kernels' wc and beta index their rows: p_N is their M */
        lr->N = (uint32_t)plan->problem.M;
    /* wgmma descriptor: swizzle mode (bits 62-63: 1 = 128B, 2 = 64B, 3 = 32B), SBO = 8 rows */
    const uint32_t rc = lr->wk, mode = rc == 64 ? 1 : rc == 32 ? 2 : 3;
    lr->deschi = (mode << 30) | (8u * 2u * rc >> 4);
    if (plan->problem.r > 0)
        lr->slots = (uint32_t)fp4lr_sm90a_lora_slots(plan);
    return fp4lr_ok();
}

fp4lr_status fp4lr_sm90a_params_make(const fp4lr_ctx *ctx, const fp4lr_plan *plan, const fp4lr_args *dev,
                                     fp4lr_sm90a_params *out)
{
    const fp4lr_problem *p = &plan->problem;
    if (plan->arch != FP4LR_ARCH_SM90A)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "SM90A_PLAN", "plan %s is not an sm_90a plan", plan->entry);
    const int narrow = plan->tile_n == FP4LR_SM90A_TILE_N_NARROW && plan->cluster == 1 && plan->swap_ab &&
                       plan->w_prep;
    /* the ping-pong tile (plan.h): W prepared, not swapped; its maps are the _w kernels' with
     * the W box (boxes.w_rows below) and the U box (lowrank_params) 128 rows wide */
    const int pp = plan->tile_n == FP4LR_SM90A_TILE_N_PP && plan->cluster == 1 && !plan->swap_ab &&
                   plan->w_prep && !plan->w_inline;
    if ((plan->cluster != 1 && plan->cluster != 2) || plan->tile_m != TILE_M * plan->cluster ||
        (plan->tile_n != TILE_N && !narrow && !pp) || plan->tile_k != TILE_K)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "SM90A_DENSE_TILE",
                          "sm_90a kernels exist for tile %dx%dx%d (cluster 1; swapped also %dx%dx%d; prepared "
                          "ping-pong %dx%dx%d) and %dx%dx%d (cluster 2); the plan asks %dx%dx%d, cluster %d",
                          TILE_M, TILE_N, TILE_K, TILE_M, FP4LR_SM90A_TILE_N_NARROW, TILE_K, TILE_M,
                          FP4LR_SM90A_TILE_N_PP, TILE_K, 2 * TILE_M, TILE_N, TILE_K, plan->tile_m, plan->tile_n,
                          plan->tile_k, plan->cluster);
    if (p->out != FP4LR_OUT_BF16)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "SM90A_DENSE_OUT",
                          "sm_90a dense kernels write bf16; %s output is not built yet", fp4lr_out_name(p->out));

    memset(out, 0, sizeof *out);
    /* A and W: one 64-byte K stage per box row, 64-byte swizzle; each CTA loads all 256 W rows
     * (the pair multicasts them); Y: a consumer warpgroup's 64 rows x 64 columns of the tile
     * a store (128-byte swizzle), in the narrow tile's 64 x 32 (tools/sm90a_ptx/kstate.py
     * EPI_COLS: two 8 KiB buffers, 64-byte swizzle; transposed, 32 Y rows of 64 columns,
     * 128-byte) */
    const int swap = plan->swap_ab;
    const uint32_t cols = narrow ? SM90A_EPI_COLS_NARROW : SM90A_EPI_COLS;
    fp4lr_gemm_boxes boxes = {.tile_k = TILE_K, .a_rows = TILE_M, .w_rows = (uint32_t)plan->tile_n,
                              .fp4_swizzle = CU_TENSOR_MAP_SWIZZLE_64B, .y_cols = swap ? 64 : cols,
                              .y_rows = swap ? cols : 64, .y_transposed = swap,
                              .y_swizzle = !swap && cols == 32 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                               : CU_TENSOR_MAP_SWIZZLE_128B};
    FP4LR_TRY(fp4lr_tmap_gemm_operands(ctx, p, dev, &boxes, &out->tmA, &out->tmW, &out->tmSFA, &out->tmSFW,
                                       &out->tmY));

    out->num_k_stages = (uint32_t)((p->K + TILE_K - 1) / TILE_K);
    out->alpha = dev->alpha;
    out->tiles_m = (uint32_t)((p->M + plan->tile_m - 1) / plan->tile_m); /* cluster tiles */
    out->tiles_n = (uint32_t)((p->N + plan->tile_n - 1) / plan->tile_n);
    /* A prepared W tile is 8x an fp4 A tile's bytes: one raster group of every tile row,
     * so that the CTAs in flight share few W tiles (H200, flux-fc2 NVFP4: 630 against 560
     * TFLOP/s with groups of 8) */
    out->group = plan->w_prep ? out->tiles_m : FP4LR_SM90A_GROUP;
    out->y = (CUdeviceptr)(uintptr_t)dev->Y;
    out->ldy = p->ldY <= (int64_t)UINT32_MAX ? (uint32_t)p->ldY : 0;
    out->ym = (uint32_t)p->M;
    out->fused = plan->family == FP4LR_FAMILY_FUSED;
    out->wyt = plan->swap_ab && plan->w_prep && !plan->w_inline;
    out->k = (uint32_t)p->K;
    if (plan->pdl && !out->wyt)
        return fp4lr_fail(FP4LR_E_INVALID, "PDL",
                          "plan %s asks a programmatic dependent launch, which only the swapped prepared kernels "
                          "(_w<n>_yt) wait for: plan it with fp4lr_plan_make",
                          plan->entry);
    if (out->fused)
        FP4LR_TRY(lowrank_params(ctx, plan, dev, &out->lr));
    return fp4lr_ok();
}

void fp4lr_sm90a_kernel_view(const fp4lr_plan *plan, const fp4lr_args *dev, fp4lr_plan *kplan, fp4lr_args *kdev)
{
    *kplan = *plan;
    *kdev = *dev;
    if (!plan->swap_ab)
        return;
    kplan->problem = fp4lr_problem_swapped(&plan->problem);
    kdev->A = dev->W;
    kdev->SFA = dev->SFW;
    kdev->W = dev->A;
    kdev->SFW = dev->SFA;
    /* Y^T's low-rank term is U . L^T; wc and beta stay, indexing the kernel's rows */
    kdev->L = dev->U;
    kdev->U = dev->L;
    kplan->problem.ldL = plan->problem.ldU;
    kplan->problem.ldU = plan->problem.ldL;
}

fp4lr_status fp4lr_sm90a_schedule(fp4lr_schedule mode, int64_t tiles, int64_t k_stages, int max_clusters,
                                  fp4lr_sm90a_sk *out)
{
    memset(out, 0, sizeof *out);
    if (tiles < 1 || k_stages < 1 || max_clusters < 1 || !fp4lr_schedule_name(mode))
        return fp4lr_fail(FP4LR_E_INVALID, "SK_ARGS",
                          "schedule: tiles %lld, K stages %lld and clusters %d must be >= 1, schedule %d "
                          "auto, dp or sk", (long long)tiles, (long long)k_stages, max_clusters, (int)mode);
    const int64_t g = max_clusters, waves = (tiles + g - 1) / g;
    out->dp_efficiency = (double)tiles / (double)(waves * g);
    /* whole tiles: one cluster per tile at most */
    out->clusters = (int)(tiles < g ? tiles : g);
    out->dp_tiles = (uint32_t)(tiles > UINT32_MAX ? UINT32_MAX : tiles);
    /* auto: split below the threshold of the grid's kind (sm90a_gemm.h) */
    const double need = waves > 1 ? FP4LR_SM90A_SK_AUTO_EFFICIENCY
                                  : 1.0 - FP4LR_SM90A_SK_ONE_WAVE_LOSS -
                                        FP4LR_SM90A_SK_ONE_WAVE_FIXUP_STAGES / (double)k_stages;
    if (mode == FP4LR_SCHEDULE_DP || (mode == FP4LR_SCHEDULE_AUTO && out->dp_efficiency >= need))
        return fp4lr_ok();
    /* split the last partial wave when it deals every cluster enough K iterations, else the
     * last one or two waves' worth: G <= split tiles < 2G (all of them below G); sm90a_gemm.h */
    const int64_t full = tiles / g, rest = tiles - full * g;
    const int one_wave = FP4LR_SM90A_SK_SPLIT_WAVES ? FP4LR_SM90A_SK_SPLIT_WAVES == 1
                                                   : rest * k_stages >= (int64_t)FP4LR_SM90A_SK_MIN_ITERS * g;
    const int64_t dp = full >= 1 && one_wave && rest > 0 ? full * g : full >= 1 ? (full - 1) * g : 0;
    const int64_t t = (tiles - dp) * k_stages;
    if (t > INT32_MAX) {
        if (mode == FP4LR_SCHEDULE_AUTO)
            return fp4lr_ok();
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "SK_RANGE",
                          "stream-K over %lld tiles of %lld K stages is %lld split iterations; the kernels "
                          "count them in 31 bits", (long long)(tiles - dp), (long long)k_stages, (long long)t);
    }
    /* auto: fewer split iterations than clusters leaves CTAs idle anyway */
    if (mode == FP4LR_SCHEDULE_AUTO && t < g)
        return fp4lr_ok();
    out->split = 1;
    out->clusters = (int)g;
    out->dp_tiles = (uint32_t)dp;
    out->q = (uint32_t)(t / g);
    out->r = (uint32_t)(t % g);
    return fp4lr_ok();
}

size_t fp4lr_sm90a_sk_workspace_bytes(int ctas)
{
    return ctas < 1 ? 0 : (size_t)ctas * (FP4LR_SM90A_SK_SLOT_BYTES + 4u);
}

int fp4lr_sm90a_grid(const fp4lr_plan *plan, const fp4lr_sm90a_params *prm, int max_ctas)
{
    /* persistent: one CTA (pair) per cluster tile at most, whole clusters only; a split
     * walk runs on the clusters it was dealt over */
    const int64_t ctas = (int64_t)prm->tiles_m * prm->tiles_n * plan->cluster;
    int grid = max_ctas;
    if (prm->sk_ws && prm->sk.split)
        grid = prm->sk.clusters * plan->cluster;
    else if (grid > ctas)
        grid = (int)ctas;
    grid -= grid % plan->cluster;
    if (grid < plan->cluster)
        grid = plan->cluster;
    return grid;
}

fp4lr_status fp4lr_sm90a_launch(const fp4lr_ctx *ctx, CUfunction f, const fp4lr_plan *plan,
                                fp4lr_sm90a_params *prm, int grid, CUstream stream)
{
    fp4lr_sm90a_lora_params *lr = &prm->lr;
    fp4lr_sm90a_sk *sk = &prm->sk;
    if (!prm->sk_ws) { /* every tile whole: the kernel ignores the rest */
        sk->dp_tiles = prm->tiles_m * prm->tiles_n;
        sk->q = sk->r = 0;
    }
    void *common[] = {&prm->tmA, &prm->tmW, &prm->tmSFA, &prm->tmSFW, &prm->tmY,
                      &prm->num_k_stages, &prm->alpha, &prm->tiles_m, &prm->tiles_n, &prm->group};
    void *fused[] = {&lr->tmL, &lr->tmU, &lr->wc, &lr->beta, &lr->N, &lr->chunks, &lr->slots, &lr->sub,
                     &lr->ksteps, &lr->wk, &lr->deschi};
    void *skp[] = {&prm->sk_ws, &sk->dp_tiles, &sk->q, &sk->r, &prm->sk_epoch};
    void *xp[] = {&prm->x_W, &prm->x_SFW, &prm->x_Wp, &prm->x_flags, &prm->x_epoch, &prm->x_N, &prm->x_K,
                  &prm->x_order, &prm->y, &prm->ldy, &prm->ym};
    void *args[sizeof common / sizeof common[0] + sizeof fused / sizeof fused[0] + sizeof skp / sizeof skp[0] +
               sizeof xp / sizeof xp[0] + 1];
    size_t n = 0;
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
        args[n++] = common[i];
    for (size_t i = 0; prm->fused && i < sizeof fused / sizeof fused[0]; i++)
        args[n++] = fused[i];
    for (size_t i = 0; i < sizeof skp / sizeof skp[0]; i++)
        args[n++] = skp[i];
    for (size_t i = 0; prm->xconv && i < sizeof xp / sizeof xp[0]; i++)
        args[n++] = xp[i];
    if (prm->wyt)
        args[n++] = &prm->k;
    unsigned g[3] = {(unsigned)fp4lr_sm90a_grid(plan, prm, grid), 1, 1};
    unsigned b[3] = {(unsigned)plan->block_threads, 1, 1};
    /* a swapped prepared plan: the kernel starts while its preparation runs and waits for it
     * (griddepcontrol.wait) before reading the prepared operand (plan.h fp4lr_pdl) */
    return (plan->pdl && prm->wyt ? fp4lr_launch_dependent : fp4lr_launch)(
        ctx, f, g, b, (unsigned)plan->smem_bytes, (unsigned)plan->cluster, stream, args);
}
