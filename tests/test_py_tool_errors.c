/* tools/results_table.py, plots.py, tline_summary.py, ab_compare.py on bad input: a file that
 * does not exist or is a directory, what is not the format they read, an empty or header-only
 * CSV, a truncated row, an --index out of range, an unwritable output directory.  Each must
 * end with one line naming the file and what is wrong and exit status 2 (unusable input),
 * never a Python traceback; beside each, good input in the same directory still works. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support_cmd.h"

static char dir[64];
static char out[16384];

/* One fp4lr-bench record (JSON Lines): one ok row compared against cuBLAS. */
static const char RECORD[] =
    "{\"device\": {\"name\": \"Stub GPU\", \"sm_count\": 1, \"driver_version\": 1}, \"time_utc\": \"T\", "
    "\"command\": \"fp4lr-bench\", \"results\": [{\"state\": \"ok\", \"shape\": \"stub-shape\", \"M\": 1, \"N\": 2, "
    "\"K\": 3, \"variant\": \"fp4lr-nvfp4\", \"time_ms\": {\"median\": 1.0}, \"tflops\": 2.0, "
    "\"ratio_vs_cublas_bf16\": 1.5}]}\n";

static const char AB_HEADER[] = "shape,variant,state,tflops,pass,validated,note\n";

static void put(const char *name, const char *text)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* Runs a shell command (every %s in fmt is the scratch directory); it must succeed. */
static void sh(const char *fmt)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, fmt, dir, dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* Runs tools/<script> with args (every %s in fmt is the scratch directory) and returns its status. */
static int tool(const char *script, const char *fmt)
{
    char args[512];
    snprintf(args, sizeof args, fmt, dir, dir, dir, dir);
    return tsupport_run_py_tool(script, args, out, sizeof out);
}

/* The output holds `want` (with %s the scratch directory) and no traceback. */
static void says(const char *want)
{
    char text[512];
    snprintf(text, sizeof text, want, dir);
    cr_expect_not_null(strstr(out, text), "expected \"%s\" in: %s", text, out);
    cr_expect_null(strstr(out, "Traceback"), "a traceback: %s", out);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/fp4lr-pyerr.XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    put("good.jsonl", RECORD);
    put("bad.jsonl", "{\"device\": \n");
    put("array.jsonl", "[{\"device\": {}}, {\"results\": []}]\n");
    put("results.csv", "shape,variant,state\nflux-qkv,fp4lr-nvfp4,ok\n");
    put("empty.csv", "");
    sh("mkdir %s/adir");
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(py_tool_errors, .init = setup, .fini = teardown);

Test(py_tool_errors, results_table_refuses_a_missing_file_and_a_directory)
{
    cr_expect_eq(tool("results_table.py", "%s/missing.jsonl"), 2, "%s", out);
    says("results_table: %s/missing.jsonl: cannot read (No such file or directory)");
    cr_expect_eq(tool("results_table.py", "%s/adir"), 2, "%s", out);
    says("results_table: %s/adir: cannot read (Is a directory)");
}

Test(py_tool_errors, results_table_refuses_what_is_not_json_lines)
{
    cr_expect_eq(tool("results_table.py", "%s/good.jsonl"), 0, "%s", out);
    says("| stub-shape | 1 | 2 | 3 | 0 | fp4lr-nvfp4 | 1.0000 | 2.0 | 1.500 | - |");
    cr_expect_eq(tool("results_table.py", "%s/bad.jsonl"), 2, "%s", out);
    says("results_table: %s/bad.jsonl: line 1 is not JSON");
    cr_expect_eq(tool("results_table.py", "%s/array.jsonl"), 2, "%s", out);
    says("results_table: %s/array.jsonl: line 1 is a JSON list, not a record");
    cr_expect_eq(tool("results_table.py", "%s/results.csv"), 2, "%s", out);
    says("results_table: %s/results.csv: line 1 is not JSON");
    cr_expect_eq(tool("results_table.py", "%s/empty.csv"), 2, "%s", out);
    says("results_table: %s/empty.csv: no records");
}

/* Closed days' records are kept gzipped (bench/README.md): a .gz name is read through gzip, and
 * one that is not gzip data, or is cut short, is refused like any unreadable file. */
Test(py_tool_errors, results_table_reads_gzipped_records_and_refuses_broken_ones)
{
    sh("cp %s/good.jsonl %s/old.jsonl && gzip %s/old.jsonl");
    cr_expect_eq(tool("results_table.py", "%s/old.jsonl.gz"), 0, "%s", out);
    says("| stub-shape | 1 | 2 | 3 | 0 | fp4lr-nvfp4 | 1.0000 | 2.0 | 1.500 | - |");
    cr_expect_eq(tool("plots.py", "--out %s/o --work %s/w --gnuplot %s/no-gnuplot %s/old.jsonl.gz"), 3, "%s", out);
    cr_expect_null(strstr(out, "cannot read"), "plots did not read the .gz: %s", out);
    sh("cp %s/good.jsonl %s/plain.jsonl.gz");
    cr_expect_eq(tool("results_table.py", "%s/plain.jsonl.gz"), 2, "%s", out);
    says("results_table: %s/plain.jsonl.gz: cannot read (Not a gzipped file");
    sh("gzip -c %s/good.jsonl | head -c 40 > %s/cut.jsonl.gz");
    cr_expect_eq(tool("results_table.py", "%s/cut.jsonl.gz"), 2, "%s", out);
    says("results_table: %s/cut.jsonl.gz: a truncated gzip stream");
}

/* With no FILE, the newest results file is the one with the newest date in its name, .jsonl or
 * a closed day's .jsonl.gz, whatever the files' modification times (a clone sets them all). */
Test(py_tool_errors, results_table_takes_the_newest_date_not_the_newest_mtime)
{
    sh("mkdir -p %s/tools %s/bench/results && cp tools/results_table.py tools/results_jsonl.py %s/tools/");
    sh("sed s/stub-shape/older-shape/ %s/good.jsonl > %s/bench/results/gpu-2026-01-01.jsonl");
    sh("gzip -n %s/bench/results/gpu-2026-01-01.jsonl && touch -d 2026-01-09 %s/bench/results/gpu-2026-01-01.jsonl.gz");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "python3 %s/tools/results_table.py 2>&1", dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 0, "%s", out);
    says("| older-shape |");
    sh("sed s/stub-shape/newer-shape/ %s/good.jsonl > %s/bench/results/gpu-2026-01-02.jsonl");
    sh("touch -d 2026-01-03 %s/bench/results/gpu-2026-01-02.jsonl");
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 0, "%s", out);
    says("| newer-shape |");
    says("gpu-2026-01-02.jsonl");
    sh("sed s/stub-shape/stale-shape/ %s/good.jsonl > %s/bench/results/gpu-2025-12-31.jsonl");
    sh("touch -d 2026-02-01 %s/bench/results/gpu-2025-12-31.jsonl");
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 0, "%s", out);
    says("| newer-shape |");
}

