/* cuBLASLt peers: run-time loading, the bf16 and fp8 GEMMs, the self-check
 * (cublaslt.h). */
#include "cublaslt.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "devbuf.h"
#include "rotate.h"
#include "ue4m3.h"

/* ---- loading ------------------------------------------------------------------ */

fp4lr_status fp4lr_cublaslt_open(fp4lr_cublaslt **out)
{
    *out = NULL;
    const char *env = getenv("FP4LR_CUBLASLT");
    const char *names[] = FP4LR_CUBLASLT_NAMES;
    const char *const *try = names;
    size_t ntry = sizeof names / sizeof names[0];
    if (env && env[0])
        try = &env, ntry = 1;
    void *lib = NULL;
    const char *opened = NULL, *err = "";
    char tried[640] = "";
    for (size_t i = 0; i < ntry && !lib; i++) {
        lib = dlopen(try[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (lib)
            opened = try[i];
        else
            err = dlerror();
        size_t used = strlen(tried);
        snprintf(tried + used, sizeof tried - used, "%s%s", i ? ", " : "", try[i]);
    }
    if (!lib)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "NO_CUBLASLT", "cuBLASLt not found (tried %s%s): %s", tried,
                          env && env[0] ? " from $FP4LR_CUBLASLT" : "", err ? err : "");
    fp4lr_cublaslt *lt = calloc(1, sizeof *lt);
    if (!lt) {
        dlclose(lib);
        return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the cuBLASLt table");
    }
    lt->lib = lib;
    snprintf(lt->path, sizeof lt->path, "%s", opened);
    /* Resolve every entry; the first missing one is the status. */
#define FP4LR_CUBLASLT_RESOLVE_(name)                                                                  \
    do {                                                                                               \
        void *sym = dlsym(lib, #name);                                                                 \
        if (!sym) {                                                                                    \
            fp4lr_cublaslt_close(lt);                                                                  \
            return fp4lr_fail(FP4LR_E_UNSUPPORTED, "CUBLASLT_SYMBOL", "%s has no %s", opened, #name); \
        }                                                                                              \
        memcpy(&lt->name, &sym, sizeof sym);                                                           \
    } while (0);
    FP4LR_CUBLASLT_ENTRIES(FP4LR_CUBLASLT_RESOLVE_)
#undef FP4LR_CUBLASLT_RESOLVE_
    lt->version = lt->cublasLtGetVersion();
    *out = lt;
    return fp4lr_ok();
}

fp4lr_status fp4lr_cublaslt_status(const fp4lr_cublaslt *lt, cublasStatus_t s, const char *expr)
{
    const char *name = lt && lt->cublasLtGetStatusName ? lt->cublasLtGetStatusName(s) : NULL;
    const char *text = lt && lt->cublasLtGetStatusString ? lt->cublasLtGetStatusString(s) : NULL;
    fp4lr_code code = s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH ? FP4LR_E_UNSUPPORTED
                                                                                          : FP4LR_E_DRIVER;
    return fp4lr_fail(code, name ? name : "CUBLAS_STATUS_UNNAMED", "cuBLASLt: %s failed: %s (%s, status %d)",
                      expr, name ? name : "?", text ? text : "no description", (int)s);
}

/* Evaluates a cuBLASLt call; on failure returns its status from the enclosing function. */
#define LT_TRY(lt, expr)                                               \
    do {                                                               \
        cublasStatus_t lt_s_ = (expr);                                 \
        if (lt_s_ != CUBLAS_STATUS_SUCCESS)                            \
            return fp4lr_cublaslt_status((lt), lt_s_, #expr);          \
    } while (0)

fp4lr_status fp4lr_cublaslt_init_handle(fp4lr_cublaslt *lt)
{
    if (lt->handle)
        return fp4lr_ok();
    LT_TRY(lt, lt->cublasLtCreate(&lt->handle));
    return fp4lr_ok();
}

void fp4lr_cublaslt_close(fp4lr_cublaslt *lt)
{
    if (!lt)
        return;
    if (lt->handle && lt->cublasLtDestroy)
        lt->cublasLtDestroy(lt->handle);
    if (lt->lib)
        dlclose(lt->lib);
    free(lt);
}

/* ---- the peer kinds ------------------------------------------------------------- */

const char *fp4lr_peer_name(fp4lr_peer_kind k) { return k == FP4LR_PEER_BF16 ? "cublas-bf16" : "cublas-fp8"; }
const char *fp4lr_peer_format(fp4lr_peer_kind k) { return k == FP4LR_PEER_BF16 ? "bf16" : "e4m3"; }
int fp4lr_peer_elem_bytes(fp4lr_peer_kind k) { return k == FP4LR_PEER_BF16 ? 2 : 1; }

void fp4lr_peer_bytes(fp4lr_peer_kind k, int64_t M, int64_t N, int64_t K, size_t *read_bytes, size_t *copy_bytes)
{
    size_t e = (size_t)fp4lr_peer_elem_bytes(k);
    *read_bytes = ((size_t)M + (size_t)N) * (size_t)K * e;
    *copy_bytes = *read_bytes + (size_t)M * (size_t)N * 2;
}

/* splitmix64: small, seedable, plenty for benchmark data. */
static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void fp4lr_peer_fill(fp4lr_peer_kind k, uint64_t seed, void *buf, size_t count)
{
    uint64_t s = seed ^ 0xBB67AE8584CAA73Bull;
    if (k == FP4LR_PEER_BF16) {
        uint16_t *b = buf;
        for (size_t i = 0; i < count; i++) {
            uint64_t r = next_random(&s);
            /* sign | biased exponent 119..127 (2^-8 .. 2^0) | 7 mantissa bits */
            b[i] = (uint16_t)((r & 1u) << 15 | (119u + (unsigned)((r >> 1) % 9u)) << 7 | ((r >> 8) & 0x7Fu));
        }
        return;
    }
    uint8_t *b = buf;
    for (size_t i = 0; i < count; i++) {
        uint8_t v = (uint8_t)next_random(&s);
        b[i] = (v & 0x7F) == 0x7F ? (uint8_t)(v ^ 1u) : v; /* NaN codes -> +-448 */
    }
}

double fp4lr_peer_value(fp4lr_peer_kind k, const void *buf, size_t i)
{
    if (k == FP4LR_PEER_BF16)
        return fp4lr_bf16_to_float(((const uint16_t *)buf)[i]);
    return fp4lr_ue4m3_decode(((const uint8_t *)buf)[i]); /* e4m3fn semantics, sign included */
}

/* ---- one peer GEMM ---------------------------------------------------------------- */

/* Matrix descriptors, the algorithm and the fp8 scale pointers (buffers exist). */
static fp4lr_status describe(fp4lr_peer_gemm *g)
{
    const fp4lr_cublaslt *lt = g->lt;
    cudaDataType_t in = g->kind == FP4LR_PEER_BF16 ? CUDA_R_16BF : CUDA_R_8F_E4M3;
    LT_TRY(lt, lt->cublasLtMatmulDescCreate(&g->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    int32_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
    LT_TRY(lt, lt->cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa));
    LT_TRY(lt, lt->cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb));
    if (g->kind == FP4LR_PEER_FP8) {
        /* cuBLAS's A is our W, its B our A. */
        /* each scale on its own 16-byte boundary (cuBLASLt wants aligned scale pointers) */
        void *sa = (void *)(uintptr_t)(g->scales + 16), *sb = (void *)(uintptr_t)g->scales;
        LT_TRY(lt, lt->cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
        LT_TRY(lt, lt->cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
    }
    /* Column-major: W is K x N (ld K) used transposed, A is K x M (ld K), D is N x M (ld N). */
    LT_TRY(lt, lt->cublasLtMatrixLayoutCreate(&g->lay_w, in, (uint64_t)g->K, (uint64_t)g->N, g->K));
    LT_TRY(lt, lt->cublasLtMatrixLayoutCreate(&g->lay_a, in, (uint64_t)g->K, (uint64_t)g->M, g->K));
    LT_TRY(lt, lt->cublasLtMatrixLayoutCreate(&g->lay_d, CUDA_R_16BF, (uint64_t)g->N, (uint64_t)g->M, g->N));

    cublasLtMatmulPreference_t pref = NULL;
    LT_TRY(lt, lt->cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws = g->workspace_bytes;
    cublasStatus_t s = lt->cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                &ws, sizeof ws);
    cublasLtMatmulHeuristicResult_t res[1];
    int found = 0;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt->cublasLtMatmulAlgoGetHeuristic(lt->handle, g->desc, g->lay_w, g->lay_a, g->lay_d, g->lay_d, pref, 1,
                                               res, &found);
    lt->cublasLtMatmulPreferenceDestroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS)
        return fp4lr_cublaslt_status(lt, s, "cublasLtMatmulAlgoGetHeuristic");
    if (found < 1 || res[0].state != CUBLAS_STATUS_SUCCESS)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "NO_ALGO", "cuBLASLt has no %s algorithm for M=%lld N=%lld K=%lld",
                          fp4lr_peer_name(g->kind), (long long)g->M, (long long)g->N, (long long)g->K);
    g->algo = res[0].algo;
    g->algo_workspace = res[0].workspaceSize;
    return fp4lr_ok();
}

/* Device buffers: `copies` of A, W and D, the fp8 scales, the workspace; every
 * copy gets the same host data. */
static fp4lr_status allocate(fp4lr_peer_gemm *g, uint64_t seed)
{
    const fp4lr_ctx *ctx = g->ctx;
    size_t e = (size_t)fp4lr_peer_elem_bytes(g->kind);
    size_t a_bytes = (size_t)g->M * (size_t)g->K * e, w_bytes = (size_t)g->N * (size_t)g->K * e;
    size_t d_bytes = (size_t)g->M * (size_t)g->N * 2;
    void *ha = malloc(a_bytes), *hw = malloc(w_bytes);
    fp4lr_status st = fp4lr_ok();
    if (!ha || !hw)
        st = fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate %zu + %zu bytes of peer inputs", a_bytes,
                        w_bytes);
    if (st.code == FP4LR_OK) {
        fp4lr_peer_fill(g->kind, seed, ha, a_bytes / e);
        fp4lr_peer_fill(g->kind, seed + 1, hw, w_bytes / e);
    }
    for (int c = 0; c < g->copies && st.code == FP4LR_OK; c++) {
        st = fp4lr_dev_alloc(ctx, &g->A[c], a_bytes);
        if (st.code == FP4LR_OK)
            st = fp4lr_dev_alloc(ctx, &g->W[c], w_bytes);
        if (st.code == FP4LR_OK)
            st = fp4lr_dev_alloc(ctx, &g->D[c], d_bytes);
        if (st.code == FP4LR_OK)
            st = fp4lr_dev_upload(ctx, g->A[c], ha, a_bytes);
        if (st.code == FP4LR_OK)
            st = fp4lr_dev_upload(ctx, g->W[c], hw, w_bytes);
    }
    free(ha);
    free(hw);
    if (st.code == FP4LR_OK && g->kind == FP4LR_PEER_FP8) {
        const float scales[8] = {FP4LR_PEER_FP8_SCALE_A, 0, 0, 0, FP4LR_PEER_FP8_SCALE_W, 0, 0, 0};
        st = fp4lr_dev_alloc(ctx, &g->scales, sizeof scales);
        if (st.code == FP4LR_OK)
            st = fp4lr_dev_upload(ctx, g->scales, scales, sizeof scales);
    }
    if (st.code == FP4LR_OK)
        st = fp4lr_dev_alloc(ctx, &g->workspace, g->workspace_bytes);
    return st;
}

fp4lr_status fp4lr_peer_gemm_create(const fp4lr_cublaslt *lt, const fp4lr_ctx *ctx, fp4lr_peer_kind kind,
                                    int64_t M, int64_t N, int64_t K, int copies, uint64_t seed,
                                    fp4lr_peer_gemm *out)
{
    memset(out, 0, sizeof *out);
    if (M < 1 || N < 1 || K < 1)
        return fp4lr_fail(FP4LR_E_INVALID, "PEER_SHAPE", "peer GEMM needs M, N, K >= 1 (got %lld x %lld x %lld)",
                          (long long)M, (long long)N, (long long)K);
    if (copies < 1 || copies > FP4LR_PEER_MAX_COPIES)
        return fp4lr_fail(FP4LR_E_INVALID, "PEER_COPIES", "peer copies must be 1..%d (got %d)",
                          FP4LR_PEER_MAX_COPIES, copies);
    if (!lt || !lt->handle)
        return fp4lr_fail(FP4LR_E_INVALID, "NO_HANDLE", "the cuBLASLt handle is not initialised");
    *out = (fp4lr_peer_gemm){.lt = lt, .ctx = ctx, .kind = kind, .M = M, .N = N, .K = K, .copies = copies,
                             .workspace_bytes = FP4LR_PEER_WORKSPACE_BYTES, .alpha = 1.0f, .beta = 0.0f};
    fp4lr_status st = allocate(out, seed);
    if (st.code == FP4LR_OK)
        st = describe(out);
    if (st.code != FP4LR_OK)
        fp4lr_peer_gemm_destroy(out);
    return st;
}

fp4lr_status fp4lr_peer_gemm_run(fp4lr_peer_gemm *g, int copy, CUstream stream)
{
    if (copy < 0 || copy >= g->copies)
        return fp4lr_fail(FP4LR_E_INVALID, "PEER_COPIES", "copy %d of %d", copy, g->copies);
    const fp4lr_cublaslt *lt = g->lt;
    const void *w = (const void *)(uintptr_t)g->W[copy], *a = (const void *)(uintptr_t)g->A[copy];
    void *d = (void *)(uintptr_t)g->D[copy];
    /* CUstream and cudaStream_t are the same handle type (struct CUstream_st *). */
    LT_TRY(lt, lt->cublasLtMatmul(lt->handle, g->desc, &g->alpha, w, g->lay_w, a, g->lay_a, &g->beta, d, g->lay_d,
                                  d, g->lay_d, &g->algo, (void *)(uintptr_t)g->workspace, g->workspace_bytes,
                                  (cudaStream_t)stream));
    return fp4lr_ok();
}

fp4lr_status fp4lr_peer_gemm_timed(void *user, int i, CUstream stream)
{
    fp4lr_peer_gemm *g = user;
    return fp4lr_peer_gemm_run(g, fp4lr_rotation_index(i, g->copies), stream);
}

void fp4lr_peer_gemm_destroy(fp4lr_peer_gemm *g)
{
    const fp4lr_cublaslt *lt = g->lt;
    if (lt) {
        if (g->lay_w) lt->cublasLtMatrixLayoutDestroy(g->lay_w);
        if (g->lay_a) lt->cublasLtMatrixLayoutDestroy(g->lay_a);
        if (g->lay_d) lt->cublasLtMatrixLayoutDestroy(g->lay_d);
        if (g->desc) lt->cublasLtMatmulDescDestroy(g->desc);
    }
    if (g->ctx) {
        for (int c = 0; c < FP4LR_PEER_MAX_COPIES; c++) {
            fp4lr_dev_free(g->ctx, g->A[c]);
            fp4lr_dev_free(g->ctx, g->W[c]);
            fp4lr_dev_free(g->ctx, g->D[c]);
        }
        fp4lr_dev_free(g->ctx, g->scales);
        fp4lr_dev_free(g->ctx, g->workspace);
    }
    memset(g, 0, sizeof *g);
}

/* ---- the self-check --------------------------------------------------------------- */

/* Compares every output of the peer's copy 0 with a double dot product of the
 * same host data. */
static fp4lr_status check_outputs(const fp4lr_peer_gemm *g, uint64_t seed, fp4lr_peer_check *rep)
{
    size_t e = (size_t)fp4lr_peer_elem_bytes(g->kind);
    size_t na = (size_t)(g->M * g->K), nw = (size_t)(g->N * g->K), nd = (size_t)(g->M * g->N);
    void *ha = malloc(na * e), *hw = malloc(nw * e);
    uint16_t *hd = malloc(nd * 2);
    fp4lr_status st = fp4lr_ok();
    if (!ha || !hw || !hd)
        st = fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the self-check buffers");
    if (st.code == FP4LR_OK)
        st = fp4lr_dev_download(g->ctx, hd, g->D[0], nd * 2);
    if (st.code == FP4LR_OK) {
        fp4lr_peer_fill(g->kind, seed, ha, na);
        fp4lr_peer_fill(g->kind, seed + 1, hw, nw);
        double scale = g->kind == FP4LR_PEER_FP8 ? (double)FP4LR_PEER_FP8_SCALE_A * FP4LR_PEER_FP8_SCALE_W : 1.0;
        for (int64_t m = 0; m < g->M; m++)
            for (int64_t n = 0; n < g->N; n++) {
                double ref = 0, mag = 0;
                for (int64_t k = 0; k < g->K; k++) {
                    double p = fp4lr_peer_value(g->kind, ha, (size_t)(m * g->K + k)) *
                               fp4lr_peer_value(g->kind, hw, (size_t)(n * g->K + k));
                    ref += p, mag += fabs(p);
                }
                ref *= scale, mag *= scale;
                double got = fp4lr_bf16_to_float(hd[m * g->N + n]);
                double err = fabs(got - ref);
                int ok = err <= FP4LR_PEER_CHECK_TOL * mag + fp4lr_bf16_ulp(ref); /* NaN fails */
                double rel = mag > 0 ? err / mag : err > 0 ? INFINITY : 0.0;
                if (isnan(rel))
                    rel = INFINITY; /* an unwritten (poisoned) output is the worst */
                rep->checked++;
                rep->failed += !ok;
                if (rep->worst_m < 0 || rel > rep->max_err_over_mag) {
                    rep->max_err_over_mag = rel;
                    rep->worst_m = m, rep->worst_n = n, rep->worst_got = got, rep->worst_expected = ref;
                }
            }
    }
    free(ha);
    free(hw);
    free(hd);
    return st;
}

fp4lr_status fp4lr_peer_selfcheck(const fp4lr_cublaslt *lt, const fp4lr_ctx *ctx, fp4lr_peer_kind kind,
                                  fp4lr_peer_check *rep)
{
    const uint64_t seed = 0x5E1F;
    memset(rep, 0, sizeof *rep);
    rep->worst_m = rep->worst_n = -1;
    fp4lr_peer_gemm g;
    FP4LR_TRY(fp4lr_peer_gemm_create(lt, ctx, kind, FP4LR_PEER_CHECK_M, FP4LR_PEER_CHECK_N, FP4LR_PEER_CHECK_K, 1,
                                     seed, &g));
    fp4lr_status st = fp4lr_dev_poison_nan(ctx, g.D[0], (size_t)(g.M * g.N) * 2, 2);
    if (st.code == FP4LR_OK)
        st = fp4lr_peer_gemm_run(&g, 0, NULL);
    if (st.code == FP4LR_OK)
        st = fp4lr_ctx_sync(ctx);
    if (st.code == FP4LR_OK)
        st = check_outputs(&g, seed, rep);
    fp4lr_peer_gemm_destroy(&g);
    if (st.code == FP4LR_OK && rep->failed)
        st = fp4lr_fail(FP4LR_E_MISMATCH, "PEER_SELFCHECK",
                        "%s self-check: %lld of %lld outputs off (worst at m=%lld n=%lld: got %.6g, expected %.6g, "
                        "err/mag %.3g)",
                        fp4lr_peer_name(kind), (long long)rep->failed, (long long)rep->checked,
                        (long long)rep->worst_m, (long long)rep->worst_n, rep->worst_got, rep->worst_expected,
                        rep->max_err_over_mag);
    return st;
}
