/* Test support: random operator problems and output-buffer helpers
 * (problem_gen.h). */
#include "problem_gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "e2m1.h"
#include "fp4_pack.h"
#include "scale_atom.h"
#include "ue4m3.h"
#include "ue8m0.h"

/* ---- random numbers (splitmix64: small, seedable, good enough for tests) ------ */

typedef struct fp4lr_pgen_rng {
    uint64_t s;
} fp4lr_pgen_rng;

static uint64_t rng_next(fp4lr_pgen_rng *g)
{
    uint64_t z = (g->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi]. */
static int64_t rng_int(fp4lr_pgen_rng *g, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(g) % (uint64_t)(hi - lo + 1));
}

/* Uniform in [0, 1) with 53 random bits. */
static double rng_unit(fp4lr_pgen_rng *g) { return (double)(rng_next(g) >> 11) * 0x1p-53; }

/* Standard normal (Box-Muller). */
static double rng_gauss(fp4lr_pgen_rng *g)
{
    double u = rng_unit(g), v = rng_unit(g);
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

/* ---- allocation ---------------------------------------------------------------- */

static void *zalloc(size_t bytes)
{
    if (bytes == 0)
        return NULL;
    size_t rounded = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, rounded);
    if (p)
        memset(p, 0, rounded);
    return p;
}

int fp4lr_pgen_alloc(fp4lr_pgen_problem *t, const fp4lr_problem *p)
{
    memset(t, 0, sizeof *t);
    t->p = *p;
    if (t->p.ldY == 0) /* rows of Y padded to 16 bytes, so any N is valid */
        t->p.ldY = fp4lr_ldY_padded(t->p.N, t->p.out);
    fp4lr_problem_resolve(&t->p);
    if (fp4lr_problem_validate(&t->p).code != FP4LR_OK)
        return -1;
    t->sizes = fp4lr_problem_sizes(&t->p);
    t->A = zalloc(t->sizes.A), t->SFA = zalloc(t->sizes.SFA);
    t->W = zalloc(t->sizes.W), t->SFW = zalloc(t->sizes.SFW);
    t->L = zalloc(t->sizes.L), t->U = zalloc(t->sizes.U);
    t->wc = zalloc(t->sizes.wc), t->beta = zalloc(t->sizes.beta);
    t->Y = zalloc(t->sizes.Y);
    if (!t->A || !t->SFA || !t->W || !t->SFW || !t->Y || (t->sizes.L && (!t->L || !t->U)) ||
        (t->sizes.wc && !t->wc) || (t->sizes.beta && !t->beta)) {
        fp4lr_pgen_free(t);
        return -1;
    }
    t->a = (fp4lr_args){t->A, t->SFA, t->W, t->SFW, t->L, t->U, t->wc, t->beta, 1.0f, t->Y};
    return 0;
}

void fp4lr_pgen_free(fp4lr_pgen_problem *t)
{
    free(t->A), free(t->SFA), free(t->W), free(t->SFW);
    free(t->L), free(t->U), free(t->wc), free(t->beta), free(t->Y);
    memset(t, 0, sizeof *t);
}

/* ---- scales ---------------------------------------------------------------------- */

/* A block scale code around a row base (see fp4lr_pgen_scales). */
static uint8_t realistic_scale(fp4lr_pgen_rng *g, fp4lr_format f, int base)
{
    int low = rng_int(g, 0, 15) == 0;
    if (f == FP4LR_MXFP4) {
        int e = base + (int)rng_int(g, -2, 1);
        if (low)
            e -= (int)rng_int(g, 1, 40);
        return (uint8_t)(e < 0 ? 0 : e > 254 ? 254 : e);
    }
    int e = base + (int)rng_int(g, -2, 1);
    e = e < 1 ? 1 : e > 15 ? 15 : e;
    int code = e << 3 | (int)rng_int(g, 0, 7);
    code = code > 0x7E ? 0x7E : code;
    return (uint8_t)(low ? rng_int(g, 0, code) : code);
}

