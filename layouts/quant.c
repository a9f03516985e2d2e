/* MXFP4 / NVFP4 quantizers and the dequantizer (OPERATOR.md §3).
 *
 * Rounding, step by step (no step depends on the FPU rounding mode):
 *  - block amax: exact (max of |x| over the block).
 *  - MXFP4 exponent: exact integer arithmetic on the fp32 exponent of amax.
 *  - NVFP4 block scale: the exact real amax / (6 g) rounded ONCE to ue4m3,
 *    nearest-even, satfinite (fp4lr_ue4m3_encode_div, exact compare; 6g is
 *    exact in double); a non-zero block never gets scale 0 (bumped to 0x01).
 *  - elements: the exact real v / (g * stored scale) rounded ONCE to e2m1,
 *    nearest-even, saturating to +-6 (fp4lr_e2m1_encode_div, exact compare).
 *  - dequantize: e2m1 * scale is exact; times g in double, rounded once to fp32.
 *
 * Non-finite input: a block holding a NaN or +-Inf gets the NaN scale code
 * (0xFF for ue8m0, 0x7F for ue4m3) and all-zero element codes, so it
 * dequantizes to NaN; nothing is reported.  Other blocks are unaffected. */
#include "quant.h"

#include <math.h>
#include <string.h>

#include "e2m1.h"
#include "fp4_pack.h"
#include "scale_atom.h"
#include "ue4m3.h"
#include "ue8m0.h"

#define UE8M0_NAN 0xFFu
#define UE4M3_NAN 0x7Fu

/* Shape and pointer rules shared by the quantizers and the dequantizer. */
static fp4lr_status check_shape(fp4lr_format f, const void *a, const void *b, const void *c,
                                int64_t rows, int64_t K)
{
    if (!a || !b || !c)
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER", "%s: a required buffer is NULL",
                          fp4lr_format_name(f));
    if (rows < 1)
        return fp4lr_fail(FP4LR_E_INVALID, "M_POSITIVE", "%s: rows = %lld, must be >= 1",
                          fp4lr_format_name(f), (long long)rows);
    int mult = fp4lr_format_k_multiple(f);
    if (K < 1 || K % mult != 0)
        return fp4lr_fail(FP4LR_E_INVALID, "K_MULTIPLE",
                          "%s: K = %lld, must be a positive multiple of %d", fp4lr_format_name(f),
                          (long long)K, mult);
    return fp4lr_ok();
}

static fp4lr_status check_ld(int64_t K, int64_t ldx)
{
    if (ldx < K)
        return fp4lr_fail(FP4LR_E_INVALID, "LD_TOO_SMALL", "ldx = %lld < K = %lld",
                          (long long)ldx, (long long)K);
    return fp4lr_ok();
}

/* Exact amax of n values; *finite = 0 when one is NaN or +-Inf. */
static float block_amax(const float *v, int n, int *finite)
{
    float amax = 0.0f;
    *finite = 1;
    for (int i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            *finite = 0;
        else if (fabsf(v[i]) > amax)
            amax = fabsf(v[i]);
    }
    return amax;
}

/* floor(log2(a)) for finite a > 0, exactly (frexp is exact, subnormals too). */
static int floor_log2(float a)
{
    int e;
    frexpf(a, &e); /* a = f * 2^e, f in [0.5, 1) */
    return e - 1;
}

/* The MX shared exponent of a block with amax > 0 (unclamped). */
static int mx_exponent(float amax, fp4lr_mx_rounding mode)
{
    /* OCP: largest power of two not above amax, divided by 2^2 (emax of e2m1):
     * amax / 2^e in [4, 8), values above 6 saturate. */
    int e = floor_log2(amax) - 2;
    /* Round-up: the smallest e with amax / 2^e <= 6 (ldexp is exact here). */
    if (mode == FP4LR_MX_ROUND_UP && ldexp((double)amax, -e) > 6.0)
        e += 1;
    return e;
}

/* How one format turns a block amax into a stored scale and back. */
typedef struct block_scaler {
    fp4lr_format format;
    fp4lr_mx_rounding mode; /* MXFP4 */
    double g;               /* global scale (1 when quantizing MXFP4) */
} block_scaler;

/* The stored scale code of a block with finite amax. */
static uint8_t scale_code(const block_scaler *s, float amax)
{
    if (s->format == FP4LR_MXFP4) {
        if (amax == 0.0f)
            return 0x00; /* all-zero block: the smallest scale, 2^-127 */
        return fp4lr_ue8m0_from_exponent(mx_exponent(amax, s->mode)); /* clamp 0..254 */
    }
    /* The exact real amax / (6 g), rounded once to ue4m3, RNE, satfinite
     * (6 g is exact in double: 3 + 24 significant bits). */
    uint8_t code = fp4lr_ue4m3_encode_div(amax, 6.0 * s->g);
    /* Never zero for a non-zero block: bump to the smallest subnormal. */
    if (code == 0x00 && amax > 0.0f)
        code = 0x01;
    return code;
}

/* The NaN scale code of the format. */
static uint8_t scale_nan(const block_scaler *s) { return s->format == FP4LR_MXFP4 ? UE8M0_NAN : UE4M3_NAN; }

/* The real value one element code is multiplied by: g * scale, exact in
 * double (at most 24 + 4 significant bits); NaN for a NaN code. */
static double scale_value(const block_scaler *s, uint8_t code)
{
    if (s->format == FP4LR_MXFP4)
        return code == UE8M0_NAN ? NAN : s->g * ldexp(1.0, (int)code - 127);
    return s->g * (double)fp4lr_ue4m3_decode(code);
}

