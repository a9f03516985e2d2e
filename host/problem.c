/* Validation of an fp4lr problem and its argument pointers against the shape
 * and alignment rules of OPERATOR.md §2, and the byte sizes of its buffers.
 * Every rule has a name (status.rule) and a message naming the offending value. */
#include "problem.h"

#include <inttypes.h>

#include "scale_atom.h"

/* Tensor-map limits (cuTensorMapEncodeTiled): a global dimension is at most
 * 2^32 elements, a global stride is below 2^40 bytes.  The kernels' bulk tensor copies
 * take signed 32-bit coordinates, computed as tile index x tile size: a row (M, N) or a
 * byte of a row of A and W (K/2) stays below 2^31 with a whole tile's room to spare. */
#define DIM_MAX ((int64_t)1 << 32)
#define COORD_MAX (((int64_t)1 << 31) - 256)
#define STRIDE_LIMIT ((int64_t)1 << 40)
/* The bulk tensor copy engine's alignment for pointers and strides. */
#define ALIGN_BYTES 16

#define INVALID(rule, ...) fp4lr_fail(FP4LR_E_INVALID, rule, __VA_ARGS__)

static int64_t packed_or(int64_t ld, int64_t packed) { return ld ? ld : packed; }

const char *fp4lr_out_name(fp4lr_out_type t)
{
    switch (t) {
    case FP4LR_OUT_BF16: return "bf16";
    case FP4LR_OUT_F16: return "f16";
    case FP4LR_OUT_F32: return "f32";
    }
    return "?";
}

int64_t fp4lr_ldY_padded(int64_t N, fp4lr_out_type out)
{
    const int64_t per16 = 16 / fp4lr_out_bytes(out); /* elements in 16 bytes: 8 or 4 */
    if (N < 1 || N > INT64_MAX - (per16 - 1))
        return N;
    return (N + per16 - 1) / per16 * per16;
}

void fp4lr_problem_resolve(fp4lr_problem *p)
{
    p->ldL = packed_or(p->ldL, p->r);
    p->ldU = packed_or(p->ldU, p->r);
    p->ldY = packed_or(p->ldY, p->N);
}

/* ld >= min elements, and ld elements of elem_bytes a whole number of 16-byte
 * units.  The byte test is done modulo 16 so a huge ld cannot overflow. */
static fp4lr_status check_ld(const char *name, int64_t ld, const char *min_name, int64_t min,
                             int elem_bytes, const char *elem_name, const char *rule_min,
                             const char *rule_align)
{
    if (ld < min)
        return INVALID(rule_min, "%s = %" PRId64 " is less than %s = %" PRId64 ": %s must be >= %s",
                       name, ld, min_name, min, name, min_name);
    if ((ld % ALIGN_BYTES) * elem_bytes % ALIGN_BYTES != 0)
        return INVALID(rule_align,
                       "%s = %" PRId64 " %s elements (%d bytes each) is not a multiple of %d bytes "
                       "(bulk tensor copy stride rule)",
                       name, ld, elem_name, elem_bytes, ALIGN_BYTES);
    return fp4lr_ok();
}

static fp4lr_status check_dim(const char *what, int64_t v)
{
    if (v > DIM_MAX)
        return INVALID("DIM_LIMIT", "%s = %" PRId64 " exceeds the tensor-map dimension limit 2^32",
                       what, v);
    return fp4lr_ok();
}

/* A dimension the kernels walk in tiles: its coordinates fit the copies' signed 32 bits. */
static fp4lr_status check_coord(const char *what, int64_t v)
{
    FP4LR_TRY(check_dim(what, v));
    if (v > COORD_MAX)
        return INVALID("DIM_LIMIT",
                       "%s = %" PRId64 " exceeds 2^31 - 256: the kernels' bulk tensor copies address it "
                       "with signed 32-bit coordinates",
                       what, v);
    return fp4lr_ok();
}

/* A row stride of ld elements of elem_bytes stays below 2^40 bytes. */
static fp4lr_status check_stride(const char *what, int64_t ld, int elem_bytes)
{
    if (ld >= STRIDE_LIMIT / elem_bytes)
        return INVALID("DIM_LIMIT",
                       "%s = %" PRId64 " elements of %d bytes: the row stride reaches the "
                       "tensor-map limit 2^40 bytes",
                       what, ld, elem_bytes);
    return fp4lr_ok();
}

/* rows * row_bytes fits in int64 (and therefore in size_t). */
static fp4lr_status check_size(const char *buffer, int64_t rows, int64_t row_bytes)
{
    int64_t bytes;
    if (__builtin_mul_overflow(rows, row_bytes, &bytes))
        return INVALID("DIM_LIMIT",
                       "size of %s = %" PRId64 " rows x %" PRId64 " bytes overflows int64",
                       buffer, rows, row_bytes);
    return fp4lr_ok();
}

