/* The fused kernels' low-rank and affine parameters, after the dense ones in every fused
 * entry (sm_90a and sm_100a declare the same list: ptx/ABI.md). */
#ifndef FP4LR_LOWRANK_PARAMS_H
#define FP4LR_LOWRANK_PARAMS_H

#include <stdint.h>

#include "device.h"
#include "driver.h"
#include "plan.h"
#include "problem.h"
#include "status.h"

typedef struct fp4lr_lowrank_params {
    CUtensorMap tmL, tmU;
    uint64_t wc, beta;        /* device addresses, 0 when absent */
    uint32_t N;
    uint32_t chunks;          /* ceil(r / rc) low-rank chunks per tile; 0 without low rank */
    uint32_t slots;           /* ring slots used */
    uint32_t sub;             /* boxes per chunk (1: rc <= 64) */
    uint32_t ksteps;          /* MMAs of K = 16 per chunk, rc / 16 */
    uint32_t wk;              /* ranks per box = rc */
    uint32_t deschi;          /* high word of the L / U shared-memory descriptors (arch encoding) */
} fp4lr_lowrank_params;

/* The kernels' low-rank chunk rc: the largest of 16, 32, 64 not above the plan's budget chunk
 * (one TMA box of 2*rc-byte rows per operand). */
int fp4lr_lowrank_chunk(const fp4lr_plan *plan);

/* The ring slots the kernel uses: the budget's ring (stages_lora slots of lora_chunk ranks) in
 * slots of rc = fp4lr_lowrank_chunk ranks, so that a budget chunk the kernel cannot take whole
 * (128, or 48) is not left half empty; 1 to max_slots. */
int fp4lr_lowrank_slots(const fp4lr_plan *plan, int max_slots);

/* Fills what both architectures share: wc and beta (0 when absent), N, sub = 1, wk = rc,
 * ksteps = rc / 16, chunks = ceil(r / rc), slots = 1, and, when r > 0, the L map (box
 * {rc, l_rows}) and the U map (box {rc, u_rows}).  The caller sets slots and deschi. */
fp4lr_status fp4lr_lowrank_params_fill(const fp4lr_ctx *ctx, const fp4lr_plan *plan, const fp4lr_args *dev,
                                       uint32_t l_rows, uint32_t u_rows, fp4lr_lowrank_params *lr);

#endif
