/* sm_100a tcgen05 descriptor encoders, checkers and decoders (see
 * sm100a_desc.h; bit layouts from shared/facts/sm100a-tcgen05.md §2, §3, §5.3). */
#include "sm100a_desc.h"

#include <inttypes.h>

#define INVALID(rule, ...) fp4lr_fail(FP4LR_E_INVALID, rule, __VA_ARGS__)

/* ---- instruction descriptor ------------------------------------------------ */

/* Bit positions of the block-scaled idesc (fact sheet §2 table). */
#define ID_SPARSE 2
#define ID_SFB_ID 4
#define ID_ATYPE 7
#define ID_BTYPE 10
#define ID_NEG_A 13
#define ID_NEG_B 14
#define ID_TRANS_A 15
#define ID_TRANS_B 16
#define ID_N 17
#define ID_SCALE 23
#define ID_M 27
#define ID_SFA_ID 29
#define ID_K96 31
/* E2M1 in the 4-bit kinds' A/B type fields. */
#define ID_E2M1 1u
/* Bits 0-1, 3, 6, 12 and 24-26. */
#define ID_RESERVED_MASK (0x3u | 1u << 3 | 1u << 6 | 1u << 12 | 0x7u << 24)

static uint32_t field(int v, uint32_t width, int shift)
{
    return ((uint32_t)v & ((1u << width) - 1u)) << shift;
}

static int bits(uint32_t v, int shift, uint32_t width)
{
    return (int)((v >> shift) & ((1u << width) - 1u));
}

uint32_t fp4lr_sm100a_idesc_block_scaled(const fp4lr_sm100a_idesc *d)
{
    return field(d->sparse, 1, ID_SPARSE) | field(d->sfb_id, 2, ID_SFB_ID) |
           ID_E2M1 << ID_ATYPE | ID_E2M1 << ID_BTYPE | field(d->negate_a, 1, ID_NEG_A) |
           field(d->negate_b, 1, ID_NEG_B) | field(d->transpose_a, 1, ID_TRANS_A) |
           field(d->transpose_b, 1, ID_TRANS_B) | field(d->n >> 3, 6, ID_N) |
           field((int)d->scale, 1, ID_SCALE) | field(d->m >> 7, 2, ID_M) |
           field(d->sfa_id, 2, ID_SFA_ID) | field(d->k96, 1, ID_K96);
}

static int is_bit(int v) { return v == 0 || v == 1; }

/* The kind / scale type / vector size combinations of fact sheet §1.2. */
static fp4lr_status check_kind(const fp4lr_sm100a_idesc *d)
{
    if (d->kind != FP4LR_SM100A_KIND_MXF4 && d->kind != FP4LR_SM100A_KIND_MXF4NVF4)
        return INVALID("IDESC_KIND", "kind = %d is neither mxf4 nor mxf4nvf4", (int)d->kind);
    if (d->scale != FP4LR_SM100A_SCALE_UE4M3 && d->scale != FP4LR_SM100A_SCALE_UE8M0)
        return INVALID("IDESC_SCALE_TYPE", "scale type = %d is neither ue4m3 (0) nor ue8m0 (1)",
                       (int)d->scale);
    if (d->block != FP4LR_SM100A_BLOCK16 && d->block != FP4LR_SM100A_BLOCK32)
        return INVALID("IDESC_BLOCK", "scale vector size = %d is neither block16 nor block32",
                       (int)d->block);
    if (d->kind == FP4LR_SM100A_KIND_MXF4 && d->scale != FP4LR_SM100A_SCALE_UE8M0)
        return INVALID("IDESC_MXF4_SCALE", "kind::mxf4 takes ue8m0 scales only, not ue4m3");
    if (d->kind == FP4LR_SM100A_KIND_MXF4 && d->block != FP4LR_SM100A_BLOCK32)
        return INVALID("IDESC_MXF4_BLOCK",
                       "kind::mxf4 takes .block32 (.scale_vec::2X) only, not .block16");
    if (d->scale == FP4LR_SM100A_SCALE_UE4M3 && d->block != FP4LR_SM100A_BLOCK16)
        return INVALID("IDESC_UE4M3_BLOCK",
                       "ue4m3 scales need .block16 (.scale_vec::4X), not .block32");
    return fp4lr_ok();
}

