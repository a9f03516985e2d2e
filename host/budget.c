/* The budget solver (ARCHITECTURE.md §5): request validation, the per-CTA
 * table of resident shared-memory objects, the stage counts, the sm_100a
 * tensor-memory plan, the slicing check, and the table's text/JSON forms.
 * The object sizes and the reasons behind them are in budget.h. */
#include "budget.h"
#include "sm100a_desc.h"

#include <inttypes.h>
#include <string.h>

#include "problem.h"
#include "scale_atom.h"

/* Writeback: each CTA stages a 128-byte-wide column chunk of its rows in the
 * output type; the stores are tracked with bulk async-groups
 * (cp.async.bulk.wait_group.read), so the ring has no mbarriers.  Double-buffered, except
 * in the sm_90a fused kernels, which keep 16 KiB (room for the wc / beta slices, see
 * size_objects): one 64-column buffer (in the 256-wide _x kernels, w_inline, the converters'
 * staging becomes the second once they have converted their last unit: charged once, in
 * its own row), or in the narrow _x tile two 32-column ones (tools/sm90a_ptx/kstate.py WB_STAGES,
 * EPI_COLS and XDBUF say what each measured).  The swapped prepared kernels (_w<n>_yt,
 * yt_prepared) keep two in both families, as their _x counterparts have. */
#define WB_CHUNK_BYTES 128
#define WB_CHUNK_BYTES_SM90A_FUSED_X 64
#define WB_STAGES 2
#define WB_STAGES_SM90A_FUSED 1
/* sm_90a: the transform warps dequantize W to bf16 64 K-columns at a time into a ring
 * of 3 slots when at least 3 main stages fit beside it, else 2 (the kernel's entry name
 * carries _t3 for the deep ring).  Measured (H100, b739920, NVFP4 dense, same run): 3 slots
 * with 3 main stages +5 % against 2 slots with 4; 3 main stages run like 4 (H200).  One
 * CTA only: the pair (W multicast, both CTAs release each stage) with 3 slots and 3 main
 * stages ran at 0.66x of one CTA (H200, 8c494db, full benchmark, NVFP4 dense), against
 * 0.89x with 2 slots and 4 stages before (2b580a1), so a pair keeps 2 slots.  Where the
 * low-rank ring leaves fewer than 3 main stages beside 3 slots, its chunk shrinks first
 * (r = 128: 2 slots of 16 ranks): H200, e36a593, NVFP4 fused r = 128 +3.1 / +3.5 % against
 * 2 transform slots with 2 x 32 ranks.  A 4th slot (dense, one writeback buffer) lost:
 * NVFP4 0.956x (6450aa6). */
#define TRANSFORM_K 64
#define TRANSFORM_STAGES_DEEP 3
#define TRANSFORM_STAGES 2
#define TRANSFORM_DEEP_MIN_MAIN 3
/* W prepared (req->w_prep): the ring holds bulk copies of the prepared W, and a main
 * stage only A and SFA (9 KiB), so the ring takes what 3 main stages leave, up to 5
 * slots (5 x 32 KiB beside 3 stages and 2 writeback buffers fill 220 of 227 KiB). */
#define WPREP_STAGES_MAX 5
/* ... and the ping-pong tile's (128 wide, W prepared, not swapped: tools/gen_sm90a_pp.py) slots
 * are half as large (16 KiB): up to 10, the same 160 KiB of ring.  Its two consumer warpgroups
 * own whole tiles, so in the fused family each has its own low-rank ring (charged twice) and
 * the epilogue keeps two writeback buffers (each consumer's 8 KiB half of each). */
#define WPREP_STAGES_MAX_PP 10
#define WPREP_TILE_N_PP 128
#define PP_CONSUMERS 2
#define WPREP_MIN_MAIN 3
/* ... and at most 4 main stages (more buy nothing for 9 KiB of A; what is left goes to the
 * low-rank ring), which keeps the instantiations few. */
#define WPREP_MAX_MAIN 4
/* W converted in the kernel (req->w_inline): 6 converter warps, 32 chunks of 128 bytes
 * staged each (tools/sm90a_ptx/flags.py XCONV_WARPS, XCONV_STAGE). */
#define XCONV_STAGING (6 * 4096)
/* Low-rank ring: chunks of at most 128 ranks; up to 4 stages. */
#define LORA_CHUNK_MAX 128
#define LORA_STAGES_MAX 4
/* Fixed area: 8-byte mbarriers, a 2-entry tile queue of 16-byte entries with
 * a full/empty barrier each, the 16-byte TMEM address slot (sm_100a); the
 * area is rounded up to 1024 B so the swizzled tiles after it stay aligned. */
#define BARRIER_BYTES 8
#define TILE_QUEUE_DEPTH 2
#define TILE_QUEUE_ENTRY_BYTES 16
#define TMEM_SLOT_BYTES 16
#define FIXED_ALIGN 1024
/* Sanity bounds that keep every product far from int64 overflow. */
#define TILE_DIM_MAX 4096
#define SMEM_MAX ((int64_t)1 << 31)
#define FORCED_STAGES_MAX 64
/* sm_100a kernels are instantiated for tile_n >= 64: the epilogue's 128-byte
 * chunk and the 128-row SFB atom are wasted on narrower tiles (the MMA itself
 * accepts N from 8, or 16 with a pair). */
#define SM100_TILE_N_MIN 64
#define MMA_N_MAX 256

#define INVALID(rule, ...) fp4lr_fail(FP4LR_E_INVALID, rule, __VA_ARGS__)
#define INFEASIBLE(rule, ...) fp4lr_fail(FP4LR_E_INFEASIBLE, rule, __VA_ARGS__)

/* ---- names ----------------------------------------------------------------- */

const char *fp4lr_family_name(fp4lr_family f)
{
    return f == FP4LR_FAMILY_DENSE ? "dense" : f == FP4LR_FAMILY_FUSED ? "fused" : "?";
}