/* Quantizes every block of x (shape already checked): scale into the atom
 * layout (padding zeroed), elements packed two per byte. */
static void quantize_blocks(const block_scaler *s, const float *x, int64_t rows, int64_t K, int64_t ldx,
                            uint8_t *q, uint8_t *sf)
{
    const int B = fp4lr_format_block(s->format);
    int64_t kv = K / B;
    memset(sf, 0, fp4lr_sf_bytes(rows, kv)); /* padding bytes are zero */
    for (int64_t i = 0; i < rows; i++) {
        const float *xr = x + i * ldx;
        uint8_t *qr = q + i * (K / 2);
        for (int64_t c = 0; c < kv; c++) {
            const float *v = xr + c * B;
            int finite;
            float amax = block_amax(v, B, &finite);
            uint8_t code = finite ? scale_code(s, amax) : scale_nan(s);
            sf[fp4lr_sf_offset_inline(i, c, kv)] = code;

            double d = scale_value(s, code);
            for (int k = 0; k < B; k++) {
                /* Exact quotient, one RNE rounding.  A zero NVFP4 block has
                 * d = 0: its elements are +-0 and encode as such. */
                uint8_t e = !finite ? 0 : d > 0.0 ? fp4lr_e2m1_encode_div(v[k], d) : fp4lr_e2m1_encode(v[k]);
                fp4lr_fp4_set(qr, c * B + k, e);
            }
        }
    }
}

fp4lr_status fp4lr_quantize_mxfp4(const float *x, int64_t rows, int64_t K, int64_t ldx,
                                  fp4lr_mx_rounding mode, uint8_t *q, uint8_t *sf)
{
    FP4LR_TRY(check_shape(FP4LR_MXFP4, x, q, sf, rows, K));
    FP4LR_TRY(check_ld(K, ldx));
    if (mode != FP4LR_MX_FLOOR && mode != FP4LR_MX_ROUND_UP)
        return fp4lr_fail(FP4LR_E_INVALID, "MX_ROUNDING", "unknown MX rounding mode %d", (int)mode);
    block_scaler s = {FP4LR_MXFP4, mode, 1.0};
    quantize_blocks(&s, x, rows, K, ldx, q, sf);
    return fp4lr_ok();
}

float fp4lr_nvfp4_global_scale(const float *x, int64_t rows, int64_t K, int64_t ldx)
{
    if (!x || rows < 1 || K < 1 || ldx < K)
        return 1.0f;
    float amax = 0.0f;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t k = 0; k < K; k++) {
            float a = fabsf(x[i * ldx + k]);
            if (isfinite(a) && a > amax)
                amax = a;
        }
    if (amax == 0.0f)
        return 1.0f;
    /* One fp32 division, round to nearest even; 2688 = 448 * 6 is exact.
     * For amax below ~2688 * 2^-149 the quotient would underflow to 0: keep
     * the smallest positive float instead so g stays a valid divisor. */
    float g = amax / 2688.0f;
    return g > 0.0f ? g : 0x1p-149f;
}

fp4lr_status fp4lr_quantize_nvfp4(const float *x, int64_t rows, int64_t K, int64_t ldx,
                                  float g, uint8_t *q, uint8_t *sf)
{
    FP4LR_TRY(check_shape(FP4LR_NVFP4, x, q, sf, rows, K));
    FP4LR_TRY(check_ld(K, ldx));
    if (!isfinite(g) || !(g > 0.0f))
        return fp4lr_fail(FP4LR_E_INVALID, "GLOBAL_SCALE", "global scale %g must be finite and > 0",
                          (double)g);
    block_scaler s = {FP4LR_NVFP4, FP4LR_MX_FLOOR, (double)g};
    quantize_blocks(&s, x, rows, K, ldx, q, sf);
    return fp4lr_ok();
}

fp4lr_status fp4lr_dequantize(fp4lr_format f, const uint8_t *q, const uint8_t *sf, int64_t rows,
                              int64_t K, float g, float *out)
{
    if (f != FP4LR_NVFP4 && f != FP4LR_MXFP4)
        return fp4lr_fail(FP4LR_E_INVALID, "FORMAT", "unknown format %d", (int)f);
    FP4LR_TRY(check_shape(f, q, sf, out, rows, K));

    const int B = fp4lr_format_block(f);
    int64_t kv = K / B;
    /* A ue4m3 scale with the sign bit set is invalid input (OPERATOR.md §3). */
    if (f == FP4LR_NVFP4)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t c = 0; c < kv; c++)
                if (fp4lr_sf_get(sf, i, c, kv) & 0x80)
                    return fp4lr_fail(FP4LR_E_INVALID, "SCALE_SIGN",
                                      "ue4m3 scale (%lld, %lld) = 0x%02X has its sign bit set",
                                      (long long)i, (long long)c, fp4lr_sf_get(sf, i, c, kv));

    block_scaler s = {f, FP4LR_MX_FLOOR, (double)g};
    for (int64_t i = 0; i < rows; i++) {
        const uint8_t *qr = q + i * (K / 2);
        for (int64_t k = 0; k < K; k++) {
            double d = scale_value(&s, fp4lr_sf_get(sf, i, k / B, kv));
            /* e2m1 * scale (* g) is exact in double; one rounding to fp32
             * (MX values above FLT_MAX, e.g. 6 * 2^127, become Inf). */
            out[i * K + k] = (float)((double)fp4lr_e2m1_decode(fp4lr_fp4_get(qr, k)) * d);
        }
    }
    return fp4lr_ok();
}
