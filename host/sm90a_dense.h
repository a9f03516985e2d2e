/* Host side of the sm_90a dense kernels (ptx/sm90a/fp4lr_sm90a_*_dense_*): the tensor maps
 * they read and write, their parameter block, and their launch.  The layout of
 * the parameters and maps is the contract of tools/gen_sm90a.py. */
#ifndef FP4LR_SM90A_DENSE_H
#define FP4LR_SM90A_DENSE_H

#include "device.h"
#include "plan.h"
#include "problem.h"
#include "status.h"

/* Tile raster group: tile rows along M that share W tiles in L2. */
#define FP4LR_SM90A_GROUP 8

/* The five tensor maps and the scalars, in the kernel's parameter order. */
typedef struct fp4lr_sm90a_dense_params {
    CUtensorMap tmA, tmW, tmSFA, tmSFW, tmY;
    uint32_t num_k_stages;
    float alpha;
    uint32_t tiles_m, tiles_n, group;
} fp4lr_sm90a_dense_params;

/* Builds the parameter block of `plan` for device buffers `dev` (pointers are
 * device addresses).  FP4LR_E_UNSUPPORTED for a plan the kernels don't cover
 * (other tile, output type or family). */
fp4lr_status fp4lr_sm90a_dense_params_make(const fp4lr_ctx *ctx, const fp4lr_plan *plan,
                                           const fp4lr_args *dev, fp4lr_sm90a_dense_params *out);

/* Launches `f` (the plan's entry) on `grid` persistent CTAs. */
fp4lr_status fp4lr_sm90a_dense_launch(const fp4lr_ctx *ctx, CUfunction f, const fp4lr_plan *plan,
                                      fp4lr_sm90a_dense_params *params, int grid, CUstream stream);

#endif
