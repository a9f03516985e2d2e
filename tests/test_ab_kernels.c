/* tools/ab_kernels.sh + tools/ab_compare.py: two stub fp4lr-bench builds (shell scripts that
 * log their turn and write a CSV whose TFLOP/s depend on the build) are timed alternately and
 * compared; a build whose row fails validation is reported and makes the exit status 1; bad
 * arguments are refused with status 2. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "support_cmd.h"

static char dir[64];

/* A stub fp4lr-bench: logs "<name> <kernel dir>", writes the CSV after --csv, exits `rc`. */
static void write_stub(const char *name, const char *tflops_a, const char *pass, int rc)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "#!/bin/sh\n"
            "echo \"%s $FP4LR_KERNEL_DIR\" >> %s/calls.log\n"
            "while [ $# -gt 0 ]; do [ \"$1\" = --csv ] && out=$2; shift; done\n"
            "{ echo shape,variant,state,tflops,pass,validated,note\n"
            "  echo flux-qkv,fp4lr-nvfp4,ok,%s,1,1,\n"
            "  echo square-r0,fp4lr-nvfp4,ok,%s,%s,1,\n"
            "  echo sana-out,fp4lr-nvfp4,skipped,0,0,0,not built\n"
            "  echo flux-qkv,cublas-bf16,ok,700.0,,0,timed only\n"
            "  [ \"%s\" = 0 ] && echo sana-mlp,fp4lr-nvfp4,invalid,700.0,0,1,\n"
            "} > \"$out\"\n"
            "exit %d\n",
            name, dir, tflops_a, tflops_a, pass, pass, rc);
    fclose(f);
    chmod(path, 0755);
}


static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/fp4lr-ab.XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/ka %s/kb", dir, dir);
    cr_assert_eq(system(cmd), 0);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(ab_kernels, .init = setup, .fini = teardown);

Test(ab_kernels, alternates_the_builds_and_compares_them)
{
    write_stub("benchA", "500.0", "1", 0);
    write_stub("benchB", "550.0", "1", 0);
    static char out[8192], cmd[1024];
    snprintf(cmd, sizeof cmd,
             "sh tools/ab_kernels.sh -n 2 %s/out base %s/benchA %s/ka tw8 %s/benchB %s/kb -- "
             "--no-peers --shape flux-qkv 2>/dev/null",
             dir, dir, dir, dir, dir);
    cr_assert_eq(tsupport_run_capture(cmd, out, sizeof out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "geometric mean tw8/base fp4lr-nvfp4: 1.100 (2 shapes)"), "%s", out);
    cr_expect_not_null(strstr(out, "not compared: base-1: sana-out fp4lr-nvfp4: skipped not built"), "%s", out);
    cr_expect_not_null(strstr(out, "geometric mean tw8/base cublas-bf16: 1.000 (1 shapes)"),
                       "a peer's timed-only row is compared, not reported as failed: %s", out);
    cr_expect_null(strstr(out, "FAILED"), "%s", out);
    snprintf(cmd, sizeof cmd, "cat %s/calls.log", dir);
    tsupport_run_capture(cmd, out, sizeof out);
    char want[512];
    snprintf(want, sizeof want, "benchA %s/ka\nbenchB %s/kb\nbenchA %s/ka\nbenchB %s/kb\n", dir, dir, dir, dir);
    cr_expect_str_eq(out, want, "the builds must alternate A, B, A, B");
}

Test(ab_kernels, a_failed_validation_is_reported_not_compared)
{
    write_stub("benchA", "500.0", "1", 0);
    write_stub("benchB", "900.0", "0", 1);
    static char out[8192], cmd[1024];
    snprintf(cmd, sizeof cmd, "sh tools/ab_kernels.sh -n 1 %s/out a %s/benchA %s/ka b %s/benchB %s/kb -- x 2>/dev/null",
             dir, dir, dir, dir, dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 1, "%s", out);
    cr_expect_not_null(strstr(out, "not compared: b-1: square-r0 fp4lr-nvfp4: validation FAILED"), "%s", out);
    cr_expect_not_null(strstr(out, "not compared: b-1: sana-mlp fp4lr-nvfp4: validation FAILED"),
                       "a timed row that failed validation (state invalid): %s", out);
    cr_expect_not_null(strstr(out, "geometric mean b/a fp4lr-nvfp4: 1.800 (1 shapes)"), "%s", out);
}

/* --timing-only B: B's rows that fail validation are compared by their time (marked t) and
 * do not fail the comparison; A's would; a label that is neither is refused */
