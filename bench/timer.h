/* Timing of device work with CUDA events: warm-up, then one event pair per
 * repetition, and the median and spread of the repetitions. */
#ifndef FP4LR_TIMER_H
#define FP4LR_TIMER_H

#include "device.h"

/* One repetition of the work; `i` counts repetitions (for input rotation). */
typedef fp4lr_status (*fp4lr_timed_fn)(void *user, int i, CUstream stream);

typedef struct fp4lr_timing {
    int reps;
    double median_ms, min_ms, max_ms, p10_ms, p90_ms;
    /* the host's time to enqueue one repetition (one fn call, wall clock), the median over
     * the warm-up, which starts on an idle stream and is too short to fill the launch queue:
     * when it is near median_ms the host, not the device, paced the timed launches.  0
     * without warm-up (and from fp4lr_timing_of, which has only device times) */
    double host_ms;
} fp4lr_timing;

#define FP4LR_TIMER_MAX_REPS 1024

/* Runs fn `warmup` times (timing the host: host_ms), then `reps` (1..FP4LR_TIMER_MAX_REPS)
 * times each between two events on `stream`, and reports the statistics of the
 * per-repetition times. */
fp4lr_status fp4lr_time(const fp4lr_ctx *ctx, fp4lr_timed_fn fn, void *user, int warmup, int reps,
                        CUstream stream, fp4lr_timing *out);
/* As fp4lr_time, and the per-repetition times in launch order into ms[0..reps)
 * (for pooling several rounds: fp4lr_timing_of). */
fp4lr_status fp4lr_time_samples(const fp4lr_ctx *ctx, fp4lr_timed_fn fn, void *user, int warmup, int reps,
                                CUstream stream, fp4lr_timing *out, double *ms);
/* The statistics of n > 0 times (ms is left as it is); the median of an even
 * count is the mean of the middle two, p10 / p90 the sorted n/10-th and 9n/10-th. */
void fp4lr_timing_of(const double *ms, int n, fp4lr_timing *out);

#endif