const char *fp4lr_policy_name(fp4lr_policy p)
{
    switch (p) {
    case FP4LR_POLICY_SPLIT: return "split";
    case FP4LR_POLICY_NAIVE: return "naive";
    case FP4LR_POLICY_HALVE_ALL: return "halve-all";
    }
    return "?";
}

int fp4lr_family_parse(const char *s, fp4lr_family *out)
{
    for (int f = FP4LR_FAMILY_DENSE; f <= FP4LR_FAMILY_FUSED; f++)
        if (s && strcmp(s, fp4lr_family_name((fp4lr_family)f)) == 0) {
            *out = (fp4lr_family)f;
            return 0;
        }
    return -1;
}

int fp4lr_policy_parse(const char *s, fp4lr_policy *out)
{
    for (int p = FP4LR_POLICY_SPLIT; p <= FP4LR_POLICY_HALVE_ALL; p++)
        if (s && strcmp(s, fp4lr_policy_name((fp4lr_policy)p)) == 0) {
            *out = (fp4lr_policy)p;
            return 0;
        }
    return -1;
}

/* ---- request validation ---------------------------------------------------- */

/* 1 for the ping-pong tile's request (sm_90a, W prepared, 128 wide, not converted in the
 * kernel, not swapped). */
static int is_pp(const fp4lr_budget_req *r)
{
    return r->arch == FP4LR_ARCH_SM90A && r->w_prep && r->tile_n == WPREP_TILE_N_PP && !r->w_inline &&
           !r->yt_prepared;
}

/* The deepest prepared-W ring the kernels of request r are built for. */
static int wprep_slots_max(const fp4lr_budget_req *r) { return is_pp(r) ? WPREP_STAGES_MAX_PP : WPREP_STAGES_MAX; }

/* The low-rank rings a CTA holds: one per consumer warpgroup in the ping-pong tile. */
static int lora_rings(const fp4lr_budget_req *r) { return is_pp(r) ? PP_CONSUMERS : 1; }

/* The sm_90a fused kernels of one CTA with a W ring, not swapped, 256 wide (_w: W prepared;
 * _x: W converted in the kernel): a tile's low-rank chunks past the ring come through the W
 * ring, each in one W slot (tools/sm90a_ptx/kernel.py, LTAIL), so such a chunk must fit a slot
 * (rule LORA_TAIL).  The pair's W slots are filled by rank 0's multicast: its chunks stay in the
 * low-rank ring; so do the swapped kernels'. */
static int lora_tail_in_w_ring(const fp4lr_budget_req *r)
{
    return r->arch == FP4LR_ARCH_SM90A && r->w_prep && !r->yt && !r->yt_prepared && !is_pp(r) &&
           r->rank > 0 && r->tile_n == 256 && r->cluster == 1;
}

/* Rules every request obeys whatever the architecture (FP4LR_E_INVALID). */
static fp4lr_status validate_request(const fp4lr_budget_req *r)
{
    if (!fp4lr_arch_valid(r->arch))
        return INVALID("ARCH", "arch = %d is neither sm90a nor sm100a", (int)r->arch);
    if (r->format != FP4LR_NVFP4 && r->format != FP4LR_MXFP4)
        return INVALID("FORMAT", "format = %d is neither nvfp4 nor mxfp4", (int)r->format);
    if (r->family != FP4LR_FAMILY_DENSE && r->family != FP4LR_FAMILY_FUSED)
        return INVALID("FAMILY", "family = %d is neither dense nor fused", (int)r->family);
    if (r->policy < FP4LR_POLICY_SPLIT || r->policy > FP4LR_POLICY_HALVE_ALL)
        return INVALID("POLICY", "policy = %d is not split, naive or halve-all", (int)r->policy);
    if (r->cluster != 1 && r->cluster != 2)
        return INVALID("CLUSTER", "cluster = %d: the cluster size must be 1 or 2", r->cluster);
    if (r->tile_m < 1 || r->tile_m > TILE_DIM_MAX || r->tile_m % r->cluster != 0)
        return INVALID("TILE_M", "tile_m = %d must be in 1..%d and divisible by the cluster size %d",
                       r->tile_m, TILE_DIM_MAX, r->cluster);
    if (r->tile_n < 1 || r->tile_n > TILE_DIM_MAX)
        return INVALID("TILE_N", "tile_n = %d must be in 1..%d", r->tile_n, TILE_DIM_MAX);
    const int kmul = fp4lr_format_k_multiple(r->format);
    if (r->tile_k < 1 || r->tile_k > TILE_DIM_MAX || r->tile_k % kmul != 0)
        return INVALID("TILE_K",
                       "tile_k = %d must be a positive multiple of %d up to %d (%s: one scale-atom column "
                       "= 4 blocks of %d; the MMA consumes K in steps of 64)",
                       r->tile_k, kmul, TILE_DIM_MAX, fp4lr_format_name(r->format),
                       fp4lr_format_block(r->format));
    if (r->rank < 0 || r->rank % 16 != 0 || r->rank > FP4LR_RANK_MAX)
        return INVALID("RANK", "rank %d is not 0 or a multiple of 16 up to %d", r->rank,
                       FP4LR_RANK_MAX);
    if (r->family == FP4LR_FAMILY_DENSE && r->rank != 0)
        return INVALID("RANK", "rank %d with the dense family: dense has no low-rank branch",
                       r->rank);
    if (r->family == FP4LR_FAMILY_DENSE && r->has_affine)
        return INVALID("FAMILY", "the dense family has no affine (wc, beta): use fused");
    if (r->out_bytes != 2 && r->out_bytes != 4)
        return INVALID("OUT_BYTES", "out_bytes = %d: output elements are 2 (bf16, f16) or 4 (f32)",
                       r->out_bytes);
    if (r->smem_capacity < 0 || r->smem_capacity > SMEM_MAX)
        return INVALID("SMEM", "smem capacity = %" PRId64 " bytes must be 0 (arch default) or "
                       "in 1..2^31", r->smem_capacity);
    if (r->force_main_stages < 0 || r->force_main_stages > FORCED_STAGES_MAX)
        return INVALID("STAGES", "forced main stages = %d must be 0 (as many as fit) or 1..%d",
                       r->force_main_stages, FORCED_STAGES_MAX);
    if (r->force_lora_chunk &&
        (r->rank == 0 || r->force_lora_chunk < 16 || r->force_lora_chunk % 16 != 0 ||
         r->force_lora_chunk > r->rank || r->force_lora_chunk > LORA_CHUNK_MAX))
        return INVALID("LORA_CHUNK", "forced low-rank chunk = %d with rank %d: 0 (the solver's), or a "
                       "multiple of 16 up to the rank and %d", r->force_lora_chunk, r->rank, LORA_CHUNK_MAX);
    if (r->force_lora_stages && (r->rank == 0 || r->force_lora_stages < 0 || r->force_lora_stages > LORA_STAGES_MAX))
        return INVALID("LORA_STAGES", "forced low-rank slots = %d with rank %d: 0 (the solver's), or 1..%d "
                       "with a rank", r->force_lora_stages, r->rank, LORA_STAGES_MAX);
    if (r->w_inline && !r->w_prep)
        return INVALID("W_PREP", "W converted in the kernel (w_inline) needs a prepared-W plan");
    if (r->yt_prepared && (!r->w_prep || r->w_inline))
        return INVALID("W_PREP", "yt_prepared (the _w<n>_yt kernels) needs a prepared-W plan without w_inline");
    if (r->w_prep && (r->arch != FP4LR_ARCH_SM90A ||
                      (r->cluster != 1 && (r->w_inline || r->yt_prepared || r->tile_n != 256))))
        return INVALID("W_PREP", "a prepared W (w_prep%s) exists on sm90a with one CTA, and for the 256-wide pair "
                       "without w_inline or yt_prepared; not %s with cluster %d",
                       r->w_inline ? ", here for w_inline" : r->yt_prepared ? ", here for yt_prepared" : "",
                       fp4lr_arch_name(r->arch), r->cluster);
    if (r->w_prep && r->force_transform_stages &&
        (r->force_transform_stages < TRANSFORM_STAGES || r->force_transform_stages > wprep_slots_max(r)))
        return INVALID("TRANSFORM_STAGES", "forced prepared-W slots = %d: 0 (the solver's choice) or %d..%d%s",
                       r->force_transform_stages, TRANSFORM_STAGES, wprep_slots_max(r),
                       wprep_slots_max(r) == WPREP_STAGES_MAX ? " (the 128-wide ping-pong tile: up to 10)" : "");
    if (!r->w_prep && r->force_transform_stages && (r->arch != FP4LR_ARCH_SM90A ||
                                      (r->force_transform_stages != TRANSFORM_STAGES &&
                                       r->force_transform_stages != TRANSFORM_STAGES_DEEP)))
        return INVALID("TRANSFORM_STAGES", "forced transform slots = %d: 0 (the solver's choice), "
                       "or on sm90a %d or %d (%d..%d with a prepared W; sm100a has no transform ring)",
                       r->force_transform_stages, TRANSFORM_STAGES, TRANSFORM_STAGES_DEEP, TRANSFORM_STAGES,
                       WPREP_STAGES_MAX);
    return fp4lr_ok();
}

