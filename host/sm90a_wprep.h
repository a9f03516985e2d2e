/* The W preparation of the W-prepared sm_90a dense kernels (plan->w_prep).
 *
 * fp4lr_sm90a_<format>_wprep (ptx/sm90a, written by tools/gen_sm90a.py) converts W and
 * its scales once per launch into Wp, N x K f16 (NVFP4) or bf16 (MXFP4) in a workspace:
 * the values, K order and scaling the transform warps of the _t kernels write into their
 * ring, so that the _w kernel's W ring is filled by bulk copies of Wp (FLOAT16/BFLOAT16
 * {K, N}, box {64, 256}, 128-byte swizzle) and its consumers are the _t kernels'. */
#ifndef FP4LR_SM90A_WPREP_H
#define FP4LR_SM90A_WPREP_H

#include <stddef.h>

#include "device.h"
#include "problem.h"
#include "status.h"

#define FP4LR_SM90A_WPREP_THREADS 256
/* N*K/64 stays below this: the kernel's NVFP4 scale offsets (4 bytes a chunk) are 32-bit */
#define FP4LR_SM90A_WPREP_MAX_CHUNKS ((int64_t)1 << 30)
/* its static shared memory: 4 KiB a warp, where the warp's 32 chunks meet before their
 * coalesced stores */
#define FP4LR_SM90A_WPREP_SMEM (FP4LR_SM90A_WPREP_THREADS * 128)

/* The preparation kernel's entry for a format ("fp4lr_sm90a_nvfp4_wprep"); pdl: the one that
 * releases its programmatic dependent at its start ("..._wprep_pdl", the same kernel
 * otherwise), launched before a plan with plan->pdl. */
const char *fp4lr_sm90a_wprep_entry(fp4lr_format f, int pdl);

/* Bytes of Wp: N * K * 2. */
size_t fp4lr_sm90a_wprep_bytes(const fp4lr_problem *p);

/* Rule WPREP_SIZE (FP4LR_E_UNSUPPORTED): N*K/64 chunks below FP4LR_SM90A_WPREP_MAX_CHUNKS. */
fp4lr_status fp4lr_sm90a_wprep_check(const fp4lr_problem *p);

/* Launches f (the format's wprep entry) on `stream`: W and SFW of `dev` -> Wp at wp. */
fp4lr_status fp4lr_sm90a_wprep_launch(const fp4lr_ctx *ctx, CUfunction f, const fp4lr_problem *p,
                                      const fp4lr_args *dev, CUdeviceptr wp, CUstream stream);

/* The W tensor map of a _w / _x kernel: Wp as {K, N} 2-byte elements, box {64, box_rows} (the
 * kernel's tile width: 256, or 160 in the narrow _yt kernels), 128B swizzle. */
fp4lr_status fp4lr_sm90a_wprep_tmap(const fp4lr_ctx *ctx, const fp4lr_problem *p, CUdeviceptr wp, uint32_t box_rows,
                                    CUtensorMap *out);

#endif
