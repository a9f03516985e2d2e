/* The benchmark harness (bench/): rotation counts, the peers' byte counts and
 * data, ratios and geometric means (vs cuBLAS bf16, vs dense), JSON escaping
 * and the results record (parsed back by python3 when it is installed), CSV and
 * table rows, the results file, run information, fp4lr-bench's argument
 * parsing, its variants, stage points and job list, cuBLASLt loading; on a GPU,
 * the cuBLASLt peers' self-check and the rotation ring. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_cli.h"
#include "bf16.h"
#include "cublaslt.h"
#include "devbuf.h"
#include "problem_gen.h"
#include "results.h"
#include "rotate.h"
#include "support_cmd.h"
#include "support_gpu.h"

#define MiB ((size_t)1 << 20)

/* ---- rotation --------------------------------------------------------------------------- */

Test(bench_cli, rotation_smallest_count_over_three_l2)
{
    fp4lr_rotation r = fp4lr_rotation_plan(100, 150, 100, (size_t)1 << 40);
    cr_expect_eq(r.wanted, 4); /* 3 * 100 = 300 is not > 300; 4 * 100 is */
    cr_expect_eq(r.copies, 4);
    cr_expect_eq(r.limit, FP4LR_ROTATION_BY_L2);
    /* 8192^3 NVFP4: 72 MiB of inputs against a 50 MiB L2 -> 3 copies (216 > 150). */
    r = fp4lr_rotation_plan(72 * MiB, 200 * MiB, 50 * MiB, (size_t)1 << 40);
    cr_expect_eq(r.copies, 3);
    /* Inputs larger than 3 x L2 alone: one copy. */
    r = fp4lr_rotation_plan(256 * MiB, 384 * MiB, 50 * MiB, (size_t)1 << 40);
    cr_expect_eq(r.copies, 1);
    cr_expect_eq(r.wanted, 1);
    /* Nothing read: one copy. */
    r = fp4lr_rotation_plan(0, 10, 50 * MiB, (size_t)1 << 40);
    cr_expect_eq(r.copies, 1);
}

Test(bench_cli, rotation_capped_at_64)
{
    fp4lr_rotation r = fp4lr_rotation_plan(1024, 2048, 50 * MiB, (size_t)1 << 40);
    cr_expect_eq(r.copies, 64);
    cr_expect_eq(r.wanted, 65);
    cr_expect_eq(r.limit, FP4LR_ROTATION_BY_CAP);
    cr_expect_str_eq(fp4lr_rotation_limit_name(r.limit), "cap");
}

Test(bench_cli, rotation_capped_by_memory)
{
    fp4lr_rotation r = fp4lr_rotation_plan(10 * MiB, 20 * MiB, 50 * MiB, 50 * MiB);
    cr_expect_eq(r.wanted, 16);
    cr_expect_eq(r.copies, 2); /* 50 MiB holds two 20 MiB copies */
    cr_expect_eq(r.limit, FP4LR_ROTATION_BY_MEMORY);
    r = fp4lr_rotation_plan(10 * MiB, 20 * MiB, 50 * MiB, 5 * MiB);
    cr_expect_eq(r.copies, 1); /* never below one */
    cr_expect_eq(r.limit, FP4LR_ROTATION_BY_MEMORY);
}

Test(bench_cli, rotation_index_cycles)
{
    const int expect[] = {0, 1, 2, 0, 1, 2, 0};
    for (int i = 0; i < 7; i++)
        cr_expect_eq(fp4lr_rotation_index(i, 3), expect[i], "i = %d", i);
    cr_expect_eq(fp4lr_rotation_index(5, 1), 0);
}

Test(bench_cli, rotation_bytes_of_a_problem)
{
    /* M = 100 (scales padded to 128 rows), N = 256, K = 128 NVFP4: A 100*64, SFA 128*8,
     * W 256*64, SFW 256*8; Y 100*256*2. */
    fp4lr_problem p = {.M = 100, .N = 256, .K = 128, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16};
    fp4lr_sizes s = fp4lr_problem_sizes(&p);
    size_t read, copy;
    fp4lr_problem_rotation_bytes(&s, &read, &copy);
    cr_expect_eq(read, 6400 + 1024 + 16384 + 2048);
    cr_expect_eq(copy, 25856 + 51200);
}

Test(bench_cli, ring_rejects_bad_counts)
{
    fp4lr_devproblem_ring ring;
    fp4lr_problem p = {.M = 128, .N = 128, .K = 128, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16};
    fp4lr_args host = {0};
    fp4lr_status s = fp4lr_devproblem_ring_create(NULL, &p, &host, 0, &ring);
    cr_expect_eq(s.code, FP4LR_E_INVALID);
    cr_expect_str_eq(s.rule, "ROTATION_COPIES");
    s = fp4lr_devproblem_ring_create(NULL, &p, &host, 65, &ring);
    cr_expect_str_eq(s.rule, "ROTATION_COPIES");
    cr_expect_eq(ring.n, 0);
}

/* ---- peers: bytes and data ------------------------------------------------------------------- */

Test(bench_cli, peer_bytes)
{
    size_t read, copy;
    fp4lr_peer_bytes(FP4LR_PEER_BF16, 4, 8, 16, &read, &copy);
    cr_expect_eq(read, 384); /* (4 + 8) * 16 * 2 */
    cr_expect_eq(copy, 448); /* + 4 * 8 * 2 of bf16 D */
    fp4lr_peer_bytes(FP4LR_PEER_FP8, 4, 8, 16, &read, &copy);
    cr_expect_eq(read, 192);
    cr_expect_eq(copy, 256);
    cr_expect_str_eq(fp4lr_peer_name(FP4LR_PEER_BF16), "cublas-bf16");
    cr_expect_str_eq(fp4lr_peer_name(FP4LR_PEER_FP8), "cublas-fp8");
    cr_expect_str_eq(fp4lr_peer_format(FP4LR_PEER_FP8), "e4m3");
}

Test(bench_cli, peer_data_finite_and_seeded)
{
    enum { n = 4096 };
    uint16_t a[n], b[n];
    fp4lr_peer_fill(FP4LR_PEER_BF16, 7, a, n);
    fp4lr_peer_fill(FP4LR_PEER_BF16, 7, b, n);
    cr_expect_eq(memcmp(a, b, sizeof a), 0, "same seed, same data");
    int neg = 0;
    for (int i = 0; i < n; i++) {
        double v = fp4lr_peer_value(FP4LR_PEER_BF16, a, (size_t)i);
        cr_assert(fabs(v) >= 0x1p-8 && fabs(v) < 2.0, "bf16 %d = %g (bits %04x)", i, v, a[i]);
        neg += v < 0;
    }
    cr_expect(neg > n / 3 && neg < 2 * n / 3, "signs mixed: %d negative of %d", neg, n);
    fp4lr_peer_fill(FP4LR_PEER_BF16, 8, b, n);
    cr_expect_neq(memcmp(a, b, sizeof a), 0, "another seed, other data");

    uint8_t e[n];
    fp4lr_peer_fill(FP4LR_PEER_FP8, 7, e, n);
    int seen_max = 0;
    for (int i = 0; i < n; i++) {
        cr_assert((e[i] & 0x7F) != 0x7F, "e4m3 NaN code at %d", i);
        double v = fp4lr_peer_value(FP4LR_PEER_FP8, e, (size_t)i);
        cr_assert(isfinite(v) && fabs(v) <= 448.0);
        seen_max |= fabs(v) == 448.0;
    }
    cr_expect(seen_max, "the NaN codes map to +-448, so 448 appears");
    cr_expect_eq(fp4lr_peer_value(FP4LR_PEER_FP8, (const uint8_t[]){0x38}, 0), 1.0);
    cr_expect_eq(fp4lr_peer_value(FP4LR_PEER_FP8, (const uint8_t[]){0xC0}, 0), -2.0);
}

/* ---- cuBLASLt loading ---------------------------------------------------------------------- */

Test(bench_cli, cublaslt_missing_is_a_status)
{
    setenv("FP4LR_CUBLASLT", "/nonexistent/libcublasLt.so.99", 1);
    fp4lr_cublaslt *lt = (fp4lr_cublaslt *)1;
    fp4lr_status s = fp4lr_cublaslt_open(&lt);
    cr_expect_eq(s.code, FP4LR_E_UNSUPPORTED);
    cr_expect_str_eq(s.rule, "NO_CUBLASLT");
    cr_expect(strstr(s.msg, "/nonexistent/libcublasLt.so.99") != NULL, "%s", s.msg);
    cr_expect_null(lt);
}

Test(bench_cli, cublaslt_wrong_library_is_a_status)
{
    setenv("FP4LR_CUBLASLT", "libm.so.6", 1);
    fp4lr_cublaslt *lt = NULL;
    fp4lr_status s = fp4lr_cublaslt_open(&lt);
    cr_expect_eq(s.code, FP4LR_E_UNSUPPORTED);
    cr_expect_str_eq(s.rule, "CUBLASLT_SYMBOL");
    cr_expect(strstr(s.msg, "cublasLtCreate") != NULL, "%s", s.msg);
    cr_expect_null(lt);
}

Test(bench_cli, cublaslt_resolves_every_entry)
{
    fp4lr_cublaslt *lt = NULL;
    fp4lr_status s = fp4lr_cublaslt_open(&lt);
    if (s.code == FP4LR_E_UNSUPPORTED && !strcmp(s.rule, "NO_CUBLASLT"))
        cr_skip_test("no cuBLASLt: %s", s.msg);
    cr_assert_eq(s.code, FP4LR_OK, "%s", s.msg);
    cr_expect(lt->version >= 110000, "version %zu", lt->version);
    cr_expect_not_null(lt->cublasLtMatmul);
    cr_expect_not_null(lt->cublasLtMatmulAlgoGetHeuristic);
    cr_expect_null(lt->handle);
    fp4lr_status named = fp4lr_cublaslt_status(lt, CUBLAS_STATUS_INVALID_VALUE, "x");
    cr_expect_str_eq(named.rule, "CUBLAS_STATUS_INVALID_VALUE");
    cr_expect_eq(fp4lr_cublaslt_status(lt, CUBLAS_STATUS_NOT_SUPPORTED, "x").code, FP4LR_E_UNSUPPORTED);
    fp4lr_cublaslt_close(lt);
}

/* ---- geometric means ---------------------------------------------------------------------- */

Test(bench_cli, geomean_skips_non_positive)
{
    int used = -1;
    cr_expect_float_eq(fp4lr_geomean((const double[]){1.0, 4.0}, 2, &used), 2.0, 1e-12);
    cr_expect_eq(used, 2);
    cr_expect_float_eq(fp4lr_geomean((const double[]){2.0, 0.0, -1.0, NAN, INFINITY, 8.0}, 6, &used), 4.0, 1e-12);
    cr_expect_eq(used, 2);
    cr_expect(isnan(fp4lr_geomean(NULL, 0, &used)));
    cr_expect_eq(used, 0);
}

