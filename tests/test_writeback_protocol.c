/* CPU suite: the sm_90a epilogues' staging-buffer protocol (tools/writeback_check.py).
 *
 * A chunk of the epilogue must not write a staging buffer that a bulk tensor store may still
 * be reading, across tiles too: the narrow 128 x 160 tile's five chunks over two buffers end
 * on buffer 0, so a tile's chunk 0 has to wait for every store of the tile before (a race
 * found by review on 2026-12-04, in every committed narrow kernel; a CPU never shows it and
 * a GPU only rarely).  The checker reads the PTX, not the generator's arithmetic; it is shown
 * to catch the planted faults below. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_cmd.h"

/* a scratch directory from the template in dir, and its removal */
static void scratch(char *dir) { cr_assert_not_null(mkdtemp(dir)); }

static void scratch_remove(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -r -- '%s'", dir);
    cr_expect_eq(system(cmd), 0, "%s", cmd);
}

static int count_lines_with(const char *out, const char *needle)
{
    int n = 0;
    for (const char *p = out; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

Test(writeback_protocol, every_committed_tiled_kernel_is_safe, .timeout = 120)
{
    static char out[1 << 16];
    char files[64];
    int rc = tsupport_run_capture("ls ptx/sm90a/fp4lr_sm90a_*_m*.ptx | wc -l", files, sizeof files);
    cr_assert_eq(rc, 0);
    const int n = atoi(files);
    cr_assert_gt(n, 60, "expected the committed sm_90a tiled kernels, found %d", n);
    rc = tsupport_run_py_tool("writeback_check.py", "ptx/sm90a/fp4lr_sm90a_*_m*.ptx", out, sizeof out);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect_eq(count_lines_with(out, ": ok\n"), n, "not every kernel checked ok: %s", out);
}

/* The planted faults: chunk 0 of a narrow kernel back to wait_group.read 1 (the race as
 * committed before the fix); a 256-wide chunk allowed one more group; a wait with no bar.sync
 * after it before the buffer is written. */
Test(writeback_protocol, planted_faults_are_caught, .timeout = 60)
{
    char dir[] = "/tmp/fp4lr-wbcheck-XXXXXX", cmd[2048], out[8192];
    scratch(dir);
    snprintf(cmd, sizeof cmd,
             "K=ptx/sm90a/fp4lr_sm90a_nvfp4_fused_m128n160k128_c1_s4_x5_yt.ptx; "
             "grep -c 'wait_group.read 0;' $K && "
             "sed '0,/wait_group.read 0;/s//wait_group.read 1;/' $K > %s/narrow.ptx && "
             "sed '0,/@%%p2 cp.async.bulk.wait_group.read 1;/s//@%%p2 cp.async.bulk.wait_group.read 2;/' "
             "ptx/sm90a/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4.ptx > %s/wide.ptx && "
             "awk '/\\/\\/ chunk 2$/ {c=1} c && /^\\tbar.sync %%r46, 128;$/ && !done {done=1; next} {print}' "
             "ptx/sm90a/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4.ptx > %s/nobar.ptx && "
             "! cmp -s %s/nobar.ptx ptx/sm90a/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4.ptx",
             dir, dir, dir, dir);
    int rc = tsupport_run_capture(cmd, out, sizeof out);
    cr_assert_eq(rc, 0, "could not plant the faults: %s", out);

    snprintf(cmd, sizeof cmd, "%s/narrow.ptx", dir);
    rc = tsupport_run_py_tool("writeback_check.py", cmd, out, sizeof out);
    cr_expect_eq(rc, 1, "%s", out);
    cr_expect(strstr(out, "tile 1 chunk 0: writes the buffer") != NULL, "%s", out);

    snprintf(cmd, sizeof cmd, "%s/wide.ptx", dir);
    rc = tsupport_run_py_tool("writeback_check.py", cmd, out, sizeof out);
    cr_expect_eq(rc, 1, "%s", out);
    cr_expect(strstr(out, "chunk 0: writes the buffer") != NULL, "%s", out);

    snprintf(cmd, sizeof cmd, "%s/nobar.ptx", dir);
    rc = tsupport_run_py_tool("writeback_check.py", cmd, out, sizeof out);
    cr_expect_eq(rc, 1, "%s", out);
    cr_expect(strstr(out, "chunk 2: the buffer at") != NULL && strstr(out, "without a bar.sync") != NULL, "%s",
              out);
    scratch_remove(dir);
}

/* The measurement builds that change the buffers (w3wb: three or four buffers a tile of four
 * chunks) keep the protocol too. */
Test(writeback_protocol, w3wb_measurement_build_is_safe, .timeout = 120)
{
    char dir[] = "/tmp/fp4lr-wbcheck-XXXXXX", cmd[1024], out[8192];
    scratch(dir);
    snprintf(cmd, sizeof cmd,
             "FP4LR_GEN_EXPERIMENT=w3wb,noxself python3 tools/gen_sm90a.py --outdir %s >/dev/null && "
             "python3 tools/writeback_check.py %s/*_x4*.ptx",
             dir, dir);
    int rc = tsupport_run_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect_eq(count_lines_with(out, ": ok\n"), 12, "%s", out);
    cr_expect(strstr(out, "fused_m128n256k128_c1_s3_x4.ptx: ok") != NULL, "%s", out);
    scratch_remove(dir);
}

Test(writeback_protocol, bad_input_is_refused)
{
    char out[4096];
    int rc = tsupport_run_py_tool("writeback_check.py", "/nonexistent/k.ptx", out, sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect(strstr(out, "cannot read") != NULL, "%s", out);
    /* the preparation kernel has no tile epilogue */
    rc = tsupport_run_py_tool("writeback_check.py", "ptx/sm90a/fp4lr_sm90a_nvfp4_wprep.ptx", out, sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect(strstr(out, "no epilogue") != NULL, "%s", out);
    rc = tsupport_run_py_tool("writeback_check.py", "--tiles 1 ptx/sm90a/fp4lr_sm90a_nvfp4_wprep.ptx", out,
                              sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect(strstr(out, "--tiles must be 2 or more") != NULL, "%s", out);
}
