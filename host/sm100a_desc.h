/* sm_100a tcgen05 descriptors as small pure functions: the 32-bit instruction
 * descriptor of the block-scaled 4-bit MMA, the 64-bit shared-memory matrix
 * descriptor (operand tiles and the scale-factor copy source), tensor-memory
 * addresses and the scale-factor column offsets each MMA reads.  Each encoder
 * has a checker that names the violated rule and a decoder that takes the
 * fields back out.  Section numbers refer to
 * shared/facts/sm100a-tcgen05.md (the "fact sheet").
 *
 * No Blackwell GPU is available to the project: these functions are verified
 * against the fact sheet's worked values (tests/test_sm100a_desc.c), and the
 * kernel generator takes its descriptor constants from them. */
#ifndef FP4LR_SM100A_DESC_H
#define FP4LR_SM100A_DESC_H

#include <stdint.h>
#include <stdio.h>

#include "format.h"
#include "status.h"

/* ==== instruction descriptor, block-scaled kinds (fact sheet §1.2, §1.3, §2) ==== */

/* The .kind qualifier.  0 is deliberately not a kind, so a zeroed struct fails the check. */
typedef enum fp4lr_sm100a_kind {
    FP4LR_SM100A_KIND_MXF4 = 1,     /* .kind::mxf4: UE8M0 scales, block32 only */
    FP4LR_SM100A_KIND_MXF4NVF4 = 2, /* .kind::mxf4nvf4: UE4M3 block16, or UE8M0 block16/32 */
} fp4lr_sm100a_kind;

/* Scale-factor type, idesc bit 23 (the same for A and B); the values are the bit's. */
typedef enum fp4lr_sm100a_scale {
    FP4LR_SM100A_SCALE_UE4M3 = 0,
    FP4LR_SM100A_SCALE_UE8M0 = 1,
} fp4lr_sm100a_scale;

/* The .scale_vectorsize qualifier: elements per scale factor.
 * .block16 == .scale_vec::4X, .block32 == .scale_vec::2X for the 4-bit kinds. */
typedef enum fp4lr_sm100a_block {
    FP4LR_SM100A_BLOCK16 = 16,
    FP4LR_SM100A_BLOCK32 = 32,
} fp4lr_sm100a_block;

/* One block-scaled MMA.  kind, block and cta_group are instruction qualifiers,
 * not idesc bits, but they decide which field values are valid; the encoder
 * ignores them.  Every other field is an idesc field. */
typedef struct fp4lr_sm100a_idesc {
    /* instruction qualifiers */
    fp4lr_sm100a_kind kind;
    fp4lr_sm100a_block block;
    int cta_group;            /* 1 or 2 */
    /* idesc fields */
    fp4lr_sm100a_scale scale; /* bit 23 */
    int m;                    /* bits 27-28 = M >> 7: 128, or 256 with cta_group 2 (the pair's M) */
    int n;                    /* bits 17-22 = N >> 3: the full N, also with cta_group 2 */
    int sfa_id, sfb_id;       /* bits 29-30 / 4-5: byte or half-word of the TMEM scale word */
    int negate_a, negate_b;   /* bits 13 / 14 */
    int transpose_a;          /* bit 15: must be 0 (4-bit kinds are K-major only) */
    int transpose_b;          /* bit 16: must be 0 */
    int sparse;               /* bit 2: fp4lr issues dense MMAs only */
    int k96;                  /* bit 31: dense K = 96, sm_103a only */
} fp4lr_sm100a_idesc;

/* Elements of K per dense 4-bit MMA (32 bytes of packed E2M1; fact sheet §1.3). */
#define FP4LR_SM100A_MMA_K 64
#define FP4LR_SM100A_MMA_K_BYTES 32

/* Validates d for sm_100a.  FP4LR_E_INVALID with one of the rules
 * NULL_POINTER, IDESC_KIND, IDESC_SCALE_TYPE, IDESC_BLOCK, IDESC_MXF4_SCALE
 * (mxf4 needs UE8M0), IDESC_MXF4_BLOCK (mxf4 needs block32), IDESC_UE4M3_BLOCK
 * (UE4M3 needs block16), IDESC_CTA_GROUP, IDESC_M (M = 128 with cta_group 1,
 * 128 or 256 with cta_group 2; M = 64 does not exist for these kinds), IDESC_N
 * (8..256 step 8 with cta_group 1, 16..256 step 16 with cta_group 2),
 * IDESC_SF_ID_BLOCK16 (both IDs 0), IDESC_SF_ID_BLOCK32 (IDs 0 or 2),
 * IDESC_NEGATE (0 or 1), IDESC_TRANSPOSE (must be 0), IDESC_K96 (sm_103a only);
 * FP4LR_E_UNSUPPORTED with IDESC_SPARSE (valid PTX, but fp4lr is dense). */
