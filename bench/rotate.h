/* Input rotation against the L2 cache.
 *
 * A benchmark that launches a GEMM repeatedly on one set of buffers measures the
 * cache once the inputs fit in L2.  Rotation keeps k copies of the inputs and
 * runs repetition i on copy i % k, with k chosen so that the copies together
 * exceed FP4LR_ROTATION_L2_FACTOR x the L2 size: by the time a copy comes round
 * again, the other copies have evicted it.
 *
 * This file holds the count (pure arithmetic, tested on the CPU), the memory
 * budget it is capped by, and fp4lr's side: k device copies of one generated
 * problem (the cuBLASLt peers keep their own copies, cublaslt.h). */
#ifndef FP4LR_ROTATE_H
#define FP4LR_ROTATE_H

#include <stddef.h>

#include "devproblem.h"
#include "gemm.h"

#define FP4LR_ROTATION_MAX_COPIES 64
#define FP4LR_ROTATION_L2_FACTOR 3
/* Device memory left untouched by the copies (workspace, the runtime, the driver). */
#define FP4LR_ROTATION_RESERVE_BYTES ((size_t)1 << 30)

/* What bounded the copy count. */
typedef enum fp4lr_rotation_limit {
    FP4LR_ROTATION_BY_L2 = 0,  /* the L2 rule was met */
    FP4LR_ROTATION_BY_CAP,     /* FP4LR_ROTATION_MAX_COPIES */
    FP4LR_ROTATION_BY_MEMORY,  /* the device memory budget */
} fp4lr_rotation_limit;

typedef struct fp4lr_rotation {
    int copies;                /* >= 1 */
    int wanted;                /* the smallest k with k * read_bytes > 3 * L2 */
    fp4lr_rotation_limit limit;
    size_t read_bytes;         /* input bytes one launch reads */
    size_t copy_bytes;         /* device bytes one copy holds (inputs and output) */
} fp4lr_rotation;

/* "l2", "cap", "memory". */
const char *fp4lr_rotation_limit_name(fp4lr_rotation_limit l);

/* The copy count: wanted = floor(3 * l2_bytes / read_bytes) + 1 (1 when
 * read_bytes is 0), then min(wanted, FP4LR_ROTATION_MAX_COPIES,
 * mem_budget / copy_bytes), never below 1 (a single copy that does not fit is
 * left for the allocation to report). */
fp4lr_rotation fp4lr_rotation_plan(size_t read_bytes, size_t copy_bytes, size_t l2_bytes, size_t mem_budget);

/* Free device memory (cuMemGetInfo) less `reserve` bytes, 0 when less. */
fp4lr_status fp4lr_rotation_mem_budget(const fp4lr_ctx *ctx, size_t reserve, size_t *budget);

/* The copy that repetition i (>= 0) runs on. */
static inline int fp4lr_rotation_index(int i, int copies) { return copies > 1 ? i % copies : 0; }

/* The bytes of one fp4lr problem for fp4lr_rotation_plan: every input buffer
 * (A, SFA, W, SFW, L, U, wc, beta) is read per launch; a copy also holds Y. */
void fp4lr_problem_rotation_bytes(const fp4lr_sizes *s, size_t *read_bytes, size_t *copy_bytes);

/* k device copies of one problem, each with its own output. */
typedef struct fp4lr_devproblem_ring {
    fp4lr_devproblem *copy;    /* n copies */
    int n;
} fp4lr_devproblem_ring;

/* Allocates `copies` (1..FP4LR_ROTATION_MAX_COPIES) device problems for p and
 * uploads the same host operands `host` into each.  On failure frees what it
 * made.  Rule ROTATION_COPIES for a bad count; FP4LR_E_NOMEM when the host
 * array cannot be allocated; device failures as fp4lr_devproblem_alloc. */
fp4lr_status fp4lr_devproblem_ring_create(const fp4lr_ctx *ctx, const fp4lr_problem *p, const fp4lr_args *host,
                                          int copies, fp4lr_devproblem_ring *out);
void fp4lr_devproblem_ring_free(fp4lr_devproblem_ring *r);

/* One planned fp4lr GEMM over a ring, as an fp4lr_timed_fn user: repetition i
 * runs fp4lr_gemm on copy fp4lr_rotation_index(i, ring->n). */
typedef struct fp4lr_ring_gemm {
    fp4lr_runtime *rt;
    const fp4lr_plan *plan;
    const fp4lr_devproblem_ring *ring;
} fp4lr_ring_gemm;

/* An fp4lr_timed_fn; `user` is an fp4lr_ring_gemm. */
fp4lr_status fp4lr_ring_gemm_timed(void *user, int i, CUstream stream);

#endif
