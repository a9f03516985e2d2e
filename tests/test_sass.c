/* CPU suite: the SASS of every built kernel (tools/sass_check.py over nvdisasm): no local
 * memory, wgmma kept and pipelined on sm_90a (at most one WARPGROUP.ARRIVE for two HGMMA), the
 * sm_90a K loop's wgmma descriptors in uniform registers (no R2UR in it),
 * tcgen05.mma kept on sm_100a / sm_100f.  The ptxas gate reads ptxas's report; this reads
 * what ptxas wrote, so a serialised wgmma that the report words differently is still caught.
 * Without nvdisasm (pip nvidia-cuda-nvdisasm; .ci/run installs it) the tests skip, unless
 * FP4LR_REQUIRE_NVDISASM=1 (CI), which makes that a failure. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_cmd.h"

/* sass_check.py's exit status 3: no nvdisasm and not required */
static void skip_without_nvdisasm(int rc, const char *out)
{
    if (rc == 3)
        cr_skip_test("no nvdisasm (python3 -m pip install nvidia-cuda-nvdisasm): %s", out);
}

Test(sass, every_built_kernel_passes, .timeout = 300)
{
    static char out[1 << 15], cmd[8192];
    char dir[1024];
    tsupport_build_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd,
             "n=$(ls '%s'/ptx/sm90a/*.cubin '%s'/ptx/sm100a/*.cubin '%s'/ptx/sm100f/*.cubin | wc -l) && "
             "python3 tools/sass_check.py '%s'/ptx/sm90a/*.cubin '%s'/ptx/sm100a/*.cubin '%s'/ptx/sm100f/*.cubin "
             "> /tmp/fp4lr-sass.$$ 2>&1; rc=$?; grep -c ': ok$' /tmp/fp4lr-sass.$$ | sed \"s/^/ok=/;s/$/ of $n/\"; "
             "grep -v ': ok$' /tmp/fp4lr-sass.$$; rm -f /tmp/fp4lr-sass.$$; exit $rc",
             dir, dir, dir, dir, dir, dir);
    int rc = tsupport_run_capture(cmd, out, sizeof out);
    skip_without_nvdisasm(rc, out);
    cr_expect_eq(rc, 0, "%s", out);
    int ok = 0, n = 0;
    cr_assert_eq(sscanf(out, "ok=%d of %d", &ok, &n), 2, "%s", out);
    cr_expect_gt(n, 100, "the built kernels: %s", out);
    cr_expect_eq(ok, n, "%s", out);
}

/* A planted fault: `build` (shell, in a scratch directory $d) writes the committed kernel as
 * $d/ok<sfx>.cubin and the faulty one as $d/k<sfx>.cubin; sass_check must pass the first, fail
 * the second and say `want`. */
static void expect_planted_caught(const char *build, const char *sfx, const char *want)
{
    char cmd[4096], out[4096];
    snprintf(cmd, sizeof cmd,
             "d=$(mktemp -d) && %s && python3 tools/sass_check.py $d/ok%s.cubin 2>&1; a=$?; "
             "python3 tools/sass_check.py $d/k%s.cubin 2>&1; b=$?; rm -rf $d; echo \"rc=$a,$b\"; "
             "[ $a -eq 3 ] && exit 3; exit 0",
             build, sfx, sfx);
    int rc = tsupport_run_capture(cmd, out, sizeof out);
    skip_without_nvdisasm(rc, out);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "rc=0,1") != NULL, "%s", out);
    cr_expect(strstr(out, want) != NULL, "no '%s' in: %s", want, out);
}

/* The fused ping-pong kernel with its consumers at 216 registers, where ptxas serialises every
 * wgmma, assembled without the gate.  (The cubins keep `_pp` in their names: the K-loop check
 * passes over the ping-pong kernels.) */
Test(sass, serialised_wgmma_is_caught, .timeout = 120)
{
    expect_planted_caught("f=ptx/sm90a/fp4lr_sm90a_nvfp4_fused_m128n128k128_c1_s3_w8_pp.ptx && "
                          "sed -e 's/setmaxnreg.dec.sync.aligned.u32 24;/setmaxnreg.dec.sync.aligned.u32 40;/' "
                          "-e 's/setmaxnreg.inc.sync.aligned.u32 232;/setmaxnreg.inc.sync.aligned.u32 216;/' "
                          "$f > $d/k.ptx && ptxas -arch=sm_90a -o $d/k_pp.cubin $d/k.ptx 2>/dev/null && "
                          "ptxas -arch=sm_90a -o $d/ok_pp.cubin $f",
                          "_pp", "wgmma serialised: 30 WARPGROUP.ARRIVE for 30 HGMMA");
}

/* A fused kernel built with the low-rank issue behind a branch that one consumer thread takes
 * (FP4LR_GEN_EXPERIMENT=noluni,nolrprod: the issue of the kernels before 2026-12-06; the _w_yt
 * consumers of the default kernels issue no low-rank loads at all): ptxas moves the K loop's
 * descriptors with R2UR before every HGMMA. */
Test(sass, k_loop_out_of_uniform_registers_is_caught, .timeout = 120)
{
    expect_planted_caught("k=fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w4_yt && "
                          "FP4LR_GEN_EXPERIMENT=noluni,nolrprod python3 tools/gen_sm90a.py --outdir $d >/dev/null && "
                          "ptxas -arch=sm_90a -o $d/k.cubin $d/$k.ptx && ptxas -arch=sm_90a -o $d/ok.cubin ptx/sm90a/$k.ptx",
                          "", "K loop not uniform: 32 R2UR");
}

/* A timing-only build in which nothing reads the accumulators: no epilogue and no stream-K
 * partial stores (FP4LR_GEN_EXPERIMENT=noepi,sknofix).  ptxas deletes 14 of the dense kernel's
 * 16 wgmmas; measured as a "ceiling" on 2026-12-06, it ran about twice as fast as any kernel
 * can.  sass_check must say so (the planted PTX lies beside its cubin), and
 * tools/experiment_build.sh must refuse the build. */
Test(sass, deleted_wgmmas_are_caught, .timeout = 180)
{
    expect_planted_caught("k=fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4 && "
                          "FP4LR_GEN_EXPERIMENT=noepi,sknofix python3 tools/gen_sm90a.py --outdir $d >/dev/null && "
                          "cp $d/$k.ptx $d/k.ptx && ptxas -arch=sm_90a -o $d/k.cubin $d/k.ptx && "
                          "ptxas -arch=sm_90a -o $d/ok.cubin ptx/sm90a/$k.ptx",
                          "", "ptxas removed wgmmas: 2 HGMMA for the PTX's 16 wgmma.mma_async");
    char out[8192];
    int rc = tsupport_run_capture("d=$(mktemp -d) && sh tools/experiment_build.sh noepi,sknofix $d/x "
                                  "'*nvfp4_dense_m128n256k128_c1_s4_x4.ptx' 2>&1; rc=$?; "
                                  "rm -rf $d; exit $rc",
                                  out, sizeof out);
    if (strstr(out, "no nvdisasm"))
        cr_skip_test("no nvdisasm: %s", out);
    cr_expect_eq(rc, 1, "experiment_build must refuse the build: %s", out);
    cr_expect(strstr(out, "ptxas deleted wgmmas") != NULL, "%s", out);
}
