/* tools/gpu_session.sh (a session's GPU work in one call) with stub binaries: each step's
 * status is recorded and a failing or overrunning step fails the run without stopping the
 * later steps; the planted-fault step passes only when the benchmark fails; bad arguments
 * and a missing build are refused with status 2; --pack moves what the steps wrote, and
 * only that, into one archive; the sustained step logs the clock beside its benchmark and
 * joins the two. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "support_cmd.h"

static char dir[64], repo[512];

static void write_exec(const char *rel, const char *body)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
}

/* A directory holding build/tests/fp4lr-tests (exit 0) and a build/bin/fp4lr-bench stub whose
 * body is `bench`. */
static void make_tree(const char *bench)
{
    cr_assert_not_null(getcwd(repo, sizeof repo));
    snprintf(dir, sizeof dir, "/tmp/fp4lr-gpus.XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    char path[160];
    snprintf(path, sizeof path, "mkdir -p %s/build/tests %s/build/bin", dir, dir);
    cr_assert_eq(system(path), 0);
    write_exec("build/tests/fp4lr-tests", "exit 0");
    write_exec("build/bin/fp4lr-bench", bench);
}

static int session(const char *env_args, char *out, size_t cap)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd %s && %s sh %s/tools/gpu_session.sh 2>&1", dir, env_args, repo);
    return tsupport_run_capture(cmd, out, cap);
}

/* The session's own settings must not leak into the tests' runs (the GPU suite itself runs
 * under tools/gpu_session.sh, with LIMIT_* and JOBS set). */
