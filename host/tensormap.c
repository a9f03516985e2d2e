/* The generic tensor-map encoder: pre-validation of the documented
 * cuTensorMapEncodeTiled constraints, the driver call, and the argument
 * listing used in every failure message. */
#include "tensormap.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Per data type: name, bits per element in global memory, bits per element
 * in the shared-memory box (the ALIGN16B packed types leave gaps: 16 values
 * take 16 bytes), and whether it is a floating-point type. */
typedef struct dtype_info {
    const char *name;
    int bits;
    int box_bits;
    int is_float;
} dtype_info;

static const dtype_info dtypes[] = {
    [CU_TENSOR_MAP_DATA_TYPE_UINT8] = {"UINT8", 8, 8, 0},
    [CU_TENSOR_MAP_DATA_TYPE_UINT16] = {"UINT16", 16, 16, 0},
    [CU_TENSOR_MAP_DATA_TYPE_UINT32] = {"UINT32", 32, 32, 0},
    [CU_TENSOR_MAP_DATA_TYPE_INT32] = {"INT32", 32, 32, 0},
    [CU_TENSOR_MAP_DATA_TYPE_UINT64] = {"UINT64", 64, 64, 0},
    [CU_TENSOR_MAP_DATA_TYPE_INT64] = {"INT64", 64, 64, 0},
    [CU_TENSOR_MAP_DATA_TYPE_FLOAT16] = {"FLOAT16", 16, 16, 1},
    [CU_TENSOR_MAP_DATA_TYPE_FLOAT32] = {"FLOAT32", 32, 32, 1},
    [CU_TENSOR_MAP_DATA_TYPE_FLOAT64] = {"FLOAT64", 64, 64, 1},
    [CU_TENSOR_MAP_DATA_TYPE_BFLOAT16] = {"BFLOAT16", 16, 16, 1},
    [CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ] = {"FLOAT32_FTZ", 32, 32, 1},
    [CU_TENSOR_MAP_DATA_TYPE_TFLOAT32] = {"TFLOAT32", 32, 32, 1},
    [CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ] = {"TFLOAT32_FTZ", 32, 32, 1},
    [CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B] = {"16U4_ALIGN8B", 4, 4, 0},
    [CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B] = {"16U4_ALIGN16B", 4, 8, 0},
    [CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B] = {"16U6_ALIGN16B", 6, 8, 0},
};
#define N_DTYPES ((int)(sizeof dtypes / sizeof dtypes[0]))

static const char *const interleave_names[] = {"NONE", "16B", "32B"};
static const char *const swizzle_names[] = {"NONE", "32B", "64B", "128B", "128B_ATOM_32B",
                                            "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B"};
static const char *const promotion_names[] = {"NONE", "L2_64B", "L2_128B", "L2_256B"};
static const char *const fill_names[] = {"NONE", "NAN_REQUEST_ZERO_FMA"};

#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))
#define NAME_OF(table, v) ((int)(v) >= 0 && (int)(v) < COUNT(table) ? (table)[(int)(v)] : "?")

const char *fp4lr_tmap_dtype_name(CUtensorMapDataType t)
{
    return (int)t >= 0 && (int)t < N_DTYPES ? dtypes[t].name : "?";
}
const char *fp4lr_tmap_interleave_name(CUtensorMapInterleave v) { return NAME_OF(interleave_names, v); }
const char *fp4lr_tmap_swizzle_name(CUtensorMapSwizzle v) { return NAME_OF(swizzle_names, v); }
const char *fp4lr_tmap_promotion_name(CUtensorMapL2promotion v) { return NAME_OF(promotion_names, v); }
const char *fp4lr_tmap_fill_name(CUtensorMapFloatOOBfill v) { return NAME_OF(fill_names, v); }

static int is_align16b_packed(CUtensorMapDataType t)
{
    return t == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B || t == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
}

static uint32_t effective_estride(uint32_t e) { return e ? e : 1; }

