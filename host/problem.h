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

/* The largest rank accepted (OPERATOR.md §2 asks for at least 1024; ranks
 * beyond what shared memory holds at once are streamed in chunks). */
#define FP4LR_RANK_MAX 8192

/* The leading dimension of Y for N outputs a row of type `out`, rounded up to whole 16-byte
 * rows (LDY_ALIGN, the bulk tensor store's rule): the ldY that makes any N valid.  N itself
 * when N < 1 or the rounding would overflow, so that fp4lr_problem_validate names the rule
 * that N breaks. */
int64_t fp4lr_ldY_padded(int64_t N, fp4lr_out_type out);

/* Replace 0 leading dimensions by their packed defaults (ldL = ldU = r, ldY = N). */
void fp4lr_problem_resolve(fp4lr_problem *p);

/* Checks every rule of OPERATOR.md §2 on the shapes; a violation returns
 * FP4LR_E_INVALID with status.rule naming the rule and a message naming the
 * offending value.  Rules, in the order they are checked:
 *   FORMAT, OUT_TYPE            enum values known
 *   M_POSITIVE, N_POSITIVE, K_POSITIVE
 *   K_MULTIPLE                  K % 64 (NVFP4) or % 128 (MXFP4): one scale-atom column
 *   R_MULTIPLE, R_MAX           r = 0 or a positive multiple of 16, r <= FP4LR_RANK_MAX
 *   DIM_LIMIT                   M, N and K/2 <= 2^31 - 256 (below), before the leading
 *                               dimensions, which are derived from them
 *   LDL_MIN, LDL_ALIGN          ldL >= r, ldL*2 % 16 == 0      (only when r > 0)
 *   LDU_MIN, LDU_ALIGN          ldU >= r, ldU*2 % 16 == 0      (only when r > 0)
 *   LDY_MIN, LDY_ALIGN          ldY >= N, ldY*out_bytes % 16 == 0
 *   DIM_LIMIT                   tensor-map limits (every global dimension <= 2^32,
 *                               every stride < 2^40), M, N and K/2 <= 2^31 - 256 (the
 *                               kernels' signed 32-bit copy coordinates) and no int64
 *                               overflow of a size
 * Works on resolved and unresolved problems (a 0 leading dimension is read as packed). */
fp4lr_status fp4lr_problem_validate(const fp4lr_problem *p);

/* Checks the argument pointers (call after fp4lr_problem_validate):
 *   NULL_POINTER  A, SFA, W, SFW, Y always; L, U when r > 0; wc when has_wc;
 *                 beta when has_beta (pointers the problem does not use are ignored)
 *   PTR_ALIGN     every used pointer 16-byte aligned
 *   Y_ALIAS       the bytes of Y the kernel writes overlap an operand it reads
 * alpha is not checked: NaN and Inf are legal and propagate (OPERATOR.md §3). */
fp4lr_status fp4lr_args_validate(const fp4lr_problem *p, const fp4lr_args *a);

/* Byte sizes of each operand buffer of a valid problem (0 leading dimensions
 * read as packed).  SFA/SFW are the padded 128x4 atom sizes; L, U are 0 when
 * r = 0; wc, beta are 0 when absent; a strided buffer counts rows x ld. */
typedef struct fp4lr_sizes {
    size_t A, SFA, W, SFW, L, U, wc, beta, Y;
} fp4lr_sizes;
fp4lr_sizes fp4lr_problem_sizes(const fp4lr_problem *p);

#endif
