/* GPU suite: the sm_90a ping-pong kernels (tools/gen_sm90a_pp.py: 128 x 128 tiles, W prepared,
 * the two consumer warpgroups taking whole tiles in turn), planned with tile_n = 128, dense and
 * fused (each consumer's own low-rank ring; the affine and the low-rank wgmmas after its K loop).
 *
 * Against the double reference: ragged edges; CTAs with one unit (the second consumer idle),
 * two, and odd and even counts; K of one stage (many ring laps a CTA); both built layouts
 * (s3_w10, the solver's, and s4_w8).  Bitwise agreement with the 256-wide _w5 kernel (the same
 * f16 operands in the same K order through the same m64n128k16 sequence).  Bitwise stability
 * over many launches (the turn protocol and the rings shared by two consumers).  A NaN scale
 * of W reaches exactly its column; fused, NaN in wc and in L exactly their column and row.
 * Fused: every rank with and without the affine, on shapes of one unit a CTA and of several.
 * The planted faults: the input faults every GPU suite (fused: also a dropped rank of U)
 * plants, and a kernel built without the turn barrier (FP4LR_GEN_PP_FAULT=noturn), which
 * must fail validation or hang (run through fp4lr-check under a timeout).  Skips without an
 * sm_90a GPU. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "support_cmd.h"
#include "support_gpu_case.h"

typedef tsupport_case gcase;

static fp4lr_ctx *sm90a_or_skip(void) { return tsupport_sm90a_or_skip("the ping-pong kernels are sm_90a kernels"); }

/* An NVFP4 case of rank r (the affine with it when `affine`; r = 0 without: dense) planned on
 * the ping-pong tile (stages / slots 0: the solver's). */
static void setup_r(gcase *g, fp4lr_ctx *ctx, int64_t M, int64_t N, int64_t K, int64_t r, int affine, uint64_t seed,
                    int64_t rows, int stages, int slots)
{
    fp4lr_problem p = {.M = M, .N = N, .K = K, .r = r, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16,
                       .has_wc = affine, .has_beta = affine};
    fp4lr_plan_opts o = {.tile_n = 128, .force_main_stages = stages, .force_transform_stages = slots};
    tsupport_case_setup(g, ctx, &p, seed, FP4LR_PGEN_SCALES_REALISTIC, rows, &o);
    cr_assert(strstr(g->plan.entry, "_m128n128k128_c1_") && strstr(g->plan.entry, "_pp"), "%s", g->plan.entry);
    cr_assert_eq(g->plan.family, r > 0 || affine ? FP4LR_FAMILY_FUSED : FP4LR_FAMILY_DENSE, "%s", g->plan.entry);
}

static void setup(gcase *g, fp4lr_ctx *ctx, int64_t M, int64_t N, int64_t K, uint64_t seed, int64_t rows,
                  int stages, int slots)
{
    setup_r(g, ctx, M, N, K, 0, 0, seed, rows, stages, slots);
}

static void run_pass(fp4lr_ctx *ctx, int64_t M, int64_t N, int64_t K, uint64_t seed, int64_t rows, int stages,
                     int slots)
{
    gcase g;
    setup(&g, ctx, M, N, K, seed, rows, stages, slots);
    tsupport_case_run(&g);
    tsupport_case_expect_pass(&g);
    tsupport_case_teardown(&g);
}

/* ---- edges: M, N not multiples of 128, K at the minimum and above, both layouts ---- */

Test(gemm_pp, edges, .timeout = 600)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    static const int64_t ms[] = {1, 127, 129, 257, 1000}, ns[] = {7, 127, 129, 255, 1000};
    const int64_t kmin = fp4lr_format_k_multiple(FP4LR_NVFP4);
    uint64_t seed = 3100;
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
        for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++) {
            const int forced = (i + j) % 3 == 0;
            run_pass(ctx, ms[i], ns[j], (i + j) % 2 ? kmin : 3 * kmin, seed++, 0, forced ? 4 : 0, forced ? 8 : 0);
        }
    fp4lr_ctx_destroy(ctx);
}

/* ---- units per CTA: one (consumer 1 idle), two, odd and even counts, one-stage units ---- */

