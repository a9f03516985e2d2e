/* The benchmark's rounds and summaries (bench/timer.h, bench/results.h): pooled
 * timing statistics, per-round medians and the spread of the per-round ratios
 * against cuBLAS bf16, the fused geomeans' exclusion of rank 0, the geomeans
 * over the M, N, K every variant shares, the table's spread and timed-output
 * cells, and --rounds; on a GPU, fp4lr-bench's rounds and its check of the timed
 * output, which fails on a planted fault, and --preheat. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_cli.h"
#include "results.h"
#include "support_cmd.h"
#include "support_gpu.h"
#include "timer.h"

/* A row of `variant` (kind v, rank r) on M = N = K = mnk, timed in `rounds` rounds
 * of 3 launches, round k at ms[k] each. */
static fp4lr_bench_row row_of(const char *variant, fp4lr_bench_variant v, int64_t mnk, int64_t r, const double *ms,
                              int rounds)
{
    fp4lr_bench_row row;
    const int peer = v == FP4LR_BENCH_PEERS;
    fp4lr_bench_row_init(&row, "s", 1, mnk, mnk, mnk, peer ? (strstr(variant, "bf16") ? "bf16" : "e4m3") : "nvfp4",
                         variant);
    row.kind = v;
    row.r = r;
    double all[3 * FP4LR_BENCH_MAX_ROUNDS];
    for (int k = 0; k < rounds; k++)
        for (int j = 0; j < 3; j++)
            all[3 * k + j] = ms[k];
    cr_assert_eq(fp4lr_bench_row_timed_rounds(&row, all, rounds, 3, 1).code, FP4LR_OK);
    return row;
}

Test(bench_rounds, timing_statistics_of_samples)
{
    const double odd[] = {5, 1, 4, 2, 3};
    fp4lr_timing t;
    fp4lr_timing_of(odd, 5, &t);
    cr_expect_eq(t.reps, 5);
    cr_expect_float_eq(t.median_ms, 3.0, 0);
    cr_expect_float_eq(t.min_ms, 1.0, 0);
    cr_expect_float_eq(t.max_ms, 5.0, 0);
    cr_expect_eq(odd[0], 5, "the samples are left as they are");
    const double even[] = {4, 1, 3, 2};
    fp4lr_timing_of(even, 4, &t);
    cr_expect_float_eq(t.median_ms, 2.5, 1e-15, "the mean of the middle two");
    double ten[10];
    for (int i = 0; i < 10; i++)
        ten[i] = 10 - i;
    fp4lr_timing_of(ten, 10, &t);
    cr_expect_float_eq(t.p10_ms, 2.0, 0);
    cr_expect_float_eq(t.p90_ms, 10.0, 0);
}

Test(bench_rounds, pooled_time_and_round_medians)
{
    /* round 0: 1 1 1, round 1: 2 2 2, round 2: 1 1 9: the pooled median is 1, the rounds' 1, 2, 1 */
    const double ms[] = {1, 1, 1, 2, 2, 2, 1, 9, 1};
    fp4lr_bench_row row;
    fp4lr_bench_row_init(&row, "s", 1, 64, 64, 64, "nvfp4", "fp4lr-nvfp4");
    cr_assert_eq(fp4lr_bench_row_timed_rounds(&row, ms, 3, 3, 4).code, FP4LR_OK);
    cr_expect_eq(row.state, FP4LR_ROW_OK);
    cr_expect_eq(row.rounds, 3);
    cr_expect_eq(row.t.reps, 9);
    cr_expect_eq(row.copies, 4);
    cr_expect_float_eq(row.t.median_ms, 1.0, 0);
    cr_expect_float_eq(row.t.max_ms, 9.0, 0);
    cr_expect_float_eq(row.round_median_ms[0], 1.0, 0);
    cr_expect_float_eq(row.round_median_ms[1], 2.0, 0);
    cr_expect_float_eq(row.round_median_ms[2], 1.0, 0);
    cr_expect(row.tflops > 0);
    fp4lr_status st = fp4lr_bench_row_timed_rounds(&row, ms, 0, 3, 1);
    cr_expect_eq(st.code, FP4LR_E_INVALID);
    cr_expect_str_eq(st.rule, "BENCH_ROUNDS");
    cr_expect_eq(fp4lr_bench_row_timed_rounds(&row, ms, FP4LR_BENCH_MAX_ROUNDS + 1, 1, 1).code, FP4LR_E_INVALID);
    cr_expect_eq(fp4lr_bench_row_timed_rounds(&row, ms, 1, 0, 1).code, FP4LR_E_INVALID);
}

