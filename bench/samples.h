/* Every timed launch of a benchmark run, one CSV line each (fp4lr-bench --samples).
 *
 * The medians of the results table hide how a row's launches spread: a card that
 * changes clocks mid-round, one slow rotation copy, a first launch that pays for a
 * cold cache.  This file keeps them: per launch the round, its place in the round,
 * the input copy it read, its time, and where it started - the host's wall clock at
 * the round's first enqueue plus the launches before it in that round (they run back
 * to back), to line up with a clock log such as `nvidia-smi --query-gpu=timestamp,...
 * -lms 20`. */
#ifndef FP4LR_BENCH_SAMPLES_H
#define FP4LR_BENCH_SAMPLES_H

#include <stdio.h>

#include "results.h"

/* The column names, one line. */
void fp4lr_samples_header(FILE *f);

/* The launches of one timed row: ms[round * iters + i] the i-th timed launch of a
 * round, which read input copy (warmup + i) % copies (the timer's launch numbering,
 * bench/rotate.h); round_t0[round] the host's Unix time in seconds when the round's
 * first launch was enqueued (0: unknown, written empty).  Writes rounds * iters lines. */
void fp4lr_samples_row(FILE *f, const fp4lr_bench_row *row, const double *ms, int rounds, int iters, int warmup,
                       int copies, const double *round_t0);

/* The host's wall clock, Unix seconds with microseconds (for round_t0). */
double fp4lr_samples_now(void);

#endif
