/* Random operator problems in the OPERATOR.md §2 layouts, and the output buffer
 * helpers (poison, store a rounded reference, plant one value), shared by the
 * tests, fp4lr-check and fp4lr-bench.  Buffers are host memory, 64-byte aligned,
 * sized by fp4lr_problem_sizes. */
#ifndef FP4LR_PROBLEM_GEN_H
#define FP4LR_PROBLEM_GEN_H

#include <stdint.h>

#include "problem.h"

/* How block scales are drawn (elements are always uniform random bytes, i.e. every
 * e2m1 code, -0 and ±6 included). */
typedef enum fp4lr_pgen_scales {
    /* Realistic: each row draws a base binade (A rows within ±3 binades of the
     * centre, W rows within ±8: ue8m0 around 2^0, ue4m3 exponent fields 11..14 for A
     * and 7..14 for W), each block lies in [base-2, base+1], and one block in 16 is
     * drawn anywhere below its band (zero and subnormal ue4m3 scales, ue8m0 down to
     * 40 binades lower).  No block dominates its row by more than the band, fp32
     * sums stay finite, and the low-rank term and beta are scaled per row/column to
     * the size of the 4-bit product (a planted fault stays visible). */
    FP4LR_PGEN_SCALES_REALISTIC = 0,
    /* Every valid non-NaN scale code uniformly (ue4m3 0x00..0x7E, ue8m0 0..254):
     * exercises the double reference over the whole range; fp32 sums may overflow. */
    FP4LR_PGEN_SCALES_FULL = 1,
    /* As realistic, but the ue8m0 (MXFP4) bases are centred on 2^-5 for A and 2^-9 for W
     * (activations near 0.3, weights near 0.02, as in a trained model): every MXFP4 block
     * scale is at most 2^0.  ue4m3 (NVFP4) scales as realistic. */
    FP4LR_PGEN_SCALES_SMALL = 2,
} fp4lr_pgen_scales;

/* A problem with its host buffers.  `p` is resolved; `a` points at the buffers
 * (alpha included).  Pointers of absent operands are NULL. */
typedef struct fp4lr_pgen_problem {
    fp4lr_problem p;
    fp4lr_args a;
    fp4lr_sizes sizes;
    uint8_t *A, *SFA, *W, *SFW;
    uint16_t *L, *U;
    float *wc, *beta;
    void *Y;
} fp4lr_pgen_problem;

/* Copies and resolves *p (a 0 ldY becomes N rounded up to 16 bytes, so any N is
 * valid; 0 ldL/ldU become r), validates it and allocates every buffer zeroed (scale
 * padding is 0).  Returns 0, or -1 (nothing allocated) when the problem is invalid or
 * memory short. */
int fp4lr_pgen_alloc(fp4lr_pgen_problem *t, const fp4lr_problem *p);

/* Fills every present operand from `seed` (same seed, same problem: same bytes):
 * A, W uniform bytes; SFA, SFW per `scales`; alpha in [2^-16, 2^-14) for NVFP4
 * (a product of two global scales, full fp32 mantissa), 1 for MXFP4; L, U bf16
 * Gaussian; wc = 0 in one column of 16, otherwise ±[0.25, 2); beta Gaussian.  Y is
 * left alone. */
void fp4lr_pgen_fill(fp4lr_pgen_problem *t, uint64_t seed, fp4lr_pgen_scales scales);

void fp4lr_pgen_free(fp4lr_pgen_problem *t);

/* Every byte of Y set to 0xFF: NaN in bf16, fp16 and fp32 alike (the unwritten-
 * output poison of OPERATOR.md §5). */
void fp4lr_pgen_output_poison(fp4lr_pgen_problem *t);

/* v rounded to nearest-even into the output type (correctly, from double), back as
 * a double. */
double fp4lr_pgen_round_out(fp4lr_out_type out, double v);

/* Y[rows[i], n] = round_out(ref[i*N + n]) for the rows given (rows NULL: all M). */
void fp4lr_pgen_output_store(fp4lr_pgen_problem *t, const int64_t *rows, int64_t nrows, const double *ref);

/* Y[m, n] = round_out(v), and Y[m, n] read back as a double. */
void fp4lr_pgen_output_set(fp4lr_pgen_problem *t, int64_t m, int64_t n, double v);
double fp4lr_pgen_output_get(const fp4lr_pgen_problem *t, int64_t m, int64_t n);

#endif