Test(py_tool_errors, results_table_refuses_an_index_out_of_range)
{
    cr_expect_eq(tool("results_table.py", "%s/good.jsonl --index 0"), 0, "%s", out);
    says("| stub-shape |");
    cr_expect_eq(tool("results_table.py", "%s/good.jsonl --index -1"), 0, "%s", out);
    cr_expect_eq(tool("results_table.py", "%s/good.jsonl --index 999"), 2, "%s", out);
    says("results_table: %s/good.jsonl: --index 999 out of range (the file holds 1 records");
    cr_expect_eq(tool("results_table.py", "%s/good.jsonl --index -999"), 2, "%s", out);
    says("results_table: %s/good.jsonl: --index -999 out of range");
}

/* --update-readme rewrites <root>/README.md: a copy of the tool in the scratch directory
 * (its root) rewrites the scratch README, refuses one without the markers and leaves it be. */
Test(py_tool_errors, results_table_update_readme_needs_the_markers)
{
    sh("mkdir %s/tools && cp tools/results_table.py tools/results_jsonl.py %s/tools/");
    char cmd[512];
    put("README.md", "# stub\nno results block here\n");
    snprintf(cmd, sizeof cmd, "python3 %s/tools/results_table.py %s/good.jsonl --update-readme 2>&1", dir, dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 2, "%s", out);
    says("results_table: %s/README.md: has no <!-- results:begin --> ... <!-- results:end --> block");
    snprintf(cmd, sizeof cmd, "cat %s/README.md", dir);
    tsupport_run_capture(cmd, out, sizeof out);
    cr_expect_str_eq(out, "# stub\nno results block here\n", "the README must be left as it was");

    put("README.md", "# stub\n<!-- results:begin -->\nold\n<!-- results:end -->\ntail\n");
    snprintf(cmd, sizeof cmd, "python3 %s/tools/results_table.py %s/good.jsonl --update-readme 2>&1", dir, dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 0, "%s", out);
    snprintf(cmd, sizeof cmd, "cat %s/README.md", dir);
    tsupport_run_capture(cmd, out, sizeof out);
    cr_expect_not_null(strstr(out, "| stub-shape |"), "%s", out);
    cr_expect_null(strstr(out, "old"), "%s", out);
}

