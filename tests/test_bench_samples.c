/* fp4lr-bench --samples (bench/samples.h): one CSV line per timed launch, with the
 * round, the launch's place in it, the input copy it read (the timer's numbering,
 * warm-up included), its time and its start (the round's host time plus the launches
 * before it); the option's checks; on a GPU, the file of a real run against the
 * table's pooled statistics. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_cli.h"
#include "results.h"
#include "samples.h"
#include "support_cmd.h"
#include "support_gpu.h"

/* The lines of f after rewinding, into buf; returns the number of lines. */
static int read_back(FILE *f, char *buf, size_t cap)
{
    rewind(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    int lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += buf[i] == '\n';
    return lines;
}

/* The field-th comma-separated field (0-based) of the line-th line (0-based) of buf. */
static const char *field_of(const char *buf, int line, int field, char *out, size_t cap)
{
    const char *p = buf;
    for (int l = 0; l < line && p; l++)
        p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
    cr_assert(p, "no line %d", line);
    for (int f = 0; f < field && p; f++) {
        const char *c = strchr(p, ','), *nl = strchr(p, '\n');
        p = c && (!nl || c < nl) ? c + 1 : NULL;
    }
    cr_assert(p, "no field %d on line %d", field, line);
    size_t k = strcspn(p, ",\n");
    cr_assert(k < cap);
    memcpy(out, p, k);
    out[k] = 0;
    return out;
}

static fp4lr_bench_row a_row(void)
{
    fp4lr_bench_row row;
    fp4lr_bench_row_init(&row, "flux-out", 1, 4608, 3072, 3072, "nvfp4", "fp4lr-nvfp4");
    return row;
}

/* The lines fp4lr_samples_row writes for row into buf; returns their count. */
static int samples_of(const fp4lr_bench_row *row, const double *ms, int rounds, int iters, int warmup, int copies,
                      const double *t0, char *buf, size_t cap)
{
    FILE *f = tmpfile();
    cr_assert(f);
    fp4lr_samples_row(f, row, ms, rounds, iters, warmup, copies, t0);
    const int lines = read_back(f, buf, cap);
    fclose(f);
    return lines;
}

Test(bench_samples, header_names_every_column)
{
    FILE *f = tmpfile();
    cr_assert(f);
    fp4lr_samples_header(f);
    char buf[512];
    cr_expect_eq(read_back(f, buf, sizeof buf), 1);
    cr_expect_str_eq(buf, "shape,M,N,K,r,format,variant,entry,force_stages,round,launch,copy,ms,start_unix_s,"
                          "offset_ms\n");
    fclose(f);
}

Test(bench_samples, one_line_per_launch_with_copy_offset_and_start)
{
    fp4lr_bench_row row = a_row();
    const double ms[] = {1.0, 2.0, 4.0, 0.5, 0.25, 0.125}; /* 2 rounds x 3 launches */
    const double t0[] = {1000.0, 2000.0};
    static char buf[4096];
    cr_assert_eq(samples_of(&row, ms, 2, 3, 5, 4, t0, buf, sizeof buf), 6);
    /* {CSV line, field, expected text} and {line, field, expected value, tolerance}:
     * round 0's launches 0..2 read copies (5 + i) % 4 = 1, 2, 3, the third starting 3 ms into
     * the round; round 1 starts over (its own t0, offset 0, copies again from the warm-up on) */
    static const struct { int line, field; const char *text; } texts[] = {
        {0, 0, "flux-out"}, {0, 6, "fp4lr-nvfp4"}, {0, 7, ""} /* no plan: no entry */,
        {2, 9, "0"},        {2, 10, "2"},          {0, 11, "1"},
        {2, 11, "3"},       {3, 9, "1"},           {3, 10, "0"},
        {3, 11, "1"}};
    static const struct { int line, field; double value, tol; } values[] = {
        {2, 12, 4.0, 1e-12},      {2, 14, 3.0, 1e-9},   {2, 13, 1000.003, 1e-6},
        {3, 13, 2000.0, 1e-6},    {5, 14, 0.75, 1e-9},  {5, 12, 0.125, 1e-12}};
    char v[64];
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        cr_expect_str_eq(field_of(buf, texts[i].line, texts[i].field, v, sizeof v), texts[i].text,
                         "line %d field %d", texts[i].line, texts[i].field);
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        cr_expect_float_eq(atof(field_of(buf, values[i].line, values[i].field, v, sizeof v)), values[i].value,
                           values[i].tol, "line %d field %d", values[i].line, values[i].field);
}

Test(bench_samples, one_copy_and_unknown_start)
{
    fp4lr_bench_row row = a_row();
    snprintf(row.entry, sizeof row.entry, "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4");
    row.has_plan = 1;
    const double ms[] = {1.0, 1.0};
    static char buf[2048];
    cr_assert_eq(samples_of(&row, ms, 1, 2, 3, 1, NULL, buf, sizeof buf), 2);
    char v[128];
    cr_expect_str_eq(field_of(buf, 1, 7, v, sizeof v), "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4");
    cr_expect_str_eq(field_of(buf, 1, 11, v, sizeof v), "0", "one copy: always copy 0");
    cr_expect_str_eq(field_of(buf, 1, 13, v, sizeof v), "", "no round time: the start is left empty");
    cr_expect_float_eq(atof(field_of(buf, 1, 14, v, sizeof v)), 1.0, 1e-12);
}

Test(bench_samples, host_clock_is_unix_time)
{
    const double t = fp4lr_samples_now();
    cr_expect(t > 1.7e9 && t < 4.1e9, "%f", t);
}

Test(bench_samples, option_parses_and_refuses_the_csv_file)
{
    fp4lr_bench_opts o;
    char err[512];
    char *ok[] = {"fp4lr-bench", "--samples", "s.csv", "--csv", "r.csv"};
    cr_assert_eq(fp4lr_bench_opts_parse(5, ok, &o, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(o.samples, "s.csv");
    char *same[] = {"fp4lr-bench", "--samples", "r.csv", "--csv", "r.csv"};
    cr_expect_neq(fp4lr_bench_opts_parse(5, same, &o, err, sizeof err), 0);
    cr_expect(strstr(err, "--csv and --samples name the same file r.csv") != NULL, "%s", err);
    char *missing[] = {"fp4lr-bench", "--samples"};
    cr_expect_neq(fp4lr_bench_opts_parse(2, missing, &o, err, sizeof err), 0);
    cr_expect(strstr(err, "--samples") != NULL, "%s", err);
    char *none[] = {"fp4lr-bench"};
    cr_assert_eq(fp4lr_bench_opts_parse(1, none, &o, err, sizeof err), 0, "%s", err);
    cr_expect_null(o.samples, "no file unless asked");
}

Test(bench_samples, unwritable_path_is_refused_before_the_run)
{
    static char out[1 << 14];
    int rc = tsupport_run_bin("fp4lr-bench", "--quick --no-json --shape flux-out --samples /nonexistent-dir/s.csv", out,
                              sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect(strstr(out, "--samples /nonexistent-dir/s.csv: /nonexistent-dir is not a directory") != NULL, "%s", out);
    rc = tsupport_run_bin("fp4lr-bench", "--help", out, sizeof out);
    cr_expect_eq(rc, 0);
    cr_expect(strstr(out, "--samples FILE") != NULL, "%s", out);
}

/* A real run: the file holds rounds x iters lines per timed row, and its times pool to
 * the table's median (the file is the same launches the table summarises). */
Test(bench_samples, gpu_run_writes_every_launch, .timeout = 300)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
    fp4lr_ctx_destroy(ctx);
    char path[] = "/tmp/fp4lr-samples-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    char csv[] = "/tmp/fp4lr-samples-csv-XXXXXX";
    int fd2 = mkstemp(csv);
    cr_assert(fd2 >= 0);
    static char out[1 << 16];
    char args[512];
    snprintf(args, sizeof args,
             "--no-json --quick --rounds 2 --iters 7 --shape flux-out --format nvfp4 --variants dense,peers "
             "--samples %s --csv %s",
             path, csv);
    int rc = tsupport_run_bin("fp4lr-bench", args, out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    FILE *f = fopen(path, "r");
    cr_assert(f);
    static char buf[1 << 16];
    const int lines = read_back(f, buf, sizeof buf);
    fclose(f);
    /* header + (fp4lr-nvfp4, cublas-bf16, cublas-fp8) x 2 rounds x 7 launches */
    cr_expect_eq(lines, 1 + 3 * 14, "%s", buf);
    double ms[14];
    int n = 0;
    for (int l = 1; l < lines; l++) {
        char v[64];
        if (strcmp(field_of(buf, l, 6, v, sizeof v), "fp4lr-nvfp4"))
            continue;
        cr_assert(n < 14);
        ms[n] = atof(field_of(buf, l, 12, v, sizeof v));
        cr_expect(ms[n] > 0 && isfinite(ms[n]), "%s", v);
        cr_expect(atof(field_of(buf, l, 13, v, sizeof v)) > 1.7e9, "a start time");
        n++;
    }
    cr_assert_eq(n, 14);
    fp4lr_timing t;
    fp4lr_timing_of(ms, n, &t);
    /* the CSV row's median_ms (0-based column 10; the variant is column 7) */
    FILE *g = fopen(csv, "r");
    cr_assert(g);
    static char rows[1 << 14];
    const int rl = read_back(g, rows, sizeof rows);
    fclose(g);
    int matched = 0;
    for (int l = 1; l < rl; l++) {
        char v[64];
        if (!strcmp(field_of(rows, l, 7, v, sizeof v), "fp4lr-nvfp4")) {
            cr_expect_float_eq(atof(field_of(rows, l, 10, v, sizeof v)), t.median_ms, 1e-5 * t.median_ms);
            matched = 1;
        }
    }
    cr_expect(matched, "%s", rows);
    close(fd);
    close(fd2);
    unlink(path);
    unlink(csv);
}
