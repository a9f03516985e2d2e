/* The dense double-precision reference of the operator (see reference.h for the
 * formula, the NaN rules and the thread model) and the row sampler for validation. */
#include "reference.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bf16.h"
#include "e2m1.h"
#include "fp4_pack.h"
#include "scale_atom.h"
#include "ue4m3.h"
#include "ue8m0.h"

/* Work decomposition.  Phase 1 converts DEQ_ROWS rows per unit; phase 2 computes
 * ITEM_ROWS x ITEM_COLS outputs per item, walking K in KBLOCK steps so the A and W
 * slices of one step (ITEM_ROWS + ITEM_COLS rows of KBLOCK floats, 40 KiB) stay in
 * cache while the item's partial sums live in a small array. */
enum { DEQ_ROWS = 8, ITEM_ROWS = 8, ITEM_COLS = 32, KBLOCK = 256 };

/* Exact float storage of the dequantized operands.  Every deq value is exact in
 * float except MXFP4's largest (6 * 2^127 overflows), so MXFP4 values are stored
 * 2^-3 smaller (the smallest, 0.5 * 2^-130, is still an exact float subnormal) and
 * the two sums over k are multiplied back by 2^6 in double.  Scaling by a power of
 * two commutes with every double rounding here (products lie in [2^-262, 2^262]), so
 * the result is bitwise that of summing the unscaled products. */
#define MX_STORE_SHIFT 0.125f
#define MX_SUM_UNSHIFT 64.0

typedef struct ref_job {
    const fp4lr_problem *p;
    const fp4lr_args *a;
    const int64_t *rows; /* NULL: identity */
    int64_t nrows;
    float *adeq, *wdeq; /* nrows x K, N x K */
    float *lval, *uval; /* nrows x r, N x r (NULL when r = 0) */
    double unshift;     /* 1 or MX_SUM_UNSHIFT */
    int64_t deq_units, row_blocks, col_blocks;
    atomic_llong next; /* next unit (phase 1) or item (phase 2) to take */
    int phase;
    double *ref, *mag;
} ref_job;

static int64_t row_of(const ref_job *j, int64_t i) { return j->rows ? j->rows[i] : i; }

/* A scale's stored value (see MX_STORE_SHIFT). */
static float scale_store(fp4lr_format f, uint8_t code)
{
    return f == FP4LR_NVFP4 ? fp4lr_ue4m3_decode(code) : fp4lr_ue8m0_decode(code) * MX_STORE_SHIFT;
}

/* One packed FP4 row and its scales -> K floats.  Per scale block a 16-entry table
 * of code * scale is built first; a NaN scale gives a table of NaN (0 * NaN). */
static void deq_row(fp4lr_format f, const uint8_t *q, const uint8_t *sf, int64_t row, int64_t K, float *out)
{
    const int64_t B = fp4lr_format_block(f), kv = K / B;
    const uint8_t *qrow = q + row * (K / 2);
    for (int64_t c = 0; c < kv; c++) {
        float s = scale_store(f, fp4lr_sf_get(sf, row, c, kv)), tab[16];
        for (int code = 0; code < 16; code++)
            tab[code] = fp4lr_e2m1_decode((uint8_t)code) * s;
        for (int64_t k = c * B; k < (c + 1) * B; k++)
            out[k] = tab[fp4lr_fp4_get(qrow, k)];
    }
}

static void bf16_row(const uint16_t *src, int64_t r, float *out)
{
    for (int64_t j = 0; j < r; j++)
        out[j] = fp4lr_bf16_to_float(src[j]);
}

/* Phase 1: unit u covers DEQ_ROWS entries of the index space [requested A rows, W rows). */
static void phase_deq(ref_job *j)
{
    const fp4lr_problem *p = j->p;
    const fp4lr_args *a = j->a;
    for (;;) {
        int64_t u = atomic_fetch_add(&j->next, 1);
        if (u >= j->deq_units)
            return;
        for (int64_t e = u * DEQ_ROWS; e < (u + 1) * DEQ_ROWS && e < j->nrows + p->N; e++) {
            if (e < j->nrows) {
                int64_t m = row_of(j, e);
                deq_row(p->format, a->A, a->SFA, m, p->K, j->adeq + e * p->K);
                if (p->r > 0)
                    bf16_row(a->L + m * p->ldL, p->r, j->lval + e * p->r);
            } else {
                int64_t n = e - j->nrows;
                deq_row(p->format, a->W, a->SFW, n, p->K, j->wdeq + n * p->K);
                if (p->r > 0)
                    bf16_row(a->U + n * p->ldU, p->r, j->uval + n * p->r);
            }
        }
    }
}

