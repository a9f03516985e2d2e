/* Device copies of a problem's operands: allocation, upload, output download,
 * output poisoning.  Used by tools, tests and benchmarks. */
#ifndef FP4LR_DEVPROBLEM_H
#define FP4LR_DEVPROBLEM_H

#include "device.h"
#include "problem.h"

typedef struct fp4lr_devproblem {
    const fp4lr_ctx *ctx;
    fp4lr_problem p;          /* resolved */
    fp4lr_sizes sizes;
    CUdeviceptr A, SFA, W, SFW, L, U, wc, beta, Y;
    fp4lr_args args;          /* device addresses of the above, for fp4lr_gemm */
} fp4lr_devproblem;

/* Allocates every present operand (and Y) for problem p; on failure frees what it
 * allocated. */
fp4lr_status fp4lr_devproblem_alloc(const fp4lr_ctx *ctx, const fp4lr_problem *p, fp4lr_devproblem *d);
/* Uploads the inputs of `host` (host pointers; alpha copied). */
fp4lr_status fp4lr_devproblem_upload(fp4lr_devproblem *d, const fp4lr_args *host);
/* Fills Y with the NaN pattern of its output type (unwritten outputs then fail). */
fp4lr_status fp4lr_devproblem_poison(fp4lr_devproblem *d);
/* Downloads Y (sizes.Y bytes) into y. */
fp4lr_status fp4lr_devproblem_download(fp4lr_devproblem *d, void *y);
void fp4lr_devproblem_free(fp4lr_devproblem *d);

#endif
