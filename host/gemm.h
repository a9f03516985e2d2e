/* The public entry: run a planned problem on the device.
 *
 * An fp4lr_runtime holds a device context and the kernels loaded so far (one
 * module per entry, loaded on first use); it is the only state, and it is the
 * caller's.  fp4lr_gemm is asynchronous on `stream`. */
#ifndef FP4LR_GEMM_H
#define FP4LR_GEMM_H

#include "device.h"
#include "module.h"
#include "plan.h"
#include "problem.h"
#include "sm90a_gemm.h"

#define FP4LR_RUNTIME_MAX_KERNELS 32

typedef struct fp4lr_kernel {
    char entry[FP4LR_ENTRY_NAME_LEN];
    fp4lr_module module;
    CUfunction fn;
    fp4lr_func_info info;
    int max_ctas;        /* co-resident CTAs on the device (persistent grid) at dyn_smem */
    int dyn_smem;        /* the dynamic shared memory the function is prepared for */
} fp4lr_kernel;

/* A device workspace of the runtime, allocated on first use and grown (synchronously)
 * when a launch needs more; a launch on another stream than the last one that used it
 * first waits for that one (the launches share the bytes), so concurrent streams stay
 * correct, only serialised.  Two of them: the sm_90a stream-K slots and flags
 * (sm90a_gemm.h; `epoch` is the last split launch's flag value) and the prepared W
 * (sm90a_wprep.h). */
typedef struct fp4lr_workspace {
    CUdeviceptr ptr;
    size_t bytes;
    uint32_t epoch;      /* stream-K: the last split launch's flag value */
    int layout;          /* stream-K: the CTA count whose flags that launch used (0: none since allocated) */
    CUevent done;        /* recorded after every launch that used it */
    CUstream last;       /* the stream of that launch */
    int have_last;
} fp4lr_workspace;

/* An _x conversion order table (sm90a_xorder.h) for one key: ws.epoch 1 once written. */
typedef struct fp4lr_xorder_slot {
    fp4lr_workspace ws;
    int key[3];                   /* tiles_n, K blocks, band */
    unsigned long long last_use;  /* the runtime's use count when last used */
} fp4lr_xorder_slot;
#define FP4LR_RUNTIME_XORDER_SLOTS 8

/* A kernel outside the plan's cache (the W preparation): loaded once per runtime. */
typedef struct fp4lr_aux_kernel {
    fp4lr_module module;
    CUfunction fn;
} fp4lr_aux_kernel;

typedef struct fp4lr_runtime {
    fp4lr_ctx *ctx;      /* not owned */
    const char *kernel_dir;
    fp4lr_kernel kernels[FP4LR_RUNTIME_MAX_KERNELS];
    int nkernels;
    fp4lr_workspace sk;
    fp4lr_workspace wprep;
    fp4lr_workspace xflags;       /* _x kernels: 8 u32 flags per (K block, N tile) item */
    fp4lr_workspace ystage;       /* Y rows not ending on 16 bytes: the kernels' output (fp4lr_gemm) */
    fp4lr_xorder_slot xorder[FP4LR_RUNTIME_XORDER_SLOTS]; /* _x kernels: conversion orders by key */
    unsigned long long xorder_clock;                       /* their use count (0: none used) */
    fp4lr_aux_kernel wprep_fn[4]; /* by format (NVFP4, MXFP4) + 2 for the _pdl entries */
    int capturing;                /* within fp4lr_gemm: its stream is being captured into a graph */
    int captured;                 /* a launch was captured: a graph holds the workspaces' addresses */
} fp4lr_runtime;

/* kernel_dir NULL: $FP4LR_KERNEL_DIR or build/ptx. */
fp4lr_status fp4lr_runtime_init(fp4lr_runtime *rt, fp4lr_ctx *ctx, const char *kernel_dir);
void fp4lr_runtime_release(fp4lr_runtime *rt);

/* The plan of `p` for the runtime's device (arch from its compute capability,
 * shared-memory capacity from its opt-in limit). */
fp4lr_status fp4lr_runtime_plan(const fp4lr_runtime *rt, const fp4lr_problem *p,
                                const fp4lr_plan_opts *opts, fp4lr_plan *out);

/* Loads (once) and checks the plan's kernel: registers, local memory (0) and
 * shared memory against the plan. */
fp4lr_status fp4lr_runtime_kernel(fp4lr_runtime *rt, const fp4lr_plan *plan, fp4lr_kernel **out);

/* The sm_90a tile walk fp4lr_gemm would launch for the plan on this device (loads the
 * kernel to size the persistent grid); FP4LR_E_UNSUPPORTED for other architectures. */
fp4lr_status fp4lr_runtime_walk(fp4lr_runtime *rt, const fp4lr_plan *plan, fp4lr_sm90a_sk *out);

/* Runs the plan on device buffers `dev` (device addresses in the pointers),
 * asynchronously on `stream`.  On sm_90a the plan's schedule picks the tile walk; a split
 * (stream-K) walk uses the runtime's workspace (allocated on first use, synchronously).
 * A W-prepared plan (plan->w_prep) first launches the format's wprep kernel on the same
 * stream into the runtime's W workspace (N*K*2 bytes, allocated likewise).
 * Y is written inside its M x N elements only.  The kernels' bulk tensor stores write whole
 * 16-byte pieces of a row, so when N * (output bytes) is not a multiple of 16 the kernel
 * writes into the runtime's Y staging workspace (M rows of N rounded up to 16 bytes) and
 * a 2-D copy on the stream moves the M x N outputs into Y.
 * Graphs: on a stream being captured, a plan whose kernel waits on flags valued per launch (a
 * split walk, or W converted inside the kernel: plan->w_inline) is refused (FP4LR_E_UNSUPPORTED,
 * rule GRAPH_CAPTURE), since every replay would reuse one value; plan with opts.graph = 1 (or
 * whole tiles, schedule dp, with w_prep on or off) for a captured stream, and launch the plan once before
 * capturing, so that its modules and workspaces exist (allocating and synchronising are not
 * allowed while capturing).  A captured launch keeps its workspaces' addresses, so once a
 * launch of the runtime was captured, a later launch that needs a larger workspace is refused
 * (FP4LR_E_UNSUPPORTED, rule GRAPH_WORKSPACE) instead of freeing it under the graph: capture
 * the largest problem first, or give the other problems their own runtime.  Replays are not
 * ordered against the runtime's launches on other streams: order them yourself, or give a
 * graph its own runtime. */
fp4lr_status fp4lr_gemm(fp4lr_runtime *rt, const fp4lr_plan *plan, const fp4lr_args *dev, CUstream stream);

#endif