static void clean_env(void)
{
    const char *vars[] = {"JOBS", "LIMIT_INFO", "LIMIT_SUITE", "LIMIT_MEMCHECK", "LIMIT_RACECHECK",
                          "LIMIT_SYNCCHECK", "LIMIT_FAULT", "LIMIT_BENCH", "LIMIT_SWEEP", "LIMIT_SUSTAINED"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
}

/* The text a step wrote: <dir>/o/<step>.txt into text (at most cap - 1 bytes). */
static void read_step(const char *step, char *text, size_t cap)
{
    char path[160];
    snprintf(path, sizeof path, "%s/o/%s.txt", dir, step);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    size_t n = fread(text, 1, cap - 1, f);
    text[n] = 0;
    fclose(f);
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(gpu_session, help_and_refusals, .init = clean_env)
{
    static char out[8192];
    cr_expect_eq(tsupport_run_capture("sh tools/gpu_session.sh --help", out, sizeof out), 0);
    const char *steps[] = {"info", "suite", "memcheck", "racecheck", "synccheck", "fault", "bench", "sweep"};
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
        cr_expect(strstr(out, steps[i]) != NULL, "--help names %s: %s", steps[i], out);
    cr_expect(strstr(out, "--pack") != NULL, "%s", out);
    cr_expect(strstr(out, "set -u") == NULL && strstr(out, "usage()") == NULL, "--help prints code: %s", out);
    cr_expect_eq(tsupport_run_capture("sh tools/gpu_session.sh /tmp/x bogus 2>&1", out, sizeof out), 2);
    cr_expect(strstr(out, "unknown step 'bogus'") != NULL, "%s", out);
    cr_expect_eq(tsupport_run_capture("sh tools/gpu_session.sh /tmp/x 2>/dev/null", out, sizeof out), 2);
    cr_expect_eq(tsupport_run_capture("JOBS=x sh tools/gpu_session.sh /tmp/x suite 2>&1", out, sizeof out), 2);
    cr_expect(strstr(out, "JOBS 'x'") != NULL, "%s", out);
    make_tree("exit 0");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cd /tmp && sh %s/tools/gpu_session.sh %s/o suite 2>&1", repo, dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "build/ is not here") != NULL, "%s", out);
    cr_expect_eq(session("LIMIT_SWEEP=soon", out, sizeof out), 2, "no OUTDIR and no step: %s", out);
    snprintf(cmd, sizeof cmd, "cd %s && LIMIT_SWEEP=soon sh %s/tools/gpu_session.sh %s/o sweep 2>&1", dir, repo, dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "LIMIT for sweep 'soon'") != NULL, "%s", out);
    remove_dir();
}

Test(gpu_session, dry_run_names_commands_and_limits, .init = clean_env)
{
    static char out[8192];
    cr_assert_eq(tsupport_run_capture("JOBS=3 LIMIT_BENCH=77 sh tools/gpu_session.sh --dry-run /tmp/o suite bench "
                                      "racecheck fault",
                                      out, sizeof out),
                 0, "%s", out);
    cr_expect(strstr(out, "suite (limit 300 s): build/tests/fp4lr-tests -j3 ") != NULL, "%s", out);
    cr_expect(strstr(out, "bench (limit 77 s): build/bin/fp4lr-bench --csv '/tmp/o/all.csv'") != NULL, "%s", out);
    cr_expect(strstr(out, "SANITIZE_TOOLS=racecheck sh tools/sanitize.sh build") != NULL, "%s", out);
    cr_expect(strstr(out, "--plant-fault timed") != NULL, "%s", out);
}

/* the planted fault must make the benchmark fail: a stub that exits 1 passes the step, one
 * that exits 0 fails it, and the later step still runs */
Test(gpu_session, fault_step_and_later_steps, .init = clean_env)
{
    static char out[8192];
    make_tree("case \"$*\" in *--plant-fault*) exit 1;; esac; exit 0");
    char full[1024];
    snprintf(full, sizeof full, "cd %s && sh %s/tools/gpu_session.sh %s/o fault sweep 2>&1", dir, repo, dir);
    cr_expect_eq(tsupport_run_capture(full, out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "fault rc=0") != NULL, "%s", out);
    cr_expect(strstr(out, "sweep rc=0") != NULL, "%s", out);
    remove_dir();

    make_tree("exit 0");
    snprintf(full, sizeof full, "cd %s && sh %s/tools/gpu_session.sh %s/o fault sweep 2>&1", dir, repo, dir);
    cr_expect_eq(tsupport_run_capture(full, out, sizeof out), 1, "%s", out);
    cr_expect(strstr(out, "fault rc=1") != NULL, "the fault went unnoticed: %s", out);
    cr_expect(strstr(out, "sweep rc=0") != NULL, "the later step ran: %s", out);
    char text[4096] = "";
    read_step("fault", text, sizeof text);
    cr_expect(strstr(text, "exit 0 (1 expected)") != NULL, "%s", text);
    remove_dir();
}

Test(gpu_session, a_step_past_its_limit_fails, .init = clean_env)
{
    static char out[8192];
    make_tree("sleep 5; exit 0");
    char full[1024];
    snprintf(full, sizeof full, "cd %s && LIMIT_SWEEP=1 sh %s/tools/gpu_session.sh %s/o sweep 2>&1", dir, repo, dir);
    cr_expect_eq(tsupport_run_capture(full, out, sizeof out), 1, "%s", out);
    cr_expect(strstr(out, "sweep rc=124 1s-limit") != NULL, "%s", out);
    char text[4096] = "";
    read_step("sweep", text, sizeof text);
    cr_expect(strstr(text, "ran past its limit of 1 s") != NULL, "%s", text);
    remove_dir();
}

/* --pack: the steps' files (and only those) end up in OUTDIR/session.tgz; a file that was
 * there before stays in place (in the archive too if a step changed it); steps.txt stays
 * readable; an existing session.tgz is not replaced */
Test(gpu_session, pack_moves_what_the_steps_wrote_into_one_archive, .init = clean_env)
{
    static char out[8192];
    make_tree("for a in \"$@\"; do case $a in *.csv) echo row > \"$a\";; esac; done; echo ran");
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/o && echo mine > %s/o/old.txt && echo was > %s/o/all.csv && "
             "touch -d 2001-01-01 %s/o/old.txt %s/o/all.csv",
             dir, dir, dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "cd %s && sh %s/tools/gpu_session.sh --pack %s/o bench sweep 2>&1", dir, repo, dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "packed 4 file(s)") != NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "cd %s/o && ls | tr '\\n' ' ' && echo '|' && tar tzf session.tgz | sort | tr '\\n' ' ' && "
             "echo '|' && cat old.txt && tar xzOf session.tgz stage-sweep.csv", dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 0, "%s", out);
    /* all.csv was there before: a step rewrote it, so it is in the archive and stays in place */
    cr_expect_str_eq(out, "all.csv old.txt session.tgz steps.txt |\nall.csv bench.txt stage-sweep.csv sweep.txt |\nmine\nrow\n");
    snprintf(cmd, sizeof cmd, "cd %s && sh %s/tools/gpu_session.sh --pack %s/o bench 2>&1", dir, repo, dir);
    cr_expect_eq(tsupport_run_capture(cmd, out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "session.tgz exists") != NULL, "%s", out);
    remove_dir();
}

