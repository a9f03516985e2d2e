/* Device operand buffers of one problem. */
#include "devproblem.h"

#include <string.h>

#include "devbuf.h"

fp4lr_status fp4lr_devproblem_alloc(const fp4lr_ctx *ctx, const fp4lr_problem *p, fp4lr_devproblem *d)
{
    memset(d, 0, sizeof *d);
    d->ctx = ctx;
    d->p = *p;
    fp4lr_problem_resolve(&d->p);
    FP4LR_TRY(fp4lr_problem_validate(&d->p));
    d->sizes = fp4lr_problem_sizes(&d->p);
    struct { CUdeviceptr *ptr; size_t bytes; } bufs[] = {
        {&d->A, d->sizes.A}, {&d->SFA, d->sizes.SFA}, {&d->W, d->sizes.W}, {&d->SFW, d->sizes.SFW},
        {&d->L, d->sizes.L}, {&d->U, d->sizes.U}, {&d->wc, d->sizes.wc}, {&d->beta, d->sizes.beta},
        {&d->Y, d->sizes.Y},
    };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        if (bufs[i].bytes == 0)
            continue;
        fp4lr_status st = fp4lr_dev_alloc(ctx, bufs[i].ptr, bufs[i].bytes);
        if (st.code != FP4LR_OK) {
            fp4lr_devproblem_free(d);
            return st;
        }
    }
    memset(&d->args, 0, sizeof d->args);
    d->args.A = (const uint8_t *)(uintptr_t)d->A;
    d->args.SFA = (const uint8_t *)(uintptr_t)d->SFA;
    d->args.W = (const uint8_t *)(uintptr_t)d->W;
    d->args.SFW = (const uint8_t *)(uintptr_t)d->SFW;
    d->args.L = (const uint16_t *)(uintptr_t)d->L;
    d->args.U = (const uint16_t *)(uintptr_t)d->U;
    d->args.wc = (const float *)(uintptr_t)d->wc;
    d->args.beta = (const float *)(uintptr_t)d->beta;
    d->args.Y = (void *)(uintptr_t)d->Y;
    d->args.alpha = 1.0f;
    return fp4lr_ok();
}

fp4lr_status fp4lr_devproblem_upload(fp4lr_devproblem *d, const fp4lr_args *h)
{
    struct { CUdeviceptr dst; const void *src; size_t bytes; } up[] = {
        {d->A, h->A, d->sizes.A}, {d->SFA, h->SFA, d->sizes.SFA}, {d->W, h->W, d->sizes.W},
        {d->SFW, h->SFW, d->sizes.SFW}, {d->L, h->L, d->sizes.L}, {d->U, h->U, d->sizes.U},
        {d->wc, h->wc, d->sizes.wc}, {d->beta, h->beta, d->sizes.beta},
    };
    for (size_t i = 0; i < sizeof up / sizeof up[0]; i++) {
        if (up[i].bytes == 0)
            continue;
        if (!up[i].src)
            return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER", "upload: host operand %zu is missing", i);
        FP4LR_TRY(fp4lr_dev_upload(d->ctx, up[i].dst, up[i].src, up[i].bytes));
    }
    d->args.alpha = h->alpha;
    return fp4lr_ok();
}

fp4lr_status fp4lr_devproblem_poison(fp4lr_devproblem *d)
{
    return fp4lr_dev_poison_nan(d->ctx, d->Y, d->sizes.Y, fp4lr_out_bytes(d->p.out));
}

fp4lr_status fp4lr_devproblem_download(fp4lr_devproblem *d, void *y)
{
    return fp4lr_dev_download(d->ctx, y, d->Y, d->sizes.Y);
}

void fp4lr_devproblem_free(fp4lr_devproblem *d)
{
    CUdeviceptr *all[] = {&d->A, &d->SFA, &d->W, &d->SFW, &d->L, &d->U, &d->wc, &d->beta, &d->Y};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (*all[i])
            fp4lr_dev_free(d->ctx, *all[i]);
        *all[i] = 0;
    }
}