/* M and N per cta_group (fact sheet §1.3). */
static fp4lr_status check_shape(const fp4lr_sm100a_idesc *d)
{
    if (d->cta_group != 1 && d->cta_group != 2)
        return INVALID("IDESC_CTA_GROUP", "cta_group = %d must be 1 or 2", d->cta_group);
    if (d->cta_group == 1 && d->m != 128)
        return INVALID("IDESC_M", "M = %d with cta_group::1 must be 128 (M = 64 does not exist "
                       "for the block-scaled 4-bit kinds)", d->m);
    if (d->cta_group == 2 && d->m != 128 && d->m != 256)
        return INVALID("IDESC_M", "M = %d with cta_group::2 must be 128 or 256", d->m);
    const int step = 8 * d->cta_group;
    if (d->n < step || d->n > 256 || d->n % step != 0)
        return INVALID("IDESC_N", "N = %d with cta_group::%d must be in %d..256 in steps of %d",
                       d->n, d->cta_group, step, step);
    return fp4lr_ok();
}

fp4lr_status fp4lr_sm100a_idesc_check(const fp4lr_sm100a_idesc *d)
{
    if (!d)
        return INVALID("NULL_POINTER", "idesc is NULL");
    FP4LR_TRY(check_kind(d));
    FP4LR_TRY(check_shape(d));
    /* block16 uses all 4 bytes of the scale word; block32 at K=64 a half-word. */
    if (d->block == FP4LR_SM100A_BLOCK16 && (d->sfa_id != 0 || d->sfb_id != 0))
        return INVALID("IDESC_SF_ID_BLOCK16", "SF IDs A = %d, B = %d must both be 0 with .block16",
                       d->sfa_id, d->sfb_id);
    if (d->block == FP4LR_SM100A_BLOCK32 &&
        ((d->sfa_id != 0 && d->sfa_id != 2) || (d->sfb_id != 0 && d->sfb_id != 2)))
        return INVALID("IDESC_SF_ID_BLOCK32", "SF IDs A = %d, B = %d must be 0 or 2 with .block32",
                       d->sfa_id, d->sfb_id);
    if (!is_bit(d->negate_a) || !is_bit(d->negate_b))
        return INVALID("IDESC_NEGATE", "negate A = %d, B = %d must be 0 or 1", d->negate_a,
                       d->negate_b);
    if (d->transpose_a || d->transpose_b)
        return INVALID("IDESC_TRANSPOSE", "transpose A = %d, B = %d: the 4-bit kinds take K-major "
                       "operands only", d->transpose_a, d->transpose_b);
    if (d->k96)
        return INVALID("IDESC_K96", "dense K = 96 (idesc bit 31) needs the absolute LBO mode, "
                       "which is sm_103a only");
    if (d->sparse)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "IDESC_SPARSE",
                          "sparse MMA (idesc bit 2): fp4lr issues dense MMAs only");
    return fp4lr_ok();
}

fp4lr_status fp4lr_sm100a_idesc_decode(uint32_t v, fp4lr_sm100a_idesc *out)
{
    if (!out)
        return INVALID("NULL_POINTER", "decoded idesc is NULL");
    out->sparse = bits(v, ID_SPARSE, 1);
    out->sfb_id = bits(v, ID_SFB_ID, 2);
    out->negate_a = bits(v, ID_NEG_A, 1);
    out->negate_b = bits(v, ID_NEG_B, 1);
    out->transpose_a = bits(v, ID_TRANS_A, 1);
    out->transpose_b = bits(v, ID_TRANS_B, 1);
    out->n = bits(v, ID_N, 6) << 3;
    out->scale = (fp4lr_sm100a_scale)bits(v, ID_SCALE, 1);
    out->m = bits(v, ID_M, 2) << 7;
    out->sfa_id = bits(v, ID_SFA_ID, 2);
    out->k96 = bits(v, ID_K96, 1);
    if (v & ID_RESERVED_MASK)
        return INVALID("IDESC_RESERVED", "idesc 0x%08" PRIX32 " has reserved bits 0x%08" PRIX32
                       " set", v, v & ID_RESERVED_MASK);
    if ((uint32_t)bits(v, ID_ATYPE, 3) != ID_E2M1 || (uint32_t)bits(v, ID_BTYPE, 2) != ID_E2M1)
        return INVALID("IDESC_AB_TYPE", "idesc 0x%08" PRIX32 ": A type %d, B type %d, the 4-bit "
                       "kinds need E2M1 = 1", v, bits(v, ID_ATYPE, 3), bits(v, ID_BTYPE, 2));
    return fp4lr_ok();
}

