/* CPU suite: fp4lr_gemm's sm_90a runtime on a recording fake driver (no GPU): what it does
 * around the launch with the flags whose value it picks per launch.
 *
 * - On a stream being captured into a graph, a split (stream-K) walk and a plan that converts
 *   W inside the kernel are refused (rule GRAPH_CAPTURE) before anything is enqueued; a
 *   whole-tile plan is launched.
 * - A split launch's flags follow its grid's partial-sum slots: the first split launch of a
 *   workspace, one whose grid differs from the last one's, and one whose value wraps zero
 *   this launch's flags on the stream first (cuMemsetD32Async at slots x 131072 bytes, one
 *   word a CTA); the same grid again does not. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gemm.h"
#include "sm90a_gemm.h"
#include "support_fakedrv.h"

#define FAKE_EVENT ((CUevent)0x900c)
#define FAKE_STREAM ((CUstream)0x900d)
#define OTHER_STREAM ((CUstream)0x900e)
#define FAKE_WS ((CUdeviceptr)0x40000000)

/* ---- the recording fake driver (each test runs in its own process: rec starts zeroed) ---- */

static struct {
    int launches, allocs, syncs, records;
    int fail_launch;            /* the next launch fails */
    int waits;                  /* cuStreamWaitEvent calls */
    CUstream wait_stream;       /* the last one's stream and flags */
    unsigned wait_flags;
    CUstreamCaptureStatus capturing;
    int blocks_per_sm;
    int memsets;
    CUdeviceptr memset_at;
    size_t memset_words;
    CUstream memset_stream;
} rec;

static CUresult fake_launch(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    (void)cfg, (void)params, (void)extra;
    cr_assert_eq(f, TSUPPORT_FAKE_FN);
    if (rec.fail_launch) {
        rec.fail_launch = 0;
        return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    }
    rec.launches++;
    return CUDA_SUCCESS;
}

/* 512 threads, 128 registers, no local or static shared memory */
static CUresult fake_func_attr(int *v, CUfunction_attribute a, CUfunction f)
{
    (void)f;
    *v = a == CU_FUNC_ATTRIBUTE_NUM_REGS ? 128 : a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 512
       : a == CU_FUNC_ATTRIBUTE_PTX_VERSION ? 87 : a == CU_FUNC_ATTRIBUTE_BINARY_VERSION ? 90 : 0;
    return CUDA_SUCCESS;
}

static CUresult fake_blocks(int *n, CUfunction f, int threads, size_t smem)
{
    (void)f, (void)threads, (void)smem;
    *n = rec.blocks_per_sm;
    return CUDA_SUCCESS;
}

static CUresult fake_sync(void)
{
    rec.syncs++;
    return CUDA_SUCCESS;
}

static CUresult fake_alloc(CUdeviceptr *p, size_t bytes)
{
    (void)bytes;
    rec.allocs++;
    *p = FAKE_WS;
    return CUDA_SUCCESS;
}

static CUresult fake_free(CUdeviceptr p)
{
    (void)p;
    return CUDA_SUCCESS;
}

static CUresult fake_memset8(CUdeviceptr p, unsigned char v, size_t n)
{
    (void)p, (void)v, (void)n;
    return CUDA_SUCCESS;
}

static CUresult fake_memset32_async(CUdeviceptr p, unsigned v, size_t n, CUstream s)
{
    cr_expect_eq(v, 0u);
    rec.memsets++;
    rec.memset_at = p;
    rec.memset_words = n;
    rec.memset_stream = s;
    return CUDA_SUCCESS;
}

static CUresult fake_event_create(CUevent *e, unsigned flags)
{
    (void)flags;
    *e = FAKE_EVENT;
    return CUDA_SUCCESS;
}

static CUresult fake_event_record(CUevent e, CUstream s)
{
    (void)e, (void)s;
    rec.records++;
    return CUDA_SUCCESS;
}

static CUresult fake_event_destroy(CUevent e)
{
    (void)e;
    return CUDA_SUCCESS;
}

static CUresult fake_wait_event(CUstream s, CUevent e, unsigned flags)
{
    (void)e;
    rec.waits++;
    rec.wait_stream = s;
    rec.wait_flags = flags;
    return CUDA_SUCCESS;
}

static CUresult fake_is_capturing(CUstream s, CUstreamCaptureStatus *status)
{
    (void)s;
    *status = rec.capturing;
    return CUDA_SUCCESS;
}