fp4lr_status fp4lr_sm100a_idesc_check(const fp4lr_sm100a_idesc *d);

/* The 32-bit idesc of d (bits per fact sheet §2; a/b type E2M1 = 1 at bits 7-9
 * and 10-11).  Each field is masked to its width: check d first. */
uint32_t fp4lr_sm100a_idesc_block_scaled(const fp4lr_sm100a_idesc *d);

/* Fills the idesc fields of *out from v and leaves the qualifiers (kind, block,
 * cta_group) as they are: the 32 bits do not hold them.  M and N come back as
 * the field values times 128 and 8.  Returns FP4LR_E_INVALID when v has a
 * reserved bit set (rule IDESC_RESERVED) or an A/B type other than E2M1
 * (IDESC_AB_TYPE); *out is filled either way. */
fp4lr_status fp4lr_sm100a_idesc_decode(uint32_t v, fp4lr_sm100a_idesc *out);

/* The qualifiers and fields fp4lr uses for a format (ARCHITECTURE.md §4.2):
 * kind::mxf4nvf4 for both, NVFP4 = UE4M3 block16, MXFP4 = UE8M0 block32; SF
 * IDs 0, no negate.  m = 128 * cta_group. */
fp4lr_sm100a_idesc fp4lr_sm100a_idesc_for_format(fp4lr_format f, int cta_group, int n);

/* ==== instruction descriptor, kind::f16 (the low-rank MMA of the fused kernels) ==== */

/* The 32-bit idesc of a dense kind::f16 MMA with bf16 A and B, an fp32 accumulator, both
 * K-major: D format F32 (1) at bits 4-5, A and B format BF16 (1) at 7-9 and 10-12, N >> 3 at
 * 17-22, M >> 4 at 24-28 (CUTLASS UMMA::InstrDescriptor; the fact sheet covers only the
 * block-scaled table).  M = 128 with cta_group 1, 128 or 256 with cta_group 2; N the full N,
 * a multiple of 16 in 16..256 (of 8 in 8..256 with cta_group 1).  0 when the shape is not
 * one of those (no valid idesc is 0). */
uint32_t fp4lr_sm100a_idesc_f16_bf16(int m, int n, int cta_group);

/* "mxf4" / "mxf4nvf4" ("?" otherwise). */
const char *fp4lr_sm100a_kind_name(fp4lr_sm100a_kind k);

/* One line describing idesc v (every field, and the reserved bits if any are
 * set) to f; FP4LR_E_IO when writing fails. */
fp4lr_status fp4lr_sm100a_idesc_print(FILE *f, uint32_t v);

/* ==== shared-memory matrix descriptor (fact sheet §3) ==== */

/* Swizzle mode, bits 61-63; the values are the codes.  3, 5 and 7 are invalid. */
typedef enum fp4lr_sm100a_swizzle {
    FP4LR_SM100A_SWIZZLE_NONE = 0,
    FP4LR_SM100A_SWIZZLE_128B_BASE32B = 1, /* 128-byte swizzle with 32-byte atoms */
    FP4LR_SM100A_SWIZZLE_128B = 2,
    FP4LR_SM100A_SWIZZLE_64B = 4,
    FP4LR_SM100A_SWIZZLE_32B = 6,
} fp4lr_sm100a_swizzle;

/* Shared memory the 14-bit address fields reach: (addr & 0x3FFFF) >> 4. */
#define FP4LR_SM100A_SMEM_DESC_ADDR_LIMIT (256u * 1024u)

/* The descriptor: start (addr & 0x3FFFF) >> 4 at bits 0-13, LBO >> 4 at 16-29,
 * SBO >> 4 at 32-45, the fixed 0b001 at 46-48, base offset at 49-51, LBO mode
 * (bit 52) 0 = relative, swizzle at 61-63.  Fields are masked to their widths:
 * check the arguments first. */
uint64_t fp4lr_sm100a_smem_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                fp4lr_sm100a_swizzle sw, uint32_t base_offset);

