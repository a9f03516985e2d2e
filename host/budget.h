/* The shared-memory / tensor-memory budget (ARCHITECTURE.md §5): one row per
 * object resident in a CTA's shared memory, the stage counts of the three
 * pipelines (main K, low-rank, writeback; plus the bf16 transform ring on
 * sm_90a) solved from the capacity, and on sm_100a the tensor-memory plan.
 *
 * Conventions
 * - The tile (tile_m x tile_n x tile_k) is always the CLUSTER's output tile and
 *   K stage: with cluster 2 each CTA owns tile_m/2 rows.
 * - Every byte count is per CTA.  A row has two sizes per stage: bytes_1cta, the
 *   object as a CTA computing its rows alone would hold it (what the naive
 *   policy charges), and bytes_cta, what the CTA holds under the request's
 *   policy.  A row is "sliced" when bytes_cta < bytes_1cta.
 * - sm_100a with cluster 2 (cta_group::2) splits W (the MMA's B) and U between
 *   the pair: each CTA holds tile_n/2 of their rows.  SFW is replicated, A, SFA
 *   and L are the CTA's own rows.  sm_90a splits nothing (W and U are multicast,
 *   each CTA holds them whole).
 * - All arithmetic is integer; every number is printed by fp4lr_budget_print. */
#ifndef FP4LR_BUDGET_H
#define FP4LR_BUDGET_H

#include <stdint.h>
#include <stdio.h>

#include "arch.h"
#include "format.h"
#include "status.h"

typedef enum fp4lr_family {
    FP4LR_FAMILY_DENSE = 0, /* block-scaled GEMM only: no low-rank, no affine */
    FP4LR_FAMILY_FUSED = 1, /* the whole operator */
} fp4lr_family;

typedef enum fp4lr_policy {
    FP4LR_POLICY_SPLIT = 0, /* charge what each CTA really holds (correct per architecture) */
    FP4LR_POLICY_NAIVE = 1, /* charge every object at its 1-CTA size (the diagnostic defect) */
    /* Halve every N-sized operand object (W, SFW, W bf16, U) in a pair on either
     * architecture: the converse defect.  It exists only so tests can prove that
     * fp4lr_budget_check_slicing refuses it; fp4lr_budget_solve always does. */
    FP4LR_POLICY_HALVE_ALL = 2,
} fp4lr_policy;

/* "dense"/"fused", "split"/"naive"/"halve-all"; parse returns 0 or -1. */
const char *fp4lr_family_name(fp4lr_family f);
const char *fp4lr_policy_name(fp4lr_policy p);
int fp4lr_family_parse(const char *s, fp4lr_family *out);
int fp4lr_policy_parse(const char *s, fp4lr_policy *out);

typedef struct fp4lr_budget_req {
    fp4lr_arch arch;
    fp4lr_format format;
    int tile_m, tile_n, tile_k; /* the cluster's output tile and K stage */
    int cluster;                /* 1 or 2 */
    int rank;                   /* r: 0 or a multiple of 16 (fused only) */
    fp4lr_family family;
    int has_affine;             /* wc and/or beta present (fused only) */
    int out_bytes;              /* 2 (bf16, f16) or 4 (f32) */
    fp4lr_policy policy;
    int64_t smem_capacity;      /* bytes; 0 = fp4lr_arch_smem_default(arch) */
    int force_main_stages;      /* 0 = as many as fit; N > 0 = exactly N (1 is
                                   allowed only this way, for stage sweeps) */
    int force_transform_stages; /* sm_90a: 0 = one CTA 3 slots where 3 main stages
                                   still fit beside them, else 2, a pair 2; 2 or 3 =
                                   exactly that */
    int force_lora_chunk;       /* rank > 0: 0 = the largest chunk that leaves 2 main
                                   stages; N = exactly N ranks a chunk (a multiple of
                                   16, at most the rank and LORA_CHUNK_MAX) */
    int force_lora_stages;      /* rank > 0: 0 = 2 slots (1 for one chunk), more while
                                   room is left; N = N (1..4), capped at the chunk
                                   count, never grown */
    int w_prep;                 /* sm_90a, one CTA (dense or fused): W is prepared (converted once
                                   per launch to f16/bf16 in global memory) and its ring
                                   is filled by bulk copies: no fp4 W or SFW in the main
                                   stages; the ring (stages_transform) is as deep as
                                   3 main stages allow (force_transform_stages: 2..5) */
    int w_inline;               /* with w_prep, dense: W converted in the kernel (the _x kernels):
                                   the converter warps' staging blocks are charged too */
    int yt_prepared;            /* with w_prep, not w_inline: the swapped prepared kernels
                                   (_w<n>_yt), whose fused family keeps two writeback buffers
                                   (the _x ones take their second from the converters' staging) */
    int yt;                     /* the kernel is a swapped one (_yt: Y^T = W.A^T, A converted
                                   inside or prepared): its low-rank chunks all stream through
                                   the low-rank ring (no tail through the W ring) */
} fp4lr_budget_req;

