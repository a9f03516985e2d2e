/* Host side of the sm_100a kernels (ptx/sm100a/fp4lr_sm100a_*, dense and fused; the same for
 * the sm_100f family target): the tensor maps they read and write, their parameter block and
 * their launch, as the "Host contract" of ptx/sm100a/README.md states them.  Another tile or
 * a non-bf16 output is FP4LR_E_UNSUPPORTED with its own rule.
 * NOT EXECUTED: no Blackwell GPU has run these launches (tests/test_sm100a_launch.c checks
 * them on a recording fake driver). */
#ifndef FP4LR_SM100A_GEMM_H
#define FP4LR_SM100A_GEMM_H

#include "device.h"
#include "lowrank_params.h"
#include "plan.h"
#include "problem.h"
#include "status.h"

/* Tile raster group: tile rows along M that share W tiles in L2. */
#define FP4LR_SM100A_GROUP 8

/* Low-rank ring slots compiled into the fused kernels (tools/sm100a_fused.py LORA_SLOTS). */
#define FP4LR_SM100A_LORA_SLOTS 4

/* The fused family's parameters, after the dense ones (the same list as sm_90a's). */
typedef fp4lr_lowrank_params fp4lr_sm100a_lora_params;

/* The five tensor maps and the scalars, in the kernel's parameter order; lr for fused plans. */
typedef struct fp4lr_sm100a_params {
    CUtensorMap tmA, tmW, tmSFA, tmSFW, tmY;
    uint32_t num_k_stages;    /* ceil(K / 256) */
    float alpha;
    uint32_t tiles_m;         /* cluster tiles: ceil(M / tile_m), tile_m = 128 * cluster */
    uint32_t tiles_n;         /* ceil(N / 256) */
    uint32_t group;
    fp4lr_sm100a_lora_params lr;
} fp4lr_sm100a_params;

/* The fused kernel's low-rank chunk rc: the largest of 16, 32, 64 not above the plan's
 * budget chunk (one TMA box of 2*rc-byte rows), and the ring slots it uses: the budget's
 * bytes for its stages, in rc-sized slots, at most FP4LR_SM100A_LORA_SLOTS.  Slot bytes per
 * CTA: (128 + 256 / cluster) * rc * 2. */
int fp4lr_sm100a_lora_chunk(const fp4lr_plan *plan);
int fp4lr_sm100a_lora_slots(const fp4lr_plan *plan);

/* Builds the parameter block of `plan` for device buffers `dev` (pointers are device
 * addresses).  FP4LR_E_UNSUPPORTED rules:
 *   SM100A_PLAN        the plan is not an sm_100a plan
 *   SM100A_TILE        a tile / cluster other than 128x256x256 c1 and 256x256x256 c2
 *   SM100A_OUT         an output other than bf16
 * Encoder failures come back as fp4lr_tmap_encode reports them. */
fp4lr_status fp4lr_sm100a_params_make(const fp4lr_ctx *ctx, const fp4lr_plan *plan, const fp4lr_args *dev,
                                      fp4lr_sm100a_params *out);

/* Launches `f` (the plan's entry) on `stream` with a persistent grid of
 * min(tiles * cluster, grid) CTAs, rounded down to whole clusters and at least one cluster;
 * `grid` is the occupancy (fp4lr_occupancy_grid).  The pair gets the (2,1,1) cluster
 * attribute. */
fp4lr_status fp4lr_sm100a_launch(const fp4lr_ctx *ctx, CUfunction f, const fp4lr_plan *plan,
                                 fp4lr_sm100a_params *params, int grid, CUstream stream);

#endif