static fp4lr_bench_row row_of(const char *shape, int large, const char *variant, fp4lr_row_state st, double ratio)
{
    fp4lr_bench_row r;
    fp4lr_bench_row_init(&r, shape, large, 1024, 1024, 1024, "nvfp4", variant);
    r.state = st;
    r.ratio_bf16 = ratio;
    return r;
}

Test(bench_cli, geomean_of_large_valid_rows)
{
    fp4lr_bench_row rows[] = {
        row_of("a", 1, "fp4lr-nvfp4", FP4LR_ROW_OK, 0.5),
        row_of("b", 1, "fp4lr-nvfp4", FP4LR_ROW_OK, 2.0),
        row_of("c", 1, "fp4lr-nvfp4", FP4LR_ROW_OK, 1.0),
        row_of("d", 0, "fp4lr-nvfp4", FP4LR_ROW_OK, 100.0),      /* not large */
        row_of("e", 1, "fp4lr-nvfp4", FP4LR_ROW_INVALID, 100.0), /* invalid time: missing */
        row_of("f", 1, "fp4lr-nvfp4", FP4LR_ROW_OK, NAN),        /* no peer: missing */
        row_of("g", 1, "fp4lr-nvfp4", FP4LR_ROW_SKIPPED, NAN),   /* skipped: not counted */
        row_of("a", 1, "fp4lr-mxfp4", FP4LR_ROW_OK, 8.0),        /* other variant */
    };
    fp4lr_bench_geomean g = fp4lr_bench_geomean_of(rows, 8, "fp4lr-nvfp4");
    cr_expect_float_eq(g.value, 1.0, 1e-12);
    cr_expect_eq(g.shapes, 3);
    cr_expect_eq(g.missing, 2);
    cr_expect_str_eq(g.variant, "fp4lr-nvfp4");
    g = fp4lr_bench_geomean_of(rows, 8, "cublas-fp8");
    cr_expect(isnan(g.value));
    cr_expect_eq(g.shapes, 0);
}

Test(bench_cli, row_timing_gives_tflops)
{
    fp4lr_bench_row r;
    fp4lr_bench_row_init(&r, "square", 1, 8192, 8192, 8192, "nvfp4", "fp4lr-nvfp4");
    cr_expect_eq(r.state, FP4LR_ROW_FAILED);
    cr_expect(isnan(r.tflops) && isnan(r.ratio_bf16));
    fp4lr_timing t = {.reps = 30, .median_ms = 1.0, .min_ms = 0.9, .max_ms = 1.2, .p10_ms = 0.95, .p90_ms = 1.1};
    fp4lr_bench_row_timed(&r, &t, 3);
    cr_expect_eq(r.state, FP4LR_ROW_OK);
    cr_expect_eq(r.copies, 3);
    cr_expect_float_eq(r.tflops, 1099.511627776, 1e-9); /* 2 * 2^39 flop in 1 ms */
    t.median_ms = 0.5; /* flux-qkv: 2 * 4608 * 9216 * 3072 flop in 0.5 ms */
    fp4lr_bench_row_init(&r, "flux-qkv", 1, 4608, 9216, 3072, "nvfp4", "fp4lr-nvfp4");
    fp4lr_bench_row_timed(&r, &t, 1);
    cr_expect_float_eq(r.tflops, 521.838526464, 1e-9);
}

/* ---- JSON --------------------------------------------------------------------------------- */

static char *capture(void (*writer)(FILE *, const void *), const void *arg)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    cr_assert_not_null(m);
    writer(m, arg);
    fclose(m);
    return text;
}

static void write_string(FILE *f, const void *s) { fp4lr_json_string(f, s); }
static void write_number(FILE *f, const void *v) { fp4lr_json_number(f, *(const double *)v); }

Test(bench_cli, json_string_escapes)
{
    char *t = capture(write_string, "a\"b\\c\nd\te\x01 \xc3\xa9");
    cr_expect_str_eq(t, "\"a\\\"b\\\\c\\nd\\te\\u0001 \xc3\xa9\"");
    free(t);
    /* Invalid UTF-8 (a lone continuation byte, a truncated sequence, 0xFF) -> U+FFFD. */
    t = capture(write_string, "x\x80y\xe2\x82z\xff");
    cr_expect_str_eq(t, "\"x\\ufffdy\\ufffd\\ufffdz\\ufffd\"");
    free(t);
    t = capture(write_string, NULL);
    cr_expect_str_eq(t, "\"\"");
    free(t);
}

Test(bench_cli, json_numbers_non_finite_are_null)
{
    const double v[] = {0.5, NAN, INFINITY, -1e-300, 123456789.0};
    const char *expect[] = {"0.5", "null", "null", "-1e-300", "123456789"};
    for (int i = 0; i < 5; i++) {
        char *t = capture(write_number, &v[i]);
        cr_expect_str_eq(t, expect[i]);
        free(t);
    }
}

Test(bench_cli, results_file_name)
{
    char out[256];
    fp4lr_results_sanitize("NVIDIA H200", out, sizeof out);
    cr_expect_str_eq(out, "nvidia-h200");
    fp4lr_results_sanitize("  NVIDIA  GeForce RTX 4090 (x) ", out, sizeof out);
    cr_expect_str_eq(out, "nvidia-geforce-rtx-4090-x");
    fp4lr_results_sanitize("--/--", out, sizeof out);
    cr_expect_str_eq(out, "unknown-device");
    fp4lr_results_sanitize("", out, sizeof out);
    cr_expect_str_eq(out, "unknown-device");
    cr_expect_eq(fp4lr_results_path("bench/results", "NVIDIA H200", "2026-01-02", out, sizeof out).code, FP4LR_OK);
    cr_expect_str_eq(out, "bench/results/nvidia-h200-2026-01-02.jsonl");
    fp4lr_status s = fp4lr_results_path("bench/results", "NVIDIA H200", "2026-01-02", out, 16);
    cr_expect_str_eq(s.rule, "PATH_TOO_LONG");
}

/* A run with three rows: a validated fp4lr row with a plan, a peer, an invalid row. */
typedef struct sample {
    fp4lr_run_info run;
    fp4lr_bench_row rows[3];
    fp4lr_bench_summary sum;
} sample;

static void sample_make(sample *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->run.time_utc, sizeof s->run.time_utc, "2026-01-02T03:04:05Z");
    snprintf(s->run.date, sizeof s->run.date, "2026-01-02");
    snprintf(s->run.git_commit, sizeof s->run.git_commit, "abc1234");
    s->run.git_dirty = 1;
    snprintf(s->run.command, sizeof s->run.command, "fp4lr-bench --mnk 'a \"b\"'");
    snprintf(s->run.device, sizeof s->run.device, "NVIDIA H200");
    s->run.sm_count = 132, s->run.cc_major = 9, s->run.driver_version = 13000;
    snprintf(s->run.peer_status, sizeof s->run.peer_status, "ok");
    s->run.iters = 30, s->run.warmup = 5, s->run.preheat_ms = 300;
    snprintf(s->run.variants, sizeof s->run.variants, "dense,fused,peers");
    snprintf(s->run.arch, sizeof s->run.arch, "sm90a");

    fp4lr_timing t = {.reps = 30, .median_ms = 0.5, .min_ms = 0.4, .max_ms = 0.7, .p10_ms = 0.45, .p90_ms = 0.6,
                      .host_ms = 0.0125};
    fp4lr_bench_row *r = &s->rows[0];
    fp4lr_bench_row_init(r, "flux-qkv", 1, 4608, 9216, 3072, "nvfp4", "fp4lr-nvfp4");
    fp4lr_bench_row_timed(r, &t, 3);
    r->ratio_bf16 = 1.25;
    r->ratio_dense = 1.0;
    r->validated = r->pass = 1, r->rows_checked = 128, r->max_err = 1e-3, r->max_err_over_mag = 2e-7;
    r->tol_acc = 2.4e-5;
    fp4lr_plan plan;
    fp4lr_problem p = {.M = 4608, .N = 9216, .K = 3072, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16};
    const fp4lr_plan_opts prepared = {.w_prep = FP4LR_WPREP_ON}; /* a _w plan, whatever AUTO picks */
    cr_assert_eq(fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &prepared, &plan).code, FP4LR_OK);
    fp4lr_bench_row_plan(r, &plan);
    r->stages_solver = plan.budget.stages_main;

    r = &s->rows[1];
    fp4lr_bench_row_init(r, "flux-qkv", 1, 4608, 9216, 3072, "bf16", "cublas-bf16");
    r->kind = FP4LR_BENCH_PEERS;
    t.median_ms = 0.625;
    fp4lr_bench_row_timed(r, &t, 1);
    r->ratio_bf16 = 1.0;
    snprintf(r->note, sizeof r->note, "timed only");

    r = &s->rows[2];
    fp4lr_bench_row_init(r, "flux-qkv", 1, 4608, 9216, 3072, "mxfp4", "fp4lr-mxfp4");
    fp4lr_bench_row_timed(r, &t, 3);
    r->state = FP4LR_ROW_INVALID;
    r->validated = 1, r->pass = 0, r->max_err_over_mag = 0.5;
    snprintf(r->note, sizeof r->note, "validation failed, a \"quote\"\n");

    fp4lr_bench_summarize(s->rows, 3, &s->sum);
}

static void write_sample(FILE *f, const void *arg)
{
    const sample *s = arg;
    fp4lr_status st = fp4lr_results_write_record(f, &s->run, s->rows, 3, &s->sum);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
}

Test(bench_cli, record_is_one_line)
{
    sample s;
    sample_make(&s);
    char *t = capture(write_sample, &s);
    size_t len = strlen(t);
    cr_assert(len > 2);
    cr_expect_eq(t[0], '{');
    cr_expect_eq(t[len - 1], '\n');
    cr_expect_null(memchr(t, '\n', len - 1), "exactly one line");
    cr_expect(strstr(t, "\"schema\": \"fp4lr-bench/2\"") != NULL);
    cr_expect(strstr(t, "\"ratio_vs_cublas_bf16\": 1.25") != NULL);
    cr_expect(strstr(t, "\"time_valid\": false") != NULL, "the invalid row");
    cr_expect(strstr(t, "\"plan\": null") != NULL, "the peer has no plan");
    cr_expect(strstr(t, "\"stages_main\": 3") != NULL);
    free(t);
}

/* Runs python3 on the record and compares what it prints. */
Test(bench_cli, record_parses_as_json)
{
    if (system("python3 -c 'import json' >/dev/null 2>&1") != 0)
        cr_skip_test("python3 is not installed");
    sample s;
    sample_make(&s);
    char path[] = "/tmp/fp4lr-bench-record-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    write_sample(f, &s);
    write_sample(f, &s); /* two records: JSON Lines */
    fclose(f);
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json,sys; rs=[json.loads(l) for l in open(sys.argv[1])]; r=rs[1]; "
             "print(len(rs), r[\"command\"], r[\"device\"][\"sm_count\"], r[\"git\"][\"dirty\"], "
             "[x[\"state\"] for x in r[\"results\"]], r[\"results\"][0][\"plan\"][\"budget\"][\"stages_main\"], "
             "r[\"results\"][1][\"validation\"], repr(r[\"results\"][2][\"note\"]), r[\"results\"][2][\"time_valid\"], "
             "r[\"geomean_vs_cublas_bf16\"][0][\"value\"], r[\"nvidia_smi\"][\"before\"])' %s",
             path);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char out[1024] = "";
    cr_expect_not_null(fgets(out, sizeof out, p));
    int rc = pclose(p);
    unlink(path);
    cr_expect_eq(rc, 0, "python3 failed to parse the record");
    cr_expect_str_eq(out, "2 fp4lr-bench --mnk 'a \"b\"' 132 True ['ok', 'ok', 'invalid'] 3 None "
                          "'validation failed, a \"quote\"\\n' False 1.25 None\n");
}