/* Tiles the architecture's MMA cannot issue (FP4LR_E_INFEASIBLE). */
static fp4lr_status check_mma_tile(const fp4lr_budget_req *r)
{
    const int m_cta = r->tile_m / r->cluster;
    if (r->arch == FP4LR_ARCH_SM100A) {
        const int step = 8 * r->cluster; /* cta_group::1: N % 8; cta_group::2: N % 16 */
        if (m_cta != 128)
            return INFEASIBLE("TILE_M",
                              "tile_m = %d with cluster %d is a tile the MMA cannot issue: "
                              "tcgen05 block-scaled MMA needs 128 rows per CTA (tile_m = %d)",
                              r->tile_m, r->cluster, 128 * r->cluster);
        if (r->tile_n < SM100_TILE_N_MIN || r->tile_n > MMA_N_MAX || r->tile_n % step != 0)
            return INFEASIBLE("TILE_N",
                              "tile_n = %d is a tile the MMA cannot issue here: sm100a with "
                              "cluster %d needs tile_n in %d..%d in steps of %d",
                              r->tile_n, r->cluster, SM100_TILE_N_MIN, MMA_N_MAX, step);
        /* and every tile's SFB must sit on whole tensor-memory columns of its 128-row copy */
        fp4lr_status sfb = fp4lr_sm100a_sfb_tile_check(r->tile_n);
        if (sfb.code != FP4LR_OK)
            return INFEASIBLE("TILE_N", "tile_n = %d: %s", r->tile_n, sfb.msg);
    } else {
        if (m_cta % 64 != 0)
            return INFEASIBLE("TILE_M",
                              "tile_m = %d with cluster %d gives %d rows per CTA, a tile the MMA "
                              "cannot issue: wgmma needs a multiple of 64 rows per CTA",
                              r->tile_m, r->cluster, m_cta);
        if (r->tile_n > MMA_N_MAX || r->tile_n % 8 != 0)
            return INFEASIBLE("TILE_N",
                              "tile_n = %d is a tile the MMA cannot issue: wgmma needs N a "
                              "multiple of 8 up to %d",
                              r->tile_n, MMA_N_MAX);
    }
    return fp4lr_ok();
}

/* ---- object sizes ---------------------------------------------------------- */

/* One object's bytes per stage: as a lone CTA holds it, and as charged. */
typedef struct obj_bytes {
    int64_t one, cta;
} obj_bytes;

/* An N-side operand object of 1-CTA size `one`, charged per CTA: in a pair,
 * split halves it where the hardware splits it (hw_split), naive never does,
 * halve-all always does (the converse defect, refused later). */
