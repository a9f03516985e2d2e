/* The CUDA driver layer on the CPU: opening a missing driver, the FP4LR_CU
 * macro, the architecture map, tensor-map pre-validation, module paths and
 * logs, resource checks, buffer helpers and launch configuration.  Everything
 * that would reach the driver goes through a hand-filled table of fake entry
 * points, so these tests run on any machine. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devbuf.h"
#include "device.h"
#include "driver.h"
#include "launch.h"
#include "module.h"
#include "tensormap.h"

/* ---- assertions on statuses ------------------------------------------------ */

#define assert_status(s, want_code, want_rule)                                          \
    do {                                                                                \
        cr_assert_eq((s).code, (want_code), "code %s, expected %s: %s",                 \
                     fp4lr_code_name((s).code), fp4lr_code_name(want_code), (s).msg);   \
        cr_assert_str_eq((s).rule, (want_rule), "rule '%s', expected '%s': %s", (s).rule, \
                         (want_rule), (s).msg);                                         \
    } while (0)

#define assert_has(text, part) \
    cr_assert(strstr((text), (part)) != NULL, "'%s' lacks '%s'", (text), (part))

/* ---- the fake driver ----------------------------------------------------------
 * Each test runs in its own process, so the recorder below starts zeroed. */

static struct {
    int calls;                 /* every fake entry point counts here */
    CUresult result;           /* what the configurable fakes return */
    /* arguments seen */
    size_t count;
    unsigned int value;
    CUlaunchConfig cfg;
    CUlaunchAttribute attr;
    CUlaunchAttribute attr1; /* the second attribute of a launch that has two */
    int set_attr, set_value;
    cuuint32_t rank;
    cuuint64_t dims[5], strides[5];
    cuuint32_t box[5], est[5];
    unsigned num_options;
    int verbose;
    /* what the fakes report */
    int func_attr[16];
    int occupancy;
} fake;