/* The host's time per launch: the median of the rounds' (0 or NaN = unknown, skipped), and
 * "host-bound" from FP4LR_BENCH_HOST_BOUND of the median launch on. */
Test(bench_rounds, host_time_per_launch_and_the_host_bound_flag)
{
    const double ms[] = {1, 1, 1, 1};
    fp4lr_bench_row row;
    fp4lr_bench_row_init(&row, "s", 1, 64, 64, 64, "nvfp4", "fp4lr-nvfp4");
    cr_assert_eq(fp4lr_bench_row_timed_rounds(&row, ms, 2, 2, 1).code, FP4LR_OK);
    cr_expect_float_eq(row.t.host_ms, 0.0, 0, "the pooled device times know no host time");
    const double light[] = {0.2, 0.0}, heavy[] = {0.95, 0.3, 0.92}, first[] = {3.0, 0.1, 0.1},
                 none[] = {0.0, 0.0}, edge[] = {0.9, NAN};
    cr_expect_eq(fp4lr_bench_row_host(&row, light, 2), 0);
    cr_expect_float_eq(row.t.host_ms, 0.2, 0, "the unknown round skipped");
    cr_expect_eq(fp4lr_bench_row_host(&row, heavy, 3), 1, "0.92 of a 1 ms median");
    cr_expect_float_eq(row.t.host_ms, 0.92, 0, "the rounds' median");
    cr_expect_eq(fp4lr_bench_row_host(&row, first, 3), 0, "one slow first round is not host-bound");
    cr_expect_float_eq(row.t.host_ms, 0.1, 0);
    cr_expect_eq(fp4lr_bench_row_host(&row, edge, 2), 1, "exactly the bound; a NaN round skipped");
    cr_expect_eq(fp4lr_bench_row_host(&row, none, 2), 0, "unknown is not host-bound");
    cr_expect_float_eq(row.t.host_ms, 0.0, 0);
}

Test(bench_rounds, per_round_ratio_spread)
{
    const double peer[] = {1, 2, 1}, mine[] = {1, 1, 2}, two[] = {1, 1};
    fp4lr_bench_row rows[] = {
        row_of("fp4lr-nvfp4", FP4LR_BENCH_DENSE, 64, 0, mine, 3),
        row_of("cublas-bf16", FP4LR_BENCH_PEERS, 64, 0, peer, 3),
        row_of("fp4lr-nvfp4-c2", FP4LR_BENCH_DENSE_C2, 64, 0, two, 2), /* other round count: no spread */
    };
    fp4lr_bench_set_ratios(rows, 3);
    /* pooled medians 1 and 1: 1.0; per round 1/1, 2/1, 1/2 */
    cr_expect_float_eq(rows[0].ratio_bf16, 1.0, 1e-12);
    cr_expect_float_eq(rows[0].ratio_bf16_lo, 0.5, 1e-12);
    cr_expect_float_eq(rows[0].ratio_bf16_hi, 2.0, 1e-12);
    cr_expect_float_eq(rows[1].ratio_bf16_lo, 1.0, 1e-12, "the peer against itself");
    cr_expect(isnan(rows[2].ratio_bf16_lo) && isnan(rows[2].ratio_bf16_hi));
    cr_expect_float_eq(rows[2].ratio_bf16, 1.0, 1e-12, "the pooled ratio still");

    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    fp4lr_results_table_row(m, &rows[0]);
    fp4lr_results_table_row(m, &rows[2]);
    fclose(m);
    cr_expect(strstr(text, " 1.000x 0.500-2.000 ") != NULL, "%s", text);
    cr_expect(strstr(text, " 1.000x           - ") != NULL, "%s", text);
    free(text);

    /* one round: no spread */
    const double one[] = {1};
    fp4lr_bench_row single[] = {
        row_of("fp4lr-nvfp4", FP4LR_BENCH_DENSE, 64, 0, one, 1),
        row_of("cublas-bf16", FP4LR_BENCH_PEERS, 64, 0, one, 1),
    };
    fp4lr_bench_set_ratios(single, 2);
    cr_expect(isnan(single[0].ratio_bf16_lo));
}

