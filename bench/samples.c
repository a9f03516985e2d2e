/* Every timed launch, one CSV line each (see samples.h). */
#include "samples.h"

#include <time.h>

#include "rotate.h"

void fp4lr_samples_header(FILE *f)
{
    fputs("shape,M,N,K,r,format,variant,entry,force_stages,round,launch,copy,ms,start_unix_s,offset_ms\n", f);
}

void fp4lr_samples_row(FILE *f, const fp4lr_bench_row *row, const double *ms, int rounds, int iters, int warmup,
                       int copies, const double *round_t0)
{
    for (int k = 0; k < rounds; k++) {
        double offset = 0.0; /* the launches before this one in the round, back to back */
        for (int i = 0; i < iters; i++) {
            const double t = ms[(size_t)k * (size_t)iters + (size_t)i];
            fprintf(f, "%s,%lld,%lld,%lld,%lld,%s,%s,%s,%d,%d,%d,%d,%.6f,", row->shape, (long long)row->M,
                    (long long)row->N, (long long)row->K, (long long)row->r, row->format, row->variant,
                    row->has_plan ? row->entry : "", row->force_stages, k, i,
                    fp4lr_rotation_index(warmup + i, copies), t);
            if (round_t0 && round_t0[k] > 0)
                fprintf(f, "%.6f", round_t0[k] + offset * 1e-3);
            fprintf(f, ",%.6f\n", offset);
            offset += t;
        }
    }
}

double fp4lr_samples_now(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