Test(py_tool_errors, plots_refuses_unreadable_results)
{
    cr_expect_eq(tool("plots.py", "--out %s/o --work %s/w %s/missing.jsonl"), 2, "%s", out);
    says("plots: %s/missing.jsonl: cannot read (No such file or directory)");
    cr_expect_eq(tool("plots.py", "--out %s/o --work %s/w %s/bad.jsonl"), 2, "%s", out);
    says("plots: %s/bad.jsonl: line 1 is not JSON");
    cr_expect_eq(tool("plots.py", "--out %s/o --work %s/w %s/array.jsonl"), 2, "%s", out);
    says("plots: %s/array.jsonl: line 1 is a JSON list, not a record");
}

/* The good record draws its throughput plot: without gnuplot that is status 3 (the scripts are
 * written); a --sweep file that is missing or has no rows is refused first with status 2. */
Test(py_tool_errors, plots_refuses_a_sweep_without_usable_rows)
{
    cr_expect_eq(tool("plots.py", "--out %s/o --work %s/w --gnuplot %s/no-gnuplot %s/good.jsonl"), 3, "%s", out);
    says("no-gnuplot not found");
    cr_expect_eq(tool("plots.py", "--out %s/o --work %s/w --sweep %s/missing.csv %s/good.jsonl"), 2, "%s", out);
    says("plots: %s/missing.csv: cannot read (No such file or directory)");
    cr_expect_eq(tool("plots.py", "--out %s/o --work %s/w --sweep %s/empty.csv %s/good.jsonl"), 2, "%s", out);
    says("plots: %s/empty.csv: no usable rows");
    put("header.csv", "shape,large,M,N,K,r,format,variant,state,tflops,entry,stages_main,smem_bytes\n");
    cr_expect_eq(tool("plots.py", "--out %s/o --work %s/w --sweep %s/header.csv %s/good.jsonl"), 2, "%s", out);
    says("plots: %s/header.csv: no usable rows");
}

Test(py_tool_errors, plots_refuses_an_unwritable_output_directory)
{
    cr_expect_eq(tool("plots.py", "--out /proc/nope --work %s/w %s/good.jsonl"), 2, "%s", out);
    says("plots: --out /proc/nope: not a writable directory");
    cr_expect_eq(tool("plots.py", "--out %s/o --work /proc/nope %s/good.jsonl"), 2, "%s", out);
    says("plots: --work /proc/nope: not a writable directory");
}

Test(py_tool_errors, tline_summary_names_missing_columns_and_empty_files)
{
    put("tl.csv", "cta,event,us\n0,0,0.0\n1,0,0.5\n1,1,2.0\n");
    cr_expect_eq(tool("tline_summary.py", "%s/tl.csv"), 0, "%s", out);
    says("last event of a CTA: min 0.00, median 1.00, max 2.00 us");
    put("other.csv", "cta,when\n0,1\n");
    cr_expect_eq(tool("tline_summary.py", "%s/other.csv"), 2, "%s", out);
    says("tline_summary: %s/other.csv: not a timeline CSV: no cta,event,us header (missing columns: event, us)");
    put("header.csv", "cta,event,us\n");
    cr_expect_eq(tool("tline_summary.py", "%s/header.csv"), 2, "%s", out);
    says("tline_summary: %s/header.csv: no rows");
    cr_expect_eq(tool("tline_summary.py", "%s/empty.csv"), 2, "%s", out);
    says("tline_summary: %s/empty.csv: no rows");
    put("cut.csv", "cta,event,us\n0,0,0.0\n1,");
    cr_expect_eq(tool("tline_summary.py", "%s/cut.csv"), 2, "%s", out);
    says("tline_summary: %s/cut.csv: line 3: not cta,event,us numbers");
}

/* --walk: a two-CTA walk with one split tile (CTA 0 owns it, CTA 1 contributes), so every
 * per-role figure is known; cfirst moves CTA 1's piece first; a bad walk is refused. */
