/* cuLaunchKernelEx with an optional cluster dimension, and occupancy. */
#include "launch.h"

#include <string.h>

static fp4lr_status check_block(const unsigned block[3])
{
    unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
    if (!block[0] || !block[1] || !block[2] || threads > 1024)
        return fp4lr_fail(FP4LR_E_INVALID, "launch_block",
                          "block {%u,%u,%u}: every dimension must be > 0 and the block at most "
                          "1024 threads", block[0], block[1], block[2]);
    return fp4lr_ok();
}

/* The launch configuration shared by the launch and the occupancy query;
 * attr (two entries) must outlive cfg.  dependent: the launch may start before the
 * stream's previous kernel completes (programmatic stream serialization). */
static void fill_config(CUlaunchConfig *cfg, CUlaunchAttribute attr[2], const unsigned grid[3],
                        const unsigned block[3], unsigned dyn_smem, unsigned cluster_x, int dependent,
                        CUstream stream)
{
    memset(cfg, 0, sizeof *cfg);
    memset(attr, 0, 2 * sizeof *attr);
    cfg->gridDimX = grid[0];
    cfg->gridDimY = grid[1];
    cfg->gridDimZ = grid[2];
    cfg->blockDimX = block[0];
    cfg->blockDimY = block[1];
    cfg->blockDimZ = block[2];
    cfg->sharedMemBytes = dyn_smem;
    cfg->hStream = stream;
    cfg->attrs = attr;
    if (cluster_x > 1) {
        CUlaunchAttribute *a = &attr[cfg->numAttrs++];
        a->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        a->value.clusterDim.x = cluster_x;
        a->value.clusterDim.y = 1;
        a->value.clusterDim.z = 1;
    }
    if (dependent) {
        CUlaunchAttribute *a = &attr[cfg->numAttrs++];
        a->id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        a->value.programmaticStreamSerializationAllowed = 1;
    }
    if (!cfg->numAttrs)
        cfg->attrs = NULL;
}

static fp4lr_status launch(const fp4lr_ctx *ctx, CUfunction f, const unsigned grid[3], const unsigned block[3],
                           unsigned dyn_smem, unsigned cluster_x, int dependent, CUstream stream, void **params)
{
    if (!grid[0] || !grid[1] || !grid[2])
        return fp4lr_fail(FP4LR_E_INVALID, "launch_grid",
                          "grid {%u,%u,%u}: every dimension must be > 0", grid[0], grid[1], grid[2]);
    FP4LR_TRY(check_block(block));
    if (cluster_x < 1 || grid[0] % cluster_x)
        return fp4lr_fail(FP4LR_E_INVALID, "launch_cluster",
                          "cluster size %u must be >= 1 and divide grid[0] = %u", cluster_x, grid[0]);
    if (!params)
        return fp4lr_fail(FP4LR_E_INVALID, "launch_params",
                          "kernel parameters are NULL (pass an array, even for no parameters)");

    CUlaunchConfig cfg;
    CUlaunchAttribute attr[2];
    fill_config(&cfg, attr, grid, block, dyn_smem, cluster_x, dependent, stream);
    FP4LR_CU(ctx->drv, ctx->drv->cuLaunchKernelEx(&cfg, f, params, NULL));
    return fp4lr_ok();
}

fp4lr_status fp4lr_launch(const fp4lr_ctx *ctx, CUfunction f, const unsigned grid[3],
                          const unsigned block[3], unsigned dyn_smem, unsigned cluster_x,
                          CUstream stream, void **params)
{
    return launch(ctx, f, grid, block, dyn_smem, cluster_x, 0, stream, params);
}

fp4lr_status fp4lr_launch_dependent(const fp4lr_ctx *ctx, CUfunction f, const unsigned grid[3],
                                    const unsigned block[3], unsigned dyn_smem, unsigned cluster_x,
                                    CUstream stream, void **params)
{
    return launch(ctx, f, grid, block, dyn_smem, cluster_x, 1, stream, params);
}

fp4lr_status fp4lr_occupancy_grid(const fp4lr_ctx *ctx, CUfunction f, const unsigned block[3],
                                  unsigned dyn_smem, unsigned cluster_x, int *max_ctas)
{
    *max_ctas = 0;
    FP4LR_TRY(check_block(block));
    if (cluster_x < 1)
        return fp4lr_fail(FP4LR_E_INVALID, "launch_cluster", "cluster size must be >= 1, got 0");
    const fp4lr_driver *drv = ctx->drv;
    int ctas = 0;
    if (cluster_x == 1) {
        int per_sm = 0;
        int threads = (int)(block[0] * block[1] * block[2]);
        FP4LR_CU(drv, drv->cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, threads,
                                                                       dyn_smem));
        ctas = per_sm * ctx->sm_count;
    } else {
        /* The grid of the query is one cluster: it must be a multiple of the
         * cluster shape and is otherwise ignored. */
        const unsigned grid[3] = {cluster_x, 1, 1};
        CUlaunchConfig cfg;
        CUlaunchAttribute attr[2];
        int clusters = 0;
        fill_config(&cfg, attr, grid, block, dyn_smem, cluster_x, 0, NULL);
        FP4LR_CU(drv, drv->cuOccupancyMaxActiveClusters(&clusters, f, &cfg));
        ctas = clusters * (int)cluster_x;
    }
    if (ctas <= 0)
        return fp4lr_fail(FP4LR_E_RESOURCE, "occupancy_zero",
                          "no CTA of block {%u,%u,%u} with %u bytes of dynamic shared memory and "
                          "cluster %u fits on the device", block[0], block[1], block[2], dyn_smem,
                          cluster_x);
    *max_ctas = ctas;
    return fp4lr_ok();
}