Test(bench_rounds, fused_geomeans_leave_rank_zero_out)
{
    const double one[] = {1}, half[] = {0.5}, quarter[] = {0.25};
    fp4lr_bench_row rows[] = {
        row_of("fp4lr-nvfp4-fused", FP4LR_BENCH_FUSED, 64, 32, half, 1),  /* 2x */
        row_of("fp4lr-nvfp4-fused", FP4LR_BENCH_FUSED, 128, 0, quarter, 1), /* 4x, r = 0: not counted */
        row_of("cublas-bf16", FP4LR_BENCH_PEERS, 64, 0, one, 1),
        row_of("cublas-bf16", FP4LR_BENCH_PEERS, 128, 0, one, 1),
    };
    fp4lr_bench_set_ratios(rows, 4);
    cr_expect_float_eq(rows[1].ratio_bf16, 4.0, 1e-12, "the row keeps its ratio");
    fp4lr_bench_geomean g = fp4lr_bench_geomean_of(rows, 4, "fp4lr-nvfp4-fused");
    cr_expect_float_eq(g.value, 2.0, 1e-12);
    cr_expect_eq(g.shapes, 1);
    cr_expect_eq(g.missing, 0, "a left-out row is not missing");
    /* the dense kernel's r = 0 rows count as ever */
    rows[1].kind = FP4LR_BENCH_DENSE;
    snprintf(rows[1].variant, sizeof rows[1].variant, "fp4lr-nvfp4");
    g = fp4lr_bench_geomean_of(rows, 4, "fp4lr-nvfp4");
    cr_expect_float_eq(g.value, 4.0, 1e-12);
}

Test(bench_rounds, geomeans_over_the_common_shapes)
{
    /* nvfp4 on M, N, K 64, 128, 256; mxfp4 on 64 and 128 (256 skipped); fp8 on all */
    const double one[] = {1}, half[] = {0.5}, quarter[] = {0.25}, two[] = {2};
    fp4lr_bench_row rows[] = {
        row_of("fp4lr-nvfp4", FP4LR_BENCH_DENSE, 64, 0, half, 1),    /* 2 */
        row_of("fp4lr-nvfp4", FP4LR_BENCH_DENSE, 128, 0, one, 1),    /* 1 */
        row_of("fp4lr-nvfp4", FP4LR_BENCH_DENSE, 256, 0, quarter, 1), /* 4 */
        row_of("fp4lr-mxfp4", FP4LR_BENCH_DENSE, 64, 0, one, 1),     /* 1 */
        row_of("fp4lr-mxfp4", FP4LR_BENCH_DENSE, 128, 0, one, 1),    /* 1 */
        row_of("fp4lr-mxfp4", FP4LR_BENCH_DENSE, 256, 0, one, 1),
        row_of("cublas-bf16", FP4LR_BENCH_PEERS, 64, 0, one, 1),
        row_of("cublas-bf16", FP4LR_BENCH_PEERS, 128, 0, one, 1),
        row_of("cublas-bf16", FP4LR_BENCH_PEERS, 256, 0, one, 1),
        row_of("cublas-fp8", FP4LR_BENCH_PEERS, 64, 0, two, 1),
    };
    rows[5].state = FP4LR_ROW_SKIPPED;
    fp4lr_bench_set_ratios(rows, 10);
    fp4lr_bench_summary sum;
    fp4lr_bench_summarize(rows, 10, &sum);
    cr_assert_eq(sum.n_bf16, 3, "nvfp4, mxfp4, fp8");
    cr_expect_float_eq(sum.vs_bf16[0].value, 2.0, 1e-12, "(2 * 1 * 4)^(1/3)");
    cr_expect_eq(sum.shapes_common, 1, "only M, N, K = 64 has all three");
    cr_assert_eq(sum.n_common, 3);
    cr_expect_float_eq(sum.common[0].value, 2.0, 1e-12);
    cr_expect_eq(sum.common[0].shapes, 1);
    cr_expect_float_eq(sum.common[1].value, 1.0, 1e-12);
    cr_expect_float_eq(sum.common[2].value, 0.5, 1e-12);

    /* without the fp8 row the common set is 64 and 128: nvfp4 sqrt(2), mxfp4 1 */
    fp4lr_bench_summarize(rows, 9, &sum);
    cr_expect_eq(sum.shapes_common, 2);
    cr_assert_eq(sum.n_common, 2);
    cr_expect_float_eq(sum.common[0].value, sqrt(2.0), 1e-12);
    cr_expect_float_eq(sum.common[1].value, 1.0, 1e-12);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    fp4lr_bench_summary_print(m, &sum);
    fclose(m);
    cr_expect(strstr(text, "over only the 2 large M, N, K every variant above has") != NULL, "%s", text);
    cr_expect(strstr(text, "  fp4lr-nvfp4            1.414x  (2 shapes)\n") != NULL, "%s", text);
    free(text);

    /* one variant alone: nothing to compare, no common block */
    fp4lr_bench_summarize(rows, 3, &sum);
    cr_expect_eq(sum.n_common, 0);
}

