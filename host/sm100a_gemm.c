/* Tensor maps, parameters and launch of the sm_100a kernels (dense and fused).
 *
 * The maps follow the host contract of ptx/sm100a/README.md (and each kernel's header):
 *   A, W   UINT8 {K/2, rows}, 128-byte swizzle, box {128, rows}: one K stage (256 fp4 =
 *          128 bytes) of 128 A rows; of 256 W rows (one CTA) or of the CTA's 128-row half
 *          of N (pair).  Out-of-bounds rows and K read 0.
 *   SFA/W  UINT8 3-D view {256, 2*KA, ceil(rows/128)} of the 128x4 atom buffer (KA = atoms
 *          per 128-row block = ceil(K/block/4)); a box is the stage's atoms (4 NVFP4, 2 MXFP4)
 *          of one (A) or two (W, the full N of the tile in both CTAs of a pair) row blocks.
 *   Y      BF16 {N, M}, box {64, 32}, 128-byte swizzle: one epilogue warp's 32 rows x 64
 *          columns; stores clip at the edges.
 *   L, U   (fused) BF16 {r, rows}, box {rc, 128} (L) and {rc, 256 / cluster} (U: the pair's
 *          CTAs each load their half of N), swizzled over the 2*rc-byte rows.
 * Cluster 2: the pair computes a 256-row cluster tile; tiles_m counts cluster tiles and the
 * grid is a whole number of pairs. */
#include "sm100a_gemm.h"

#include <string.h>

#include "launch.h"
#include "sm100a_desc.h"
#include "tmap_operands.h"

enum { CTA_M = 128, TILE_N = 256, TILE_K = 256, EPI_COLS = 64, EPI_ROWS = 32 };

/* The plan kinds the built kernels cover, each with its own rule. */
static fp4lr_status check_plan(const fp4lr_plan *plan)
{
    if (plan->arch != FP4LR_ARCH_SM100A)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "SM100A_PLAN", "plan %s is not an sm_100a plan", plan->entry);
    if ((plan->cluster != 1 && plan->cluster != 2) || plan->tile_m != CTA_M * plan->cluster ||
        plan->tile_n != TILE_N || plan->tile_k != TILE_K)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "SM100A_TILE",
                          "sm_100a kernels exist for tile %dx%dx%d (cluster 1) and %dx%dx%d (cluster 2); "
                          "the plan asks %dx%dx%d, cluster %d",
                          CTA_M, TILE_N, TILE_K, 2 * CTA_M, TILE_N, TILE_K, plan->tile_m, plan->tile_n,
                          plan->tile_k, plan->cluster);
    if (plan->problem.out != FP4LR_OUT_BF16)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "SM100A_OUT",
                          "sm_100a kernels write bf16; %s output is not built yet",
                          fp4lr_out_name(plan->problem.out));
    return fp4lr_ok();
}

int fp4lr_sm100a_lora_chunk(const fp4lr_plan *plan) { return fp4lr_lowrank_chunk(plan); }

int fp4lr_sm100a_lora_slots(const fp4lr_plan *plan) { return fp4lr_lowrank_slots(plan, FP4LR_SM100A_LORA_SLOTS); }

static fp4lr_status lowrank_params(const fp4lr_ctx *ctx, const fp4lr_plan *plan, const fp4lr_args *dev,
                                   fp4lr_sm100a_lora_params *lr)
{
    /* L: the CTA's 128 rows; U: its half of N in the pair */
    FP4LR_TRY(fp4lr_lowrank_params_fill(ctx, plan, dev, CTA_M, (uint32_t)(TILE_N / plan->cluster), lr));
    /* K-major rows of 2*rc bytes with the matching swizzle; SBO = 8 rows */
    const uint32_t rc = lr->wk;
    fp4lr_sm100a_swizzle sw = rc == 64 ? FP4LR_SM100A_SWIZZLE_128B : rc == 32 ? FP4LR_SM100A_SWIZZLE_64B
                                                                            : FP4LR_SM100A_SWIZZLE_32B;
    lr->deschi = (uint32_t)(fp4lr_sm100a_smem_desc(0, 0, 8 * 2 * rc, sw, 0) >> 32);
    if (plan->problem.r > 0)
        lr->slots = (uint32_t)fp4lr_sm100a_lora_slots(plan);
    return fp4lr_ok();
}