fp4lr_sm100a_idesc fp4lr_sm100a_idesc_for_format(fp4lr_format f, int cta_group, int n)
{
    const int nv = f == FP4LR_NVFP4;
    fp4lr_sm100a_idesc d = {
        .kind = FP4LR_SM100A_KIND_MXF4NVF4,
        .block = nv ? FP4LR_SM100A_BLOCK16 : FP4LR_SM100A_BLOCK32,
        .cta_group = cta_group,
        .scale = nv ? FP4LR_SM100A_SCALE_UE4M3 : FP4LR_SM100A_SCALE_UE8M0,
        .m = 128 * cta_group,
        .n = n,
    };
    return d;
}

uint32_t fp4lr_sm100a_idesc_f16_bf16(int m, int n, int cta_group)
{
    const int n_step = cta_group == 2 ? 16 : 8;
    if ((cta_group != 1 && cta_group != 2) || (m != 128 && !(cta_group == 2 && m == 256)) || n < n_step ||
        n > 256 || n % n_step != 0)
        return 0;
    const uint32_t f32 = 1, bf16 = 1;
    return (f32 << 4) | (bf16 << 7) | (bf16 << 10) | ((uint32_t)(n >> 3) << 17) | ((uint32_t)(m >> 4) << 24);
}

const char *fp4lr_sm100a_kind_name(fp4lr_sm100a_kind k)
{
    return k == FP4LR_SM100A_KIND_MXF4 ? "mxf4" : k == FP4LR_SM100A_KIND_MXF4NVF4 ? "mxf4nvf4" : "?";
}

static fp4lr_status io_status(FILE *f, const char *what)
{
    if (ferror(f))
        return fp4lr_fail(FP4LR_E_IO, "WRITE", "writing the %s failed", what);
    return fp4lr_ok();
}

fp4lr_status fp4lr_sm100a_idesc_print(FILE *f, uint32_t v)
{
    if (!f)
        return INVALID("NULL_POINTER", "FILE is NULL");
    fp4lr_sm100a_idesc d = {0};
    const fp4lr_status s = fp4lr_sm100a_idesc_decode(v, &d);
    fprintf(f, "idesc 0x%08" PRIX32 ": M=%d N=%d K=%d scale=%s sfa_id=%d sfb_id=%d negate=%d/%d "
               "transpose=%d/%d sparse=%d a/b type=%d/%d",
            v, d.m, d.n, d.k96 ? 96 : d.sparse ? 128 : 64,
            d.scale == FP4LR_SM100A_SCALE_UE8M0 ? "ue8m0" : "ue4m3", d.sfa_id, d.sfb_id,
            d.negate_a, d.negate_b, d.transpose_a, d.transpose_b, d.sparse, bits(v, ID_ATYPE, 3),
            bits(v, ID_BTYPE, 2));
    if (s.code != FP4LR_OK)
        fprintf(f, " [%s: %s]", s.rule, s.msg);
    fputc('\n', f);
    return io_status(f, "idesc");
}

/* ---- shared-memory descriptor ---------------------------------------------- */