Test(py_tool_errors, tline_summary_walk_gives_each_role_its_figures)
{
    put("w.csv", "cta,event,us\n"
                 "0,2,1.0\n0,3,5.0\n0,4,5.0\n0,5,6.0\n0,6,6.5\n0,7,8.5\n0,8,10.0\n0,9,11.0\n"
                 "1,2,1.0\n1,3,5.0\n1,4,5.0\n1,5,6.0\n1,6,6.25\n1,7,8.25\n1,9,10.25\n");
    cr_expect_eq(tool("tline_summary.py", "--walk 2,2,2,0,4 %s/w.csv"), 0, "%s", out);
    says("walk G=2 DP=2 q=2 r=0 K stages=4:");
    says("whole        K loop per stage: median 1.000 us (2 units); gap before it: none");
    says("owner        K loop per stage: median 1.000 us (1 units); gap before it: median 0.50, max 0.50 us (1 units)");
    says("contributor hand-off (K loop done -> finished): median 2.00, max 2.00 us (1 units)");
    says("owner fix-up (K loop done -> fix-up done): median 1.50, max 1.50 us (1 units)");
    /* the same events read as the skorder walk: CTA 1's unit 0 is now its contributor piece */
    cr_expect_eq(tool("tline_summary.py", "--walk 2,2,2,0,4,cfirst %s/w.csv"), 0, "%s", out);
    says("contributor hand-off (K loop done -> finished): median 1.00, max 1.00 us (1 units)");
    cr_expect_eq(tool("tline_summary.py", "--walk 2,2,2,0 %s/w.csv"), 2, "%s", out);
    says("tline_summary: --walk '2,2,2,0': G,DP,Q,R,NKS (non-negative integers, G and NKS >= 1)");
    cr_expect_eq(tool("tline_summary.py", "--walk 0,2,2,0,4 %s/w.csv"), 2, "%s", out);
    cr_expect_eq(tool("tline_summary.py", "--walk 2,2,2,0,4,later %s/w.csv"), 2, "%s", out);
    cr_expect_eq(tool("tline_summary.py", "--walk 2,2,2,0,4"), 2, "%s", out);
    says("tline_summary: no FILE");
}

/* --span A,B: event B minus event A over the CTAs that stored both (mean, median, max). */
Test(py_tool_errors, tline_summary_span_gives_the_mean_of_each_pair)
{
    put("s.csv", "cta,event,us\n0,7,8.5\n0,9,11.0\n0,8,10.0\n1,7,8.25\n1,9,10.25\n");
    cr_expect_eq(tool("tline_summary.py", "--span 7,9 --span 7,8 --span 9,10 %s/s.csv"), 0, "%s", out);
    says("span 7 -> 9 (unit 1: K loop done -> unit 1: finished): 2 CTAs, mean 2.250, median 2.25, max 2.50 us");
    says("span 7 -> 8 (unit 1: K loop done -> unit 1: fixup done (owner / whole)): 1 CTAs, mean 1.500");
    says("span 9 -> 10 (unit 1: finished -> unit 2: A stage 0 full): 0 CTAs, no CTA stored both");
    cr_expect_eq(tool("tline_summary.py", "--span 7 %s/s.csv"), 2, "%s", out);
    says("tline_summary: --span '7': two event numbers, A,B");
    cr_expect_eq(tool("tline_summary.py", "--span 7,x %s/s.csv"), 2, "%s", out);
    cr_expect_eq(tool("tline_summary.py", "%s/s.csv --span 7,9"), 2, "%s", out);
}

/* Label a's CSV is good; label b's is empty, header-only or cut mid-row in turn. */
Test(py_tool_errors, ab_compare_refuses_an_empty_or_truncated_csv)
{
    sh("mkdir %s/ab");
    char good[256];
    snprintf(good, sizeof good, "%sflux-qkv,fp4lr-nvfp4,ok,500.0,1,1,\nsquare-r0,fp4lr-nvfp4,ok,400.0,1,1,\n",
             AB_HEADER);
    put("ab/a-1.csv", good);
    put("ab/b-1.csv", good);
    cr_expect_eq(tool("ab_compare.py", "%s/ab"), 0, "%s", out);
    says("geometric mean b/a fp4lr-nvfp4: 1.000 (2 shapes)");
    put("ab/b-1.csv", "");
    cr_expect_eq(tool("ab_compare.py", "%s/ab"), 2, "%s", out);
    says("ab_compare: %s/ab/b-1.csv: no rows");
    cr_expect_null(strstr(out, "geometric mean"), "no comparison: %s", out);
    put("ab/b-1.csv", AB_HEADER);
    cr_expect_eq(tool("ab_compare.py", "%s/ab"), 2, "%s", out);
    says("ab_compare: %s/ab/b-1.csv: no rows");
    char cut[256];
    snprintf(cut, sizeof cut, "%sflux-qkv,fp4lr-nvfp4,ok,500.0,1,1,\nsquare-r0,fp4lr-nv", AB_HEADER);
    put("ab/b-1.csv", cut);
    cr_expect_eq(tool("ab_compare.py", "%s/ab"), 2, "%s", out);
    says("ab_compare: %s/ab/b-1.csv: row 2: not as many fields as the header");
}