Test(gemm_pp, unit_counts_and_ring_laps, .timeout = 600)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    static const struct {
        int64_t M, N, K;
        int stages, slots;
    } c[] = {
        {1024, 1024, 2048, 0, 0},  /* 64 tiles: one unit a CTA */
        {2048, 1152, 1024, 0, 0},  /* 144 tiles: 12 CTAs with two */
        {4608, 3072, 3072, 0, 0},  /* 864 tiles: 6 or 7 a CTA on 132 SMs */
        {4608, 3072, 3072, 4, 8},
        {2000, 3000, 128, 0, 0},   /* one stage a unit: ring positions lap every few units */
        {2000, 3000, 64, 4, 8},    /* half a stage (the K tail past K reads zero) */
        {3000, 2000, 640, 0, 0},   /* 5 stages a unit against 3 main stages and 10 slots */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        run_pass(ctx, c[i].M, c[i].N, c[i].K, 3200 + i, 128, c[i].stages, c[i].slots);
    fp4lr_ctx_destroy(ctx);
}

/* ---- the same Y as the 256-wide _w5 kernel, bit for bit ---- */

Test(gemm_pp, bitwise_equal_to_the_256_wide_kernel, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    gcase pp, wide;
    setup(&pp, ctx, 2304, 3000, 3072, 41, 64, 0, 0);
    fp4lr_problem p = {.M = 2304, .N = 3000, .K = 3072, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16};
    fp4lr_plan_opts o = {.w_prep = FP4LR_WPREP_ON, .schedule = FP4LR_SCHEDULE_DP};
    tsupport_case_setup(&wide, ctx, &p, 41, FP4LR_PGEN_SCALES_REALISTIC, 64, &o);
    cr_assert_str_eq(wide.plan.entry, "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5");
    tsupport_case_run(&pp);
    tsupport_case_expect_pass(&pp);
    tsupport_case_run(&wide);
    cr_assert_eq(pp.dev.sizes.Y, wide.dev.sizes.Y);
    cr_expect_eq(memcmp(pp.host.Y, wide.host.Y, pp.dev.sizes.Y), 0, "%s and %s differ", pp.plan.entry,
                 wide.plan.entry);
    tsupport_case_teardown(&pp);
    tsupport_case_teardown(&wide);
    fp4lr_ctx_destroy(ctx);
}

/* ---- launches are bitwise stable (the turns, the shared rings, the writeback) ---- */

