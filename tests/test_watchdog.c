/* The sm_90a watchdog (tools/ptxgen.py WATCHDOG_NS, tools/sm90a_ptx/watch.py): a protocol
 * bug ends the launch with a CUDA error instead of hanging the process.
 *
 * CPU (always): in every committed sm_90a GEMM kernel each mbarrier wait before the consumers'
 * code is bounded (one `trap` per wait loop), the consumers' waits are not (they are watched),
 * every sm_100a / sm_100f wait is bounded,
 * `cdone` is initialised once with count 2 and each consumer warpgroup arrives on it once, the
 * watcher waits for it; the measurement flag nowatchdog emits none of it; the generators refuse
 * to write a planted fault or a measurement bound into ptx/sm90a/.
 *
 * GPU (sm_90a): kernels built with a planted hang (FP4LR_GEN_FAULT) into a scratch kernel
 * directory, run by fp4lr-check under `timeout 60`: noleave (the consumers wait at their end for
 * a stage nobody issues: the watcher must trap) on the three watcher placements (the inline _x
 * kernel's thread 0, the transform kernel's warp 0, the W-prepared pair's thread 0), norelease
 * (no main stage is ever released, and with it no W slot after the first chunks: the producers'
 * own bounded waits, the A producer's `empty` and the W producer's `tempty`, must trap; which one
 * does first is not told apart), nopublish (the _x converters never publish a unit: the W
 * producer's wait for their flags must trap), and noleave in a ping-pong kernel
 * (FP4LR_GEN_PP_FAULT: each consumer waits for `cdone` before arriving on it; the A producer's
 * thread 0 watches).  Each must exit 3
 * with a CUDA error, not be stopped by the timeout, and the committed kernels must pass the
 * same command.  The time to the trap is measured: never before the bound (4 s, and 1 s in a
 * measurement build), and not much after it. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support_cmd.h"
#include "support_gpu_case.h"

/* ---- CPU: the structure of the committed kernels ---- */

/* For each sm_90a GEMM kernel file: <file> <bounded waits before L_consumer> <traps there>
 * <watchdog traps after it> <consumer waits> <cdone inits> <cdone arrives> <watcher labels>
 * <branches to the watcher> <1 when cdone's init, the arrive's address (the line before it)
 * and the watcher's address (the line after L_watch:) name one offset>.
 * (Every wait loop has one label L_wait_<what>_<n>; a bounded one also its exit, ..._ok.) */
#define CENSUS                                                                                                 \
    "for f in ptx/sm90a/fp4lr_sm90a_*_m*.ptx; do awk -v f=$f '"                                              \
    "/^L_consumer:/ {c = 1} "                                                                                  \
    "/^L_wait_[A-Za-z0-9_]*:/ && !/_ok:/ {if (c) wa++; else wb++} "                                                       \
    "/trap;.*watchdog: the phase never completed/ {if (c) ta++; else tb++} "                                   \
    "/mbarrier.init.shared::cta.b64 .*, 2;   \\/\\/ cdone/ {ci++; split($2, a, /[+\\]]/); oi = a[2]} "           \
    "/mbarrier.arrive.shared::cta.b64 _, \\[%r10\\];   \\/\\/ cdone/ {ca++; oa = po} "                        \
    "pw {ow = $4; sub(/;/, \"\", ow); pw = 0} "                                                                 \
    "/^L_watch:/ {w++; pw = 1} "                                                                               \
    "/bra L_watch;/ {bw++} "                                                                                   \
    "{split($0, t, \", \"); po = t[3]; sub(/;.*/, \"\", po)} "                                                   \
    "END {print f, wb + 0, tb + 0, ta + 0, wa + 0, ci + 0, ca + 0, w + 0, bw + 0, (oi == oa && oi == ow && oi != \"\")}' $f; done"

/* Runs a census command (one line a kernel file: its name, then n counts), checks each line
 * with `check` and returns how many lines there were. */
