/* Kernel launch: cuLaunchKernelEx with the cluster-dimension attribute, and
 * the persistent grid size from occupancy.  Both are asynchronous: nothing
 * here synchronises or waits. */
#ifndef FP4LR_LAUNCH_H
#define FP4LR_LAUNCH_H

#include "device.h"

/* Launches f on `stream` (NULL = the legacy default stream).  cluster_x = 1
 * launches without a cluster attribute; > 1 adds CLUSTER_DIMENSION
 * {cluster_x, 1, 1}, and grid[0] must be a multiple of it.
 * Rules (FP4LR_E_INVALID): launch_grid (every grid dimension > 0),
 * launch_block (every block dimension > 0, at most 1024 threads),
 * launch_cluster (cluster_x >= 1 and dividing grid[0]), launch_params
 * (params NULL).  Driver failures: FP4LR_E_DRIVER through FP4LR_CU. */
fp4lr_status fp4lr_launch(const fp4lr_ctx *ctx, CUfunction f, const unsigned grid[3],
                          const unsigned block[3], unsigned dyn_smem, unsigned cluster_x,
                          CUstream stream, void **params);

/* fp4lr_launch as the programmatic dependent of the kernel launched before it on `stream`
 * (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 1): f may start once every CTA of
 * that kernel has executed griddepcontrol.launch_dependents (or exited), before it
 * completes, so f must execute griddepcontrol.wait before it reads anything that kernel
 * writes (ptx/ABI.md 4.3: only the _w<n>_yt kernels do).  Same rules as fp4lr_launch. */
fp4lr_status fp4lr_launch_dependent(const fp4lr_ctx *ctx, CUfunction f, const unsigned grid[3],
                                    const unsigned block[3], unsigned dyn_smem, unsigned cluster_x,
                                    CUstream stream, void **params);

/* The persistent grid: how many CTAs of f fit on the device at once with this
 * block, dynamic shared memory and cluster size.  cluster_x = 1: blocks per
 * SM (cuOccupancyMaxActiveBlocksPerMultiprocessor) times the SM count;
 * cluster_x > 1: cuOccupancyMaxActiveClusters times cluster_x.  f must
 * already allow dyn_smem (fp4lr_func_prepare).  No CTA fits:
 * FP4LR_E_RESOURCE "occupancy_zero". */
fp4lr_status fp4lr_occupancy_grid(const fp4lr_ctx *ctx, CUfunction f, const unsigned block[3],
                                  unsigned dyn_smem, unsigned cluster_x, int *max_ctas);

#endif
