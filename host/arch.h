/* The GPU architectures fp4lr has kernels for, their names, and the default
 * on-chip capacities the budget solver plans against (ARCHITECTURE.md §4, §5).
 *
 * The defaults are the documented opt-in limits; a device's reported limit
 * (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) overrides them
 * through fp4lr_budget_req.smem_capacity. */
#ifndef FP4LR_ARCH_H
#define FP4LR_ARCH_H

#include <stdint.h>
#include <string.h>

typedef enum fp4lr_arch {
    FP4LR_ARCH_SM90A = 0,  /* Hopper, wgmma (H100/H200) */
    FP4LR_ARCH_SM100A = 1, /* Blackwell, tcgen05 (B200) */
} fp4lr_arch;

/* Dynamic shared memory per block, opt-in: 227 KiB on both (H200 device
 * query; Blackwell Tuning Guide, cutlass sm100_smem_capacity_bytes). */
#define FP4LR_SM90A_SMEM_BYTES 232448
#define FP4LR_SM100A_SMEM_BYTES 232448
/* Tensor memory per CTA on sm_100a: 128 lanes x 512 columns of 32 bit. */
#define FP4LR_SM100A_TMEM_COLS 512

/* 1 for a known architecture value. */
static inline int fp4lr_arch_valid(int a) { return a == FP4LR_ARCH_SM90A || a == FP4LR_ARCH_SM100A; }

/* "sm90a" / "sm100a" ("?" for anything else). */
static inline const char *fp4lr_arch_name(fp4lr_arch a)
{
    return a == FP4LR_ARCH_SM90A ? "sm90a" : a == FP4LR_ARCH_SM100A ? "sm100a" : "?";
}

/* Parses "sm90a" / "sm100a" into *out; 0 on success, -1 (nothing written) otherwise. */
static inline int fp4lr_arch_parse(const char *s, fp4lr_arch *out)
{
    if (s && strcmp(s, "sm90a") == 0) { *out = FP4LR_ARCH_SM90A; return 0; }
    if (s && strcmp(s, "sm100a") == 0) { *out = FP4LR_ARCH_SM100A; return 0; }
    return -1;
}

/* Default dynamic shared-memory capacity per block, in bytes. */
static inline int64_t fp4lr_arch_smem_default(fp4lr_arch a)
{
    return a == FP4LR_ARCH_SM100A ? FP4LR_SM100A_SMEM_BYTES : FP4LR_SM90A_SMEM_BYTES;
}

/* Tensor-memory columns per CTA (0: the architecture has none). */
static inline int fp4lr_arch_tmem_cols(fp4lr_arch a)
{
    return a == FP4LR_ARCH_SM100A ? FP4LR_SM100A_TMEM_COLS : 0;
}

#endif
