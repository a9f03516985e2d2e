/* Tensor-map descriptors of the GEMM operands, shared by the sm_90a and sm_100a launchers.
 *
 * Each helper fills an fp4lr_tmap_desc (for fp4lr_tmap_encode) for one kind of operand;
 * the architectures differ only in the box and the swizzle, which the caller passes.
 * Interleave and out-of-bounds fill are NONE and element strides 1 throughout, so reads
 * past an edge return 0 and stores past an edge are clipped. */
#ifndef FP4LR_TMAP_OPERANDS_H
#define FP4LR_TMAP_OPERANDS_H

#include <stdint.h>

#include "problem.h"
#include "tensormap.h"

/* Rows of a scale-atom block: the atom buffer tiles 128 rows at a time. */
#define FP4LR_TMAP_ATOM_ROWS 128

/* The packed e2m1 operand A or W as raw bytes: UINT8 {K/2, rows}, K/2 bytes apart,
 * box {box_bytes, box_rows} (box_bytes = one K stage), L2 promotion 256B. */
fp4lr_tmap_desc fp4lr_tmap_fp4_rows(const void *addr, int64_t rows, int64_t K, uint32_t box_bytes,
                                    uint32_t box_rows, CUtensorMapSwizzle swizzle);

/* The 128x4 scale atoms of `rows` rows as a raw-byte 3-D view: UINT8 {256, 2*katoms,
 * ceil(rows/128)} (half-atoms of 256 bytes, 2*katoms of them per 128-row block, the blocks
 * outermost), strides {256, 512*katoms}; a box is the stage's katoms_stage atoms of
 * box_blocks row blocks.  No swizzle, L2 promotion 256B. */
fp4lr_tmap_desc fp4lr_tmap_scale_atoms(const void *addr, int64_t rows, int64_t katoms, uint32_t katoms_stage,
                                       uint32_t box_blocks);

/* A row-major bf16 matrix: BFLOAT16 {inner, rows}, rows ld elements apart, box
 * {box_inner, box_rows}. */
fp4lr_tmap_desc fp4lr_tmap_bf16(const void *addr, int64_t inner, int64_t rows, int64_t ld, uint32_t box_inner,
                                uint32_t box_rows, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion);

/* The same for a 2-byte float matrix of either type: FLOAT16 (f16 set) or BFLOAT16. */
fp4lr_tmap_desc fp4lr_tmap_half(const void *addr, int f16, int64_t inner, int64_t rows, int64_t ld,
                                uint32_t box_inner, uint32_t box_rows, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion promotion);

/* Where the kernels' operand boxes differ between architectures. */
typedef struct fp4lr_gemm_boxes {
    uint32_t tile_k;                 /* K elements per main stage (a box row is tile_k / 2 bytes) */
    uint32_t a_rows, w_rows;         /* rows of the A and W boxes (the CTA's share of the tile) */
    CUtensorMapSwizzle fp4_swizzle;  /* of the packed A and W rows */
    uint32_t y_cols, y_rows;         /* the output staging box */
    CUtensorMapSwizzle y_swizzle;    /* of the staging (its rows are y_cols * 2 bytes) */
    int y_transposed;                /* p is a swapped plan's kernel problem (plan.h, fp4lr_swap):
                                      * Y is N_user x M_user = p->M wide, p->N rows */
} fp4lr_gemm_boxes;

/* Encodes the five maps every GEMM entry takes, for problem p at device addresses dev:
 * A and W packed rows (fp4lr_tmap_fp4_rows), SFA (one 128-row block per box) and SFW (two,
 * the tile's 256 columns) as scale atoms of one K stage, Y bf16 with the 128-byte swizzle and
 * no L2 promotion.  Encoder failures come back as fp4lr_tmap_encode reports them. */
fp4lr_status fp4lr_tmap_gemm_operands(const fp4lr_ctx *ctx, const fp4lr_problem *p, const fp4lr_args *dev,
                                      const fp4lr_gemm_boxes *b, CUtensorMap *A, CUtensorMap *W,
                                      CUtensorMap *SFA, CUtensorMap *SFW, CUtensorMap *Y);

/* L or U of the low-rank term: BFLOAT16 {r, rows}, rows ld elements apart, one chunk of rc
 * ranks per box ({rc, box_rows}), swizzled over its 2*rc-byte rows (32B, 64B, 128B for
 * rc = 16, 32, 64), L2 promotion 128B. */
fp4lr_tmap_desc fp4lr_tmap_lowrank(const void *addr, int64_t rows, int64_t r, int64_t ld, uint32_t rc,
                                   uint32_t box_rows);

#endif
