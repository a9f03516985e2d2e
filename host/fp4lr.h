/* fp4lr.h: the public umbrella header of libfp4lr.
 *
 * One include gives the stable API: statuses, formats, problems and their
 * validation, plans and budgets, the device context (the CUDA driver opened at
 * run time), the runtime and fp4lr_gemm, device copies of a problem, the
 * double-precision reference and the comparison, and the host-side data
 * preparation of layouts/ (quantizers, fp4 packing, the 128x4 scale atom,
 * bf16).  Every symbol is prefixed fp4lr_ (macros FP4LR_); the library keeps no
 * global state: the only state is the fp4lr_ctx and fp4lr_runtime the caller
 * creates and owns.  Other headers installed beside this one are internal and
 * may change between versions.
 *
 * Build against an installed copy with `pkg-config --cflags --libs fp4lr`; the
 * kernels are looked up in $FP4LR_KERNEL_DIR (`pkg-config --variable=kerneldir
 * fp4lr`).  Launching the kernels without this library: ptx/ABI.md. */
#ifndef FP4LR_H
#define FP4LR_H

/* The driver API types come first, outside the C linkage block below. */
#include <cuda.h>

/* 0.2.0 (2026-12-04): fp4lr_plan_opts.pdl and fp4lr_plan.pdl, four W-preparation slots in
 * fp4lr_runtime, fp4lr_sm90a_wprep_entry(format, pdl): structs and a signature changed.
 * 0.3.0 (2026-12-05): fp4lr_workspace.layout, fp4lr_runtime.capturing / captured (so
 * fp4lr_runtime's size changed) and fp4lr_plan_opts.graph; fp4lr_gemm refuses plans with
 * per-launch flags on a capturing stream (GRAPH_CAPTURE), workspace growth under a graph
 * (GRAPH_WORKSPACE) and stale plans (PLAN_STALE); M, N, K/2 stop at 2^31 - 256. */
#define FP4LR_VERSION_MAJOR 0
#define FP4LR_VERSION_MINOR 3
#define FP4LR_VERSION_PATCH 0
#define FP4LR_VERSION "0.3.0"
/* MAJOR * 10000 + MINOR * 100 + PATCH, for preprocessor comparisons. */
#define FP4LR_VERSION_NUMBER (FP4LR_VERSION_MAJOR * 10000 + FP4LR_VERSION_MINOR * 100 + FP4LR_VERSION_PATCH)

/* Digest of the kernel parameter lists of every entry family (ptx/ABI.md).
 * Written by `tools/gen_abi.py --write`; `--check` fails when it no longer
 * matches the kernels, so it changes exactly when the kernel ABI does. */
#define FP4LR_KERNEL_ABI "f03628bacf637f92"

#ifdef __cplusplus
extern "C" {
#endif

#include "status.h"
#include "format.h"
#include "problem.h"
#include "plan.h"
#include "device.h"
#include "gemm.h"
#include "sm90a_wprep.h"
#include "devbuf.h"
#include "devproblem.h"
#include "reference.h"
#include "compare.h"
#include "quant.h"
#include "fp4_pack.h"
#include "scale_atom.h"
#include "bf16.h"

/* The library's version, FP4LR_VERSION of the build ("0.3.0"): compare it with
 * the macro to detect a header / library mismatch. */
const char *fp4lr_version(void);

/* The kernels' identity: the PTX ISA version of each architecture's kernels,
 * the generator that wrote them and the kernel ABI digest, e.g.
 * "sm90a: PTX ISA 8.0, tools/gen_sm90a.py; sm100a: PTX ISA 8.7, tools/gen_sm100a.py;
 *  kernel ABI <FP4LR_KERNEL_ABI>". */
const char *fp4lr_ptx_version(void);

#ifdef __cplusplus
}
#endif

#endif
