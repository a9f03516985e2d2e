/* Dispatch of planned problems to the kernels, and the runtime's kernel cache. */
#include "gemm.h"

#include <stdlib.h>
#include <inttypes.h>
#include <string.h>

#include "launch.h"
#include "sm100a_gemm.h"
#include "sm90a_gemm.h"
#include "sm90a_wprep.h"
#include "sm90a_xorder.h"

fp4lr_status fp4lr_runtime_init(fp4lr_runtime *rt, fp4lr_ctx *ctx, const char *kernel_dir)
{
    if (!rt || !ctx)
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER", "fp4lr_runtime_init: runtime and context are required");
    memset(rt, 0, sizeof *rt);
    rt->ctx = ctx;
    rt->kernel_dir = fp4lr_kernel_dir(kernel_dir);
    return fp4lr_ok();
}

static void workspace_free(const fp4lr_driver *drv, fp4lr_workspace *w)
{
    if (w->ptr)
        drv->cuMemFree(w->ptr);
    if (w->done)
        drv->cuEventDestroy(w->done);
    memset(w, 0, sizeof *w);
}

void fp4lr_runtime_release(fp4lr_runtime *rt)
{
    if (!rt)
        return;
    const fp4lr_driver *drv = rt->ctx ? rt->ctx->drv : NULL;
    int preps = 0;
    for (size_t i = 0; i < sizeof rt->wprep_fn / sizeof rt->wprep_fn[0]; i++)
        preps += rt->wprep_fn[i].fn != NULL;
    if (drv && (rt->nkernels || preps || rt->sk.ptr || rt->sk.done ||
                rt->wprep.ptr || rt->wprep.done || rt->xflags.ptr || rt->xflags.done || rt->xorder_clock ||
                rt->ystage.ptr || rt->ystage.done))
        drv->cuCtxSynchronize(); /* a launch may still run them or read the workspaces */
    for (int i = 0; i < rt->nkernels; i++)
        fp4lr_module_unload(&rt->kernels[i].module);
    rt->nkernels = 0;
    for (size_t i = 0; i < sizeof rt->wprep_fn / sizeof rt->wprep_fn[0]; i++)
        fp4lr_module_unload(&rt->wprep_fn[i].module);
    memset(rt->wprep_fn, 0, sizeof rt->wprep_fn);
    if (drv) {
        workspace_free(drv, &rt->sk);
        workspace_free(drv, &rt->wprep);
        workspace_free(drv, &rt->xflags);
        workspace_free(drv, &rt->ystage);
        for (int i = 0; i < FP4LR_RUNTIME_XORDER_SLOTS; i++)
            workspace_free(drv, &rt->xorder[i].ws);
    }
    memset(&rt->sk, 0, sizeof rt->sk);
    memset(&rt->wprep, 0, sizeof rt->wprep);
    memset(&rt->xflags, 0, sizeof rt->xflags);
    memset(&rt->ystage, 0, sizeof rt->ystage);
    memset(rt->xorder, 0, sizeof rt->xorder);
    rt->xorder_clock = 0;
}

static const char *workspace_name(const fp4lr_runtime *rt, const fp4lr_workspace *w)
{
    return w == &rt->sk       ? "stream-K"
           : w == &rt->wprep  ? "prepared-W"
           : w == &rt->xflags ? "conversion-flag"
           : w == &rt->ystage ? "Y staging"
                              : "conversion-order";
}

/* `need` bytes of workspace w (zeroed when allocated, if `zero`), ordered after the last
 * launch that used it when that ran on another stream (while capturing: as an external
 * event wait, since that launch was not captured).  Once a launch of the runtime was
 * captured, a graph holds w's address: a larger w would free it, and is refused. */