/* Adds a[k]*w[k] (and |a[k]*w[k]|) for k in [k0, k1) to four outputs: rows a0, a1
 * times columns w0, w1.  Each output keeps one accumulator summed in ascending k;
 * the products are exact, so this is the naive loop's arithmetic exactly. */
static void dot_2x2(const float *a0, const float *a1, const float *w0, const float *w1, int64_t k0,
                    int64_t k1, double s[4], double t[4])
{
    double s00 = s[0], s01 = s[1], s10 = s[2], s11 = s[3];
    double t00 = t[0], t01 = t[1], t10 = t[2], t11 = t[3];
    for (int64_t k = k0; k < k1; k++) {
        double x0 = a0[k], x1 = a1[k], y0 = w0[k], y1 = w1[k];
        double p00 = x0 * y0, p01 = x0 * y1, p10 = x1 * y0, p11 = x1 * y1;
        s00 += p00, s01 += p01, s10 += p10, s11 += p11;
        t00 += fabs(p00), t01 += fabs(p01), t10 += fabs(p10), t11 += fabs(p11);
    }
    s[0] = s00, s[1] = s01, s[2] = s10, s[3] = s11;
    t[0] = t00, t[1] = t01, t[2] = t10, t[3] = t11;
}

/* The low-rank sum and its magnitude for one output. */
static void low_rank(const float *l, const float *u, int64_t r, double *low, double *labs)
{
    double s = 0.0, t = 0.0;
    for (int64_t q = 0; q < r; q++) {
        double v = (double)l[q] * (double)u[q];
        s += v;
        t += fabs(v);
    }
    *low = s;
    *labs = t;
}

/* Phase 2, one item: rows [i0, i1) of the request times columns [n0, n1). */
static void item(ref_job *j, int64_t i0, int64_t i1, int64_t n0, int64_t n1)
{
    const fp4lr_problem *p = j->p;
    const int64_t K = p->K, N = p->N;
    double sum[ITEM_ROWS][ITEM_COLS] = {{0}}, sabs[ITEM_ROWS][ITEM_COLS] = {{0}};

    for (int64_t k0 = 0; k0 < K; k0 += KBLOCK) {
        int64_t k1 = k0 + KBLOCK < K ? k0 + KBLOCK : K;
        for (int64_t i = i0; i < i1; i += 2) {
            /* An odd edge row or column is computed twice and stored once. */
            int64_t ib = i + 1 < i1 ? i + 1 : i;
            const float *a0 = j->adeq + i * K, *a1 = j->adeq + ib * K;
            for (int64_t n = n0; n < n1; n += 2) {
                int64_t nb = n + 1 < n1 ? n + 1 : n;
                int64_t x = i - i0, xb = ib - i0, y = n - n0, yb = nb - n0;
                double s[4] = {sum[x][y], sum[x][yb], sum[xb][y], sum[xb][yb]};
                double t[4] = {sabs[x][y], sabs[x][yb], sabs[xb][y], sabs[xb][yb]};
                dot_2x2(a0, a1, j->wdeq + n * K, j->wdeq + nb * K, k0, k1, s, t);
                sum[x][y] = s[0], sum[x][yb] = s[1], sum[xb][y] = s[2], sum[xb][yb] = s[3];
                sabs[x][y] = t[0], sabs[x][yb] = t[1], sabs[xb][y] = t[2], sabs[xb][yb] = t[3];
            }
        }
    }

    /* The affine and the low-rank term, in OPERATOR.md §1's order. */
    const double alpha = j->a->alpha;
    for (int64_t i = i0; i < i1; i++) {
        for (int64_t n = n0; n < n1; n++) {
            double low = 0.0, labs = 0.0;
            if (p->r > 0)
                low_rank(j->lval + i * p->r, j->uval + n * p->r, p->r, &low, &labs);
            double prod = sum[i - i0][n - n0] * j->unshift;
            double mabs = sabs[i - i0][n - n0] * j->unshift;
            double wc = p->has_wc ? (double)j->a->wc[n] : 1.0;
            double beta = p->has_beta ? (double)j->a->beta[n] : 0.0;
            j->ref[i * N + n] = wc * (alpha * prod) + beta + low;
            if (j->mag)
                j->mag[i * N + n] = fabs(alpha * wc) * mabs + fabs(beta) + labs;
        }
    }
}

