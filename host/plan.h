/* A plan: everything the host decides before loading a kernel for a problem
 * (ARCHITECTURE.md §2 step 2) - the family, the tile, the cluster, the solved
 * budget, the kernel entry name, the launch shape.  A plain printable struct. */
#ifndef FP4LR_PLAN_H
#define FP4LR_PLAN_H

#include <stdint.h>
#include <stdio.h>

#include "arch.h"
#include "budget.h"
#include "problem.h"
#include "status.h"

/* Defaults per architecture (ARCHITECTURE.md §4): sm_90a one CTA of 512
 * threads (two transform warpgroups, one of whose lanes issues each stage's
 * copies, and two consumer warpgroups) on a 128x256x128 tile; sm_100a a CTA
 * pair of 256 threads each on a 256x256x256 tile. */
#ifndef FP4LR_SM90A_THREADS /* -DFP4LR_SM90A_THREADS=384: the tw4 experiment's kernels */
#define FP4LR_SM90A_THREADS 512
#endif
#define FP4LR_SM100A_THREADS 256

/* The sm_90a tile walk.  DP: every CTA takes whole tiles (b, b+G, ...).  SK (stream-K):
 * the tiles of the last partial wave (or, where that would deal each CTA fewer than
 * FP4LR_SM90A_SK_MIN_ITERS K iterations, of the last one or two waves) are split along K so
 * that every CTA gets the same number of K iterations; a tile's partial sums meet in a
 * workspace the runtime owns.
 * AUTO: stream-K when whole tiles would leave SMs idle (FP4LR_SM90A_SK_AUTO_EFFICIENCY; a grid
 * of at most one wave by a bar that rises with K, FP4LR_SM90A_SK_ONE_WAVE_LOSS and
 * FP4LR_SM90A_SK_ONE_WAVE_FIXUP_STAGES, sm90a_gemm.h). */
typedef enum fp4lr_schedule {
    FP4LR_SCHEDULE_AUTO = 0,
    FP4LR_SCHEDULE_DP = 1,
    FP4LR_SCHEDULE_SK = 2,
} fp4lr_schedule;

/* "auto", "dp", "sk" (NULL for a value out of range) and back (-1 for an unknown name). */
const char *fp4lr_schedule_name(fp4lr_schedule s);
int fp4lr_schedule_parse(const char *name);

/* sm_90a, one CTA (dense and fused): W prepared once per launch (fp4lr_<fmt>_wprep converts W to
 * f16/bf16 in a runtime workspace, N*K*2 bytes) and loaded by bulk copies, instead of the
 * transform warps converting every W tile in the K loop.  AUTO: prepared where the plan
 * is eligible and M >= FP4LR_SM90A_WPREP_MIN_M (the preparation costs N*K*2.5 bytes of
 * traffic whatever M is; the W conversion it saves grows with M).  Measured on the H200
 * (NVFP4, N x K = 6912 x 2240 and 3072 x 3072, dense and fused, same run, 6907357):
 * prepared / transform 0.94-0.97 at M = 1024, 1.02-1.03 at 1536, 1.06-1.07 at 2048,
 * 1.10-1.14 at 3072.
 * The pair (cluster 2, 256 wide): the _w kernels of cluster 2, rank 0 multicasting each
 * prepared W chunk into both CTAs' ring; ON, and AUTO at every M (no inline or swapped pair).
 * Measured on H100s (ce49461 and 2214dea, 2026-12-05, ratios within a run): the prepared pair
 * 0.96-1.05 of one CTA's AUTO plan on the FLUX, Qwen and 8192^3 shapes (geometric means per
 * format and family; per shape 0.90-1.13), 1.18-1.99 of the transform pair (A/B, SANA and
 * flux-out); the transform pair 0.53-0.56 of one CTA on SANA (M = 1024).  Those transform-pair
 * figures are its cluster-scope build; at CTA scope (the default since later that day) it runs
 * 1.33-1.45x faster, still below the prepared pair. */
