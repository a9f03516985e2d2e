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
} fp4lr_timing;

/* Runs fn `warmup` times, then `reps` (<= 1024) times each between two events on
 * `stream`, and reports the statistics of the per-repetition times. */
fp4lr_status fp4lr_time(const fp4lr_ctx *ctx, fp4lr_timed_fn fn, void *user, int warmup, int reps,
                        CUstream stream, fp4lr_timing *out);

#endif