/* The sustained step: a stub nvidia-smi (the hand-made log of tests/data, then waiting to be
 * killed) runs beside a stub benchmark that writes the hand-made samples; the step joins them
 * with tools/samples_clock.py, stops the log, and passes the benchmark's status on. */
Test(gpu_session, sustained_step_logs_the_clock_and_joins_it, .init = clean_env)
{
    static char out[16384];
    /* the benchmark waits (up to 5 s) for the log to have its lines, as a real run outlasts them */
    make_tree("s=; while [ $# -gt 0 ]; do [ \"$1\" = --samples ] && s=$2; shift; done\n"
              "i=0; while [ $i -lt 100 ] && [ $(cat \"$(dirname \"$s\")/smi.csv\" 2>/dev/null | wc -l) -lt 38 ]; do\n"
              "  sleep 0.05; i=$((i + 1)); done\n"
              "cp \"$REPO/tests/data/samples_clock_small.csv\" \"$s\"; exit ${BENCH_RC:-0}");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/stub && ln -s %s/tools %s/tools", dir, repo, dir);
    cr_assert_eq(system(cmd), 0);
    write_exec("stub/nvidia-smi",
               "echo $$ > \"$(dirname \"$0\")/pid\"; cat \"$REPO/tests/data/samples_clock_smi.csv\"; exec sleep 60");
    snprintf(cmd, sizeof cmd, "REPO=%s PATH=%s/stub:$PATH", repo, dir);
    char full[2048];
    snprintf(full, sizeof full, "cd %s && %s sh %s/tools/gpu_session.sh %s/o sustained 2>&1", dir, cmd, repo, dir);
    cr_expect_eq(tsupport_run_capture(full, out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "sustained rc=0") != NULL, "%s", out);
    char text[8192] = "";
    read_step("sustained", text, sizeof text);
    char path[160];
    cr_expect(strstr(text, "--rounds 2 --iters 1000 --warmup 50") != NULL, "%s", text);
    cr_expect(strstr(text, "launches under the power cap: 6 of 12 (50 %)") != NULL, "the log was not joined: %s",
              text);
    snprintf(path, sizeof path, "%s/o/sustained/smi.csv.gz", dir);
    cr_expect_eq(access(path, R_OK), 0, "the clock log is kept, gzipped (as bench/results keeps it)");
    snprintf(path, sizeof path, "%s/o/sustained/smi.csv", dir);
    cr_expect_neq(access(path, F_OK), 0, "no unzipped copy of the clock log is left");
    snprintf(cmd, sizeof cmd, "sleep 0.2; kill -0 $(cat %s/stub/pid) 2>/dev/null", dir);
    cr_expect_neq(system(cmd), 0, "the clock log was not stopped");

    /* a failing benchmark fails the step; the summary still runs */
    snprintf(full, sizeof full, "cd %s && BENCH_RC=3 REPO=%s PATH=%s/stub:$PATH sh %s/tools/gpu_session.sh %s/o2 "
             "sustained 2>&1", dir, repo, dir, repo, dir);
    cr_expect_eq(tsupport_run_capture(full, out, sizeof out), 1, "%s", out);
    cr_expect(strstr(out, "sustained rc=3") != NULL, "%s", out);
    remove_dir();
}
