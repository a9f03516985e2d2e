/* Benchmark results: one row per (shape, variant), the ratios between rows of
 * one run, their geometric means, the run they came from, and their three
 * forms - the fixed-width table on the terminal, CSV, and one JSON record per
 * run appended to bench/results/<device>-<YYYY-MM-DD>.jsonl.
 *
 * JSON Lines: each run is ONE line holding one JSON object, appended with
 * O_APPEND, so a crashed or concurrent run never corrupts earlier records.
 * Read with `python3 -m json.tool --json-lines FILE`, or
 * `[json.loads(l) for l in open(FILE)]`.  Non-finite numbers are written as
 * null.  The record's fields are listed in bench/README.md. */
#ifndef FP4LR_RESULTS_H
#define FP4LR_RESULTS_H

#include <stdint.h>
#include <stdio.h>

#include "device.h"
#include "plan.h"
#include "timer.h"

#define FP4LR_RESULTS_DIR_DEFAULT "bench/results"
#define FP4LR_BENCH_MAX_ROUNDS 8     /* --rounds: timing rounds interleaved over a shape's rows */
#define FP4LR_RESULTS_SCHEMA "fp4lr-bench/2"

/* What a row measures: an fp4lr kernel variant, or a cuBLASLt peer.  The
 * order is the order of the lines of one shape and format. */
typedef enum fp4lr_bench_variant {
    FP4LR_BENCH_DENSE = 0, /* the dense kernel (r = 0, no affine), one CTA */
    FP4LR_BENCH_DENSE_C2,  /* the dense kernel, 2-CTA cluster (tile_m 256) */
    FP4LR_BENCH_NAIVE,     /* dense, 2-CTA, naive budget policy: the sm_100a diagnostic */
    FP4LR_BENCH_FUSED,     /* the whole operator: the shape's r, wc and beta */
    FP4LR_BENCH_FUSED_C2,  /* the whole operator on the sm_90a pair (sm_100a's fused kernel is one) */
    FP4LR_BENCH_PEERS,     /* cuBLASLt bf16 and fp8 */
    FP4LR_BENCH_VARIANTS
} fp4lr_bench_variant;

/* "dense", "dense-c2", "dense-c2-naive", "fused", "fused-c2", "peers" ("?" otherwise). */
const char *fp4lr_bench_variant_name(fp4lr_bench_variant v);

/* 1 for the variants that run the whole operator (the shape's r, wc and beta). */
int fp4lr_bench_variant_fused(fp4lr_bench_variant v);

/* What became of one (shape, variant). */
typedef enum fp4lr_row_state {
    FP4LR_ROW_OK = 0,       /* timed; fp4lr variants also validated */
    FP4LR_ROW_INVALID,      /* timed, but validation failed: the time is invalid */
    FP4LR_ROW_FAILED,       /* an error before a time was taken (note says which) */
    FP4LR_ROW_SKIPPED,      /* not run (note says why) */
} fp4lr_row_state;

/* "ok", "invalid", "failed", "skipped". */
const char *fp4lr_row_state_name(fp4lr_row_state s);

typedef struct fp4lr_bench_row {
    char shape[64];
    int large;                   /* a large shape of the table (geometric mean) */
    int64_t M, N, K, r;          /* r: the rank the row ran with (0 but for fused) */
    char format[8];              /* "nvfp4", "mxfp4", "bf16", "e4m3" */
    /* "fp4lr-nvfp4" (dense), "fp4lr-nvfp4-c2", "fp4lr-nvfp4-c2-naive",
     * "fp4lr-nvfp4-fused" (likewise mxfp4), "cublas-bf16", "cublas-fp8" */
    char variant[24];
    fp4lr_bench_variant kind;
    int force_stages;            /* the forced main stage count; 0 = the solver's */
    int sweep;                   /* a --sweep-stages point other than the solver's */
    int stages_solver;           /* the solver's main stages for this variant; 0 unknown */
    fp4lr_row_state state;
    fp4lr_timing t;              /* when state is OK or INVALID: every round's launches pooled */
    int rounds;                  /* timing rounds pooled in t (a shape's rows take turns, round by round) */
    double round_median_ms[FP4LR_BENCH_MAX_ROUNDS]; /* each round's median */
    int copies;                  /* input rotation copies */
    double tflops;               /* 2·M·N·K / median (the dense count for every variant); NaN when not timed */
    double ratio_bf16;           /* cuBLAS bf16 median / this median; NaN when unknown */
    double ratio_dense;          /* dense fp4lr median / this median (fp4lr rows, see fp4lr_bench_set_ratios) */
    double ratio_bf16_lo, ratio_bf16_hi; /* the least and greatest ratio vs cuBLAS bf16 of one round's
                                            medians (round k against round k); NaN with fewer than 2 */
    /* validation (fp4lr variants) */
    int validated, pass;         /* checked before the timing, on a poisoned output */
    int timed_check;             /* the output of the last timed launch, checked after the timing:
                                    1 pass, 0 fail (the row is INVALID), -1 not checked */
    int64_t rows_checked;
    double max_err, max_err_over_mag, tol_acc;
    /* the plan (fp4lr variants) */
    int has_plan;
    char entry[FP4LR_ENTRY_NAME_LEN];
    int stages_main;
    int64_t smem_bytes;          /* budget.total_bytes */
    fp4lr_budget budget;         /* also the tile, cluster, policy, rank (budget.req) and the
                                    low-rank stages and chunk */
    char note[256];
} fp4lr_bench_row;

