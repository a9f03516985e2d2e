/* fp4lr-bench's command line and what it selects: the options and their
 * parsing, the variants (--variants) with the problem and plan options each
 * one runs, the stage counts a variant is measured at (--stages,
 * --sweep-stages), and the resulting list of jobs - one per (shape, format,
 * variant, stage count) and peer - planned and checked against the built
 * kernels before any device work.  Pure logic, tested on the CPU. */
#ifndef FP4LR_BENCH_CLI_H
#define FP4LR_BENCH_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format.h"
#include "plan.h"
#include "results.h"
#include "shapes.h"

#define FP4LR_BENCH_MAX_SHAPES 64
#define FP4LR_BENCH_ITERS_DEFAULT 30
#define FP4LR_BENCH_ITERS_MIN 20      /* below this only with --quick */
#define FP4LR_BENCH_ITERS_MAX 1000
#define FP4LR_BENCH_WARMUP_DEFAULT 5
#define FP4LR_BENCH_ROUNDS_DEFAULT 3   /* --rounds (FP4LR_BENCH_MAX_ROUNDS in results.h) */
#define FP4LR_BENCH_PREHEAT_MS_DEFAULT 300 /* --preheat: untimed load before a shape's first round */
#define FP4LR_BENCH_PREHEAT_MS_MAX 10000
#define FP4LR_BENCH_QUICK_ITERS 5
#define FP4LR_BENCH_QUICK_WARMUP 2
#define FP4LR_BENCH_VALIDATE_ROWS 128
#define FP4LR_BENCH_MAX_STAGES 64     /* --stages and sweep points stay below this */

/* The bit of a variant in a selection mask. */
#define FP4LR_BENCH_BIT(v) (1 << (v))
/* Every variant (naive only runs on sm_100a; elsewhere it is a note). */
#define FP4LR_BENCH_VARIANTS_DEFAULT (FP4LR_BENCH_BIT(FP4LR_BENCH_VARIANTS) - 1)

/* A shape that was dropped because an earlier one has the same M, N, K (and r,
 * when the fused variant runs: the dense kernel ignores r, the fused one does
 * not). */
typedef struct fp4lr_bench_dup {
    const char *dropped, *kept;
} fp4lr_bench_dup;

typedef struct fp4lr_bench_opts {
    /* Shapes in order; names point into the shape table or at the --mnk argument. */
    fp4lr_shape shapes[FP4LR_BENCH_MAX_SHAPES];
    int nshapes;
    /* same_mnk[i]: the index of an earlier shape with shape i's M, N, K (its
     * dense variants and peers stand for shape i's), or -1. */
    int same_mnk[FP4LR_BENCH_MAX_SHAPES];
    fp4lr_bench_dup dups[FP4LR_BENCH_MAX_SHAPES];
    int ndups;
    int formats;              /* bit (1 << fp4lr_format) per selected format */
    int variants;             /* FP4LR_BENCH_BIT(fp4lr_bench_variant) per selected variant */
    int iters, warmup, rounds, quick;
    int preheat_ms;           /* --preheat MS: a shape's first row runs untimed this long before round 1 */
    int plant_timed_fault;         /* --plant-fault timed: the timed-output check's self-test */
    int json;                 /* append the record to results_dir (default 1) */
    const char *results_dir;
    const char *csv;          /* NULL: no CSV */
    const char *samples;      /* --samples: every timed launch's CSV line (bench/samples.h); NULL: none */
    int force_stages;         /* 0: the solver's */
    int force_transform_slots; /* sm_90a W transform ring: 0 = the solver's, 2 or 3 */
    int force_lora_chunk;     /* fused with r > 0: ranks a low-rank chunk, 0 = the solver's */
    int force_lora_slots;     /* fused with r > 0: low-rank ring slots, 0 = the solver's */
    int small_scales;         /* --scales small: MXFP4 block scales <= 2^0 (problem_gen.h) */
    fp4lr_schedule schedule;  /* sm_90a tile walk of every fp4lr variant (--schedule) */
    fp4lr_wprep w_prep;       /* sm_90a one-CTA rows: W prepared or not (--w-prep) */
    fp4lr_swap swap;          /* sm_90a one-CTA rows: the swapped plan (--swap) */
    int tile_n;               /* sm_90a one-CTA rows: the swapped kernel's width, 0 = AUTO (--tile-n) */
    fp4lr_pdl pdl;            /* sm_90a swapped prepared rows: the programmatic dependent launch (--pdl) */
    int own_stream;           /* --stream own: every timed launch (fp4lr and peers) on a non-blocking stream of
                                 the run's own; legacy (default): the legacy default stream */
    int graph;                /* --graph: sm_90a rows planned with plan_opts.graph (what a captured
                                 graph may launch), timed as eager launches */
    int sweep_stages;         /* every main stage count from 1 to the solver's */
    fp4lr_arch arch;          /* the plans shown without a GPU (--arch, default sm90a) */
    uint64_t seed;
    int help, list_shapes;    /* asked for; nothing else runs */
} fp4lr_bench_opts;

/* Parses argv (argv[0] is the program).  Returns 0 when the options are good
 * (also after --help / --list-shapes, which set their flags), 2 with a message
 * in err when they are not (unknown flag, missing or bad value, iterations
 * below FP4LR_BENCH_ITERS_MIN without --quick, --stages with --sweep-stages,
 * too many shapes).  Without --shape / --mnk the shapes are every `large` row
 * of the table.  argv must outlive *o (custom shape names point into it). */
