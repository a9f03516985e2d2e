/* cuBLASLt, opened at run time: the peer GEMMs fp4lr is measured against.
 *
 * Nothing links -lcublasLt: the library is opened with dlopen ($FP4LR_CUBLASLT
 * when set, else FP4LR_CUBLASLT_NAMES: libcublasLt.so.13, .so.12, .so, then the
 * same under /usr/local/cuda/lib64) and the
 * functions used are resolved once into an fp4lr_cublaslt table whose field
 * types are taken from the declarations of cublasLt.h.  A missing library is a
 * status (FP4LR_E_UNSUPPORTED, rule NO_CUBLASLT), so the benchmark runs on
 * without its peers.
 *
 * Two peers compute D = A · Wᵀ with fp32 accumulation and a bf16 D, for A an
 * M x K and W an N x K row-major matrix (the operand layout of fp4lr):
 *   - cublas-bf16: A and W bf16;
 *   - cublas-fp8:  A and W e4m3 with one fp32 scale per tensor on the device
 *                  (CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER).
 * cuBLAS is column-major, so each peer computes Dᵀ = W · Aᵀ: cuBLAS's A is our W
 * (column-major K x N, transposed), its B is our A (column-major K x M, not
 * transposed), its D is column-major N x M with ld N, which is our row-major
 * M x N.  That "TN" form is also the one cuBLASLt's fp8 kernels require.
 *
 * The peers are timed, not validated against the fp4lr reference; a broken
 * binding is caught by fp4lr_peer_selfcheck, a small GEMM of each kind checked
 * against a CPU dot product. */
#ifndef FP4LR_CUBLASLT_H
#define FP4LR_CUBLASLT_H

#include <stddef.h>
#include <stdint.h>

#include <cublasLt.h>

#include "device.h"

/* Every cuBLASLt function used.  A field has the type of a pointer to the
 * header's declaration, so a signature change shows up at compile time. */
#define FP4LR_CUBLASLT_ENTRIES(X)          \
    X(cublasLtCreate)                      \
    X(cublasLtDestroy)                     \
    X(cublasLtGetVersion)                  \
    X(cublasLtGetStatusName)               \
    X(cublasLtGetStatusString)             \
    X(cublasLtMatmulDescCreate)            \
    X(cublasLtMatmulDescDestroy)           \
    X(cublasLtMatmulDescSetAttribute)      \
    X(cublasLtMatrixLayoutCreate)          \
    X(cublasLtMatrixLayoutDestroy)         \
    X(cublasLtMatmulPreferenceCreate)      \
    X(cublasLtMatmulPreferenceDestroy)     \
    X(cublasLtMatmulPreferenceSetAttribute)\
    X(cublasLtMatmulAlgoGetHeuristic)      \
    X(cublasLtMatmul)

#define FP4LR_CUBLASLT_FIELD_(name) __typeof__(name) *name;

typedef struct fp4lr_cublaslt {
    void *lib;                /* dlopen handle (RTLD_NODELETE: status names stay valid) */
    char path[512];           /* the library that was opened */
    size_t version;           /* cublasLtGetVersion, e.g. 130100 */
    cublasLtHandle_t handle;  /* NULL until fp4lr_cublaslt_init_handle */
    FP4LR_CUBLASLT_ENTRIES(FP4LR_CUBLASLT_FIELD_)
} fp4lr_cublaslt;

/* The library names tried in order when $FP4LR_CUBLASLT is not set: the loader's
 * search path first, then the toolkit's default location (not always on it). */
