/* Input rotation against the L2 cache (rotate.h). */
#include "rotate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *fp4lr_rotation_limit_name(fp4lr_rotation_limit l)
{
    switch (l) {
    case FP4LR_ROTATION_BY_L2: return "l2";
    case FP4LR_ROTATION_BY_CAP: return "cap";
    case FP4LR_ROTATION_BY_MEMORY: return "memory";
    }
    return "unknown";
}

fp4lr_rotation fp4lr_rotation_plan(size_t read_bytes, size_t copy_bytes, size_t l2_bytes, size_t mem_budget)
{
    fp4lr_rotation r = {.copies = 1, .wanted = 1, .limit = FP4LR_ROTATION_BY_L2,
                        .read_bytes = read_bytes, .copy_bytes = copy_bytes};
    /* Smallest k with k * read > 3 * L2.  Computed in 64-bit without the product
     * k * read, so no size overflows; anything past the cap is the cap + 1. */
    if (read_bytes > 0) {
        uint64_t need = (uint64_t)FP4LR_ROTATION_L2_FACTOR * (uint64_t)l2_bytes / (uint64_t)read_bytes + 1;
        r.wanted = need > FP4LR_ROTATION_MAX_COPIES ? FP4LR_ROTATION_MAX_COPIES + 1 : (int)need;
    }
    r.copies = r.wanted;
    if (r.copies > FP4LR_ROTATION_MAX_COPIES) {
        r.copies = FP4LR_ROTATION_MAX_COPIES;
        r.limit = FP4LR_ROTATION_BY_CAP;
    }
    if (copy_bytes > 0 && (uint64_t)mem_budget / copy_bytes < (uint64_t)r.copies) {
        uint64_t fit = (uint64_t)mem_budget / copy_bytes;
        r.copies = fit < 1 ? 1 : (int)fit;
        r.limit = FP4LR_ROTATION_BY_MEMORY;
    }
    return r;
}

fp4lr_status fp4lr_rotation_mem_budget(const fp4lr_ctx *ctx, size_t reserve, size_t *budget)
{
    size_t free_b = 0, total_b = 0;
    FP4LR_CU(ctx->drv, ctx->drv->cuMemGetInfo(&free_b, &total_b));
    *budget = free_b > reserve ? free_b - reserve : 0;
    return fp4lr_ok();
}

void fp4lr_problem_rotation_bytes(const fp4lr_sizes *s, size_t *read_bytes, size_t *copy_bytes)
{
    size_t in = s->A + s->SFA + s->W + s->SFW + s->L + s->U + s->wc + s->beta;
    *read_bytes = in;
    *copy_bytes = in + s->Y;
}

fp4lr_status fp4lr_devproblem_ring_create(const fp4lr_ctx *ctx, const fp4lr_problem *p, const fp4lr_args *host,
                                          int copies, fp4lr_devproblem_ring *out)
{
    memset(out, 0, sizeof *out);
    if (copies < 1 || copies > FP4LR_ROTATION_MAX_COPIES)
        return fp4lr_fail(FP4LR_E_INVALID, "ROTATION_COPIES", "rotation copies must be 1..%d (got %d)",
                          FP4LR_ROTATION_MAX_COPIES, copies);
    out->copy = calloc((size_t)copies, sizeof *out->copy);
    if (!out->copy)
        return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate %d rotation copies", copies);
    for (int i = 0; i < copies; i++) {
        fp4lr_status st = fp4lr_devproblem_alloc(ctx, p, &out->copy[i]);
        if (st.code == FP4LR_OK) {
            out->n = i + 1; /* allocated: freed by ring_free from here on */
            st = fp4lr_devproblem_upload(&out->copy[i], host);
        }
        if (st.code != FP4LR_OK) {
            fp4lr_devproblem_ring_free(out);
            return st;
        }
    }
    return fp4lr_ok();
}

void fp4lr_devproblem_ring_free(fp4lr_devproblem_ring *r)
{
    for (int i = 0; i < r->n; i++)
        fp4lr_devproblem_free(&r->copy[i]);
    free(r->copy);
    memset(r, 0, sizeof *r);
}

fp4lr_status fp4lr_ring_gemm_timed(void *user, int i, CUstream stream)
{
    const fp4lr_ring_gemm *g = user;
    const fp4lr_devproblem *d = &g->ring->copy[fp4lr_rotation_index(i, g->ring->n)];
    return fp4lr_gemm(g->rt, g->plan, &d->args, stream);
}