static obj_bytes charge_n_side(const fp4lr_budget_req *r, int64_t one, int hw_split)
{
    obj_bytes b = {one, one};
    if (r->cluster == 2 &&
        (r->policy == FP4LR_POLICY_HALVE_ALL || (r->policy == FP4LR_POLICY_SPLIT && hw_split)))
        b.cta = one / 2;
    return b;
}

static obj_bytes unsplit(int64_t bytes) { return (obj_bytes){bytes, bytes}; }

/* Per-stage sizes of every object except the low-rank ring (which depends on
 * the chunk) and the fixed area (which depends on the stage counts). */
typedef struct obj_sizes {
    int m_cta;            /* rows per CTA */
    obj_bytes a, sfa, w, sfw, w_bf16, affine, epilogue, xstage;
} obj_sizes;

static obj_sizes size_objects(const fp4lr_budget_req *r)
{
    const int sm100 = r->arch == FP4LR_ARCH_SM100A;
    const int64_t kb = r->tile_k / fp4lr_format_k_multiple(r->format); /* atom columns */
    obj_sizes s;
    s.m_cta = r->tile_m / r->cluster;
    s.a = unsplit((int64_t)s.m_cta * r->tile_k / 2);
    s.sfa = unsplit((int64_t)fp4lr_sf_bytes(s.m_cta, 4 * kb));
    s.w = charge_n_side(r, (int64_t)r->tile_n * r->tile_k / 2, sm100);
    s.sfw = charge_n_side(r, (int64_t)fp4lr_sf_bytes(r->tile_n, 4 * kb), 0); /* SFB replicated */
    if (r->w_prep) /* W arrives prepared, straight into its ring */
        s.w = s.sfw = unsplit(0);
    s.xstage = unsplit(r->w_inline ? XCONV_STAGING : 0);
    s.w_bf16 = sm100 ? unsplit(0) : charge_n_side(r, (int64_t)r->tile_n * TRANSFORM_K * 2, 0);
    /* The tile's wc and beta columns, staged for the affine (1 and 0 when absent, so the
     * slices are there with or without the affine): sm_100a's low-rank producer stages one
     * pair for the epilogue warps; on sm_90a each consumer warpgroup (64 rows) copies its own
     * pair when the tile starts, so that the affine after the K loop reads shared memory. */
    const int64_t slice = 2 * (int64_t)r->tile_n * (int64_t)sizeof(float);
    const int64_t slices = sm100 ? 1 : s.m_cta / 64;
    /* sm_90a: the low-rank ring after the slices starts 1024-byte aligned (its swizzled boxes),
     * so the slices take whole KiB (tile_n = 160: 2560 bytes of slices, 3072 charged) */
    const int64_t affine = sm100 ? slices * slice : (slices * slice + 1023) / 1024 * 1024;
    s.affine = unsplit(r->family == FP4LR_FAMILY_FUSED ? affine : 0);
    /* sm_90a: 32-column epilogue chunks wherever the tile width is no multiple of 64 (the
     * narrow _yt tile, 160) */
    const int narrow_wb = !sm100 && r->tile_n % 64 != 0;
    s.epilogue = unsplit((int64_t)s.m_cta * (narrow_wb ? WB_CHUNK_BYTES_SM90A_FUSED_X : WB_CHUNK_BYTES));
    return s;
}

/* L and U per low-rank stage for a chunk of rc ranks (bf16). */
static void size_lora(const fp4lr_budget_req *r, int m_cta, int rc, obj_bytes *l, obj_bytes *u)
{
    *l = unsplit((int64_t)m_cta * rc * 2);
    *u = charge_n_side(r, (int64_t)r->tile_n * rc * 2, r->arch == FP4LR_ARCH_SM100A);
}

/* ---- tensor memory (sm_100a) ----------------------------------------------- */

/* The low-rank term goes into its own tile_n columns when they fit next to one
 * accumulator stage and one SF stage: the affine must act on the 4-bit product
 * alone, and prescaling U by 1/(alpha*wc) is not exact for wc = 0 (OPERATOR.md
 * §5 tests such columns).  When they do not fit (tile_n = 256), the low-rank
 * MMA accumulates in place: the epilogue loads the accumulator, applies the
 * affine, stores it back (tcgen05.st) and the kind::f16 MMA adds L*U^T onto it.
 * sf_stages is filled in after the main stages are known. */
static fp4lr_status plan_tmem_columns(const fp4lr_budget_req *r, fp4lr_tmem_plan *t)
{
    const int cap = fp4lr_arch_tmem_cols(r->arch);
    const int kb = r->tile_k / fp4lr_format_k_multiple(r->format);
    memset(t, 0, sizeof *t);
    t->acc_cols = r->tile_n;
    /* SFA: 4 columns per atom column (128 rows); SFB: N/32 columns per atom column. */
    t->sf_cols_per_stage = 4 * kb + ((r->tile_n + 127) / 128) * 4 * kb;
    if (r->family == FP4LR_FAMILY_FUSED && r->rank > 0) {
        if (2 * r->tile_n + t->sf_cols_per_stage <= cap)
            t->lora_cols = r->tile_n;
        else
            t->lora_in_place = 1;
    }
    t->acc_stages = 2 * t->acc_cols + t->lora_cols + t->sf_cols_per_stage <= cap ? 2 : 1;
    const int need = t->acc_stages * t->acc_cols + t->lora_cols + t->sf_cols_per_stage;
    if (need > cap)
        return INFEASIBLE("TMEM",
                          "tensor memory overflows: accumulator %d + low-rank %d + one SF stage "
                          "%d = %d columns > %d",
                          t->acc_cols, t->lora_cols, t->sf_cols_per_stage, need, cap);
    return fp4lr_ok();
}

static void finish_tmem(const fp4lr_budget_req *r, int stages_main, fp4lr_tmem_plan *t)
{
    const int cap = fp4lr_arch_tmem_cols(r->arch);
    const int fit = (cap - t->acc_stages * t->acc_cols - t->lora_cols) / t->sf_cols_per_stage;
    t->sf_stages = stages_main < fit ? stages_main : fit;
    t->total_cols = t->acc_stages * t->acc_cols + t->lora_cols + t->sf_stages * t->sf_cols_per_stage;
    t->alloc_cols = 32; /* tcgen05.alloc: a power of two in [32, 512] */
    while (t->alloc_cols < t->total_cols)
        t->alloc_cols *= 2;
}