/* DIM_LIMIT: every tensor map the kernels encode (A, W as UINT8 {K/2, rows};
 * SFA, SFW as atom rows; L, U, Y row-major with their leading dimensions;
 * wc, beta 1-D) and every buffer size.  Runs after the ld rules, so every
 * leading dimension is positive here (M, N and K/2 themselves were checked first). */
static fp4lr_status check_dim_limits(const fp4lr_problem *p, int64_t ldL, int64_t ldU,
                                     int64_t ldY)
{
    const int ob = fp4lr_out_bytes(p->out);
    const int64_t sf_row = 128 * p->K / fp4lr_format_block(p->format); /* 512 B per 4 blocks */
    FP4LR_TRY(check_stride("K/2 (row stride of A and W)", p->K / 2, 1));
    FP4LR_TRY(check_stride("scale-atom row stride 512*K/(4*block)", sf_row, 1));
    FP4LR_TRY(check_stride("ldY", ldY, ob));
    FP4LR_TRY(check_size("A", p->M, p->K / 2));
    FP4LR_TRY(check_size("W", p->N, p->K / 2));
    FP4LR_TRY(check_size("SFA", (p->M + 127) / 128, sf_row));
    FP4LR_TRY(check_size("SFW", (p->N + 127) / 128, sf_row));
    FP4LR_TRY(check_size("Y", p->M, ldY * ob));
    if (p->r > 0) {
        FP4LR_TRY(check_stride("ldL", ldL, 2));
        FP4LR_TRY(check_stride("ldU", ldU, 2));
        FP4LR_TRY(check_size("L", p->M, ldL * 2));
        FP4LR_TRY(check_size("U", p->N, ldU * 2));
    }
    return fp4lr_ok();
}

fp4lr_status fp4lr_problem_validate(const fp4lr_problem *p)
{
    if (!p)
        return INVALID("NULL_POINTER", "problem is NULL");
    if (p->format != FP4LR_NVFP4 && p->format != FP4LR_MXFP4)
        return INVALID("FORMAT", "format = %d is neither NVFP4 (%d) nor MXFP4 (%d)",
                       (int)p->format, FP4LR_NVFP4, FP4LR_MXFP4);
    if (p->out != FP4LR_OUT_BF16 && p->out != FP4LR_OUT_F16 && p->out != FP4LR_OUT_F32)
        return INVALID("OUT_TYPE", "output type = %d is not bf16 (%d), f16 (%d) or f32 (%d)",
                       (int)p->out, FP4LR_OUT_BF16, FP4LR_OUT_F16, FP4LR_OUT_F32);
    if (p->M < 1)
        return INVALID("M_POSITIVE", "M = %" PRId64 ": M must be >= 1", p->M);
    if (p->N < 1)
        return INVALID("N_POSITIVE", "N = %" PRId64 ": N must be >= 1", p->N);
    if (p->K < 1)
        return INVALID("K_POSITIVE", "K = %" PRId64 ": K must be >= 1", p->K);
    const int kmul = fp4lr_format_k_multiple(p->format);
    if (p->K % kmul != 0)
        return INVALID("K_MULTIPLE",
                       "K = %" PRId64 " is not a multiple of %d (%s: one 128x4 scale-atom "
                       "column = 4 blocks of %d)",
                       p->K, kmul, p->format == FP4LR_NVFP4 ? "NVFP4" : "MXFP4",
                       fp4lr_format_block(p->format));
    if (p->r < 0 || p->r % 16 != 0)
        return INVALID("R_MULTIPLE", "rank %" PRId64 " is not 0 or a multiple of 16", p->r);
    if (p->r > FP4LR_RANK_MAX)
        return INVALID("R_MAX", "rank %" PRId64 " exceeds the maximum %d", p->r, FP4LR_RANK_MAX);

    /* the dimensions first: a leading dimension derived from a huge one would be blamed */
    FP4LR_TRY(check_coord("M", p->M));
    FP4LR_TRY(check_coord("N", p->N));
    FP4LR_TRY(check_coord("K/2 (bytes per row of A and W)", p->K / 2));

    const int64_t ldL = packed_or(p->ldL, p->r);
    const int64_t ldU = packed_or(p->ldU, p->r);
    const int64_t ldY = packed_or(p->ldY, p->N);
    if (p->r > 0) {
        FP4LR_TRY(check_ld("ldL", ldL, "r", p->r, 2, "bf16", "LDL_MIN", "LDL_ALIGN"));
        FP4LR_TRY(check_ld("ldU", ldU, "r", p->r, 2, "bf16", "LDU_MIN", "LDU_ALIGN"));
    }
    FP4LR_TRY(check_ld("ldY", ldY, "N", p->N, fp4lr_out_bytes(p->out), fp4lr_out_name(p->out),
                       "LDY_MIN", "LDY_ALIGN"));
    return check_dim_limits(p, ldL, ldU, ldY);
}

