/* GPU suite: fp4lr_gemm captured into a CUDA graph.
 *
 * A captured launch keeps the values the host chose for it in every replay.  Plans whose
 * kernels wait on flags valued per launch (the stream-K split walk, W converted inside the
 * kernel) would read the previous replay's partial sums or converted W, so fp4lr_gemm refuses
 * them on a capturing stream (rule GRAPH_CAPTURE); plans without such flags (whole tiles, W
 * prepared by its own launch or transformed in the kernel's ring; what opts.graph plans) are
 * captured, and each replay computes from the inputs' current contents: checked against the
 * reference after the inputs change between replays, and shown to fail against the reference
 * of inputs the device never received.  Skips without an sm_90a GPU.  The graph entry points come from the
 * driver library itself (dlsym on the runtime's handle): the library never uses them. */
#include <criterion/criterion.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <string.h>

#include "reference.h"
#include "support_gpu_case.h"

typedef struct graph_api {
    PFN_cuStreamBeginCapture_v10010 begin;
    PFN_cuStreamEndCapture_v10000 end;
    PFN_cuGraphInstantiateWithFlags_v11040 instantiate;
    PFN_cuGraphLaunch_v10000 launch;
    PFN_cuGraphExecDestroy_v10000 exec_destroy;
    PFN_cuGraphDestroy_v10000 destroy;
} graph_api;

static graph_api graph_api_of(const fp4lr_ctx *ctx)
{
    cr_assert_not_null(ctx->drv->lib, "the driver table was not opened from a library");
    graph_api g = {
        .begin = (PFN_cuStreamBeginCapture_v10010)dlsym(ctx->drv->lib, "cuStreamBeginCapture_v2"),
        .end = (PFN_cuStreamEndCapture_v10000)dlsym(ctx->drv->lib, "cuStreamEndCapture"),
        .instantiate = (PFN_cuGraphInstantiateWithFlags_v11040)dlsym(ctx->drv->lib, "cuGraphInstantiateWithFlags"),
        .launch = (PFN_cuGraphLaunch_v10000)dlsym(ctx->drv->lib, "cuGraphLaunch"),
        .exec_destroy = (PFN_cuGraphExecDestroy_v10000)dlsym(ctx->drv->lib, "cuGraphExecDestroy"),
        .destroy = (PFN_cuGraphDestroy_v10000)dlsym(ctx->drv->lib, "cuGraphDestroy"),
    };
    cr_assert(g.begin && g.end && g.instantiate && g.launch && g.exec_destroy && g.destroy,
              "the driver lacks a graph entry point");
    return g;
}

/* A case on a non-blocking stream of its own (the legacy stream cannot be captured), run once
 * eagerly so that its kernels and workspaces exist before any capture. */