/* ---- stage solving --------------------------------------------------------- */

static int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

/* The fixed area for given stage counts: full+empty barriers per stage of the
 * main, transform and low-rank rings and per accumulator stage (plus the
 * separate low-rank accumulator), the tile queue, and the TMEM slot. */
static void size_fixed(const fp4lr_budget_req *r, const fp4lr_budget *b, int *barriers,
                       int64_t *bytes)
{
    const int sm100 = r->arch == FP4LR_ARCH_SM100A;
    int n = 2 * (b->stages_main + b->stages_transform + b->stages_lora + TILE_QUEUE_DEPTH);
    if (sm100)
        n += 2 * b->tmem.acc_stages + (b->tmem.lora_cols ? 2 : 0);
    *barriers = n;
    *bytes = round_up((int64_t)n * BARRIER_BYTES + TILE_QUEUE_DEPTH * TILE_QUEUE_ENTRY_BYTES +
                          (sm100 ? TMEM_SLOT_BYTES : 0),
                      FIXED_ALIGN);
}

/* Bytes left for the main ring once the fixed area, the other rings and the
 * wc/beta slices are charged (may be negative). */
static int64_t main_room(const fp4lr_budget *b, const obj_sizes *s, int64_t fixed,
                         int64_t lora_ring)
{
    return b->capacity - fixed - lora_ring - b->stages_wb * s->epilogue.cta -
           b->stages_transform * s->w_bf16.cta - s->affine.cta - s->xstage.cta;
}

/* The main ring starts at offset 0 and the rings after it hold 128-byte-swizzled
 * tiles, which need 1024-byte alignment: the kernels round the ring's end up to
 * RING_ALIGN (an MXFP4 sm_90a stage is 26112 B, so an odd stage count leaves 512 B). */
#define RING_ALIGN 1024
static int64_t main_ring_bytes(int stages, int64_t per_stage) { return round_up(stages * per_stage, RING_ALIGN); }

static int stages_in(int64_t room, int64_t per_stage)
{
    int n = room > 0 ? (int)(room / per_stage) : 0;
    while (n > 0 && main_ring_bytes(n, per_stage) > room)
        n--;
    return n;
}

/* Chooses the low-rank chunk and the main and low-rank stage counts against a
 * charged fixed area.  The chunk starts at min(r, 128); while the minimum ring
 * (min(2, chunks) stages) leaves fewer main stages than needed (min_main, or the
 * forced count), it halves, keeping a multiple of 16.  Left-over bytes then
 * buy extra low-rank stages, up to the chunk count and at most 4. */
static fp4lr_status solve_stages(const fp4lr_budget_req *r, const obj_sizes *s, int64_t fixed,
                                 int min_main, fp4lr_budget *b)
{
    const int need = r->force_main_stages ? r->force_main_stages : min_main;
    const int64_t room0 = main_room(b, s, fixed, 0);
    const int fit0 = stages_in(room0, b->per_stage_main);
    if (fit0 < need) {
        if (r->force_main_stages)
            return INFEASIBLE("MAIN_STAGES",
                              "forced %d main stages do not fit: capacity %" PRId64 " - fixed %" PRId64
                              " - writeback %" PRId64 " - transform %" PRId64 " - wc/beta %" PRId64
                              " = %" PRId64 " bytes hold %d stages of %" PRId64 " bytes",
                              need, b->capacity, fixed, b->stages_wb * s->epilogue.cta,
                              b->stages_transform * s->w_bf16.cta, s->affine.cta, room0, fit0,
                              b->per_stage_main);
        return INFEASIBLE("MAIN_STAGES",
                          "fewer than %d main stages fit: capacity %" PRId64 " - fixed %" PRId64
                          " - writeback %" PRId64 " - transform %" PRId64 " - wc/beta %" PRId64
                          " = %" PRId64 " bytes hold %d stage(s) of %" PRId64 " bytes",
                          need, b->capacity, fixed, b->stages_wb * s->epilogue.cta,
                          b->stages_transform * s->w_bf16.cta, s->affine.cta, room0, fit0,
                          b->per_stage_main);
    }
    int rc = r->force_lora_chunk ? r->force_lora_chunk : r->rank < LORA_CHUNK_MAX ? r->rank : LORA_CHUNK_MAX;
    int chunks = 0, fit = fit0;
    int64_t lora_stage = 0, room = room0;
    b->stages_lora = 0;
    while (r->rank > 0) {
        obj_bytes l, u;
        size_lora(r, s->m_cta, rc, &l, &u);
        chunks = (r->rank + rc - 1) / rc;
        const int slots = r->force_lora_stages ? r->force_lora_stages : 2;
        b->stages_lora = chunks < slots ? chunks : slots;
        lora_stage = l.cta + u.cta;
        room = main_room(b, s, fixed, lora_rings(r) * b->stages_lora * lora_stage);
        fit = stages_in(room, b->per_stage_main);
        const int tail_too_big = lora_tail_in_w_ring(r) && chunks > b->stages_lora && lora_stage > s->w_bf16.cta;
        if (fit >= need && !tail_too_big)
            break;
        /* W converted in the kernel, with a tail through the W ring: a one-slot ring costs no
         * round trip per chunk (the rest come one a W slot), so keep the chunk and drop the
         * ring's second slot before halving the chunk (the _x4 plans at r > 32: 4 chunks of 32,
         * not 8 of 16; measured 1.02-1.03x, bench/results/experiments).  The _w plans keep their
         * search (it would trade their ring's second slot for a fifth W slot, not measured). */
        if (r->w_inline && lora_tail_in_w_ring(r) && !r->force_lora_stages && b->stages_lora > 1 &&
            lora_stage <= s->w_bf16.cta) {
            b->stages_lora = 1;
            room = main_room(b, s, fixed, lora_rings(r) * lora_stage);
            fit = stages_in(room, b->per_stage_main);
            if (fit >= need)
                break;
        }
        if (r->force_lora_chunk && fit >= need)
            return INFEASIBLE("LORA_TAIL",
                              "the forced low-rank chunk of %d ranks (%" PRId64 " bytes) does not fit a W "
                              "slot of %" PRId64 " bytes, through which the %d chunk(s) past the %d-slot "
                              "ring come",
                              rc, lora_stage, s->w_bf16.cta, chunks - b->stages_lora, b->stages_lora);
        if (r->force_lora_chunk) /* a forced chunk is not shrunk */
            return INFEASIBLE("LORA_CHUNK",
                              "the forced low-rank chunk of %d ranks (%d slot(s) of %" PRId64
                              " bytes) leaves room for %d main stage(s), %d needed",
                              rc, b->stages_lora, lora_stage, fit, need);
        const int smaller = rc / 2 / 16 * 16;
        if (smaller < 16)
            return INFEASIBLE("RANK_STREAM",
                              "rank %d cannot be streamed: even a chunk of %d ranks (%d stages of "
                              "%" PRId64 " bytes) leaves room for only %d main stage(s), %d needed",
                              r->rank, rc, b->stages_lora, lora_stage, fit, need);
        rc = smaller;
    }
    b->lora_chunk = r->rank > 0 ? rc : 0;
    b->stages_main = r->force_main_stages ? r->force_main_stages
                     : r->w_prep && fit > WPREP_MAX_MAIN ? WPREP_MAX_MAIN : fit;
    int64_t left = room - main_ring_bytes(b->stages_main, b->per_stage_main);
    const int lora_max = chunks < LORA_STAGES_MAX ? chunks : LORA_STAGES_MAX;
    while (!r->force_lora_stages && b->stages_lora < lora_max && left >= lora_rings(r) * lora_stage) {
        b->stages_lora++;
        left -= lora_rings(r) * lora_stage;
    }
    b->lora_tail = lora_tail_in_w_ring(r) && chunks > b->stages_lora ? chunks - b->stages_lora : 0;
    return fp4lr_ok();
}

