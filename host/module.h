/* Kernel modules: loading a cubin or PTX (through the driver's JIT, with its
 * logs captured), finding an entry by its explicit name, and checking the
 * loaded function's resources against what its plan expects.
 *
 * Cubins live at <dir>/<arch>/<name>.cubin (the expanded PTX beside them as
 * <name>.ptx).  The directory is $FP4LR_KERNEL_DIR when set (it overrides),
 * else the caller's, else "build/ptx". */
#ifndef FP4LR_MODULE_H
#define FP4LR_MODULE_H

#include <stddef.h>

#include "device.h"

#define FP4LR_KERNEL_DIR_DEFAULT "build/ptx"
#define FP4LR_JIT_LOG_BYTES 16384

/* What the driver's JIT reported (empty for a cubin, which needs no JIT). */
typedef struct fp4lr_jit_log {
    char info[FP4LR_JIT_LOG_BYTES];  /* with CU_JIT_LOG_VERBOSE: the ptxas report; empty
                                        when the driver's JIT cache served the PTX
                                        (CUDA_CACHE_DISABLE=1 forces compilation) */
    char error[FP4LR_JIT_LOG_BYTES];
    float wall_ms;                   /* JIT wall time, CU_JIT_WALL_TIME */
} fp4lr_jit_log;

typedef struct fp4lr_module {
    const fp4lr_ctx *ctx;
    CUmodule handle;
    char origin[512];  /* the file path, or the label of an in-memory image */
} fp4lr_module;

/* The kernel directory: $FP4LR_KERNEL_DIR, else dir (when non-NULL and
 * non-empty), else FP4LR_KERNEL_DIR_DEFAULT. */
const char *fp4lr_kernel_dir(const char *dir);
/* "<kernel dir>/<arch>/<name>.<ext>" into out (ext NULL = "cubin");
 * FP4LR_E_INVALID "path_too_long" when it does not fit. */
fp4lr_status fp4lr_module_path(char *out, size_t cap, const char *dir, const char *arch,
                               const char *name, const char *ext);

/* Loads a cubin, fatbin or NUL-terminated PTX image.  `origin` labels the
 * module in messages.  On failure: FP4LR_E_JIT, rule = the CUresult name, the
 * JIT error log in the message.  On success the logs go to *log (may be NULL). */
fp4lr_status fp4lr_module_load_image(const fp4lr_ctx *ctx, const void *image, const char *origin,
                                     fp4lr_module *out, fp4lr_jit_log *log);
/* Reads the file (FP4LR_E_IO "module_file" when it cannot) and loads it. */
fp4lr_status fp4lr_module_load_file(const fp4lr_ctx *ctx, const char *path, fp4lr_module *out,
                                    fp4lr_jit_log *log);
/* Loads <kernel dir>/<the context's arch>/<name>.cubin. */
fp4lr_status fp4lr_module_load_cubin(const fp4lr_ctx *ctx, const char *dir, const char *name,
                                     fp4lr_module *out, fp4lr_jit_log *log);
/* Unloads (a zeroed module is fine) and zeroes the handle. */
fp4lr_status fp4lr_module_unload(fp4lr_module *m);

/* The entry `entry`; a missing one is FP4LR_E_UNSUPPORTED, rule
 * "module_entry_missing", naming the entry and the module's origin. */
fp4lr_status fp4lr_module_function(const fp4lr_module *m, const char *entry, CUfunction *out);

/* What a plan expects of a function. */
typedef struct fp4lr_func_expect {
    int max_regs;         /* registers per thread, at most */
    int dyn_smem;         /* dynamic shared memory per block (bytes) */
    int max_static_smem;  /* static shared memory per block, at most (bytes) */
    int threads;          /* threads per block the launch will use */
    int threads_exact;    /* 1: a warp-specialised kernel (roles follow from the thread
                           * index): its .maxntid must equal `threads` */
} fp4lr_func_expect;

/* What the driver reports of a loaded function. */
typedef struct fp4lr_func_info {
    int num_regs;         /* CU_FUNC_ATTRIBUTE_NUM_REGS */
    int local_bytes;      /* LOCAL_SIZE_BYTES: stack frame and spills */
    int static_smem;      /* SHARED_SIZE_BYTES */
    int const_bytes;      /* CONST_SIZE_BYTES */
    int max_threads;      /* MAX_THREADS_PER_BLOCK (limited by registers too) */
    int ptx_version;      /* e.g. 80 */
    int binary_version;   /* e.g. 90 */
} fp4lr_func_info;

fp4lr_status fp4lr_func_info_query(const fp4lr_ctx *ctx, CUfunction f, fp4lr_func_info *info);

/* The resource rules, checked in this order (FP4LR_E_RESOURCE naming the
 * attribute, the value found and the value expected):
 *   func_local_memory  LOCAL_SIZE_BYTES == 0
 *   func_regs          NUM_REGS <= max_regs
 *   func_static_smem   SHARED_SIZE_BYTES <= max_static_smem
 *   func_smem_optin    SHARED_SIZE_BYTES + dyn_smem <= the device's opt-in limit
 *   func_threads       threads <= MAX_THREADS_PER_BLOCK
 *   func_threads_exact threads == MAX_THREADS_PER_BLOCK when threads_exact (a kernel
 *                      built for another thread count, e.g. an experiment's 512-thread
 *                      cubins under a 384-thread host, would hang or compute garbage)
 * A malformed expectation (negative or zero where a positive is needed) is
 * FP4LR_E_INVALID "func_expect". */
fp4lr_status fp4lr_func_check(const fp4lr_ctx *ctx, const char *entry, const fp4lr_func_info *info,
                              const fp4lr_func_expect *expect);

/* Queries, checks, then sets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to
 * expect->dyn_smem.  info_out may be NULL. */
fp4lr_status fp4lr_func_prepare(const fp4lr_ctx *ctx, CUfunction f, const char *entry,
                                const fp4lr_func_expect *expect, fp4lr_func_info *info_out);

#endif
