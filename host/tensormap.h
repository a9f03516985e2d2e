/* Tensor maps: one generic encoder over cuTensorMapEncodeTiled.
 *
 * The documented constraints (cuda.h, CUDA 13.0; facts sm90a-hopper.md §4.2)
 * are checked first, each with its own rule name, so a bad map never reaches
 * the driver.  When the driver still rejects a map, the status message lists
 * every argument.  Arrays run innermost dimension first, as in the driver. */
#ifndef FP4LR_TENSORMAP_H
#define FP4LR_TENSORMAP_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"

#define FP4LR_TMAP_MAX_RANK 5

typedef struct fp4lr_tmap_desc {
    CUtensorMapDataType dtype;
    int rank;                                 /* 1..5 */
    CUdeviceptr addr;                         /* global address of element 0 */
    uint64_t dims[FP4LR_TMAP_MAX_RANK];       /* elements per dimension */
    uint64_t strides[FP4LR_TMAP_MAX_RANK - 1];/* bytes; strides[i] steps dimension i + 1 */
    uint32_t box[FP4LR_TMAP_MAX_RANK];        /* elements per dimension of one copy */
    uint32_t estrides[FP4LR_TMAP_MAX_RANK];   /* traversal steps; 0 means 1 */
    CUtensorMapInterleave interleave;
    CUtensorMapSwizzle swizzle;
    CUtensorMapL2promotion promotion;
    CUtensorMapFloatOOBfill oob_fill;
} fp4lr_tmap_desc;

/* Checks the documented constraints; FP4LR_E_INVALID with one of the rules
 *   tmap_rank, tmap_dtype, tmap_enum, tmap_address_align, tmap_dim,
 *   tmap_packed_dim, tmap_stride_align, tmap_stride_range, tmap_stride_row,
 *   tmap_box, tmap_box_bytes, tmap_packed_box, tmap_swizzle_span,
 *   tmap_interleave_swizzle, tmap_packed_swizzle, tmap_estride, tmap_oob_fill
 * and a message with the offending value and every argument. */
fp4lr_status fp4lr_tmap_validate(const fp4lr_tmap_desc *d);

/* Validates, then encodes into *out (which must be 64-byte aligned, rule
 * "tmap_out_align").  A driver rejection is FP4LR_E_DRIVER with the CUresult
 * name as rule and every argument in the message. */
fp4lr_status fp4lr_tmap_encode(const fp4lr_ctx *ctx, CUtensorMap *out, const fp4lr_tmap_desc *d);

/* Writes every argument of the descriptor, e.g. "dtype=UINT8 rank=2
 * addr=0x... dims={256,64} strides={256} box={128,64} estrides={1,1}
 * interleave=NONE swizzle=128B promotion=L2_128B fill=NONE". */
void fp4lr_tmap_describe(const fp4lr_tmap_desc *d, char *buf, size_t cap);

/* Enum names without their CU_TENSOR_MAP_ prefixes ("?" when out of range). */
const char *fp4lr_tmap_dtype_name(CUtensorMapDataType t);
const char *fp4lr_tmap_interleave_name(CUtensorMapInterleave v);
const char *fp4lr_tmap_swizzle_name(CUtensorMapSwizzle v);
const char *fp4lr_tmap_promotion_name(CUtensorMapL2promotion v);
const char *fp4lr_tmap_fill_name(CUtensorMapFloatOOBfill v);

#endif