/* ---- the table ------------------------------------------------------------- */

static void add_row(fp4lr_budget *b, fp4lr_budget_obj obj, const char *name, obj_bytes bytes,
                    const char *pipeline, int stages, int alive_main)
{
    fp4lr_budget_row *row = &b->rows[b->n_rows++];
    row->obj = obj;
    row->name = name;
    row->bytes_1cta = bytes.one;
    row->bytes_cta = bytes.cta;
    row->pipeline = pipeline;
    row->stages = stages;
    row->total = bytes.cta * stages;
    row->sliced = bytes.cta < bytes.one;
    row->alive_main = alive_main;
    b->total_bytes += row->total;
}

static void build_rows(const fp4lr_budget_req *r, const obj_sizes *s, fp4lr_budget *b)
{
    b->n_rows = 0;
    b->total_bytes = 0;
    add_row(b, FP4LR_OBJ_A, "A tile (fp4)", s->a, "main", b->stages_main, 1);
    add_row(b, FP4LR_OBJ_SFA, "SFA", s->sfa, "main", b->stages_main, 1);
    if (!r->w_prep) {
        add_row(b, FP4LR_OBJ_W, "W tile (fp4)", s->w, "main", b->stages_main, 1);
        add_row(b, FP4LR_OBJ_SFW, "SFW", s->sfw, "main", b->stages_main, 1);
    }
    const int64_t pad = main_ring_bytes(b->stages_main, b->per_stage_main) -
                        (int64_t)b->stages_main * b->per_stage_main;
    if (pad)
        add_row(b, FP4LR_OBJ_ALIGN, "main ring alignment", unsplit(pad), "fixed", 1, 1);
    if (b->stages_transform && r->w_prep)
        add_row(b, FP4LR_OBJ_W_BF16, "W prepared (f16/bf16)", s->w_bf16, "w-ring", b->stages_transform, 1);
    else if (b->stages_transform)
        add_row(b, FP4LR_OBJ_W_BF16, "W bf16 staging", s->w_bf16, "transform",
                b->stages_transform, 1);
    if (b->lora_chunk) {
        obj_bytes l, u;
        size_lora(r, s->m_cta, b->lora_chunk, &l, &u);
        const int rings = lora_rings(r); /* the ping-pong tile: a ring per consumer */
        add_row(b, FP4LR_OBJ_L, rings > 1 ? "L chunk (bf16), 2 rings" : "L chunk (bf16)", l, "low-rank",
                rings * b->stages_lora, 1);
        add_row(b, FP4LR_OBJ_U, rings > 1 ? "U chunk (bf16), 2 rings" : "U chunk (bf16)", u, "low-rank",
                rings * b->stages_lora, 1);
    }
    if (s->affine.cta)
        add_row(b, FP4LR_OBJ_AFFINE,
                r->arch == FP4LR_ARCH_SM100A ? "wc, beta slices" : "wc, beta slices (per consumer WG)",
                s->affine, "once", 1, 0);
    /* The writeback buffer overlaps the next tile's main loop. */
    add_row(b, FP4LR_OBJ_EPILOGUE, "epilogue staging", s->epilogue, "writeback", b->stages_wb, 1);
    add_row(b, FP4LR_OBJ_FIXED,
            r->arch == FP4LR_ARCH_SM100A ? "barriers, tile queue, TMEM slot"
                                         : "barriers, tile queue",
            unsplit(b->fixed), "fixed", 1, 1);
    if (s->xstage.cta)
        add_row(b, FP4LR_OBJ_XSTAGE,
                b->stages_wb == 1 ? "W converter staging, writeback 2" : "W converter staging", s->xstage,
                "convert", 1, 1);
    b->slack = b->capacity - b->total_bytes;
}

