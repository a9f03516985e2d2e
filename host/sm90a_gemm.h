/* Host side of the sm_90a kernels (ptx/sm90a/fp4lr_sm90a_*): the tensor maps they
 * read and write, their parameter block, and their launch, for the dense and the
 * fused family.  The layout of the parameters and maps is the contract of
 * tools/gen_sm90a.py (see each kernel's header comment). */
#ifndef FP4LR_SM90A_GEMM_H
#define FP4LR_SM90A_GEMM_H

#include "device.h"
#include "lowrank_params.h"
#include "plan.h"
#include "problem.h"
#include "status.h"

/* Tile raster group: tile rows along M that share W tiles in L2. */
#define FP4LR_SM90A_GROUP 8
/* Low-rank ring slots the fused kernels have barriers for. */
#define FP4LR_SM90A_LORA_SLOTS 4

/* The fused family's extra parameters, in kernel order (after the dense ones). */
typedef fp4lr_lowrank_params fp4lr_sm90a_lora_params;

/* The five tensor maps and the scalars, in the kernel's parameter order. */
typedef struct fp4lr_sm90a_params {
    CUtensorMap tmA, tmW, tmSFA, tmSFW, tmY;
    uint32_t num_k_stages;
    float alpha;
    uint32_t tiles_m, tiles_n, group;
    int fused;
    fp4lr_sm90a_lora_params lr;
} fp4lr_sm90a_params;

/* The low-rank chunk the kernels use for a plan: the budget's chunk rounded down to a
 * power of two in [16, 64] (one TMA box per chunk, one swizzle mode). */
int fp4lr_sm90a_lora_chunk(const fp4lr_plan *plan);

/* Builds the parameter block of `plan` for device buffers `dev` (pointers are
 * device addresses).  FP4LR_E_UNSUPPORTED for a plan the kernels don't cover. */
fp4lr_status fp4lr_sm90a_params_make(const fp4lr_ctx *ctx, const fp4lr_plan *plan, const fp4lr_args *dev,
                                     fp4lr_sm90a_params *out);

/* Launches `f` (the plan's entry) on at most `grid` persistent CTAs. */
fp4lr_status fp4lr_sm90a_launch(const fp4lr_ctx *ctx, CUfunction f, const fp4lr_plan *plan,
                                fp4lr_sm90a_params *params, int grid, CUstream stream);

#endif
