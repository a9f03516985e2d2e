/* Device buffer helpers over the driver table. */
#include "devbuf.h"

/* The shared argument rule: a non-zero size needs both pointers. */
static fp4lr_status check_pointers(const char *what, int host_null, CUdeviceptr dev, size_t bytes)
{
    if (bytes && (host_null || !dev))
        return fp4lr_fail(FP4LR_E_INVALID, "null_buffer",
                          "%s of %zu bytes with a %s pointer", what, bytes,
                          host_null ? "NULL host" : "null device");
    return fp4lr_ok();
}

fp4lr_status fp4lr_dev_alloc(const fp4lr_ctx *ctx, CUdeviceptr *out, size_t bytes)
{
    if (!out)
        return fp4lr_fail(FP4LR_E_INVALID, "null_argument", "fp4lr_dev_alloc: out is NULL");
    *out = 0;
    if (!bytes)
        return fp4lr_ok();
    FP4LR_CU(ctx->drv, ctx->drv->cuMemAlloc(out, bytes));
    return fp4lr_ok();
}

fp4lr_status fp4lr_dev_free(const fp4lr_ctx *ctx, CUdeviceptr ptr)
{
    if (!ptr)
        return fp4lr_ok();
    FP4LR_CU(ctx->drv, ctx->drv->cuMemFree(ptr));
    return fp4lr_ok();
}

fp4lr_status fp4lr_dev_upload(const fp4lr_ctx *ctx, CUdeviceptr dst, const void *src, size_t bytes)
{
    FP4LR_TRY(check_pointers("upload", src == NULL, dst, bytes));
    if (!bytes)
        return fp4lr_ok();
    FP4LR_CU(ctx->drv, ctx->drv->cuMemcpyHtoD(dst, src, bytes));
    return fp4lr_ok();
}

fp4lr_status fp4lr_dev_download(const fp4lr_ctx *ctx, void *dst, CUdeviceptr src, size_t bytes)
{
    FP4LR_TRY(check_pointers("download", dst == NULL, src, bytes));
    if (!bytes)
        return fp4lr_ok();
    FP4LR_CU(ctx->drv, ctx->drv->cuMemcpyDtoH(dst, src, bytes));
    return fp4lr_ok();
}

fp4lr_status fp4lr_dev_memset(const fp4lr_ctx *ctx, CUdeviceptr dst, uint8_t value, size_t bytes)
{
    FP4LR_TRY(check_pointers("memset", 0, dst, bytes));
    if (!bytes)
        return fp4lr_ok();
    FP4LR_CU(ctx->drv, ctx->drv->cuMemsetD8(dst, value, bytes));
    return fp4lr_ok();
}

fp4lr_status fp4lr_dev_poison_nan(const fp4lr_ctx *ctx, CUdeviceptr ptr, size_t bytes,
                                  int elem_bytes)
{
    if (elem_bytes != 2 && elem_bytes != 4)
        return fp4lr_fail(FP4LR_E_INVALID, "poison_elem_bytes",
                          "NaN poison needs 2- or 4-byte elements, got %d", elem_bytes);
    if (bytes % (size_t)elem_bytes || ptr % (CUdeviceptr)elem_bytes)
        return fp4lr_fail(FP4LR_E_INVALID, "poison_shape",
                          "NaN poison of %zu bytes at 0x%llx: size and address must be "
                          "multiples of the %d-byte element", bytes, (unsigned long long)ptr,
                          elem_bytes);
    FP4LR_TRY(check_pointers("NaN poison", 0, ptr, bytes));
    if (!bytes)
        return fp4lr_ok();
    size_t count = bytes / (size_t)elem_bytes;
    if (elem_bytes == 2)
        FP4LR_CU(ctx->drv, ctx->drv->cuMemsetD16(ptr, (unsigned short)FP4LR_POISON_16, count));
    else
        FP4LR_CU(ctx->drv, ctx->drv->cuMemsetD32(ptr, FP4LR_POISON_32, count));
    return fp4lr_ok();
}
