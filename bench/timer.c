/* CUDA-event timing with medians (see timer.h). */
#include "timer.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_REPS = FP4LR_TIMER_MAX_REPS };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void fp4lr_timing_of(const double *ms, int n, fp4lr_timing *out)
{
    double *s = malloc(sizeof *s * (size_t)(n > 0 ? n : 1));
    memset(out, 0, sizeof *out);
    if (!s || n < 1) {
        free(s);
        return;
    }
    memcpy(s, ms, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof s[0], cmp_double);
    out->reps = n;
    out->min_ms = s[0];
    out->max_ms = s[n - 1];
    out->median_ms = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    out->p10_ms = s[n / 10];
    out->p90_ms = s[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1];
    free(s);
}

fp4lr_status fp4lr_time(const fp4lr_ctx *ctx, fp4lr_timed_fn fn, void *user, int warmup, int reps,
                        CUstream stream, fp4lr_timing *out)
{
    double ms[MAX_REPS];
    return fp4lr_time_samples(ctx, fn, user, warmup, reps, stream, out, ms);
}

fp4lr_status fp4lr_time_samples(const fp4lr_ctx *ctx, fp4lr_timed_fn fn, void *user, int warmup, int reps,
                                CUstream stream, fp4lr_timing *out, double *ms)
{
    const fp4lr_driver *drv = ctx->drv;
    if (reps < 1 || reps > MAX_REPS || warmup < 0)
        return fp4lr_fail(FP4LR_E_INVALID, "TIMER_REPS", "repetitions must be 1..%d (got %d), warm-up >= 0",
                          MAX_REPS, reps);
    /* a stream of the caller's own (non-blocking) does not wait for the legacy stream's work
     * (the inputs' uploads, Y's poison): let that finish first */
    if (stream)
        FP4LR_TRY(fp4lr_ctx_sync(ctx));
    /* the host's time per call over the warm-up: the median, so that a first call's one-time
     * work (a module loaded lazily, a library's heuristics) does not count */
    double host[MAX_REPS];
    const int nh = warmup < MAX_REPS ? warmup : MAX_REPS;
    for (int i = 0; i < warmup; i++) {
        struct timespec h0, h1;
        clock_gettime(CLOCK_MONOTONIC, &h0);
        FP4LR_TRY(fn(user, i, stream));
        clock_gettime(CLOCK_MONOTONIC, &h1);
        if (i < nh)
            host[i] = (double)(h1.tv_sec - h0.tv_sec) * 1e3 + (double)(h1.tv_nsec - h0.tv_nsec) * 1e-6;
    }
    fp4lr_timing h;
    fp4lr_timing_of(host, nh, &h);
    CUevent ev[MAX_REPS + 1];
    int made = 0;
    fp4lr_status st = fp4lr_ok();
    for (; made <= reps; made++) {
        CUresult r = drv->cuEventCreate(&ev[made], CU_EVENT_DEFAULT);
        if (r != CUDA_SUCCESS) {
            st = fp4lr_cu_status(drv, r, "cuEventCreate", __FILE__, __LINE__);
            break;
        }
    }
    if (st.code == FP4LR_OK) {
        CUresult r = drv->cuEventRecord(ev[0], stream);
        if (r != CUDA_SUCCESS)
            st = fp4lr_cu_status(drv, r, "cuEventRecord", __FILE__, __LINE__);
        for (int i = 0; i < reps && st.code == FP4LR_OK; i++) {
            st = fn(user, warmup + i, stream);
            if (st.code == FP4LR_OK && (r = drv->cuEventRecord(ev[i + 1], stream)) != CUDA_SUCCESS)
                st = fp4lr_cu_status(drv, r, "cuEventRecord", __FILE__, __LINE__);
        }
        if (st.code == FP4LR_OK && (r = drv->cuEventSynchronize(ev[reps])) != CUDA_SUCCESS)
            st = fp4lr_cu_status(drv, r, "cuEventSynchronize", __FILE__, __LINE__);
        for (int i = 0; i < reps && st.code == FP4LR_OK; i++) {
            float f = 0;
            if ((r = drv->cuEventElapsedTime(&f, ev[i], ev[i + 1])) != CUDA_SUCCESS)
                st = fp4lr_cu_status(drv, r, "cuEventElapsedTime", __FILE__, __LINE__);
            ms[i] = f;
        }
    }
    for (int i = 0; i < made; i++)
        drv->cuEventDestroy(ev[i]);
    if (st.code != FP4LR_OK)
        return st;
    fp4lr_timing_of(ms, reps, out);
    out->host_ms = h.median_ms;
    return fp4lr_ok();
}
