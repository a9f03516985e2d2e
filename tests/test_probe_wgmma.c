/* bench/probes/wgmma_rs.py, the K-loop probe (can one warpgroup drive the tensor cores alone):
 * its PTX is reproducible (two emits agree byte for byte), every entry assembles through the
 * ptxas gate (no spill, no stack frame, no serialising wgmma), every entry keeps all of its
 * wgmmas alive (ptxas would drop a wgmma whose accumulators are dead: a register count under
 * the accumulators' 128 says so), and bad arguments are refused with status 2. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support_cmd.h"

static char dir[64];
static char out[16384];

static void setup(void)
{
    strcpy(dir, "/tmp/fp4lr-probe-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    (void)system(cmd);
}

TestSuite(probe_wgmma, .init = setup, .fini = teardown, .timeout = 120);

Test(probe_wgmma, emit_is_reproducible_and_every_entry_assembles)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "python3 bench/probes/wgmma_rs.py emit %s/a && python3 bench/probes/wgmma_rs.py emit %s/b && "
             "diff -r %s/a %s/b && ls %s/a/*.ptx | wc -l", dir, dir, dir, dir, dir);
    int rc = tsupport_run_capture(cmd, out, sizeof out);
    cr_assert_eq(rc, 0, "emit failed or two emits differ: %s", out);
    cr_assert_eq(atoi(out), 16, "expected 16 probe entries: %s", out);
    /* the gate: no spill, no stack, no serialising warning; the register count of each */
    snprintf(cmd, sizeof cmd,
             "for f in %s/a/*.ptx; do sh tools/ptxas_gate.sh sm_90a $f ${f%%.ptx}.cubin >/dev/null || "
             "{ echo \"gate: $f\"; exit 1; }; "
             "sed -n 's/.*Used \\([0-9]*\\) registers.*/\\1/p' ${f%%.ptx}.ptxas.txt; done",
             dir);
    rc = tsupport_run_capture(cmd, out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    int n = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"), n++)
        cr_expect_geq(atoi(line), 128, "an entry uses %s registers: fewer than its 128 accumulators, "
                                       "so ptxas dropped wgmmas", line);
    cr_expect_eq(n, 16, "register counts of %d entries, expected 16", n);
}

/* The loop counters (%it: iterations or tiles, %tile, %kc: chunks of a tile) are written only by
 * their own set-up and step: a counter that doubles as a scratch register (the first draft's
 * tile index was the conversion's %t0) never reaches its end, and the kernel hangs on the GPU. */
Test(probe_wgmma, loop_counters_are_written_only_by_their_loops)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "python3 bench/probes/wgmma_rs.py emit %s/a && for f in %s/a/*.ptx; do for r in it tile kc; do "
             "n=$(grep -cE \"^[[:space:]]*[a-z][a-z0-9._:]* %%$r,\" $f); "
             "[ $n -le 2 ] || echo \"$f: %%$r written $n times\"; done; done; "
             "grep -c 'add.u32 %%tile, %%tile, 1' %s/a/probe_sm90a_wgmma_rs_m128n128_pp.ptx",
             dir, dir, dir);
    int rc = tsupport_run_capture(cmd, out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect_null(strstr(out, "written"), "%s", out);
    cr_expect_eq(atoi(out), 1, "the ping-pong entry's tile step is missing: %s", out);
}

Test(probe_wgmma, bad_arguments_are_refused)
{
    char args[256];
    const char *bad[] = {"", "bogus %s", "emit %s extra", "run %s --iters 0", "run %s --iters x",
                         "run %s --reps", "run %s --what 3", "run %s --kchunks 3",
                         "run %s --tiles 4294967296"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char cmd[400];
        snprintf(args, sizeof args, bad[i], dir);
        snprintf(cmd, sizeof cmd, "python3 bench/probes/wgmma_rs.py %s 2>&1", args);
        int rc = tsupport_run_capture(cmd, out, sizeof out);
        cr_expect_eq(rc, 2, "'%s' gave %d: %s", args, rc, out);
        cr_expect_null(strstr(out, "Traceback"), "'%s': %s", args, out);
    }
}
