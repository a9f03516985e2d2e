/* Device buffers: allocation, copies, fills and the NaN poison.
 *
 * Sizes are in bytes.  A zero size is a no-op (alloc gives the null pointer,
 * free of the null pointer is fine); a NULL host pointer or null device pointer
 * with a non-zero size is FP4LR_E_INVALID.  Copies are synchronous; they need
 * the context current on the calling thread (fp4lr_ctx_bind). */
#ifndef FP4LR_DEVBUF_H
#define FP4LR_DEVBUF_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"

/* The poison patterns: quiet NaNs.  0x7FFF is a quiet NaN read as bf16 and as
 * fp16 alike, so 16-bit outputs need not say which they are. */
#define FP4LR_POISON_16 0x7FFFu
#define FP4LR_POISON_32 0x7FC00000u

fp4lr_status fp4lr_dev_alloc(const fp4lr_ctx *ctx, CUdeviceptr *out, size_t bytes);
fp4lr_status fp4lr_dev_free(const fp4lr_ctx *ctx, CUdeviceptr ptr);
fp4lr_status fp4lr_dev_upload(const fp4lr_ctx *ctx, CUdeviceptr dst, const void *src, size_t bytes);
fp4lr_status fp4lr_dev_download(const fp4lr_ctx *ctx, void *dst, CUdeviceptr src, size_t bytes);
fp4lr_status fp4lr_dev_memset(const fp4lr_ctx *ctx, CUdeviceptr dst, uint8_t value, size_t bytes);

/* Fills `bytes` with the NaN pattern of elements of `elem_bytes` (2: bf16 or
 * fp16, FP4LR_POISON_16; 4: fp32, FP4LR_POISON_32).  `bytes` must be a multiple
 * of elem_bytes and ptr aligned to it (rule "poison_shape"). */
fp4lr_status fp4lr_dev_poison_nan(const fp4lr_ctx *ctx, CUdeviceptr ptr, size_t bytes,
                                  int elem_bytes);

#endif