/* FP4LR_E_INVALID with rule SDESC_ADDR_ALIGN / SDESC_LBO_ALIGN /
 * SDESC_SBO_ALIGN (16-byte multiples), SDESC_ADDR_RANGE / SDESC_LBO_RANGE /
 * SDESC_SBO_RANGE (< 256 KiB), SDESC_SWIZZLE (code not in {0,1,2,4,6}) or
 * SDESC_BASE_OFFSET (> 7, or non-zero without swizzle: there is no pattern
 * to offset). */
fp4lr_status fp4lr_sm100a_smem_desc_check(uint32_t smem_addr, uint32_t lbo_bytes,
                                          uint32_t sbo_bytes, fp4lr_sm100a_swizzle sw,
                                          uint32_t base_offset);

/* The base offset PTX asks for when a swizzle pattern starts at
 * pattern_start: 0 on the pattern's repeat boundary (1024 B for the 128-byte
 * modes, 512 B for 64-byte, 256 B for 32-byte), else (pattern_start >> 7) & 7;
 * always 0 without swizzle. */
uint32_t fp4lr_sm100a_smem_base_offset(uint32_t pattern_start, fp4lr_sm100a_swizzle sw);

/* desc with bytes >> 4 added to the start-address field (bits 0-13, wrapping
 * inside the field; no other bit changes).  Stepping K inside a K-major 128B
 * swizzled FP4 tile: a 128-byte row holds 256 packed E2M1 values = 4 MMAs of
 * K = 64 (32 bytes), so each MMA advances by 32 bytes = +2 in the field. */
uint64_t fp4lr_sm100a_smem_desc_advance(uint64_t desc, uint32_t bytes);

/* The canonical K-major 128B-swizzled FP4 operand descriptor (fact sheet §3):
 * SBO = 1024 (8 rows x 128 B), LBO = 0 (unused when swizzled), base offset 0;
 * the tile must start 1024-byte aligned.  Equals 0x4000404000000000 | (addr >> 4)
 * for addr < 256 KiB. */
uint64_t fp4lr_sm100a_smem_desc_kmajor_sw128(uint32_t smem_addr);

/* Byte offset, from a [rows x K] K-major SW128 FP4 tile's start, of the MMA
 * whose K slice starts at element k (a multiple of 64): the 256-element K
 * chunks are separate [rows x 128 B] blocks, the slice is 32 B per MMA inside
 * its chunk.  offset = (k / 256) * rows * 128 + (k % 256) / 2. */
uint32_t fp4lr_sm100a_kmajor_sw128_offset(uint32_t rows, uint32_t k);

/* The tcgen05.cp.32x128b.warpx4 source descriptor of one 512-byte scale atom
 * (fact sheet §5.3): no swizzle, SBO = 128 (8 rows x 16 B), LBO = 0.  Equals
 * 0x0000400800000000 | (addr >> 4) for addr < 256 KiB. */
uint64_t fp4lr_sm100a_sf_copy_desc(uint32_t atom_addr);

/* A descriptor's fields, as byte values. */
typedef struct fp4lr_sm100a_smem_fields {
    uint32_t start_addr;     /* field << 4 */
    uint32_t lbo_bytes;      /* field << 4 */
    uint32_t sbo_bytes;      /* field << 4 */
    uint32_t fixed_46_48;    /* must be 1 */
    uint32_t base_offset;
    uint32_t lbo_mode;       /* 0 relative; 1 absolute (sm_103a only) */
    uint32_t swizzle;        /* the raw 3-bit code */
    uint64_t reserved;       /* the bits of 14-15, 30-31, 53-60 that are set */
} fp4lr_sm100a_smem_fields;

/* Fills *out from desc.  FP4LR_E_INVALID with rule SDESC_RESERVED,
 * SDESC_FIXED (bits 46-48 != 0b001), SDESC_LBO_MODE (absolute mode is
 * sm_103a only) or SDESC_SWIZZLE; *out is filled either way. */
fp4lr_status fp4lr_sm100a_smem_desc_decode(uint64_t desc, fp4lr_sm100a_smem_fields *out);

/* One line describing desc to f; FP4LR_E_IO when writing fails. */
fp4lr_status fp4lr_sm100a_smem_desc_print(FILE *f, uint64_t desc);

/* ==== tensor memory: addresses and scale-factor columns (fact sheet §4, §5.3) ==== */