static fp4lr_status workspace_acquire(fp4lr_runtime *rt, fp4lr_workspace *w, size_t need, int zero,
                                      CUstream stream)
{
    const fp4lr_driver *drv = rt->ctx->drv;
    if (w->bytes < need && (rt->capturing || (rt->captured && w->ptr)))
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "GRAPH_WORKSPACE",
                          "this launch needs a %s workspace of %zu bytes, but %s: %s (host/gemm.h)",
                          workspace_name(rt, w), need,
                          rt->capturing ? "the stream is being captured, and allocating is not allowed then"
                                        : "a graph captured from this runtime holds the current one",
                          rt->capturing ? "launch the plan once before capturing"
                                        : "capture the largest problem first, or use another runtime");
    if (w->bytes < need) {
        if (w->ptr) {
            FP4LR_CU(drv, drv->cuCtxSynchronize());
            FP4LR_CU(drv, drv->cuMemFree(w->ptr));
            w->ptr = 0;
            w->bytes = 0;
        }
        FP4LR_CU(drv, drv->cuMemAlloc(&w->ptr, need));
        if (zero) { /* synchronous, before any launch reads it */
            FP4LR_CU(drv, drv->cuMemsetD8(w->ptr, 0, need));
            FP4LR_CU(drv, drv->cuCtxSynchronize());
        }
        w->bytes = need;
        w->epoch = 0;
        w->layout = 0;
        w->have_last = 0;
    }
    if (!w->done)
        FP4LR_CU(drv, drv->cuEventCreate(&w->done, CU_EVENT_DISABLE_TIMING));
    if (w->have_last && w->last != stream)
        FP4LR_CU(drv, drv->cuStreamWaitEvent(stream, w->done, rt->capturing ? CU_EVENT_WAIT_EXTERNAL : 0));
    return fp4lr_ok();
}

/* Marks w used by the work just queued on `stream`: later launches on other streams wait for
 * it.  Called right after each piece of work is queued (not only after the kernel), so that a
 * failure after it still leaves the order right.  A captured launch is not tracked: the graph
 * runs when it is replayed. */
static fp4lr_status workspace_used(fp4lr_runtime *rt, fp4lr_workspace *w, CUstream stream)
{
    if (rt->capturing)
        return fp4lr_ok();
#ifdef FP4LR_MEASURE_NORECORD
    /* measurement builds only (one stream): what the per-launch event records cost */
    (void)w;
    (void)stream;
    return fp4lr_ok();
#endif
    const fp4lr_driver *drv = rt->ctx->drv;
    FP4LR_CU(drv, drv->cuEventRecord(w->done, stream));
    w->last = stream;
    w->have_last = 1;
    return fp4lr_ok();
}

/* The workspace of a split launch over `ctas` CTAs (flags start at 0, which no launch
 * uses), and this launch's flag value.  The flags follow the `ctas` partial-sum slots, so a
 * launch over another CTA count left other words where this one's flags are (its partial
 * sums, or its flags at other places), and once the value wraps a flag may hold any value:
 * then this launch's flags are zeroed on its stream first (after the last launch that used
 * the workspace: workspace_acquire ordered it). */
static fp4lr_status sk_workspace(fp4lr_runtime *rt, int ctas, CUstream stream, CUdeviceptr *ws, uint32_t *epoch)
{
    fp4lr_workspace *w = &rt->sk;
    const fp4lr_driver *drv = rt->ctx->drv;
    FP4LR_TRY(workspace_acquire(rt, w, fp4lr_sm90a_sk_workspace_bytes(ctas), 1, stream));
    const int wrap = w->epoch == UINT32_MAX;
    if (wrap || w->layout != ctas) {
        FP4LR_CU(drv, drv->cuMemsetD32Async(w->ptr + (CUdeviceptr)ctas * FP4LR_SM90A_SK_SLOT_BYTES, 0,
                                            (size_t)ctas, stream));
        FP4LR_TRY(workspace_used(rt, w, stream));
        w->layout = ctas;
    }
    w->epoch = wrap ? 1 : w->epoch + 1;
    *ws = w->ptr;
    *epoch = w->epoch;
    return fp4lr_ok();
}

/* A launch captured into a graph keeps the flag values chosen here for every replay: the
 * stream-K flags and the converters' flags would then hold the value of the replay before,
 * and a kernel waiting for "this launch's value" would read that replay's partial sums or
 * converted W.  Plans that wait on such flags are refused on a capturing stream. */
