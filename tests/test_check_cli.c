/* build/bin/fp4lr-check's command line: --help, the rules of bad arguments, the CPU path
 * without a GPU, a device that is there but broken (an error in every tool, not a dry run), and
 * on an sm_90a GPU --repeat (launches into a poisoned Y compared bit for
 * bit with the validated one) on the transform and the W-prepared stream-K paths. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_cmd.h"
#include "support_gpu.h"

static int check(const char *args, char *out, size_t cap) { return tsupport_run_bin("fp4lr-check", args, out, cap); }

Test(check_cli, help_and_bad_arguments)
{
    static char out[16384];
    cr_assert_eq(check("--help", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "--repeat N") != NULL, "%s", out);
    cr_expect_eq(check("--repeat -1", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "repeat must be 0..100000") != NULL, "%s", out);
    cr_expect_eq(check("--repeat 100001", out, sizeof out), 2, "%s", out);
    cr_expect_eq(check("--repeat", out, sizeof out), 2, "a flag without its value: %s", out);
    cr_expect_eq(check("--mnk 0x8x8 --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect_eq(check("--swap maybe --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "swap must be auto, on or off") != NULL, "%s", out);
}

/* A driver whose device exists but cannot give a context (tests/data/broken_libcuda.c, built
 * here): every tool reports the driver's error and exits non-zero; only "no driver", "no
 * device" and "driver too old" are a machine without a GPU (fp4lr-check ran its CPU-only part
 * and exited 0 here until 2026-12-06).  The same tools without FP4LR_LIBCUDA on a machine
 * without a GPU dry-run (the other tests). */
