/* Host-side MXFP4 and NVFP4 quantizers and the dequantizer (OPERATOR.md §3).
 *
 * Outputs use the operator layouts: q is rows x K packed e2m1 (K/2 bytes per
 * row, element 2i in the low nibble), sf is in the 128x4 atom layout of
 * fp4lr_sf_bytes(rows, K/B) bytes with zero padding.  The rounding of every
 * step is stated in quant.c next to the step. */
#ifndef FP4LR_QUANT_H
#define FP4LR_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "status.h"

typedef enum fp4lr_mx_rounding {
    FP4LR_MX_FLOOR = 0,    /* OCP MX v1.0: E = floor(log2(amax)) - 2 (may saturate to +-6) */
    FP4LR_MX_ROUND_UP = 1, /* E = ceil(log2(amax / 6)): amax/2^E <= 6, never saturates */
} fp4lr_mx_rounding;

/* MXFP4: x is rows x K fp32 with leading dimension ldx (elements, >= K).
 * Rules: NULL_POINTER, M_POSITIVE (rows >= 1), K_MULTIPLE (K % 128 == 0),
 * LD_TOO_SMALL (ldx >= K), MX_ROUNDING (mode is one of the enum values). */
fp4lr_status fp4lr_quantize_mxfp4(const float *x, int64_t rows, int64_t K, int64_t ldx,
                                  fp4lr_mx_rounding mode, uint8_t *q, uint8_t *sf);

/* Per-tensor NVFP4 global scale g = amax / (448 * 6) in fp32 (amax over the
 * rows x K finite elements); 1 when amax is 0 or there is nothing to scan.
 * NaN/Inf elements are skipped.  Returns 1 for NULL x or bad shapes. */
float fp4lr_nvfp4_global_scale(const float *x, int64_t rows, int64_t K, int64_t ldx);

/* NVFP4 with global scale g (finite, > 0): per 16-element block the stored
 * scale is ue4m3(amax / 6 / g), elements e2m1(v / (g * stored)).
 * Rules: NULL_POINTER, M_POSITIVE, K_MULTIPLE (K % 64 == 0), LD_TOO_SMALL,
 * GLOBAL_SCALE (g finite and > 0). */
fp4lr_status fp4lr_quantize_nvfp4(const float *x, int64_t rows, int64_t K, int64_t ldx,
                                  float g, uint8_t *q, uint8_t *sf);

/* out[i*K + k] = g * e2m1(q[i,k]) * scale(sf[i, k/B]), formed exactly and
 * rounded once to fp32; pass g = 1 for MXFP4 (alpha is 1 there).
 * Rules: NULL_POINTER, M_POSITIVE, K_MULTIPLE, FORMAT, SCALE_SIGN (an NVFP4
 * scale byte with bit 7 set; 0x7F NaN scales are accepted and give NaN). */
fp4lr_status fp4lr_dequantize(fp4lr_format f, const uint8_t *q, const uint8_t *sf, int64_t rows,
                              int64_t K, float g, float *out);

#endif
