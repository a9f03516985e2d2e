/* Creating the device context and reading the device's properties. */
#include "device.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* The device attributes copied into fp4lr_ctx.  An optional one reads as 0
 * when the driver declines it (clock rates are deprecated in newer drivers). */
static const struct {
    CUdevice_attribute attr;
    size_t offset;
    int optional;
} ctx_attributes[] = {
    {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, offsetof(fp4lr_ctx, cc_major), 0},
    {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, offsetof(fp4lr_ctx, cc_minor), 0},
    {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, offsetof(fp4lr_ctx, sm_count), 0},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, offsetof(fp4lr_ctx, max_smem_optin), 0},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, offsetof(fp4lr_ctx, smem_per_sm), 0},
    {CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, offsetof(fp4lr_ctx, reserved_smem_per_block), 0},
    {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, offsetof(fp4lr_ctx, l2_bytes), 0},
    {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, offsetof(fp4lr_ctx, regs_per_sm), 0},
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, offsetof(fp4lr_ctx, max_threads_per_block), 0},
    {CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, offsetof(fp4lr_ctx, cluster_launch), 1},
    {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, offsetof(fp4lr_ctx, clock_khz), 1},
    {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, offsetof(fp4lr_ctx, mem_clock_khz), 1},
};

static fp4lr_status query_attributes(fp4lr_ctx *ctx)
{
    const fp4lr_driver *drv = ctx->drv;
    size_t n = sizeof ctx_attributes / sizeof ctx_attributes[0];
    for (size_t i = 0; i < n; ++i) {
        int *slot = (int *)((char *)ctx + ctx_attributes[i].offset);
        CUresult r = drv->cuDeviceGetAttribute(slot, ctx_attributes[i].attr, ctx->dev);
        if (r != CUDA_SUCCESS && !ctx_attributes[i].optional)
            return fp4lr_cu_status(drv, r, "drv->cuDeviceGetAttribute(slot, attr, ctx->dev)",
                                   __FILE__, __LINE__);
        if (r != CUDA_SUCCESS)
            *slot = 0;
    }
    return fp4lr_ok();
}

/* A failed cuInit / cuDeviceGetCount means "no usable device". */
static fp4lr_status no_device(fp4lr_status s)
{
    fp4lr_status d = fp4lr_fail(FP4LR_E_NO_DEVICE, s.rule, "no CUDA device: %s", s.msg);
    d.cu_result = s.cu_result;
    return d;
}

static fp4lr_status ctx_open(fp4lr_ctx *ctx)
{
    FP4LR_TRY(fp4lr_driver_open(&ctx->drv));
    const fp4lr_driver *drv = ctx->drv;
    ctx->driver_version = drv->version;

    CUresult r = drv->cuInit(0);
    if (r != CUDA_SUCCESS)
        return no_device(fp4lr_cu_status(drv, r, "drv->cuInit(0)", __FILE__, __LINE__));
    int count = 0;
    r = drv->cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS)
        return no_device(fp4lr_cu_status(drv, r, "drv->cuDeviceGetCount(&count)", __FILE__, __LINE__));
    if (count <= 0)
        return fp4lr_fail(FP4LR_E_NO_DEVICE, "device_count",
                          "no CUDA device: the driver reports 0 devices");
    if (ctx->ordinal < 0 || ctx->ordinal >= count)
        return fp4lr_fail(FP4LR_E_NO_DEVICE, "device_ordinal",
                          "no CUDA device %d: the driver reports %d device(s), ordinals 0..%d",
                          ctx->ordinal, count, count - 1);

    FP4LR_CU(drv, drv->cuDeviceGet(&ctx->dev, ctx->ordinal));
    FP4LR_CU(drv, drv->cuDevicePrimaryCtxRetain(&ctx->ctx, ctx->dev));
    FP4LR_CU(drv, drv->cuCtxSetCurrent(ctx->ctx));
    FP4LR_CU(drv, drv->cuDeviceGetName(ctx->name, (int)sizeof ctx->name, ctx->dev));
    return query_attributes(ctx);
}

fp4lr_status fp4lr_ctx_create(int ordinal, fp4lr_ctx **out)
{
    if (!out)
        return fp4lr_fail(FP4LR_E_INVALID, "null_argument", "fp4lr_ctx_create: out is NULL");
    *out = NULL;
    fp4lr_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return fp4lr_fail(FP4LR_E_NOMEM, "host_alloc", "cannot allocate the device context");
    ctx->ordinal = ordinal;
    fp4lr_status s = ctx_open(ctx);
    if (s.code != FP4LR_OK) {
        fp4lr_ctx_destroy(ctx);
        return s;
    }
    *out = ctx;
    return fp4lr_ok();
}

void fp4lr_ctx_destroy(fp4lr_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->ctx)
        ctx->drv->cuDevicePrimaryCtxRelease(ctx->dev);
    fp4lr_driver_close(ctx->drv);
    free(ctx);
}

fp4lr_status fp4lr_ctx_bind(const fp4lr_ctx *ctx)
{
    FP4LR_CU(ctx->drv, ctx->drv->cuCtxSetCurrent(ctx->ctx));
    return fp4lr_ok();
}

fp4lr_status fp4lr_ctx_sync(const fp4lr_ctx *ctx)
{
    FP4LR_CU(ctx->drv, ctx->drv->cuCtxSynchronize());
    return fp4lr_ok();
}

fp4lr_status fp4lr_arch_for_cc(int cc_major, int cc_minor, const char **arch)
{
    *arch = NULL;
    if (cc_major == 9 && cc_minor == 0)
        *arch = "sm90a";
    else if (cc_major == 10 && cc_minor == 0)
        *arch = "sm100a";
    else if (cc_major == 10)
        *arch = "sm100f"; /* the family-target cubins run on every 10.x part */
    if (*arch)
        return fp4lr_ok();
    return fp4lr_fail(FP4LR_E_UNSUPPORTED, "arch_unsupported",
                      "compute capability %d.%d: fp4lr has kernels for 9.0 (sm_90a) and "
                      "10.x (sm_100a on 10.0, the sm_100f family target elsewhere) only", cc_major, cc_minor);
}

fp4lr_status fp4lr_ctx_arch(const fp4lr_ctx *ctx, const char **arch)
{
    return fp4lr_arch_for_cc(ctx->cc_major, ctx->cc_minor, arch);
}
