/* tools/raw_launch: the launch of ptx/ABI.md with the driver API alone.
 *
 * CPU: without a driver it says so and exits 0 (3 with --require-gpu); bad arguments exit 2.
 * GPU (sm_90): on every sm_90a family it passes validation against the double reference and
 * its outputs (parameters by pointer array, and as one packed buffer) agree bitwise with the
 * library's fp4lr_gemm.  Skips, naming the reason, without an sm_90 GPU. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support_cmd.h"
#include "support_gpu.h"

/* Runs raw_launch (beside this binary, in <B>/bin) on the kernels of <B>/ptx with `args`
 * (stderr folded in); returns the exit status, output in out. */
static int raw_launch(const char *args, char *out, size_t cap)
{
    char dir[1024], tool[1200], cmd[3000];
    tsupport_build_dir(dir, sizeof dir);
    snprintf(tool, sizeof tool, "%s/bin/raw_launch", dir);
    cr_assert_eq(access(tool, X_OK), 0, "%s is not built (make tools)", tool);
    snprintf(cmd, sizeof cmd, "'%s' --kernel-dir '%s/ptx' %s 2>&1", tool, dir, args);
    return tsupport_run_capture(cmd, out, cap);
}

Test(raw_launch, without_a_driver_says_so)
{
    setenv("FP4LR_LIBCUDA", "/nonexistent/fp4lr-test/libcuda.so.1", 1);
    char out[4096];
    cr_expect_eq(raw_launch("", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "no GPU: no CUDA driver") != NULL, "%s", out);
    cr_expect(strstr(out, "nothing was run") != NULL, "%s", out);
    cr_expect_eq(raw_launch("--require-gpu", out, sizeof out), 3, "%s", out);
}

Test(raw_launch, bad_arguments_exit_2)
{
    char out[4096];
    cr_expect_eq(raw_launch("--format fp8", out, sizeof out), 2, "%s", out);
    cr_expect_eq(raw_launch("--mnk 300x520", out, sizeof out), 2, "%s", out);
    cr_expect_eq(raw_launch("--mnk 300x520x100", out, sizeof out), 2, "K not a multiple of 64: %s", out);
    cr_expect(strstr(out, "K") != NULL, "the message names K: %s", out);
    cr_expect_eq(raw_launch("--cluster 3", out, sizeof out), 2, "%s", out);
    cr_expect_eq(raw_launch("--w-prep maybe", out, sizeof out), 2, "%s", out);
    cr_expect_eq(raw_launch("--mnk 300x520x512:32 --dense", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "excludes a rank in --mnk") != NULL, "%s", out);
    cr_expect_eq(raw_launch("--mnk 300x520x512abc", out, sizeof out), 2, "trailing text: %s", out);
    cr_expect(strstr(out, "--mnk 300x520x512abc") != NULL, "the message echoes the value: %s", out);
    cr_expect_eq(raw_launch("--mnk 300x520x100", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "[K_MULTIPLE]") != NULL, "the problem's rule is named: %s", out);
    cr_expect_eq(raw_launch("--kernel-dir --dense", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "missing value") != NULL, "%s", out);
}

/* Every sm_90a family, both formats, ragged edges, the affine-only and tiny problems. */
static const char *const gpu_cases[] = {
    "",                                                 /* fused NVFP4 300x520x512, r 32, wc, beta */
    "--format mxfp4 --mnk 257x300x640:128",             /* fused MXFP4, streamed low-rank ring */
    "--mnk 300x520x512:0",                              /* fused, affine only */
    "--mnk 1x7x128:16 --format mxfp4 --no-affine",      /* fused, one output row */
    "--dense",                                          /* dense, cluster 1 */
    "--dense --cluster 2 --format mxfp4 --mnk 520x300x640", /* dense pair (W prepared: its _w kernel) */
    "--dense --w-prep on --mnk 300x520x448",            /* W prepared (ABI.md §4.1), dense NVFP4 */
    "--w-prep on --format mxfp4 --mnk 257x300x640:128", /* W prepared, fused MXFP4 */
    "--dense --mnk 1536x520x448",                       /* auto plans _x (not packed): runs prepared */
};

Test(raw_launch, agrees_with_the_library_bitwise, .timeout = 600)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
    tsupport_gpu_arch_or_skip(ctx, "sm90a");
    fp4lr_ctx_destroy(ctx);
    static char out[65536];
    for (size_t i = 0; i < sizeof gpu_cases / sizeof gpu_cases[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "--require-gpu --seed %zu %s", 40 + i, gpu_cases[i]);
        int rc = raw_launch(args, out, sizeof out);
        cr_expect_eq(rc, 0, "raw_launch %s exited %d:\n%s", args, rc, out);
        cr_expect(strstr(out, "validate: PASS") != NULL, "raw_launch %s:\n%s", args, out);
        cr_expect(strstr(out, "packed parameter buffer vs pointer array: bitwise identical") != NULL,
                  "raw_launch %s:\n%s", args, out);
        cr_expect(strstr(out, "fp4lr_gemm vs raw launch: bitwise identical") != NULL, "raw_launch %s:\n%s", args,
                  out);
        const int auto_x = strstr(args, "1536x") != NULL;
        const int pair = strstr(args, "--cluster 2") != NULL; /* AUTO prepares W for the pair */
        cr_expect_eq(strstr(out, "prepared W: ") != NULL, strstr(args, "--w-prep on") != NULL || auto_x || pair,
                     "the W preparation runs exactly for the W-prepared cases: raw_launch %s:\n%s", args, out);
        cr_expect_eq(strstr(out, "which raw_launch does not pack: running --w-prep on") != NULL, auto_x,
                     "raw_launch %s:\n%s", args, out);
    }
}