/* Appends "{a,b,c}" to buf at *pos. */
static void put_list(char *buf, size_t cap, size_t *pos, const char *key, const uint64_t *v, int n)
{
    *pos += (size_t)snprintf(buf + *pos, *pos < cap ? cap - *pos : 0, " %s={", key);
    for (int i = 0; i < n; ++i)
        *pos += (size_t)snprintf(buf + *pos, *pos < cap ? cap - *pos : 0, "%s%llu", i ? "," : "",
                                 (unsigned long long)v[i]);
    *pos += (size_t)snprintf(buf + *pos, *pos < cap ? cap - *pos : 0, "}");
}

void fp4lr_tmap_describe(const fp4lr_tmap_desc *d, char *buf, size_t cap)
{
    if (!cap)
        return;
    int n = d->rank < 0 ? 0 : d->rank > FP4LR_TMAP_MAX_RANK ? FP4LR_TMAP_MAX_RANK : d->rank;
    uint64_t box[FP4LR_TMAP_MAX_RANK], est[FP4LR_TMAP_MAX_RANK];
    for (int i = 0; i < n; ++i) {
        box[i] = d->box[i];
        est[i] = effective_estride(d->estrides[i]);
    }
    size_t pos = (size_t)snprintf(buf, cap, "dtype=%s rank=%d addr=0x%llx",
                                  fp4lr_tmap_dtype_name(d->dtype), d->rank,
                                  (unsigned long long)d->addr);
    put_list(buf, cap, &pos, "dims", d->dims, n);
    put_list(buf, cap, &pos, "strides", d->strides, n > 0 ? n - 1 : 0);
    put_list(buf, cap, &pos, "box", box, n);
    put_list(buf, cap, &pos, "estrides", est, n);
    snprintf(buf + (pos < cap ? pos : cap), pos < cap ? cap - pos : 0,
             " interleave=%s swizzle=%s promotion=%s fill=%s",
             fp4lr_tmap_interleave_name(d->interleave), fp4lr_tmap_swizzle_name(d->swizzle),
             fp4lr_tmap_promotion_name(d->promotion), fp4lr_tmap_fill_name(d->oob_fill));
}

