/* raw_launch: an fp4lr kernel launched with the CUDA driver API alone, following ptx/ABI.md.
 *
 * What a runtime of your own does, step by step, without libfp4lr's launch path (no
 * fp4lr_gemm, no host/sm90a_gemm.c, no tensor-map or launch helper of the library):
 *   1. quantize a small random problem on the host with layouts/ (data preparation);
 *   2. ask the planner for the entry name and the dynamic shared memory (ABI.md §1);
 *   3. cuModuleLoad the cubin, cuModuleGetFunction the entry, allow the shared memory;
 *   4. encode the tensor maps with cuTensorMapEncodeTiled (ABI.md §4) and write every
 *      parameter at its offset of ABI.md §5;
 *   5. launch on the persistent grid (ABI.md §2) twice, on a stream of its own:
 *      parameters by pointer array, then as one packed buffer; a W-prepared plan (_w
 *      kernels, ABI.md §4.1: M >= 1536 by default, or --w-prep on) first launches the
 *      format's wprep kernel into a workspace that the W map then points at;
 *   6. validate against the double reference (host/reference.h, host/compare.h), run the
 *      library's fp4lr_gemm on the same device buffers, and compare the three outputs
 *      bitwise.
 * The driver is libcuda.so.1, opened at run time through host/driver.h's table (nothing
 * links -lcuda); cuModuleLoad, which the table does not carry, is looked up in the same
 * library.
 *
 * Without a GPU (or without an sm_90 one) it says so and exits 0; with --require-gpu it
 * exits 3.  --print-params KEY prints the parameter layout it packs for a family (no GPU
 * needed; tests/test_abi.c compares it with tools/gen_abi.py --params KEY).
 * Exit status: 0 pass, 1 validation failed or the outputs differ, 2 bad arguments,
 * 3 any other error. */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fp4lr.h"

enum { EXIT_PASS = 0, EXIT_MISMATCH = 1, EXIT_USAGE = 2, EXIT_ERROR = 3 };

/* ---- ABI.md §5: each parameter's offset in the parameter area, and its size ----------
 * On sm_90a the first parameter sits 112 bytes into the area (ABI.md §5): a packed buffer
 * starts with those 112 bytes (zero), and the offsets below are the table's. */

typedef struct abi_param {
    const char *name;
    size_t offset, bytes;
} abi_param;

enum {
    P_TMA, P_TMW, P_TMSFA, P_TMSFW, P_TMY, P_NUM_K_STAGES, P_ALPHA, P_TILES_M, P_TILES_N, P_GROUP,
    P_DENSE_COUNT, /* the dense families end here; the fused family goes on */
    P_TML = P_DENSE_COUNT, P_TMU, P_WC, P_BETA, P_N, P_LORA_CHUNKS, P_LORA_SLOTS, P_LORA_SUB,
    P_LORA_KSTEPS, P_LORA_WK, P_LORA_DESCHI,
    P_FUSED_COUNT,
    P_SK_COUNT = 5 /* both families end with the stream-K five, left 0: every tile whole */
};

#define ABI_COMMON                                                                               \
    {"p_tmA", 112, 128}, {"p_tmW", 240, 128}, {"p_tmSFA", 368, 128}, {"p_tmSFW", 496, 128},        \
        {"p_tmY", 624, 128}, {"p_num_k_stages", 752, 4}, {"p_alpha", 756, 4}, {"p_tiles_m", 760, 4}, \
        {"p_tiles_n", 764, 4}, {"p_group", 768, 4}

static const abi_param abi_dense[P_DENSE_COUNT + P_SK_COUNT] = {
    ABI_COMMON,
    {"p_sk_ws", 776, 8}, {"p_sk_dp_tiles", 784, 4}, {"p_sk_q", 788, 4}, {"p_sk_r", 792, 4}, {"p_sk_epoch", 796, 4},
};

static const abi_param abi_fused[P_FUSED_COUNT + P_SK_COUNT] = {
    ABI_COMMON,
    {"p_tmL", 880, 128},        {"p_tmU", 1008, 128},       {"p_wc", 1136, 8},
    {"p_beta", 1144, 8},        {"p_N", 1152, 4},           {"p_lora_chunks", 1156, 4},
    {"p_lora_slots", 1160, 4},  {"p_lora_sub", 1164, 4},    {"p_lora_ksteps", 1168, 4},
    {"p_lora_wk", 1172, 4},     {"p_lora_deschi", 1176, 4},
    {"p_sk_ws", 1184, 8}, {"p_sk_dp_tiles", 1192, 4}, {"p_sk_q", 1196, 4}, {"p_sk_r", 1200, 4}, {"p_sk_epoch", 1204, 4},
};

/* The sm_90a families raw_launch packs, by their ABI.md key. */
static const struct {
    const char *key;
    int fused;
} abi_families[] = {
    {"sm90a_dense_c1", 0},
    {"sm90a_dense_c2", 0},
    {"sm90a_fused_c1", 1},
    {"sm90a_fused_c2", 1},
};

/* One launch's parameters: the packed buffer, and a pointer array into it. */
typedef struct param_block {
    unsigned char bytes[1280];
    size_t size;
    int count;
    const abi_param *tab;
    void *ptrs[P_FUSED_COUNT + P_SK_COUNT];
} param_block;
_Static_assert(sizeof ((param_block *)0)->bytes >= 1204 + 4, "the fused parameter area fits the buffer");

static void param_block_init(param_block *b, int fused)
{
    memset(b, 0, sizeof *b);
    b->tab = fused ? abi_fused : abi_dense;
    b->count = fused ? P_FUSED_COUNT + P_SK_COUNT : P_DENSE_COUNT + P_SK_COUNT;
    b->size = b->tab[b->count - 1].offset + b->tab[b->count - 1].bytes;
    for (int i = 0; i < b->count; i++)
        b->ptrs[i] = b->bytes + b->tab[i].offset;
}