Test(ab_kernels, a_timing_only_build_is_compared_by_its_time)
{
    write_stub("benchA", "500.0", "1", 0);
    write_stub("benchB", "900.0", "0", 1);
    static char out[8192], cmd[1024];
    snprintf(cmd, sizeof cmd, "sh tools/ab_kernels.sh -n 1 %s/out a %s/benchA %s/ka b %s/benchB %s/kb -- x >/dev/null 2>&1",
             dir, dir, dir, dir, dir);
    cr_expect_eq(system(cmd) >> 8, 1, "the plain comparison fails on b's validation");
    snprintf(cmd, sizeof cmd, "python3 tools/ab_compare.py --timing-only b %s/out 2>&1", dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "geometric mean b/a fp4lr-nvfp4: 1.800 (2 shapes)"),
                       "square-r0 (pass 0) compared by time beside flux-qkv: %s", out);
    cr_expect_not_null(strstr(out, "1.800 t\n"), "the timing-only row is marked: %s", out);
    cr_expect_null(strstr(out, "FAILED"), "%s", out);
    snprintf(cmd, sizeof cmd, "python3 tools/ab_compare.py --timing-only a %s/out 2>&1", dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 1, "b must still pass: %s", out);
    cr_expect_not_null(strstr(out, "not compared: b-1: square-r0 fp4lr-nvfp4: validation FAILED"), "%s", out);
    snprintf(cmd, sizeof cmd, "python3 tools/ab_compare.py --timing-only c %s/out 2>&1", dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 2, "%s", out);
    cr_expect_not_null(strstr(out, "[AB_TIMING_ONLY]"), "%s", out);
}

Test(ab_kernels, a_broken_bench_run_stops_the_comparison)
{
    write_stub("benchA", "500.0", "1", 0);
    write_stub("benchB", "500.0", "1", 3);
    static char out[8192], cmd[1024];
    snprintf(cmd, sizeof cmd, "sh tools/ab_kernels.sh -n 2 %s/out a %s/benchA %s/ka b %s/benchB %s/kb -- x 2>&1",
             dir, dir, dir, dir, dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 3, "%s", out);
    cr_expect_not_null(strstr(out, "(round 1, b) failed with status 3"), "%s", out);
    cr_expect_null(strstr(out, "round 2"), "no second round after a broken run: %s", out);
}

/* A bench run that exits 0 without a CSV (no GPU: it lists its jobs and measures nothing)
 * stops the script with status 3, naming the run, before any comparison. */
Test(ab_kernels, a_run_that_measured_nothing_stops_it)
{
    write_stub("benchA", "500.0", "1", 0);
    char path[160];
    snprintf(path, sizeof path, "%s/benchB", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\necho 'no GPU: no CUDA driver'\nexit 0\n");
    fclose(f);
    chmod(path, 0755);
    static char out[8192], cmd[1024];
    snprintf(cmd, sizeof cmd, "sh tools/ab_kernels.sh -n 2 %s/out a %s/benchA %s/ka b %s/benchB %s/kb -- x 2>&1",
             dir, dir, dir, dir, dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 3, "%s", out);
    cr_expect_not_null(strstr(out, "(round 1, b) measured nothing (no GPU?)"), "%s", out);
    cr_expect_null(strstr(out, "round 2"), "no second round: %s", out);
}

Test(ab_kernels, refuses_bad_arguments)
{
    write_stub("benchA", "500.0", "1", 0);
    static char out[4096], cmd[1024];
    snprintf(cmd, sizeof cmd, "sh tools/ab_kernels.sh %s/out a %s/benchA %s/ka a %s/benchA %s/ka -- x 2>&1", dir, dir,
             dir, dir, dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 2);
    cr_expect_not_null(strstr(out, "the two labels must differ"), "%s", out);
    snprintf(cmd, sizeof cmd, "sh tools/ab_kernels.sh %s/out a %s/benchA %s/nodir b %s/benchA %s/ka -- x 2>&1", dir,
             dir, dir, dir, dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 2);
    cr_expect_not_null(strstr(out, "kernel directory"), "%s", out);
    snprintf(cmd, sizeof cmd, "sh tools/ab_kernels.sh -n x %s/out a %s/benchA %s/ka b %s/benchA %s/ka -- x 2>&1", dir,
             dir, dir, dir, dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 2);
    cr_expect_eq(tsupport_run_capture("sh tools/ab_kernels.sh 2>&1", out, sizeof out), 2);
    cr_expect_not_null(strstr(out, "ab_kernels.sh [-n ROUNDS] OUTDIR"), "%s", out);
    cr_expect_eq(tsupport_run_capture("python3 tools/ab_compare.py /nonexistent 2>&1", out, sizeof out), 2);
    cr_expect_not_null(strstr(out, "[AB_DIR]"), "%s", out);
}