typedef enum fp4lr_wprep {
    FP4LR_WPREP_AUTO = 0,
    FP4LR_WPREP_ON = 1,
    FP4LR_WPREP_OFF = 2,
    /* W converted inside the kernel (the _x kernels, dense and fused): the warps the
     * W-prepared kernel leaves idle convert W into the same workspace while the main loop
     * runs, item by item (K block, N tile), and the W producer waits for each item's flags.
     * No separate preparation launch.  AUTO takes it instead of ON for dense and fused plans.
     * Measured on the H200 (78b93e3, same run, bench/results/experiments): inline / prepared
     * 0.996-1.021 dense, 1.002-1.019 fused r = 32 (M >= 4608); 0.83-0.91 against the transform
     * at M = 1024.  Fused r = 128 lost (0.96: the converters' staging took the low-rank ring's
     * second slot, 8 chunks of 16 ranks streamed one round trip each) until the _x kernels took
     * the low-rank tail through the W ring (one ring slot of 32 ranks, the rest one a W slot):
     * 1.020 / 1.027 (NVFP4 / MXFP4) over the preparation at r = 128 and 1024 (H100, 2026-12-06,
     * sustained rounds), so AUTO converts inline at every rank since. */
    FP4LR_WPREP_INLINE = 3,
} fp4lr_wprep;
#ifndef FP4LR_SM90A_WPREP_MIN_M
#define FP4LR_SM90A_WPREP_MIN_M 1536
#endif
/* 1 when an _x kernel (both formats) is built for the family with these main stages and W
 * slots (AUTO takes no other; an explicit INLINE plan names its entry, built or not). */
int fp4lr_sm90a_xconv_built(fp4lr_family family, int tile_n, int stages_main, int stages_transform);

/* "auto", "on", "off", "inline" (NULL out of range) and back (-1 for an unknown name). */
const char *fp4lr_wprep_name(fp4lr_wprep w);
int fp4lr_wprep_parse(const char *name);

/* sm_90a, one CTA: the swapped plan.  The kernel computes Y^T = W.A^T, the problem with
 * A and W (SFA and SFW, M and N) exchanged, converting its W operand - the user's A - inside
 * the kernel once per launch (the _x kernels' code), and stores its tiles transposed (entry
 * suffix _yt).  Where M is small the transform converts each W tile M/128 times and the
 * preparation costs N*K*2.5 bytes a launch; swapped, the once-converted operand is A's M*K.
 * In the fused family L and U are exchanged too, and wc / beta index the kernel's rows.
 * AUTO: swapped where M < FP4LR_SM90A_WPREP_MIN_M <= N, w_prep AUTO, r <=
 * FP4LR_SM90A_SWAP_AUTO_MAX_RANK and the _yt kernel of the plan is built.  ON needs an sm90a
 * plan with one CTA and w_prep AUTO, INLINE or ON.  With w_prep AUTO (swap AUTO or ON) the
 * swapped plan is the prepared one (A converted by its own launch, the _w<n>_yt kernel its
 * programmatic dependent: fp4lr_pdl) where that kernel is built and pdl is not OFF, else the
 * inline one (_x<n>_yt).
 * Measured on the H200 (dense, swapped inline / transform, same runs): sana-qkv 1.11,
 * sana-mlp 1.14, sana-out 1.01 (NVFP4) and 1.05 (MXFP4).  Prepared and dependent / inline
 * (2026-12-05, 7be17e0, same run, 3 alternating runs each): sana-qkv 1.023 dense, 1.011
 * fused r = 32; sana-mlp 1.017, 1.018; sana-out 1.064, 1.053 (NVFP4), 1.061, 1.065 (MXFP4). */
typedef enum fp4lr_swap {
    FP4LR_SWAP_AUTO = 0,
    FP4LR_SWAP_ON = 1,
    FP4LR_SWAP_OFF = 2,
} fp4lr_swap;

#ifndef FP4LR_SM90A_SWAP_AUTO_MAX_RANK
#define FP4LR_SM90A_SWAP_AUTO_MAX_RANK FP4LR_RANK_MAX
#endif

/* sm_90a tile widths (the kernel's N).  Every plan takes 256 but a swapped one, which may
 * take the narrow tile: opts.tile_n = 160, or AUTO (tile_n 0) where the 256-wide grid of the
 * kernel's problem is under one wave of the device's SMs (opts.sm_count: then stream-K
 * splits every tile) and the 160-wide grid is at most one wave (one whole tile a CTA), and
 * its kernel is built; 256 when sm_count is 0 (not known).  sana-out (M = 1024, N = 2240):
 * 72 tiles of 128 x 256 against 126 of 128 x 160: the narrow grid is one wave on a device with 126 SMs or more. */