/* The row's base binade: ue8m0 code around `centre` (127 = 2^0), or ue4m3 exponent
 * field; `spread` binades either side (the ue4m3 band sits near the top, as NVFP4's
 * two-level scaling places block scales near 448). */
static int row_base(fp4lr_pgen_rng *g, fp4lr_format f, int spread, int centre)
{
    if (f == FP4LR_MXFP4)
        return centre + (int)rng_int(g, -spread, spread);
    return 14 - (int)rng_int(g, 0, spread);
}

/* Fills one operand's scales (atom layout) and returns each row's rms of deq. */
static void fill_scales(fp4lr_pgen_rng *g, fp4lr_format f, fp4lr_pgen_scales mode, int spread, int centre,
                        const uint8_t *q, uint8_t *sf, int64_t rows, int64_t K, double *rms)
{
    const int64_t B = fp4lr_format_block(f), kv = K / B;
    for (int64_t i = 0; i < rows; i++) {
        int base = row_base(g, f, spread, centre);
        double sq = 0.0;
        for (int64_t c = 0; c < kv; c++) {
            uint8_t code;
            if (mode == FP4LR_PGEN_SCALES_FULL)
                code = (uint8_t)rng_int(g, 0, f == FP4LR_MXFP4 ? 254 : 0x7E);
            else
                code = realistic_scale(g, f, base);
            sf[fp4lr_sf_offset_inline(i, c, kv)] = code;
            double s = f == FP4LR_MXFP4 ? fp4lr_ue8m0_decode(code) : fp4lr_ue4m3_decode(code);
            for (int64_t k = c * B; k < (c + 1) * B; k++) {
                double v = fp4lr_e2m1_decode(fp4lr_fp4_get(q + i * (K / 2), k)) * s;
                sq += v * v;
            }
        }
        rms[i] = sqrt(sq / (double)K);
    }
}

static void fill_bytes(fp4lr_pgen_rng *g, uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)rng_next(g);
}

/* Geometric mean of the positive finite entries (1 when there are none). */
static double geomean(const double *v, int64_t n)
{
    double s = 0.0;
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        if (v[i] > 0 && isfinite(v[i]))
            s += log(v[i]), c++;
    return c ? exp(s / (double)c) : 1.0;
}

/* Clamps a double to finite float range before rounding to bf16 (FULL mode rows can
 * have enormous rms). */
static uint16_t bf16_of(double v)
{
    if (v > 1e38)
        v = 1e38;
    if (v < -1e38)
        v = -1e38;
    return fp4lr_bf16_from_float((float)v);
}

void fp4lr_pgen_fill(fp4lr_pgen_problem *t, uint64_t seed, fp4lr_pgen_scales scales)
{
    const fp4lr_problem *p = &t->p;
    fp4lr_pgen_rng g = {seed ^ 0x6A09E667F3BCC909ull};
    double *ra = malloc(sizeof(double) * (size_t)p->M), *rw = malloc(sizeof(double) * (size_t)p->N);
    if (!ra || !rw) {
        free(ra), free(rw);
        return;
    }
    fill_bytes(&g, t->A, t->sizes.A);
    fill_bytes(&g, t->W, t->sizes.W);
    const int small = scales == FP4LR_PGEN_SCALES_SMALL;
    fill_scales(&g, p->format, scales, 3, small ? 122 : 127, t->A, t->SFA, p->M, p->K, ra);
    fill_scales(&g, p->format, scales, 8, small ? 118 : 127, t->W, t->SFW, p->N, p->K, rw);

    const double alpha =
        p->format == FP4LR_NVFP4 ? ldexp(1.0 + rng_unit(&g), -16 + (int)rng_int(&g, 0, 1)) : 1.0;
    t->a.alpha = (float)alpha;

    /* Low-rank rows scaled to their 4-bit rows so Σ_j L·U ~ alpha·Σ_k a·w in size. */
    const double lr = sqrt(alpha * sqrt((double)p->K / (double)(p->r > 0 ? p->r : 1)));
    for (int64_t m = 0; m < p->M && p->r > 0; m++)
        for (int64_t j = 0; j < p->r; j++)
            t->L[m * p->ldL + j] = bf16_of(rng_gauss(&g) * ra[m] * lr);
    for (int64_t n = 0; n < p->N && p->r > 0; n++)
        for (int64_t j = 0; j < p->r; j++)
            t->U[n * p->ldU + j] = bf16_of(rng_gauss(&g) * rw[n] * lr);

    const double beta_scale = 0.5 * alpha * sqrt((double)p->K) * geomean(ra, p->M);
    for (int64_t n = 0; n < p->N; n++) {
        if (p->has_wc) {
            double w = 0.25 + 1.75 * rng_unit(&g);
            t->wc[n] = rng_int(&g, 0, 15) == 0 ? 0.0f : (float)(rng_int(&g, 0, 1) ? w : -w);
        }
        if (p->has_beta)
            t->beta[n] = (float)fmin(fmax(rng_gauss(&g) * beta_scale * rw[n], -1e38), 1e38);
    }
    free(ra), free(rw);
}