Test(bench_cli, results_append_creates_and_appends)
{
    char dir[] = "/tmp/fp4lr-bench-results-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char sub[128], path[1024];
    snprintf(sub, sizeof sub, "%s/a/b", dir);
    sample s;
    sample_make(&s);
    for (int i = 0; i < 2; i++) {
        fp4lr_status st = fp4lr_results_append(sub, &s.run, s.rows, 3, &s.sum, path, sizeof path);
        cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    }
    char expect[1024];
    snprintf(expect, sizeof expect, "%s/nvidia-h200-2026-01-02.jsonl", sub);
    cr_expect_str_eq(path, expect);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    int lines = 0, c;
    while ((c = fgetc(f)) != EOF)
        lines += c == '\n';
    fclose(f);
    cr_expect_eq(lines, 2);
    char cleanup[512];
    snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
    cr_expect_eq(system(cleanup), 0);
}

/* ---- CSV and the table ------------------------------------------------------------------------ */

static int count_fields(const char *line)
{
    int n = 1, quoted = 0;
    for (const char *c = line; *c && *c != '\n'; c++) {
        if (*c == '"')
            quoted = !quoted;
        else if (*c == ',' && !quoted)
            n++;
    }
    return n;
}

/* The sample's rows as CSV (csv = 1) or as the table, each with its header. */
typedef struct sample_form {
    const sample *s;
    int csv;
} sample_form;

static void write_rows(FILE *f, const void *arg)
{
    const sample_form *form = arg;
    if (form->csv)
        fp4lr_results_csv_header(f);
    else
        fp4lr_results_table_header(f);
    for (int i = 0; i < 3; i++) {
        if (form->csv)
            fp4lr_results_csv_row(f, &form->s->rows[i]);
        else
            fp4lr_results_table_row(f, &form->s->rows[i]);
    }
}

Test(bench_cli, csv_rows_match_the_header)
{
    sample s;
    sample_make(&s);
    char *t = capture(write_rows, &(sample_form){&s, 1});
    int header = count_fields(t);
    cr_expect_eq(header, 42);
    /* Every row has the header's field count; the note with a quote and a newline is quoted. */
    const char *line = strchr(t, '\n') + 1;
    for (int i = 0; i < 2; i++) {
        cr_expect_eq(count_fields(line), header, "row %d: %s", i, line);
        line = strchr(line, '\n') + 1;
    }
    cr_expect(strstr(line, "\"validation failed, a \"\"quote\"\"\n\"") != NULL, "%s", line);
    const char *first = "flux-qkv,1,4608,9216,3072,0,nvfp4,fp4lr-nvfp4,dense,ok,0.5,0.4,0.7,0.45,0.6,30,521.838526,1.25,"
                        "1,3,1,1,128,0.001,2e-07,2.4e-05,fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5,1,split,3,3,0,0,0,"
                        "0,225280,1,,,,0.0125,\n";
    cr_expect(strncmp(strchr(t, '\n') + 1, first, strlen(first)) == 0, "%s", t);
    free(t);
}

