/* One problem run end to end on the device (see support_gpu_case.h). */
#include "support_gpu_case.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "devbuf.h"
#include "reference.h"
#include "scale_atom.h"
#include "support_gpu.h"

fp4lr_ctx *tsupport_gemm_or_skip(fp4lr_family family)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
    const char *arch = NULL;
    fp4lr_status s = fp4lr_ctx_arch(ctx, &arch);
    (void)family; /* both families are built for sm_90a, sm_100a and sm_100f */
    if (s.code == FP4LR_OK)
        return ctx;
    const char *why = s.msg;
    char msg[FP4LR_STATUS_MSG_LEN + sizeof ctx->name + 64];
    snprintf(msg, sizeof msg, "device %s (cc %d.%d): %s", ctx->name, ctx->cc_major, ctx->cc_minor, why);
    fp4lr_ctx_destroy(ctx);
    cr_skip_test("%s", msg);
    return NULL;
}

int tsupport_ctx_is_sm90a(const fp4lr_ctx *ctx)
{
    const char *arch = NULL;
    return fp4lr_ctx_arch(ctx, &arch).code == FP4LR_OK && strcmp(arch, "sm90a") == 0;
}

fp4lr_ctx *tsupport_sm90a_or_skip(const char *why)
{
    fp4lr_ctx *ctx = tsupport_gemm_or_skip(FP4LR_FAMILY_DENSE);
    if (!tsupport_ctx_is_sm90a(ctx)) {
        fp4lr_ctx_destroy(ctx);
        cr_skip_test("%s", why);
    }
    return ctx;
}

void tsupport_case_setup(tsupport_case *g, fp4lr_ctx *ctx, const fp4lr_problem *p_in, uint64_t seed,
                         fp4lr_pgen_scales scales, int64_t rows_wanted, const fp4lr_plan_opts *opts)
{
    memset(g, 0, sizeof *g);
    g->ctx = ctx;
    fp4lr_problem p = *p_in;
    if (p.ldY == 0)
        p.ldY = (p.N + 7) / 8 * 8; /* rows of Y padded to 16 bytes: any N is valid */
    fp4lr_status st = fp4lr_runtime_init(&g->rt, ctx, NULL);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    st = fp4lr_runtime_plan(&g->rt, &p, opts, &g->plan);
    cr_assert_eq(st.code, FP4LR_OK, "plan: %s", st.msg);
    cr_assert_eq(fp4lr_pgen_alloc(&g->host, &p), 0);
    fp4lr_pgen_fill(&g->host, seed, scales);
    int64_t want = rows_wanted == 0 || rows_wanted >= p.M ? p.M : rows_wanted;
    g->rows = malloc(sizeof *g->rows * (size_t)want);
    g->ref = malloc(sizeof *g->ref * (size_t)(want * p.N));
    g->mag = malloc(sizeof *g->mag * (size_t)(want * p.N));
    cr_assert(g->rows && g->ref && g->mag);
    st = fp4lr_sample_rows(p.M, want, seed, g->rows, &g->nrows);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    st = fp4lr_devproblem_alloc(ctx, &g->plan.problem, &g->dev);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    tsupport_case_refresh(g);
}

void tsupport_case_refresh(tsupport_case *g)
{
    fp4lr_status st = fp4lr_reference(&g->host.p, &g->host.a, g->rows, g->nrows, 0, g->ref, g->mag);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    st = fp4lr_devproblem_upload(&g->dev, &g->host.a);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
}

void tsupport_case_run(tsupport_case *g)
{
    fp4lr_status st = fp4lr_devproblem_poison(&g->dev);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    if (g->stream) { /* the poison went to the legacy stream, which a non-blocking one does not wait for */
        st = fp4lr_ctx_sync(g->ctx);
        cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    }
    st = fp4lr_gemm(&g->rt, &g->plan, &g->dev.args, g->stream);
    cr_assert_eq(st.code, FP4LR_OK, "launch %s: %s", g->plan.entry, st.msg);
    st = fp4lr_ctx_sync(g->ctx);
    cr_assert_eq(st.code, FP4LR_OK, "%s: %s", g->plan.entry, st.msg);
    st = fp4lr_devproblem_download(&g->dev, g->host.Y);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
}

fp4lr_status tsupport_case_compare(tsupport_case *g, fp4lr_compare_report *rep)
{
    return fp4lr_compare(&g->host.p, g->host.Y, g->rows, g->nrows, g->ref, g->mag, rep);
}