static fp4lr_status capture_check(const fp4lr_runtime *rt, const fp4lr_plan *plan, int split, CUstream stream)
{
    (void)stream;
    if ((!split && !plan->w_inline) || !rt->capturing)
        return fp4lr_ok();
    return fp4lr_fail(FP4LR_E_UNSUPPORTED, "GRAPH_CAPTURE",
                      "the stream is being captured into a graph, and %s waits on flags whose value the host "
                      "picks per launch (%s): every replay would reuse one value and could read the previous "
                      "replay's %s; for a captured stream, plan with graph = 1 (or schedule dp and w_prep on "
                      "or off; host/gemm.h)",
                      plan->entry, split ? "the stream-K split walk" : "W converted inside the kernel",
                      split ? "partial sums" : "converted W");
}

/* W-prepared plans: the format's wprep kernel (loaded once; the _pdl one for a plan launched as
 * its programmatic dependent) converts W into the runtime's W workspace on `stream`; the
 * plan's W tensor map then points at it. */
static fp4lr_status wprep_run(fp4lr_runtime *rt, const fp4lr_plan *plan, const fp4lr_args *dev, CUstream stream,
                              CUtensorMap *tmW)
{
    const fp4lr_problem *p = &plan->problem;
    FP4LR_TRY(fp4lr_sm90a_wprep_check(p));
    fp4lr_aux_kernel *k = &rt->wprep_fn[(p->format == FP4LR_MXFP4) + 2 * !!plan->pdl];
    const char *entry = fp4lr_sm90a_wprep_entry(p->format, plan->pdl);
    if (!k->fn) {
        FP4LR_TRY(fp4lr_module_load_cubin(rt->ctx, rt->kernel_dir, entry, &k->module, NULL));
        fp4lr_func_expect ex = {.max_regs = 255, .dyn_smem = 0, .max_static_smem = FP4LR_SM90A_WPREP_SMEM,
                                .threads = FP4LR_SM90A_WPREP_THREADS, .threads_exact = 0};
        fp4lr_status st = fp4lr_module_function(&k->module, entry, &k->fn);
        if (st.code == FP4LR_OK)
            st = fp4lr_func_prepare(rt->ctx, k->fn, entry, &ex, NULL);
        if (st.code != FP4LR_OK) {
            fp4lr_module_unload(&k->module);
            k->fn = NULL;
            return st;
        }
    }
    FP4LR_TRY(workspace_acquire(rt, &rt->wprep, fp4lr_sm90a_wprep_bytes(p), 0, stream));
    FP4LR_TRY(fp4lr_sm90a_wprep_tmap(rt->ctx, p, rt->wprep.ptr, (uint32_t)plan->tile_n, tmW));
#ifdef FP4LR_MEASURE_NOPREP
    /* -DFP4LR_MEASURE_NOPREP (measurement builds only, never the library's): what the
     * preparation launch costs, bounded.  An operand shape is prepared once into this
     * workspace; later calls launch the kernel alone on that stale operand (a wrong Y for
     * new inputs, by design). */
    static CUdeviceptr prepared_ptr;
    static int64_t prepared_n, prepared_k;
    static fp4lr_format prepared_fmt;
    if (prepared_ptr == rt->wprep.ptr && prepared_n == p->N && prepared_k == p->K && prepared_fmt == p->format)
        return plan->pdl ? fp4lr_ok() : workspace_used(rt, &rt->wprep, stream);
    prepared_ptr = rt->wprep.ptr;
    prepared_n = p->N;
    prepared_k = p->K;
    prepared_fmt = p->format;
#endif
    FP4LR_TRY(fp4lr_sm90a_wprep_launch(rt->ctx, k->fn, p, dev, rt->wprep.ptr, stream));
    /* recorded now too, so that a launch after a failure below still waits for this one; not
     * for a programmatic dependent, which must follow the preparation directly on the stream
     * (gemm_launch records it after the kernel's launch, or after its failure) */
    return plan->pdl ? fp4lr_ok() : workspace_used(rt, &rt->wprep, stream);
}

/* The _x launch's conversion order (sm90a_xorder.h): one of the runtime's
 * FP4LR_RUNTIME_XORDER_SLOTS tables, one per key (tiles_n, K blocks, band), so that a model
 * cycling through its layers' shapes writes each table once (a copy from pageable memory may
 * wait for the stream).  A new key takes the least recently used slot and is written on
 * `stream`, after every earlier launch on it (workspace_acquire orders other streams). */
