/* tools/sanitize.sh (make sanitize) with a stub compute-sanitizer: every case of
 * tests/sanitize_cases.txt under the three tools, a tool's error stops the run with status
 * 1, and a missing build or sanitizer is refused with status 2. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "support_cmd.h"

static char dir[64];

/* A build directory whose bin/fp4lr-check exists, and a stub sanitizer that logs
 * "<tool> <args>" and exits 9 when the tool is `fail_tool` (the empty string: never); it says
 * "validate: PASS" (a kernel ran) unless `no_gpu`, where it says what fp4lr-check says
 * without a GPU and exits 0. */
static void make_stub_gpu(const char *fail_tool, int no_gpu)
{
    snprintf(dir, sizeof dir, "/tmp/fp4lr-san.XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    char path[160];
    snprintf(path, sizeof path, "%s/bin", dir);
    cr_assert_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/bin/fp4lr-check", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\nexit 0\n");
    fclose(f);
    chmod(path, 0755);
    snprintf(path, sizeof path, "%s/san", dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "#!/bin/sh\n"
            "echo \"$2 $*\" >> %s/calls.log\n"
            "if [ \"$2\" = \"%s\" ]; then echo '========= ERROR SUMMARY: 1 error'; exit 9; fi\n"
            "echo '%s'; echo '========= ERROR SUMMARY: 0 errors'\n",
            dir, fail_tool, no_gpu ? "no kernel was run (no GPU)." : "validate: PASS");
    fclose(f);
    chmod(path, 0755);
}

static void make_stub(const char *fail_tool) { make_stub_gpu(fail_tool, 0); }

static int lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

static int run(const char *args, char *out, size_t cap)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "SANITIZER=%s/san sh tools/sanitize.sh %s 2>&1", dir, args);
    return tsupport_run_capture(cmd, out, cap);
}

Test(sanitize_script, every_case_under_three_tools)
{
    static char out[65536];
    cr_assert_eq(tsupport_run_capture("sh tools/sanitize.sh --list", out, sizeof out), 0);
    int cases = 0;
    for (const char *p = out; (p = strchr(p, '\n')); p++)
        cases++;
    cr_expect_geq(cases, 16, "%s", out);
    cr_expect(strstr(out, "--w-prep inline") != NULL, "the _x kernels are among the cases: %s", out);
    make_stub("");
    cr_assert_eq(run(dir, out, sizeof out), 0, "%s", out);
    char log[160];
    snprintf(log, sizeof log, "%s/calls.log", dir);
    cr_expect_eq(lines(log), 3 * cases);
    char want[64];
    snprintf(want, sizeof want, "sanitize: %d cases x 3 tools clean", cases);
    cr_expect(strstr(out, want) != NULL, "%s", out);
    remove_dir();
}

Test(sanitize_script, an_error_stops_it)
{
    static char out[65536];
    make_stub("racecheck");
    cr_expect_eq(run(dir, out, sizeof out), 1, "%s", out);
    cr_expect(strstr(out, "sanitize: racecheck failed on --mnk") != NULL, "%s", out);
    char log[160];
    snprintf(log, sizeof log, "%s/calls.log", dir);
    FILE *f = fopen(log, "r");
    cr_assert_not_null(f);
    char first_racecheck[256] = "", line[256];
    int after = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "racecheck", 9) == 0 && !first_racecheck[0])
            snprintf(first_racecheck, sizeof first_racecheck, "%s", line);
        else if (first_racecheck[0])
            after++;
    }
    fclose(f);
    cr_expect(first_racecheck[0], "racecheck ran");
    cr_expect_eq(after, 0, "nothing after the failing case");
    remove_dir();
}

/* without a GPU fp4lr-check exits 0 having run no kernel: that is no clean result */
Test(sanitize_script, no_kernel_run_is_a_failure)
{
    make_stub_gpu("", 1);
    char out[8192];
    cr_expect_eq(run(dir, out, sizeof out), 1, "%s", out);
    cr_expect(strstr(out, "sanitize: memcheck ran no validated kernel on --mnk") != NULL, "%s", out);
    cr_expect(strstr(out, "clean") == NULL, "%s", out);
    remove_dir();
}

Test(sanitize_script, refusals)
{
    static char out[4096];
    make_stub("");
    cr_expect_eq(run("/nonexistent/fp4lr-build", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "is not built") != NULL, "%s", out);
    cr_expect_eq(tsupport_run_capture("SANITIZER=/nonexistent/san sh tools/sanitize.sh build 2>&1", out, sizeof out),
                 2, "%s", out);
    cr_expect_eq(run("a b", out, sizeof out), 2, "%s", out);
    remove_dir();
}

/* SANITIZE_TOOLS runs a part (a run split over two calls): only the tools named, in order;
 * a name not among the three is refused. */
Test(sanitize_script, a_part_of_the_tools)
{
    static char out[65536];
    cr_assert_eq(tsupport_run_capture("sh tools/sanitize.sh --list", out, sizeof out), 0);
    int cases = 0;
    for (const char *p = out; (p = strchr(p, '\n')); p++)
        cases++;
    make_stub("");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "SANITIZE_TOOLS=racecheck SANITIZER=%s/san sh tools/sanitize.sh %s 2>&1", dir, dir);
    cr_assert_eq(tsupport_run_capture(cmd, out, sizeof out), 0, "%s", out);
    char log[160], want[96];
    snprintf(log, sizeof log, "%s/calls.log", dir);
    cr_expect_eq(lines(log), cases);
    snprintf(want, sizeof want, "sanitize: %d cases x 1 tools clean (racecheck)", cases);
    cr_expect(strstr(out, want) != NULL, "%s", out);
    cr_expect(strstr(out, "== memcheck") == NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "SANITIZE_TOOLS='memcheck initcheck' SANITIZER=%s/san sh tools/sanitize.sh %s 2>&1", dir,
             dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "each of memcheck, racecheck, synccheck") != NULL, "%s", out);
    remove_dir();
}