void tsupport_case_expect_pass(tsupport_case *g)
{
    fp4lr_compare_report rep;
    fp4lr_status st = tsupport_case_compare(g, &rep);
    if (st.code != FP4LR_OK)
        fp4lr_compare_print(stderr, &rep);
    cr_expect_eq(st.code, FP4LR_OK, "%s M=%lld N=%lld K=%lld r=%lld: %s", g->plan.entry, (long long)g->host.p.M,
                 (long long)g->host.p.N, (long long)g->host.p.K, (long long)g->host.p.r, st.msg);
}

void tsupport_case_expect_fail(tsupport_case *g, const char *what)
{
    fp4lr_compare_report rep;
    fp4lr_status st = tsupport_case_compare(g, &rep);
    cr_expect_eq(st.code, FP4LR_E_MISMATCH, "planted fault not caught: %s (%s)", what, g->plan.entry);
}

/* Flips the low bit of scale (row, kb) of SFA (w_side 0) or SFW (1), runs, expects a
 * failure, restores the byte. */
static void scale_flip_fails(tsupport_case *g, int w_side, int64_t row, int64_t kb)
{
    const int64_t kv = g->host.p.K / fp4lr_format_block(g->host.p.format);
    const size_t off = fp4lr_sf_offset(row, kb, kv);
    uint8_t *host = w_side ? g->host.SFW : g->host.SFA;
    const CUdeviceptr dev = w_side ? g->dev.SFW : g->dev.SFA;
    const size_t bytes = w_side ? g->dev.sizes.SFW : g->dev.sizes.SFA;
    const uint8_t saved = host[off];
    host[off] = (uint8_t)(saved ^ 1);
    cr_assert_eq(fp4lr_dev_upload(g->ctx, dev, host, bytes).code, FP4LR_OK);
    tsupport_case_run(g);
    tsupport_case_expect_fail(g, w_side ? "one W scale byte changed" : "one A scale byte changed");
    host[off] = saved;
    cr_assert_eq(fp4lr_dev_upload(g->ctx, dev, host, bytes).code, FP4LR_OK);
}

void tsupport_case_expect_sfw_flip_fails(tsupport_case *g, int64_t n, int64_t kb) { scale_flip_fails(g, 1, n, kb); }

void tsupport_case_expect_sfa_flip_fails(tsupport_case *g, int64_t m, int64_t kb) { scale_flip_fails(g, 0, m, kb); }

void tsupport_case_expect_kblock_drop_fails(tsupport_case *g, int w_side, int64_t byte_off)
{
    const int64_t rows = w_side ? g->host.p.N : g->host.p.M, row_bytes = g->host.p.K / 2;
    const uint8_t *host = w_side ? g->host.W : g->host.A;
    const size_t bytes = w_side ? g->dev.sizes.W : g->dev.sizes.A;
    CUdeviceptr dev = w_side ? g->dev.W : g->dev.A;
    uint8_t *copy = malloc(bytes);
    cr_assert_not_null(copy);
    memcpy(copy, host, bytes);
    for (int64_t r = 0; r < rows; r++)
        memset(copy + r * row_bytes + byte_off, 0, 32);
    cr_assert_eq(fp4lr_dev_upload(g->ctx, dev, copy, bytes).code, FP4LR_OK);
    tsupport_case_run(g);
    tsupport_case_expect_fail(g, w_side ? "one K block of 64 dropped from W" : "one K block of 64 dropped from A");
    cr_assert_eq(fp4lr_dev_upload(g->ctx, dev, host, bytes).code, FP4LR_OK);
    free(copy);
}

void tsupport_case_expect_u_column_drop_fails(tsupport_case *g, int64_t col)
{
    const size_t ubytes = g->dev.sizes.U;
    uint16_t *u = malloc(ubytes);
    cr_assert_not_null(u);
    memcpy(u, g->host.U, ubytes);
    for (int64_t n = 0; n < g->host.p.N; n++)
        u[n * g->host.p.ldU + col] = 0;
    cr_assert_eq(fp4lr_dev_upload(g->ctx, g->dev.U, u, ubytes).code, FP4LR_OK);
    tsupport_case_run(g);
    tsupport_case_expect_fail(g, "one low-rank column dropped");
    cr_assert_eq(fp4lr_dev_upload(g->ctx, g->dev.U, g->host.U, ubytes).code, FP4LR_OK);
    free(u);
}

void tsupport_case_expect_unwritten_fails(tsupport_case *g, int64_t row, int64_t col)
{
    uint16_t *y = g->host.Y;
    tsupport_case_run(g);
    for (int64_t n = 0; n < g->host.p.N; n++)
        y[row * g->host.p.ldY + n] = 0xFFFF;
    tsupport_case_expect_fail(g, "one output row unwritten");
    tsupport_case_run(g);
    for (int64_t m = 0; m < g->host.p.M; m++)
        y[m * g->host.p.ldY + col] = 0xFFFF;
    tsupport_case_expect_fail(g, "one output column unwritten");
}