fp4lr_status fp4lr_sm100a_params_make(const fp4lr_ctx *ctx, const fp4lr_plan *plan, const fp4lr_args *dev,
                                      fp4lr_sm100a_params *out)
{
    if (!ctx || !plan || !dev || !out)
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER",
                          "fp4lr_sm100a_params_make: context, plan, arguments and output are required");
    FP4LR_TRY(check_plan(plan));
    const fp4lr_problem *p = &plan->problem;
    memset(out, 0, sizeof *out);
    /* A and W: one 128-byte K stage per box row, 128-byte swizzle; the pair's CTAs each load
     * their own 128-row half of the tile's N; Y: one epilogue warp's 32 rows x 64 columns */
    const fp4lr_gemm_boxes boxes = {.tile_k = TILE_K, .a_rows = CTA_M, .w_rows = (uint32_t)(TILE_N / plan->cluster),
                                    .fp4_swizzle = CU_TENSOR_MAP_SWIZZLE_128B, .y_cols = EPI_COLS,
                                    .y_rows = EPI_ROWS, .y_swizzle = CU_TENSOR_MAP_SWIZZLE_128B};
    FP4LR_TRY(fp4lr_tmap_gemm_operands(ctx, p, dev, &boxes, &out->tmA, &out->tmW, &out->tmSFA, &out->tmSFW,
                                       &out->tmY));

    out->num_k_stages = (uint32_t)((p->K + TILE_K - 1) / TILE_K);
    out->alpha = dev->alpha;
    out->tiles_m = (uint32_t)((p->M + plan->tile_m - 1) / plan->tile_m);
    out->tiles_n = (uint32_t)((p->N + TILE_N - 1) / TILE_N);
    out->group = FP4LR_SM100A_GROUP;
    if (plan->family == FP4LR_FAMILY_FUSED)
        FP4LR_TRY(lowrank_params(ctx, plan, dev, &out->lr));
    return fp4lr_ok();
}

fp4lr_status fp4lr_sm100a_launch(const fp4lr_ctx *ctx, CUfunction f, const fp4lr_plan *plan,
                                 fp4lr_sm100a_params *prm, int grid, CUstream stream)
{
    if (!ctx || !plan || !prm)
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER",
                          "fp4lr_sm100a_launch: context, plan and parameters are required");
    FP4LR_TRY(check_plan(plan));
    fp4lr_sm100a_lora_params *lr = &prm->lr;
    void *args[] = {&prm->tmA, &prm->tmW, &prm->tmSFA, &prm->tmSFW, &prm->tmY,
                    &prm->num_k_stages, &prm->alpha, &prm->tiles_m, &prm->tiles_n, &prm->group,
                    /* fused only (the driver reads as many as the entry declares) */
                    &lr->tmL, &lr->tmU, &lr->wc, &lr->beta, &lr->N, &lr->chunks, &lr->slots, &lr->sub,
                    &lr->ksteps, &lr->wk, &lr->deschi};
    /* persistent: at most one CTA (pair) per cluster tile, whole clusters, at least one */
    const int64_t cluster = plan->cluster;
    const int64_t ctas = (int64_t)prm->tiles_m * prm->tiles_n * cluster;
    int64_t g = grid < ctas ? grid : ctas;
    g -= g % cluster;
    if (g < cluster)
        g = cluster;
    unsigned gd[3] = {(unsigned)g, 1, 1};
    unsigned bd[3] = {(unsigned)plan->block_threads, 1, 1};
    return fp4lr_launch(ctx, f, gd, bd, (unsigned)plan->smem_bytes, (unsigned)cluster, stream, args);
}