static fp4lr_status xorder_setup(fp4lr_runtime *rt, const fp4lr_plan *plan, CUstream stream, int max_ctas,
                                 fp4lr_sm90a_params *prm, fp4lr_workspace **used)
{
    const int tn = (int)prm->tiles_n, nks = (int)prm->num_k_stages;
    const int grid = fp4lr_sm90a_grid(plan, prm, max_ctas);
    const int band = fp4lr_sm90a_xorder_band(grid, (int)prm->tiles_m, (int)prm->group, tn);
    if (fp4lr_sm90a_xorder_identity(grid, tn, nks, band, (int)plan->tile_n / 32)) {
        prm->x_order = 0; /* the identity order: no table */
        *used = NULL;
        return fp4lr_ok();
    }
    /* the narrow tile's table has an entry a converter unit (sm90a_xorder.h); key band < 0 */
    const int units = plan->tile_n == FP4LR_SM90A_TILE_N ? 1 : plan->tile_n / 32;
    const int key2 = units == 1 ? band : -band;
    const size_t items = (size_t)tn * (size_t)nks * (size_t)units;
    int slot = 0;
    for (int i = 0; i < FP4LR_RUNTIME_XORDER_SLOTS; i++) {
        const fp4lr_xorder_slot *x = &rt->xorder[i];
        if (x->ws.epoch && x->key[0] == tn && x->key[1] == nks && x->key[2] == key2) {
            slot = i;
            break;
        }
        if (x->last_use < rt->xorder[slot].last_use)
            slot = i;
    }
    fp4lr_xorder_slot *x = &rt->xorder[slot];
    fp4lr_workspace *w = &x->ws;
    FP4LR_TRY(workspace_acquire(rt, w, items * sizeof(uint32_t), 0, stream));
    prm->x_order = w->ptr;
    *used = w;
    x->last_use = ++rt->xorder_clock;
    if (w->epoch && x->key[0] == tn && x->key[1] == nks && x->key[2] == key2)
        return fp4lr_ok();
    uint32_t *order = malloc(items * sizeof *order);
    if (!order)
        return fp4lr_fail(FP4LR_E_NOMEM, "host_alloc", "no host memory for the %zu-item conversion order", items);
    if (units == 1)
        fp4lr_sm90a_xorder_fill(order, tn, nks, band);
    else
        fp4lr_sm90a_xorder_fill_units(order, tn, nks, band, units);
    const fp4lr_driver *drv = rt->ctx->drv;
    /* pageable source: staged before the call returns, so it can be freed at once */
    CUresult cr = drv->cuMemcpyHtoDAsync(w->ptr, order, items * sizeof *order, stream);
    free(order);
    FP4LR_CU(drv, cr);
    FP4LR_TRY(workspace_used(rt, w, stream));
    w->epoch = 1; /* the table is this key's */
    x->key[0] = tn;
    x->key[1] = nks;
    x->key[2] = key2;
    return fp4lr_ok();
}

/* W converted in the kernel (plan->w_inline): the W workspace the converter warps write
 * and the plan's W tensor map reads, the flags (the unit count and the "all converted" word,
 * then 8 u32 per item; zeroed when allocated; this launch's value is the next epoch, never
 * 0) and the conversion order (none where it is the identity). */