const fp4lr_budget_row *fp4lr_budget_row_find(const fp4lr_budget *b, fp4lr_budget_obj obj)
{
    for (int i = 0; b && i < b->n_rows; i++)
        if (b->rows[i].obj == obj)
            return &b->rows[i];
    return NULL;
}

fp4lr_status fp4lr_budget_check_slicing(const fp4lr_budget *b)
{
    if (!b)
        return INVALID("NULL_POINTER", "budget is NULL");
    for (int i = 0; i < b->n_rows; i++) {
        const fp4lr_budget_row *row = &b->rows[i];
        if (row->bytes_cta >= row->bytes_1cta)
            continue;
        if (b->req.arch == FP4LR_ARCH_SM90A)
            return INFEASIBLE("SM90_NO_SPLIT",
                              "%s is charged %" PRId64 " bytes per CTA but a CTA holds all %" PRId64
                              ": sm90a splits nothing between a pair (W and U are multicast whole)",
                              row->name, row->bytes_cta, row->bytes_1cta);
        if (row->obj != FP4LR_OBJ_W && row->obj != FP4LR_OBJ_U)
            return INFEASIBLE("SM100_REPLICATED",
                              "%s is charged %" PRId64 " bytes per CTA but a CTA holds all %" PRId64
                              ": with cta_group::2 only W (B) and U are split between the pair",
                              row->name, row->bytes_cta, row->bytes_1cta);
    }
    return fp4lr_ok();
}

/* Solves the stage counts for a given transform ring.  The fixed area depends on the
 * stage counts it is solved with: charge the area of the smallest pipelines first,
 * re-solve with the area the result needs while that is larger (the area only grows, so
 * this ends), and keep the charged value, which covers the final stage counts. */
static fp4lr_status solve_with_transform(const fp4lr_budget_req *req, const obj_sizes *s,
                                         int transform, int min_main, fp4lr_budget *b,
                                         int64_t *charged)
{
    b->stages_transform = transform;
    b->stages_main = req->force_main_stages ? req->force_main_stages : 2;
    b->stages_lora = req->rank > 0 ? 1 : 0;
    size_fixed(req, b, &b->barriers, charged);
    for (;;) {
        FP4LR_TRY(solve_stages(req, s, *charged, min_main, b));
        int64_t needed;
        size_fixed(req, b, &b->barriers, &needed);
        if (needed <= *charged)
            return fp4lr_ok();
        *charged = needed;
    }
}

fp4lr_status fp4lr_budget_solve(const fp4lr_budget_req *req, fp4lr_budget *out)
{
    if (!req || !out)
        return INVALID("NULL_POINTER", "%s is NULL", !req ? "request" : "output budget");
    FP4LR_TRY(validate_request(req));
    FP4LR_TRY(check_mma_tile(req));
    fp4lr_budget *b = out;
    memset(b, 0, sizeof *b);
    b->req = *req;
    b->capacity = req->smem_capacity ? req->smem_capacity : fp4lr_arch_smem_default(req->arch);
    b->req.smem_capacity = b->capacity;
    if (req->arch == FP4LR_ARCH_SM100A)
        FP4LR_TRY(plan_tmem_columns(req, &b->tmem));

    const obj_sizes s = size_objects(req);
    b->per_stage_main = s.a.cta + s.sfa.cta + s.w.cta + s.sfw.cta;
    b->stages_wb = req->arch == FP4LR_ARCH_SM90A && req->family == FP4LR_FAMILY_FUSED && !req->yt_prepared &&
                           (!req->w_inline || req->tile_n % 64 == 0) && !is_pp(req)
                       ? WB_STAGES_SM90A_FUSED : WB_STAGES;
    int64_t charged = 0;
    if (req->w_prep && !req->force_transform_stages) {
        /* the deepest ring that leaves 3 main stages (or the forced count) */
        const int min_main = req->force_main_stages ? req->force_main_stages : WPREP_MIN_MAIN;
        fp4lr_status st = fp4lr_ok();
        for (int slots = wprep_slots_max(req); slots >= TRANSFORM_STAGES; slots--) {
            st = solve_with_transform(req, &s, slots, min_main, b, &charged);
            if (st.code == FP4LR_OK && b->stages_main >= min_main)
                break;
        }
        if (st.code != FP4LR_OK || b->stages_main < min_main)
            FP4LR_TRY(solve_with_transform(req, &s, TRANSFORM_STAGES, 2, b, &charged));
    } else if (req->arch == FP4LR_ARCH_SM90A && req->force_transform_stages) {
        FP4LR_TRY(solve_with_transform(req, &s, req->force_transform_stages, 2, b, &charged));
    } else if (req->arch == FP4LR_ARCH_SM90A && req->cluster == 1) {
        /* the deep transform ring where it leaves 3 main stages, the low-rank chunk
         * shrunk for them if it must be (a forced count below 3 keeps 2 slots: the stage
         * sweep's instances).  A pair keeps 2 slots and the deeper main ring (see
         * TRANSFORM_STAGES_DEEP). */
        fp4lr_status deep = solve_with_transform(req, &s, TRANSFORM_STAGES_DEEP,
                                                 TRANSFORM_DEEP_MIN_MAIN, b, &charged);
        if (deep.code != FP4LR_OK || b->stages_main < TRANSFORM_DEEP_MIN_MAIN)
            FP4LR_TRY(solve_with_transform(req, &s, TRANSFORM_STAGES, 2, b, &charged));
    } else if (req->arch == FP4LR_ARCH_SM90A) {
        FP4LR_TRY(solve_with_transform(req, &s, TRANSFORM_STAGES, 2, b, &charged));
    } else {
        FP4LR_TRY(solve_with_transform(req, &s, 0, 2, b, &charged));
    }
    b->fixed = charged;
    if (req->arch == FP4LR_ARCH_SM100A)
        finish_tmem(req, b->stages_main, &b->tmem);
    build_rows(req, &s, b);
    return fp4lr_budget_check_slicing(b);
}

/* ---- text and JSON --------------------------------------------------------- */