Test(gemm_pp, launches_are_bitwise_stable, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    static const struct {
        int64_t M, N, K;
        int stages, slots, n;
    } c[] = {{4608, 3072, 3072, 0, 0, 100}, {4608, 3072, 3072, 4, 8, 50}, {2000, 3000, 128, 0, 0, 100}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        gcase g;
        setup(&g, ctx, c[i].M, c[i].N, c[i].K, 3300 + i, 64, c[i].stages, c[i].slots);
        tsupport_case_expect_stable(&g, c[i].n);
        tsupport_case_expect_pass(&g);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- NaN in a W scale: exactly its column ---- */

Test(gemm_pp, nan_scale_propagates, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    gcase g;
    setup(&g, ctx, 200, 304, 512, 3400, 0, 0, 0);
    tsupport_case_expect_nan_column(&g, 201, 5);
    tsupport_case_teardown(&g);
    fp4lr_ctx_destroy(ctx);
}

/* ---- the planted input faults: the suite can fail ---- */

Test(gemm_pp, input_faults_are_caught, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    gcase g;
    setup(&g, ctx, 300, 400, 1024, 3500, 0, 0, 0);
    tsupport_case_run(&g);
    tsupport_case_expect_pass(&g);
    tsupport_case_expect_sfw_flip_fails(&g, 123, 9);
    tsupport_case_expect_sfa_flip_fails(&g, 211, 3);
    tsupport_case_expect_kblock_drop_fails(&g, 0, 64 / 2 * 5);
    tsupport_case_expect_kblock_drop_fails(&g, 1, 64 / 2 * 2);
    tsupport_case_expect_unwritten_fails(&g, 250, 399);
    tsupport_case_run(&g); /* the restored inputs pass again */
    tsupport_case_expect_pass(&g);
    tsupport_case_teardown(&g);
    fp4lr_ctx_destroy(ctx);
}

/* ---- the planted kernel fault: no turn barrier ----
 * Built here (python3, ptxas) into a scratch kernel directory with the committed preparation
 * kernel; fp4lr-check validates 384 sampled rows (every odd unit of the fault reads the wrong
 * stages, and every row band holds such units) of a shape whose CTAs run 6-7 units of 24 stages
 * (a consumer that skips ahead without its turn waits on a slot whose previous fill is still
 * outstanding, and its parity wait passes) and must not pass: exit 1 (validation failed), 3
 * with a CUDA error (an H100, 2026-12-05: "unspecified launch failure"), or be stopped by the
 * timeout (124): a ring out of step may also hang.  The committed kernel passes the same
 * command.  Both runs capture stderr too: the driver's error is printed there. */
Test(gemm_pp, a_kernel_without_turns_is_caught, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    fp4lr_ctx_destroy(ctx);
    char dir[] = "/tmp/fp4lr-ppfault.XXXXXX", cmd[2048], out[1 << 14], bdir[1024];
    cr_assert_not_null(mkdtemp(dir));
    const char *entry = "fp4lr_sm90a_nvfp4_dense_m128n128k128_c1_s3_w10_pp";
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/sm90a && FP4LR_GEN_PP_FAULT=noturn python3 tools/gen_sm90a_pp.py --outdir %s/sm90a && "
             "grep -q 'FAULT noturn' %s/sm90a/%s.ptx && "
             "sh tools/ptxas_gate.sh sm_90a %s/sm90a/%s.ptx %s/sm90a/%s.cubin && "
             "sh tools/ptxas_gate.sh sm_90a ptx/sm90a/fp4lr_sm90a_nvfp4_wprep.ptx "
             "%s/sm90a/fp4lr_sm90a_nvfp4_wprep.cubin",
             dir, dir, dir, entry, dir, entry, dir, entry, dir);
    int rc = tsupport_run_capture(cmd, out, sizeof out);
    cr_assert_eq(rc, 0, "the noturn kernel does not build: %s", out);
    tsupport_build_dir(bdir, sizeof bdir);
    const char *args = "--mnk 4608x3072x3072 --dense --tile-n 128 --seed 7";
    snprintf(cmd, sizeof cmd, "FP4LR_KERNEL_DIR=%s timeout 60 '%s/bin/fp4lr-check' %s 2>&1", dir, bdir, args);
    rc = tsupport_run_capture(cmd, out, sizeof out);
    const int launch_error = rc == 3 && strstr(out, "CUDA_ERROR_") != NULL;
    cr_expect(rc == 1 || rc == 124 || launch_error,
              "the kernel without turns gave exit status %d (1, 124, or 3 with a CUDA error expected): %s", rc, out);
    snprintf(cmd, sizeof cmd, "timeout 60 '%s/bin/fp4lr-check' %s 2>&1", bdir, args);
    rc = tsupport_run_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 0, "the committed kernel: %s", out);
    cr_expect(strstr(out, entry) != NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* ---- fused: every rank, with and without the affine; one unit a CTA and several ---- */

Test(gemm_pp, fused_ranks_and_affine, .timeout = 600)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    static const int64_t ranks[] = {0, 16, 32, 48, 64, 128, 1024};
    uint64_t seed = 3600;
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++)
        for (int affine = 0; affine < 2; affine++) {
            if (ranks[i] == 0 && !affine)
                continue; /* the dense family */
            gcase g;
            setup_r(&g, ctx, 300, 520, 512, ranks[i], affine, seed++, 0, 0, 0);
            tsupport_case_run(&g);
            tsupport_case_expect_pass(&g);
            tsupport_case_teardown(&g);
        }
    /* 384 tiles (about three a CTA: both consumers, their rings, the turns), r = 32 and 128 */
    static const int64_t big[] = {32, 128};
    for (size_t i = 0; i < 2; i++) {
        gcase g;
        setup_r(&g, ctx, 2000, 3000, 384, big[i], 1, seed++, 128, 0, 0);
        tsupport_case_run(&g);
        tsupport_case_expect_pass(&g);
        tsupport_case_expect_stable(&g, 20);
        tsupport_case_teardown(&g);
    }
    fp4lr_ctx_destroy(ctx);
}

/* ---- fused: NaN in wc and in L, and the planted faults ---- */

Test(gemm_pp, fused_nan_and_faults, .timeout = 300)
{
    fp4lr_ctx *ctx = sm90a_or_skip();
    gcase g;
    setup_r(&g, ctx, 300, 400, 512, 128, 1, 3700, 0, 0, 0);
    tsupport_case_run(&g);
    tsupport_case_expect_pass(&g);
    tsupport_case_expect_u_column_drop_fails(&g, 100); /* a rank in the streamed tail */
    tsupport_case_expect_sfw_flip_fails(&g, 123, 5);
    tsupport_case_expect_kblock_drop_fails(&g, 0, 64 / 2 * 3);
    tsupport_case_expect_unwritten_fails(&g, 250, 399);
    tsupport_case_teardown(&g);
    setup_r(&g, ctx, 200, 300, 256, 32, 1, 3701, 0, 0, 0);
    tsupport_case_expect_nan_cross(&g, 41, 123);
    tsupport_case_teardown(&g);
    fp4lr_ctx_destroy(ctx);
}
