/* Tensor-map descriptors of the GEMM operands (packed fp4, scale atoms, bf16). */
#include "tmap_operands.h"

#include <string.h>

/* A 2-D map: `inner` elements per row, `rows` rows, `pitch` bytes apart. */
static fp4lr_tmap_desc tmap_2d(CUtensorMapDataType dtype, const void *addr, int64_t inner, int64_t rows,
                               int64_t pitch, uint32_t box_inner, uint32_t box_rows, CUtensorMapSwizzle swizzle,
                               CUtensorMapL2promotion promotion)
{
    fp4lr_tmap_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = dtype;
    d.rank = 2;
    d.addr = (CUdeviceptr)(uintptr_t)addr;
    d.dims[0] = (uint64_t)inner;
    d.dims[1] = (uint64_t)rows;
    d.strides[0] = (uint64_t)pitch;
    d.box[0] = box_inner;
    d.box[1] = box_rows;
    d.interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
    d.swizzle = swizzle;
    d.promotion = promotion;
    d.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    return d;
}

fp4lr_tmap_desc fp4lr_tmap_fp4_rows(const void *addr, int64_t rows, int64_t K, uint32_t box_bytes,
                                    uint32_t box_rows, CUtensorMapSwizzle swizzle)
{
    /* two e2m1 values per byte: K/2 bytes per row, rows packed back to back */
    return tmap_2d(CU_TENSOR_MAP_DATA_TYPE_UINT8, addr, K / 2, rows, K / 2, box_bytes, box_rows, swizzle,
                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

fp4lr_tmap_desc fp4lr_tmap_scale_atoms(const void *addr, int64_t rows, int64_t katoms, uint32_t katoms_stage,
                                       uint32_t box_blocks)
{
    /* the first two dimensions walk one 128-row block (512 bytes per atom), the third the blocks */
    fp4lr_tmap_desc d = tmap_2d(CU_TENSOR_MAP_DATA_TYPE_UINT8, addr, 256, 2 * katoms, 256, 256, 2 * katoms_stage,
                                CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    d.rank = 3;
    d.dims[2] = (uint64_t)((rows + FP4LR_TMAP_ATOM_ROWS - 1) / FP4LR_TMAP_ATOM_ROWS);
    d.strides[1] = (uint64_t)(512 * katoms);
    d.box[2] = box_blocks;
    return d;
}

fp4lr_tmap_desc fp4lr_tmap_bf16(const void *addr, int64_t inner, int64_t rows, int64_t ld, uint32_t box_inner,
                                uint32_t box_rows, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion)
{
    return tmap_2d(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, addr, inner, rows, ld * 2, box_inner, box_rows, swizzle,
                   promotion);
}

fp4lr_tmap_desc fp4lr_tmap_half(const void *addr, int f16, int64_t inner, int64_t rows, int64_t ld,
                                uint32_t box_inner, uint32_t box_rows, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion promotion)
{
    return tmap_2d(f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, addr, inner, rows,
                   ld * 2, box_inner, box_rows, swizzle, promotion);
}

fp4lr_tmap_desc fp4lr_tmap_lowrank(const void *addr, int64_t rows, int64_t r, int64_t ld, uint32_t rc,
                                   uint32_t box_rows)
{
    CUtensorMapSwizzle sw = rc == 16 ? CU_TENSOR_MAP_SWIZZLE_32B : rc == 32 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                                          : CU_TENSOR_MAP_SWIZZLE_128B;
    return fp4lr_tmap_bf16(addr, r, rows, ld, rc, box_rows, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
}

fp4lr_status fp4lr_tmap_gemm_operands(const fp4lr_ctx *ctx, const fp4lr_problem *p, const fp4lr_args *dev,
                                      const fp4lr_gemm_boxes *b, CUtensorMap *A, CUtensorMap *W,
                                      CUtensorMap *SFA, CUtensorMap *SFW, CUtensorMap *Y)
{
    const int64_t block = fp4lr_format_block(p->format);
    const int64_t katoms = (p->K / block + 3) / 4;                 /* atoms per 128-row block */
    const uint32_t katoms_stage = (uint32_t)(b->tile_k / block / 4); /* of them, per K stage */
    fp4lr_tmap_desc d = fp4lr_tmap_fp4_rows(dev->A, p->M, p->K, b->tile_k / 2, b->a_rows, b->fp4_swizzle);
    FP4LR_TRY(fp4lr_tmap_encode(ctx, A, &d));
    d = fp4lr_tmap_fp4_rows(dev->W, p->N, p->K, b->tile_k / 2, b->w_rows, b->fp4_swizzle);
    FP4LR_TRY(fp4lr_tmap_encode(ctx, W, &d));
    d = fp4lr_tmap_scale_atoms(dev->SFA, p->M, katoms, katoms_stage, 1);
    FP4LR_TRY(fp4lr_tmap_encode(ctx, SFA, &d));
    d = fp4lr_tmap_scale_atoms(dev->SFW, p->N, katoms, katoms_stage, 2);
    FP4LR_TRY(fp4lr_tmap_encode(ctx, SFW, &d));
    d = fp4lr_tmap_bf16(dev->Y, b->y_transposed ? p->M : p->N, b->y_transposed ? p->N : p->M, p->ldY, b->y_cols,
                        b->y_rows, b->y_swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE);
    return fp4lr_tmap_encode(ctx, Y, &d);
}