static void phase_items(ref_job *j)
{
    const int64_t items = j->row_blocks * j->col_blocks;
    for (;;) {
        int64_t it = atomic_fetch_add(&j->next, 1);
        if (it >= items)
            return;
        int64_t rb = it / j->col_blocks, cb = it % j->col_blocks;
        int64_t i0 = rb * ITEM_ROWS, n0 = cb * ITEM_COLS;
        int64_t i1 = i0 + ITEM_ROWS < j->nrows ? i0 + ITEM_ROWS : j->nrows;
        int64_t n1 = n0 + ITEM_COLS < j->p->N ? n0 + ITEM_COLS : j->p->N;
        item(j, i0, i1, n0, n1);
    }
}

static void *worker(void *arg)
{
    ref_job *j = arg;
    if (j->phase == 1)
        phase_deq(j);
    else
        phase_items(j);
    return NULL;
}

/* Runs the current phase on up to nthreads threads, the caller being one of them.
 * Work is taken from the shared counter, so a thread that fails to start only costs
 * speed: the ones that did start (at least the caller) finish every unit. */
static void run_phase(ref_job *j, int phase, int nthreads)
{
    atomic_store(&j->next, 0);
    j->phase = phase;
    pthread_t *tid = nthreads > 1 ? malloc(sizeof(pthread_t) * (size_t)(nthreads - 1)) : NULL;
    int started = 0;
    if (tid)
        while (started < nthreads - 1 && pthread_create(&tid[started], NULL, worker, j) == 0)
            started++;
    worker(j);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    free(tid);
}

/* The operands the problem reads must be present (Y is not read). */
static fp4lr_status check_operands(const fp4lr_problem *p, const fp4lr_args *a)
{
    if (!a || !a->A || !a->SFA || !a->W || !a->SFW)
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER", "reference: A, SFA, W and SFW are required");
    if (p->r > 0 && (!a->L || !a->U))
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER", "reference: r = %lld needs L and U",
                          (long long)p->r);
    if ((p->has_wc && !a->wc) || (p->has_beta && !a->beta))
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER",
                          "reference: has_wc/has_beta set but wc/beta is NULL");
    return fp4lr_ok();
}

fp4lr_status fp4lr_rows_validate(const fp4lr_problem *p, const int64_t *rows, int64_t nrows)
{
    if (!rows && nrows != p->M)
        return fp4lr_fail(FP4LR_E_INVALID, "NROWS", "rows = NULL means all %lld rows, got nrows = %lld",
                          (long long)p->M, (long long)nrows);
    if (nrows < 1)
        return fp4lr_fail(FP4LR_E_INVALID, "NROWS", "nrows = %lld, need >= 1", (long long)nrows);
    for (int64_t i = 0; rows && i < nrows; i++)
        if (rows[i] < 0 || rows[i] >= p->M)
            return fp4lr_fail(FP4LR_E_INVALID, "ROW_RANGE", "rows[%lld] = %lld is outside [0, %lld)",
                              (long long)i, (long long)rows[i], (long long)p->M);
    return fp4lr_ok();
}

/* malloc of n floats with an overflow check; n = 0 gives NULL without failing. */
static int alloc_floats(int64_t n, float **out)
{
    *out = NULL;
    if (n == 0)
        return 1;
    if ((uint64_t)n > SIZE_MAX / sizeof(float))
        return 0;
    *out = malloc((size_t)n * sizeof(float));
    return *out != NULL;
}