#define SD_START 0
#define SD_LBO 16
#define SD_SBO 32
#define SD_FIXED 46
#define SD_BASE 49
#define SD_LBO_MODE 52
#define SD_SWIZZLE 61
#define SD_ADDR_MASK 0x3FFFFu /* 18 address bits -> 14 field bits after >> 4 */
#define SD_FIELD14 0x3FFFull
/* Bits 14-15, 30-31 and 53-60. */
#define SD_RESERVED_MASK (0x3ull << 14 | 0x3ull << 30 | 0xFFull << 53)

static uint64_t sd_field(uint32_t v, uint64_t mask, int shift) { return ((uint64_t)v & mask) << shift; }

static uint32_t sd_bits(uint64_t v, int shift, uint64_t mask) { return (uint32_t)((v >> shift) & mask); }

uint64_t fp4lr_sm100a_smem_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                fp4lr_sm100a_swizzle sw, uint32_t base_offset)
{
    return sd_field((smem_addr & SD_ADDR_MASK) >> 4, SD_FIELD14, SD_START) |
           sd_field(lbo_bytes >> 4, SD_FIELD14, SD_LBO) | sd_field(sbo_bytes >> 4, SD_FIELD14, SD_SBO) |
           1ull << SD_FIXED | sd_field(base_offset, 0x7, SD_BASE) |
           sd_field((uint32_t)sw, 0x7, SD_SWIZZLE);
}

static int swizzle_valid(uint32_t code) { return code == 0 || code == 1 || code == 2 || code == 4 || code == 6; }

/* One 16-byte-granular byte value below 256 KiB. */
static fp4lr_status check_bytes(uint32_t v, const char *what, const char *align_rule,
                                const char *range_rule)
{
    if (v % 16 != 0)
        return INVALID(align_rule, "%s = %" PRIu32 " bytes is not a multiple of 16", what, v);
    if (v >= FP4LR_SM100A_SMEM_DESC_ADDR_LIMIT)
        return INVALID(range_rule, "%s = %" PRIu32 " bytes does not fit the 14-bit field (< %u)",
                       what, v, FP4LR_SM100A_SMEM_DESC_ADDR_LIMIT);
    return fp4lr_ok();
}

fp4lr_status fp4lr_sm100a_smem_desc_check(uint32_t smem_addr, uint32_t lbo_bytes,
                                          uint32_t sbo_bytes, fp4lr_sm100a_swizzle sw,
                                          uint32_t base_offset)
{
    FP4LR_TRY(check_bytes(smem_addr, "start address", "SDESC_ADDR_ALIGN", "SDESC_ADDR_RANGE"));
    FP4LR_TRY(check_bytes(lbo_bytes, "LBO", "SDESC_LBO_ALIGN", "SDESC_LBO_RANGE"));
    FP4LR_TRY(check_bytes(sbo_bytes, "SBO", "SDESC_SBO_ALIGN", "SDESC_SBO_RANGE"));
    if (!swizzle_valid((uint32_t)sw))
        return INVALID("SDESC_SWIZZLE", "swizzle code %u is not one of 0, 1, 2, 4, 6",
                       (unsigned)sw);
    if (base_offset > 7)
        return INVALID("SDESC_BASE_OFFSET", "base offset %" PRIu32 " does not fit 3 bits",
                       base_offset);
    if (sw == FP4LR_SM100A_SWIZZLE_NONE && base_offset != 0)
        return INVALID("SDESC_BASE_OFFSET", "base offset %" PRIu32 " without swizzle: there is "
                       "no pattern to offset", base_offset);
    return fp4lr_ok();
}

uint32_t fp4lr_sm100a_smem_base_offset(uint32_t pattern_start, fp4lr_sm100a_swizzle sw)
{
    uint32_t repeat;
    switch (sw) {
    case FP4LR_SM100A_SWIZZLE_128B:
    case FP4LR_SM100A_SWIZZLE_128B_BASE32B: repeat = 1024; break;
    case FP4LR_SM100A_SWIZZLE_64B: repeat = 512; break;
    case FP4LR_SM100A_SWIZZLE_32B: repeat = 256; break;
    default: return 0;
    }
    return pattern_start % repeat == 0 ? 0 : (pattern_start >> 7) & 7;
}