Test(bench_rounds, table_says_when_the_timed_output_was_wrong)
{
    const double one[] = {1};
    fp4lr_bench_row row = row_of("fp4lr-nvfp4", FP4LR_BENCH_DENSE, 64, 0, one, 1);
    row.validated = 1, row.pass = 1, row.max_err_over_mag = 0.001;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    row.timed_check = 1;
    fp4lr_results_table_row(m, &row);
    row.timed_check = 0;
    row.state = FP4LR_ROW_INVALID;
    fp4lr_results_table_row(m, &row);
    fclose(m);
    cr_expect(strstr(text, "PASS 0.001 +timed\n") != NULL, "%s", text);
    cr_expect(strstr(text, "FAIL 0.001 (timed output wrong)\n") != NULL, "%s", text);
    free(text);
}

Test(bench_rounds, rounds_option)
{
    fp4lr_bench_opts o;
    char err[512];
    char *def[] = {"fp4lr-bench", NULL};
    cr_assert_eq(fp4lr_bench_opts_parse(1, def, &o, err, sizeof err), 0, "%s", err);
    cr_expect_eq(o.rounds, FP4LR_BENCH_ROUNDS_DEFAULT);
    char *quick[] = {"fp4lr-bench", "--quick", NULL};
    cr_assert_eq(fp4lr_bench_opts_parse(2, quick, &o, err, sizeof err), 0, "%s", err);
    cr_expect_eq(o.rounds, 1);
    char *five[] = {"fp4lr-bench", "--rounds", "5", NULL};
    cr_assert_eq(fp4lr_bench_opts_parse(3, five, &o, err, sizeof err), 0, "%s", err);
    cr_expect_eq(o.rounds, 5);
    const char *bad[] = {"0", "9", "x", "-1"};
    for (int i = 0; i < 4; i++) {
        char *argv[] = {"fp4lr-bench", "--rounds", (char *)bad[i], NULL};
        cr_expect_neq(fp4lr_bench_opts_parse(3, argv, &o, err, sizeof err), 0, "%s", bad[i]);
        cr_expect(strstr(err, "--rounds") != NULL, "%s", err);
    }
}

Test(bench_rounds, plant_fault_option)
{
    fp4lr_bench_opts o;
    char err[512];
    char *argv[] = {"fp4lr-bench", "--json", "--plant-fault", "timed", NULL};
    cr_assert_eq(fp4lr_bench_opts_parse(4, argv, &o, err, sizeof err), 0, "%s", err);
    cr_expect(o.plant_timed_fault);
    cr_expect_eq(o.json, 0, "a self-test writes no record");
    char *bad[] = {"fp4lr-bench", "--plant-fault", "output", NULL};
    cr_expect_neq(fp4lr_bench_opts_parse(3, bad, &o, err, sizeof err), 0);
    cr_expect(strstr(err, "--plant-fault output") != NULL, "%s", err);
}