static fp4lr_status io_status(FILE *f)
{
    if (ferror(f))
        return fp4lr_fail(FP4LR_E_IO, "WRITE", "writing the budget failed");
    return fp4lr_ok();
}

fp4lr_status fp4lr_budget_print(FILE *f, const fp4lr_budget *b)
{
    if (!f || !b)
        return INVALID("NULL_POINTER", "%s is NULL", !f ? "FILE" : "budget");
    const fp4lr_budget_req *r = &b->req;
    fprintf(f, "budget: %s %s %s, tile %dx%dx%d, cluster %d (%d rows per CTA), policy %s, rank %d, "
               "affine %s, output %d B\n",
            fp4lr_arch_name(r->arch), fp4lr_format_name(r->format), fp4lr_family_name(r->family),
            r->tile_m, r->tile_n, r->tile_k, r->cluster, r->tile_m / r->cluster,
            fp4lr_policy_name(r->policy), r->rank, r->has_affine ? "yes" : "no", r->out_bytes);
    fprintf(f, "%-32s %10s %10s  %-9s %6s %10s  %-6s %s\n", "object", "1-CTA B", "per-CTA B",
            "pipeline", "stages", "total B", "sliced", "alive");
    for (int i = 0; i < b->n_rows; i++) {
        const fp4lr_budget_row *row = &b->rows[i];
        fprintf(f, "%-32s %10" PRId64 " %10" PRId64 "  %-9s %6d %10" PRId64 "  %-6s %s\n",
                row->name, row->bytes_1cta, row->bytes_cta, row->pipeline, row->stages,
                row->total, row->sliced ? "yes" : "no", row->alive_main ? "yes" : "no");
    }
    fprintf(f, "stages: main %d (%" PRId64 " B each), low-rank %d (chunk %d of rank %d), "
               "transform %d, writeback %d\n",
            b->stages_main, b->per_stage_main, b->stages_lora, b->lora_chunk, r->rank,
            b->stages_transform, b->stages_wb);
    if (b->lora_tail)
        fprintf(f, "low-rank tail: %d chunk(s) past the ring come through the W ring, one a slot\n", b->lora_tail);
    fprintf(f, "shared memory: fixed %" PRId64 " B (%d barriers), total %" PRId64 " B of %" PRId64
               " B, slack %" PRId64 " B\n",
            b->fixed, b->barriers, b->total_bytes, b->capacity, b->slack);
    if (r->arch == FP4LR_ARCH_SM100A) {
        const fp4lr_tmem_plan *t = &b->tmem;
        fprintf(f, "tensor memory: accumulator %d cols x %d, SF %d cols x %d, low-rank %d cols%s, "
                   "total %d, alloc %d of %d\n",
                t->acc_cols, t->acc_stages, t->sf_cols_per_stage, t->sf_stages, t->lora_cols,
                t->lora_in_place ? " (in place on the accumulator)" : "", t->total_cols,
                t->alloc_cols, fp4lr_arch_tmem_cols(r->arch));
    }
    return io_status(f);
}

fp4lr_status fp4lr_budget_json(FILE *f, const fp4lr_budget *b)
{
    if (!f || !b)
        return INVALID("NULL_POINTER", "%s is NULL", !f ? "FILE" : "budget");
    const fp4lr_budget_req *r = &b->req;
    fprintf(f, "{\"arch\": \"%s\", \"format\": \"%s\", \"family\": \"%s\", "
               "\"tile\": [%d, %d, %d], \"cluster\": %d, \"rank\": %d, \"has_affine\": %d, "
               "\"out_bytes\": %d, \"policy\": \"%s\", \"force_main_stages\": %d,\n \"rows\": [\n",
            fp4lr_arch_name(r->arch), fp4lr_format_name(r->format), fp4lr_family_name(r->family),
            r->tile_m, r->tile_n, r->tile_k, r->cluster, r->rank, r->has_affine, r->out_bytes,
            fp4lr_policy_name(r->policy), r->force_main_stages);
    for (int i = 0; i < b->n_rows; i++) {
        const fp4lr_budget_row *row = &b->rows[i];
        fprintf(f, "  {\"object\": \"%s\", \"bytes_1cta\": %" PRId64 ", \"bytes_cta\": %" PRId64
                   ", \"pipeline\": \"%s\", \"stages\": %d, \"total\": %" PRId64
                   ", \"sliced\": %d, \"alive_main\": %d}%s\n",
                row->name, row->bytes_1cta, row->bytes_cta, row->pipeline, row->stages, row->total,
                row->sliced, row->alive_main, i + 1 < b->n_rows ? "," : "");
    }
    fprintf(f, " ],\n \"per_stage_main\": %" PRId64 ", \"stages_main\": %d, "
               "\"stages_transform\": %d, \"stages_lora\": %d, \"lora_chunk\": %d, "
               "\"stages_wb\": %d, \"barriers\": %d, \"fixed\": %" PRId64 ", \"total_bytes\": %" PRId64
               ", \"capacity\": %" PRId64 ", \"slack\": %" PRId64 ",\n \"tmem\": ",
            b->per_stage_main, b->stages_main, b->stages_transform, b->stages_lora, b->lora_chunk,
            b->stages_wb, b->barriers, b->fixed, b->total_bytes, b->capacity, b->slack);
    if (r->arch == FP4LR_ARCH_SM100A) {
        const fp4lr_tmem_plan *t = &b->tmem;
        fprintf(f, "{\"acc_cols\": %d, \"acc_stages\": %d, \"sf_cols_per_stage\": %d, "
                   "\"sf_stages\": %d, \"lora_cols\": %d, \"lora_in_place\": %d, "
                   "\"total_cols\": %d, \"alloc_cols\": %d}}\n",
                t->acc_cols, t->acc_stages, t->sf_cols_per_stage, t->sf_stages, t->lora_cols,
                t->lora_in_place, t->total_cols, t->alloc_cols);
    } else {
        fprintf(f, "null}\n");
    }
    return io_status(f);
}