#define FP4LR_SM90A_TILE_N 256
#define FP4LR_SM90A_TILE_N_NARROW 160
/* The ping-pong tile (tools/gen_sm90a_pp.py, ptx/sm90a/..._pp.ptx): 128 x 128, the two consumer
 * warpgroups taking whole tiles in turn, so that one's epilogue runs under the other's K loop.
 * Opt-in (opts.tile_n = 128) for NVFP4 plans with one CTA, not swapped, W prepared (w_prep on,
 * or auto which then means on); the kernel walks whole tiles (schedule auto plans dp, sk is
 * refused).  Built: dense 3 main stages with 10 W slots (the solver's) and 4 with 8 (--stages 4
 * --transform-slots 8); fused the solver's plans (a low-rank ring per consumer).  AUTO never
 * picks it: measured (H100, 2026-12-05) at 0.83x (dense) / 0.85x (fused) of the 256-wide _w
 * kernels on the large shapes (bench/results/experiments/README.md). */
#define FP4LR_SM90A_TILE_N_PP 128
/* 1 when a ping-pong kernel is built for the format with these main stages and W slots. */
int fp4lr_sm90a_pp_built(fp4lr_format format, fp4lr_family family, int stages_main, int stages_transform);
/* 1 when the narrow tile is AUTO's choice for the kernel's problem kp (M x N) on sm_count SMs. */
int fp4lr_sm90a_narrow_fits(const fp4lr_problem *kp, int sm_count);

/* "auto", "on", "off" (NULL out of range) and back (-1 for an unknown name). */
const char *fp4lr_swap_name(fp4lr_swap s);
int fp4lr_swap_parse(const char *name);
/* 1 when a _yt kernel (both formats) is built for the family with this tile width, stages
 * and W slots: the _x<n>_yt kernels (A converted inside the kernel); for the swapped
 * prepared plan (w_prep ON: A prepared by its own launch) the _w<n>_yt ones, of one format. */
int fp4lr_sm90a_yt_built(fp4lr_family family, int tile_n, int stages_main, int stages_transform);
int fp4lr_sm90a_wyt_built(fp4lr_format format, fp4lr_family family, int tile_n, int stages_main,
                          int stages_transform);

/* sm_90a: the swapped prepared plan's kernel launched as the programmatic dependent of its
 * preparation (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION after the
 * fp4lr_sm90a_<format>_wprep_pdl launch; ptx/ABI.md 4.3): its CTAs may start, and load their
 * first A stages, while the preparation runs, and its W producer waits for the preparation
 * grid (griddepcontrol.wait) before its first copy of the prepared operand.  Only the
 * _w<n>_yt kernels wait, so only the swapped plans with w_prep ON take it: AUTO (0) does
 * there, ON elsewhere is refused (rule PDL), OFF launches the two kernels one after the
 * other.  Measured on the H200 (2026-12-05, 7be17e0, own stream, dependent / one after the
 * other): sana-qkv 1.029 dense, 1.021 fused; sana-out 1.093, 1.080 (NVFP4), 1.105, 1.084
 * (MXFP4).  Without it the prepared plan loses to the inline one, so AUTO takes the prepared
 * plan only with pdl AUTO or ON (fp4lr_swap). */
typedef enum fp4lr_pdl {
    FP4LR_PDL_AUTO = 0,
    FP4LR_PDL_ON = 1,
    FP4LR_PDL_OFF = 2,
} fp4lr_pdl;

/* "auto", "on", "off" (NULL out of range) and back (-1 for an unknown name). */
const char *fp4lr_pdl_name(fp4lr_pdl d);
int fp4lr_pdl_parse(const char *name);
/* The problem a swapped plan's kernel sees: M and N exchanged (ldY stays Y's own). */
fp4lr_problem fp4lr_problem_swapped(const fp4lr_problem *p);