static fp4lr_status xconv_setup(fp4lr_runtime *rt, const fp4lr_plan *plan, const fp4lr_args *dev, CUstream stream,
                                int max_ctas, fp4lr_sm90a_params *prm, fp4lr_workspace **order)
{
    const fp4lr_problem *p = &plan->problem;
    FP4LR_TRY(fp4lr_sm90a_wprep_check(p));
    FP4LR_TRY(workspace_acquire(rt, &rt->wprep, fp4lr_sm90a_wprep_bytes(p), 0, stream));
    const size_t items = (size_t)prm->tiles_n * prm->num_k_stages;
    fp4lr_workspace *w = &rt->xflags;
    FP4LR_TRY(workspace_acquire(rt, w, FP4LR_SM90A_XCONV_HEAD_BYTES + items * FP4LR_SM90A_XCONV_FLAG_BYTES, 1,
                                stream));
    if (w->epoch == UINT32_MAX) { /* a value the flags may still hold: start over from zeroed flags */
        const fp4lr_driver *drv = rt->ctx->drv;
        FP4LR_CU(drv, drv->cuCtxSynchronize());
        FP4LR_CU(drv, drv->cuMemsetD8(w->ptr, 0, w->bytes));
        FP4LR_CU(drv, drv->cuCtxSynchronize()); /* zeroed before any launch (on any stream) counts */
        w->epoch = 0;
    }
    w->epoch++;
    prm->xconv = 1;
    prm->x_W = (CUdeviceptr)(uintptr_t)dev->W;
    prm->x_SFW = (CUdeviceptr)(uintptr_t)dev->SFW;
    prm->x_Wp = rt->wprep.ptr;
    prm->x_flags = w->ptr;
    prm->x_epoch = w->epoch;
    prm->x_N = (uint32_t)p->N;
    prm->x_K = (uint32_t)p->K;
    FP4LR_TRY(xorder_setup(rt, plan, stream, max_ctas, prm, order));
    return fp4lr_sm90a_wprep_tmap(rt->ctx, p, rt->wprep.ptr, (uint32_t)plan->tile_n, &prm->tmW);
}

fp4lr_status fp4lr_runtime_plan(const fp4lr_runtime *rt, const fp4lr_problem *p,
                                const fp4lr_plan_opts *opts, fp4lr_plan *out)
{
    const char *arch_name = NULL;
    FP4LR_TRY(fp4lr_ctx_arch(rt->ctx, &arch_name));
    /* sm100a (10.0) and sm100f (other 10.x parts) share the sm_100a budget rules */
    fp4lr_arch arch = strcmp(arch_name, "sm90a") == 0 ? FP4LR_ARCH_SM90A : FP4LR_ARCH_SM100A;
    fp4lr_plan_opts o;
    if (opts)
        o = *opts;
    else
        memset(&o, 0, sizeof o);
    if (o.smem_capacity == 0)
        o.smem_capacity = rt->ctx->max_smem_optin;
    if (o.sm_count == 0)
        o.sm_count = rt->ctx->sm_count;
    o.family_target = strcmp(arch_name, "sm100f") == 0;
    return fp4lr_plan_make(p, arch, &o, out);
}

/* Sets the function's dynamic shared-memory limit to the plan's size and sizes the
 * persistent grid for it.  One entry serves plans of different sizes (the low-rank
 * ring is sized at run time), so a cached kernel is prepared again when the size changes. */
static fp4lr_status kernel_prepare(fp4lr_runtime *rt, const fp4lr_plan *plan, fp4lr_kernel *k)
{
    fp4lr_func_expect ex = {.max_regs = 65536 / plan->block_threads / 8 * 8,
                            .dyn_smem = (int)plan->smem_bytes,
                            .max_static_smem = 0,
                            .threads = plan->block_threads,
                            .threads_exact = 1};
    FP4LR_TRY(fp4lr_func_prepare(rt->ctx, k->fn, plan->entry, &ex, &k->info));
    unsigned block[3] = {(unsigned)plan->block_threads, 1, 1};
    FP4LR_TRY(fp4lr_occupancy_grid(rt->ctx, k->fn, block, (unsigned)plan->smem_bytes, (unsigned)plan->cluster,
                                   &k->max_ctas));
    k->dyn_smem = (int)plan->smem_bytes;
    return fp4lr_ok();
}

