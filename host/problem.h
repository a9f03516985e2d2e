/* The operator's problem description and argument set (OPERATOR.md §1, §2),
 * and the validation of both against the shape and alignment rules. */
#ifndef FP4LR_PROBLEM_H
#define FP4LR_PROBLEM_H

#include <stdint.h>
#include <stddef.h>

#include "status.h"
#include "format.h"

typedef enum fp4lr_out_type {
    FP4LR_OUT_BF16 = 0,
    FP4LR_OUT_F16 = 1,
    FP4LR_OUT_F32 = 2,
} fp4lr_out_type;

/* Bytes per output element: 2, 2 or 4. */
static inline int fp4lr_out_bytes(fp4lr_out_type t) { return t == FP4LR_OUT_F32 ? 4 : 2; }
const char *fp4lr_out_name(fp4lr_out_type t);

/* Shapes, format and leading dimensions (all in elements).  A leading dimension
 * of 0 means "packed" (ldL = r, ldU = r, ldY = N); fp4lr_problem_resolve() fills them. */
typedef struct fp4lr_problem {
    int64_t M, N, K, r;
    fp4lr_format format;
    fp4lr_out_type out;
    int64_t ldL, ldU, ldY;
    int has_wc, has_beta;
} fp4lr_problem;

/* Pointers to the operands (host or device, same layouts; OPERATOR.md §2).
 * L and U are bf16 bit patterns; Y has the problem's output type. */
typedef struct fp4lr_args {
    const uint8_t *A, *SFA, *W, *SFW;
    const uint16_t *L, *U;
    const float *wc, *beta;
    float alpha;
    void *Y;
} fp4lr_args;

/* Replace 0 leading dimensions by their packed defaults. */
void fp4lr_problem_resolve(fp4lr_problem *p);

/* Checks every rule of OPERATOR.md §2 on the shapes; a violation returns
 * FP4LR_E_INVALID with status.rule naming the rule (see problem.c). */
fp4lr_status fp4lr_problem_validate(const fp4lr_problem *p);

/* Checks the argument pointers: required ones present, optional ones consistent
 * with has_wc/has_beta/r, every pointer 16-byte aligned. */
fp4lr_status fp4lr_args_validate(const fp4lr_problem *p, const fp4lr_args *a);

/* Byte sizes of each operand buffer for a (resolved) problem. */
typedef struct fp4lr_sizes {
    size_t A, SFA, W, SFW, L, U, wc, beta, Y;
} fp4lr_sizes;
fp4lr_sizes fp4lr_problem_sizes(const fp4lr_problem *p);

#endif
