/* The fused kernels' low-rank and affine parameters, after the dense ones in every fused
 * entry (sm_90a and sm_100a declare the same list: ptx/ABI.md). */
#ifndef FP4LR_LOWRANK_PARAMS_H
#define FP4LR_LOWRANK_PARAMS_H

#include <stdint.h>

#include "driver.h"

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

#endif
