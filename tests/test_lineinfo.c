/* CPU suite: line information for profiling (tools/ptx_lineinfo.py, tools/lineinfo_build.sh).
 *
 * A kernel gets one `.loc` per instruction naming that instruction's line in the committed
 * file, nothing else changes, ptxas assembles it with -lineinfo (a line table in the cubin),
 * and bad input is refused with the documented status. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_cmd.h"

#define KERNEL "ptx/sm90a/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_t3.ptx"

static void make_tmp(char *dir)
{
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_tmp(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(lineinfo, one_loc_per_instruction_and_nothing_else, .timeout = 60)
{
    char dir[] = "/tmp/fp4lr-lineinfo-XXXXXX", cmd[2048], out[4096];
    make_tmp(dir);
    snprintf(cmd, sizeof cmd, "python3 tools/ptx_lineinfo.py " KERNEL " %s/k.ptx", dir);
    int rc = tsupport_run_capture(cmd, out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    /* as many .loc lines as instruction lines in the kernel (code before any comment that is
     * not a directive, label or brace), and the rest of the file unchanged */
    snprintf(cmd, sizeof cmd,
             "n=$(sed 's#//.*##' " KERNEL " | awk 'NF && $1 !~ /^[.{}()]/ && $0 !~ /:[ \\t]*$/' | wc -l); "
             "l=$(grep -c '^\t\\.loc 1 [0-9]* 1$' %s/k.ptx); test \"$n\" -eq \"$l\" && test \"$l\" -gt 1000 && "
             "grep -v '^\t\\.loc 1 \\|^\\.file 1 ' %s/k.ptx | cmp -s - " KERNEL " && "
             "grep -q '^\\.file 1 \"" KERNEL "\"$' %s/k.ptx && echo ok",
             dir, dir, dir);
    rc = tsupport_run_capture(cmd, out, sizeof out);
    cr_expect(rc == 0 && strstr(out, "ok"), "instruction lines and .loc lines differ, or more changed: %s", out);
    /* the .loc of the first wgmma names its own line in the committed file */
    snprintf(cmd, sizeof cmd,
             "want=$(grep -n 'wgmma.mma_async' " KERNEL " | head -1 | cut -d: -f1); "
             "got=$(grep -B1 'wgmma.mma_async' %s/k.ptx | head -1 | awk '{print $3}'); test \"$want\" = \"$got\" && echo ok",
             dir);
    rc = tsupport_run_capture(cmd, out, sizeof out);
    cr_expect(rc == 0 && strstr(out, "ok"), "the wgmma's .loc does not name its line: %s", out);
    /* ptxas assembles it with a line table, through the gate (no spills, no serialising warning) */
    snprintf(cmd, sizeof cmd,
             "PTXAS_FLAGS=-lineinfo sh tools/ptxas_gate.sh sm_90a %s/k.ptx %s/k.cubin && "
             "grep -c debug_line %s/k.cubin", dir, dir, dir);
    rc = tsupport_run_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 0, "ptxas or the gate refused the kernel with line information: %s", out);
    cr_expect_gt(atoi(out), 0, "the cubin has no line table");
    remove_tmp(dir);
}

Test(lineinfo, bad_input_is_refused)
{
    char out[2048];
    int rc = tsupport_run_capture("python3 tools/ptx_lineinfo.py README.md /tmp/fp4lr-lineinfo-none.ptx 2>&1", out,
                                  sizeof out);
    cr_expect_eq(rc, 1, "%s", out);
    cr_expect_not_null(strstr(out, "not a PTX kernel"), "%s", out);
    rc = tsupport_run_capture("python3 tools/ptx_lineinfo.py /nonexistent.ptx /tmp/fp4lr-lineinfo-none.ptx 2>&1",
                              out, sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect_not_null(strstr(out, "cannot read"), "%s", out);
    rc = tsupport_run_capture("python3 tools/ptx_lineinfo.py 2>&1", out, sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    rc = tsupport_run_capture("sh tools/lineinfo_build.sh /nonexistent /tmp/fp4lr-lineinfo-none 2>&1", out, sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect_not_null(strstr(out, "holds no .ptx files"), "%s", out);
    cr_expect_eq(system("rm -rf /tmp/fp4lr-lineinfo-none /tmp/fp4lr-lineinfo-none.ptx"), 0);
}

Test(lineinfo, build_script_makes_a_kernel_dir, .timeout = 60)
{
    char dir[] = "/tmp/fp4lr-lineinfo-XXXXXX", cmd[1024], out[2048];
    make_tmp(dir);
    snprintf(cmd, sizeof cmd,
             "mkdir %s/src && cp " KERNEL " %s/src/ && sh tools/lineinfo_build.sh %s/src %s/out && "
             "ls %s/out/sm90a/*.cubin | wc -l",
             dir, dir, dir, dir, dir);
    int rc = tsupport_run_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect_not_null(strstr(out, "1 kernels of"), "%s", out);
    cr_expect_not_null(strstr(out, "\n1\n"), "one cubin expected: %s", out);
    remove_tmp(dir);
}