/* A TMEM address: lane in bits 31-16, column in bits 15-0. */
static inline uint32_t fp4lr_sm100a_tmem_addr(uint32_t lane, uint32_t col)
{
    return lane << 16 | (col & 0xFFFFu);
}
static inline uint32_t fp4lr_sm100a_tmem_lane(uint32_t addr) { return addr >> 16; }
static inline uint32_t fp4lr_sm100a_tmem_col(uint32_t addr) { return addr & 0xFFFFu; }

/* "copies 32 rows x 128 bit (one 512-B atom) and multicasts to all 4 warp
 * quadrants ..., filling 4 TMEM columns": one tcgen05.cp per 128x4 atom. */
#define FP4LR_SM100A_SF_COLS_PER_ATOM 4
/* Rows of one scale atom (M rows of A, N rows of B). */
#define FP4LR_SM100A_SF_ATOM_ROWS 128

/* K=64 MMAs fed by one atom column (K = 4 * block): "One NVFP4 atom feeds
 * exactly one K=64 MMA" -> 1; "One MXFP4 atom feeds two MMAs" -> 2. */
int fp4lr_sm100a_sf_mmas_per_atom(fp4lr_format f);

/* The SF ID (both A and B) of the k-th K=64 MMA of a stage: ".block16/4X:
 * SF_ID must be 0"; ".block32/2X at K=64: ... k even -> ID 0, k odd -> ID 2,
 * same 4 columns". */
int fp4lr_sm100a_sf_id(fp4lr_format f, int k_mma);

/* Scale atom columns along K per stage of tile_k elements: tile_k / (4 * block). */
int fp4lr_sm100a_sf_atoms_k(fp4lr_format f, int tile_k);

/* SFA: "SFA for M=128 therefore uses 4 columns per MMA" (128 rows per CTA, also
 * in a pair: SFA is split).  Column of the k-th MMA's SFA, relative to the
 * stage's SFA base: 4 * (k / mmas_per_atom). */
int fp4lr_sm100a_sfa_col(fp4lr_format f, int k_mma);

/* SFB: "SFB uses N/32 columns per MMA"; the columns the MMA reads: ceil(n / 32). */
int fp4lr_sm100a_sfb_mma_cols(int n);

/* TMEM columns one SFB atom column occupies: SFB is copied in whole 128-row
 * atoms ("N=64 and N=192 tiles still use 128-row SFB atoms"; CuTeDSL
 * num_sfb_tmem_cols uses round_up(N,128)), and is replicated, full N, in both
 * CTAs of a pair: round_up(tile_n, 128) / 32. */
int fp4lr_sm100a_sfb_atom_cols(int tile_n);

/* The column offset of tile n_tile's SFB inside its copied atoms: "CUTLASS
 * offsets the SFB TMEM address by +2 columns for the odd 64-wide tile ... For
 * N=192 it treats SFB as 256 wide and offsets by 2 on odd tiles"; the GPU-MODE
 * kernel: "sfb_tmem + (n_off%128)/32".  Computed as ((n_tile * tile_n) % 128) / 32. */
int fp4lr_sm100a_sfb_tile_col(int tile_n, int64_t n_tile);

/* FP4LR_E_INVALID (rule SFB_TILE_N) unless every tile of width tile_n starts
 * its SFB on a column ((n_tile * tile_n) % 128 a multiple of 32) and stays
 * inside the round_up(tile_n, 128) rows copied for it.  Holds for tile_n in
 * {32, 64, 128, 160, 192, 256} among 32..256. */
fp4lr_status fp4lr_sm100a_sfb_tile_check(int tile_n);

/* Column of the k-th MMA's SFB for tile n_tile, relative to the stage's SFB
 * base: (k / mmas_per_atom) * sfb_atom_cols(tile_n) + sfb_tile_col(tile_n, n_tile). */
int fp4lr_sm100a_sfb_col(fp4lr_format f, int tile_n, int k_mma, int64_t n_tile);

/* The scale-factor columns of one K stage, SFA first then SFB:
 * sf_atoms_k * (4 + sfb_atom_cols(tile_n)); the SFB base is at sf_atoms_k * 4. */
int fp4lr_sm100a_sf_stage_cols(fp4lr_format f, int tile_n, int tile_k);
int fp4lr_sm100a_sf_stage_sfb_base(fp4lr_format f, int tile_k);

#endif
