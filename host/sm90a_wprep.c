/* The W preparation launch and the prepared W's tensor map (sm90a_wprep.h). */
#include "sm90a_wprep.h"

#include <inttypes.h>
#include <stdint.h>

#include "launch.h"
#include "tmap_operands.h"

enum { WPREP_CHUNK = 64 };

const char *fp4lr_sm90a_wprep_entry(fp4lr_format f, int pdl)
{
    if (pdl)
        return f == FP4LR_MXFP4 ? "fp4lr_sm90a_mxfp4_wprep_pdl" : "fp4lr_sm90a_nvfp4_wprep_pdl";
    return f == FP4LR_MXFP4 ? "fp4lr_sm90a_mxfp4_wprep" : "fp4lr_sm90a_nvfp4_wprep";
}

size_t fp4lr_sm90a_wprep_bytes(const fp4lr_problem *p) { return (size_t)p->N * (size_t)p->K * 2u; }

fp4lr_status fp4lr_sm90a_wprep_check(const fp4lr_problem *p)
{
    const int64_t chunks = p->N * (p->K / WPREP_CHUNK);
    if (chunks >= FP4LR_SM90A_WPREP_MAX_CHUNKS)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "WPREP_SIZE",
                          "N*K/64 = %" PRId64 " chunks: the W preparation addresses them and their "
                          "scales in 32 bits, below 2^30 chunks (use w_prep off)", chunks);
    return fp4lr_ok();
}

fp4lr_status fp4lr_sm90a_wprep_launch(const fp4lr_ctx *ctx, CUfunction f, const fp4lr_problem *p,
                                      const fp4lr_args *dev, CUdeviceptr wp, CUstream stream)
{
    FP4LR_TRY(fp4lr_sm90a_wprep_check(p));
    CUdeviceptr w = (CUdeviceptr)(uintptr_t)dev->W, sfw = (CUdeviceptr)(uintptr_t)dev->SFW;
    uint32_t n = (uint32_t)p->N, k = (uint32_t)p->K;
    void *args[] = {&w, &sfw, &wp, &n, &k};
    const int64_t chunks = p->N * (p->K / WPREP_CHUNK);
    unsigned grid[3] = {(unsigned)((chunks + FP4LR_SM90A_WPREP_THREADS - 1) / FP4LR_SM90A_WPREP_THREADS), 1, 1};
    unsigned block[3] = {FP4LR_SM90A_WPREP_THREADS, 1, 1};
#ifdef FP4LR_MEASURE_TINYPREP
    /* -DFP4LR_MEASURE_TINYPREP (measurement builds only, never the library's): an operand
     * shape's first preparation is whole; later ones are one CTA, the first 256 chunks, and
     * the rest keep what the first wrote (a wrong Y for new inputs).  Against
     * FP4LR_MEASURE_NOPREP (host/gemm.c): what a launch in between costs the kernel, apart
     * from the preparation's work. */
    static CUdeviceptr tiny_wp;
    static int64_t tiny_n, tiny_k;
    static fp4lr_format tiny_fmt;
    if (tiny_wp == wp && tiny_n == p->N && tiny_k == p->K && tiny_fmt == p->format)
        grid[0] = 1;
    tiny_wp = wp;
    tiny_n = p->N;
    tiny_k = p->K;
    tiny_fmt = p->format;
#endif
#ifdef FP4LR_MEASURE_PREPPDL
    /* -DFP4LR_MEASURE_PREPPDL (measurement builds only, never the library's): the preparation
     * as the programmatic dependent of the kernel before it on the stream.  Safe only with
     * FP4LR_GEN_EXPERIMENT=prepwait kernels (their _pdl preparation waits for that kernel
     * before it touches memory, tools/sm90a_ptx/flags.py) and _pdl plans. */
    return fp4lr_launch_dependent(ctx, f, grid, block, 0, 1, stream, args);
#endif
    return fp4lr_launch(ctx, f, grid, block, 0, 1, stream, args);
}

fp4lr_status fp4lr_sm90a_wprep_tmap(const fp4lr_ctx *ctx, const fp4lr_problem *p, CUdeviceptr wp, uint32_t box_rows,
                                    CUtensorMap *out)
{
    fp4lr_tmap_desc d = fp4lr_tmap_half(
        (const void *)(uintptr_t)wp, p->format == FP4LR_NVFP4, p->K, p->N, p->K, WPREP_CHUNK, box_rows,
        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    return fp4lr_tmap_encode(ctx, out, &d);
}