fp4lr_status fp4lr_reference(const fp4lr_problem *p, const fp4lr_args *host, const int64_t *rows,
                             int64_t nrows, int nthreads, double *ref, double *mag)
{
    if (!p || !ref)
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER", "reference: problem and ref are required");
    fp4lr_problem q = *p;
    fp4lr_problem_resolve(&q);
    FP4LR_TRY(fp4lr_problem_validate(&q));
    FP4LR_TRY(check_operands(&q, host));
    FP4LR_TRY(fp4lr_rows_validate(&q, rows, nrows));
    if (nthreads < 0)
        return fp4lr_fail(FP4LR_E_INVALID, "THREADS", "reference: nthreads = %d, need >= 0 (0 = online CPUs)",
                          nthreads);
    if (nthreads == 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = online > 0 ? (int)(online < 1024 ? online : 1024) : 1;
    }

    ref_job j = {.p = &q, .a = host, .rows = rows, .nrows = nrows, .ref = ref, .mag = mag};
    j.unshift = q.format == FP4LR_MXFP4 ? MX_SUM_UNSHIFT : 1.0;
    int ok = alloc_floats(nrows * q.K, &j.adeq) && alloc_floats(q.N * q.K, &j.wdeq) &&
             alloc_floats(nrows * q.r, &j.lval) && alloc_floats(q.N * q.r, &j.uval);
    if (!ok) {
        free(j.adeq), free(j.wdeq), free(j.lval), free(j.uval);
        return fp4lr_fail(FP4LR_E_NOMEM, "NOMEM",
                          "reference: cannot allocate %lld + %lld dequantized rows of K = %lld",
                          (long long)nrows, (long long)q.N, (long long)q.K);
    }
    j.deq_units = (nrows + q.N + DEQ_ROWS - 1) / DEQ_ROWS;
    j.row_blocks = (nrows + ITEM_ROWS - 1) / ITEM_ROWS;
    j.col_blocks = (q.N + ITEM_COLS - 1) / ITEM_COLS;

    run_phase(&j, 1, nthreads);
    run_phase(&j, 2, nthreads);

    free(j.adeq), free(j.wdeq), free(j.lval), free(j.uval);
    return fp4lr_ok();
}

/* ---- row sampling ------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Inserts v into the sorted unique array rows[0..*n) unless present. */
static void insert_sorted(int64_t *rows, int64_t *n, int64_t v)
{
    int64_t lo = 0, hi = *n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (rows[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < *n && rows[lo] == v)
        return;
    memmove(rows + lo + 1, rows + lo, sizeof(int64_t) * (size_t)(*n - lo));
    rows[lo] = v;
    (*n)++;
}

fp4lr_status fp4lr_sample_rows(int64_t M, int64_t want, uint64_t seed, int64_t *rows, int64_t *nrows)
{
    if (!rows || !nrows)
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER", "sample_rows: rows and nrows are required");
    if (M < 1)
        return fp4lr_fail(FP4LR_E_INVALID, "M_POSITIVE", "sample_rows: M = %lld, need >= 1", (long long)M);
    if (want < M && want < FP4LR_SAMPLE_FIXED_MAX)
        return fp4lr_fail(FP4LR_E_INVALID, "SAMPLE_WANT",
                          "sample_rows: want = %lld is below M = %lld and below the %d edge rows",
                          (long long)want, (long long)M, FP4LR_SAMPLE_FIXED_MAX);
    int64_t n = 0;
    if (want >= M) {
        for (int64_t m = 0; m < M; m++)
            rows[n++] = m;
        *nrows = n;
        return fp4lr_ok();
    }
    /* The edges: first and last two rows, both sides of the first 64- and 128-row
     * tile boundaries, and both sides of the start of the last (ragged) tiles. */
    const int64_t last64 = (M - 1) / 64 * 64, last128 = (M - 1) / 128 * 128;
    const int64_t fixed[FP4LR_SAMPLE_FIXED_MAX] = {0,   1,   M - 2,      M - 1,  63,          64,
                                                   127, 128, last64 - 1, last64, last128 - 1, last128};
    for (int f = 0; f < FP4LR_SAMPLE_FIXED_MAX; f++)
        if (fixed[f] >= 0 && fixed[f] < M)
            insert_sorted(rows, &n, fixed[f]);
    /* Seeded uniform rows fill the rest (want < M, so this ends). */
    uint64_t state = seed;
    while (n < want)
        insert_sorted(rows, &n, (int64_t)(splitmix64(&state) % (uint64_t)M));
    *nrows = n;
    return fp4lr_ok();
}