void tsupport_case_expect_padding_untouched(tsupport_case *g)
{
    const uint16_t *y = g->host.Y;
    int64_t touched = 0, fm = -1, fn = -1;
    for (int64_t m = 0; m < g->host.p.M; m++)
        for (int64_t n = g->host.p.N; n < g->host.p.ldY; n++)
            if (y[m * g->host.p.ldY + n] != (uint16_t)FP4LR_POISON_16 && touched++ == 0)
                fm = m, fn = n;
    cr_expect_eq(touched, 0, "%s (N = %lld, ldY = %lld) wrote %lld elements past column N, the first at (%lld, %lld)",
                 g->plan.entry, (long long)g->host.p.N, (long long)g->host.p.ldY, (long long)touched, (long long)fm,
                 (long long)fn);
}

void tsupport_case_teardown(tsupport_case *g)
{
    fp4lr_devproblem_free(&g->dev);
    fp4lr_pgen_free(&g->host);
    free(g->rows);
    free(g->ref);
    free(g->mag);
    fp4lr_runtime_release(&g->rt);
}

/* n launches after a first one, each into a poisoned Y (and, with stale_wp, with the
 * runtime's prepared-W workspace filled with 0xFF bytes first), compared bit for bit with
 * the first: how many differed, and the first difference. */
static int unstable_launches(tsupport_case *g, int n, int stale_wp, int64_t *diff0, int64_t *fm0, int64_t *fn0)
{
    tsupport_case_run(g);
    if (stale_wp)
        cr_assert(g->rt.wprep.ptr && g->rt.wprep.bytes, "%s: no prepared-W workspace (not an _x / _w plan)",
                  g->plan.entry);
    void *first = malloc(g->dev.sizes.Y);
    cr_assert_not_null(first);
    memcpy(first, g->host.Y, g->dev.sizes.Y);
    int bad = 0;
    *diff0 = 0, *fm0 = *fn0 = -1;
    for (int i = 0; i < n; i++) {
        if (stale_wp) { /* NaN in f16 and bf16: a chunk copied before this launch converted it */
            const fp4lr_driver *drv = g->ctx->drv;
            cr_assert_eq(drv->cuMemsetD8(g->rt.wprep.ptr, 0xFF, g->rt.wprep.bytes), CUDA_SUCCESS);
            cr_assert_eq(drv->cuCtxSynchronize(), CUDA_SUCCESS); /* done before a launch on any stream */
        }
        tsupport_case_run(g);
        int64_t fm, fn, diff = fp4lr_compare_bitwise(&g->host.p, first, g->host.Y, &fm, &fn);
        cr_assert_geq(diff, 0, "bitwise comparison refused the problem");
        if (diff && bad++ == 0)
            *diff0 = diff, *fm0 = fm, *fn0 = fn;
    }
    free(first);
    return bad;
}

void tsupport_case_expect_stable(tsupport_case *g, int n)
{
    int64_t diff0, fm0, fn0;
    int bad = unstable_launches(g, n, 0, &diff0, &fm0, &fn0);
    cr_expect_eq(bad, 0, "%s: %d of %d launches differ from the first (the first of them in %lld outputs, from (%lld, %lld))",
                 g->plan.entry, bad, n, (long long)diff0, (long long)fm0, (long long)fn0);
}

void tsupport_case_expect_stable_stale_wp(tsupport_case *g, int n)
{
    int64_t diff0, fm0, fn0;
    int bad = unstable_launches(g, n, 1, &diff0, &fm0, &fn0);
    cr_expect_eq(bad, 0, "%s: with the prepared W poisoned before each launch, %d of %d launches differ from the "
                 "first (the first of them in %lld outputs, from (%lld, %lld))",
                 g->plan.entry, bad, n, (long long)diff0, (long long)fm0, (long long)fn0);
}

int tsupport_case_unstable_stale_wp(tsupport_case *g, int n)
{
    int64_t diff0, fm0, fn0;
    return unstable_launches(g, n, 1, &diff0, &fm0, &fn0);
}

void tsupport_swap_edges(fp4lr_ctx *ctx, fp4lr_format f, const fp4lr_plan_opts *opts, uint64_t seed)
{
    static const int64_t ms[] = {1, 127, 257, 1000}, ns[] = {7, 255, 1000, 1600};
    const int64_t kmin = fp4lr_format_k_multiple(f);
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
        for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++) {
            const fp4lr_problem p = {.M = ms[i], .N = ns[j], .K = (i + j) % 2 ? kmin : 3 * kmin, .format = f,
                                     .out = FP4LR_OUT_BF16};
            tsupport_case g;
            tsupport_case_setup(&g, ctx, &p, seed++, FP4LR_PGEN_SCALES_REALISTIC, 0, opts);
            cr_assert(g.plan.swap_ab, "%lld x %lld x %lld: %s is not swapped", (long long)p.M, (long long)p.N,
                      (long long)p.K, g.plan.entry);
            if (opts->tile_n)
                cr_assert_eq(g.plan.tile_n, opts->tile_n, "%s", g.plan.entry);
            if (opts->w_prep == FP4LR_WPREP_ON)
                cr_assert(g.plan.w_prep && !g.plan.w_inline, "%s is not a prepared plan", g.plan.entry);
            tsupport_case_run(&g);
            tsupport_case_expect_pass(&g);
            tsupport_case_teardown(&g);
        }
}