/* A row of (shape, variant) with every measurement unknown (NaN, state FAILED,
 * kind DENSE). */
void fp4lr_bench_row_init(fp4lr_bench_row *row, const char *shape, int large, int64_t M, int64_t N, int64_t K,
                          const char *format, const char *variant);
/* Records a timing: state OK, t, tflops (2·M·N·K / median), one round. */
void fp4lr_bench_row_timed(fp4lr_bench_row *row, const fp4lr_timing *t, int copies);
/* Records a timing of `rounds` (1..FP4LR_BENCH_MAX_ROUNDS) rounds of `per_round`
 * launches each: ms holds them round after round; t is their pooled statistics,
 * round_median_ms each round's median.  FP4LR_E_INVALID (rule BENCH_ROUNDS) for a bad count. */
fp4lr_status fp4lr_bench_row_timed_rounds(fp4lr_bench_row *row, const double *ms, int rounds, int per_round,
                                          int copies);
/* Records the host's enqueue time per launch (fp4lr_timing.host_ms of each of `rounds`
 * rounds; 0 = unknown): the median of the known ones into row->t.host_ms (the first round's
 * warm-up also carries a plan's one-time work: its first launch).  Returns 1 when it reaches
 * FP4LR_BENCH_HOST_BOUND of the row's median, i.e. the host may have paced the timed
 * launches (the device waited for it), else 0. */
#define FP4LR_BENCH_HOST_BOUND 0.9
int fp4lr_bench_row_host(fp4lr_bench_row *row, const double *host_ms, int rounds);
/* Records the plan: entry, main stages, shared memory, the budget. */
void fp4lr_bench_row_plan(fp4lr_bench_row *row, const fp4lr_plan *plan);

/* The ratios of every timed row (OK or INVALID) against its references in
 * rows[0..n), matched on M, N, K (so a shape that repeats another's M, N, K
 * finds the other's rows):
 *   ratio_bf16   the cuBLAS bf16 row's median / this median;
 *   ratio_dense  (fp4lr rows) the dense fp4lr row's median / this median, the
 *                dense row of the same format, not a sweep point, of cluster 1 -
 *                or, for a fused row, of the fused row's cluster (dense-c2 when
 *                the fused kernel runs as a pair).
 * A reference must be OK; without one the ratio stays NaN.  With two or more
 * rounds on both rows (the same count), ratio_bf16_lo / _hi are the extreme
 * ratios of round k's medians, k = 0..rounds-1: the spread the pooled ratio
 * hides. */
void fp4lr_bench_set_ratios(fp4lr_bench_row *rows, int n);

/* The geometric mean of the positive finite values of v[0..n) (the rest are
 * skipped); *used gets their count (may be NULL).  NaN when none. */
double fp4lr_geomean(const double *v, int n, int *used);

/* One geometric mean of ratios (vs cuBLAS bf16 or vs dense) over the large shapes. */
typedef struct fp4lr_bench_geomean {
    char variant[24];
    double value;      /* NaN when no shape had a valid ratio */
    int shapes;        /* shapes that counted */
    int missing;       /* large shapes of this variant without a valid ratio */
} fp4lr_bench_geomean;

/* The geomean of `variant`'s ratio_bf16 / ratio_dense over its rows that are
 * large, OK and not sweep points; a large row that is neither skipped nor
 * valid counts as missing.  A fused row of rank 0 does not count (the fused
 * figures are those of the low-rank operator; r = 0 is the dense GEMM plus an
 * affine). */
fp4lr_bench_geomean fp4lr_bench_geomean_of(const fp4lr_bench_row *rows, int n, const char *variant);
fp4lr_bench_geomean fp4lr_bench_geomean_dense_of(const fp4lr_bench_row *rows, int n, const char *variant);

#define FP4LR_BENCH_MAX_GEOMEANS 16

/* The summary of a run: the geomean vs cuBLAS bf16 of every variant label in
 * the rows but cublas-bf16 itself, and the geomean vs dense of every fp4lr
 * label but the dense 1-CTA kernel's, in order of first appearance (labels
 * past FP4LR_BENCH_MAX_GEOMEANS are left out). */
typedef struct fp4lr_bench_summary {
    fp4lr_bench_geomean vs_bf16[FP4LR_BENCH_MAX_GEOMEANS];
    int n_bf16;
    /* vs_bf16 again over only the M, N, K that every one of those variants with
     * a valid ratio has (shapes_common of them; 0 when they share none): the
     * figures that compare variants with each other.  vs_bf16's own sets can
     * differ (MXFP4 has no kernel for K = 2240, fused skips r = 0). */
    fp4lr_bench_geomean common[FP4LR_BENCH_MAX_GEOMEANS];
    int n_common, shapes_common;
    fp4lr_bench_geomean vs_dense[FP4LR_BENCH_MAX_GEOMEANS];
    int n_dense;
} fp4lr_bench_summary;