/* ---- output buffer ------------------------------------------------------------- */

void fp4lr_pgen_output_poison(fp4lr_pgen_problem *t) { memset(t->Y, 0xFF, t->sizes.Y); }

/* double -> float rounded to odd: exact, or the truncation with its last bit set.
 * Rounding that to a type with at least 2 fewer significand bits (bf16, fp16) to
 * nearest-even gives the correctly rounded result of the double. */
static float float_round_odd(double v)
{
    float f = (float)v;
    if (isnan(v) || (double)f == v)
        return f;
    if (fabs((double)f) > fabs(v))
        f = nextafterf(f, 0.0f);
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    bits |= 1u;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* The output-type bits of round_out(v). */
static uint32_t out_bits(fp4lr_out_type out, double v)
{
    if (out == FP4LR_OUT_F32) {
        float f = (float)v;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        return bits;
    }
    float f = float_round_odd(v);
    return out == FP4LR_OUT_BF16 ? fp4lr_bf16_from_float(f) : fp4lr_f16_from_float(f);
}

static double from_bits(fp4lr_out_type out, uint32_t bits)
{
    if (out == FP4LR_OUT_BF16)
        return fp4lr_bf16_to_float((uint16_t)bits);
    if (out == FP4LR_OUT_F16)
        return fp4lr_f16_to_float((uint16_t)bits);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

double fp4lr_pgen_round_out(fp4lr_out_type out, double v) { return from_bits(out, out_bits(out, v)); }

void fp4lr_pgen_output_set(fp4lr_pgen_problem *t, int64_t m, int64_t n, double v)
{
    int64_t at = m * t->p.ldY + n;
    uint32_t bits = out_bits(t->p.out, v);
    if (t->p.out == FP4LR_OUT_F32)
        ((uint32_t *)t->Y)[at] = bits;
    else
        ((uint16_t *)t->Y)[at] = (uint16_t)bits;
}

double fp4lr_pgen_output_get(const fp4lr_pgen_problem *t, int64_t m, int64_t n)
{
    int64_t at = m * t->p.ldY + n;
    if (t->p.out == FP4LR_OUT_F32)
        return from_bits(t->p.out, ((const uint32_t *)t->Y)[at]);
    return from_bits(t->p.out, ((const uint16_t *)t->Y)[at]);
}

void fp4lr_pgen_output_store(fp4lr_pgen_problem *t, const int64_t *rows, int64_t nrows, const double *ref)
{
    if (!rows)
        nrows = t->p.M;
    for (int64_t i = 0; i < nrows; i++)
        for (int64_t n = 0; n < t->p.N; n++)
            fp4lr_pgen_output_set(t, rows ? rows[i] : i, n, ref[i * t->p.N + n]);
}
