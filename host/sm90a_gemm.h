/* Host side of the sm_90a kernels (ptx/sm90a/fp4lr_sm90a_*): the tensor maps they
 * read and write, their parameter block, and their launch, for the dense and the
 * fused family.  The layout of the parameters and maps is the contract of
 * tools/gen_sm90a.py (see each kernel's header comment). */
#ifndef FP4LR_SM90A_GEMM_H
#define FP4LR_SM90A_GEMM_H

#include "device.h"
#include "lowrank_params.h"
#include "plan.h"
#include "problem.h"
#include "status.h"

/* Tile raster group: tile rows along M that share W tiles in L2. */
#define FP4LR_SM90A_GROUP 8
/* Low-rank ring slots the fused kernels have barriers for. */
#define FP4LR_SM90A_LORA_SLOTS 4

/* The fused family's extra parameters, in kernel order (after the dense ones). */
typedef fp4lr_lowrank_params fp4lr_sm90a_lora_params;

/* Stream-K (plan.h, fp4lr_schedule): AUTO splits when the whole-tile walk keeps fewer than
 * this fraction of the CTAs' tile slots busy, tiles / (ceil(tiles / G) * G).  0.96 since
 * 2026-12-05 (0.90 before): a same-call A/B on an H100 of a 0.99 build against 0.90
 * (bench/results/experiments/README.md, "AUTO's stream-K threshold") gained on flux-fc1
 * (0.935 busy: 1.01-1.07, geometric mean 1.038) and qwen-qkv-r32 (0.955: 1.05-1.14, 1.084),
 * showed no clear change on qwen-fc1-r32 and 8192^3 (0.970: 0.986-1.035, 0.998 / 1.017) and
 * lost up to 4 % on one flux-qkv row (0.982), so those three stay whole.
 * A grid of at most one wave (tiles <= G, so every tile would split) splits only when its busy
 * fraction b leaves room for the split's cost: b < 1 - FP4LR_SM90A_SK_ONE_WAVE_LOSS -
 * FP4LR_SM90A_SK_ONE_WAVE_FIXUP_STAGES / (K stages).  Fitted to dp/sk probes on an H100 (two
 * calls; bench/results/experiments/README.md, "Stream-K on one wave"): ten one-CTA one-wave
 * grids of 18 or 72 K stages, 48-91 % busy, swapped and not, and sana-out's old/new A/B
 * (126 narrow tiles, 95.5 %: split 0.81-0.86x of whole).  Split, a launch took about b + 0.11
 * of the whole-tile time plus about 5.2 K stages' time (the owners' waits and fix-ups; the
 * pair is assumed to pay the same, not measured), so 18 stages split below about 60 % busy
 * (48.5 %: sk 1.13-1.15x; 60.6 %: 0.99x; 72.7-95.5 %: 0.81-0.93x) and 72 below about 82 %
 * (78.8 %: 1.02-1.03x; 84.8 %: 0.98x).
 * Measurement builds may set others with -DFP4LR_SM90A_SK_AUTO_EFFICIENCY=... and
 * -DFP4LR_SM90A_SK_ONE_WAVE_LOSS=... / -DFP4LR_SM90A_SK_ONE_WAVE_FIXUP_STAGES=... */
#ifndef FP4LR_SM90A_SK_AUTO_EFFICIENCY
#define FP4LR_SM90A_SK_AUTO_EFFICIENCY 0.96
#endif
#ifndef FP4LR_SM90A_SK_ONE_WAVE_LOSS
#define FP4LR_SM90A_SK_ONE_WAVE_LOSS 0.11
#endif
#ifndef FP4LR_SM90A_SK_ONE_WAVE_FIXUP_STAGES
#define FP4LR_SM90A_SK_ONE_WAVE_FIXUP_STAGES 5.2
#endif
/* Which tiles stream-K splits.  With at least one full wave: only the last partial wave's
 * (the rest whole) when that still deals every cluster FP4LR_SM90A_SK_MIN_ITERS K iterations
 * or more, else the last one or two waves' worth (G <= split tiles < 2G); below one wave,
 * all.  Same-run A/B on the H200 (b1b66ff, bench/results/experiments/README.md, "Stream-K:
 * split one wave or two"): one wave against two, sana-qkv 1.04-1.05, sana-mlp 1.02-1.03,
 * flux-fc2 1.02-1.03 (11.5, 12 and 26 iterations a cluster), flux-out 0.97-0.98 (6.5).
 * -DFP4LR_SM90A_SK_SPLIT_WAVES=1 or 2 forces one or two waves (measurement builds). */
#define FP4LR_SM90A_SK_MIN_ITERS 8
#ifndef FP4LR_SM90A_SK_SPLIT_WAVES
#define FP4LR_SM90A_SK_SPLIT_WAVES 0
#endif
/* One CTA's partial sums in the workspace: 256 consumer threads x 128 fp32. */
#define FP4LR_SM90A_SK_SLOT_BYTES (256u * 128u * 4u)

/* The tile walk of one launch (the kernels' p_sk_* parameters, ABI.md §5).  Whole tiles
 * 0..dp_tiles-1 go to the clusters in turn; the K iterations of the others,
 * T = (tiles - dp_tiles) * k_stages = clusters * q + r, are dealt out in order, q to each
 * cluster and one more to the first r. */