/* Overrides; a 0 field (or NULL opts) takes the architecture's default. */
typedef struct fp4lr_plan_opts {
    int tile_m, tile_n, tile_k;
    int cluster;
    fp4lr_policy policy;     /* FP4LR_POLICY_SPLIT (0) by default */
    int64_t smem_capacity;   /* the device's reported per-block opt-in limit */
    int force_main_stages;
    /* sm_90a: the W transform ring's slots, 2 or 3 (0: the solver's choice; entry _t3) */
    int force_transform_stages;
    /* the low-rank ring (r > 0): ranks a chunk and slots, 0 = the solver's (budget.h) */
    int force_lora_chunk;
    int force_lora_stages;
    /* sm_100a only: name the family-target kernels (fp4lr_sm100f_..., built for every
     * compute capability 10.x part) instead of the arch-specific ones (10.0 only).  The
     * runtime sets it from the device. */
    int family_target;
    /* sm_90a: how the persistent grid walks the tiles (sm90a_gemm.h); AUTO (0) by default */
    fp4lr_schedule schedule;
    /* sm_90a one CTA: W prepared or converted in the K loop; AUTO (0) by default */
    fp4lr_wprep w_prep;
    /* sm_90a one CTA: the swapped plan (Y^T = W.A^T, _yt kernels); AUTO (0) by default */
    fp4lr_swap swap;
    /* the device's SM count, for the swapped plan's AUTO tile width (0: not known, 256);
     * fp4lr_runtime_plan sets it from the device */
    int sm_count;
    /* sm_90a swapped prepared plans: the programmatic dependent launch; AUTO (0) by default */
    fp4lr_pdl pdl;
    /* 1: a plan that fp4lr_gemm may launch on a stream captured into a CUDA graph (gemm.h),
     * i.e. no flag valued per launch: schedule AUTO walks whole tiles (dp; sk is refused),
     * w_prep AUTO prepares W where it would convert it in the kernel (inline is refused), and
     * a swapped plan (AUTO's or swap on) is the prepared one, A prepared by its own launch
     * and, unless pdl is off, the kernel its programmatic dependent (captured as a
     * programmatic edge).  0 (default): AUTO's fastest plans. */
    int graph;
} fp4lr_plan_opts;

#define FP4LR_ENTRY_NAME_LEN 96

typedef struct fp4lr_plan {
    fp4lr_problem problem;   /* resolved (packed leading dimensions filled in) */
    fp4lr_arch arch;
    fp4lr_family family;     /* dense when r = 0 and no wc, no beta; else fused */
    fp4lr_format format;
    int tile_m, tile_n, tile_k;
    int cluster;
    fp4lr_policy policy;
    fp4lr_budget budget;
    int family_target;       /* the entry is an sm_100f (family-target) kernel */
    fp4lr_schedule schedule; /* sm_90a tile walk: auto, data-parallel or stream-K */
    int w_prep;              /* 1: W prepared (fp4lr_gemm runs the format's wprep kernel first;
                              * the entry ends in _w<slots>) */
    int w_inline;            /* with w_prep: W converted inside the kernel (no wprep launch; the
                              * entry ends in _x<slots>) */
    int swap_ab;             /* the swapped plan: the kernel sees fp4lr_problem_swapped(&problem)
                              * with A and W exchanged and stores Y^T's tiles transposed (the entry
                              * ends in _yt; budget and tiles are the kernel's problem's) */
    int pdl;                 /* with w_prep (not w_inline) and swap_ab: fp4lr_gemm launches the
                              * kernel as the programmatic dependent of the preparation (fp4lr_pdl) */
    /* "fp4lr_<target>_<format>_<family>_m<TM>n<TN>k<TK>_c<cluster>_s<stages_main>",
     * target = the arch (sm90a, sm100a) or sm100f; sm_90a appends _t3 (3 transform
     * slots), _w<n> (W prepared, n slots) or _x<n> (W converted in the kernel) */
    char entry[FP4LR_ENTRY_NAME_LEN];
    int block_threads;
    int64_t smem_bytes;      /* dynamic shared memory = budget.total_bytes */
    int64_t tiles;           /* grid hint: ceil(M/tile_m) * ceil(N/tile_n) cluster tiles (of the
                              * kernel's problem: N and M exchanged in a swapped plan) */
} fp4lr_plan;

/* Validates the problem (returning its status on failure), picks the family
 * and the tile, solves the budget (returning its status on failure) and fills
 * *out. */
fp4lr_status fp4lr_plan_make(const fp4lr_problem *p, fp4lr_arch arch, const fp4lr_plan_opts *opts,
                             fp4lr_plan *out);

/* Writes the plan, then its budget table, to f. */
fp4lr_status fp4lr_plan_print(FILE *f, const fp4lr_plan *plan);

#endif