#define FP4LR_CUBLASLT_NAMES                                                                  \
    {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so", "/usr/local/cuda/lib64/libcublasLt.so.13", \
     "/usr/local/cuda/lib64/libcublasLt.so.12"}

/* Opens the library and resolves every entry; needs no GPU.  FP4LR_E_UNSUPPORTED
 * with rule NO_CUBLASLT (every name tried and the last dlerror in the message)
 * or CUBLASLT_SYMBOL (an entry is missing); FP4LR_E_NOMEM. */
fp4lr_status fp4lr_cublaslt_open(fp4lr_cublaslt **out);
/* Creates the cuBLASLt handle; the context must be current on the thread. */
fp4lr_status fp4lr_cublaslt_init_handle(fp4lr_cublaslt *lt);
/* Destroys the handle and the table (NULL is fine). */
void fp4lr_cublaslt_close(fp4lr_cublaslt *lt);

/* A failed cuBLASLt call: FP4LR_E_UNSUPPORTED for NOT_SUPPORTED and
 * ARCH_MISMATCH, FP4LR_E_DRIVER otherwise; rule = the status name
 * ("CUBLAS_STATUS_INVALID_VALUE"); the message names the call. */
fp4lr_status fp4lr_cublaslt_status(const fp4lr_cublaslt *lt, cublasStatus_t s, const char *expr);

typedef enum fp4lr_peer_kind {
    FP4LR_PEER_BF16 = 0,
    FP4LR_PEER_FP8 = 1,
} fp4lr_peer_kind;
#define FP4LR_PEER_KINDS 2

/* "cublas-bf16" / "cublas-fp8"; "bf16" / "e4m3"; element bytes 2 / 1. */
const char *fp4lr_peer_name(fp4lr_peer_kind k);
const char *fp4lr_peer_format(fp4lr_peer_kind k);
int fp4lr_peer_elem_bytes(fp4lr_peer_kind k);

#define FP4LR_PEER_WORKSPACE_BYTES ((size_t)32 << 20)
#define FP4LR_PEER_MAX_COPIES 64
/* The fp8 per-tensor scales (A's, W's): their product is 2, and each alone is
 * visible, so the self-check notices a scale that is ignored. */
#define FP4LR_PEER_FP8_SCALE_A 0.5f
#define FP4LR_PEER_FP8_SCALE_W 4.0f

/* Input bytes one launch reads (A and W) and device bytes one copy holds (A, W
 * and its own bf16 D). */
void fp4lr_peer_bytes(fp4lr_peer_kind k, int64_t M, int64_t N, int64_t K, size_t *read_bytes,
                      size_t *copy_bytes);

/* `count` random finite elements of the kind from `seed` (same seed, same bytes):
 * bf16 with a random sign and mantissa and magnitude in [2^-8, 2); e4m3 every
 * byte except the two NaN codes 0x7F and 0xFF (those become 0x7E and 0xFE). */
void fp4lr_peer_fill(fp4lr_peer_kind k, uint64_t seed, void *buf, size_t count);

/* The value of element i of a buffer filled by fp4lr_peer_fill. */
double fp4lr_peer_value(fp4lr_peer_kind k, const void *buf, size_t i);

/* One peer GEMM with `copies` copies of its operands (input rotation), its
 * descriptors, its algorithm (the heuristic's first) and its workspace. */
typedef struct fp4lr_peer_gemm {
    const fp4lr_cublaslt *lt;
    const fp4lr_ctx *ctx;
    fp4lr_peer_kind kind;
    int64_t M, N, K;
    int copies;
    CUdeviceptr A[FP4LR_PEER_MAX_COPIES], W[FP4LR_PEER_MAX_COPIES], D[FP4LR_PEER_MAX_COPIES];
    CUdeviceptr scales;        /* fp8: {scale_a, scale_w} as fp32 */
    CUdeviceptr workspace;
    size_t workspace_bytes;    /* FP4LR_PEER_WORKSPACE_BYTES */
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t lay_w, lay_a, lay_d; /* cuBLAS's A, B, and C = D */
    cublasLtMatmulAlgo_t algo;
    size_t algo_workspace;     /* what the algorithm needs of the workspace */
    float alpha, beta;
} fp4lr_peer_gemm;

/* Allocates the copies, fills A (seed) and W (seed + 1) with fp4lr_peer_fill,
 * uploads the same data into every copy, builds the descriptors and asks the
 * heuristic for an algorithm.  The handle must exist.  Rules: PEER_SHAPE
 * (M, N, K < 1), PEER_COPIES, NO_HANDLE, NO_ALGO (the heuristic found none);
 * cuBLASLt and driver failures.  On failure everything made is released. */
fp4lr_status fp4lr_peer_gemm_create(const fp4lr_cublaslt *lt, const fp4lr_ctx *ctx, fp4lr_peer_kind kind,
                                    int64_t M, int64_t N, int64_t K, int copies, uint64_t seed,
                                    fp4lr_peer_gemm *out);
/* Launches the GEMM on copy `copy`, asynchronously on `stream`. */
fp4lr_status fp4lr_peer_gemm_run(fp4lr_peer_gemm *g, int copy, CUstream stream);
/* An fp4lr_timed_fn; `user` is an fp4lr_peer_gemm; repetition i runs on copy
 * fp4lr_rotation_index(i, copies). */
fp4lr_status fp4lr_peer_gemm_timed(void *user, int i, CUstream stream);
void fp4lr_peer_gemm_destroy(fp4lr_peer_gemm *g);

/* The self-check of one peer kind on a small non-square GEMM
 * (FP4LR_PEER_CHECK_M x _N x _K, every output checked). */
#define FP4LR_PEER_CHECK_M 64
#define FP4LR_PEER_CHECK_N 96
#define FP4LR_PEER_CHECK_K 160
/* |d - ref| <= tol · Σ_k |a·w|·scales, plus one bf16 half-ulp of ref: bf16
 * output rounding and fp32 accumulation stay far below it, a wrong layout,
 * transpose or scale far above. */
#define FP4LR_PEER_CHECK_TOL 0x1p-10

typedef struct fp4lr_peer_check {
    int64_t checked, failed;
    double max_err_over_mag;
    int64_t worst_m, worst_n;
    double worst_got, worst_expected;
} fp4lr_peer_check;

/* Runs the check; FP4LR_E_MISMATCH (rule PEER_SELFCHECK) when an output is off. */
fp4lr_status fp4lr_peer_selfcheck(const fp4lr_cublaslt *lt, const fp4lr_ctx *ctx, fp4lr_peer_kind kind,
                                  fp4lr_peer_check *rep);

#endif