uint64_t fp4lr_sm100a_smem_desc_advance(uint64_t desc, uint32_t bytes)
{
    const uint64_t start = ((desc & SD_FIELD14) + (bytes >> 4)) & SD_FIELD14;
    return (desc & ~SD_FIELD14) | start;
}

uint64_t fp4lr_sm100a_smem_desc_kmajor_sw128(uint32_t smem_addr)
{
    return fp4lr_sm100a_smem_desc(smem_addr, 0, 1024, FP4LR_SM100A_SWIZZLE_128B, 0);
}

uint32_t fp4lr_sm100a_kmajor_sw128_offset(uint32_t rows, uint32_t k)
{
    return (k / 256) * rows * 128 + (k % 256) / 2;
}

uint64_t fp4lr_sm100a_sf_copy_desc(uint32_t atom_addr)
{
    return fp4lr_sm100a_smem_desc(atom_addr, 0, 128, FP4LR_SM100A_SWIZZLE_NONE, 0);
}

fp4lr_status fp4lr_sm100a_smem_desc_decode(uint64_t desc, fp4lr_sm100a_smem_fields *out)
{
    if (!out)
        return INVALID("NULL_POINTER", "decoded descriptor is NULL");
    out->start_addr = sd_bits(desc, SD_START, SD_FIELD14) << 4;
    out->lbo_bytes = sd_bits(desc, SD_LBO, SD_FIELD14) << 4;
    out->sbo_bytes = sd_bits(desc, SD_SBO, SD_FIELD14) << 4;
    out->fixed_46_48 = sd_bits(desc, SD_FIXED, 0x7);
    out->base_offset = sd_bits(desc, SD_BASE, 0x7);
    out->lbo_mode = sd_bits(desc, SD_LBO_MODE, 0x1);
    out->swizzle = sd_bits(desc, SD_SWIZZLE, 0x7);
    out->reserved = desc & SD_RESERVED_MASK;
    if (out->reserved)
        return INVALID("SDESC_RESERVED", "descriptor 0x%016" PRIX64 " has reserved bits 0x%016"
                       PRIX64 " set", desc, out->reserved);
    if (out->fixed_46_48 != 1)
        return INVALID("SDESC_FIXED", "descriptor 0x%016" PRIX64 ": bits 46-48 = %" PRIu32
                       ", sm_100 needs the constant 0b001", desc, out->fixed_46_48);
    if (out->lbo_mode)
        return INVALID("SDESC_LBO_MODE", "descriptor 0x%016" PRIX64 ": absolute LBO mode (bit 52) "
                       "is sm_103a only", desc);
    if (!swizzle_valid(out->swizzle))
        return INVALID("SDESC_SWIZZLE", "descriptor 0x%016" PRIX64 ": swizzle code %" PRIu32
                       " is not one of 0, 1, 2, 4, 6", desc, out->swizzle);
    return fp4lr_ok();
}

static const char *swizzle_name(uint32_t code)
{
    switch (code) {
    case FP4LR_SM100A_SWIZZLE_NONE: return "none";
    case FP4LR_SM100A_SWIZZLE_128B_BASE32B: return "128B-base32B";
    case FP4LR_SM100A_SWIZZLE_128B: return "128B";
    case FP4LR_SM100A_SWIZZLE_64B: return "64B";
    case FP4LR_SM100A_SWIZZLE_32B: return "32B";
    }
    return "invalid";
}

fp4lr_status fp4lr_sm100a_smem_desc_print(FILE *f, uint64_t desc)
{
    if (!f)
        return INVALID("NULL_POINTER", "FILE is NULL");
    fp4lr_sm100a_smem_fields d;
    const fp4lr_status s = fp4lr_sm100a_smem_desc_decode(desc, &d);
    fprintf(f, "smem desc 0x%016" PRIX64 ": start=0x%05" PRIX32 " LBO=%" PRIu32 " SBO=%" PRIu32
               " fixed=%" PRIu32 " base_offset=%" PRIu32 " lbo_mode=%" PRIu32 " swizzle=%" PRIu32
               " (%s)",
            desc, d.start_addr, d.lbo_bytes, d.sbo_bytes, d.fixed_46_48, d.base_offset, d.lbo_mode,
            d.swizzle, swizzle_name(d.swizzle));
    if (s.code != FP4LR_OK)
        fprintf(f, " [%s: %s]", s.rule, s.msg);
    fputc('\n', f);
    return io_status(f, "descriptor");
}

