/* --timeline FILE of fp4lr-check: the per-CTA event times of one launch, for kernels
 * generated with FP4LR_GEN_EXPERIMENT=tline (tools/sm90a_ptx: the events, their
 * threads and the module global fp4lr_tline[CTA][FP4LR_TLINE_EVENTS] of u64 %globaltimer
 * values; tools/tline_summary.py reads the file). */
#ifndef FP4LR_CLI_TIMELINE_H
#define FP4LR_CLI_TIMELINE_H

#include "gemm.h"

#define FP4LR_TLINE_EVENTS 48 /* sm90a_ptx/flags.py TLINE_EVENTS */

/* Zeroes the plan's kernel's fp4lr_tline, runs one launch of `dev` and writes every event
 * that was stored as "cta,event,us" (microseconds after the earliest entry, event 0).
 * FP4LR_E_UNSUPPORTED "TIMELINE_NOT_BUILT" when the kernel has no such global;
 * FP4LR_E_IO when FILE cannot be written. */
fp4lr_status fp4lr_cli_timeline(fp4lr_runtime *rt, const fp4lr_plan *plan, const fp4lr_args *dev,
                                const char *path);

#endif
