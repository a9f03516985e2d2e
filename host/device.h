/* The device context: one explicit fp4lr_ctx per device (no globals).
 *
 * fp4lr_ctx_create opens the driver, initialises it, retains the device's
 * primary context, makes it current on the calling thread and reads every
 * device property fp4lr plans with from the driver (nothing is hard-coded). */
#ifndef FP4LR_DEVICE_H
#define FP4LR_DEVICE_H

#include "driver.h"

typedef struct fp4lr_ctx {
    fp4lr_driver *drv;            /* owned */
    CUdevice dev;
    CUcontext ctx;                /* the primary context, retained */
    int ordinal;
    int cc_major, cc_minor;       /* compute capability */
    int sm_count;
    int max_smem_optin;           /* dynamic + static shared memory per block, opt-in (bytes) */
    int smem_per_sm;              /* shared memory per multiprocessor (bytes) */
    int reserved_smem_per_block;  /* shared memory the driver reserves per block (bytes) */
    int l2_bytes;
    int clock_khz;                /* 0 when the driver does not report it */
    int mem_clock_khz;            /* 0 when the driver does not report it */
    int regs_per_sm;              /* 32-bit registers per multiprocessor */
    int max_threads_per_block;
    int cluster_launch;           /* 1 if thread-block clusters can be launched */
    int driver_version;           /* e.g. 13000 */
    char name[256];
} fp4lr_ctx;

/* Creates the context of device `ordinal`.
 * FP4LR_E_NO_DRIVER / FP4LR_E_DRIVER_TOO_OLD: see fp4lr_driver_open;
 * FP4LR_E_NO_DEVICE: cuInit failed, no device, or `ordinal` does not exist;
 * FP4LR_E_DRIVER: a later driver call failed. */
fp4lr_status fp4lr_ctx_create(int ordinal, fp4lr_ctx **out);
/* Releases the primary context and the driver (NULL is fine).  The context is
 * not unbound from the thread, so other fp4lr_ctx of the same device stay
 * usable. */
void fp4lr_ctx_destroy(fp4lr_ctx *ctx);

/* Makes the context current on the calling thread (needed once per thread
 * other than the creating one). */
fp4lr_status fp4lr_ctx_bind(const fp4lr_ctx *ctx);
/* Waits for all work of the context; reports asynchronous kernel errors. */
fp4lr_status fp4lr_ctx_sync(const fp4lr_ctx *ctx);

/* The kernel architecture fp4lr uses on a compute capability: 9.0 -> "sm90a",
 * 10.0 -> "sm100a".  Anything else is FP4LR_E_UNSUPPORTED (rule
 * "arch_unsupported"); note that sm_100a code is arch-specific and does not
 * run on other 10.x devices. */
fp4lr_status fp4lr_arch_for_cc(int cc_major, int cc_minor, const char **arch);
/* fp4lr_arch_for_cc of the context's device. */
fp4lr_status fp4lr_ctx_arch(const fp4lr_ctx *ctx, const char **arch);

#endif