static int census(const char *cmd, int n, void (*check)(const char *f, const int *c))
{
    static char out[1 << 16];
    int rc = tsupport_run_capture(cmd, out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    int kernels = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char f[512];
        int c[12] = {0}, got = 0, used = 0;
        cr_assert_eq(sscanf(line, "%511s%n", f, &used), 1, "%s", line);
        for (const char *p = line + used; got < n && sscanf(p, "%d%n", &c[got], &used) == 1; p += used)
            got++;
        cr_assert_eq(got, n, "%s", line);
        check(f, c);
        kernels++;
    }
    return kernels;
}

static void check_sm90a(const char *f, const int *c)
{
    const int wb = c[0], tb = c[1], ta = c[2], wa = c[3], ci = c[4], ca = c[5], w = c[6], bw = c[7], same = c[8];
    cr_expect_gt(wb, 0, "%s: no wait before the consumers' code", f);
    cr_expect_eq(tb, wb, "%s: %d waits before L_consumer, %d of them bounded", f, wb, tb);
    cr_expect_gt(wa, 0, "%s: no consumer wait", f);
    cr_expect_eq(ta, 0, "%s: %d bounded consumer waits (the consumers are watched, not bounded)", f, ta);
    cr_expect_eq(ci, 1, "%s: cdone initialised %d times", f, ci);
    cr_expect_eq(ca, 1, "%s: %d cdone arrives (one line, by each WG's thread 0)", f, ca);
    cr_expect_eq(w, 1, "%s: %d watchers", f, w);
    cr_expect_gt(bw, 0, "%s: nothing branches to the watcher", f);
    cr_expect_eq(same, 1, "%s: cdone's init, arrive and wait do not name one offset", f);
}

Test(watchdog, every_wait_outside_the_consumers_is_bounded_and_the_consumers_are_watched)
{
    int kernels = census(CENSUS, 9, check_sm90a);
    cr_expect_eq(kernels, 87, "%d sm_90a GEMM kernels: 82 of gen_sm90a.py (its 4 others are W preparations), 5 ping-pong", kernels);
}

static void check_sm100(const char *f, const int *c)
{
    cr_expect_gt(c[0], 3, "%s: %d waits", f, c[0]);
    cr_expect_eq(c[1], c[0], "%s: %d waits, %d of them bounded", f, c[0], c[1]);
}

/* sm_100a / sm_100f: no role is watched, every wait loop is bounded (ptxas-verified kernels;
 * no sm_100 GPU has run them) */
Test(watchdog, every_sm100_wait_is_bounded)
{
    int kernels = census("for f in ptx/sm100a/*.ptx ptx/sm100f/*.ptx; do awk -v f=$f "
                         "'/^L_wait_[A-Za-z0-9_]*:/ && !/_ok:/ {w++} /trap;.*watchdog: the phase never completed/ {t++} "
                         "END {print f, w + 0, t + 0}' $f; done",
                         2, check_sm100);
    cr_expect_eq(kernels, 36, "%d sm_100 kernels", kernels);
}