static fp4lr_driver fake_drv = {
    .cuCtxSynchronize = fake_sync,
    TSUPPORT_FAKE_DRIVER_ENTRIES,
    .cuLaunchKernelEx = fake_launch,
    .cuFuncGetAttribute = fake_func_attr,
    .cuOccupancyMaxActiveBlocksPerMultiprocessor = fake_blocks,
    .cuMemAlloc = fake_alloc,
    .cuMemFree = fake_free,
    .cuMemsetD8 = fake_memset8,
    .cuMemsetD32Async = fake_memset32_async,
    .cuEventCreate = fake_event_create,
    .cuEventRecord = fake_event_record,
    .cuEventDestroy = fake_event_destroy,
    .cuStreamWaitEvent = fake_wait_event,
    .cuStreamIsCapturing = fake_is_capturing,
};

/* An H200-like context on the fake driver. */
static fp4lr_ctx fake_ctx = {
    .drv = &fake_drv, .cc_major = 9, .cc_minor = 0, .sm_count = 132, .max_smem_optin = 232448,
};

enum { DEV_A = 0x10000000, DEV_SFA = 0x11000000, DEV_W = 0x12000000, DEV_SFW = 0x13000000, DEV_Y = 0x18000000 };
#define DEV(type, addr) ((type)(uintptr_t)(addr))
static const fp4lr_args fake_args = {
    .A = DEV(const uint8_t *, DEV_A), .SFA = DEV(const uint8_t *, DEV_SFA), .W = DEV(const uint8_t *, DEV_W),
    .SFW = DEV(const uint8_t *, DEV_SFW), .alpha = 0.5f, .Y = DEV(void *, DEV_Y),
};

/* ---- a runtime over a kernel directory of stand-in cubins ---------------------------------- */

static char kdir[64];

