/* Benchmark results: one row per (shape, variant), the run they came from, and
 * their three forms - the fixed-width table on the terminal, CSV, and one JSON
 * record per run appended to bench/results/<device>-<YYYY-MM-DD>.jsonl.
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
#define FP4LR_RESULTS_SCHEMA "fp4lr-bench/1"

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
    int64_t M, N, K, r;
    char format[8];              /* "nvfp4", "mxfp4", "bf16", "e4m3" */
    char variant[24];            /* "fp4lr-nvfp4", "fp4lr-mxfp4", "cublas-bf16", "cublas-fp8" */
    fp4lr_row_state state;
    fp4lr_timing t;              /* when state is OK or INVALID */
    int copies;                  /* input rotation copies */
    double tflops;               /* 2·M·N·K / median; NaN when not timed */
    double ratio_bf16;           /* cuBLAS bf16 median / this median; NaN when unknown */
    /* validation (fp4lr variants) */
    int validated, pass;
    int64_t rows_checked;
    double max_err, max_err_over_mag, tol_acc;
    /* the plan (fp4lr variants) */
    int has_plan;
    char entry[FP4LR_ENTRY_NAME_LEN];
    int stages_main;
    int64_t smem_bytes;          /* budget.total_bytes */
    fp4lr_budget budget;
    char note[256];
} fp4lr_bench_row;

/* A row of (shape, variant) with every measurement unknown (NaN, state FAILED). */
void fp4lr_bench_row_init(fp4lr_bench_row *row, const char *shape, int large, int64_t M, int64_t N, int64_t K,
                          const char *format, const char *variant);
/* Records a timing: state OK, t, tflops (2·M·N·K / median). */
void fp4lr_bench_row_timed(fp4lr_bench_row *row, const fp4lr_timing *t, int copies);

/* The geometric mean of the positive finite values of v[0..n) (the rest are
 * skipped); *used gets their count (may be NULL).  NaN when none. */
double fp4lr_geomean(const double *v, int n, int *used);

/* One geometric mean of ratios vs cuBLAS bf16 over the large shapes. */
typedef struct fp4lr_bench_geomean {
    char variant[24];
    double value;      /* NaN when no shape had a valid ratio */
    int shapes;        /* shapes that counted */
    int missing;       /* large shapes of this variant without a valid ratio */
} fp4lr_bench_geomean;

/* The geomean of `variant`'s ratio_bf16 over the rows that are large and OK. */
fp4lr_bench_geomean fp4lr_bench_geomean_of(const fp4lr_bench_row *rows, int n, const char *variant);

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
    int iters, warmup;
    unsigned long long seed;
    int force_stages;            /* 0 = the solver's */
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
                                        const fp4lr_bench_geomean *geo, int ngeo);
/* Creates `dir` (and its parents) when missing and appends the record to
 * fp4lr_results_path(dir, ...); the path goes to path_out (may be NULL). */
fp4lr_status fp4lr_results_append(const char *dir, const fp4lr_run_info *run, const fp4lr_bench_row *rows, int n,
                                  const fp4lr_bench_geomean *geo, int ngeo, char *path_out, size_t path_cap);

/* CSV: a header, then one line per row (text fields quoted when needed). */
fp4lr_status fp4lr_results_csv_header(FILE *f);
fp4lr_status fp4lr_results_csv_row(FILE *f, const fp4lr_bench_row *row);

/* The terminal table: a header line, then one fixed-width line per row
 * (shape, M, N, K, variant, median ms, TFLOP/s, ratio vs cuBLAS bf16, stages,
 * smem KiB, validation). */
void fp4lr_results_table_header(FILE *f);
void fp4lr_results_table_row(FILE *f, const fp4lr_bench_row *row);

#endif