typedef struct fp4lr_sm90a_sk {
    int split;              /* 0: every tile whole (dp_tiles = tiles, q = r = 0) */
    int clusters;           /* the grid, in clusters */
    uint32_t dp_tiles, q, r;
    double dp_efficiency;   /* tiles / (ceil(tiles / G) * G) of the whole-tile walk */
} fp4lr_sm90a_sk;

/* The walk for `tiles` cluster tiles of `k_stages` K stages on at most `max_clusters`
 * co-resident clusters.  Rules (FP4LR_E_INVALID): SK_ARGS (tiles, k_stages and
 * max_clusters >= 1, a schedule of plan.h); SK_RANGE (FP4LR_E_UNSUPPORTED: forced stream-K
 * whose split iterations exceed 2^31). */
fp4lr_status fp4lr_sm90a_schedule(fp4lr_schedule mode, int64_t tiles, int64_t k_stages, int max_clusters,
                                  fp4lr_sm90a_sk *out);

/* Bytes of the stream-K workspace for `ctas` CTAs: a partial slot and a u32 flag each. */
size_t fp4lr_sm90a_sk_workspace_bytes(int ctas);

/* The five tensor maps and the scalars, in the kernel's parameter order. */
typedef struct fp4lr_sm90a_params {
    CUtensorMap tmA, tmW, tmSFA, tmSFW, tmY;
    uint32_t num_k_stages;
    float alpha;
    uint32_t tiles_m, tiles_n, group;
    int fused;
    fp4lr_sm90a_lora_params lr;
    /* stream-K (the last parameters): the workspace (0 = every tile whole), the walk, and
     * the value this launch's flags carry (never 0, different from the last launch's) */
    CUdeviceptr sk_ws;
    fp4lr_sm90a_sk sk;
    uint32_t sk_epoch;
    /* W converted in the kernel (the _x kernels' last parameters): W and its scales, the
     * workspace the converters write, the item flags, this launch's flag value, N, K and
     * the conversion order (sm90a_xorder.h) */
    int xconv;
    CUdeviceptr x_W, x_SFW, x_Wp, x_flags;
    uint32_t x_epoch, x_N, x_K;
    CUdeviceptr x_order;
    /* Y itself, its row stride (elements; 0 when it does not fit 32 bits) and rows: after
     * the _x parameters, read only by the measurement kernels that store Y directly
     * (tools/sm90a_ptx/flags.py EPISTG); the others do not declare them, and the driver passes a
     * kernel only the parameters it declares */
    CUdeviceptr y;
    uint32_t ldy, ym;
    /* the swapped prepared kernels (_w<n>_yt): K, their last parameter (where the last K
     * block ends: the NVFP4 ones skip a chunk wholly past K) */
    int wyt;
    uint32_t k;
} fp4lr_sm90a_params;

/* Bytes of one (K block, N tile) item's flags in the _x kernels: 8 u32, one per 32-row
 * block (tools/sm90a_ptx/xconv.py, xconv_wait). */
#define FP4LR_SM90A_XCONV_FLAG_BYTES 32
/* ... after a head of 64 bytes: word 0 counts the launch's converted units (the last one sets
 * it back to 0), word 1 holds the epoch once every unit is converted. */
#define FP4LR_SM90A_XCONV_HEAD_BYTES 64

/* The low-rank chunk the kernels use for a plan: the budget's chunk rounded down to a
 * power of two in [16, 64] (one TMA box per chunk, one swizzle mode). */
int fp4lr_sm90a_lora_chunk(const fp4lr_plan *plan);
/* ... and the ring slots it uses (fp4lr_lowrank_slots: the budget's ring in rc-sized slots). */
int fp4lr_sm90a_lora_slots(const fp4lr_plan *plan);

/* The plan and arguments the kernel sees: for a swapped plan (plan.h, fp4lr_swap) the problem
 * with M and N exchanged (fp4lr_problem_swapped) and A / SFA exchanged with W / SFW; otherwise
 * copies.  params_make, the walk and the launch take these. */
void fp4lr_sm90a_kernel_view(const fp4lr_plan *plan, const fp4lr_args *dev, fp4lr_plan *kplan, fp4lr_args *kdev);

/* Builds the parameter block of `plan` for device buffers `dev` (pointers are
 * device addresses).  FP4LR_E_UNSUPPORTED for a plan the kernels don't cover. */
fp4lr_status fp4lr_sm90a_params_make(const fp4lr_ctx *ctx, const fp4lr_plan *plan, const fp4lr_args *dev,
                                     fp4lr_sm90a_params *out);

/* The launch's grid: max_ctas CTAs (the occupancy's), at most one a cluster tile, the
 * split walk's clusters when it has a workspace, whole clusters, at least one. */
int fp4lr_sm90a_grid(const fp4lr_plan *plan, const fp4lr_sm90a_params *prm, int max_ctas);

/* Launches `f` (the plan's entry) on at most `grid` persistent CTAs; with a workspace
 * (params->sk_ws) on params->sk.clusters clusters and the split walk of params->sk. */
fp4lr_status fp4lr_sm90a_launch(const fp4lr_ctx *ctx, CUfunction f, const fp4lr_plan *plan,
                                fp4lr_sm90a_params *params, int grid, CUstream stream);

#endif