fp4lr_status fp4lr_runtime_kernel(fp4lr_runtime *rt, const fp4lr_plan *plan, fp4lr_kernel **out)
{
    for (int i = 0; i < rt->nkernels; i++)
        if (strcmp(rt->kernels[i].entry, plan->entry) == 0) {
            fp4lr_kernel *k = &rt->kernels[i];
            if (k->dyn_smem != (int)plan->smem_bytes)
                FP4LR_TRY(kernel_prepare(rt, plan, k));
            *out = k;
            return fp4lr_ok();
        }
    if (rt->nkernels == FP4LR_RUNTIME_MAX_KERNELS)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "RUNTIME_FULL", "the runtime holds %d kernels already",
                          FP4LR_RUNTIME_MAX_KERNELS);
    fp4lr_kernel *k = &rt->kernels[rt->nkernels];
    memset(k, 0, sizeof *k);
    snprintf(k->entry, sizeof k->entry, "%s", plan->entry);
    FP4LR_TRY(fp4lr_module_load_cubin(rt->ctx, rt->kernel_dir, plan->entry, &k->module, NULL));
    fp4lr_status st = fp4lr_module_function(&k->module, plan->entry, &k->fn);
    if (st.code == FP4LR_OK)
        st = kernel_prepare(rt, plan, k);
    if (st.code != FP4LR_OK) {
        fp4lr_module_unload(&k->module);
        return st;
    }
    rt->nkernels++;
    *out = k;
    return fp4lr_ok();
}

fp4lr_status fp4lr_runtime_walk(fp4lr_runtime *rt, const fp4lr_plan *plan, fp4lr_sm90a_sk *out)
{
    if (!rt || !plan || !out)
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER", "fp4lr_runtime_walk: runtime, plan and output are required");
    if (plan->arch != FP4LR_ARCH_SM90A)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "WALK_ARCH", "tile walks are chosen on sm_90a only");
    fp4lr_kernel *k = NULL;
    FP4LR_TRY(fp4lr_runtime_kernel(rt, plan, &k));
    return fp4lr_sm90a_schedule(plan->schedule, plan->tiles, (plan->problem.K + plan->tile_k - 1) / plan->tile_k,
                                k->max_ctas / plan->cluster, out);
}

/* The launch of a validated plan whose Y rows end on 16-byte boundaries (fp4lr_gemm). */
static fp4lr_status gemm_launch(fp4lr_runtime *rt, const fp4lr_plan *plan, const fp4lr_args *dev, CUstream stream)
{
    if (plan->arch == FP4LR_ARCH_SM90A) {
        /* a swapped plan's kernel sees A and W exchanged (validated above as the user's) */
        fp4lr_plan kplan;
        fp4lr_args kdev;
        fp4lr_sm90a_kernel_view(plan, dev, &kplan, &kdev);
        plan = &kplan;
        dev = &kdev;
        fp4lr_sm90a_params prm;
        fp4lr_workspace *order = NULL; /* _x plans: the conversion order this launch reads */
        FP4LR_TRY(fp4lr_sm90a_params_make(rt->ctx, plan, dev, &prm));
        if ((int64_t)prm.tiles_m * prm.tiles_n != plan->tiles)
            return fp4lr_fail(FP4LR_E_INVALID, "PLAN_STALE",
                              "the plan walks %" PRId64 " tiles, its problem has %" PRId64 " (%s): plan the "
                              "problem again after changing it",
                              plan->tiles, (int64_t)prm.tiles_m * prm.tiles_n, plan->entry);
        fp4lr_kernel *k = NULL;
        FP4LR_TRY(fp4lr_runtime_kernel(rt, plan, &k));
        FP4LR_TRY(fp4lr_runtime_walk(rt, plan, &prm.sk));
        FP4LR_TRY(capture_check(rt, plan, prm.sk.split, stream));
        if (prm.sk.split)
            FP4LR_TRY(sk_workspace(rt, prm.sk.clusters * plan->cluster, stream, &prm.sk_ws, &prm.sk_epoch));
        if (plan->w_inline) /* after the split walk's workspace: the conversion order follows the grid */
            FP4LR_TRY(xconv_setup(rt, plan, dev, stream, k->max_ctas, &prm, &order));
        else if (plan->w_prep)
            FP4LR_TRY(wprep_run(rt, plan, dev, stream, &prm.tmW));
        const fp4lr_status st = fp4lr_sm90a_launch(rt->ctx, k->fn, plan, &prm, k->max_ctas, stream);
        if (st.code != FP4LR_OK) {
            if (plan->pdl) /* the preparation did run: later launches wait for it */
                (void)workspace_used(rt, &rt->wprep, stream);
            return st;
        }
        if (plan->w_prep) /* first: with pdl, the only record of the preparation's use */
            FP4LR_TRY(workspace_used(rt, &rt->wprep, stream));
        if (prm.sk.split)
            FP4LR_TRY(workspace_used(rt, &rt->sk, stream));
        if (plan->w_inline) {
            FP4LR_TRY(workspace_used(rt, &rt->xflags, stream));
            if (order) /* none for the identity order */
                FP4LR_TRY(workspace_used(rt, order, stream));
        }
        return fp4lr_ok();
    }
    if (plan->arch == FP4LR_ARCH_SM100A) {
        /* dense and fused (not executed: no Blackwell GPU has run these launches) */
        fp4lr_sm100a_params prm;
        FP4LR_TRY(fp4lr_sm100a_params_make(rt->ctx, plan, dev, &prm));
        fp4lr_kernel *k = NULL;
        FP4LR_TRY(fp4lr_runtime_kernel(rt, plan, &k));
        return fp4lr_sm100a_launch(rt->ctx, k->fn, plan, &prm, k->max_ctas, stream);
    }
    return fp4lr_fail(FP4LR_E_UNSUPPORTED, "NO_KERNEL",
                      "no %s %s kernel is built yet (plan entry %s)",
                      plan->arch == FP4LR_ARCH_SM90A ? "sm_90a" : "sm_100a",
                      fp4lr_family_name(plan->family), plan->entry);
}