static void param_put(param_block *b, int i, const void *value, size_t bytes)
{
    if (bytes != b->tab[i].bytes) {
        fprintf(stderr, "raw_launch: internal error: %s takes %zu bytes, got %zu\n", b->tab[i].name,
                b->tab[i].bytes, bytes);
        abort();
    }
    memcpy(b->bytes + b->tab[i].offset, value, bytes);
}

static void param_u32(param_block *b, int i, uint32_t v) { param_put(b, i, &v, sizeof v); }

static int print_params(const char *key)
{
    for (size_t f = 0; f < sizeof abi_families / sizeof abi_families[0]; f++) {
        if (strcmp(abi_families[f].key, key))
            continue;
        param_block b;
        param_block_init(&b, abi_families[f].fused);
        for (int i = 0; i < b.count; i++)
            printf("%s %zu %zu\n", b.tab[i].name, b.tab[i].offset, b.tab[i].bytes);
        printf("total %zu\n", b.size);
        return EXIT_PASS;
    }
    fprintf(stderr, "raw_launch: --print-params %s: no such family (sm90a_dense_c1, sm90a_dense_c2, "
                    "sm90a_fused_c1, sm90a_fused_c2)\n", key);
    return EXIT_USAGE;
}

/* ---- options ------------------------------------------------------------------------ */

typedef struct opts {
    fp4lr_problem p;
    int cluster, device, require_gpu;
    fp4lr_wprep w_prep;
    uint64_t seed;
    const char *kernel_dir;
} opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: raw_launch [options]\n"
            "Launches an fp4lr kernel with the CUDA driver API alone (ptx/ABI.md), validates it against the\n"
            "double reference and compares it bitwise with the library's fp4lr_gemm.\n\n"
            "  --mnk MxNxK[:r]     problem (default 300x520x512:32)\n"
            "  --format F          nvfp4 (default) or mxfp4\n"
            "  --no-affine         no wc, no beta (with r = 0: the dense family)\n"
            "  --dense             r = 0, no wc, no beta: the dense family\n"
            "  --cluster C         1 (default) or 2 (a CTA pair: the _c2 kernels, dense and fused)\n"
            "  --w-prep W          auto (default: as the library plans, but on where it would convert\n"
            "                      W in the kernel), on or off: the W-prepared _w kernel and its wprep\n"
            "                      launch (ABI.md §4.1), or the transform kernel\n"
            "  --seed S            input seed (default 1)\n"
            "  --device N          device ordinal (default 0)\n"
            "  --kernel-dir DIR    kernel directory (default build/ptx; $FP4LR_KERNEL_DIR overrides)\n"
            "  --require-gpu       exit 3 instead of 0 when no sm_90 GPU is there\n"
            "  --print-params KEY  print the packed layout of family KEY (sm90a_dense_c1, sm90a_dense_c2,\n"
            "                      sm90a_fused_c1, sm90a_fused_c2) as 'name offset bytes' lines, then\n"
            "                      'total BYTES'\n"
            "Exit status: 0 pass, 1 validation failed or outputs differ, 2 bad arguments, 3 other error.\n");
}

static int bad_arg(const char *flag, const char *why)
{
    fprintf(stderr, "raw_launch: %s: %s (see --help)\n", flag, why);
    return EXIT_USAGE;
}

static int parse_ll(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* "MxNxK" or "MxNxK:r", decimal digits only, nothing after. */
static int parse_mnk(const char *s, fp4lr_problem *p)
{
    long long v[4] = {0, 0, 0, 0};
    const char *t = s;
    for (int i = 0; i < 4 && (i < 3 || *t == ':'); i++) {
        if (i > 0)
            t++; /* the 'x' or ':' */
        char *end;
        if (*t < '0' || *t > '9')
            return -1;
        errno = 0;
        v[i] = strtoll(t, &end, 10);
        if (errno)
            return -1;
        t = end;
        if (i < 2 && *t != 'x')
            return -1;
    }
    if (*t)
        return -1;
    p->M = v[0], p->N = v[1], p->K = v[2], p->r = v[3];
    return 0;
}

/* Fills *o; returns -1 to go on, or an exit status. */
static int parse(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->p = (fp4lr_problem){.M = 300, .N = 520, .K = 512, .r = 32, .format = FP4LR_NVFP4,
                           .out = FP4LR_OUT_BF16, .has_wc = 1, .has_beta = 1};
    o->cluster = 1;
    o->seed = 1;
    int dense = 0, no_affine = 0, mnk_rank = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long x;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return EXIT_PASS;
        } else if (!strcmp(a, "--require-gpu")) {
            o->require_gpu = 1;
        } else if (!strcmp(a, "--no-affine")) {
            no_affine = 1;
        } else if (!strcmp(a, "--dense")) {
            dense = 1;
        } else if (!v || !*v || !strncmp(v, "--", 2)) {
            return bad_arg(a, v ? "an unknown flag, or a missing value (the next argument is empty or an option)"
                                : "unknown flag or missing value");
        } else if (!strcmp(a, "--print-params")) {
            return print_params(v);
        } else if (!strcmp(a, "--mnk")) {
            if (parse_mnk(v, &o->p)) {
                fprintf(stderr, "raw_launch: --mnk %s: expected MxNxK or MxNxK:r of non-negative decimal "
                                "integers, each < 2^63 (see --help)\n", v);
                return EXIT_USAGE;
            }
            mnk_rank = strchr(v, ':') != NULL;
            i++;
        } else if (!strcmp(a, "--format")) {
            if (!strcmp(v, "nvfp4")) o->p.format = FP4LR_NVFP4;
            else if (!strcmp(v, "mxfp4")) o->p.format = FP4LR_MXFP4;
            else return bad_arg(a, "nvfp4 or mxfp4");
            i++;
        } else if (!strcmp(a, "--cluster")) {
            if (parse_ll(v, 1, 2, &x)) return bad_arg(a, "1 or 2");
            o->cluster = (int)x, i++;
        } else if (!strcmp(a, "--w-prep")) {
            const int w = fp4lr_wprep_parse(v);
            if (w < 0 || w == FP4LR_WPREP_INLINE)
                return bad_arg(a, "auto, on or off (raw_launch does not pack the _x kernels of inline)");
            o->w_prep = (fp4lr_wprep)w, i++;
        } else if (!strcmp(a, "--seed")) {
            if (parse_ll(v, 0, INT64_MAX, &x)) return bad_arg(a, "an integer >= 0");
            o->seed = (uint64_t)x, i++;
        } else if (!strcmp(a, "--device")) {
            if (parse_ll(v, 0, 1024, &x)) return bad_arg(a, "an ordinal >= 0");
            o->device = (int)x, i++;
        } else if (!strcmp(a, "--kernel-dir")) {
            o->kernel_dir = v, i++;
        } else {
            return bad_arg(a, "unknown flag");
        }
    }
    if (dense && mnk_rank && o->p.r)
        return bad_arg("--dense", "excludes a rank in --mnk (the dense family has r = 0)");
    if (dense)
        o->p.r = 0;
    o->p.has_wc = o->p.has_beta = !(dense || no_affine);
    o->p.ldY = fp4lr_ldY_padded(o->p.N, o->p.out); /* rows of Y padded to 16 bytes (ABI.md §6) */
    fp4lr_problem_resolve(&o->p);
    /* ABI.md §6: the kernels check nothing, so a runtime validates first (no GPU needed) */
    fp4lr_status st = fp4lr_problem_validate(&o->p);
    if (st.code) {
        fprintf(stderr, "raw_launch: problem: %s [%s] (see --help)\n", st.msg, st.rule);
        return EXIT_USAGE;
    }
    return -1;
}