/* ---- tensor-memory scale-factor columns ------------------------------------ */

int fp4lr_sm100a_sf_mmas_per_atom(fp4lr_format f)
{
    return fp4lr_format_k_multiple(f) / FP4LR_SM100A_MMA_K;
}

int fp4lr_sm100a_sf_id(fp4lr_format f, int k_mma)
{
    return f == FP4LR_NVFP4 ? 0 : 2 * (k_mma % 2);
}

int fp4lr_sm100a_sf_atoms_k(fp4lr_format f, int tile_k)
{
    return tile_k / fp4lr_format_k_multiple(f);
}

int fp4lr_sm100a_sfa_col(fp4lr_format f, int k_mma)
{
    return FP4LR_SM100A_SF_COLS_PER_ATOM * (k_mma / fp4lr_sm100a_sf_mmas_per_atom(f));
}

int fp4lr_sm100a_sfb_mma_cols(int n) { return (n + 31) / 32; }

int fp4lr_sm100a_sfb_atom_cols(int tile_n)
{
    const int rows = (tile_n + FP4LR_SM100A_SF_ATOM_ROWS - 1) / FP4LR_SM100A_SF_ATOM_ROWS *
                     FP4LR_SM100A_SF_ATOM_ROWS;
    return rows / 32;
}

int fp4lr_sm100a_sfb_tile_col(int tile_n, int64_t n_tile)
{
    return (int)((n_tile * tile_n) % FP4LR_SM100A_SF_ATOM_ROWS / 32);
}

fp4lr_status fp4lr_sm100a_sfb_tile_check(int tile_n)
{
    if (tile_n < 1 || tile_n > 256)
        return INVALID("SFB_TILE_N", "tile_n = %d is outside 1..256", tile_n);
    const int copied = fp4lr_sm100a_sfb_atom_cols(tile_n) * 32;
    /* Tile starts repeat modulo the atom's 128 rows after 128 tiles at most. */
    for (int t = 0; t < FP4LR_SM100A_SF_ATOM_ROWS; t++) {
        const int start = t * tile_n % FP4LR_SM100A_SF_ATOM_ROWS;
        if (start % 32 != 0)
            return INVALID("SFB_TILE_N", "tile_n = %d: tile %d starts its SFB at atom row %d, "
                           "not on a TMEM column (a multiple of 32)", tile_n, t, start);
        if (start + tile_n > copied)
            return INVALID("SFB_TILE_N", "tile_n = %d: tile %d needs SFB atom rows %d..%d, past "
                           "the %d rows copied for it", tile_n, t, start, start + tile_n - 1,
                           copied);
    }
    return fp4lr_ok();
}

int fp4lr_sm100a_sfb_col(fp4lr_format f, int tile_n, int k_mma, int64_t n_tile)
{
    return k_mma / fp4lr_sm100a_sf_mmas_per_atom(f) * fp4lr_sm100a_sfb_atom_cols(tile_n) +
           fp4lr_sm100a_sfb_tile_col(tile_n, n_tile);
}

int fp4lr_sm100a_sf_stage_sfb_base(fp4lr_format f, int tile_k)
{
    return fp4lr_sm100a_sf_atoms_k(f, tile_k) * FP4LR_SM100A_SF_COLS_PER_ATOM;
}

int fp4lr_sm100a_sf_stage_cols(fp4lr_format f, int tile_n, int tile_k)
{
    return fp4lr_sm100a_sf_atoms_k(f, tile_k) *
           (FP4LR_SM100A_SF_COLS_PER_ATOM + fp4lr_sm100a_sfb_atom_cols(tile_n));
}