/* A validation failure: the rule's own text, then every argument. */
__attribute__((format(printf, 3, 4)))
static fp4lr_status reject(const fp4lr_tmap_desc *d, const char *rule, const char *fmt, ...)
{
    char what[256], args[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    fp4lr_tmap_describe(d, args, sizeof args);
    return fp4lr_fail(FP4LR_E_INVALID, rule, "tensor map: %s; map: %s", what, args);
}

/* Span in bytes a swizzle mode allows for the inner box dimension (0: none). */
static uint32_t swizzle_span(CUtensorMapSwizzle s)
{
    switch (s) {
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64;
    case CU_TENSOR_MAP_SWIZZLE_NONE: return 0;
    default: return 128; /* 128B and every 128B_ATOM_* mode */
    }
}

static fp4lr_status check_kinds(const fp4lr_tmap_desc *d)
{
    if (d->rank < 1 || d->rank > FP4LR_TMAP_MAX_RANK)
        return reject(d, "tmap_rank", "rank %d is outside 1..%d", d->rank, FP4LR_TMAP_MAX_RANK);
    if ((int)d->dtype < 0 || (int)d->dtype >= N_DTYPES)
        return reject(d, "tmap_dtype", "data type %d is not a CUtensorMapDataType", (int)d->dtype);
    if ((int)d->interleave < 0 || (int)d->interleave >= COUNT(interleave_names) ||
        (int)d->swizzle < 0 || (int)d->swizzle >= COUNT(swizzle_names) ||
        (int)d->promotion < 0 || (int)d->promotion >= COUNT(promotion_names) ||
        (int)d->oob_fill < 0 || (int)d->oob_fill >= COUNT(fill_names))
        return reject(d, "tmap_enum", "interleave %d, swizzle %d, promotion %d or fill %d is out "
                      "of its enum", (int)d->interleave, (int)d->swizzle, (int)d->promotion,
                      (int)d->oob_fill);
    if (d->interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && d->rank < 3)
        return reject(d, "tmap_rank", "an interleaved map needs rank >= 3, got %d", d->rank);
    return fp4lr_ok();
}

/* Address, dimensions and strides (global memory side). */
static fp4lr_status check_global(const fp4lr_tmap_desc *d)
{
    const dtype_info *t = &dtypes[d->dtype];
    int wide = d->interleave == CU_TENSOR_MAP_INTERLEAVE_32B || is_align16b_packed(d->dtype);
    unsigned align = wide ? 32u : 16u;
    if (!d->addr || d->addr % align)
        return reject(d, "tmap_address_align", "global address 0x%llx must be non-null and "
                      "%u-byte aligned", (unsigned long long)d->addr, align);
    for (int i = 0; i < d->rank; ++i)
        if (d->dims[i] == 0 || d->dims[i] > (1ull << 32))
            return reject(d, "tmap_dim", "dims[%d] = %llu is outside (0, 2^32]", i,
                          (unsigned long long)d->dims[i]);
    for (int i = 0; i + 1 < d->rank; ++i) {
        if (d->strides[i] % align)
            return reject(d, "tmap_stride_align", "strides[%d] = %llu bytes is not a multiple "
                          "of %u", i, (unsigned long long)d->strides[i], align);
        if (d->strides[i] >= (1ull << 40))
            return reject(d, "tmap_stride_range", "strides[%d] = %llu bytes is not below 2^40", i,
                          (unsigned long long)d->strides[i]);
    }
    uint64_t row = (d->dims[0] * (uint64_t)t->bits + 7) / 8;
    if (d->rank > 1 && d->strides[0] < row)
        return reject(d, "tmap_stride_row", "strides[0] = %llu bytes is shorter than a row of "
                      "dims[0] = %llu elements (%llu bytes)", (unsigned long long)d->strides[0],
                      (unsigned long long)d->dims[0], (unsigned long long)row);
    return fp4lr_ok();
}

/* The packed 4- and 6-bit types' own rules. */
static fp4lr_status check_packed(const fp4lr_tmap_desc *d)
{
    const char *name = dtypes[d->dtype].name;
    if (d->dtype == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B && d->dims[0] % 2)
        return reject(d, "tmap_packed_dim", "dims[0] = %llu of %s must be even",
                      (unsigned long long)d->dims[0], name);
    if (!is_align16b_packed(d->dtype))
        return fp4lr_ok();
    if (d->dims[0] % 128)
        return reject(d, "tmap_packed_dim", "dims[0] = %llu of %s must be a multiple of 128",
                      (unsigned long long)d->dims[0], name);
    if (d->box[0] != 128)
        return reject(d, "tmap_packed_box", "box[0] = %u of %s must be 128", d->box[0], name);
    int swizzle_ok = d->swizzle == CU_TENSOR_MAP_SWIZZLE_NONE ||
                     d->swizzle == CU_TENSOR_MAP_SWIZZLE_128B ||
                     d->swizzle == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B ||
                     (d->dtype == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B &&
                      d->swizzle == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B);
    if (!swizzle_ok)
        return reject(d, "tmap_packed_swizzle", "%s does not support swizzle %s", name,
                      fp4lr_tmap_swizzle_name(d->swizzle));
    if (d->dtype == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B &&
        d->interleave != CU_TENSOR_MAP_INTERLEAVE_NONE)
        return reject(d, "tmap_packed_swizzle", "%s needs interleave NONE", name);
    return fp4lr_ok();
}

/* Box, swizzle, element strides and fill (shared memory side). */
static fp4lr_status check_box(const fp4lr_tmap_desc *d)
{
    const dtype_info *t = &dtypes[d->dtype];
    for (int i = 0; i < d->rank; ++i)
        if (d->box[i] == 0 || d->box[i] > 256)
            return reject(d, "tmap_box", "box[%d] = %u is outside (0, 256]", i, d->box[i]);
    uint64_t inner = ((uint64_t)d->box[0] * (uint64_t)t->box_bits + 7) / 8;
    int plain = d->interleave == CU_TENSOR_MAP_INTERLEAVE_NONE;
    if (plain && inner % 16)
        return reject(d, "tmap_box_bytes", "inner box of %u elements is %llu bytes, not a "
                      "multiple of 16", d->box[0], (unsigned long long)inner);
    if (d->interleave == CU_TENSOR_MAP_INTERLEAVE_32B && d->swizzle != CU_TENSOR_MAP_SWIZZLE_32B)
        return reject(d, "tmap_interleave_swizzle", "interleave 32B needs swizzle 32B, got %s",
                      fp4lr_tmap_swizzle_name(d->swizzle));
    uint32_t span = swizzle_span(d->swizzle);
    if (plain && span && inner > span)
        return reject(d, "tmap_swizzle_span", "inner box of %llu bytes exceeds the %u-byte span "
                      "of swizzle %s", (unsigned long long)inner, span,
                      fp4lr_tmap_swizzle_name(d->swizzle));
    for (int i = 0; i < d->rank; ++i)
        if (d->estrides[i] > 8)
            return reject(d, "tmap_estride", "estrides[%d] = %u is outside [1, 8]", i,
                          d->estrides[i]);
    if (d->oob_fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA && !t->is_float)
        return reject(d, "tmap_oob_fill", "NaN out-of-bounds fill needs a floating-point "
                      "type, got %s", t->name);
    return fp4lr_ok();
}

fp4lr_status fp4lr_tmap_validate(const fp4lr_tmap_desc *d)
{
    if (!d)
        return fp4lr_fail(FP4LR_E_INVALID, "null_argument", "tensor map: descriptor is NULL");
    FP4LR_TRY(check_kinds(d));
    FP4LR_TRY(check_global(d));
    FP4LR_TRY(check_packed(d));
    return check_box(d);
}

fp4lr_status fp4lr_tmap_encode(const fp4lr_ctx *ctx, CUtensorMap *out, const fp4lr_tmap_desc *d)
{
    FP4LR_TRY(fp4lr_tmap_validate(d));
    if (!out || (uintptr_t)out % 64)
        return reject(d, "tmap_out_align", "the CUtensorMap at %p must be 64-byte aligned",
                      (void *)out);

    /* The driver's array types (cuuint64_t is not uint64_t's type on LP64). */
    cuuint64_t dims[FP4LR_TMAP_MAX_RANK] = {0}, strides[FP4LR_TMAP_MAX_RANK] = {0};
    cuuint32_t box[FP4LR_TMAP_MAX_RANK] = {0}, est[FP4LR_TMAP_MAX_RANK] = {0};
    for (int i = 0; i < d->rank; ++i) {
        dims[i] = d->dims[i];
        box[i] = d->box[i];
        est[i] = effective_estride(d->estrides[i]);
        if (i + 1 < d->rank)
            strides[i] = d->strides[i];
    }

    const fp4lr_driver *drv = ctx->drv;
    CUresult r = drv->cuTensorMapEncodeTiled(out, d->dtype, (cuuint32_t)d->rank,
                                             (void *)(uintptr_t)d->addr, dims, strides, box, est,
                                             d->interleave, d->swizzle, d->promotion, d->oob_fill);
    if (r == CUDA_SUCCESS)
        return fp4lr_ok();
    fp4lr_status c = fp4lr_cu_status(drv, r, "drv->cuTensorMapEncodeTiled(out, ...)", __FILE__,
                                     __LINE__);
    char args[640];
    fp4lr_tmap_describe(d, args, sizeof args);
    fp4lr_status s = fp4lr_fail(FP4LR_E_DRIVER, c.rule, "%s; map: %s", c.msg, args);
    s.cu_result = c.cu_result;
    return s;
}
