/* fp4lr-check --timeline (see cli_timeline.h). */
#include "cli_timeline.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

fp4lr_status fp4lr_cli_timeline(fp4lr_runtime *rt, const fp4lr_plan *plan, const fp4lr_args *dev,
                                const char *path)
{
    fp4lr_kernel *k = NULL;
    FP4LR_TRY(fp4lr_runtime_kernel(rt, plan, &k));
    const fp4lr_driver *drv = rt->ctx->drv;
    CUdeviceptr g = 0;
    size_t bytes = 0;
    CUresult r = drv->cuModuleGetGlobal(&g, &bytes, k->module.handle, "fp4lr_tline");
    if (r == CUDA_ERROR_NOT_FOUND)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "TIMELINE_NOT_BUILT",
                          "kernel %s has no timeline: build it with tools/experiment_build.sh tline DIR "
                          "'<its name>*' and run with FP4LR_KERNEL_DIR=DIR", plan->entry);
    FP4LR_CU(drv, r);
    const size_t per_cta = FP4LR_TLINE_EVENTS * sizeof(uint64_t);
    if (bytes < per_cta || bytes % per_cta)
        return fp4lr_fail(FP4LR_E_INVALID, "TIMELINE_SIZE", "fp4lr_tline of %s holds %zu bytes, not a multiple of "
                          "%zu (%d events a CTA)", plan->entry, bytes, per_cta, FP4LR_TLINE_EVENTS);
    FP4LR_CU(drv, drv->cuMemsetD8(g, 0, bytes));
    FP4LR_TRY(fp4lr_gemm(rt, plan, dev, NULL));
    FP4LR_TRY(fp4lr_ctx_sync(rt->ctx));
    uint64_t *t = malloc(bytes);
    if (!t)
        return fp4lr_fail(FP4LR_E_NOMEM, "TIMELINE_HOST", "%zu bytes for the timeline", bytes);
    fp4lr_status st = fp4lr_ok();
    r = drv->cuMemcpyDtoH(t, g, bytes);
    if (r != CUDA_SUCCESS)
        st = fp4lr_cu_status(drv, r, "cuMemcpyDtoH", __FILE__, __LINE__);
    const size_t ctas = bytes / per_cta;
    uint64_t t0 = 0;
    for (size_t c = 0; st.code == FP4LR_OK && c < ctas; c++)
        if (t[c * FP4LR_TLINE_EVENTS] && (!t0 || t[c * FP4LR_TLINE_EVENTS] < t0))
            t0 = t[c * FP4LR_TLINE_EVENTS];
    if (st.code == FP4LR_OK && !t0)
        st = fp4lr_fail(FP4LR_E_INVALID, "TIMELINE_EMPTY", "the launch of %s stored no entry event", plan->entry);
    FILE *f = st.code == FP4LR_OK ? fopen(path, "w") : NULL;
    if (st.code == FP4LR_OK && !f)
        st = fp4lr_fail(FP4LR_E_IO, "TIMELINE_FILE", "%s: %s", path, strerror(errno));
    if (f) {
        fprintf(f, "cta,event,us\n");
        for (size_t c = 0; c < ctas; c++)
            for (int e = 0; e < FP4LR_TLINE_EVENTS; e++) {
                const uint64_t v = t[c * FP4LR_TLINE_EVENTS + e];
                if (v)
                    fprintf(f, "%zu,%d,%.3f\n", c, e, ((double)v - (double)t0) * 1e-3);
            }
        if (fclose(f))
            st = fp4lr_fail(FP4LR_E_IO, "TIMELINE_FILE", "%s: write failed", path);
    }
    free(t);
    return st;
}