Test(bench_cli, table_lines)
{
    sample s;
    sample_make(&s);
    s.rows[1].note[0] = '\0';
    s.rows[1].t.host_ms = 0; /* unknown: "-" */
    char *t = capture(write_rows, &(sample_form){&s, 0});
    char *l1 = strchr(t, '\n') + 1, *l2 = strchr(l1, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
    *strchr(l1, '\n') = '\0';
    *strchr(l2, '\n') = '\0';
    cr_expect_str_eq(l1, "flux-qkv           4608   9216   3072     0  fp4lr-nvfp4              0.5000    12.5 "
                         "   521.8   1.250x           -   1.000x      3      -    220.0  PASS 2e-07");
    cr_expect_str_eq(l2, "flux-qkv           4608   9216   3072     0  cublas-bf16              0.6250       - "
                         "   417.5   1.000x           -        -      -      -        -  -");
    cr_expect(strstr(l3, "invalid") && strstr(l3, "FAIL 0.5"), "%s", l3);
    cr_expect(strncmp(t, "shape ", 6) == 0);
    free(t);
}

/* ---- run information ---------------------------------------------------------------------- */

Test(bench_cli, run_info_command_and_commit)
{
    setenv("FP4LR_GIT_COMMIT", "abc1234", 1);
    char *argv[] = {"fp4lr-bench", "--mnk", "a b", "it's", "--iters=30", NULL};
    fp4lr_run_info run;
    memset(&run, 0, sizeof run);
    fp4lr_run_info_capture(&run, 5, argv);
    cr_expect_str_eq(run.command, "fp4lr-bench --mnk 'a b' 'it'\\''s' --iters=30");
    cr_expect_str_eq(run.git_commit, "abc1234");
    cr_expect_eq(run.git_dirty, -1);
    cr_expect_eq(strlen(run.time_utc), 20);
    cr_expect_eq(run.time_utc[19], 'Z');
    cr_expect_eq(strncmp(run.time_utc, run.date, 10), 0);
}

/* ---- argument parsing --------------------------------------------------------------------------- */

static int parse(fp4lr_bench_opts *o, char *err, int argc, char **argv)
{
    return fp4lr_bench_opts_parse(argc, argv, o, err, 256);
}

#define ARGS(...) ((char *[]){"fp4lr-bench", __VA_ARGS__, NULL})
#define NARGS(...) ((int)(sizeof((char *[]){"fp4lr-bench", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(o, err, ...) parse(o, err, NARGS(__VA_ARGS__), ARGS(__VA_ARGS__))

Test(bench_cli, opts_defaults)
{
    fp4lr_bench_opts o;
    char err[256];
    char *argv[] = {"fp4lr-bench", NULL};
    cr_assert_eq(parse(&o, err, 1, argv), 0, "%s", err);
    cr_expect_eq(o.iters, 30);
    cr_expect_eq(o.warmup, 5);
    cr_expect_eq(o.preheat_ms, FP4LR_BENCH_PREHEAT_MS_DEFAULT);
    cr_expect_eq(FP4LR_BENCH_PREHEAT_MS_DEFAULT, 300);
    cr_expect_eq(o.formats, 1 << FP4LR_NVFP4 | 1 << FP4LR_MXFP4);
    cr_expect_eq(o.variants, FP4LR_BENCH_VARIANTS_DEFAULT);
    cr_expect(o.json && !o.quick && !o.csv && !o.force_stages && !o.sweep_stages);
    cr_expect_eq(o.arch, FP4LR_ARCH_SM90A);
    cr_expect_str_eq(o.results_dir, "bench/results");
    /* Every large shape: the fused variant runs, so the ranks count: 13 shapes, 3 of
     * them repeating an earlier one's M, N, K (their dense variants and peers are the
     * earlier one's). */
    cr_expect_eq(o.nshapes, 13);
    cr_expect_eq(o.ndups, 0);
    int repeats = 0;
    for (int i = 0; i < o.nshapes; i++) {
        cr_expect(o.shapes[i].large, "%s", o.shapes[i].name);
        repeats += o.same_mnk[i] >= 0;
        if (!strcmp(o.shapes[i].name, "qwen-qkv-r128"))
            cr_expect_str_eq(o.shapes[o.same_mnk[i]].name, "qwen-qkv-r32");
        if (!strcmp(o.shapes[i].name, "square-r32"))
            cr_expect_str_eq(o.shapes[o.same_mnk[i]].name, "square-r0");
        if (!strcmp(o.shapes[i].name, "flux-qkv"))
            cr_expect_eq(o.same_mnk[i], -1);
    }
    cr_expect_eq(repeats, 3);
}

Test(bench_cli, opts_without_fused_drop_repeated_mnk)
{
    fp4lr_bench_opts o;
    char err[256];
    cr_assert_eq(PARSE(&o, err, "--variants", "dense,peers"), 0, "%s", err);
    /* 13 large rows, 3 of them repeat one's M, N, K: without fused they are dropped. */
    cr_expect_eq(o.nshapes, 10);
    cr_expect_eq(o.ndups, 3);
    cr_expect_str_eq(o.dups[0].dropped, "qwen-qkv-r128");
    cr_expect_str_eq(o.dups[0].kept, "qwen-qkv-r32");
    for (int i = 0; i < o.nshapes; i++)
        cr_expect_eq(o.same_mnk[i], -1, "%s", o.shapes[i].name);
}

Test(bench_cli, opts_variants_sweep_arch)
{
    fp4lr_bench_opts o;
    char err[256];
    cr_assert_eq(PARSE(&o, err, "--no-peers", "--sweep-stages", "--arch", "sm100a", "--shape", "flux-qkv"), 0, "%s",
                 err);
    cr_expect_eq(o.variants, FP4LR_BENCH_VARIANTS_DEFAULT & ~FP4LR_BENCH_BIT(FP4LR_BENCH_PEERS));
    cr_expect(o.sweep_stages);
    cr_expect_eq(o.arch, FP4LR_ARCH_SM100A);
    /* --no-peers wins wherever it stands */
    cr_assert_eq(PARSE(&o, err, "--no-peers", "--variants", "fused,peers"), 0, "%s", err);
    cr_expect_eq(o.variants, FP4LR_BENCH_BIT(FP4LR_BENCH_FUSED));
    cr_expect_eq(PARSE(&o, err, "--no-peers", "--variants", "peers"), 2);
    cr_expect(strstr(err, "no variant") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--stages", "3", "--sweep-stages"), 2);
    cr_expect(strstr(err, "exclude") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--arch", "sm80"), 2);
    cr_expect_eq(PARSE(&o, err, "--variants", "dense,turbo"), 2);
    cr_expect(strstr(err, "'turbo'") != NULL, "%s", err);
    /* a custom shape with a rank */
    cr_assert_eq(PARSE(&o, err, "--mnk", "256x512x1024:64", "--mnk", "256x512x1024"), 0, "%s", err);
    cr_expect_eq(o.nshapes, 2);
    cr_expect_eq(o.shapes[0].r, 64);
    cr_expect_eq(o.same_mnk[1], 0);
}

Test(bench_cli, opts_iteration_floor)
{
    fp4lr_bench_opts o;
    char err[256];
    cr_expect_eq(PARSE(&o, err, "--iters", "5"), 2);
    cr_expect(strstr(err, "--quick") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--iters", "5", "--quick"), 0, "%s", err);
    cr_expect_eq(o.iters, 5);
    cr_expect_eq(PARSE(&o, err, "--quick"), 0);
    cr_expect_eq(o.iters, FP4LR_BENCH_QUICK_ITERS);
    cr_expect_eq(o.warmup, FP4LR_BENCH_QUICK_WARMUP);
    cr_expect_eq(o.preheat_ms, 0, "--quick preheats nothing");
    cr_expect_eq(PARSE(&o, err, "--quick", "--preheat", "50"), 0, "%s", err);
    cr_expect_eq(o.preheat_ms, 50);
    cr_expect_eq(PARSE(&o, err, "--iters", "20", "--warmup", "0", "--preheat", "0"), 0);
    cr_expect_eq(o.iters, 20);
    cr_expect_eq(o.warmup, 0);
    cr_expect_eq(o.preheat_ms, 0);
    cr_expect_eq(PARSE(&o, err, "--preheat", "10000"), 0, "%s", err);
    cr_expect_eq(o.preheat_ms, 10000);
    cr_expect_eq(PARSE(&o, err, "--preheat", "10001"), 2);
    cr_expect(strstr(err, "--preheat 10001: expected 0..10000 milliseconds") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--preheat", "-1"), 2);
    cr_expect_eq(PARSE(&o, err, "--preheat", "1s"), 2);
    cr_expect_eq(PARSE(&o, err, "--iters", "1001"), 2);
    cr_expect_eq(PARSE(&o, err, "--iters", "30x"), 2);
}

Test(bench_cli, opts_shapes_and_flags)
{
    fp4lr_bench_opts o;
    char err[256];
    cr_assert_eq(PARSE(&o, err, "--shape", "flux-fc2", "--mnk", "128x256x512", "--shape", "square-r32", "--format",
                       "mxfp4", "--no-peers", "--no-json", "--stages", "3", "--csv", "x.csv", "--seed", "9"),
                 0, "%s", err);
    cr_expect_eq(o.nshapes, 3);
    cr_expect_str_eq(o.shapes[0].name, "flux-fc2");
    cr_expect_str_eq(o.shapes[1].name, "128x256x512");
    cr_expect_eq(o.shapes[1].M, 128);
    cr_expect_eq(o.shapes[1].N, 256);
    cr_expect_eq(o.shapes[1].K, 512);
    cr_expect_eq(o.shapes[1].large, 0);
    cr_expect_str_eq(o.shapes[2].name, "square-r32");
    cr_expect_eq(o.formats, 1 << FP4LR_MXFP4);
    cr_expect(!(o.variants & FP4LR_BENCH_BIT(FP4LR_BENCH_PEERS)) && !o.json);
    cr_expect_eq(o.force_stages, 3);
    cr_expect_str_eq(o.csv, "x.csv");
    cr_expect_eq(o.seed, 9);
    /* the same M, N, K twice is measured once */
    cr_assert_eq(PARSE(&o, err, "--shape", "square-r0", "--mnk", "8192x8192x8192"), 0);
    cr_expect_eq(o.nshapes, 1);
    cr_expect_eq(o.ndups, 1);
}

Test(bench_cli, opts_bad_arguments)
{
    fp4lr_bench_opts o;
    char err[256];
    cr_expect_eq(PARSE(&o, err, "--shape", "nope"), 2);
    cr_expect(strstr(err, "nope") != NULL);
    cr_expect_eq(PARSE(&o, err, "--mnk", "0x128x128"), 2);
    cr_expect_eq(PARSE(&o, err, "--mnk", "128x128"), 2);
    cr_expect_eq(PARSE(&o, err, "--format", "fp8"), 2);
    cr_expect_eq(PARSE(&o, err, "--stages", "0"), 2);
    cr_expect_eq(PARSE(&o, err, "--iters"), 2);
    cr_expect_eq(PARSE(&o, err, "--frobnicate", "1"), 2);
    cr_expect(strstr(err, "--frobnicate") != NULL);
    cr_expect_eq(PARSE(&o, err, "--help"), 0);
    cr_expect(o.help);
    cr_expect_eq(PARSE(&o, err, "--list-shapes"), 0);
    cr_expect(o.list_shapes);
    cr_expect_eq(PARSE(&o, err, "--list-shapes", "--bogus"), 2, "a bad argument beside --list-shapes");
}

/* A shape the user writes is checked as a problem when parsed: it must run in at least one of
 * the run's formats (a table shape one format cannot run is a skipped row instead). */
Test(bench_cli, opts_custom_shapes_are_problems)
{
    fp4lr_bench_opts o;
    char err[256];
    cr_expect_eq(PARSE(&o, err, "--mnk", "128x128x128:7"), 2);
    cr_expect(strstr(err, "--mnk 128x128x128:7") != NULL && strstr(err, "[R_MULTIPLE]") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--mnk", "128x128x100"), 2);
    cr_expect(strstr(err, "[K_MULTIPLE]") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--format", "mxfp4", "--mnk", "128x128x64"), 2);
    cr_expect(strstr(err, "not a multiple of 128") != NULL, "%s", err);
    /* K = 64 runs in NVFP4: with both formats the MXFP4 rows are skipped, as for a table shape */
    cr_expect_eq(PARSE(&o, err, "--mnk", "128x128x64"), 0, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--mnk", "128x128x128:32"), 0, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--shape", "sana-qkv", "--format", "mxfp4"), 0, "%s", err);
    /* any N: the jobs pad Y's rows to 16 bytes, and so does the check of the shape */
    cr_expect_eq(PARSE(&o, err, "--mnk", "128x100x64"), 0, "%s", err);
    /* numbers are decimal digits that fit int64: no sign, space or trailing text */
    cr_expect_eq(PARSE(&o, err, "--mnk", "128x128x64abc"), 2);
    cr_expect_eq(PARSE(&o, err, "--mnk", "+128x128x64"), 2);
    cr_expect_eq(PARSE(&o, err, "--mnk", "99999999999999999999x1x64"), 2);
    cr_expect(strstr(err, "exceeds 2^63 - 1") != NULL, "%s", err);
    /* an option where a value belongs is not taken as the value */
    cr_expect_eq(PARSE(&o, err, "--csv", "--no-json"), 2);
    cr_expect(strstr(err, "missing value") != NULL, "%s", err);
}

/* Without a GPU the dry run lists the jobs; a row whose plan the options make it refuse is a
 * bad argument (exit 2, as fp4lr-check's), as it is with a GPU. */
Test(bench_cli, dry_run_with_a_refused_plan_exits_2)
{
    char out[16384];
    int rc = tsupport_run_bin("fp4lr-bench", "--no-json --shape flux-out --variants dense --pdl on", out, sizeof out);
    if (!strstr(out, "no GPU"))
        cr_skip_test("this machine has a GPU: the dry run is not what runs");
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect(strstr(out, "[PDL]") != NULL && strstr(out, "refused by their options") != NULL, "%s", out);
    rc = tsupport_run_bin("fp4lr-bench", "--no-json --shape flux-qkv --variants dense,fused --tile-n 160", out,
                          sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect(strstr(out, "[TILE_N]") != NULL, "%s", out);
    rc = tsupport_run_bin("fp4lr-bench", "--no-json --shape flux-out --variants dense", out, sizeof out);
    cr_expect_eq(rc, 0, "%s", out);
    /* options that leave nothing to run on this architecture are a bad argument */
    rc = tsupport_run_bin("fp4lr-bench", "--no-json --variants naive", out, sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect(strstr(out, "no job to run") != NULL, "%s", out);
}

/* Where the results go is checked before anything runs (with or without a GPU), so that a
 * run's figures are never lost to a path at its end. */
Test(bench_cli, output_paths_are_checked_first)
{
    char out[16384];
    int rc = tsupport_run_bin("fp4lr-bench", "--quick --no-json --shape flux-out --csv /nonexistent-dir/x.csv", out,
                              sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect(strstr(out, "--csv /nonexistent-dir/x.csv: /nonexistent-dir is not a directory") != NULL, "%s", out);
    rc = tsupport_run_bin("fp4lr-bench", "--quick --no-json --shape flux-out --csv /tmp/", out, sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect(strstr(out, "is not a regular file") != NULL, "%s", out);
    rc = tsupport_run_bin("fp4lr-bench", "--quick --shape flux-out --results-dir README.md", out, sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect(strstr(out, "--results-dir README.md: exists and is not a directory") != NULL, "%s", out);
    rc = tsupport_run_bin("fp4lr-bench", "--quick --shape flux-out --results-dir README.md/a/b", out, sizeof out);
    cr_expect_eq(rc, 2, "a missing parent below a file: %s", out);
    /* missing parents are made (mkdir -p) below a writable directory */
    rc = tsupport_run_bin("fp4lr-bench", "--quick --mnk 128x128x64 --format nvfp4 --variants dense --no-peers "
                          "--results-dir /tmp/fp4lr-test-absent/a/b", out, sizeof out);
    cr_expect_eq(system("rm -rf /tmp/fp4lr-test-absent"), 0);
    cr_expect(rc == 0 || rc == 1, "%s", out);
    cr_expect(strstr(out, "--results-dir") == NULL, "%s", out);
}

Test(bench_cli, format_granularity)
{
    const fp4lr_shape *sana = fp4lr_shape_find("sana-qkv"); /* K = 2240 = 35 * 64 */
    cr_assert_not_null(sana);
    cr_expect(fp4lr_bench_format_fits(sana, FP4LR_NVFP4));
    cr_expect(!fp4lr_bench_format_fits(sana, FP4LR_MXFP4));
    cr_expect(fp4lr_bench_format_fits(fp4lr_shape_find("sana-out"), FP4LR_MXFP4)); /* K = 2304 = 18 * 128 */
}

/* ---- variants ------------------------------------------------------------------------------ */

Test(bench_cli, variants_parse_and_format)
{
    int m = -1;
    char err[256], out[128];
    cr_assert_eq(fp4lr_bench_variants_parse("fused,dense", &m, err, sizeof err), 0, "%s", err);
    cr_expect_eq(m, FP4LR_BENCH_BIT(FP4LR_BENCH_DENSE) | FP4LR_BENCH_BIT(FP4LR_BENCH_FUSED));
    fp4lr_bench_variants_format(m, out, sizeof out);
    cr_expect_str_eq(out, "dense,fused", "table order, not the list's");
    cr_assert_eq(fp4lr_bench_variants_parse("naive", &m, err, sizeof err), 0);
    cr_expect_eq(m, FP4LR_BENCH_BIT(FP4LR_BENCH_NAIVE));
    cr_assert_eq(fp4lr_bench_variants_parse("dense-c2-naive,dense-c2,peers", &m, err, sizeof err), 0);
    cr_expect_eq(m, FP4LR_BENCH_BIT(FP4LR_BENCH_NAIVE) | FP4LR_BENCH_BIT(FP4LR_BENCH_DENSE_C2) |
                        FP4LR_BENCH_BIT(FP4LR_BENCH_PEERS));
    cr_assert_eq(fp4lr_bench_variants_parse("all", &m, err, sizeof err), 0);
    cr_expect_eq(m, 0x3F);
    fp4lr_bench_variants_format(m, out, sizeof out);
    cr_expect_str_eq(out, "dense,dense-c2,dense-c2-naive,fused,fused-c2,peers");
    cr_assert_eq(fp4lr_bench_variants_parse("fused-c2", &m, err, sizeof err), 0, "%s", err);
    cr_expect_eq(m, FP4LR_BENCH_BIT(FP4LR_BENCH_FUSED_C2));
    cr_expect(fp4lr_bench_variant_runs_on(FP4LR_BENCH_FUSED_C2, FP4LR_ARCH_SM90A));
    cr_expect(!fp4lr_bench_variant_runs_on(FP4LR_BENCH_FUSED_C2, FP4LR_ARCH_SM100A),
              "sm_100a's fused kernel is the pair already");
    m = 7;
    cr_expect_eq(fp4lr_bench_variants_parse("dense,,fused", &m, err, sizeof err), 2);
    cr_expect_eq(fp4lr_bench_variants_parse("", &m, err, sizeof err), 2);
    cr_expect_eq(fp4lr_bench_variants_parse("dense,", &m, err, sizeof err), 2);
    cr_expect_eq(fp4lr_bench_variants_parse("Dense", &m, err, sizeof err), 2);
    cr_expect(strstr(err, "'Dense'") != NULL, "%s", err);
    cr_expect_eq(m, 7, "a bad list leaves the mask alone");
}

Test(bench_cli, variant_problem_options_label)
{
    const fp4lr_shape *s = fp4lr_shape_find("flux-qkv");
    cr_assert_not_null(s);
    fp4lr_problem p = fp4lr_bench_variant_problem(FP4LR_BENCH_FUSED, s, FP4LR_MXFP4);
    cr_expect_eq(p.r, 32);
    cr_expect(p.has_wc && p.has_beta);
    cr_expect_eq(p.ldL, 32);
    cr_expect_eq(p.ldY, 9216);
    cr_expect_eq(p.format, FP4LR_MXFP4);
    p = fp4lr_bench_variant_problem(FP4LR_BENCH_DENSE_C2, s, FP4LR_NVFP4);
    cr_expect(p.r == 0 && !p.has_wc && !p.has_beta);
    fp4lr_shape odd = {.name = "odd", .M = 64, .N = 100, .K = 128};
    cr_expect_eq(fp4lr_bench_variant_problem(FP4LR_BENCH_DENSE, &odd, FP4LR_NVFP4).ldY, 104, "16-byte rows");

    fp4lr_plan_opts po = fp4lr_bench_variant_opts(FP4LR_BENCH_DENSE, 1000, 3);
    cr_expect(po.cluster == 1 && po.tile_m == 0 && po.policy == FP4LR_POLICY_SPLIT);
    cr_expect(po.smem_capacity == 1000 && po.force_main_stages == 3);
    po = fp4lr_bench_variant_opts(FP4LR_BENCH_DENSE_C2, 0, 0);
    cr_expect(po.cluster == 2 && po.tile_m == 256 && po.policy == FP4LR_POLICY_SPLIT);
    po = fp4lr_bench_variant_opts(FP4LR_BENCH_NAIVE, 0, 0);
    cr_expect(po.cluster == 2 && po.tile_m == 256 && po.policy == FP4LR_POLICY_NAIVE);
    po = fp4lr_bench_variant_opts(FP4LR_BENCH_FUSED, 0, 0);
    cr_expect(po.cluster == 0, "the architecture's default cluster");

    char label[24];
    const char *expect[] = {"fp4lr-nvfp4", "fp4lr-nvfp4-c2", "fp4lr-nvfp4-c2-naive", "fp4lr-nvfp4-fused"};
    for (int v = 0; v < 4; v++) {
        fp4lr_bench_variant_label((fp4lr_bench_variant)v, FP4LR_NVFP4, label, sizeof label);
        cr_expect_str_eq(label, expect[v]);
    }
    fp4lr_bench_variant_label(FP4LR_BENCH_FUSED, FP4LR_MXFP4, label, sizeof label);
    cr_expect_str_eq(label, "fp4lr-mxfp4-fused");
    cr_expect(fp4lr_bench_variant_runs_on(FP4LR_BENCH_NAIVE, FP4LR_ARCH_SM100A));
    cr_expect(!fp4lr_bench_variant_runs_on(FP4LR_BENCH_NAIVE, FP4LR_ARCH_SM90A));
    cr_expect(fp4lr_bench_variant_runs_on(FP4LR_BENCH_DENSE_C2, FP4LR_ARCH_SM90A));
}

Test(bench_cli, stage_points)
{
    fp4lr_bench_opts o = {0};
    int pts[8];
    cr_expect_eq(fp4lr_bench_stage_points(&o, FP4LR_BENCH_DENSE, 4, pts, 8), 1);
    cr_expect_eq(pts[0], 0, "the solver's plan");
    o.force_stages = 3;
    cr_expect_eq(fp4lr_bench_stage_points(&o, FP4LR_BENCH_FUSED, 4, pts, 8), 1);
    cr_expect_eq(pts[0], 3);
    o.force_stages = 0, o.sweep_stages = 1;
    cr_assert_eq(fp4lr_bench_stage_points(&o, FP4LR_BENCH_DENSE, 4, pts, 8), 4);
    cr_expect(pts[0] == 1 && pts[1] == 2 && pts[2] == 3 && pts[3] == 0, "1, 2, 3 forced, then the solver's 4");
    cr_assert_eq(fp4lr_bench_stage_points(&o, FP4LR_BENCH_FUSED, 2, pts, 8), 2);
    cr_expect(pts[0] == 1 && pts[1] == 0);
    cr_assert_eq(fp4lr_bench_stage_points(&o, FP4LR_BENCH_DENSE_C2, 1, pts, 8), 1);
    cr_expect_eq(pts[0], 0);
    cr_assert_eq(fp4lr_bench_stage_points(&o, FP4LR_BENCH_NAIVE, 5, pts, 8), 1, "naive's count is its point");
    cr_expect_eq(pts[0], 0);
    cr_expect_eq(fp4lr_bench_stage_points(&o, FP4LR_BENCH_DENSE, 9, pts, 3), 3, "never past cap");
}

/* ---- jobs ---------------------------------------------------------------------------------- */

/* A kernel directory holding empty <arch>/<entry>.cubin files for the entries given. */
static void fake_kernels(char *dir, const char *const *entries, int n)
{
    cr_assert_not_null(mkdtemp(dir));
    char path[512];
    snprintf(path, sizeof path, "%s/sm90a", dir);
    cr_assert_eq(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/sm100a", dir);
    cr_assert_eq(mkdir(path, 0777), 0);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s/%s.cubin", dir, strstr(entries[i], "sm100a") ? "sm100a" : "sm90a",
                 entries[i]);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f, "%s", path);
        fclose(f);
    }
    unsetenv("FP4LR_KERNEL_DIR");
}

static void remove_dir(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(bench_cli, plan_built_checks_the_cubin)
{
    char dir[] = "/tmp/fp4lr-bench-kernels-XXXXXX";
    const char *built[] = {"fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5"};
    fake_kernels(dir, built, 1);
    fp4lr_problem p = {.M = 4608, .N = 9216, .K = 3072, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16};
    fp4lr_plan plan;
    const fp4lr_plan_opts on = {.w_prep = FP4LR_WPREP_ON};
    cr_assert_eq(fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &on, &plan).code, FP4LR_OK);
    char path[1024], expect[1024];
    cr_expect(fp4lr_bench_plan_built(&plan, dir, path, sizeof path));
    snprintf(expect, sizeof expect, "%s/sm90a/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5.cubin", dir);
    cr_expect_str_eq(path, expect);
    fp4lr_plan_opts po = {.force_main_stages = 2, .w_prep = FP4LR_WPREP_ON};
    cr_assert_eq(fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &po, &plan).code, FP4LR_OK);
    cr_expect(!fp4lr_bench_plan_built(&plan, dir, NULL, 0));
    /* $FP4LR_KERNEL_DIR overrides the directory given */
    setenv("FP4LR_KERNEL_DIR", "/nonexistent", 1);
    cr_expect(!fp4lr_bench_plan_built(&plan, dir, path, sizeof path));
    cr_expect(strncmp(path, "/nonexistent/sm90a/", 19) == 0, "%s", path);
    unsetenv("FP4LR_KERNEL_DIR");
    remove_dir(dir);
}

/* The jobs of the options on sm_90a with the kernels of `dir`. */
static void make_jobs(fp4lr_bench_opts *o, fp4lr_arch arch, const char *dir, fp4lr_bench_jobs *j)
{
    fp4lr_bench_target t = {.arch = arch, .kernel_dir = dir};
    fp4lr_status st = fp4lr_bench_jobs_make(o, &t, j);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
}

Test(bench_cli, jobs_sweep_stage_points)
{
    char dir[] = "/tmp/fp4lr-bench-kernels-XXXXXX";
    const char *built[] = {"fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s2", "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_t3",
                           "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_t3"};
    fake_kernels(dir, built, 3);
    fp4lr_bench_opts o;
    char err[256];
    cr_assert_eq(PARSE(&o, err, "--shape", "flux-qkv", "--format", "nvfp4", "--variants", "dense,fused",
                       "--sweep-stages"),
                 0, "%s", err);
    fp4lr_bench_jobs j;
    make_jobs(&o, FP4LR_ARCH_SM90A, dir, &j);
    /* dense and fused (r = 32): 1 .. 4 forced, every one with 2 transform slots (the sweep
     * varies the main stages alone; 4 is the most that fit beside 2 slots), then the solver's
     * own 3 stages with 3 slots */
    cr_assert_eq(j.n, 10);
    const int stages[] = {1, 2, 3, 4, 3, 1, 2, 3, 4, 3}, forced[] = {1, 2, 3, 4, 0, 1, 2, 3, 4, 0};
    const int runnable[] = {0, 1, 0, 0, 1, 0, 0, 0, 0, 1}, slots[] = {2, 2, 2, 2, 3, 2, 2, 2, 2, 3};
    /* shared memory as the budget predicts (dense): 2 writeback stages + fixed 1 KiB + 27 KiB
     * per main stage + 32 KiB per transform slot (2, then 3 for the solver's plan) */
    const int64_t smem[] = {126976, 154624, 182272, 209920, 215040};
    for (int i = 0; i < 10; i++) {
        const fp4lr_bench_row *r = &j.row[i];
        cr_expect_eq(r->stages_main, stages[i], "job %d", i);
        cr_expect_eq(r->budget.stages_transform, slots[i], "job %d", i);
        cr_expect_eq(r->force_stages, forced[i], "job %d", i);
        cr_expect_eq(r->sweep, forced[i] != 0, "job %d", i);
        cr_expect_eq(j.job[i].runnable, runnable[i], "job %d: %s", i, r->note);
        cr_expect_str_eq(r->variant, i < 5 ? "fp4lr-nvfp4" : "fp4lr-nvfp4-fused");
        cr_expect_eq(r->kind, i < 5 ? FP4LR_BENCH_DENSE : FP4LR_BENCH_FUSED);
        cr_expect_eq(r->stages_solver, 3);
        cr_expect_eq(r->r, i < 5 ? 0 : 32);
        cr_expect(r->has_plan);
        if (i < 5)
            cr_expect_eq(r->smem_bytes, smem[i], "job %d", i);
        if (!runnable[i]) {
            cr_expect_eq(r->state, FP4LR_ROW_SKIPPED);
            cr_expect(strncmp(r->note, "not built (", 11) == 0, "%s", r->note);
            cr_expect(strstr(r->note, j.job[i].plan.entry) != NULL, "%s", r->note);
        }
    }
    cr_expect_str_eq(j.job[2].plan.entry, "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3",
                     "the sweep's 3 stages are the 2-slot kernel, not the solver's _t3");
    cr_expect_eq(j.row[9].budget.stages_lora, 1);
    cr_expect_eq(j.row[9].budget.lora_chunk, 32);
    cr_expect_eq(j.row[9].budget.stages_transform, 3);
    cr_expect_str_eq(j.job[9].plan.entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_t3");
    fp4lr_bench_jobs_free(&j);
    cr_expect(j.n == 0 && j.row == NULL);
    remove_dir(dir);
}

Test(bench_cli, jobs_variants_repeats_formats_peers)
{
    char dir[] = "/tmp/fp4lr-bench-kernels-XXXXXX";
    fake_kernels(dir, NULL, 0);
    fp4lr_bench_opts o;
    char err[256];
    /* sana-qkv: K = 2240 fits NVFP4 only; qwen-qkv-r128 repeats qwen-qkv-r32's M, N, K */
    cr_assert_eq(PARSE(&o, err, "--shape", "sana-qkv", "--shape", "qwen-qkv-r32", "--shape", "qwen-qkv-r128"), 0,
                 "%s", err);
    fp4lr_bench_jobs j;
    make_jobs(&o, FP4LR_ARCH_SM90A, dir, &j);
    /* per shape: 2 formats x (dense, dense-c2, fused, fused-c2) + 2 peers; no naive on
     * sm_90a; the repeat has its fused variants only */
    cr_assert_eq(j.n, 10 + 10 + 4);
    int naive = 0, skipped_k = 0, peers = 0;
    for (int i = 0; i < j.n; i++) {
        naive += j.row[i].kind == FP4LR_BENCH_NAIVE;
        skipped_k += strstr(j.row[i].note, "K=2240 is not a multiple of 128") != NULL;
        if (j.row[i].kind == FP4LR_BENCH_PEERS) {
            peers++;
            cr_expect(j.job[i].runnable, "peers run (their availability is the run's business)");
        }
    }
    cr_expect_eq(naive, 0);
    cr_expect_eq(skipped_k, 4, "one line per fp4lr variant of sana-qkv in MXFP4");
    cr_expect_eq(peers, 4);
    cr_expect_str_eq(j.row[3].variant, "fp4lr-nvfp4-fused-c2");
    cr_expect_str_eq(j.row[4].variant, "fp4lr-mxfp4");
    cr_expect_str_eq(j.row[8].variant, "cublas-bf16");
    cr_expect_str_eq(j.row[9].variant, "cublas-fp8");
    cr_expect_str_eq(j.row[9].format, "e4m3");
    cr_expect_str_eq(j.row[20].shape, "qwen-qkv-r128");
    cr_expect_str_eq(j.row[20].variant, "fp4lr-nvfp4-fused");
    cr_expect_eq(j.row[20].r, 128);
    cr_expect_eq(j.row[20].stages_main, 3, "r = 128 leaves 3 main stages (low-rank ring 2 x 32 ranks)");
    cr_expect_str_eq(j.row[21].variant, "fp4lr-nvfp4-fused-c2");
    cr_expect_eq(j.row[21].r, 128);
    cr_expect_eq(j.row[21].stages_main, 3, "the pair's per-CTA budget is one CTA's");
    cr_expect_str_eq(j.job[21].plan.entry, "fp4lr_sm90a_nvfp4_fused_m256n256k128_c2_s3_w4");
    cr_expect_str_eq(j.row[22].variant, "fp4lr-mxfp4-fused");
    cr_expect(strstr(j.row[20].note, "not built") != NULL, "nothing is built in the directory");
    fp4lr_bench_jobs_free(&j);

    /* sm_100a: the naive pair is planned; its 3-stage entry is not built */
    cr_assert_eq(PARSE(&o, err, "--shape", "flux-qkv", "--format", "nvfp4", "--variants", "dense,naive,dense-c2"), 0);
    make_jobs(&o, FP4LR_ARCH_SM100A, dir, &j);
    cr_assert_eq(j.n, 3);
    cr_expect_str_eq(j.row[0].entry, "fp4lr_sm100a_nvfp4_dense_m128n256k256_c1_s3");
    cr_expect_str_eq(j.row[1].entry, "fp4lr_sm100a_nvfp4_dense_m256n256k256_c2_s5");
    cr_expect_str_eq(j.row[2].variant, "fp4lr-nvfp4-c2-naive");
    cr_expect_str_eq(j.row[2].entry, "fp4lr_sm100a_nvfp4_dense_m256n256k256_c2_s3");
    cr_expect_eq(j.row[2].budget.req.policy, FP4LR_POLICY_NAIVE);
    cr_expect(!j.job[2].runnable && strstr(j.row[2].note, "not built") != NULL, "%s", j.row[2].note);
    fp4lr_bench_jobs_free(&j);

    /* --stages that do not fit: skipped, not an error */
    cr_assert_eq(PARSE(&o, err, "--shape", "qwen-qkv-r128", "--format", "nvfp4", "--variants", "fused",
                       "--stages", "5", "--w-prep", "off"),
                 0);
    make_jobs(&o, FP4LR_ARCH_SM90A, dir, &j);
    cr_assert_eq(j.n, 1);
    cr_expect_eq(j.row[0].state, FP4LR_ROW_SKIPPED);
    cr_expect(!j.job[0].plan_error && !j.job[0].runnable);
    cr_expect(strncmp(j.row[0].note, "does not fit: ", 14) == 0, "%s", j.row[0].note);
    cr_expect_eq(j.row[0].force_stages, 5);
    cr_expect(!j.job[0].plan_refused);
    fp4lr_bench_jobs_free(&j);

    /* an option the plan refuses (160 wide, not swapped): FAILED, an error the options caused */
    cr_assert_eq(PARSE(&o, err, "--shape", "flux-qkv", "--format", "nvfp4", "--variants", "dense", "--tile-n",
                       "160"),
                 0);
    make_jobs(&o, FP4LR_ARCH_SM90A, dir, &j);
    cr_assert_eq(j.n, 1);
    cr_expect_eq(j.row[0].state, FP4LR_ROW_FAILED);
    cr_expect(j.job[0].plan_error && j.job[0].plan_refused && !j.job[0].runnable);
    cr_expect(strstr(j.row[0].note, "[TILE_N]") != NULL, "%s", j.row[0].note);
    fp4lr_bench_jobs_free(&j);
    remove_dir(dir);
}

/* ---- ratios between rows --------------------------------------------------------------------- */

/* A timed row of a variant on flux-qkv's M, N, K with its sm_90a plan (fp4lr kinds). */
static fp4lr_bench_row timed_row(const char *shape, fp4lr_bench_variant v, fp4lr_format f, int force, double ms)
{
    fp4lr_bench_row r;
    char label[24];
    const fp4lr_shape *s = fp4lr_shape_find("flux-qkv");
    if (v == FP4LR_BENCH_PEERS)
        snprintf(label, sizeof label, f == FP4LR_NVFP4 ? "cublas-bf16" : "cublas-fp8");
    else
        fp4lr_bench_variant_label(v, f, label, sizeof label);
    fp4lr_bench_row_init(&r, shape, 1, s->M, s->N, s->K,
                         v == FP4LR_BENCH_PEERS ? (f == FP4LR_NVFP4 ? "bf16" : "e4m3") : fp4lr_format_name(f), label);
    r.kind = v;
    if (v != FP4LR_BENCH_PEERS) {
        fp4lr_problem p = fp4lr_bench_variant_problem(v, s, f);
        fp4lr_plan_opts po = fp4lr_bench_variant_opts(v, 0, force);
        fp4lr_plan plan;
        cr_assert_eq(fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &po, &plan).code, FP4LR_OK);
        fp4lr_bench_row_plan(&r, &plan);
        r.r = p.r;
        r.force_stages = force;
        r.sweep = force != 0;
    }
    fp4lr_timing t = {.reps = 20, .median_ms = ms, .min_ms = ms, .max_ms = ms, .p10_ms = ms, .p90_ms = ms};
    fp4lr_bench_row_timed(&r, &t, 1);
    return r;
}

Test(bench_cli, ratios_vs_bf16_and_dense)
{
    fp4lr_bench_row rows[] = {
        timed_row("flux-qkv", FP4LR_BENCH_DENSE, FP4LR_NVFP4, 2, 2.0),      /* sweep point */
        timed_row("flux-qkv", FP4LR_BENCH_DENSE, FP4LR_NVFP4, 0, 1.0),      /* the dense reference */
        timed_row("flux-qkv", FP4LR_BENCH_DENSE_C2, FP4LR_NVFP4, 0, 0.8),
        timed_row("flux-qkv", FP4LR_BENCH_FUSED, FP4LR_NVFP4, 0, 1.25),
        timed_row("flux-qkv", FP4LR_BENCH_FUSED, FP4LR_MXFP4, 0, 1.0),      /* no MXFP4 dense */
        timed_row("flux-qkv", FP4LR_BENCH_PEERS, FP4LR_NVFP4, 0, 0.5),      /* cublas-bf16 */
        timed_row("flux-qkv", FP4LR_BENCH_PEERS, FP4LR_MXFP4, 0, 0.25),     /* cublas-fp8 */
        timed_row("flux-qkv-r64", FP4LR_BENCH_FUSED, FP4LR_NVFP4, 0, 2.0),  /* same M, N, K, another shape */
        timed_row("flux-qkv", FP4LR_BENCH_FUSED, FP4LR_NVFP4, 0, 4.0),
    };
    rows[8].state = FP4LR_ROW_INVALID;
    fp4lr_bench_set_ratios(rows, 9);
    const double bf16[] = {0.25, 0.5, 0.625, 0.4, 0.5, 1.0, 2.0, 0.25, 0.125};
    const double dense[] = {0.5, 1.0, 1.25, 0.8, NAN, NAN, NAN, 0.5, 0.25};
    for (int i = 0; i < 9; i++) {
        cr_expect_float_eq(rows[i].ratio_bf16, bf16[i], 1e-12, "row %d: %g", i, rows[i].ratio_bf16);
        if (isnan(dense[i]))
            cr_expect(isnan(rows[i].ratio_dense), "row %d: %g", i, rows[i].ratio_dense);
        else
            cr_expect_float_eq(rows[i].ratio_dense, dense[i], 1e-12, "row %d: %g", i, rows[i].ratio_dense);
    }
    /* an invalid reference is no reference */
    rows[1].state = FP4LR_ROW_INVALID;
    rows[3].ratio_dense = NAN;
    fp4lr_bench_set_ratios(rows, 9);
    cr_expect(isnan(rows[3].ratio_dense));
}

Test(bench_cli, geomeans_vs_dense_and_summary)
{
    fp4lr_bench_row rows[] = {
        timed_row("a", FP4LR_BENCH_DENSE, FP4LR_NVFP4, 0, 1.0),
        timed_row("a", FP4LR_BENCH_FUSED, FP4LR_NVFP4, 0, 1.0),
        timed_row("a", FP4LR_BENCH_PEERS, FP4LR_NVFP4, 0, 1.0),
        timed_row("b", FP4LR_BENCH_FUSED, FP4LR_NVFP4, 0, 1.0),
        timed_row("b", FP4LR_BENCH_FUSED, FP4LR_NVFP4, 2, 1.0), /* a sweep point: left out */
        timed_row("c", FP4LR_BENCH_FUSED, FP4LR_NVFP4, 0, 1.0),
    };
    /* fused/dense 0.5 and 2 (geomean 1); the sweep point's 100 and c's missing ratio do not count */
    rows[1].ratio_dense = 0.5, rows[3].ratio_dense = 2.0, rows[4].ratio_dense = 100.0;
    rows[1].ratio_bf16 = 0.25, rows[3].ratio_bf16 = 0.5, rows[5].ratio_bf16 = 1.0;
    rows[0].ratio_bf16 = 0.6, rows[0].ratio_dense = 1.0, rows[2].ratio_bf16 = 1.0;
    fp4lr_bench_geomean g = fp4lr_bench_geomean_dense_of(rows, 6, "fp4lr-nvfp4-fused");
    cr_expect_float_eq(g.value, 1.0, 1e-12);
    cr_expect_eq(g.shapes, 2);
    cr_expect_eq(g.missing, 1);
    g = fp4lr_bench_geomean_of(rows, 6, "fp4lr-nvfp4-fused");
    cr_expect_float_eq(g.value, 0.5, 1e-12, "(0.25 * 0.5 * 1)^(1/3)");
    cr_expect_eq(g.shapes, 3);

    fp4lr_bench_summary sum;
    fp4lr_bench_summarize(rows, 6, &sum);
    cr_assert_eq(sum.n_bf16, 2, "dense, fused; not cublas-bf16 itself");
    cr_expect_str_eq(sum.vs_bf16[0].variant, "fp4lr-nvfp4");
    cr_expect_float_eq(sum.vs_bf16[0].value, 0.6, 1e-12);
    cr_expect_str_eq(sum.vs_bf16[1].variant, "fp4lr-nvfp4-fused");
    cr_assert_eq(sum.n_dense, 1, "fused only: not the dense kernel, not the peers");
    cr_expect_str_eq(sum.vs_dense[0].variant, "fp4lr-nvfp4-fused");
    cr_expect_float_eq(sum.vs_dense[0].value, 1.0, 1e-12);

    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    fp4lr_bench_summary_print(m, &sum);
    fclose(m);
    cr_expect(strstr(text, "  fp4lr-nvfp4            0.600x  (1 shapes)\n") != NULL, "%s", text);
    cr_expect(strstr(text, "vs the dense fp4lr kernel") != NULL, "%s", text);
    cr_expect(strstr(text, "  fp4lr-nvfp4-fused      1.000x  (2 shapes; 1 large shapes without a valid ratio)\n") !=
                  NULL,
              "%s", text);
    free(text);
}

/* The fused row's fields in the record, parsed back by python3. */
Test(bench_cli, record_fused_fields)
{
    if (system("python3 -c 'import json' >/dev/null 2>&1") != 0)
        cr_skip_test("python3 is not installed");
    sample s;
    sample_make(&s);
    s.rows[2] = timed_row("flux-qkv", FP4LR_BENCH_FUSED, FP4LR_NVFP4, 2, 0.6);
    s.rows[2].r = 32, s.rows[2].stages_solver = 3, s.rows[2].ratio_dense = 0.95;
    fp4lr_bench_summarize(s.rows, 3, &s.sum);
    char path[] = "/tmp/fp4lr-bench-record-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    write_sample(f, &s);
    fclose(f);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read()); x=r[\"results\"][2]; p=x[\"plan\"]; "
             "print(x[\"kind\"], x[\"r\"], x[\"force_stages\"], x[\"sweep\"], x[\"stages_solver\"], x[\"ratio_vs_dense\"], "
             "p[\"stages_main\"], p[\"stages_lora\"], p[\"lora_chunk\"], p[\"cluster\"], p[\"tile\"], p[\"policy\"], "
             "p[\"family\"], p[\"rank\"], p[\"smem_bytes\"] == p[\"budget\"][\"total_bytes\"], "
             "r[\"results\"][1][\"kind\"], r[\"settings\"][\"variants\"], r[\"settings\"][\"sweep_stages\"], "
             "r[\"device\"][\"arch\"], [g[\"variant\"] for g in r[\"geomean_vs_dense\"]], r[\"settings\"][\"preheat_ms\"])' %s",
             path);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char out[1024] = "";
    cr_expect_not_null(fgets(out, sizeof out, p));
    int rc = pclose(p);
    unlink(path);
    cr_expect_eq(rc, 0, "python3 failed to parse the record");
    cr_expect_str_eq(out, "fused 32 2 True 3 0.95 2 1 32 1 [128, 256, 128] split fused 32 True peers "
                          "dense,fused,peers False sm90a ['fp4lr-nvfp4-fused'] 300\n");
}

/* ---- on a GPU: the peers' self-check, the rotation ring --------------------------------------- */

Test(bench_cli, gpu_peer_selfcheck)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
    fp4lr_cublaslt *lt = NULL;
    fp4lr_status s = fp4lr_cublaslt_open(&lt);
    if (s.code != FP4LR_OK) {
        fp4lr_ctx_destroy(ctx);
        cr_skip_test("no cuBLASLt: %s", s.msg);
    }
    s = fp4lr_cublaslt_init_handle(lt);
    cr_assert_eq(s.code, FP4LR_OK, "%s", s.msg);
    for (int k = 0; k < FP4LR_PEER_KINDS; k++) {
        fp4lr_peer_check rep;
        s = fp4lr_peer_selfcheck(lt, ctx, (fp4lr_peer_kind)k, &rep);
        cr_expect_eq(s.code, FP4LR_OK, "%s: %s", fp4lr_peer_name((fp4lr_peer_kind)k), s.msg);
        cr_expect_eq(rep.checked, FP4LR_PEER_CHECK_M * FP4LR_PEER_CHECK_N);
        cr_expect_eq(rep.failed, 0);
    }
    fp4lr_cublaslt_close(lt);
    fp4lr_ctx_destroy(ctx);
}

Test(bench_cli, gpu_ring_copies_hold_the_same_inputs)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
    fp4lr_problem p = {.M = 128, .N = 256, .K = 256, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16};
    fp4lr_pgen_problem h;
    cr_assert_eq(fp4lr_pgen_alloc(&h, &p), 0);
    fp4lr_pgen_fill(&h, 3, FP4LR_PGEN_SCALES_REALISTIC);
    fp4lr_devproblem_ring ring;
    fp4lr_status s = fp4lr_devproblem_ring_create(ctx, &h.p, &h.a, 3, &ring);
    cr_assert_eq(s.code, FP4LR_OK, "%s", s.msg);
    cr_expect_eq(ring.n, 3);
    cr_expect(ring.copy[0].A != ring.copy[1].A && ring.copy[1].A != ring.copy[2].A);
    cr_expect(ring.copy[0].Y != ring.copy[2].Y);
    uint8_t *w = malloc(h.sizes.W);
    cr_assert_not_null(w);
    cr_assert_eq(fp4lr_dev_download(ctx, w, ring.copy[2].W, h.sizes.W).code, FP4LR_OK);
    cr_expect_eq(memcmp(w, h.W, h.sizes.W), 0);
    cr_expect_eq(ring.copy[2].args.alpha, h.a.alpha);
    free(w);
    fp4lr_devproblem_ring_free(&ring);
    cr_expect_eq(ring.n, 0);
    fp4lr_pgen_free(&h);
    fp4lr_ctx_destroy(ctx);
}

/* --transform-slots, --lora-chunk, --lora-slots: parsed and checked; the plans follow them
 * (qwen-fc1-r128 fused beside the 3-slot ring with 16-rank chunks: 3 main stages, the s3_t3
 * kernel), a chunk above a shape's r skips that row with a note, and the sweep honours a
 * forced ring instead of its 2-slot default. */
Test(bench_cli, forced_transform_and_lowrank_rings)
{
    fp4lr_bench_opts o;
    char err[256];
    cr_expect_eq(PARSE(&o, err, "--transform-slots", "11"), 2);
    cr_expect(strstr(err, "expected 2 or 3 (2..5 with a prepared W, 2..10 with --tile-n 128)") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--transform-slots", "4"), 0, "4 and 5: the W-prepared ring's counts");
    cr_expect_eq(PARSE(&o, err, "--transform-slots", "8"), 0, "6..10: the ping-pong tile's ring");
    cr_expect_eq(PARSE(&o, err, "--lora-chunk", "24"), 2);
    cr_expect(strstr(err, "multiple of 16") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--lora-slots", "0"), 2);
    cr_assert_eq(PARSE(&o, err, "--shape", "qwen-fc1-r128", "--shape", "flux-qkv", "--format", "nvfp4", "--variants",
                       "dense,fused", "--transform-slots", "3", "--lora-chunk", "64", "--lora-slots", "1"),
                 0, "%s", err);
    cr_expect_eq(o.force_transform_slots, 3);
    cr_expect_eq(o.force_lora_chunk, 64);
    cr_expect_eq(o.force_lora_slots, 1);

    char dir[] = "/tmp/fp4lr-bench-kernels-XXXXXX";
    fake_kernels(dir, NULL, 0);
    cr_assert_eq(PARSE(&o, err, "--shape", "qwen-fc1-r128", "--shape", "flux-qkv", "--format", "nvfp4", "--variants",
                       "dense,fused", "--transform-slots", "3", "--lora-chunk", "64", "--lora-slots", "1",
                       "--w-prep", "off"),
                 0, "%s", err);
    fp4lr_bench_jobs j;
    make_jobs(&o, FP4LR_ARCH_SM90A, dir, &j);
    cr_assert_eq(j.n, 4);
    /* r = 128, one slot of 64 ranks (49152 B) beside 3 transform slots: 2 main stages */
    cr_expect_eq(j.row[1].budget.lora_chunk, 64);
    cr_expect_eq(j.row[1].budget.stages_lora, 1);
    cr_expect_eq(j.row[1].budget.stages_transform, 3);
    cr_expect_str_eq(j.job[1].plan.entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s2_t3");
    /* flux-qkv: r = 32 < 64 */
    cr_expect_eq(j.row[3].state, FP4LR_ROW_SKIPPED);
    cr_expect_str_eq(j.row[3].note, "--lora-chunk 64 exceeds r = 32");
    cr_expect_eq(j.row[2].budget.stages_transform, 3, "the dense row takes the forced ring too");
    fp4lr_bench_jobs_free(&j);

    cr_assert_eq(PARSE(&o, err, "--shape", "qwen-fc1-r128", "--format", "nvfp4", "--variants", "fused",
                       "--transform-slots", "3", "--lora-chunk", "16", "--w-prep", "off"),
                 0, "%s", err);
    make_jobs(&o, FP4LR_ARCH_SM90A, dir, &j);
    cr_assert_eq(j.n, 1);
    cr_expect_str_eq(j.job[0].plan.entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_t3");
    cr_expect_eq(j.row[0].budget.lora_chunk, 16);
    cr_expect_eq(j.row[0].budget.stages_lora, 2);
    fp4lr_bench_jobs_free(&j);

    /* the sweep keeps a forced ring: its points are 3-slot plans (1 and 2 stages, not built) */
    cr_assert_eq(PARSE(&o, err, "--shape", "flux-qkv", "--format", "nvfp4", "--variants", "dense", "--sweep-stages",
                       "--transform-slots", "3"),
                 0, "%s", err);
    make_jobs(&o, FP4LR_ARCH_SM90A, dir, &j);
    cr_assert_eq(j.n, 3);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(j.row[i].budget.stages_transform, 3, "job %d", i);
    fp4lr_bench_jobs_free(&j);
    remove_dir(dir);
}

Test(bench_cli, opts_scales)
{
    fp4lr_bench_opts o;
    char err[256];
    cr_assert_eq(PARSE(&o, err, "--shape", "flux-qkv"), 0, "%s", err);
    cr_expect_eq(o.small_scales, 0, "realistic scales by default");
    cr_assert_eq(PARSE(&o, err, "--scales", "small"), 0, "%s", err);
    cr_expect_eq(o.small_scales, 1);
    cr_assert_eq(PARSE(&o, err, "--scales", "realistic"), 0, "%s", err);
    cr_expect_eq(o.small_scales, 0);
    cr_expect_eq(PARSE(&o, err, "--scales", "full"), 2, "full scales overflow fp32 sums: not a benchmark input");
    cr_expect(strstr(err, "expected realistic or small") != NULL, "%s", err);
}

/* --w-prep inline: the dense and the fused rows run _x kernels. */
Test(bench_cli, w_prep_inline_takes_the_one_cta_rows)
{
    fp4lr_bench_opts o;
    char err[256];
    cr_assert_eq(PARSE(&o, err, "--shape", "flux-out", "--format", "nvfp4", "--variants", "dense,fused", "--w-prep",
                       "inline"),
                 0, "%s", err);
    cr_expect_eq(o.w_prep, FP4LR_WPREP_INLINE);
    char dir[] = "/tmp/fp4lr-bench-kernels-XXXXXX";
    fake_kernels(dir, NULL, 0);
    fp4lr_bench_jobs j;
    make_jobs(&o, FP4LR_ARCH_SM90A, dir, &j);
    cr_assert_eq(j.n, 2);
    cr_expect_str_eq(j.job[0].plan.entry, "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4");
    cr_expect_str_eq(j.job[1].plan.entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4");
    fp4lr_bench_jobs_free(&j);
    remove_dir(dir);
    cr_expect_neq(PARSE(&o, err, "--w-prep", "inlined"), 0);
    cr_expect(strstr(err, "inline") != NULL, "%s", err);
}

/* --swap: the one-CTA rows of a small-M shape, dense and fused, run the _yt kernels (AUTO does
 * too), the prepared ones (_w<n>_yt) with w_prep auto; off keeps the transform; an unknown
 * value names the choices. */
Test(bench_cli, swap_takes_the_dense_rows)
{
    fp4lr_bench_opts o;
    char err[256];
    char dir[] = "/tmp/fp4lr-bench-kernels-XXXXXX";
    fake_kernels(dir, NULL, 0);
    static char modes[][5] = {"auto", "on", "off"};
    for (int m = 0; m < 3; m++) {
        cr_assert_eq(PARSE(&o, err, "--shape", "sana-qkv", "--format", "nvfp4", "--variants", "dense,fused",
                           "--swap", modes[m]),
                     0, "%s", err);
        cr_expect_eq(o.swap, (fp4lr_swap)m);
        fp4lr_bench_jobs j;
        make_jobs(&o, FP4LR_ARCH_SM90A, dir, &j);
        cr_assert_eq(j.n, 2);
        cr_expect_str_eq(j.job[0].plan.entry, m == 2 ? "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_t3"
                                                     : "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5_yt",
                         "--swap %s", modes[m]);
        cr_expect_str_eq(j.job[1].plan.entry, m == 2 ? "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_t3"
                                                     : "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w4_yt",
                         "--swap %s", modes[m]);
        fp4lr_bench_jobs_free(&j);
    }
    remove_dir(dir);
    cr_expect_neq(PARSE(&o, err, "--swap", "yes"), 0);
    cr_expect(strstr(err, "expected auto, on or off") != NULL, "%s", err);
}

/* --swap on --w-prep on: the one-CTA rows run the prepared swapped kernels (_w<n>_yt), as the
 * preparation's programmatic dependents unless --pdl off; a bad --pdl names the choices. */
Test(bench_cli, swap_with_w_prep_on_takes_the_prepared_kernels)
{
    fp4lr_bench_opts o;
    char err[256];
    char dir[] = "/tmp/fp4lr-bench-kernels-XXXXXX";
    fake_kernels(dir, NULL, 0);
    static char modes[][5] = {"auto", "on", "off"};
    for (int m = 0; m < 3; m++) {
        cr_assert_eq(PARSE(&o, err, "--shape", "sana-qkv", "--format", "nvfp4", "--variants", "dense,fused",
                           "--swap", "on", "--w-prep", "on", "--pdl", modes[m]),
                     0, "%s", err);
        cr_expect_eq(o.pdl, (fp4lr_pdl)m);
        fp4lr_bench_jobs j;
        make_jobs(&o, FP4LR_ARCH_SM90A, dir, &j);
        cr_assert_eq(j.n, 2);
        cr_expect_str_eq(j.job[0].plan.entry, "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5_yt");
        cr_expect_str_eq(j.job[1].plan.entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w4_yt");
        cr_expect_eq(j.job[0].plan.pdl, m != 2, "--pdl %s", modes[m]);
        cr_expect_eq(j.job[1].plan.pdl, m != 2, "--pdl %s", modes[m]);
        fp4lr_bench_jobs_free(&j);
    }
    remove_dir(dir);
    cr_expect_neq(PARSE(&o, err, "--pdl", "yes"), 0);
    cr_expect(strstr(err, "expected auto, on or off") != NULL, "%s", err);
}

/* --stream: the legacy stream by default, own on request; anything else names the choices. */
Test(bench_cli, stream_is_legacy_or_own)
{
    fp4lr_bench_opts o;
    char err[256];
    cr_assert_eq(PARSE(&o, err, "--shape", "sana-qkv"), 0, "%s", err);
    cr_expect_eq(o.own_stream, 0);
    cr_assert_eq(PARSE(&o, err, "--shape", "sana-qkv", "--stream", "own"), 0, "%s", err);
    cr_expect_eq(o.own_stream, 1);
    cr_assert_eq(PARSE(&o, err, "--stream", "legacy"), 0, "%s", err);
    cr_expect_eq(o.own_stream, 0);
    cr_expect_neq(PARSE(&o, err, "--stream", "default"), 0);
    cr_expect(strstr(err, "expected legacy or own") != NULL, "%s", err);
    cr_expect_neq(PARSE(&o, err, "--stream"), 0);
}

/* --tile-n and the device's SM count: sana-out's one-CTA rows take the narrow swapped tile on
 * 132 SMs (AUTO) and with --tile-n 160, the wide one with --tile-n 256 or an unknown SM count;
 * a bad width names the choices. */
Test(bench_cli, tile_n_and_the_sm_count_pick_the_narrow_rows)
{
    fp4lr_bench_opts o;
    char err[256];
    char dir[] = "/tmp/fp4lr-bench-kernels-XXXXXX";
    fake_kernels(dir, NULL, 0);
    static struct {
        char tile_n[5];
        int sm_count;
        int narrow;
    } cases[] = {{"auto", 132, 1}, {"auto", 0, 0}, {"160", 0, 1}, {"256", 132, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cr_assert_eq(PARSE(&o, err, "--shape", "sana-out", "--format", "nvfp4", "--variants", "dense,fused",
                           "--tile-n", cases[c].tile_n),
                     0, "%s", err);
        fp4lr_bench_target t = {.arch = FP4LR_ARCH_SM90A, .sm_count = cases[c].sm_count, .kernel_dir = dir};
        fp4lr_bench_jobs j;
        fp4lr_status st = fp4lr_bench_jobs_make(&o, &t, &j);
        cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
        cr_assert_eq(j.n, 2);
        cr_expect_str_eq(j.job[0].plan.entry, cases[c].narrow ? "fp4lr_sm90a_nvfp4_dense_m128n160k128_c1_s4_w5_yt"
                                                              : "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5_yt",
                         "--tile-n %s, %d SMs", cases[c].tile_n, cases[c].sm_count);
        cr_expect_str_eq(j.job[1].plan.entry, cases[c].narrow ? "fp4lr_sm90a_nvfp4_fused_m128n160k128_c1_s4_w5_yt"
                                                              : "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w4_yt",
                         "--tile-n %s, %d SMs", cases[c].tile_n, cases[c].sm_count);
        fp4lr_bench_jobs_free(&j);
    }
    remove_dir(dir);
    cr_expect_neq(PARSE(&o, err, "--tile-n", "192"), 0);
    cr_expect(strstr(err, "expected auto, 256, 160 or 128") != NULL, "%s", err);
}

/* --graph: every sm_90a row is planned as a captured graph may launch it (whole tiles, W never
 * converted in the kernel); without it AUTO converts in the kernel on the large shapes; the
 * record's settings say which. */
Test(bench_cli, graph_plans_the_capturable_rows)
{
    fp4lr_bench_opts o;
    char err[256];
    char dir[] = "/tmp/fp4lr-bench-kernels-XXXXXX";
    fake_kernels(dir, NULL, 0);
    for (int g = 0; g < 2; g++) {
        if (g)
            cr_assert_eq(PARSE(&o, err, "--shape", "flux-qkv", "--format", "nvfp4", "--variants", "dense,fused,dense-c2",
                               "--graph"), 0, "%s", err);
        else
            cr_assert_eq(PARSE(&o, err, "--shape", "flux-qkv", "--format", "nvfp4", "--variants", "dense,fused,dense-c2"),
                         0, "%s", err);
        cr_expect_eq(o.graph, g);
        fp4lr_bench_jobs j;
        make_jobs(&o, FP4LR_ARCH_SM90A, dir, &j);
        cr_assert_eq(j.n, 3);
        for (int i = 0; i < j.n; i++) {
            const fp4lr_plan *pl = &j.job[i].plan;
            if (g) {
                cr_expect_eq(pl->schedule, FP4LR_SCHEDULE_DP, "%s", pl->entry);
                cr_expect(!pl->w_inline, "%s", pl->entry);
            }
        }
        if (!g)
            cr_expect(j.job[0].plan.w_inline, "AUTO converts in the kernel here: %s", j.job[0].plan.entry);
        fp4lr_bench_jobs_free(&j);
    }
    remove_dir(dir);
}