/* fp4lr_gemm on a validated problem and arguments. */
static fp4lr_status gemm_run(fp4lr_runtime *rt, const fp4lr_plan *plan, const fp4lr_args *dev, CUstream stream)
{
    const fp4lr_problem *p = &plan->problem;
    const size_t ob = (size_t)fp4lr_out_bytes(p->out), row = (size_t)p->N * ob;
    if (row % 16 == 0)
        return gemm_launch(rt, plan, dev, stream);
    /* A bulk tensor store writes the 16-byte piece holding a row's last outputs whole: the
     * columns after N up to the next 16 bytes would be written too (ldY > N there, and they
     * may be another tensor's).  The kernel writes a staging copy with padded rows; the M x N
     * outputs are then copied into Y. */
    const size_t pitch = (row + 15) / 16 * 16;
    FP4LR_TRY(workspace_acquire(rt, &rt->ystage, pitch * (size_t)p->M, 0, stream));
    fp4lr_plan staged = *plan;
    staged.problem.ldY = (int64_t)(pitch / ob);
    fp4lr_args sdev = *dev;
    sdev.Y = (void *)(uintptr_t)rt->ystage.ptr;
    FP4LR_TRY(gemm_launch(rt, &staged, &sdev, stream));
    FP4LR_TRY(workspace_used(rt, &rt->ystage, stream)); /* the kernel writes it, whatever follows */
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = rt->ystage.ptr;
    c.srcPitch = pitch;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = (CUdeviceptr)(uintptr_t)dev->Y;
    c.dstPitch = (size_t)p->ldY * ob;
    c.WidthInBytes = row;
    c.Height = (size_t)p->M;
    const fp4lr_driver *drv = rt->ctx->drv;
    FP4LR_CU(drv, drv->cuMemcpy2DAsync(&c, stream));
    return workspace_used(rt, &rt->ystage, stream);
}

fp4lr_status fp4lr_gemm(fp4lr_runtime *rt, const fp4lr_plan *plan, const fp4lr_args *dev, CUstream stream)
{
    if (!rt || !plan || !dev)
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER", "fp4lr_gemm: runtime, plan and arguments are required");
    FP4LR_TRY(fp4lr_problem_validate(&plan->problem));
    FP4LR_TRY(fp4lr_args_validate(&plan->problem, dev));
    /* a stream being captured into a graph (gemm.h): some plans are refused, workspaces are
     * not allocated and not tracked, and once captured they keep their addresses */
    const fp4lr_driver *drv = rt->ctx->drv;
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    FP4LR_CU(drv, drv->cuStreamIsCapturing(stream, &cs));
    rt->capturing = cs != CU_STREAM_CAPTURE_STATUS_NONE;
    const fp4lr_status st = gemm_run(rt, plan, dev, stream);
    if (st.code == FP4LR_OK && rt->capturing)
        rt->captured = 1;
    rt->capturing = 0;
    return st;
}