Test(check_cli, a_broken_device_is_an_error_not_a_dry_run)
{
    char dir[] = "/tmp/fp4lr-broken-driver.XXXXXX", cmd[4096], bdir[1024];
    static char out[16384];
    if (tsupport_run_capture("command -v ${CC:-cc} >/dev/null 2>&1", out, sizeof out) != 0)
        cr_skip_test("no C compiler here to build tests/data/broken_libcuda.c");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "${CC:-cc} -shared -fPIC -o %s/libcuda.so.1 tests/data/broken_libcuda.c 2>&1", dir);
    cr_assert_eq(tsupport_run_capture(cmd, out, sizeof out), 0, "the fake driver does not build: %s", out);
    tsupport_build_dir(bdir, sizeof bdir);
    static const struct {
        const char *tool, *args;
        int rc;
    } runs[] = {
        {"fp4lr-check", "--mnk 256x256x256", 3},
        {"fp4lr-check", "--mnk 256x256x256:32 --iters 0", 3},
        {"fp4lr-bench", "--shape flux-out --quick --no-json", 3},
        {"fp4lr-info", "", 1},
        {"raw_launch", "", 3},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        snprintf(cmd, sizeof cmd, "FP4LR_LIBCUDA=%s/libcuda.so.1 '%s/bin/%s' %s 2>&1", dir, bdir, runs[i].tool,
                 runs[i].args);
        int rc = tsupport_run_capture(cmd, out, sizeof out);
        cr_expect_eq(rc, runs[i].rc, "%s %s: exit status %d, %d expected: %s", runs[i].tool, runs[i].args, rc,
                     runs[i].rc, out);
        cr_expect(strstr(out, "cuDevicePrimaryCtxRetain") != NULL || strstr(out, "a driver call failed") != NULL,
                  "%s does not report the failing call: %s", runs[i].tool, out);
        cr_expect(strstr(out, "no kernel was run") == NULL && strstr(out, "would run") == NULL,
                  "%s fell back to its dry run: %s", runs[i].tool, out);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* --swap: the plan names the _yt kernel and says what it computes; the pair is refused by the
 * rule, not crashed on. */
Test(check_cli, swap_plans)
{
    static char out[16384];
    cr_assert_eq(check("--shape sana-qkv --dense --plan-only", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "entry: fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5_yt") != NULL, "%s", out);
    cr_expect(strstr(out, "swapped: the kernel computes Y^T") != NULL, "%s", out);
    cr_assert_eq(check("--shape sana-qkv --dense --pdl off --plan-only", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "entry: fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt") != NULL, "%s", out);
    cr_assert_eq(check("--shape sana-qkv --dense --swap off --plan-only", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "_yt") == NULL, "%s", out);
    cr_expect_neq(check("--shape sana-qkv --swap on --cluster 2 --plan-only", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "[FP4LR_E_UNSUPPORTED SWAP]") != NULL, "%s", out);
}

/* --swap on --w-prep on: the prepared swapped plan (_w<n>_yt; sana-out on 132 SMs the narrow
 * tile), launched as the preparation's programmatic dependent unless --pdl off; --pdl on
 * elsewhere is refused by its rule, a bad value names the choices. */
Test(check_cli, swapped_prepared_plans)
{
    static char out[16384];
    cr_assert_eq(check("--shape sana-qkv --swap on --w-prep on --plan-only", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "entry: fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w4_yt") != NULL, "%s", out);
    cr_expect(strstr(out, "A (the kernel's W) prepared: fp4lr_sm90a_nvfp4_wprep_pdl converts A once per launch") != NULL,
              "%s", out);
    cr_expect(strstr(out, "programmatic dependent") != NULL, "%s", out);
    cr_assert_eq(check("--shape sana-qkv --dense --swap on --w-prep on --pdl off --plan-only", out, sizeof out), 0,
                 "%s", out);
    cr_expect(strstr(out, "entry: fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5_yt") != NULL, "%s", out);
    cr_expect(strstr(out, "fp4lr_sm90a_nvfp4_wprep converts A") != NULL, "%s", out);
    cr_expect(strstr(out, "programmatic dependent") == NULL, "%s", out);
    cr_expect_eq(check("--shape flux-qkv --pdl on --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "[FP4LR_E_UNSUPPORTED PDL]") != NULL, "%s", out);
    cr_assert_eq(check("--shape sana-out --swap on --w-prep on --sm-count 132 --plan-only", out, sizeof out), 0, "%s",
                 out);
    cr_expect(strstr(out, "entry: fp4lr_sm90a_nvfp4_fused_m128n160k128_c1_s4_w5_yt") != NULL, "%s", out);
    cr_expect_eq(check("--shape sana-qkv --pdl maybe --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "pdl must be auto, on or off") != NULL, "%s", out);
}

/* --tile-n 128: the NVFP4 ping-pong plans (W prepared, whole tiles) and their budgets, dense
 * (also the forced 4-stage layout) and fused (a low-rank ring per consumer), and the plans its
 * rule refuses, each naming why. */
Test(check_cli, pingpong_tile_plans)
{
    static char out[1 << 16];
    cr_assert_eq(check("--mnk 4608x3072x3072 --dense --tile-n 128 --plan-only --sm-count 132", out, sizeof out), 0,
                 "%s", out);
    cr_expect(strstr(out, "entry: fp4lr_sm90a_nvfp4_dense_m128n128k128_c1_s3_w10_pp") != NULL, "%s", out);
    cr_expect(strstr(out, "schedule: dp") != NULL, "%s", out);
    cr_expect(strstr(out, "225280 B dynamic shared memory, 864 tiles of 128x128") != NULL, "%s", out);
    cr_expect(strstr(out, "W prepared: fp4lr_sm90a_nvfp4_wprep") != NULL, "%s", out);
    cr_assert_eq(check("--mnk 4608x3072x3072 --dense --tile-n 128 --stages 4 --transform-slots 8 --plan-only", out,
                       sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "entry: fp4lr_sm90a_nvfp4_dense_m128n128k128_c1_s4_w8_pp") != NULL, "%s", out);
    cr_expect(strstr(out, "201728 B dynamic shared memory") != NULL, "%s", out);
    /* --stages 4 alone solves to 9 slots, which is not built */
    cr_expect_eq(check("--mnk 4608x3072x3072 --dense --tile-n 128 --stages 4 --plan-only", out, sizeof out), 2,
                 "%s", out);
    cr_expect(strstr(out, "no dense ping-pong kernel is built for 4 main stages and 9 W slots") != NULL, "%s", out);
    cr_assert_eq(check("--shape flux-qkv --tile-n 128 --plan-only", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "entry: fp4lr_sm90a_nvfp4_fused_m128n128k128_c1_s3_w8_pp") != NULL, "%s", out);
    cr_expect(strstr(out, "L chunk (bf16), 2 rings") != NULL, "%s", out);
    cr_expect(strstr(out, "total 227328 B") != NULL, "%s", out);
    static const struct {
        const char *args, *why;
    } refused[] = {
        {"--mnk 4608x3072x3072 --dense --format mxfp4", "this plan is mxfp4"},
        {"--mnk 4608x3072x3072 --dense --w-prep off", "this plan has w_prep off"},
        {"--mnk 4608x3072x3072 --dense --w-prep inline", "this plan has w_prep inline"},
        {"--mnk 4608x3072x3072 --dense --schedule sk", "this plan has schedule sk"},
        {"--mnk 4608x3072x3072 --dense --swap on", "this plan is swapped"},
        {"--mnk 4608x3072x3072 --dense --cluster 2", "this plan has cluster 2"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "%s --tile-n 128 --plan-only", refused[i].args);
        cr_expect_eq(check(args, out, sizeof out), 2, "%s: %s", args, out);
        cr_expect(strstr(out, "tile_n = 128 is the sm_90a ping-pong tile") != NULL && strstr(out, refused[i].why),
                  "%s: %s", args, out);
    }
}

/* --tile-n and --sm-count: sana-out planned for 132 SMs takes the narrow swapped tile (126
 * tiles of 128 x 160), --tile-n 256 keeps the wide one, a plan that does not swap refuses 160
 * by its rule, and bad values are refused. */
Test(check_cli, narrow_tile_plans)
{
    static char out[16384];
    cr_assert_eq(check("--shape sana-out --plan-only --sm-count 132", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "entry: fp4lr_sm90a_nvfp4_fused_m128n160k128_c1_s4_w5_yt") != NULL, "%s", out);
    cr_expect(strstr(out, "126 tiles of 128x160") != NULL, "%s", out);
    cr_assert_eq(check("--shape sana-out --plan-only --sm-count 132 --tile-n 256", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "entry: fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w4_yt") != NULL, "%s", out);
    cr_assert_eq(check("--shape sana-out --plan-only --sm-count 132 --pdl off", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "entry: fp4lr_sm90a_nvfp4_fused_m128n160k128_c1_s4_x5_yt") != NULL, "%s", out);
    cr_expect_eq(check("--shape flux-qkv --plan-only --tile-n 160", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "[FP4LR_E_UNSUPPORTED TILE_N]") != NULL, "%s", out);
    cr_expect_eq(check("--shape sana-out --plan-only --tile-n 192", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "tile-n must be auto, 256, 160 or 128") != NULL, "%s", out);
    cr_expect_eq(check("--shape sana-out --plan-only --sm-count 0", out, sizeof out), 2, "%s", out);
}

Test(check_cli, plan_only_prints_the_plan)
{
    static char out[16384];
    cr_assert_eq(check("--mnk 300x520x448 --dense --plan-only", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_") != NULL, "%s", out);
}

/* A plan whose kernel is not built (a forced stage count the solver allows) says so. */
Test(check_cli, plan_only_names_a_kernel_that_is_not_built)
{
    static char out[16384];
    cr_assert_eq(check("--stages 9 --plan-only", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "note: kernel fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s9_") != NULL &&
                  strstr(out, "is not built") != NULL, "%s", out);
    cr_assert_eq(check("--plan-only", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "is not built") == NULL, "the default plan's kernel is built: %s", out);
}

/* Contradictions, values that are options, and outputs that cannot be written are refused
 * before any work (status 2, the rule named); a plan the options cannot have is status 2. */
Test(check_cli, contradictions_and_unwritable_outputs)
{
    static char out[16384];
    cr_expect_eq(check("--mnk 256x256x256 --shape sana-out --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "excludes --shape") != NULL, "%s", out);
    cr_expect_eq(check("--mnk 256x256x256:32 --rank 16 --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--rank names it again") != NULL, "%s", out);
    cr_expect_eq(check("--mnk 256x256x256:32 --dense --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "which --dense excludes") != NULL, "%s", out);
    cr_expect_eq(check("--timeline --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "missing value") != NULL, "%s", out);
    cr_expect_eq(check("--in ''", out, sizeof out), 2, "%s", out);
    cr_expect_eq(check("--out /nonexistent-dir/o --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "/nonexistent-dir is not a directory") != NULL, "%s", out);
    cr_expect_eq(check("--out README.md --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "exists and is not a directory") != NULL, "%s", out);
    cr_expect_eq(check("--timeline /nonexistent-dir/t.csv --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect_eq(check("--dense --lora-slots 2 --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect_eq(check("--stages 40 --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "fp4lr-check:") != NULL, "%s", out);
    /* a directory may be written with its trailing '/'; a path too long to name its files is
     * refused up front */
    cr_expect_eq(check("--mnk 128x128x64 --dense --out /tmp/fp4lr-test-out/ --plan-only", out, sizeof out), 0,
                 "%s", out);
    char args[1400] = "--plan-only --out /tmp/";
    memset(args + strlen(args), 'a', 950);
    cr_expect_eq(check(args, out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "955 bytes long; at most 900") != NULL, "%s", out);
    /* alpha: nan and inf are inputs; a finite value fp32 cannot hold is a typo */
    cr_expect_eq(check("--alpha 1e99", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "outside fp32's range") != NULL, "%s", out);
    cr_expect_eq(check("--alpha 1e-60", out, sizeof out), 2, "%s", out);
    cr_expect_eq(check("--alpha nan", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "needs --in") != NULL, "nan is a number, refused only for lacking --in: %s", out);
    /* numbers in --mnk: digits only, int64 */
    cr_expect_eq(check("--mnk 99999999999999999999x1x64 --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "exceeds 2^63 - 1") != NULL, "%s", out);
    cr_expect_eq(check("--mnk 1x9223372036854775807x64 --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "[FP4LR_E_INVALID DIM_LIMIT]") != NULL, "%s", out);
    cr_expect_eq(check("--list-shapes --bogus", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--bogus") != NULL, "%s", out);
    cr_expect_eq(check("--list-shapes", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "sana-out") != NULL, "%s", out);
}

/* --graph plans for a captured stream, and the plan says whether fp4lr_gemm may be captured. */
Test(check_cli, graph_plans)
{
    static char out[16384];
    cr_assert_eq(check("--plan-only", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "graph capture: refused (W converted in the kernel") != NULL, "%s", out);
    cr_assert_eq(check("--graph --plan-only", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "graph capture: allowed") != NULL, "%s", out);
    cr_expect(strstr(out, "schedule: dp") != NULL, "%s", out);
    cr_expect_eq(check("--graph --schedule sk --plan-only", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "[FP4LR_E_INVALID GRAPH]") != NULL, "%s", out);
}

static void repeat_case(const char *args, int n)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
    tsupport_gpu_arch_or_skip(ctx, "sm90a");
    fp4lr_ctx_destroy(ctx);
    static char out[65536], cmd[512], want[128];
    snprintf(cmd, sizeof cmd, "%s --repeat %d --iters 0 --rows 64", args, n);
    cr_assert_eq(check(cmd, out, sizeof out), 0, "%s: %s", cmd, out);
    snprintf(want, sizeof want, "repeat: %d of %d launches bitwise equal", n, n);
    cr_expect(strstr(out, want) != NULL, "%s: %s", cmd, out);
}

Test(check_cli, repeat_transform_path_gpu) { repeat_case("--mnk 1000x1300x640 --dense --w-prep off", 6); }

Test(check_cli, repeat_wprep_stream_k_gpu)
{
    repeat_case("--mnk 1000x1300x640 --dense --w-prep on --schedule sk", 6);
}