Test(watchdog, nowatchdog_builds_the_unbounded_kernels)
{
    static char out[1 << 14];
    int rc = tsupport_run_capture(
        "d=$(mktemp -d) && FP4LR_GEN_EXPERIMENT=nowatchdog python3 tools/gen_sm90a.py --outdir $d >/dev/null && "
        "f=$d/fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4.ptx && test -s $f && "
        "echo traps $(grep -c 'watchdog' $f) cdone $(grep -c cdone $f) waits $(grep -c '^L_wait_' $f); rm -rf $d",
        out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    int traps = -1, cdone = -1, waits = -1;
    cr_assert_eq(sscanf(out, "traps %d cdone %d waits %d", &traps, &cdone, &waits), 3, "%s", out);
    cr_expect_eq(traps, 0, "%s", out);
    cr_expect_eq(cdone, 0, "%s", out);
    cr_expect_gt(waits, 10, "%s", out);
}

/* `cmd` (its messages too) exits `rc` and says `needle` */
static void expect_cmd(const char *cmd, int rc, const char *needle)
{
    char out[4096];
    int got = tsupport_run_capture(cmd, out, sizeof out);
    cr_expect_eq(got, rc, "%s: exit status %d, %d expected: %s", cmd, got, rc, out);
    cr_expect(strstr(out, needle) != NULL, "%s: no '%s' in: %s", cmd, needle, out);
}

Test(watchdog, the_generators_refuse_to_commit_a_fault_or_a_measurement_bound)
{
    expect_cmd("FP4LR_GEN_FAULT=noleave python3 tools/gen_sm90a.py 2>&1", 2, "never into ptx/sm90a");
    expect_cmd("FP4LR_GEN_FAULT=nohang python3 tools/gen_sm90a.py --list 2>&1", 1, "unknown FP4LR_GEN_FAULT 'nohang'");
    expect_cmd("FP4LR_GEN_PP_FAULT=noleave python3 tools/gen_sm90a_pp.py 2>&1", 2, "never into ptx/sm90a");
    expect_cmd("FP4LR_GEN_PP_FAULT=noturn python3 tools/gen_sm90a_pp.py --outdir ./ptx/sm90a/ 2>&1", 2,
               "never into ptx/sm90a");
    expect_cmd("FP4LR_GEN_WATCHDOG_NS=1000000000 python3 tools/gen_sm90a_pp.py 2>&1", 2, "measurement bound");
    expect_cmd("FP4LR_GEN_WATCHDOG_NS=1000 python3 tools/gen_sm90a.py --list 2>&1", 1, "a bound in nanoseconds");
    /* nothing was written: the committed files still match */
    expect_cmd("python3 tools/gen_sm90a.py --check 2>&1 && python3 tools/gen_sm90a_pp.py --check 2>&1", 0,
               "5 kernels match the generator");
}

/* ---- GPU: planted hangs end in a trap ---- */

struct hang {
    const char *fault; /* FP4LR_GEN_FAULT (FP4LR_GEN_PP_FAULT for a ping-pong kernel) */
    const char *entry; /* the kernel the plan must pick */
    const char *args;  /* fp4lr-check's */
};

static const struct hang HANGS[] = {
    {"noleave", "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4", "--mnk 2048x1024x1024:32 --w-prep inline --swap off"},
    {"noleave", "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_t3", "--mnk 2048x1024x1024 --dense --w-prep off --swap off"},
    {"noleave", "fp4lr_sm90a_nvfp4_dense_m256n256k128_c2_s3_w5",
     "--mnk 2048x1024x1024 --dense --w-prep on --swap off --cluster 2"},
    {"norelease", "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4", "--mnk 2048x1024x1024:32 --w-prep inline --swap off"},
    {"nopublish", "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4", "--mnk 2048x1024x1024:32 --w-prep inline --swap off"},
    /* the ping-pong kernels' own generator; 128 tiles on 132 SMs: consumer 1 has no unit and
     * goes straight to its end */
    {"noleave", "fp4lr_sm90a_nvfp4_fused_m128n128k128_c1_s3_w8_pp", "--mnk 2048x1024x1024:32 --tile-n 128 --swap off"},
};

static int is_pp(const char *entry) { return strstr(entry, "_pp") != NULL; }

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Builds `entry` with `fault` (and the bound `ns`, "" for the committed one) into dir/sm90a
 * beside copies of the committed cubins, runs fp4lr-check `args` from it under timeout 60;
 * returns the status, the output in out and the seconds it took in *secs. */
static int run_hang(const char *dir, const char *fault, const char *ns, const char *entry, const char *args,
                    char *out, size_t cap, double *secs)
{
    char cmd[4096], bdir[1024];
    tsupport_build_dir(bdir, sizeof bdir);
    const int pp = is_pp(entry);
    snprintf(cmd, sizeof cmd,
             "rm -rf %s/sm90a %s/gen && mkdir -p %s/gen && cp -r '%s/ptx/sm90a' %s/sm90a && "
             "%s=%s %s%s python3 tools/%s --outdir %s/gen >/dev/null && "
             "grep -q 'FAULT %s' %s/gen/%s.ptx && "
             "sh tools/ptxas_gate.sh sm_90a %s/gen/%s.ptx %s/sm90a/%s.cubin 2>&1",
             dir, dir, dir, bdir, dir, pp ? "FP4LR_GEN_PP_FAULT" : "FP4LR_GEN_FAULT", fault,
             *ns ? "FP4LR_GEN_WATCHDOG_NS=" : "", ns, pp ? "gen_sm90a_pp.py" : "gen_sm90a.py", dir, fault, dir,
             entry, dir, entry, dir, entry);
    int rc = tsupport_run_capture(cmd, out, cap);
    cr_assert_eq(rc, 0, "the %s kernel %s does not build: %s", fault, entry, out);
    snprintf(cmd, sizeof cmd, "FP4LR_KERNEL_DIR=%s timeout 60 '%s/bin/fp4lr-check' %s --iters 0 2>&1", dir, bdir,
             args);
    double t0 = now_s();
    rc = tsupport_run_capture(cmd, out, cap);
    *secs = now_s() - t0;
    return rc;
}

Test(watchdog_gpu, planted_hangs_trap_instead_of_hanging, .timeout = 900)
{
    fp4lr_ctx *ctx = tsupport_sm90a_or_skip("the watchdog's kernels are sm_90a kernels");
    fp4lr_ctx_destroy(ctx);
    char dir[] = "/tmp/fp4lr-watchdog.XXXXXX", cmd[2048], bdir[1024];
    static char out[1 << 15];
    cr_assert_not_null(mkdtemp(dir));
    tsupport_build_dir(bdir, sizeof bdir);
    for (size_t i = 0; i < sizeof HANGS / sizeof HANGS[0]; i++) {
        const struct hang *h = &HANGS[i];
        /* the plan picks the kernel meant, and the committed one passes */
        snprintf(cmd, sizeof cmd, "timeout 60 '%s/bin/fp4lr-check' %s --iters 0 2>&1", bdir, h->args);
        int rc = tsupport_run_capture(cmd, out, sizeof out);
        cr_expect_eq(rc, 0, "the committed kernel: %s", out);
        cr_expect(strstr(out, h->entry) != NULL, "the plan does not pick %s: %s", h->entry, out);
        double secs = 0;
        rc = run_hang(dir, h->fault, "", h->entry, h->args, out, sizeof out, &secs);
        cr_expect(rc == 3 && strstr(out, "CUDA_ERROR_") != NULL,
                  "%s in %s: exit status %d after %.1f s (3 with a CUDA error expected; 124: it hung): %s", h->fault,
                  h->entry, rc, secs, out);
        /* the launch starts after input generation (well under a second here) and the trap's
         * error reaches the host within a second or so */
        cr_expect(secs >= 4.0 && secs < 12.0, "%s in %s: the trap came after %.1f s (the bound is 4 s)", h->fault,
                  h->entry, secs);
        fprintf(stderr, "watchdog: %s in %s trapped; fp4lr-check took %.2f s (exit %d)\n", h->fault, h->entry, secs,
                rc);
    }
    /* the bound moves the trap: the same hang built with a 1 s bound */
    double small = 0;
    int rc = run_hang(dir, "noleave", "1000000000", HANGS[0].entry, HANGS[0].args, out, sizeof out, &small);
    cr_expect(rc == 3 && strstr(out, "CUDA_ERROR_") != NULL, "1 s bound: exit status %d: %s", rc, out);
    cr_expect(small >= 1.0 && small < 4.0, "1 s bound: fp4lr-check took %.2f s", small);
    fprintf(stderr, "watchdog: noleave with a 1 s bound: fp4lr-check took %.2f s\n", small);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}