int fp4lr_bench_opts_parse(int argc, char **argv, fp4lr_bench_opts *o, char *err, size_t errlen);

/* The usage text. */
void fp4lr_bench_usage(FILE *f);

/* 1 when K is a multiple of the format's K granularity (64 NVFP4, 128 MXFP4). */
int fp4lr_bench_format_fits(const fp4lr_shape *s, fp4lr_format f);

/* ---- variants ---------------------------------------------------------------------------- */

/* Parses a comma-separated list of variant names ("dense", "dense-c2",
 * "dense-c2-naive" or "naive", "fused", "peers", "all") into a mask; 0, or 2
 * with a message naming the bad item in err. */
int fp4lr_bench_variants_parse(const char *list, int *mask, char *err, size_t errlen);
/* The names of the mask's variants, comma-separated, in table order. */
void fp4lr_bench_variants_format(int mask, char *out, size_t cap);

/* 1 when the variant means something on `arch`: the naive policy is the sm_100a
 * diagnostic (sm_90a splits nothing between a pair, so naive equals split). */
int fp4lr_bench_variant_runs_on(fp4lr_bench_variant v, fp4lr_arch arch);

/* The problem an fp4lr variant runs on a shape: dense (r = 0, no wc, no beta)
 * or, for FUSED, the whole operator (the shape's r, wc and beta); bf16 output,
 * rows of Y padded to 16 bytes; resolved. */
fp4lr_problem fp4lr_bench_variant_problem(fp4lr_bench_variant v, const fp4lr_shape *s, fp4lr_format f);

/* The plan options of an fp4lr variant: DENSE cluster 1; DENSE_C2 cluster 2,
 * tile_m 256; NAIVE the same with the naive policy; FUSED the architecture's
 * default cluster.  smem_capacity and force_main_stages as given. */
fp4lr_plan_opts fp4lr_bench_variant_opts(fp4lr_bench_variant v, int64_t smem_capacity, int force_stages);

/* The row label: "fp4lr-nvfp4" (dense), "fp4lr-nvfp4-c2", "fp4lr-nvfp4-c2-naive",
 * "fp4lr-nvfp4-fused" (likewise mxfp4). */
void fp4lr_bench_variant_label(fp4lr_bench_variant v, fp4lr_format f, char *out, size_t cap);

/* The main stage counts a variant is measured at, given the solver's count:
 * --sweep-stages: 1, 2, ..., solver - 1 forced, then 0 (the solver's own
 * plan), except for NAIVE, whose stage count is the point of it; --stages N:
 * N; otherwise 0.  Returns how many were written to points (at most cap).
 * (The job list passes the 2-slot maximum + 1 as solver_stages where the solver's
 * plan has the 3-slot transform ring: its forced points keep 2 slots.) */
int fp4lr_bench_stage_points(const fp4lr_bench_opts *o, fp4lr_bench_variant v, int solver_stages, int *points,
                             int cap);

/* ---- jobs -------------------------------------------------------------------------------- */

/* Where the plans are made. */
typedef struct fp4lr_bench_target {
    fp4lr_arch arch;
    int64_t smem_capacity;    /* 0: the architecture's default */
    int sm_count;             /* the device's SMs (the swapped plans' AUTO width); 0: not known */
    const char *kernel_dir;   /* NULL: as fp4lr_kernel_dir ($FP4LR_KERNEL_DIR, build/ptx) */
} fp4lr_bench_target;

/* Whether the plan's kernel is built: <kernel dir>/<arch>/<entry>.cubin exists.
 * The path goes to path (may be NULL). */
int fp4lr_bench_plan_built(const fp4lr_plan *plan, const char *kernel_dir, char *path, size_t cap);

/* One line of the run.  A runnable job is measured; the others' rows already
 * say why not (the format's K granularity, a plan that does not fit or
 * failed, a kernel that is not built). */
typedef struct fp4lr_bench_job {
    const fp4lr_shape *shape;       /* into the options' shapes */
    fp4lr_bench_variant variant;
    fp4lr_format format;            /* fp4lr variants */
    int peer;                       /* fp4lr_peer_kind (PEERS only) */
    int runnable;
    int plan_error;                 /* the plan failed for a reason other than fit (an error) */
    int plan_refused;               /* ... because the options ask what it refuses (E_INVALID, or
                                     * E_UNSUPPORTED but for an architecture without kernels):
                                     * a bad argument, exit 2, as fp4lr-check's */
    fp4lr_plan plan;                /* fp4lr variants whose plan was made */
} fp4lr_bench_job;

/* The jobs and their rows: row[i] is job[i]'s line. */
typedef struct fp4lr_bench_jobs {
    fp4lr_bench_job *job;
    fp4lr_bench_row *row;
    int n, cap;
} fp4lr_bench_jobs;

/* The jobs the options ask for on the target, in the order they run and
 * print: per shape, per selected format, the selected fp4lr variants (dense,
 * dense-c2, naive, fused; each at its stage points, ascending); then the peers
 * (cuBLASLt bf16 and fp8).  A shape that repeats an earlier one's M, N, K runs
 * only its fused variant.  Variants that do not run on the arch have no jobs.
 * FP4LR_E_NOMEM when memory is short (nothing kept). */
fp4lr_status fp4lr_bench_jobs_make(const fp4lr_bench_opts *o, const fp4lr_bench_target *t, fp4lr_bench_jobs *out);
void fp4lr_bench_jobs_free(fp4lr_bench_jobs *j);

#endif