/* NULL_POINTER / PTR_ALIGN for one pointer the problem uses; `why` says when
 * it is required. */
static fp4lr_status check_ptr(const char *name, const void *ptr, const char *why)
{
    if (!ptr)
        return INVALID("NULL_POINTER", "%s is NULL (required %s)", name, why);
    if ((uintptr_t)ptr % ALIGN_BYTES != 0)
        return INVALID("PTR_ALIGN", "%s = %p is not %d-byte aligned", name, ptr, ALIGN_BYTES);
    return fp4lr_ok();
}

/* Y_ALIAS: the bytes the kernel writes (Y's M rows of N outputs at stride ldY) share no
 * byte with an operand it reads: a launch reads its inputs while other CTAs store Y. */
static fp4lr_status check_y_alias(const fp4lr_problem *p, const fp4lr_args *a)
{
    const fp4lr_sizes s = fp4lr_problem_sizes(p);
    const uint64_t ob = (uint64_t)fp4lr_out_bytes(p->out);
    const uint64_t y0 = (uint64_t)(uintptr_t)a->Y;
    const uint64_t y1 = y0 + ((uint64_t)(p->M - 1) * (uint64_t)packed_or(p->ldY, p->N) + (uint64_t)p->N) * ob;
    const struct { const char *name; const void *ptr; size_t bytes; } in[] = {
        {"A", a->A, s.A},   {"SFA", a->SFA, s.SFA}, {"W", a->W, s.W},          {"SFW", a->SFW, s.SFW},
        {"L", a->L, s.L},   {"U", a->U, s.U},       {"wc", a->wc, s.wc},       {"beta", a->beta, s.beta},
    };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        const uint64_t b0 = (uint64_t)(uintptr_t)in[i].ptr, b1 = b0 + in[i].bytes;
        if (in[i].bytes && b0 < y1 && y0 < b1)
            return INVALID("Y_ALIAS",
                           "Y (bytes 0x%" PRIx64 "..0x%" PRIx64 ") overlaps %s (0x%" PRIx64 "..0x%" PRIx64
                           "): the kernel reads its operands while it writes Y",
                           y0, y1, in[i].name, b0, b1);
    }
    return fp4lr_ok();
}

fp4lr_status fp4lr_args_validate(const fp4lr_problem *p, const fp4lr_args *a)
{
    if (!p || !a)
        return INVALID("NULL_POINTER", "%s is NULL", !p ? "problem" : "args");
    FP4LR_TRY(check_ptr("A", a->A, "always"));
    FP4LR_TRY(check_ptr("SFA", a->SFA, "always"));
    FP4LR_TRY(check_ptr("W", a->W, "always"));
    FP4LR_TRY(check_ptr("SFW", a->SFW, "always"));
    if (p->r > 0) {
        FP4LR_TRY(check_ptr("L", a->L, "when r > 0"));
        FP4LR_TRY(check_ptr("U", a->U, "when r > 0"));
    }
    if (p->has_wc)
        FP4LR_TRY(check_ptr("wc", a->wc, "when has_wc"));
    if (p->has_beta)
        FP4LR_TRY(check_ptr("beta", a->beta, "when has_beta"));
    FP4LR_TRY(check_ptr("Y", a->Y, "always"));
    return check_y_alias(p, a);
}

fp4lr_sizes fp4lr_problem_sizes(const fp4lr_problem *p)
{
    const int64_t kv = p->K / fp4lr_format_block(p->format);
    fp4lr_sizes s;
    s.A = (size_t)(p->M * (p->K / 2));
    s.W = (size_t)(p->N * (p->K / 2));
    s.SFA = fp4lr_sf_bytes(p->M, kv);
    s.SFW = fp4lr_sf_bytes(p->N, kv);
    s.L = p->r > 0 ? (size_t)(p->M * packed_or(p->ldL, p->r) * 2) : 0;
    s.U = p->r > 0 ? (size_t)(p->N * packed_or(p->ldU, p->r) * 2) : 0;
    s.wc = p->has_wc ? (size_t)p->N * sizeof(float) : 0;
    s.beta = p->has_beta ? (size_t)p->N * sizeof(float) : 0;
    s.Y = (size_t)(p->M * packed_or(p->ldY, p->N) * fp4lr_out_bytes(p->out));
    return s;
}
