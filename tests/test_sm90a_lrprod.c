/* CPU suite: the low-rank producer of the fused _w_yt kernels (tools/sm90a_ptx/flags.py LRPROD /
 * LRAFF, the default since 2026-12-06: warp 2 loads the low-rank ring and copies wc / beta onto
 * mbarrier `afull`) keeps the arrive count that synccheck asked for (its first build arrived twice
 * a lane and phase, the non-noinc cp.async.mbarrier.arrive and a plain arrive, and synccheck
 * reported 832 "missing wait" errors): `afull` is initialised to the 32 lanes of warp 2, which
 * arrive on it once each, by cp.async.mbarrier.arrive.noinc, and by nothing else.  The kernels
 * before it (FP4LR_GEN_EXPERIMENT=nolrprod) keep building through the ptxas gate, with the
 * consumers' own issuer.  The measurement build `lrw` (the 256-wide fused _x kernels: the W
 * producer loads the ring after a unit's last W chunk) builds through the gate, its consumers
 * neither wait on `lempty` nor issue, and its W producer loads the ring at both places it loads
 * the tail.  The GPU verdict is bench/results/experiments/README.md's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "support_cmd.h"

#define LRPROD_KERNEL "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w4_yt.ptx"

/* The counts of the PTX lines `grep -c` finds in $f for each pattern of `greps` (shell
 * words, each quoted, name:pattern), one per line as name=count. */
#define COUNT_LOOP "for g in %s; do printf '%%s=' \"${g%%%%:*}\"; grep -c -- \"${g#*:}\" $f; done"

/* The sm_90a kernel `kernel` (a .ptx file name) of `flags`, through tools/experiment_build.sh
 * into a scratch directory; prints `gate=<status>`, then the counts of `greps` in it. */
static int build_and_count(const char *flags, const char *kernel, const char *greps, char *out, size_t cap)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "d=$(mktemp -d) && sh tools/experiment_build.sh %s $d '%s' >/dev/null 2>&1; "
             "echo gate=$?; f=$d/sm90a/%s; " COUNT_LOOP "; rm -rf $d",
             flags, kernel, kernel, greps);
    return tsupport_run_capture(cmd, out, cap);
}

/* The counts of `greps` in the committed kernel `kernel` (a .ptx file name). */
static int committed_count(const char *kernel, const char *greps, char *out, size_t cap)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "f=ptx/sm90a/%s; " COUNT_LOOP, kernel, greps);
    return tsupport_run_capture(cmd, out, cap);
}

static int count_of(const char *out, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "%s=", name);
    const char *p = strstr(out, key);
    int n = -1;
    if (p)
        sscanf(p + strlen(key), "%d", &n);
    return n;
}

static const char PRODUCER_GREPS[] =
    "'init32:\\[%bar_full+[0-9]*\\], 32;   // lraff: afull' "
    "'noinc:cp.async.mbarrier.arrive.noinc.shared::cta.b64' "
    "'plain:cp.async.mbarrier.arrive.shared::cta.b64' "
    "'branch:setp.eq.u32 %p1, %warp, 2;' "
    "'issue:setp.eq.u32 %plissue, %r40, 0;'";

Test(sm90a_lrprod, committed_kernel_arrives_once_a_lane_and_phase)
{
    char out[2048];
    int rc = committed_count(LRPROD_KERNEL, PRODUCER_GREPS, out, sizeof out);
    cr_assert(rc == 0 || rc == 1, "grep: %s", out);
    cr_expect_eq(count_of(out, "init32"), 1, "afull is not initialised to warp 2's 32 lanes: %s", out);
    cr_expect_eq(count_of(out, "branch"), 1, "warp 2 is not the producer: %s", out);
    cr_expect_eq(count_of(out, "noinc"), 1, "not one noinc arrive a lane and unit: %s", out);
    cr_expect_eq(count_of(out, "plain"), 0, "a non-noinc cp.async arrive (a second arrive a phase): %s", out);
    cr_expect_eq(count_of(out, "issue"), 0, "a consumer still issues the low-rank loads: %s", out);
}

/* The kernels before the producer: the consumers copy wc / beta and issue the low-rank loads
 * themselves, and the build still passes the gate. */
Test(sm90a_lrprod, nolrprod_builds_without_a_producer_warp, .timeout = 120)
{
    char out[2048];
    build_and_count("nolrprod", LRPROD_KERNEL, PRODUCER_GREPS, out, sizeof out);
    cr_expect(strstr(out, "gate=0") != NULL, "the nolrprod kernel fails tools/ptxas_gate.sh: %s", out);
    cr_expect_eq(count_of(out, "init32"), 0, "%s", out);
    cr_expect_eq(count_of(out, "branch"), 0, "%s", out);
    cr_expect_eq(count_of(out, "noinc"), 0, "%s", out);
    cr_expect_eq(count_of(out, "issue"), 1, "the consumer issuer is gone from the nolrprod kernel: %s", out);
}

/* lrw: in the 256-wide fused _x kernel the W producer loads the ring (its own `lempty` waits,
 * at a unit's end and where the consumers' first fill was the whole first unit); the consumers
 * keep the issue code for ptxas's register allocation, with a predicate no thread has, and
 * without its `lempty` wait.  The committed kernel (no lrw) is the consumers' issuer's. */
static const char LRW_GREPS[] =
    "'wchunk:^L_lrw_chunk_[0-9]*:' "
    "'wwait:^L_wait_lempty_w_[0-9]*:' "
    "'cwait:^L_wait_lempty_[0-9]*:' "
    "'never:setp.eq.u32 %plissue, %r40, 0xffffffff;' "
    "'issuer:setp.eq.u32 %plissue, %r40, 0;'";

Test(sm90a_lrprod, lrw_builds_and_the_w_producer_loads_the_ring, .timeout = 120)
{
    char out[2048];
    build_and_count("lrw", "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4.ptx", LRW_GREPS, out, sizeof out);
    cr_expect(strstr(out, "gate=0") != NULL, "the lrw kernel fails tools/ptxas_gate.sh: %s", out);
    cr_expect_eq(count_of(out, "wchunk"), 2, "the W producer does not load the ring at both places: %s", out);
    cr_expect_eq(count_of(out, "wwait"), 2, "%s", out);
    cr_expect_eq(count_of(out, "cwait"), 0, "a consumer still waits on lempty: %s", out);
    cr_expect_eq(count_of(out, "never"), 1, "the consumers' issue is not predicated off: %s", out);
    cr_expect_eq(count_of(out, "issuer"), 0, "a consumer still issues: %s", out);
}

Test(sm90a_lrprod, committed_x_kernel_keeps_the_consumer_issuer)
{
    char out[2048];
    int rc = committed_count("fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4.ptx", LRW_GREPS, out, sizeof out);
    cr_assert(rc == 0 || rc == 1, "grep: %s", out);
    cr_expect_eq(count_of(out, "wchunk"), 0, "%s", out);
    cr_expect_gt(count_of(out, "cwait"), 0, "%s", out);
    cr_expect_eq(count_of(out, "issuer"), 1, "%s", out);
}