static void setup(tsupport_case *g, fp4lr_ctx *ctx, const fp4lr_problem *p, uint64_t seed,
                  const fp4lr_plan_opts *o)
{
    tsupport_case_setup(g, ctx, p, seed, FP4LR_PGEN_SCALES_REALISTIC, 64, o);
    cr_assert_eq(ctx->drv->cuStreamCreate(&g->stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    tsupport_case_run(g);
    tsupport_case_expect_pass(g);
}

/* Every byte of A's fp4 codes xor `x` on the host (any nibble is an e2m1 code). */
static void change_a(tsupport_case *g, uint8_t x)
{
    for (size_t i = 0; i < g->host.sizes.A; i++)
        g->host.A[i] ^= x;
}

/* Poisons Y, replays the graph on the case's stream, waits and downloads Y. */
static void replay(tsupport_case *g, const graph_api *api, CUgraphExec exec)
{
    fp4lr_status st = fp4lr_devproblem_poison(&g->dev);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    st = fp4lr_ctx_sync(g->ctx);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    cr_assert_eq(api->launch(exec, g->stream), CUDA_SUCCESS);
    cr_assert_eq(g->ctx->drv->cuStreamSynchronize(g->stream), CUDA_SUCCESS);
    st = fp4lr_devproblem_download(&g->dev, g->host.Y);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
}

static void replays_follow_the_inputs(const fp4lr_problem *p, const fp4lr_plan_opts *o, uint64_t seed)
{
    fp4lr_ctx *ctx = tsupport_sm90a_or_skip("the capture rule is the sm_90a runtime's");
    const graph_api api = graph_api_of(ctx);
    tsupport_case g;
    setup(&g, ctx, p, seed, o);
    cr_assert(!g.plan.w_inline, "%s converts W in the kernel", g.plan.entry);
    CUgraph graph = NULL;
    CUgraphExec exec = NULL;
    cr_assert_eq(api.begin(g.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
    const fp4lr_status st = fp4lr_gemm(&g.rt, &g.plan, &g.dev.args, g.stream);
    const CUresult end = api.end(g.stream, &graph);
    cr_assert_eq(st.code, FP4LR_OK, "capturing %s: %s", g.plan.entry, st.msg);
    cr_assert_eq(end, CUDA_SUCCESS);
    cr_assert_eq(api.instantiate(&exec, graph, 0), CUDA_SUCCESS);
    for (int k = 0; k < 3; k++) { /* new contents of A before each replay, same buffers */
        change_a(&g, (uint8_t)(0x11 * (k + 1)));
        tsupport_case_refresh(&g);
        replay(&g, &api, exec);
        tsupport_case_expect_pass(&g);
    }
    /* planted fault: the reference of inputs the device never received must not match */
    change_a(&g, 0x5a);
    fp4lr_status ref = fp4lr_reference(&g.host.p, &g.host.a, g.rows, g.nrows, 0, g.ref, g.mag);
    cr_assert_eq(ref.code, FP4LR_OK, "%s", ref.msg);
    replay(&g, &api, exec);
    tsupport_case_expect_fail(&g, "a replay compared with the reference of inputs never uploaded");
    cr_expect_eq(api.exec_destroy(exec), CUDA_SUCCESS);
    cr_expect_eq(api.destroy(graph), CUDA_SUCCESS);
    CUstream s = g.stream;
    tsupport_case_teardown(&g);
    cr_expect_eq(ctx->drv->cuStreamDestroy(s), CUDA_SUCCESS);
    fp4lr_ctx_destroy(ctx);
}

Test(gemm_graph, prepared_whole_tiles_replay_with_new_inputs, .timeout = 300)
{
    const fp4lr_problem p = {.M = 300, .N = 520, .K = 448, .r = 32, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16,
                             .has_wc = 1, .has_beta = 1};
    const fp4lr_plan_opts o = {.schedule = FP4LR_SCHEDULE_DP, .w_prep = FP4LR_WPREP_ON};
    replays_follow_the_inputs(&p, &o, 1500);
}

Test(gemm_graph, transform_whole_tiles_replay_with_new_inputs, .timeout = 300)
{
    const fp4lr_problem p = {.M = 257, .N = 300, .K = 640, .format = FP4LR_MXFP4, .out = FP4LR_OUT_BF16};
    const fp4lr_plan_opts o = {.schedule = FP4LR_SCHEDULE_DP, .w_prep = FP4LR_WPREP_OFF};
    replays_follow_the_inputs(&p, &o, 1501);
}

/* opts.graph on a problem where AUTO would convert W in the kernel (M >= 1536, r <= 32):
 * whole tiles with W prepared, captured and replayed. */
Test(gemm_graph, the_graph_option_plans_a_capturable_launch, .timeout = 300)
{
    const fp4lr_problem p = {.M = 1600, .N = 1280, .K = 640, .r = 32, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16,
                             .has_wc = 1, .has_beta = 1};
    const fp4lr_plan_opts o = {.graph = 1};
    replays_follow_the_inputs(&p, &o, 1504);
}

/* opts.graph on a small-M problem: AUTO's swapped prepared plan, A's preparation and the
 * kernel launched as its programmatic dependent, captured (a programmatic edge) and replayed;
 * A, the prepared operand, changes before each replay. */
Test(gemm_graph, the_swapped_dependent_pair_replays_with_new_inputs, .timeout = 300)
{
    const fp4lr_problem p = {.M = 300, .N = 1600, .K = 448, .r = 32, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16,
                             .has_wc = 1, .has_beta = 1};
    const fp4lr_plan_opts o = {.graph = 1};
    fp4lr_plan pl;
    fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &o, &pl);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    cr_assert(pl.swap_ab && pl.w_prep && !pl.w_inline && pl.pdl, "%s is not the swapped dependent pair", pl.entry);
    replays_follow_the_inputs(&p, &o, 1505);
    const fp4lr_problem q = {.M = 257, .N = 1700, .K = 640, .format = FP4LR_MXFP4, .out = FP4LR_OUT_BF16};
    replays_follow_the_inputs(&q, &o, 1506);
}

/* The plans that wait on per-launch flags are refused while capturing, and still run after. */
static void refused_while_capturing(const fp4lr_problem *p, const fp4lr_plan_opts *o, uint64_t seed,
                                    const char *why)
{
    fp4lr_ctx *ctx = tsupport_sm90a_or_skip("the capture rule is the sm_90a runtime's");
    const graph_api api = graph_api_of(ctx);
    tsupport_case g;
    setup(&g, ctx, p, seed, o);
    CUgraph graph = NULL;
    cr_assert_eq(api.begin(g.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
    const fp4lr_status st = fp4lr_gemm(&g.rt, &g.plan, &g.dev.args, g.stream);
    const CUresult end = api.end(g.stream, &graph);
    cr_expect_eq(st.code, FP4LR_E_UNSUPPORTED, "%s: %s", g.plan.entry, st.msg);
    cr_expect_str_eq(st.rule, "GRAPH_CAPTURE", "%s", st.msg);
    cr_expect(strstr(st.msg, why) != NULL, "%s", st.msg);
    cr_expect_eq(end, CUDA_SUCCESS);
    if (graph)
        cr_expect_eq(api.destroy(graph), CUDA_SUCCESS);
    tsupport_case_run(&g); /* the runtime is still usable */
    tsupport_case_expect_pass(&g);
    CUstream s = g.stream;
    tsupport_case_teardown(&g);
    cr_expect_eq(ctx->drv->cuStreamDestroy(s), CUDA_SUCCESS);
    fp4lr_ctx_destroy(ctx);
}

Test(gemm_graph, a_split_walk_is_refused_while_capturing, .timeout = 300)
{
    const fp4lr_problem p = {.M = 1000, .N = 1300, .K = 640, .r = 32, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16,
                             .has_wc = 1, .has_beta = 1};
    const fp4lr_plan_opts o = {.schedule = FP4LR_SCHEDULE_SK, .w_prep = FP4LR_WPREP_ON};
    refused_while_capturing(&p, &o, 1502, "stream-K split walk");
}

Test(gemm_graph, w_converted_in_the_kernel_is_refused_while_capturing, .timeout = 300)
{
    const fp4lr_problem p = {.M = 1600, .N = 1300, .K = 640, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16};
    const fp4lr_plan_opts o = {.schedule = FP4LR_SCHEDULE_DP, .w_prep = FP4LR_WPREP_INLINE};
    refused_while_capturing(&p, &o, 1503, "W converted inside the kernel");
}
