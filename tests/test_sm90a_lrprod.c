/* CPU suite: the measurement build `lraff` (tools/sm90a_ptx/flags.py LRPROD / LRAFF: warp 2 of
 * the fused _w_yt kernels loads the low-rank ring and copies wc / beta onto mbarrier `afull`)
 * keeps building through the ptxas gate, and keeps the arrive count that synccheck asked for
 * (2026-12-06: each lane had arrived twice a phase, the non-noinc cp.async.mbarrier.arrive and
 * a plain arrive, and synccheck reported 832 "missing wait" errors): `afull` is initialised to
 * the 32 lanes of warp 2, which arrive on it once each, by cp.async.mbarrier.arrive.noinc, and
 * by nothing else.  The GPU verdict on the build is bench/results/experiments/README.md's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "support_cmd.h"

/* The fused NVFP4 _w4_yt kernel of `flags`, through tools/experiment_build.sh into a scratch
 * directory; prints `gate=<status>`, then the counts of the PTX lines `grep -c` finds for each
 * pattern of `greps` (shell words, each quoted), one per line as name=count. */
static int build_and_count(const char *flags, const char *greps, char *out, size_t cap)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "d=$(mktemp -d) && sh tools/experiment_build.sh %s $d "
             "'fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w4_yt.ptx' >/dev/null 2>&1; echo gate=$?; "
             "f=$d/sm90a/fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w4_yt.ptx; "
             "for g in %s; do printf '%%s=' \"${g%%%%:*}\"; grep -c -- \"${g#*:}\" $f; done; rm -rf $d",
             flags, greps);
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

Test(sm90a_lrprod, lraff_builds_and_each_lane_arrives_once_a_phase, .timeout = 120)
{
    char out[2048];
    build_and_count("lraff",
                    "'init32:\\[%bar_full+[0-9]*\\], 32;   // lraff: afull' "
                    "'noinc:cp.async.mbarrier.arrive.noinc.shared::cta.b64' "
                    "'plain:cp.async.mbarrier.arrive.shared::cta.b64' "
                    "'branch:setp.eq.u32 %p1, %warp, 2;'",
                    out, sizeof out);
    cr_expect(strstr(out, "gate=0") != NULL, "the lraff kernel fails tools/ptxas_gate.sh: %s", out);
    cr_expect_eq(count_of(out, "init32"), 1, "afull is not initialised to warp 2's 32 lanes: %s", out);
    cr_expect_eq(count_of(out, "branch"), 1, "warp 2 is not the producer: %s", out);
    cr_expect_eq(count_of(out, "noinc"), 1, "not one noinc arrive a lane and unit: %s", out);
    cr_expect_eq(count_of(out, "plain"), 0, "a non-noinc cp.async arrive (a second arrive a phase): %s", out);
}

/* The committed kernel has none of it: its consumers copy wc / beta and issue the low-rank
 * loads themselves. */
Test(sm90a_lrprod, committed_kernel_has_no_producer_warp)
{
    char out[1024];
    int rc = tsupport_run_capture("f=ptx/sm90a/fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w4_yt.ptx; "
                                  "printf 'cpasync=%s branch=%s issue=%s\\n' "
                                  "$(grep -c 'cp.async.mbarrier.arrive' $f) "
                                  "$(grep -c 'setp.eq.u32 %p1, %warp, 2;' $f) "
                                  "$(grep -c 'setp.eq.u32 %plissue, %r40, 0;' $f)",
                                  out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect_eq(count_of(out, "cpasync"), 0, "%s", out);
    cr_expect_eq(count_of(out, "branch"), 0, "%s", out);
    cr_expect_eq(count_of(out, "issue"), 1, "the consumer issuer is gone from the committed kernel: %s", out);
}