/* ---- step 1: the problem on the host, quantized with layouts/ ----------------------- */

typedef struct host_problem {
    fp4lr_args a; /* host pointers, for the reference */
    uint8_t *A, *SFA, *W, *SFW;
    uint16_t *L, *U;
    float *wc, *beta;
    uint16_t *Y, *Y_packed, *Y_lib;
    size_t bytes_A, bytes_W, bytes_SFA, bytes_SFW, bytes_L, bytes_U, bytes_vec, bytes_Y;
} host_problem;

static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1). */
static float uniform(uint64_t *s) { return (float)((double)(next_u64(s) >> 40) * 0x1p-23 - 1.0); }

/* rows x K values whose 16-element blocks span 2^-4 .. 2^4, quantized into q and sf;
 * *g gets the NVFP4 global scale (1 for MXFP4). */
static fp4lr_status quantize_random(const fp4lr_problem *p, int64_t rows, uint64_t *seed, uint8_t *q,
                                    uint8_t *sf, float *g)
{
    float *x = malloc(sizeof *x * (size_t)(rows * p->K));
    if (!x)
        return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate %lld x %lld floats", (long long)rows,
                          (long long)p->K);
    for (int64_t i = 0; i < rows * p->K; i += 16) {
        int e = (int)(next_u64(seed) % 9) - 4;
        for (int j = 0; j < 16; j++)
            x[i + j] = ldexpf(uniform(seed), e);
    }
    fp4lr_status st;
    if (p->format == FP4LR_NVFP4) {
        *g = fp4lr_nvfp4_global_scale(x, rows, p->K, p->K);
        st = fp4lr_quantize_nvfp4(x, rows, p->K, p->K, *g, q, sf);
    } else {
        *g = 1.0f;
        st = fp4lr_quantize_mxfp4(x, rows, p->K, p->K, FP4LR_MX_FLOOR, q, sf);
    }
    free(x);
    return st;
}

static void host_free(host_problem *h)
{
    void *bufs[] = {h->A, h->SFA, h->W, h->SFW, h->L, h->U, h->wc, h->beta, h->Y, h->Y_packed, h->Y_lib};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    memset(h, 0, sizeof *h);
}

/* Buffer sizes of ABI.md §4, every buffer allocated zeroed, then filled. */
static fp4lr_status host_make(const fp4lr_problem *p, uint64_t seed, host_problem *h)
{
    memset(h, 0, sizeof *h);
    const int64_t kv = p->K / fp4lr_format_block(p->format);
    h->bytes_A = (size_t)(p->M * p->K / 2);
    h->bytes_W = (size_t)(p->N * p->K / 2);
    h->bytes_SFA = fp4lr_sf_bytes(p->M, kv);
    h->bytes_SFW = fp4lr_sf_bytes(p->N, kv);
    h->bytes_L = (size_t)(p->M * p->ldL) * 2;
    h->bytes_U = (size_t)(p->N * p->ldU) * 2;
    h->bytes_vec = (size_t)p->N * 4;
    h->bytes_Y = (size_t)(p->M * p->ldY) * 2;
    h->A = calloc(1, h->bytes_A), h->W = calloc(1, h->bytes_W);
    h->SFA = calloc(1, h->bytes_SFA), h->SFW = calloc(1, h->bytes_SFW);
    h->L = calloc(1, h->bytes_L + 2), h->U = calloc(1, h->bytes_U + 2); /* +2: never 0 bytes (r = 0) */
    h->wc = calloc(1, h->bytes_vec), h->beta = calloc(1, h->bytes_vec);
    h->Y = calloc(1, h->bytes_Y), h->Y_packed = calloc(1, h->bytes_Y), h->Y_lib = calloc(1, h->bytes_Y);
    if (!h->A || !h->W || !h->SFA || !h->SFW || !h->L || !h->U || !h->wc || !h->beta || !h->Y ||
        !h->Y_packed || !h->Y_lib)
        return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the host operands");

    float gA, gW;
    FP4LR_TRY(quantize_random(p, p->M, &seed, h->A, h->SFA, &gA));
    FP4LR_TRY(quantize_random(p, p->N, &seed, h->W, h->SFW, &gW));
    for (int64_t i = 0; i < p->M * p->ldL; i++)
        h->L[i] = fp4lr_bf16_from_float(uniform(&seed));
    for (int64_t i = 0; i < p->N * p->ldU; i++)
        h->U[i] = fp4lr_bf16_from_float(0.25f * uniform(&seed));
    for (int64_t n = 0; n < p->N; n++) {
        float w = 0.25f + 0.875f * (uniform(&seed) + 1.0f); /* [0.25, 2) */
        h->wc[n] = n % 16 == 5 ? 0.0f : n % 2 ? -w : w;
        h->beta[n] = uniform(&seed);
    }
    h->a = (fp4lr_args){.A = h->A, .SFA = h->SFA, .W = h->W, .SFW = h->SFW,
                        .L = p->r ? h->L : NULL, .U = p->r ? h->U : NULL,
                        .wc = p->has_wc ? h->wc : NULL, .beta = p->has_beta ? h->beta : NULL,
                        .alpha = gA * gW, .Y = h->Y};
    return fp4lr_ok();
}