/* fp4lr-bench end to end: two rounds, the rows' per-round spread, the check of the timed
 * output - and that check failing the run when one output of the timed launches is wrong. */
Test(bench_rounds, gpu_rounds_and_the_timed_output_check, .timeout = 300)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
    fp4lr_ctx_destroy(ctx);
    static char out[1 << 16];
    const char *args = "--no-json --quick --rounds 2 --shape flux-out --format nvfp4 --variants dense,peers";
    int rc = tsupport_run_bin("fp4lr-bench", args, out, sizeof out);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "(round 2/2)") != NULL, "%s", out);
    cr_expect(strstr(out, "+timed") != NULL, "%s", out);
    cr_expect(strstr(out, "method: 2 round(s)") != NULL, "%s", out);
    /* the table row: shape M N K r variant median host_us TFLOP/s vs_bf16 lo-hi ... */
    double lo = 0, hi = 0, ratio = 0, med = 0, host = 0;
    int found = 0;
    for (const char *line = out; line && *line && !found; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char shape[64], variant[64];
        double tf;
        long long m, n, k, r;
        found = sscanf(line, "%63s %lld %lld %lld %lld %63s %lf %lf %lf %lfx %lf-%lf", shape, &m, &n, &k, &r, variant,
                       &med, &host, &tf, &ratio, &lo, &hi) == 12 &&
                !strcmp(shape, "flux-out") && !strcmp(variant, "fp4lr-nvfp4");
    }
    cr_assert(found, "no fp4lr-nvfp4 row with a spread: %s", out);
    cr_expect(lo > 0 && lo <= hi && ratio > 0, "%g %g %g", ratio, lo, hi);
    /* the host's enqueue time per launch (µs): measured, and below a second */
    cr_expect(host > 0 && host < 1e6, "host %g us (median %g ms)", host, med);

    char planted[512];
    snprintf(planted, sizeof planted, "%s --plant-fault timed", args);
    rc = tsupport_run_bin("fp4lr-bench", planted, out, sizeof out);
    cr_expect_eq(rc, 1, "%s", out);
    cr_expect(strstr(out, "the output of the timed launches is WRONG") != NULL, "%s", out);
    cr_expect(strstr(out, "(timed output wrong)") != NULL, "%s", out);
}

static double wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* --preheat runs the shape's first row for the time asked before its first timed round: the
 * run takes that much longer than the same run without it (the runs without it go first and
 * last, and the shorter counts: a process's first CUDA start on a machine is slower), never
 * less than the preheat itself, says so in its method line, and its row is still checked.
 * (An H100, a18dfc1: 2.55 s with 2000 ms, 0.80 s without, the latter the machine's first run.) */
Test(bench_rounds, gpu_preheat_runs_before_the_first_round, .timeout = 300)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
    fp4lr_ctx_destroy(ctx);
    static char out[1 << 16];
    const char *base = "--no-json --quick --rounds 1 --shape flux-out --format nvfp4 --variants dense --no-peers";
    char args[512];
    double took[3];
    const int ms[3] = {0, 2000, 0};
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "%s --preheat %d", base, ms[i]);
        const double t0 = wall_s();
        int rc = tsupport_run_bin("fp4lr-bench", args, out, sizeof out);
        took[i] = wall_s() - t0;
        cr_expect_eq(rc, 0, "%s", out);
        char want[64];
        snprintf(want, sizeof want, "after %d ms of the shape's first row untimed", ms[i]);
        cr_expect(strstr(out, want) != NULL, "no '%s': %s", want, out);
        cr_expect(strstr(out, "+timed") != NULL, "%s", out);
    }
    const double without = took[0] < took[2] ? took[0] : took[2];
    cr_expect(took[1] >= 2.0, "--preheat 2000 took %.2f s", took[1]);
    cr_expect(took[1] - without >= 1.8 && took[1] - without < 4.0,
              "--preheat 2000 took %.2f s, --preheat 0 %.2f / %.2f s: 2 s apart expected", took[1], took[0], took[2]);
    fprintf(stderr, "bench preheat: %.2f s with 2000 ms, %.2f / %.2f s without\n", took[1], took[0], took[2]);
}