static void setup(void)
{
    snprintf(kdir, sizeof kdir, "/tmp/fp4lr-rtfake-XXXXXX");
    cr_assert_not_null(mkdtemp(kdir));
    unsetenv("FP4LR_KERNEL_DIR");
    rec.blocks_per_sm = 1;
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", kdir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(sm90a_runtime_fake, .init = setup, .fini = teardown);

/* The plan of p with opts on the runtime, its stand-in cubin written. */
static fp4lr_plan plan_on(fp4lr_runtime *rt, const fp4lr_problem *p, const fp4lr_plan_opts *o)
{
    fp4lr_plan plan;
    fp4lr_status st = fp4lr_runtime_plan(rt, p, o, &plan);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    tsupport_fake_cubin(kdir, "sm90a", plan.entry);
    return plan;
}

/* fp4lr_gemm on `stream` with the map recorder emptied first (it holds one launch's maps) */
static fp4lr_status gemm_on(fp4lr_runtime *rt, const fp4lr_plan *plan, const fp4lr_args *args, CUstream stream)
{
    tsupport_fake_maps_reset();
    return fp4lr_gemm(rt, plan, args, stream);
}

static fp4lr_status gemm(fp4lr_runtime *rt, const fp4lr_plan *plan, const fp4lr_args *args)
{
    return gemm_on(rt, plan, args, FAKE_STREAM);
}

/* dense NVFP4, 40 tiles of 128 x 256 on 132 SMs: the split walk when asked */
static const fp4lr_problem small = {.M = 1000, .N = 1280, .K = 640, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16};

Test(sm90a_runtime_fake, capture_refuses_the_plans_with_per_launch_flags)
{
    fp4lr_runtime rt;
    cr_assert_eq(fp4lr_runtime_init(&rt, &fake_ctx, kdir).code, FP4LR_OK);
    const fp4lr_plan_opts sk = {.schedule = FP4LR_SCHEDULE_SK, .w_prep = FP4LR_WPREP_OFF};
    const fp4lr_plan_opts dp = {.schedule = FP4LR_SCHEDULE_DP, .w_prep = FP4LR_WPREP_OFF};
    const fp4lr_plan_opts inl = {.schedule = FP4LR_SCHEDULE_DP, .w_prep = FP4LR_WPREP_INLINE};
    const fp4lr_problem tall = {.M = 1600, .N = 1280, .K = 640, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16};
    fp4lr_plan split = plan_on(&rt, &small, &sk), whole = plan_on(&rt, &small, &dp), x = plan_on(&rt, &tall, &inl);
    cr_assert(x.w_inline, "%s", x.entry);

    rec.capturing = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    fp4lr_status st = gemm(&rt, &split, &fake_args);
    cr_expect_eq(st.code, FP4LR_E_UNSUPPORTED, "%s", st.msg);
    cr_expect_str_eq(st.rule, "GRAPH_CAPTURE");
    cr_expect(strstr(st.msg, "stream-K split walk") != NULL, "%s", st.msg);
    st = gemm(&rt, &x, &fake_args);
    cr_expect_str_eq(st.rule, "GRAPH_CAPTURE", "%s", st.msg);
    cr_expect(strstr(st.msg, "W converted inside the kernel") != NULL, "%s", st.msg);
    cr_expect_eq(rec.launches + rec.memsets + rec.records + rec.allocs, 0, "nothing enqueued or allocated");
    st = gemm(&rt, &whole, &fake_args);
    cr_expect_eq(st.code, FP4LR_OK, "%s", st.msg);
    cr_expect_eq(rec.launches, 1, "a whole-tile plan is captured");

    rec.capturing = CU_STREAM_CAPTURE_STATUS_NONE;
    st = gemm(&rt, &split, &fake_args);
    cr_expect_eq(st.code, FP4LR_OK, "%s", st.msg);
    cr_expect_eq(rec.launches, 2);
    fp4lr_runtime_release(&rt);
}

Test(sm90a_runtime_fake, split_flags_are_zeroed_when_the_grid_changes_or_the_value_wraps)
{
    fp4lr_runtime rt;
    cr_assert_eq(fp4lr_runtime_init(&rt, &fake_ctx, kdir).code, FP4LR_OK);
    const fp4lr_plan_opts sk = {.schedule = FP4LR_SCHEDULE_SK, .w_prep = FP4LR_WPREP_OFF};
    fp4lr_plan a = plan_on(&rt, &small, &sk);
    fp4lr_sm90a_sk walk;
    cr_assert_eq(fp4lr_runtime_walk(&rt, &a, &walk).code, FP4LR_OK);
    cr_assert(walk.split, "%s: the walk does not split", a.entry);
    const int ctas = walk.clusters * a.cluster;

    cr_assert_eq(gemm(&rt, &a, &fake_args).code, FP4LR_OK);
    cr_expect_eq(rec.memsets, 1, "the first split launch zeroes its flags");
    cr_expect_eq(rec.memset_at, FAKE_WS + (CUdeviceptr)ctas * FP4LR_SM90A_SK_SLOT_BYTES);
    cr_expect_eq(rec.memset_words, (size_t)ctas);
    cr_expect_eq(rec.memset_stream, FAKE_STREAM, "on the launch's stream");
    cr_expect_eq(rt.sk.epoch, 1u);
    cr_assert_eq(gemm(&rt, &a, &fake_args).code, FP4LR_OK);
    cr_expect_eq(rec.memsets, 1, "the same grid again: its flags hold older values only");
    cr_expect_eq(rt.sk.epoch, 2u);

    /* the value wraps: UINT32_MAX was the last launch's, the next is 1, which old flags may hold */
    rt.sk.epoch = UINT32_MAX;
    cr_assert_eq(gemm(&rt, &a, &fake_args).code, FP4LR_OK);
    cr_expect_eq(rec.memsets, 2, "a wrapped value zeroes the flags first");
    cr_expect_eq(rt.sk.epoch, 1u);

    /* another grid on the same workspace: a fused plan (its own kernel) on fewer SMs */
    fake_ctx.sm_count = 114;
    const fp4lr_problem fused = {.M = 1000, .N = 1280, .K = 640, .r = 32, .format = FP4LR_NVFP4,
                                 .out = FP4LR_OUT_BF16};
    fp4lr_plan b = plan_on(&rt, &fused, &sk);
    cr_assert_str_neq(b.entry, a.entry);
    fp4lr_sm90a_sk walk_b;
    cr_assert_eq(fp4lr_runtime_walk(&rt, &b, &walk_b).code, FP4LR_OK); /* loads b's kernel: 114 CTAs */
    fake_ctx.sm_count = 132;
    cr_assert(walk_b.split);
    const int ctas_b = walk_b.clusters * b.cluster;
    cr_assert_neq(ctas_b, ctas, "the two plans need different grids for this check");
    fp4lr_args fa = fake_args;
    fa.L = DEV(const uint16_t *, 0x14000000);
    fa.U = DEV(const uint16_t *, 0x15000000);
    cr_assert_eq(gemm(&rt, &b, &fa).code, FP4LR_OK);
    cr_expect_eq(rec.memsets, 3, "another grid's flags lie elsewhere");
    cr_expect_eq(rec.memset_at, FAKE_WS + (CUdeviceptr)ctas_b * FP4LR_SM90A_SK_SLOT_BYTES);
    cr_expect_eq(rec.memset_words, (size_t)ctas_b);
    cr_assert_eq(gemm(&rt, &a, &fake_args).code, FP4LR_OK);
    cr_expect_eq(rec.memsets, 4, "and back");
    cr_expect_eq(rec.memset_words, (size_t)ctas);
    fp4lr_runtime_release(&rt);
}

/* Work queued on a workspace before a failure still orders the next launch on another stream
 * after it: the split walk's flag reset, then a launch that fails. */
Test(sm90a_runtime_fake, a_failed_launch_still_orders_the_work_queued_before_it)
{
    fp4lr_runtime rt;
    cr_assert_eq(fp4lr_runtime_init(&rt, &fake_ctx, kdir).code, FP4LR_OK);
    const fp4lr_plan_opts sk = {.schedule = FP4LR_SCHEDULE_SK, .w_prep = FP4LR_WPREP_OFF};
    fp4lr_plan a = plan_on(&rt, &small, &sk);
    rec.fail_launch = 1;
    fp4lr_status st = gemm(&rt, &a, &fake_args);
    cr_expect_eq(st.code, FP4LR_E_DRIVER, "%s", st.msg);
    cr_expect_eq(rec.memsets, 1, "the flags' reset was queued before the launch failed");
    const int waits = rec.waits;
    cr_assert_eq(gemm_on(&rt, &a, &fake_args, OTHER_STREAM).code, FP4LR_OK);
    cr_expect_eq(rec.waits, waits + 1, "the next launch on another stream waits for the reset");
    cr_expect_eq(rec.wait_stream, OTHER_STREAM);
    cr_expect_eq(rec.wait_flags, 0u);
    fp4lr_runtime_release(&rt);
}

/* Capturing: no workspace is allocated (the plan must have run once), a cross-stream wait is
 * an external event wait, nothing is recorded; once captured, a launch that would grow a
 * workspace the graph holds is refused (GRAPH_WORKSPACE); a plan whose tiles no longer match
 * its problem is refused (PLAN_STALE). */
Test(sm90a_runtime_fake, capture_keeps_the_workspaces_a_graph_holds)
{
    fp4lr_runtime rt;
    cr_assert_eq(fp4lr_runtime_init(&rt, &fake_ctx, kdir).code, FP4LR_OK);
    tsupport_fake_cubin(kdir, "sm90a", "fp4lr_sm90a_nvfp4_wprep");
    const fp4lr_plan_opts g = {.graph = 1};
    const fp4lr_problem p1 = {.M = 2048, .N = 1280, .K = 640, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16};
    const fp4lr_problem p2 = {.M = 2048, .N = 12800, .K = 640, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16};
    fp4lr_plan a = plan_on(&rt, &p1, &g), b = plan_on(&rt, &p2, &g);
    cr_assert(a.w_prep && !a.w_inline, "%s", a.entry);

    rec.capturing = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    fp4lr_status st = gemm(&rt, &a, &fake_args);
    cr_expect_str_eq(st.rule, "GRAPH_WORKSPACE", "%s", st.msg);
    cr_expect(strstr(st.msg, "launch the plan once before capturing") != NULL, "%s", st.msg);
    cr_expect_eq(rec.allocs + rec.launches, 0);

    rec.capturing = CU_STREAM_CAPTURE_STATUS_NONE;
    cr_assert_eq(gemm_on(&rt, &a, &fake_args, OTHER_STREAM).code, FP4LR_OK); /* warm-up elsewhere */
    const int records = rec.records, waits = rec.waits;
    rec.capturing = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    st = gemm(&rt, &a, &fake_args);
    cr_expect_eq(st.code, FP4LR_OK, "%s", st.msg);
    cr_expect_gt(rec.waits, waits, "the captured launch waits for the warm-up on the other stream");
    cr_expect_eq(rec.wait_flags, (unsigned)CU_EVENT_WAIT_EXTERNAL, "as an external event wait");
    cr_expect_eq(rec.records, records, "nothing is recorded while capturing");

    rec.capturing = CU_STREAM_CAPTURE_STATUS_NONE;
    st = gemm(&rt, &b, &fake_args); /* 10x the prepared W: the graph holds the smaller one */
    cr_expect_eq(st.code, FP4LR_E_UNSUPPORTED, "%s", st.msg);
    cr_expect_str_eq(st.rule, "GRAPH_WORKSPACE", "%s", st.msg);
    cr_expect(strstr(st.msg, "prepared-W") != NULL, "%s", st.msg);
    cr_expect_eq(gemm(&rt, &a, &fake_args).code, FP4LR_OK, "what fits still runs");

    fp4lr_plan stale = a;
    stale.problem.M = 4 * a.problem.M;
    st = gemm(&rt, &stale, &fake_args);
    cr_expect_str_eq(st.rule, "PLAN_STALE", "%s", st.msg);
    fp4lr_runtime_release(&rt);
}