/* The resident objects, in table order. */
typedef enum fp4lr_budget_obj {
    FP4LR_OBJ_A = 0,    /* A tile, fp4 */
    FP4LR_OBJ_SFA,      /* A's scale atoms */
    FP4LR_OBJ_W,        /* W tile, fp4 (tcgen05's B operand) */
    FP4LR_OBJ_SFW,      /* W's scale atoms (SFB) */
    FP4LR_OBJ_W_BF16,   /* sm_90a: W dequantized to bf16 for wgmma (transform ring or prepared W ring) */
    FP4LR_OBJ_L,        /* L chunk, bf16 */
    FP4LR_OBJ_U,        /* U chunk, bf16 */
    FP4LR_OBJ_AFFINE,   /* wc and beta slices, fp32 */
    FP4LR_OBJ_EPILOGUE, /* output staging for the bulk tensor store */
    FP4LR_OBJ_FIXED,    /* barriers, tile queue, TMEM address slot */
    FP4LR_OBJ_ALIGN,    /* padding from the main ring's end to the next 1024-byte boundary */
    FP4LR_OBJ_XSTAGE,   /* sm_90a _x kernels: the converter warps' staging blocks */
    FP4LR_OBJ_COUNT
} fp4lr_budget_obj;

typedef struct fp4lr_budget_row {
    fp4lr_budget_obj obj;
    const char *name;
    int64_t bytes_1cta;   /* per stage, as a lone CTA would hold it */
    int64_t bytes_cta;    /* per stage, as this CTA holds it under the policy */
    const char *pipeline; /* "main", "transform", "low-rank", "writeback", "once", "fixed" */
    int stages;
    int64_t total;        /* bytes_cta * stages: what the row costs */
    int sliced;           /* bytes_cta < bytes_1cta */
    int alive_main;       /* resident while the main K loop runs */
} fp4lr_budget_row;

/* sm_100a tensor-memory plan, in 32-bit columns (all 128 lanes). */
typedef struct fp4lr_tmem_plan {
    int acc_cols;          /* tile_n: 128 rows x full tile_n fp32 per CTA */
    int acc_stages;        /* 2 when it fits with the low-rank columns and one SF stage */
    int sf_cols_per_stage; /* SFA (tile_k/(4*block))*4 + SFB (ceil(tile_n/128)*4)*(tile_k/(4*block)) */
    int sf_stages;         /* min(stages_main, what fits), >= 1 */
    int lora_cols;         /* tile_n for separate low-rank columns, 0 otherwise */
    int lora_in_place;     /* 1: the low-rank MMA accumulates onto the affined accumulator */
    int total_cols;
    int alloc_cols;        /* power of two >= total, >= 32, <= 512 */
} fp4lr_tmem_plan;

#define FP4LR_BUDGET_MAX_ROWS FP4LR_OBJ_COUNT

typedef struct fp4lr_budget {
    fp4lr_budget_req req;       /* as given, with smem_capacity resolved */
    fp4lr_budget_row rows[FP4LR_BUDGET_MAX_ROWS];
    int n_rows;
    int64_t per_stage_main;     /* bytes per main stage per CTA */
    int stages_main, stages_transform, stages_lora, stages_wb;
    int lora_chunk;             /* rc: ranks per low-rank stage (0 when r = 0) */
    int lora_tail;              /* chunks past the low-rank ring that come through the W ring
                                   (sm_90a fused _w kernels, rule LORA_TAIL); 0 elsewhere */
    int barriers;               /* mbarriers counted into `fixed` */
    int64_t fixed;              /* barriers + tile queue + TMEM slot, rounded up to 1024 */
    int64_t total_bytes;        /* sum of the rows' totals = dynamic shared memory */
    int64_t capacity;
    int64_t slack;              /* capacity - total_bytes */
    fp4lr_tmem_plan tmem;       /* all zero on sm_90a */
} fp4lr_budget;

/* Validates the request, builds the table and solves the stage counts.
 * FP4LR_E_INVALID for a malformed request (rules ARCH, FORMAT, FAMILY, TILE_M,
 * TILE_N, TILE_K, CLUSTER, POLICY, RANK, OUT_BYTES, SMEM, STAGES).
 * FP4LR_E_INFEASIBLE when the request is well formed but cannot be built:
 * TILE_M / TILE_N (a tile the MMA cannot issue), MAIN_STAGES (fewer than 2 main
 * stages fit, or the forced count does not fit), RANK_STREAM (no low-rank chunk
 * of >= 16 leaves 2 main stages), TMEM (the tensor-memory plan exceeds 512
 * columns), SM90_NO_SPLIT / SM100_REPLICATED (see fp4lr_budget_check_slicing).
 * On failure *out is left in an unspecified state. */
fp4lr_status fp4lr_budget_solve(const fp4lr_budget_req *req, fp4lr_budget *out);

/* Refuses (FP4LR_E_INFEASIBLE) a table that charges a CTA less than it holds:
 * on sm_90a any row with bytes_cta < bytes_1cta (rule SM90_NO_SPLIT); on
 * sm_100a any sliced row other than W and U (rule SM100_REPLICATED). */
fp4lr_status fp4lr_budget_check_slicing(const fp4lr_budget *b);

/* The row of object `obj`, or NULL when the table has none (e.g. no L in dense). */
const fp4lr_budget_row *fp4lr_budget_row_find(const fp4lr_budget *b, fp4lr_budget_obj obj);

/* Writes the table and the solution, human-readable / as one JSON object, to f. */
fp4lr_status fp4lr_budget_print(FILE *f, const fp4lr_budget *b);
fp4lr_status fp4lr_budget_json(FILE *f, const fp4lr_budget *b);

#endif