static CUresult fake_error_name(CUresult r, const char **s)
{
    switch (r) {
    case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; return CUDA_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; return CUDA_SUCCESS;
    default: *s = NULL; return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUresult fake_error_string(CUresult r, const char **s)
{
    *s = r == CUDA_ERROR_INVALID_VALUE ? "fake: invalid argument" : "fake: some failure";
    return CUDA_SUCCESS;
}

static CUresult fake_mem_alloc(CUdeviceptr *p, size_t n)
{
    ++fake.calls;
    fake.count = n;
    *p = fake.result == CUDA_SUCCESS ? (CUdeviceptr)0x7000000 : 0;
    return fake.result;
}
static CUresult fake_memset16(CUdeviceptr p, unsigned short v, size_t n)
{
    ++fake.calls;
    fake.value = v;
    fake.count = n;
    return fake.result;
}
static CUresult fake_memset32(CUdeviceptr p, unsigned int v, size_t n)
{
    ++fake.calls;
    fake.value = v;
    fake.count = n;
    return fake.result;
}
static CUresult fake_memset8(CUdeviceptr p, unsigned char v, size_t n)
{
    ++fake.calls;
    fake.value = v;
    fake.count = n;
    return fake.result;
}
static CUresult fake_htod(CUdeviceptr d, const void *s, size_t n)
{
    ++fake.calls;
    fake.count = n;
    return fake.result;
}
static CUresult fake_dtoh(void *d, CUdeviceptr s, size_t n)
{
    ++fake.calls;
    fake.count = n;
    return fake.result;
}
static CUresult fake_mem_free(CUdeviceptr p)
{
    ++fake.calls;
    return fake.result;
}
static CUresult fake_launch(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    ++fake.calls;
    fake.cfg = *cfg;
    if (cfg->numAttrs)
        fake.attr = cfg->attrs[0];
    if (cfg->numAttrs > 1)
        fake.attr1 = cfg->attrs[1];
    return fake.result;
}
static CUresult fake_blocks_per_sm(int *n, CUfunction f, int threads, size_t smem)
{
    ++fake.calls;
    fake.count = smem;
    *n = fake.occupancy;
    return fake.result;
}
static CUresult fake_active_clusters(int *n, CUfunction f, const CUlaunchConfig *cfg)
{
    ++fake.calls;
    fake.cfg = *cfg;
    if (cfg->numAttrs)
        fake.attr = cfg->attrs[0];
    *n = fake.occupancy;
    return fake.result;
}
static CUresult fake_encode(CUtensorMap *m, CUtensorMapDataType t, cuuint32_t rank, void *addr,
                            const cuuint64_t *dims, const cuuint64_t *strides,
                            const cuuint32_t *box, const cuuint32_t *est, CUtensorMapInterleave il,
                            CUtensorMapSwizzle sw, CUtensorMapL2promotion pr,
                            CUtensorMapFloatOOBfill fill)
{
    ++fake.calls;
    fake.rank = rank;
    for (cuuint32_t i = 0; i < rank; ++i) {
        fake.dims[i] = dims[i];
        fake.box[i] = box[i];
        fake.est[i] = est[i];
        if (i + 1 < rank)
            fake.strides[i] = strides[i];
    }
    return fake.result;
}
/* A module load that writes into the logs the caller provided. */
static CUresult fake_load(CUmodule *m, const void *image, unsigned n, CUjit_option *opts,
                          void **vals)
{
    ++fake.calls;
    fake.num_options = n;
    for (unsigned i = 0; i < n; ++i) {
        if (opts[i] == CU_JIT_LOG_VERBOSE)
            fake.verbose = (int)(uintptr_t)vals[i];
        if (opts[i] == CU_JIT_ERROR_LOG_BUFFER && fake.result != CUDA_SUCCESS)
            strcpy(vals[i], "ptxas application ptx input, line 19; error   : Not a name of any "
                            "known instruction: 'stt'\n");
        if (opts[i] == CU_JIT_INFO_LOG_BUFFER && fake.result == CUDA_SUCCESS)
            strcpy(vals[i], "ptxas info    : Used 10 registers\n");
        if (opts[i] == CU_JIT_WALL_TIME) {
            float ms = 2.5f;
            memcpy(&vals[i], &ms, sizeof ms);
        }
    }
    *m = fake.result == CUDA_SUCCESS ? (CUmodule)0x1234 : NULL;
    return fake.result;
}
static CUresult fake_get_function(CUfunction *f, CUmodule m, const char *name)
{
    ++fake.calls;
    *f = fake.result == CUDA_SUCCESS ? (CUfunction)0x5678 : NULL;
    return fake.result;
}
static CUresult fake_func_get(int *v, CUfunction_attribute a, CUfunction f)
{
    ++fake.calls;
    *v = fake.func_attr[a];
    return CUDA_SUCCESS;
}
static CUresult fake_func_set(CUfunction f, CUfunction_attribute a, int v)
{
    ++fake.calls;
    fake.set_attr = (int)a;
    fake.set_value = v;
    return fake.result;
}

static fp4lr_driver fake_drv = {
    .cuGetErrorName = fake_error_name,
    .cuGetErrorString = fake_error_string,
    .cuMemAlloc = fake_mem_alloc,
    .cuMemFree = fake_mem_free,
    .cuMemcpyHtoD = fake_htod,
    .cuMemcpyDtoH = fake_dtoh,
    .cuMemsetD8 = fake_memset8,
    .cuMemsetD16 = fake_memset16,
    .cuMemsetD32 = fake_memset32,
    .cuLaunchKernelEx = fake_launch,
    .cuOccupancyMaxActiveBlocksPerMultiprocessor = fake_blocks_per_sm,
    .cuOccupancyMaxActiveClusters = fake_active_clusters,
    .cuTensorMapEncodeTiled = fake_encode,
    .cuModuleLoadDataEx = fake_load,
    .cuModuleGetFunction = fake_get_function,
    .cuFuncGetAttribute = fake_func_get,
    .cuFuncSetAttribute = fake_func_set,
};

/* An H200-like context on the fake driver. */
static fp4lr_ctx fake_ctx = {
    .drv = &fake_drv, .cc_major = 9, .cc_minor = 0, .sm_count = 132,
    .max_smem_optin = 232448, .smem_per_sm = 233472, .reserved_smem_per_block = 1024,
};

/* ---- opening the driver ------------------------------------------------------- */

Test(driver, missing_library_is_no_driver_naming_the_path)
{
    const char *path = "/nonexistent/fp4lr-test/libcuda.so.1";
    setenv("FP4LR_LIBCUDA", path, 1);
    fp4lr_driver *drv = (fp4lr_driver *)0x1;
    fp4lr_status s = fp4lr_driver_open(&drv);
    assert_status(s, FP4LR_E_NO_DRIVER, "driver_dlopen");
    assert_has(s.msg, path);
    assert_has(s.msg, "no CUDA driver");
    cr_assert_null(drv);
}

Test(driver, library_without_driver_symbols_is_no_driver)
{
    setenv("FP4LR_LIBCUDA", "libm.so.6", 1);
    fp4lr_driver *drv = NULL;
    fp4lr_status s = fp4lr_driver_open(&drv);
    assert_status(s, FP4LR_E_NO_DRIVER, "driver_not_cuda");
    assert_has(s.msg, "libm.so.6");
    cr_assert_null(drv);
}

Test(driver, toolkit_stub_library_is_no_driver)
{
    const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
    FILE *f = fopen(stub, "rb");
    if (!f)
        cr_skip_test("no CUDA toolkit stub library at %s", stub);
    fclose(f);
    setenv("FP4LR_LIBCUDA", stub, 1);
    fp4lr_driver *drv = NULL;
    fp4lr_status s = fp4lr_driver_open(&drv);
    assert_status(s, FP4LR_E_NO_DRIVER, "driver_stub");
    assert_has(s.msg, stub);
    cr_assert_null(drv);
}

Test(driver, context_without_driver_reports_no_driver)
{
    setenv("FP4LR_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    fp4lr_ctx *ctx = (fp4lr_ctx *)0x1;
    fp4lr_status s = fp4lr_ctx_create(0, &ctx);
    assert_status(s, FP4LR_E_NO_DRIVER, "driver_dlopen");
    cr_assert_null(ctx);
}

Test(driver, version_rule_names_found_and_needed)
{
    fp4lr_status s = fp4lr_driver_check_version(11080);
    assert_status(s, FP4LR_E_DRIVER_TOO_OLD, "driver_min_version");
    assert_has(s.msg, "11080");
    assert_has(s.msg, "CUDA 11.8");
    assert_has(s.msg, "12000");
    cr_assert_eq(fp4lr_driver_check_version(12000).code, FP4LR_OK);
    cr_assert_eq(fp4lr_driver_check_version(13000).code, FP4LR_OK);
}

/* ---- the FP4LR_CU macro ---------------------------------------------------------- */

static int fake_calls_after;
static int fake_macro_line;

static CUresult fake_fails(int x) { return x ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }

static fp4lr_status through_macro(int fail)
{
    fake_macro_line = __LINE__ + 1;
    FP4LR_CU(&fake_drv, fake_fails(fail));
    ++fake_calls_after;
    return fp4lr_ok();
}

Test(driver, cu_macro_failure_carries_expression_name_message_and_line)
{
    fp4lr_status s = through_macro(7);
    assert_status(s, FP4LR_E_DRIVER, "CUDA_ERROR_INVALID_VALUE");
    cr_assert_eq(s.cu_result, (int)CUDA_ERROR_INVALID_VALUE);
    cr_assert_eq(fake_calls_after, 0, "the macro must return on failure");
    assert_has(s.msg, "fake_fails(fail)");
    assert_has(s.msg, "fake: invalid argument");
    char where[64];
    snprintf(where, sizeof where, "test_driver.c:%d", fake_macro_line);
    assert_has(s.msg, where);
}

Test(driver, cu_macro_success_continues)
{
    fp4lr_status s = through_macro(0);
    cr_assert_eq(s.code, FP4LR_OK);
    cr_assert_eq(fake_calls_after, 1);
}

Test(driver, cu_status_without_a_name_keeps_the_number)
{
    fp4lr_status s = fp4lr_cu_status(NULL, CUDA_ERROR_LAUNCH_FAILED, "k()", "f.c", 3);
    assert_status(s, FP4LR_E_DRIVER, "CUDA_ERROR_UNNAMED");
    cr_assert_eq(s.cu_result, 719);
    assert_has(s.msg, "k() failed: CUDA_ERROR_UNNAMED (719:");
    assert_has(s.msg, "f.c:3");
    /* a launch failure names the watchdog's trap as one cause; other errors do not */
    assert_has(s.msg, "4 s watchdog");
    fp4lr_status o = fp4lr_cu_status(NULL, CUDA_ERROR_NOT_FOUND, "k()", "f.c", 3);
    cr_assert_null(strstr(o.msg, "watchdog"), "%s", o.msg);
    /* A table whose name lookup fails gives the same fallback. */
    cr_assert_str_eq(fp4lr_cu_name(&fake_drv, CUDA_ERROR_LAUNCH_FAILED), "CUDA_ERROR_UNNAMED");
    cr_assert_str_eq(fp4lr_cu_name(&fake_drv, CUDA_ERROR_NOT_FOUND), "CUDA_ERROR_NOT_FOUND");
}

Test(driver, code_names)
{
    cr_assert_str_eq(fp4lr_code_name(FP4LR_E_NO_DRIVER), "FP4LR_E_NO_DRIVER");
    cr_assert_str_eq(fp4lr_code_name(FP4LR_E_NO_DEVICE), "FP4LR_E_NO_DEVICE");
    cr_assert_str_eq(fp4lr_code_name(FP4LR_E_DRIVER_TOO_OLD), "FP4LR_E_DRIVER_TOO_OLD");
    cr_assert_str_eq(fp4lr_code_name(FP4LR_E_DRIVER), "FP4LR_E_DRIVER");
    cr_assert_str_eq(fp4lr_code_name(FP4LR_E_JIT), "FP4LR_E_JIT");
    cr_assert_str_eq(fp4lr_code_name(FP4LR_E_RESOURCE), "FP4LR_E_RESOURCE");
}

/* ---- architecture map ------------------------------------------------------------ */

Test(driver, arch_for_compute_capability)
{
    const char *arch = NULL;
    cr_assert_eq(fp4lr_arch_for_cc(9, 0, &arch).code, FP4LR_OK);
    cr_assert_str_eq(arch, "sm90a");
    cr_assert_eq(fp4lr_arch_for_cc(10, 0, &arch).code, FP4LR_OK);
    cr_assert_str_eq(arch, "sm100a");
    fp4lr_status s = fp4lr_arch_for_cc(8, 0, &arch);
    assert_status(s, FP4LR_E_UNSUPPORTED, "arch_unsupported");
    assert_has(s.msg, "8.0");
    cr_assert_null(arch);
    /* other 10.x parts (B300 is 10.3) run the sm_100f family-target cubins */
    cr_assert_eq(fp4lr_arch_for_cc(10, 3, &arch).code, FP4LR_OK);
    cr_assert_str_eq(arch, "sm100f");
    s = fp4lr_arch_for_cc(12, 0, &arch);
    assert_status(s, FP4LR_E_UNSUPPORTED, "arch_unsupported");
    assert_has(s.msg, "12.0");
    assert_status(fp4lr_arch_for_cc(11, 0, &arch), FP4LR_E_UNSUPPORTED, "arch_unsupported");
    cr_assert_eq(fp4lr_ctx_arch(&fake_ctx, &arch).code, FP4LR_OK);
    cr_assert_str_eq(arch, "sm90a");
}

/* ---- tensor maps --------------------------------------------------------------- */

/* A valid map: 64 rows of 256 bytes, box 128 x 64, 128-byte swizzle. */
static fp4lr_tmap_desc good_desc(void)
{
    fp4lr_tmap_desc d = {
        .dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8, .rank = 2, .addr = 0x7f0000000100ull,
        .dims = {256, 64}, .strides = {256}, .box = {128, 64}, .estrides = {1, 1},
        .interleave = CU_TENSOR_MAP_INTERLEAVE_NONE, .swizzle = CU_TENSOR_MAP_SWIZZLE_128B,
        .promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        .oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    };
    return d;
}

#define assert_tmap_rule(d, rule) assert_status(fp4lr_tmap_validate(&(d)), FP4LR_E_INVALID, rule)

Test(driver, tmap_describe_lists_every_argument)
{
    fp4lr_tmap_desc d = good_desc();
    char buf[512];
    fp4lr_tmap_describe(&d, buf, sizeof buf);
    cr_assert_str_eq(buf, "dtype=UINT8 rank=2 addr=0x7f0000000100 dims={256,64} strides={256} "
                          "box={128,64} estrides={1,1} interleave=NONE swizzle=128B "
                          "promotion=L2_128B fill=NONE");
    cr_assert_eq(fp4lr_tmap_validate(&d).code, FP4LR_OK);
}

Test(driver, tmap_misaligned_address)
{
    fp4lr_tmap_desc d = good_desc();
    d.addr += 8;
    fp4lr_status s = fp4lr_tmap_validate(&d);
    assert_status(s, FP4LR_E_INVALID, "tmap_address_align");
    assert_has(s.msg, "0x7f0000000108");
    assert_has(s.msg, "dims={256,64} strides={256} box={128,64}");
    assert_has(s.msg, "swizzle=128B promotion=L2_128B fill=NONE");
    d.addr = 0;
    assert_tmap_rule(d, "tmap_address_align");
    /* Interleave 32B needs 32-byte alignment: 16 is not enough. */
    d = good_desc();
    d.rank = 3;
    d.dims[2] = 2;
    d.strides[1] = 256 * 64;
    d.box[2] = 1;
    d.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
    d.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
    d.box[0] = 32;
    d.addr = 0x7f0000000110ull;
    assert_tmap_rule(d, "tmap_address_align");
    d.addr = 0x7f0000000120ull;
    cr_assert_eq(fp4lr_tmap_validate(&d).code, FP4LR_OK, "%s", fp4lr_tmap_validate(&d).msg);
}

Test(driver, tmap_bad_strides)
{
    fp4lr_tmap_desc d = good_desc();
    d.strides[0] = 264;
    fp4lr_status s = fp4lr_tmap_validate(&d);
    assert_status(s, FP4LR_E_INVALID, "tmap_stride_align");
    assert_has(s.msg, "strides[0] = 264");
    d.strides[0] = 1ull << 40;
    assert_tmap_rule(d, "tmap_stride_range");
    d.strides[0] = 240; /* shorter than the 256-byte row */
    assert_tmap_rule(d, "tmap_stride_row");
    d.strides[0] = 272; /* padded rows are fine */
    cr_assert_eq(fp4lr_tmap_validate(&d).code, FP4LR_OK);
}

Test(driver, tmap_box_limits)
{
    fp4lr_tmap_desc d = good_desc();
    d.box[1] = 257;
    fp4lr_status s = fp4lr_tmap_validate(&d);
    assert_status(s, FP4LR_E_INVALID, "tmap_box");
    assert_has(s.msg, "box[1] = 257");
    d.box[1] = 0;
    assert_tmap_rule(d, "tmap_box");
    d.box[1] = 256;
    cr_assert_eq(fp4lr_tmap_validate(&d).code, FP4LR_OK);
    d.box[0] = 24; /* 24 bytes: not a multiple of 16 */
    assert_tmap_rule(d, "tmap_box_bytes");
}

Test(driver, tmap_inner_box_within_swizzle_span)
{
    fp4lr_tmap_desc d = good_desc();
    d.dtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    d.strides[0] = 512;
    d.box[0] = 128; /* 256 bytes > 128 */
    fp4lr_status s = fp4lr_tmap_validate(&d);
    assert_status(s, FP4LR_E_INVALID, "tmap_swizzle_span");
    assert_has(s.msg, "256 bytes");
    assert_has(s.msg, "dtype=BFLOAT16");
    d.box[0] = 64; /* 128 bytes: fits */
    cr_assert_eq(fp4lr_tmap_validate(&d).code, FP4LR_OK);
    d.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
    assert_tmap_rule(d, "tmap_swizzle_span");
    d.box[0] = 16; /* 32 bytes */
    cr_assert_eq(fp4lr_tmap_validate(&d).code, FP4LR_OK);
    d.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    d.box[0] = 256; /* no swizzle, no span limit */
    cr_assert_eq(fp4lr_tmap_validate(&d).code, FP4LR_OK);
}

Test(driver, tmap_rank_and_dims)
{
    fp4lr_tmap_desc d = good_desc();
    d.rank = 0;
    assert_tmap_rule(d, "tmap_rank");
    d.rank = 6;
    assert_tmap_rule(d, "tmap_rank");
    d = good_desc();
    d.interleave = CU_TENSOR_MAP_INTERLEAVE_16B; /* interleave needs rank >= 3 */
    assert_tmap_rule(d, "tmap_rank");
    d = good_desc();
    d.dims[1] = 0;
    assert_tmap_rule(d, "tmap_dim");
    d.dims[1] = (1ull << 32) + 1;
    assert_tmap_rule(d, "tmap_dim");
    d.dims[1] = 1ull << 32;
    cr_assert_eq(fp4lr_tmap_validate(&d).code, FP4LR_OK);
    d = good_desc();
    d.dtype = (CUtensorMapDataType)99;
    assert_tmap_rule(d, "tmap_dtype");
    d = good_desc();
    d.swizzle = (CUtensorMapSwizzle)9;
    assert_tmap_rule(d, "tmap_enum");
}

Test(driver, tmap_estride_fill_and_packed_types)
{
    fp4lr_tmap_desc d = good_desc();
    d.estrides[1] = 9;
    assert_tmap_rule(d, "tmap_estride");
    d.estrides[1] = 0; /* 0 means 1 */
    cr_assert_eq(fp4lr_tmap_validate(&d).code, FP4LR_OK);
    d = good_desc();
    d.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    assert_tmap_rule(d, "tmap_oob_fill");
    d = good_desc();
    d.dtype = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
    d.addr = 0x7f0000000200ull;
    d.box[0] = 64;
    assert_tmap_rule(d, "tmap_packed_box");
    d.box[0] = 128;
    d.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
    assert_tmap_rule(d, "tmap_packed_swizzle");
    d.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    d.dims[0] = 200;
    assert_tmap_rule(d, "tmap_packed_dim");
    d.dims[0] = 256; /* 256 u4 = 128 bytes per row, stride 256 */
    cr_assert_eq(fp4lr_tmap_validate(&d).code, FP4LR_OK, "%s", fp4lr_tmap_validate(&d).msg);
    d = good_desc();
    d.rank = 3;
    d.dims[2] = 2;
    d.strides[1] = 256 * 64;
    d.box[2] = 1;
    d.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
    d.box[0] = 32;
    d.addr = 0x7f0000000200ull;
    assert_tmap_rule(d, "tmap_interleave_swizzle");
}

Test(driver, tmap_driver_rejection_lists_every_argument)
{
    fake.result = CUDA_ERROR_INVALID_VALUE;
    fp4lr_tmap_desc d = good_desc();
    d.estrides[0] = 0;
    CUtensorMap map;
    fp4lr_status s = fp4lr_tmap_encode(&fake_ctx, &map, &d);
    assert_status(s, FP4LR_E_DRIVER, "CUDA_ERROR_INVALID_VALUE");
    cr_assert_eq(s.cu_result, (int)CUDA_ERROR_INVALID_VALUE);
    assert_has(s.msg, "cuTensorMapEncodeTiled");
    assert_has(s.msg, "fake: invalid argument");
    assert_has(s.msg, "dtype=UINT8 rank=2 addr=0x7f0000000100 dims={256,64} strides={256} "
                      "box={128,64} estrides={1,1} interleave=NONE swizzle=128B "
                      "promotion=L2_128B fill=NONE");
    /* The driver saw the descriptor, with element stride 0 made 1. */
    cr_assert_eq(fake.calls, 1);
    cr_assert_eq(fake.rank, 2);
    cr_assert_eq(fake.dims[0], 256);
    cr_assert_eq(fake.dims[1], 64);
    cr_assert_eq(fake.strides[0], 256);
    cr_assert_eq(fake.box[0], 128);
    cr_assert_eq(fake.box[1], 64);
    cr_assert_eq(fake.est[0], 1);
}

Test(driver, tmap_invalid_map_never_reaches_the_driver)
{
    fp4lr_tmap_desc d = good_desc();
    d.box[0] = 512;
    CUtensorMap map;
    assert_status(fp4lr_tmap_encode(&fake_ctx, &map, &d), FP4LR_E_INVALID, "tmap_box");
    cr_assert_eq(fake.calls, 0);
    /* A misaligned output map is caught too. */
    d = good_desc();
    unsigned char raw[sizeof(CUtensorMap) + 64];
    CUtensorMap *odd = (CUtensorMap *)(((uintptr_t)raw + 63) / 64 * 64 + 16);
    assert_status(fp4lr_tmap_encode(&fake_ctx, odd, &d), FP4LR_E_INVALID, "tmap_out_align");
    cr_assert_eq(fake.calls, 0);
}

/* ---- modules ------------------------------------------------------------------ */

Test(driver, module_path_default_explicit_and_env)
{
    unsetenv("FP4LR_KERNEL_DIR");
    char path[128];
    cr_assert_eq(fp4lr_module_path(path, sizeof path, NULL, "sm90a", "fp4lr_dense", NULL).code,
                 FP4LR_OK);
    cr_assert_str_eq(path, "build/ptx/sm90a/fp4lr_dense.cubin");
    cr_assert_eq(fp4lr_module_path(path, sizeof path, "/opt/k", "sm100a", "x", "ptx").code,
                 FP4LR_OK);
    cr_assert_str_eq(path, "/opt/k/sm100a/x.ptx");
    setenv("FP4LR_KERNEL_DIR", "/env/k", 1);
    cr_assert_eq(fp4lr_module_path(path, sizeof path, "/opt/k", "sm90a", "x", NULL).code,
                 FP4LR_OK);
    cr_assert_str_eq(path, "/env/k/sm90a/x.cubin");
    cr_assert_str_eq(fp4lr_kernel_dir(NULL), "/env/k");
}

Test(driver, module_path_too_long_or_incomplete)
{
    unsetenv("FP4LR_KERNEL_DIR");
    char path[16];
    fp4lr_status s = fp4lr_module_path(path, sizeof path, NULL, "sm90a", "fp4lr_dense", NULL);
    assert_status(s, FP4LR_E_INVALID, "path_too_long");
    assert_has(s.msg, "build/ptx/sm90a/fp4lr_dense.cubin");
    cr_assert_str_eq(path, "");
    assert_status(fp4lr_module_path(path, sizeof path, NULL, NULL, "x", NULL), FP4LR_E_INVALID,
                  "null_argument");
}

Test(driver, module_missing_file_is_io_naming_the_path)
{
    fp4lr_module m;
    fp4lr_status s = fp4lr_module_load_file(&fake_ctx, "/nonexistent/fp4lr/k.cubin", &m, NULL);
    assert_status(s, FP4LR_E_IO, "module_file");
    assert_has(s.msg, "/nonexistent/fp4lr/k.cubin");
    cr_assert_eq(fake.calls, 0);
    cr_assert_null(m.handle);
}

Test(driver, module_jit_failure_carries_the_log)
{
    fake.result = CUDA_ERROR_INVALID_PTX;
    fp4lr_module m;
    fp4lr_jit_log *log = malloc(sizeof *log);
    fp4lr_status s = fp4lr_module_load_image(&fake_ctx, ".version 8.0\n", "inline:bad", &m, log);
    assert_status(s, FP4LR_E_JIT, "CUDA_ERROR_INVALID_PTX");
    cr_assert_eq(s.cu_result, (int)CUDA_ERROR_INVALID_PTX);
    assert_has(s.msg, "inline:bad");
    assert_has(s.msg, "line 19; error   : Not a name of any known instruction: 'stt'");
    cr_assert_str_eq(log->error, "ptxas application ptx input, line 19; error   : Not a name of "
                                 "any known instruction: 'stt'");
    cr_assert_null(m.handle);
    cr_assert_eq(fake.verbose, 1);
    cr_assert_eq(fake.num_options, 6);
    free(log);
}

Test(driver, module_success_returns_the_info_log)
{
    fp4lr_module m;
    fp4lr_jit_log *log = malloc(sizeof *log);
    fp4lr_status s = fp4lr_module_load_image(&fake_ctx, ".version 8.0\n", NULL, &m, log);
    cr_assert_eq(s.code, FP4LR_OK, "%s", s.msg);
    cr_assert_str_eq(log->info, "ptxas info    : Used 10 registers");
    cr_assert_str_eq(log->error, "");
    cr_assert_float_eq(log->wall_ms, 2.5f, 1e-6);
    cr_assert_eq(m.handle, (CUmodule)0x1234);
    cr_assert_str_eq(m.origin, "(memory)");
    free(log);
}

Test(driver, module_missing_entry_names_entry_and_module)
{
    fp4lr_module m = {.ctx = &fake_ctx, .handle = (CUmodule)0x1234, .origin = "build/ptx/sm90a/k.cubin"};
    fake.result = CUDA_ERROR_NOT_FOUND;
    CUfunction f;
    fp4lr_status s = fp4lr_module_function(&m, "fp4lr_sm90a_nvfp4_fused_x", &f);
    assert_status(s, FP4LR_E_UNSUPPORTED, "module_entry_missing");
    assert_has(s.msg, "'fp4lr_sm90a_nvfp4_fused_x'");
    assert_has(s.msg, "'build/ptx/sm90a/k.cubin'");
    cr_assert_eq(s.cu_result, (int)CUDA_ERROR_NOT_FOUND);
    fake.result = CUDA_SUCCESS;
    cr_assert_eq(fp4lr_module_function(&m, "k", &f).code, FP4LR_OK);
    cr_assert_eq(f, (CUfunction)0x5678);
}

/* ---- function resource checks --------------------------------------------------- */

static const fp4lr_func_info fitting_info = {
    .num_regs = 168, .local_bytes = 0, .static_smem = 1024, .max_threads = 384,
};
static const fp4lr_func_expect plan = {
    .max_regs = 168, .dyn_smem = 200 * 1024, .max_static_smem = 2048, .threads = 384,
};

Test(driver, func_check_passes_a_fitting_function)
{
    cr_assert_eq(fp4lr_func_check(&fake_ctx, "k", &fitting_info, &plan).code, FP4LR_OK);
}

Test(driver, func_check_names_attribute_found_and_expected)
{
    fp4lr_func_info info = fitting_info;
    info.local_bytes = 16;
    fp4lr_status s = fp4lr_func_check(&fake_ctx, "kern", &info, &plan);
    assert_status(s, FP4LR_E_RESOURCE, "func_local_memory");
    assert_has(s.msg, "entry 'kern': LOCAL_SIZE_BYTES = 16, expected == 0");

    info = fitting_info;
    info.num_regs = 200;
    s = fp4lr_func_check(&fake_ctx, "kern", &info, &plan);
    assert_status(s, FP4LR_E_RESOURCE, "func_regs");
    assert_has(s.msg, "NUM_REGS = 200, expected <= 168");

    info = fitting_info;
    info.static_smem = 4096;
    s = fp4lr_func_check(&fake_ctx, "kern", &info, &plan);
    assert_status(s, FP4LR_E_RESOURCE, "func_static_smem");
    assert_has(s.msg, "SHARED_SIZE_BYTES = 4096, expected <= 2048");

    fp4lr_func_expect big = plan;
    big.dyn_smem = 232448; /* + 1024 static > 232448 */
    s = fp4lr_func_check(&fake_ctx, "kern", &fitting_info, &big);
    assert_status(s, FP4LR_E_RESOURCE, "func_smem_optin");
    assert_has(s.msg, "= 233472, expected <= 232448");

    info = fitting_info;
    info.max_threads = 256;
    s = fp4lr_func_check(&fake_ctx, "kern", &info, &plan);
    assert_status(s, FP4LR_E_RESOURCE, "func_threads");
    assert_has(s.msg, "MAX_THREADS_PER_BLOCK = 256, expected >= 384");

    /* a warp-specialised launch needs the kernel's own .maxntid: 512-thread cubins (an
     * experiment's) under a 384-thread host are refused, and the other way round */
    fp4lr_func_expect exact = plan;
    exact.threads_exact = 1;
    cr_assert_eq(fp4lr_func_check(&fake_ctx, "kern", &fitting_info, &exact).code, FP4LR_OK);
    info = fitting_info;
    info.max_threads = 512;
    cr_assert_eq(fp4lr_func_check(&fake_ctx, "kern", &info, &plan).code, FP4LR_OK,
                 "without threads_exact 384 <= 512 is enough");
    s = fp4lr_func_check(&fake_ctx, "kern", &info, &exact);
    assert_status(s, FP4LR_E_RESOURCE, "func_threads_exact");
    assert_has(s.msg, "MAX_THREADS_PER_BLOCK = 512, expected == 384");

    fp4lr_func_expect none = {0};
    assert_status(fp4lr_func_check(&fake_ctx, "kern", &fitting_info, &none), FP4LR_E_INVALID,
                  "func_expect");
}

Test(driver, func_prepare_sets_dynamic_shared_memory_after_the_check)
{
    fake.func_attr[CU_FUNC_ATTRIBUTE_NUM_REGS] = 168;
    fake.func_attr[CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES] = 1024;
    fake.func_attr[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK] = 384;
    fake.func_attr[CU_FUNC_ATTRIBUTE_BINARY_VERSION] = 90;
    fp4lr_func_info info;
    fp4lr_status s = fp4lr_func_prepare(&fake_ctx, (CUfunction)0x5678, "k", &plan, &info);
    cr_assert_eq(s.code, FP4LR_OK, "%s", s.msg);
    cr_assert_eq(info.num_regs, 168);
    cr_assert_eq(info.binary_version, 90);
    cr_assert_eq(fake.set_attr, (int)CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    cr_assert_eq(fake.set_value, 200 * 1024);

    fake.set_attr = -1;
    fake.func_attr[CU_FUNC_ATTRIBUTE_NUM_REGS] = 255;
    assert_status(fp4lr_func_prepare(&fake_ctx, (CUfunction)0x5678, "k", &plan, NULL),
                  FP4LR_E_RESOURCE, "func_regs");
    cr_assert_eq(fake.set_attr, -1, "a failed check must not set the attribute");
}

/* ---- device buffers ------------------------------------------------------------- */

Test(driver, devbuf_zero_sizes_and_null_pointers)
{
    CUdeviceptr p = 99;
    cr_assert_eq(fp4lr_dev_alloc(&fake_ctx, &p, 0).code, FP4LR_OK);
    cr_assert_eq(p, 0);
    cr_assert_eq(fp4lr_dev_free(&fake_ctx, 0).code, FP4LR_OK);
    cr_assert_eq(fp4lr_dev_upload(&fake_ctx, 0, NULL, 0).code, FP4LR_OK);
    cr_assert_eq(fp4lr_dev_download(&fake_ctx, NULL, 0, 0).code, FP4LR_OK);
    cr_assert_eq(fp4lr_dev_poison_nan(&fake_ctx, 0, 0, 2).code, FP4LR_OK);
    cr_assert_eq(fake.calls, 0, "zero sizes must not reach the driver");
    char host[4];
    assert_status(fp4lr_dev_upload(&fake_ctx, 0x7000000, NULL, 4), FP4LR_E_INVALID, "null_buffer");
    assert_status(fp4lr_dev_download(&fake_ctx, host, 0, 4), FP4LR_E_INVALID, "null_buffer");
    assert_status(fp4lr_dev_memset(&fake_ctx, 0, 0, 4), FP4LR_E_INVALID, "null_buffer");
    cr_assert_eq(fake.calls, 0);
}

Test(driver, devbuf_driver_failure_is_a_status)
{
    fake.result = CUDA_ERROR_OUT_OF_MEMORY;
    CUdeviceptr p = 99;
    fp4lr_status s = fp4lr_dev_alloc(&fake_ctx, &p, 1 << 20);
    assert_status(s, FP4LR_E_DRIVER, "CUDA_ERROR_OUT_OF_MEMORY");
    assert_has(s.msg, "cuMemAlloc(out, bytes)");
    cr_assert_eq(fake.count, (size_t)1 << 20);
    cr_assert_eq(p, 0);
}

Test(driver, devbuf_poison_patterns)
{
    cr_assert_eq(fp4lr_dev_poison_nan(&fake_ctx, 0x7000000, 1000, 2).code, FP4LR_OK);
    cr_assert_eq(fake.value, 0x7FFF);
    cr_assert_eq(fake.count, 500);
    cr_assert_eq(fp4lr_dev_poison_nan(&fake_ctx, 0x7000000, 1000, 4).code, FP4LR_OK);
    cr_assert_eq(fake.value, 0x7FC00000u);
    cr_assert_eq(fake.count, 250);
    assert_status(fp4lr_dev_poison_nan(&fake_ctx, 0x7000000, 1002, 4), FP4LR_E_INVALID,
                  "poison_shape");
    assert_status(fp4lr_dev_poison_nan(&fake_ctx, 0x7000002, 1000, 4), FP4LR_E_INVALID,
                  "poison_shape");
    assert_status(fp4lr_dev_poison_nan(&fake_ctx, 0x7000000, 1000, 8), FP4LR_E_INVALID,
                  "poison_elem_bytes");
    cr_assert_eq(fake.calls, 2);
}

Test(driver, poison_patterns_are_quiet_nans)
{
    /* 0x7FFF as bf16: exponent 0xFF, mantissa 0x7F, quiet bit 6 set. */
    uint32_t bits = (uint32_t)FP4LR_POISON_16 << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    cr_assert(isnan(f));
    /* 0x7FFF as fp16: exponent 0x1F, mantissa 0x3FF, quiet bit 9 set. */
    cr_assert_eq((FP4LR_POISON_16 >> 10) & 0x1F, 0x1F);
    cr_assert_neq(FP4LR_POISON_16 & 0x3FF, 0);
    cr_assert_neq(FP4LR_POISON_16 & 0x200, 0);
    bits = FP4LR_POISON_32;
    memcpy(&f, &bits, sizeof f);
    cr_assert(isnan(f));
}

/* ---- launch ------------------------------------------------------------------- */

Test(driver, launch_with_and_without_cluster)
{
    const unsigned grid[3] = {132, 1, 1}, block[3] = {384, 1, 1};
    void *params[1] = {NULL};
    cr_assert_eq(fp4lr_launch(&fake_ctx, (CUfunction)0x5678, grid, block, 200 * 1024, 2, NULL,
                              params).code, FP4LR_OK);
    cr_assert_eq(fake.cfg.gridDimX, 132);
    cr_assert_eq(fake.cfg.blockDimX, 384);
    cr_assert_eq(fake.cfg.sharedMemBytes, 200 * 1024);
    cr_assert_eq(fake.cfg.numAttrs, 1);
    cr_assert_eq(fake.attr.id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    cr_assert_eq(fake.attr.value.clusterDim.x, 2);
    cr_assert_eq(fake.attr.value.clusterDim.y, 1);
    cr_assert_eq(fake.attr.value.clusterDim.z, 1);
    cr_assert_eq(fp4lr_launch(&fake_ctx, (CUfunction)0x5678, grid, block, 0, 1, NULL,
                              params).code, FP4LR_OK);
    cr_assert_eq(fake.cfg.numAttrs, 0);
    cr_assert_null(fake.cfg.attrs);
    cr_assert_eq(fake.calls, 2);
}

/* The programmatic dependent launch: the attribute alone, or after the cluster's; the same
 * rules as a plain launch. */
Test(driver, launch_as_a_programmatic_dependent)
{
    const unsigned grid[3] = {132, 1, 1}, block[3] = {512, 1, 1};
    void *params[1] = {NULL};
    CUfunction f = (CUfunction)0x5678;
    cr_assert_eq(fp4lr_launch_dependent(&fake_ctx, f, grid, block, 1024, 1, NULL, params).code, FP4LR_OK);
    cr_assert_eq(fake.cfg.numAttrs, 1);
    cr_assert_eq(fake.attr.id, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
    cr_assert_eq(fake.attr.value.programmaticStreamSerializationAllowed, 1);
    cr_assert_eq(fp4lr_launch_dependent(&fake_ctx, f, grid, block, 1024, 2, NULL, params).code, FP4LR_OK);
    cr_assert_eq(fake.cfg.numAttrs, 2);
    cr_assert_eq(fake.attr.id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    cr_assert_eq(fake.attr.value.clusterDim.x, 2);
    cr_assert_eq(fake.attr1.id, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
    cr_assert_eq(fake.attr1.value.programmaticStreamSerializationAllowed, 1);
    cr_assert_eq(fake.calls, 2);
    const unsigned odd[3] = {133, 1, 1};
    assert_status(fp4lr_launch_dependent(&fake_ctx, f, odd, block, 0, 2, NULL, params), FP4LR_E_INVALID,
                  "launch_cluster");
    assert_status(fp4lr_launch_dependent(&fake_ctx, f, grid, block, 0, 1, NULL, NULL), FP4LR_E_INVALID,
                  "launch_params");
    cr_assert_eq(fake.calls, 2);
}

Test(driver, launch_rules)
{
    const unsigned grid[3] = {133, 1, 1}, block[3] = {384, 1, 1};
    const unsigned zero_grid[3] = {0, 1, 1}, big_block[3] = {1024, 2, 1};
    void *params[1] = {NULL};
    CUfunction f = (CUfunction)0x5678;
    fp4lr_status s = fp4lr_launch(&fake_ctx, f, grid, block, 0, 2, NULL, params);
    assert_status(s, FP4LR_E_INVALID, "launch_cluster");
    assert_has(s.msg, "133");
    assert_status(fp4lr_launch(&fake_ctx, f, zero_grid, block, 0, 1, NULL, params),
                  FP4LR_E_INVALID, "launch_grid");
    assert_status(fp4lr_launch(&fake_ctx, f, grid, big_block, 0, 1, NULL, params),
                  FP4LR_E_INVALID, "launch_block");
    assert_status(fp4lr_launch(&fake_ctx, f, grid, block, 0, 0, NULL, params), FP4LR_E_INVALID,
                  "launch_cluster");
    assert_status(fp4lr_launch(&fake_ctx, f, grid, block, 0, 1, NULL, NULL), FP4LR_E_INVALID,
                  "launch_params");
    cr_assert_eq(fake.calls, 0);
    fake.result = CUDA_ERROR_INVALID_VALUE;
    s = fp4lr_launch(&fake_ctx, f, grid, block, 0, 1, NULL, params);
    assert_status(s, FP4LR_E_DRIVER, "CUDA_ERROR_INVALID_VALUE");
    assert_has(s.msg, "cuLaunchKernelEx");
}

Test(driver, occupancy_grid_per_sm_and_per_cluster)
{
    const unsigned block[3] = {384, 1, 1};
    CUfunction f = (CUfunction)0x5678;
    int ctas = 0;
    fake.occupancy = 1;
    cr_assert_eq(fp4lr_occupancy_grid(&fake_ctx, f, block, 1000, 1, &ctas).code, FP4LR_OK);
    cr_assert_eq(ctas, 132);
    cr_assert_eq(fake.count, 1000);
    fake.occupancy = 66;
    cr_assert_eq(fp4lr_occupancy_grid(&fake_ctx, f, block, 1000, 2, &ctas).code, FP4LR_OK);
    cr_assert_eq(ctas, 132);
    cr_assert_eq(fake.cfg.gridDimX, 2);
    cr_assert_eq(fake.cfg.sharedMemBytes, 1000);
    cr_assert_eq(fake.attr.id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    cr_assert_eq(fake.attr.value.clusterDim.x, 2);
    fake.occupancy = 0;
    fp4lr_status s = fp4lr_occupancy_grid(&fake_ctx, f, block, 300000, 2, &ctas);
    assert_status(s, FP4LR_E_RESOURCE, "occupancy_zero");
    assert_has(s.msg, "300000");
    cr_assert_eq(ctas, 0);
}