/* ---- the device, through the driver table alone -------------------------------------- */

typedef struct gpu {
    fp4lr_driver *drv;
    PFN_cuModuleLoad_v2000 cuModuleLoad; /* not in the table: dlsym'ed from the same library */
    CUdevice dev;
    CUcontext ctx;
    int ctx_retained;
    int cc_major, cc_minor, sm_count, smem_optin;
    char name[256];
    CUmodule module, prep_module;
    CUfunction fn, prep_fn;
    CUstream stream;
} gpu;

typedef struct dev_problem {
    CUdeviceptr A, SFA, W, SFW, L, U, wc, beta, Y, Y_lib;
    CUdeviceptr Wp; /* W-prepared plans: the prepared W (N*K*2 bytes) */
} dev_problem;

static int cu_failed(const gpu *g, CUresult r, const char *expr, int line)
{
    const char *name = NULL;
    if (g->drv->cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
        name = "CUDA_ERROR_UNNAMED";
    fprintf(stderr, "raw_launch: %s failed: %s (raw_launch.c:%d)\n", expr, name, line);
    return EXIT_ERROR;
}

/* Evaluates a driver call; on failure prints it and returns EXIT_ERROR. */
#define CU(call)                                                       \
    do {                                                               \
        CUresult cu_res_ = (call);                                     \
        if (cu_res_ != CUDA_SUCCESS)                                   \
            return cu_failed(g, cu_res_, #call, __LINE__);             \
    } while (0)

typedef enum gpu_state { GPU_READY, GPU_NONE, GPU_BROKEN } gpu_state;

/* Opens the driver and device `ordinal`, retains its primary context, makes it current
 * and creates a stream.  GPU_NONE (with *why) when there is no usable sm_90 GPU. */
static gpu_state gpu_open(gpu *g, int ordinal, char *why, size_t cap)
{
    memset(g, 0, sizeof *g);
    fp4lr_status st = fp4lr_driver_open(&g->drv);
    if (st.code) {
        snprintf(why, cap, "%s", st.msg);
        return GPU_NONE;
    }
    int count = 0;
    if (g->drv->cuInit(0) != CUDA_SUCCESS || g->drv->cuDeviceGetCount(&count) != CUDA_SUCCESS ||
        count <= ordinal) {
        snprintf(why, cap, "no CUDA device %d (the driver reports %d)", ordinal, count);
        return GPU_NONE;
    }
    if (g->drv->cuDeviceGet(&g->dev, ordinal) != CUDA_SUCCESS)
        return GPU_BROKEN;
    const struct {
        int *out;
        CUdevice_attribute attr;
    } attrs[] = {
        {&g->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
        {&g->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
        {&g->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
        {&g->smem_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if (g->drv->cuDeviceGetAttribute(attrs[i].out, attrs[i].attr, g->dev) != CUDA_SUCCESS)
            return GPU_BROKEN;
    g->drv->cuDeviceGetName(g->name, sizeof g->name, g->dev);
    if (g->cc_major != 9 || g->cc_minor != 0) {
        snprintf(why, cap, "device %d (%s) is cc %d.%d; raw_launch runs the sm_90a kernels (cc 9.0)", ordinal,
                 g->name, g->cc_major, g->cc_minor);
        return GPU_NONE;
    }
    g->cuModuleLoad = (PFN_cuModuleLoad_v2000)dlsym(g->drv->lib, "cuModuleLoad");
    if (!g->cuModuleLoad) {
        fprintf(stderr, "raw_launch: %s has no cuModuleLoad\n", g->drv->path);
        return GPU_BROKEN;
    }
    if (g->drv->cuDevicePrimaryCtxRetain(&g->ctx, g->dev) != CUDA_SUCCESS)
        return GPU_BROKEN;
    g->ctx_retained = 1;
    if (g->drv->cuCtxSetCurrent(g->ctx) != CUDA_SUCCESS || g->drv->cuStreamCreate(&g->stream, 0) != CUDA_SUCCESS)
        return GPU_BROKEN;
    return GPU_READY;
}

static void gpu_close(gpu *g, dev_problem *d)
{
    if (!g->drv)
        return;
    if (d) {
        CUdeviceptr bufs[] = {d->A, d->SFA, d->W, d->SFW, d->L, d->U, d->wc, d->beta, d->Y, d->Y_lib, d->Wp};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
            if (bufs[i])
                g->drv->cuMemFree(bufs[i]);
    }
    if (g->stream)
        g->drv->cuStreamDestroy(g->stream);
    if (g->module)
        g->drv->cuModuleUnload(g->module);
    if (g->prep_module)
        g->drv->cuModuleUnload(g->prep_module);
    if (g->ctx_retained)
        g->drv->cuDevicePrimaryCtxRelease(g->dev);
    fp4lr_driver_close(g->drv);
    memset(g, 0, sizeof *g);
}

static int upload(gpu *g, CUdeviceptr *dst, const void *src, size_t bytes)
{
    CU(g->drv->cuMemAlloc(dst, bytes));
    if (src)
        CU(g->drv->cuMemcpyHtoD(*dst, src, bytes));
    return 0;
}

static int dev_make(gpu *g, const fp4lr_problem *p, const host_problem *h, dev_problem *d)
{
    memset(d, 0, sizeof *d);
    int rc = upload(g, &d->A, h->A, h->bytes_A);
    if (!rc) rc = upload(g, &d->SFA, h->SFA, h->bytes_SFA);
    if (!rc) rc = upload(g, &d->W, h->W, h->bytes_W);
    if (!rc) rc = upload(g, &d->SFW, h->SFW, h->bytes_SFW);
    if (!rc && p->r) rc = upload(g, &d->L, h->L, h->bytes_L);
    if (!rc && p->r) rc = upload(g, &d->U, h->U, h->bytes_U);
    if (!rc && p->has_wc) rc = upload(g, &d->wc, h->wc, h->bytes_vec);
    if (!rc && p->has_beta) rc = upload(g, &d->beta, h->beta, h->bytes_vec);
    if (!rc) rc = upload(g, &d->Y, NULL, h->bytes_Y);
    if (!rc) rc = upload(g, &d->Y_lib, NULL, h->bytes_Y);
    return rc;
}

/* ---- steps 2-3: plan, module, function ------------------------------------------------ */

static const char *kernel_dir(const char *given)
{
    const char *env = getenv("FP4LR_KERNEL_DIR");
    return env && *env ? env : given && *given ? given : "build/ptx";
}

static int load_kernel(gpu *g, const fp4lr_plan *plan, const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/sm90a/%s.cubin", dir, plan->entry);
    CUresult r = g->cuModuleLoad(&g->module, path);
    if (r == CUDA_ERROR_FILE_NOT_FOUND) {
        fprintf(stderr, "raw_launch: no kernel %s: the plan names an instantiation that is not built "
                        "(ABI.md §1 lists those that are), or the kernel directory is wrong\n", path);
        return EXIT_ERROR;
    }
    CU(r);
    CU(g->drv->cuModuleGetFunction(&g->fn, g->module, plan->entry));
    CU(g->drv->cuFuncSetAttribute(g->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)plan->smem_bytes));
    printf("kernel: %s (cuModuleLoad)\n", path);
    return 0;
}

/* ---- W-prepared plans (ABI.md §4.1): the preparation kernel and its workspace ---------- */

/* Loads fp4lr_sm90a_<format>_wprep, allocates Wp (N*K*2 bytes) and converts W into it on the
 * stream: 256 threads a block, one per 64-element chunk, no dynamic shared memory.  W does not
 * change here, so one preparation serves both raw launches. */
static int prepare_w(gpu *g, const fp4lr_plan *plan, const char *dir, dev_problem *d)
{
    const fp4lr_problem *p = &plan->problem;
    const char *entry = p->format == FP4LR_MXFP4 ? "fp4lr_sm90a_mxfp4_wprep" : "fp4lr_sm90a_nvfp4_wprep";
    char path[1024];
    snprintf(path, sizeof path, "%s/sm90a/%s.cubin", dir, entry);
    CUresult r = g->cuModuleLoad(&g->prep_module, path);
    if (r == CUDA_ERROR_FILE_NOT_FOUND) {
        fprintf(stderr, "raw_launch: no kernel %s: the W-prepared plan needs it (ABI.md §4.1)\n", path);
        return EXIT_ERROR;
    }
    CU(r);
    CU(g->drv->cuModuleGetFunction(&g->prep_fn, g->prep_module, entry));
    const uint64_t chunks = (uint64_t)p->N * (uint64_t)(p->K / 64);
    fp4lr_status fits = fp4lr_sm90a_wprep_check(p); /* ABI.md §4.1: N*K/64 below 2^30 */
    if (fits.code) {
        fprintf(stderr, "raw_launch: %s [%s]\n", fits.msg, fits.rule);
        return EXIT_ERROR;
    }
    CU(g->drv->cuMemAlloc(&d->Wp, (size_t)p->N * (size_t)p->K * 2));
    uint32_t n = (uint32_t)p->N, k = (uint32_t)p->K;
    void *args[] = {&d->W, &d->SFW, &d->Wp, &n, &k};
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = (unsigned)((chunks + 255) / 256), cfg.gridDimY = 1, cfg.gridDimZ = 1;
    cfg.blockDimX = 256, cfg.blockDimY = 1, cfg.blockDimZ = 1;
    cfg.hStream = g->stream;
    CU(g->drv->cuLaunchKernelEx(&cfg, g->prep_fn, args, NULL));
    printf("prepared W: %s (cuModuleLoad), %llu chunks into %zu B\n", path, (unsigned long long)chunks,
           (size_t)p->N * (size_t)p->K * 2);
    return 0;
}

/* ---- step 4: tensor maps and parameters (ABI.md §4, §5) ------------------------------ */

static int encode(gpu *g, param_block *b, int slot, CUtensorMapDataType type, cuuint32_t rank, CUdeviceptr addr,
                  const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box, CUtensorMapSwizzle swizzle,
                  CUtensorMapL2promotion promotion)
{
    static const cuuint32_t unit[3] = {1, 1, 1};
    CUtensorMap map;
    CU(g->drv->cuTensorMapEncodeTiled(&map, type, rank, (void *)(uintptr_t)addr, dims, strides, box, unit,
                                      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, promotion,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    param_put(b, slot, &map, sizeof map);
    return 0;
}

/* rc (ABI.md §5): the largest power of two <= min(lora_chunk, 64), at least 16. */
static uint32_t lora_chunk(const fp4lr_plan *plan)
{
    uint32_t rc = 16;
    while (rc * 2 <= (uint32_t)plan->budget.lora_chunk && rc * 2 <= 64)
        rc *= 2;
    return rc;
}

static int build_params(gpu *g, const fp4lr_plan *plan, const fp4lr_args *host, const dev_problem *d,
                        param_block *b)
{
    const fp4lr_problem *p = &plan->problem;
    const int fused = plan->family == FP4LR_FAMILY_FUSED;
    param_block_init(b, fused);
    const uint64_t M = (uint64_t)p->M, N = (uint64_t)p->N, K = (uint64_t)p->K;
    const uint64_t block = (uint64_t)fp4lr_format_block(p->format);
    const uint64_t KA = (K / block + 3) / 4, KS = 128 / block / 4;

    const cuuint64_t a_dims[2] = {K / 2, M}, w_dims[2] = {K / 2, N}, fp4_strides[1] = {K / 2};
    const cuuint32_t a_box[2] = {64, 128}, w_box[2] = {64, 256};
    int rc = encode(g, b, P_TMA, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, d->A, a_dims, fp4_strides, a_box,
                    CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    const cuuint64_t wp_dims[2] = {K, N}, wp_strides[1] = {K * 2};
    const cuuint32_t wp_box[2] = {64, 256};
    if (!rc && plan->w_prep) /* ABI.md §4.1: the prepared W, 2-byte floats, 128-byte swizzle */
        rc = encode(g, b, P_TMW, p->format == FP4LR_NVFP4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                           : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                    2, d->Wp, wp_dims, wp_strides, wp_box, CU_TENSOR_MAP_SWIZZLE_128B,
                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    else if (!rc)
        rc = encode(g, b, P_TMW, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, d->W, w_dims, fp4_strides, w_box,
                    CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);

    const cuuint64_t sfa_dims[3] = {256, 2 * KA, (M + 127) / 128}, sfw_dims[3] = {256, 2 * KA, (N + 127) / 128};
    const cuuint64_t sf_strides[2] = {256, 512 * KA};
    const cuuint32_t sfa_box[3] = {256, (cuuint32_t)(2 * KS), 1}, sfw_box[3] = {256, (cuuint32_t)(2 * KS), 2};
    if (!rc)
        rc = encode(g, b, P_TMSFA, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, d->SFA, sfa_dims, sf_strides, sfa_box,
                    CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    if (!rc)
        rc = encode(g, b, P_TMSFW, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, d->SFW, sfw_dims, sf_strides, sfw_box,
                    CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);

    const cuuint64_t y_dims[2] = {N, M}, y_strides[1] = {(uint64_t)p->ldY * 2};
    const cuuint32_t y_box[2] = {64, 64};
    if (!rc)
        rc = encode(g, b, P_TMY, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, d->Y, y_dims, y_strides, y_box,
                    CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE);
    if (rc)
        return rc;

    const int cluster_rows = 128 * plan->cluster;
    param_u32(b, P_NUM_K_STAGES, (uint32_t)((K + 127) / 128));
    param_put(b, P_ALPHA, &host->alpha, sizeof host->alpha);
    const uint32_t tiles_m = (uint32_t)((M + cluster_rows - 1) / cluster_rows);
    param_u32(b, P_TILES_M, tiles_m);
    param_u32(b, P_TILES_N, (uint32_t)((N + 255) / 256));
    param_u32(b, P_GROUP, plan->w_prep ? tiles_m : 8); /* §4.1: one raster group for the _w kernels */
    if (!fused)
        return 0;

    /* the fused family: low-rank maps (left zero when r = 0), affine vectors, ring geometry */
    const uint32_t rcw = lora_chunk(plan);
    if (p->r) {
        const CUtensorMapSwizzle sw = rcw == 16 ? CU_TENSOR_MAP_SWIZZLE_32B
                                      : rcw == 32 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_128B;
        const cuuint64_t l_dims[2] = {(uint64_t)p->r, M}, u_dims[2] = {(uint64_t)p->r, N};
        const cuuint64_t l_strides[1] = {(uint64_t)p->ldL * 2}, u_strides[1] = {(uint64_t)p->ldU * 2};
        const cuuint32_t l_box[2] = {rcw, 128}, u_box[2] = {rcw, 256};
        rc = encode(g, b, P_TML, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, d->L, l_dims, l_strides, l_box, sw,
                    CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
        if (!rc)
            rc = encode(g, b, P_TMU, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, d->U, u_dims, u_strides, u_box, sw,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
        if (rc)
            return rc;
    }
    const uint64_t wc = p->has_wc ? (uint64_t)d->wc : 0, beta = p->has_beta ? (uint64_t)d->beta : 0;
    param_put(b, P_WC, &wc, sizeof wc);
    param_put(b, P_BETA, &beta, sizeof beta);
    param_u32(b, P_N, (uint32_t)N);
    /* ABI.md §5: the budget's ring (stages_lora slots of lora_chunk ranks) in slots of rc ranks */
    int slots = plan->budget.stages_lora * plan->budget.lora_chunk / (int)rcw;
    slots = slots < 1 ? 1 : slots > 4 ? 4 : slots;
    param_u32(b, P_LORA_CHUNKS, p->r ? (uint32_t)((p->r + rcw - 1) / rcw) : 0);
    param_u32(b, P_LORA_SLOTS, p->r ? (uint32_t)slots : 1);
    param_u32(b, P_LORA_SUB, 1);
    param_u32(b, P_LORA_KSTEPS, rcw / 16);
    param_u32(b, P_LORA_WK, rcw);
    const uint32_t mode = rcw == 64 ? 1 : rcw == 32 ? 2 : 3;
    param_u32(b, P_LORA_DESCHI, (mode << 30) | (16 * rcw >> 4));
    return 0;
}

/* ---- step 5: the persistent grid and the launches (ABI.md §2) ------------------------ */

static void launch_config(const gpu *g, const fp4lr_plan *plan, unsigned grid, CUlaunchConfig *cfg,
                          CUlaunchAttribute *attr)
{
    memset(cfg, 0, sizeof *cfg);
    memset(attr, 0, sizeof *attr);
    cfg->gridDimX = grid, cfg->gridDimY = 1, cfg->gridDimZ = 1;
    cfg->blockDimX = (unsigned)plan->block_threads, cfg->blockDimY = 1, cfg->blockDimZ = 1;
    cfg->sharedMemBytes = (unsigned)plan->smem_bytes;
    cfg->hStream = g->stream;
    if (plan->cluster > 1) {
        attr->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr->value.clusterDim.x = (unsigned)plan->cluster;
        attr->value.clusterDim.y = 1;
        attr->value.clusterDim.z = 1;
        cfg->attrs = attr;
        cfg->numAttrs = 1;
    }
}

static int persistent_grid(gpu *g, const fp4lr_plan *plan, unsigned *grid)
{
    const int64_t C = plan->cluster;
    const int64_t tiles = ((plan->problem.M + 128 * C - 1) / (128 * C)) * ((plan->problem.N + 255) / 256);
    int64_t occupancy = 0;
    if (C == 1) {
        int per_sm = 0;
        CU(g->drv->cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, g->fn, plan->block_threads,
                                                               (size_t)plan->smem_bytes));
        occupancy = (int64_t)per_sm * g->sm_count;
    } else {
        CUlaunchConfig cfg;
        CUlaunchAttribute attr;
        int clusters = 0;
        launch_config(g, plan, (unsigned)C, &cfg, &attr);
        CU(g->drv->cuOccupancyMaxActiveClusters(&clusters, g->fn, &cfg));
        occupancy = (int64_t)clusters * C;
    }
    int64_t n = tiles * C < occupancy ? tiles * C : occupancy;
    n -= n % C;
    *grid = (unsigned)(n < C ? C : n);
    return 0;
}

/* Poisons Y (NaN), launches with the parameters by pointer array or as one packed buffer,
 * waits, downloads Y. */
static int launch(gpu *g, const fp4lr_plan *plan, unsigned grid, param_block *b, CUdeviceptr y, void *host_y,
                  size_t bytes, int packed)
{
    CU(g->drv->cuMemsetD16(y, 0x7FFF, bytes / 2));
    CUlaunchConfig cfg;
    CUlaunchAttribute attr;
    launch_config(g, plan, grid, &cfg, &attr);
    size_t size = b->size;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, b->bytes, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    if (packed)
        CU(g->drv->cuLaunchKernelEx(&cfg, g->fn, NULL, extra));
    else
        CU(g->drv->cuLaunchKernelEx(&cfg, g->fn, b->ptrs, NULL));
    CU(g->drv->cuStreamSynchronize(g->stream));
    CU(g->drv->cuMemcpyDtoH(host_y, y, bytes));
    return 0;
}

/* ---- step 6: the library on the same device buffers ---------------------------------- */

static int library_run(const opts *o, const fp4lr_plan *raw_plan, const fp4lr_args *host, const dev_problem *d,
                       gpu *g, void *host_y, size_t bytes)
{
    fp4lr_ctx *ctx = NULL;
    fp4lr_runtime rt;
    fp4lr_plan plan;
    memset(&rt, 0, sizeof rt);
    fp4lr_status st = fp4lr_ctx_create(o->device, &ctx);
    if (st.code == FP4LR_OK)
        st = fp4lr_runtime_init(&rt, ctx, kernel_dir(o->kernel_dir));
    /* whole tiles, as the raw launches: a split (stream-K) walk adds partial sums in another
     * order, so it agrees to rounding, not bit for bit (ABI.md §2) */
    const fp4lr_plan_opts popts = {.cluster = o->cluster, .w_prep = o->w_prep, .schedule = FP4LR_SCHEDULE_DP};
    if (st.code == FP4LR_OK)
        st = fp4lr_runtime_plan(&rt, &o->p, &popts, &plan);
    if (st.code == FP4LR_OK && (strcmp(plan.entry, raw_plan->entry) || plan.smem_bytes != raw_plan->smem_bytes))
        st = fp4lr_fail(FP4LR_E_INVALID, "PLAN", "the library plans %s with %lld B, raw_launch %s with %lld B",
                        plan.entry, (long long)plan.smem_bytes, raw_plan->entry, (long long)raw_plan->smem_bytes);
    const fp4lr_args dev = {.A = (const uint8_t *)(uintptr_t)d->A, .SFA = (const uint8_t *)(uintptr_t)d->SFA,
                            .W = (const uint8_t *)(uintptr_t)d->W, .SFW = (const uint8_t *)(uintptr_t)d->SFW,
                            .L = (const uint16_t *)(uintptr_t)d->L, .U = (const uint16_t *)(uintptr_t)d->U,
                            .wc = (const float *)(uintptr_t)d->wc, .beta = (const float *)(uintptr_t)d->beta,
                            .alpha = host->alpha, .Y = (void *)(uintptr_t)d->Y_lib};
    if (st.code == FP4LR_OK && g->drv->cuMemsetD16(d->Y_lib, 0x7FFF, bytes / 2) != CUDA_SUCCESS)
        st = fp4lr_fail(FP4LR_E_DRIVER, "cuMemsetD16", "cannot poison the library's output");
    if (st.code == FP4LR_OK)
        st = fp4lr_gemm(&rt, &plan, &dev, g->stream);
    if (st.code == FP4LR_OK && g->drv->cuStreamSynchronize(g->stream) != CUDA_SUCCESS)
        st = fp4lr_fail(FP4LR_E_DRIVER, "cuStreamSynchronize", "the library's launch failed");
    if (st.code == FP4LR_OK && g->drv->cuMemcpyDtoH(host_y, d->Y_lib, bytes) != CUDA_SUCCESS)
        st = fp4lr_fail(FP4LR_E_DRIVER, "cuMemcpyDtoH", "cannot download the library's output");
    if (ctx) {
        fp4lr_runtime_release(&rt);
        fp4lr_ctx_destroy(ctx);
        g->drv->cuCtxSetCurrent(g->ctx); /* keep this thread on the primary context */
    }
    if (st.code) {
        fprintf(stderr, "raw_launch: fp4lr_gemm: %s [%s %s]\n", st.msg, fp4lr_code_name(st.code), st.rule);
        return EXIT_ERROR;
    }
    return 0;
}

/* Reports whether two outputs are bitwise identical, naming the first difference. */
static int same_bits(const char *what, const uint16_t *a, const uint16_t *b, const fp4lr_problem *p)
{
    for (int64_t m = 0; m < p->M; m++)
        for (int64_t n = 0; n < p->N; n++) {
            size_t i = (size_t)(m * p->ldY + n);
            if (a[i] != b[i]) {
                printf("%s: DIFFERS at (%lld, %lld): 0x%04x against 0x%04x\n", what, (long long)m, (long long)n,
                       a[i], b[i]);
                return 0;
            }
        }
    printf("%s: bitwise identical (%lld x %lld outputs)\n", what, (long long)p->M, (long long)p->N);
    return 1;
}

/* ---- the whole run --------------------------------------------------------------------- */

static int validate(const fp4lr_problem *p, const host_problem *h)
{
    double *ref = malloc(sizeof *ref * (size_t)(p->M * p->N)), *mag = malloc(sizeof *mag * (size_t)(p->M * p->N));
    fp4lr_status st = ref && mag ? fp4lr_reference(p, &h->a, NULL, p->M, 0, ref, mag)
                                 : fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the reference");
    fp4lr_compare_report rep;
    fp4lr_status cmp = st;
    if (st.code == FP4LR_OK) {
        cmp = fp4lr_compare(p, h->Y, NULL, p->M, ref, mag, &rep);
        if (cmp.code == FP4LR_OK || cmp.code == FP4LR_E_MISMATCH) {
            if (cmp.code)
                fp4lr_compare_print(stdout, &rep);
            printf("validate: %s (%lld x %lld outputs against the double reference, max err/mag %.3g, tol_acc %.3g)\n",
                   cmp.code ? "FAIL" : "PASS", (long long)p->M, (long long)p->N, rep.max_err_over_mag, rep.tol_acc);
        }
    }
    free(ref);
    free(mag);
    if (cmp.code != FP4LR_OK && cmp.code != FP4LR_E_MISMATCH) {
        fprintf(stderr, "raw_launch: reference: %s\n", cmp.msg);
        return EXIT_ERROR;
    }
    return cmp.code ? EXIT_MISMATCH : EXIT_PASS;
}

static int run(const opts *given, gpu *g, host_problem *h, dev_problem *d)
{
    opts eff = *given; /* the options as run: auto may be resolved to on below */
    const opts *o = &eff;
    const fp4lr_problem *p = &o->p;
    printf("device: %s (cc %d.%d, %d SMs, %d B shared memory per block), driver %d\n", g->name, g->cc_major,
           g->cc_minor, g->sm_count, g->smem_optin, g->drv->version);
    printf("problem: M=%lld N=%lld K=%lld r=%lld %s%s, seed %llu\n", (long long)p->M, (long long)p->N,
           (long long)p->K, (long long)p->r, fp4lr_format_name(p->format), p->has_wc ? ", wc and beta" : "",
           (unsigned long long)o->seed);

    fp4lr_status st = host_make(p, o->seed, h);
    if (st.code) {
        fprintf(stderr, "raw_launch: %s\n", st.msg);
        return EXIT_ERROR;
    }
    /* ABI.md §1: the entry and its shared memory come from the planner, for this device */
    fp4lr_plan plan;
    fp4lr_plan_opts popts = {.cluster = o->cluster, .smem_capacity = g->smem_optin, .w_prep = o->w_prep};
    st = fp4lr_plan_make(p, FP4LR_ARCH_SM90A, &popts, &plan);
    if (!st.code && plan.w_inline) { /* auto chose an _x kernel: not packed here (ABI.md §4.2) */
        printf("plan: auto plans %s (W converted in the kernel), which raw_launch does not pack: "
               "running --w-prep on\n", plan.entry);
        eff.w_prep = popts.w_prep = FP4LR_WPREP_ON;
        st = fp4lr_plan_make(p, FP4LR_ARCH_SM90A, &popts, &plan);
    }
    if (st.code) {
        /* the options ask a plan the planner refuses: a bad argument */
        fprintf(stderr, "raw_launch: plan: %s [%s]\n", st.msg, st.rule);
        return st.code == FP4LR_E_INVALID || st.code == FP4LR_E_INFEASIBLE || st.code == FP4LR_E_UNSUPPORTED
                   ? EXIT_USAGE
                   : EXIT_ERROR;
    }
    int rc = load_kernel(g, &plan, kernel_dir(o->kernel_dir));
    if (!rc)
        rc = dev_make(g, p, h, d);
    if (!rc && plan.w_prep)
        rc = prepare_w(g, &plan, kernel_dir(o->kernel_dir), d);
    param_block b;
    if (!rc)
        rc = build_params(g, &plan, &h->a, d, &b);
    unsigned grid = 0;
    if (!rc)
        rc = persistent_grid(g, &plan, &grid);
    if (rc)
        return rc;
    printf("launch: grid %u x %d threads, cluster %d, %lld B dynamic shared memory, %zu B of parameters\n", grid,
           plan.block_threads, plan.cluster, (long long)plan.smem_bytes, b.size);

    rc = launch(g, &plan, grid, &b, d->Y, h->Y, h->bytes_Y, 0);
    if (!rc)
        rc = launch(g, &plan, grid, &b, d->Y, h->Y_packed, h->bytes_Y, 1);
    if (!rc)
        rc = library_run(o, &plan, &h->a, d, g, h->Y_lib, h->bytes_Y);
    if (rc)
        return rc;
    int verdict = validate(p, h);
    if (verdict == EXIT_ERROR)
        return verdict;
    int same = same_bits("packed parameter buffer vs pointer array", h->Y_packed, h->Y, p);
    same &= same_bits("fp4lr_gemm vs raw launch", h->Y_lib, h->Y, p);
    if (!same)
        verdict = EXIT_MISMATCH;
    printf("raw_launch: %s\n", verdict == EXIT_PASS ? "PASS" : "FAIL");
    return verdict;
}

int main(int argc, char **argv)
{
    opts o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    gpu g;
    char why[FP4LR_STATUS_MSG_LEN + 256] = "";
    gpu_state have = gpu_open(&g, o.device, why, sizeof why);
    if (have == GPU_NONE) {
        printf("no GPU: %s\n", why);
        printf("raw_launch launches the sm_90a kernels; nothing was run.\n");
        gpu_close(&g, NULL);
        return o.require_gpu ? EXIT_ERROR : EXIT_PASS;
    }
    if (have == GPU_BROKEN) {
        fprintf(stderr, "raw_launch: cannot open device %d: a driver call failed\n", o.device);
        gpu_close(&g, NULL);
        return EXIT_ERROR;
    }
    host_problem h;
    dev_problem d;
    memset(&h, 0, sizeof h);
    memset(&d, 0, sizeof d);
    rc = run(&o, &g, &h, &d);
    gpu_close(&g, &d);
    host_free(&h);
    return rc;
}