void fp4lr_bench_summarize(const fp4lr_bench_row *rows, int n, fp4lr_bench_summary *out);
/* The summary's lines, as the benchmark prints them after the table. */
void fp4lr_bench_summary_print(FILE *f, const fp4lr_bench_summary *s);

/* Where and when, with what. */
typedef struct fp4lr_run_info {
    char time_utc[32];           /* "2026-01-02T03:04:05Z" */
    char date[16];               /* "2026-01-02" (UTC) */
    char git_commit[48];         /* "unknown" when git fails */
    int git_dirty;               /* 1, 0, or -1 unknown */
    char command[2048];
    /* device (zero / empty without one) */
    char device[256];
    int sm_count, cc_major, cc_minor, driver_version, clock_khz, mem_clock_khz, l2_bytes;
    /* nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw; "" when unavailable */
    char smi_before[512], smi_after[512];
    /* the peers */
    char peer_lib[512];          /* "" when not loaded */
    long long peer_version;
    char peer_status[512];       /* "ok", "disabled (--no-peers)" or why not */
    /* settings */
    int iters, warmup, rounds;   /* rounds: --rounds */
    int preheat_ms;              /* --preheat: untimed milliseconds before a shape's first round */
    unsigned long long seed;
    int force_stages;            /* 0 = the solver's */
    int force_transform_slots;   /* --transform-slots, 0 = the solver's */
    int force_lora_chunk;        /* --lora-chunk, 0 = the solver's */
    int force_lora_slots;        /* --lora-slots, 0 = the solver's */
    int small_scales;            /* --scales small */
    int sweep_stages;            /* --sweep-stages */
    char schedule[8];            /* the sm_90a tile walk asked for: auto, dp, sk */
    int own_stream;              /* --stream own: timed on a non-blocking stream (else the legacy one) */
    int graph;                   /* --graph: the sm_90a rows are plan_opts.graph plans */
    char variants[96];           /* the variants asked for, e.g. "dense,dense-c2,fused,peers" */
    char arch[16];               /* the architecture planned for, "sm90a" / "sm100a" */
    int validate_rows;
} fp4lr_run_info;

/* Fills time, date, git commit and dirty flag ($FP4LR_GIT_COMMIT overrides git),
 * and the command line (arguments shell-quoted where needed). */
void fp4lr_run_info_capture(fp4lr_run_info *run, int argc, char **argv);
/* Fills the device fields from the context. */
void fp4lr_run_info_device(fp4lr_run_info *run, const fp4lr_ctx *ctx);
/* The nvidia-smi query line(s) joined by " | " into out; "" when nvidia-smi is
 * missing or prints nothing. */
void fp4lr_nvidia_smi_query(char *out, size_t cap);

/* Writes s as a JSON string (quotes, escapes; invalid UTF-8 bytes become U+FFFD). */
void fp4lr_json_string(FILE *f, const char *s);
/* Writes v with 9 significant digits, or null when not finite. */
void fp4lr_json_number(FILE *f, double v);

/* The device name as a file-name part: lower case, runs of characters other
 * than [a-z0-9] become one '-', no '-' at either end, "unknown-device" when
 * nothing is left ("NVIDIA H200" -> "nvidia-h200"). */
void fp4lr_results_sanitize(const char *name, char *out, size_t cap);
/* "<dir>/<sanitized device>-<date>.jsonl"; FP4LR_E_INVALID (rule PATH_TOO_LONG). */
fp4lr_status fp4lr_results_path(const char *dir, const char *device, const char *date, char *out, size_t cap);

/* Writes the run's record - one line, ending in '\n'.  FP4LR_E_IO (rule WRITE) on
 * a stream error. */
fp4lr_status fp4lr_results_write_record(FILE *f, const fp4lr_run_info *run, const fp4lr_bench_row *rows, int n,
                                        const fp4lr_bench_summary *sum);
/* Creates `dir` (and its parents) when missing and appends the record to
 * fp4lr_results_path(dir, ...); the path goes to path_out (may be NULL). */
fp4lr_status fp4lr_results_append(const char *dir, const fp4lr_run_info *run, const fp4lr_bench_row *rows, int n,
                                  const fp4lr_bench_summary *sum, char *path_out, size_t path_cap);

/* CSV: a header, then one line per row (text fields quoted when needed). */
fp4lr_status fp4lr_results_csv_header(FILE *f);
fp4lr_status fp4lr_results_csv_row(FILE *f, const fp4lr_bench_row *row);

/* The terminal table: a header line, then one fixed-width line per row
 * (shape, M, N, K, r, variant, median ms, TFLOP/s, ratio vs cuBLAS bf16, ratio
 * vs dense, main stages - "2/4" for 2 forced where the solver picks 4 -, the
 * low-rank ring "stages x chunk", smem KiB, validation or why there is no time). */
void fp4lr_results_table_header(FILE *f);
void fp4lr_results_table_row(FILE *f, const fp4lr_bench_row *row);

#endif