void tsupport_swap_narrow_back_to_back(fp4lr_ctx *ctx, fp4lr_format f, int64_t r, const fp4lr_plan_opts *opts,
                                       uint64_t seed)
{
    const fp4lr_problem p = {.M = 1600, .N = 4096, .K = fp4lr_format_k_multiple(f), .r = r, .format = f,
                             .out = FP4LR_OUT_BF16, .has_wc = r > 0, .has_beta = r > 0};
    fp4lr_plan_opts o = *opts;
    o.schedule = FP4LR_SCHEDULE_DP;
    o.tile_n = FP4LR_SM90A_TILE_N_NARROW;
    cr_assert_gt(320, ctx->sm_count, "this check needs more tiles than CTAs");
    tsupport_case g;
    tsupport_case_setup(&g, ctx, &p, seed, FP4LR_PGEN_SCALES_REALISTIC, 64, &o);
    cr_assert(g.plan.swap_ab && g.plan.tile_n == FP4LR_SM90A_TILE_N_NARROW, "%s is not the narrow swapped plan",
              g.plan.entry);
    tsupport_case_run(&g);
    tsupport_case_expect_pass(&g);
    tsupport_case_expect_stable(&g, 30);
    tsupport_case_teardown(&g);
}

char *tsupport_kernel_dir_save(void)
{
    const char *env = getenv("FP4LR_KERNEL_DIR");
    char *copy = env ? strdup(env) : NULL;
    cr_assert(!env || copy);
    return copy;
}

void tsupport_kernel_dir_restore(char *saved)
{
    if (saved)
        cr_assert_eq(setenv("FP4LR_KERNEL_DIR", saved, 1), 0);
    else
        cr_assert_eq(unsetenv("FP4LR_KERNEL_DIR"), 0);
    free(saved);
}

void tsupport_case_use_kernel_dir(tsupport_case *g, const char *dir)
{
    cr_assert_eq(setenv("FP4LR_KERNEL_DIR", dir, 1), 0); /* it overrides a caller's directory */
    fp4lr_runtime_release(&g->rt);
    fp4lr_status st = fp4lr_runtime_init(&g->rt, g->ctx, dir);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
}

/* NaN in the bf16 Y exactly in row `row` (-1: none) and column `col`, nowhere else. */
static void expect_nan_exactly(const tsupport_case *g, int64_t row, int64_t col)
{
    const fp4lr_problem *p = &g->host.p;
    const uint16_t *y = g->host.Y;
    int64_t nans = 0;
    for (int64_t m = 0; m < p->M; m++)
        for (int64_t n = 0; n < p->N; n++) {
            const int is_nan = (y[m * p->ldY + n] & 0x7FFF) > 0x7F80;
            nans += is_nan;
            cr_expect_eq(is_nan, m == row || n == col, "NaN at (%lld, %lld)", (long long)m, (long long)n);
        }
    cr_expect_eq(nans, p->M + (row >= 0 ? p->N - 1 : 0));
}

void tsupport_case_expect_nan_column(tsupport_case *g, int64_t n, int64_t kb)
{
    const fp4lr_problem *p = &g->host.p;
    const int64_t kv = p->K / fp4lr_format_block(p->format);
    g->host.SFW[fp4lr_sf_offset(n, kb, kv)] = p->format == FP4LR_NVFP4 ? 0x7F : 0xFF;
    tsupport_case_refresh(g);
    tsupport_case_run(g);
    tsupport_case_expect_pass(g);
    expect_nan_exactly(g, -1, n);
}

void tsupport_case_expect_nan_cross(tsupport_case *g, int64_t row, int64_t col)
{
    const fp4lr_problem *p = &g->host.p;
    cr_assert(p->has_wc && p->r > 5, "the NaN cross needs wc and a rank above 5");
    g->host.wc[col] = NAN;
    g->host.L[row * p->ldL + 5] = 0x7FC0; /* bf16 NaN */
    tsupport_case_refresh(g);
    tsupport_case_run(g);
    tsupport_case_expect_pass(g);
    expect_nan_exactly(g, row, col);
}
