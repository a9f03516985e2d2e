/* CPU suite: the low-rank producer of the fused _w_yt kernels (tools/sm90a_ptx/flags.py LRPROD /
 * LRAFF, the default since 2026-12-06: warp 2 loads the low-rank ring and copies wc / beta onto
 * mbarrier `afull`) keeps the arrive count that synccheck asked for (its first build arrived twice
 * a lane and phase, the non-noinc cp.async.mbarrier.arrive and a plain arrive, and synccheck
 * reported 832 "missing wait" errors): `afull` is initialised to the 32 lanes of warp 2, which
 * arrive on it once each, by cp.async.mbarrier.arrive.noinc, and by nothing else.  The kernels
 * before it (FP4LR_GEN_EXPERIMENT=nolrprod) keep building through the ptxas gate, with the
 * consumers' own issuer.  The GPU verdict is bench/results/experiments/README.md's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "support_cmd.h"

#define LRPROD_KERNEL "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w4_yt.ptx"

/* The counts of the PTX lines `grep -c` finds in $f for each pattern of `greps` (shell
 * words, each quoted, name:pattern), one per line as name=count. */
#define COUNT_LOOP "for g in %s; do printf '%%s=' \"${g%%%%:*}\"; grep -c -- \"${g#*:}\" $f; done"

/* The fused NVFP4 _w4_yt kernel of `flags`, through tools/experiment_build.sh into a scratch
 * directory; prints `gate=<status>`, then the counts of `greps` in it. */
static int build_and_count(const char *flags, const char *greps, char *out, size_t cap)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "d=$(mktemp -d) && sh tools/experiment_build.sh %s $d '" LRPROD_KERNEL "' >/dev/null 2>&1; "
             "echo gate=$?; f=$d/sm90a/" LRPROD_KERNEL "; " COUNT_LOOP "; rm -rf $d",
             flags, greps);
    return tsupport_run_capture(cmd, out, cap);
}

/* The counts of `greps` in the committed kernel. */
static int committed_count(const char *greps, char *out, size_t cap)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "f=ptx/sm90a/" LRPROD_KERNEL "; " COUNT_LOOP, greps);
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
    int rc = committed_count(PRODUCER_GREPS, out, sizeof out);
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
    build_and_count("nolrprod", PRODUCER_GREPS, out, sizeof out);
    cr_expect(strstr(out, "gate=0") != NULL, "the nolrprod kernel fails tools/ptxas_gate.sh: %s", out);
    cr_expect_eq(count_of(out, "init32"), 0, "%s", out);
    cr_expect_eq(count_of(out, "branch"), 0, "%s", out);
    cr_expect_eq(count_of(out, "noinc"), 0, "%s", out);
    cr_expect_eq(count_of(out, "issue"), 1, "the consumer issuer is gone from the nolrprod kernel: %s", out);
}
