/* Low-rank and affine kernel parameters shared by the sm_90a and sm_100a launchers. */
#include "lowrank_params.h"

#include <string.h>

#include "tmap_operands.h"

int fp4lr_lowrank_chunk(const fp4lr_plan *plan)
{
    int rc = 16;
    while (rc * 2 <= plan->budget.lora_chunk && rc * 2 <= 64)
        rc *= 2;
    return rc;
}

int fp4lr_lowrank_slots(const fp4lr_plan *plan, int max_slots)
{
    const int rc = fp4lr_lowrank_chunk(plan);
    const int slots = plan->budget.stages_lora * plan->budget.lora_chunk / rc;
    return slots < 1 ? 1 : slots > max_slots ? max_slots : slots;
}

fp4lr_status fp4lr_lowrank_params_fill(const fp4lr_ctx *ctx, const fp4lr_plan *plan, const fp4lr_args *dev,
                                       uint32_t l_rows, uint32_t u_rows, fp4lr_lowrank_params *lr)
{
    const fp4lr_problem *p = &plan->problem;
    memset(lr, 0, sizeof *lr);
    const uint32_t rc = (uint32_t)fp4lr_lowrank_chunk(plan);
    lr->wc = p->has_wc ? (uint64_t)(uintptr_t)dev->wc : 0;
    lr->beta = p->has_beta ? (uint64_t)(uintptr_t)dev->beta : 0;
    lr->N = (uint32_t)p->N;
    lr->sub = 1;
    lr->wk = rc;
    lr->ksteps = rc / 16;
    lr->slots = 1;
    if (p->r == 0)
        return fp4lr_ok(); /* affine only: no chunks; the kernels never touch the zeroed maps */
    lr->chunks = (uint32_t)((p->r + rc - 1) / rc);
    fp4lr_tmap_desc d = fp4lr_tmap_lowrank(dev->L, p->M, p->r, p->ldL, rc, l_rows);
    FP4LR_TRY(fp4lr_tmap_encode(ctx, &lr->tmL, &d));
    d = fp4lr_tmap_lowrank(dev->U, p->N, p->r, p->ldU, rc, u_rows);
    FP4LR_TRY(fp4lr_tmap_encode(ctx, &lr->tmU, &d));
    return fp4lr_ok();
}
