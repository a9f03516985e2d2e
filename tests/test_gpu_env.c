/* The driver layer on a real GPU: context, buffers, poison, tensor maps,
 * JIT loading of a tiny PTX kernel, launch, and the failure reports.  Each
 * test skips with the reason when there is no driver or device. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devbuf.h"
#include "launch.h"
#include "module.h"
#include "support_gpu.h"
#include "tensormap.h"

#define assert_ok(expr)                                                                     \
    do {                                                                                    \
        fp4lr_status ok_s_ = (expr);                                                        \
        cr_assert_eq(ok_s_.code, FP4LR_OK, "%s: %s: %s", #expr, fp4lr_code_name(ok_s_.code), \
                     ok_s_.msg);                                                            \
    } while (0)

#define assert_has(text, part) \
    cr_assert(strstr((text), (part)) != NULL, "'%s' lacks '%s'", (text), (part))

/* Two entries: out[global index] = threadIdx.x, and the same through 1 KB of
 * static shared memory (at most 256 threads). */
static const char test_ptx[] =
    ".version 8.0\n"
    ".target sm_90a\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry fp4lr_test_iota(.param .u64 out)\n"
    "{\n"
    "    .reg .b32 %r<5>;\n"
    "    .reg .b64 %rd<4>;\n"
    "    ld.param.u64 %rd1, [out];\n"
    "    cvta.to.global.u64 %rd1, %rd1;\n"
    "    mov.u32 %r1, %tid.x;\n"
    "    mov.u32 %r2, %ctaid.x;\n"
    "    mov.u32 %r3, %ntid.x;\n"
    "    mad.lo.u32 %r4, %r2, %r3, %r1;\n"
    "    mul.wide.u32 %rd2, %r4, 4;\n"
    "    add.s64 %rd3, %rd1, %rd2;\n"
    "    st.global.u32 [%rd3], %r1;\n"
    "    ret;\n"
    "}\n"
    "\n"
    ".visible .entry fp4lr_test_smem(.param .u64 out)\n"
    "{\n"
    "    .shared .align 16 .b8 stage[1024];\n"
    "    .reg .b32 %r<4>;\n"
    "    .reg .b64 %rd<5>;\n"
    "    ld.param.u64 %rd1, [out];\n"
    "    cvta.to.global.u64 %rd1, %rd1;\n"
    "    mov.u32 %r1, %tid.x;\n"
    "    mov.u64 %rd2, stage;\n"
    "    mul.wide.u32 %rd3, %r1, 4;\n"
    "    add.s64 %rd4, %rd2, %rd3;\n"
    "    st.shared.u32 [%rd4], %r1;\n"
    "    bar.sync 0;\n"
    "    ld.shared.u32 %r2, [%rd4];\n"
    "    add.s64 %rd4, %rd1, %rd3;\n"
    "    st.global.u32 [%rd4], %r2;\n"
    "    ret;\n"
    "}\n";

/* The context, skipping unless the device runs sm_90a code (the PTX above). */
static fp4lr_ctx *sm90a_ctx(void)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
    tsupport_gpu_arch_or_skip(ctx, "sm90a");
    return ctx;
}

static void load_test_module(const fp4lr_ctx *ctx, fp4lr_module *m, fp4lr_jit_log *log)
{
    assert_ok(fp4lr_module_load_image(ctx, test_ptx, "inline:test_ptx", m, log));
}

Test(gpu_env, context_reports_the_device)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
    cr_assert_gt(ctx->sm_count, 0);
    cr_assert_gt(ctx->cc_major, 0);
    cr_assert_gt(ctx->max_smem_optin, 48 * 1024 - 1);
    cr_assert_geq(ctx->smem_per_sm, ctx->max_smem_optin);
    cr_assert_gt(ctx->l2_bytes, 0);
    cr_assert_gt(ctx->regs_per_sm, 0);
    cr_assert_geq(ctx->driver_version, FP4LR_DRIVER_MIN_VERSION);
    cr_assert_str_not_empty(ctx->name);
    const char *arch = NULL;
    fp4lr_status s = fp4lr_ctx_arch(ctx, &arch);
    if (ctx->cc_major == 9 && ctx->cc_minor == 0)
        cr_assert_str_eq(arch, "sm90a", "%s", s.msg);
    else
        cr_assert(s.code == FP4LR_OK || s.code == FP4LR_E_UNSUPPORTED, "%s", s.msg);
    cr_log_info("device %d: %s, cc %d.%d, %d SMs, opt-in smem %d, L2 %d, driver %d", ctx->ordinal,
                ctx->name, ctx->cc_major, ctx->cc_minor, ctx->sm_count, ctx->max_smem_optin,
                ctx->l2_bytes, ctx->driver_version);
    fp4lr_ctx_destroy(ctx);
}

Test(gpu_env, every_entry_point_resolved_through_get_proc_address)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
#define ASSERT_RESOLVED_(name, abi, symbol) cr_assert_not_null(ctx->drv->name, "%s", #name);
    FP4LR_DRIVER_ENTRIES(ASSERT_RESOLVED_)
#undef ASSERT_RESOLVED_
    cr_assert_eq(FP4LR_DRIVER_ENTRY_COUNT, 45);
    cr_assert_eq(ctx->drv->via_proc_address, FP4LR_DRIVER_ENTRY_COUNT);
    fp4lr_ctx_destroy(ctx);
}

Test(gpu_env, missing_ordinal_is_no_device)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
    fp4lr_ctx_destroy(ctx);
    fp4lr_ctx *other = (fp4lr_ctx *)0x1;
    fp4lr_status s = fp4lr_ctx_create(4096, &other);
    cr_assert_eq(s.code, FP4LR_E_NO_DEVICE, "%s", s.msg);
    cr_assert_str_eq(s.rule, "device_ordinal");
    assert_has(s.msg, "4096");
    cr_assert_null(other);
}

Test(gpu_env, destroying_one_context_leaves_another_usable)
{
    fp4lr_ctx *first = tsupport_gpu_ctx_or_skip();
    fp4lr_ctx *second = NULL;
    assert_ok(fp4lr_ctx_create(first->ordinal, &second));
    cr_assert_eq(first->ctx, second->ctx, "both hold the device's primary context");
    fp4lr_ctx_destroy(first);
    CUdeviceptr d = 0;
    uint32_t v = 0x12345678, back = 0;
    assert_ok(fp4lr_dev_alloc(second, &d, 4));
    assert_ok(fp4lr_dev_upload(second, d, &v, 4));
    assert_ok(fp4lr_dev_download(second, &back, d, 4));
    cr_assert_eq(back, v);
    assert_ok(fp4lr_dev_free(second, d));
    fp4lr_ctx_destroy(second);
}

Test(gpu_env, upload_download_round_trip)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
    const size_t n = 1 << 20;
    uint8_t *src = malloc(n), *dst = malloc(n);
    for (size_t i = 0; i < n; ++i)
        src[i] = (uint8_t)(i * 131u + 7u);
    memset(dst, 0, n);
    CUdeviceptr d = 0, copy = 0;
    assert_ok(fp4lr_dev_alloc(ctx, &d, n));
    assert_ok(fp4lr_dev_alloc(ctx, &copy, n));
    cr_assert_neq(d, 0);
    assert_ok(fp4lr_dev_upload(ctx, d, src, n));
    cr_assert_eq(ctx->drv->cuMemcpyDtoD(copy, d, n), CUDA_SUCCESS);
    assert_ok(fp4lr_dev_download(ctx, dst, copy, n));
    cr_assert_eq(memcmp(src, dst, n), 0);
    assert_ok(fp4lr_dev_memset(ctx, d, 0xA5, 4096));
    assert_ok(fp4lr_dev_download(ctx, dst, d, 4096));
    for (size_t i = 0; i < 4096; ++i)
        cr_assert_eq(dst[i], 0xA5, "byte %zu", i);
    assert_ok(fp4lr_dev_free(ctx, d));
    assert_ok(fp4lr_dev_free(ctx, copy));
    free(src);
    free(dst);
    fp4lr_ctx_destroy(ctx);
}

Test(gpu_env, poison_pattern_reads_back)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
    const size_t bytes = 4096;
    CUdeviceptr d = 0;
    assert_ok(fp4lr_dev_alloc(ctx, &d, bytes));
    uint16_t h16[2048];
    uint32_t h32[1024];
    assert_ok(fp4lr_dev_poison_nan(ctx, d, bytes, 2));
    assert_ok(fp4lr_dev_download(ctx, h16, d, bytes));
    for (int i = 0; i < 2048; ++i)
        cr_assert_eq(h16[i], FP4LR_POISON_16, "element %d is 0x%04x", i, h16[i]);
    assert_ok(fp4lr_dev_poison_nan(ctx, d, bytes, 4));
    assert_ok(fp4lr_dev_download(ctx, h32, d, bytes));
    for (int i = 0; i < 1024; ++i)
        cr_assert_eq(h32[i], FP4LR_POISON_32, "element %d is 0x%08x", i, h32[i]);
    assert_ok(fp4lr_dev_free(ctx, d));
    fp4lr_ctx_destroy(ctx);
}

/* 64 rows of 256 bytes, copied in boxes of 128 x 64 with 128-byte swizzle. */
static fp4lr_tmap_desc uint8_desc(CUdeviceptr addr)
{
    fp4lr_tmap_desc d = {
        .dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8, .rank = 2, .addr = addr,
        .dims = {256, 64}, .strides = {256}, .box = {128, 64}, .estrides = {1, 1},
        .interleave = CU_TENSOR_MAP_INTERLEAVE_NONE, .swizzle = CU_TENSOR_MAP_SWIZZLE_128B,
        .promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        .oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    };
    return d;
}

Test(gpu_env, tensor_map_encodes_a_device_buffer)
{
    fp4lr_ctx *ctx = tsupport_gpu_ctx_or_skip();
    if (ctx->cc_major < 9)
        cr_skip_test("tensor maps need compute capability 9.0, device has %d.%d", ctx->cc_major,
                     ctx->cc_minor);
    CUdeviceptr d = 0;
    assert_ok(fp4lr_dev_alloc(ctx, &d, 256 * 64));
    CUtensorMap map;
    memset(&map, 0, sizeof map);
    fp4lr_tmap_desc desc = uint8_desc(d);
    assert_ok(fp4lr_tmap_encode(ctx, &map, &desc));
    int nonzero = 0;
    for (int i = 0; i < CU_TENSOR_MAP_NUM_QWORDS; ++i)
        nonzero |= map.opaque[i] != 0;
    cr_assert(nonzero, "the encoded map is all zeros");

    /* A misaligned address is stopped before the driver, with every argument. */
    desc.addr = d + 8;
    fp4lr_status s = fp4lr_tmap_encode(ctx, &map, &desc);
    cr_assert_eq(s.code, FP4LR_E_INVALID, "%s", s.msg);
    cr_assert_str_eq(s.rule, "tmap_address_align");
    assert_has(s.msg, "dtype=UINT8 rank=2");
    assert_has(s.msg, "dims={256,64} strides={256} box={128,64} estrides={1,1} interleave=NONE "
                      "swizzle=128B promotion=L2_128B fill=NONE");
    assert_ok(fp4lr_dev_free(ctx, d));
    fp4lr_ctx_destroy(ctx);
}

Test(gpu_env, tensor_map_driver_rejection_lists_every_argument)
{
    /* The packed 4-bit type passes the documented rules, but sm_90 drivers
     * reject it (facts sm90a-hopper.md §4.2, seen on the H200). */
    fp4lr_ctx *ctx = sm90a_ctx();
    CUdeviceptr d = 0;
    assert_ok(fp4lr_dev_alloc(ctx, &d, 128 * 64));
    fp4lr_tmap_desc desc = uint8_desc(d);
    desc.dtype = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B;
    desc.dims[0] = 256; /* 4-bit elements: 128 bytes a row */
    desc.strides[0] = 128;
    desc.box[0] = 128;
    desc.box[1] = 8;
    desc.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    cr_assert_eq(fp4lr_tmap_validate(&desc).code, FP4LR_OK, "%s", fp4lr_tmap_validate(&desc).msg);
    CUtensorMap map;
    fp4lr_status s = fp4lr_tmap_encode(ctx, &map, &desc);
    cr_assert_eq(s.code, FP4LR_E_DRIVER, "%s: %s", fp4lr_code_name(s.code), s.msg);
    cr_assert_str_eq(s.rule, "CUDA_ERROR_INVALID_VALUE", "%s", s.msg);
    assert_has(s.msg, "cuTensorMapEncodeTiled");
    char addr[32];
    snprintf(addr, sizeof addr, "addr=0x%llx", (unsigned long long)d);
    assert_has(s.msg, addr);
    assert_has(s.msg, "dtype=16U4_ALIGN8B rank=2");
    assert_has(s.msg, "dims={256,64} strides={128} box={128,8} estrides={1,1} interleave=NONE "
                      "swizzle=NONE promotion=L2_128B fill=NONE");
    assert_ok(fp4lr_dev_free(ctx, d));
    fp4lr_ctx_destroy(ctx);
}

Test(gpu_env, ptx_from_memory_launches_and_reads_back)
{
    /* A PTX the driver serves from its JIT cache comes with an empty info
     * log: compile afresh (read at cuInit, and each test is a process). */
    setenv("CUDA_CACHE_DISABLE", "1", 1);
    fp4lr_ctx *ctx = sm90a_ctx();
    fp4lr_module m;
    fp4lr_jit_log *log = malloc(sizeof *log);
    load_test_module(ctx, &m, log);
    assert_has(log->info, "Used");
    CUfunction f;
    assert_ok(fp4lr_module_function(&m, "fp4lr_test_iota", &f));
    fp4lr_func_expect expect = {.max_regs = 255, .dyn_smem = 0, .max_static_smem = 0,
                                .threads = 128};
    fp4lr_func_info info;
    assert_ok(fp4lr_func_prepare(ctx, f, "fp4lr_test_iota", &expect, &info));
    cr_assert_gt(info.num_regs, 0);
    cr_assert_eq(info.local_bytes, 0);
    cr_assert_eq(info.binary_version, 90);

    const unsigned grid[3] = {4, 1, 1}, block[3] = {128, 1, 1};
    const size_t n = 4 * 128;
    CUdeviceptr out = 0;
    assert_ok(fp4lr_dev_alloc(ctx, &out, n * 4));
    assert_ok(fp4lr_dev_poison_nan(ctx, out, n * 4, 4));
    void *params[] = {&out};
    uint32_t host[4 * 128];
    /* Once plain, once as clusters of 2: the same result. */
    for (unsigned cluster = 1; cluster <= 2; ++cluster) {
        assert_ok(fp4lr_dev_poison_nan(ctx, out, n * 4, 4));
        assert_ok(fp4lr_launch(ctx, f, grid, block, 0, cluster, NULL, params));
        assert_ok(fp4lr_ctx_sync(ctx));
        assert_ok(fp4lr_dev_download(ctx, host, out, n * 4));
        for (size_t i = 0; i < n; ++i)
            cr_assert_eq(host[i], i % 128, "cluster %u: out[%zu] = 0x%x", cluster, i, host[i]);
    }
    assert_ok(fp4lr_dev_free(ctx, out));
    assert_ok(fp4lr_module_unload(&m));
    cr_assert_null(m.handle);
    free(log);
    fp4lr_ctx_destroy(ctx);
}

Test(gpu_env, large_dynamic_shared_memory_and_occupancy)
{
    fp4lr_ctx *ctx = sm90a_ctx();
    fp4lr_module m;
    load_test_module(ctx, &m, NULL);
    CUfunction f;
    assert_ok(fp4lr_module_function(&m, "fp4lr_test_iota", &f));
    /* Above the 48 KB default: needs the attribute fp4lr_func_prepare sets. */
    int dyn = ctx->max_smem_optin;
    fp4lr_func_expect expect = {.max_regs = 255, .dyn_smem = dyn, .max_static_smem = 0,
                                .threads = 128};
    assert_ok(fp4lr_func_prepare(ctx, f, "fp4lr_test_iota", &expect, NULL));
    const unsigned block[3] = {128, 1, 1};
    int ctas1 = 0, ctas2 = 0;
    assert_ok(fp4lr_occupancy_grid(ctx, f, block, (unsigned)dyn, 1, &ctas1));
    assert_ok(fp4lr_occupancy_grid(ctx, f, block, (unsigned)dyn, 2, &ctas2));
    /* With all of the opt-in shared memory, one CTA per SM. */
    cr_assert_eq(ctas1, ctx->sm_count);
    cr_assert_gt(ctas2, 0);
    cr_assert_eq(ctas2 % 2, 0);
    cr_assert_leq(ctas2, ctx->sm_count);
    cr_log_info("occupancy at %d B dynamic smem: %d CTAs, %d in clusters of 2", dyn, ctas1, ctas2);

    const unsigned grid[3] = {(unsigned)ctas2, 1, 1};
    CUdeviceptr out = 0;
    size_t n = (size_t)ctas2 * 128;
    assert_ok(fp4lr_dev_alloc(ctx, &out, n * 4));
    void *params[] = {&out};
    assert_ok(fp4lr_launch(ctx, f, grid, block, (unsigned)dyn, 2, NULL, params));
    assert_ok(fp4lr_ctx_sync(ctx));
    uint32_t last = 0;
    assert_ok(fp4lr_dev_download(ctx, &last, out + (n - 1) * 4, 4));
    cr_assert_eq(last, 127);
    assert_ok(fp4lr_dev_free(ctx, out));
    assert_ok(fp4lr_module_unload(&m));
    fp4lr_ctx_destroy(ctx);
}

Test(gpu_env, ptx_file_loads_with_static_shared_memory)
{
    fp4lr_ctx *ctx = sm90a_ctx();
    char path[] = "/tmp/fp4lr-test-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, test_ptx, strlen(test_ptx)), (ssize_t)strlen(test_ptx));
    close(fd);
    fp4lr_module m;
    fp4lr_status s = fp4lr_module_load_file(ctx, path, &m, NULL);
    unlink(path);
    assert_ok(s);
    cr_assert_str_eq(m.origin, path);
    CUfunction f;
    assert_ok(fp4lr_module_function(&m, "fp4lr_test_smem", &f));
    fp4lr_func_info info;
    assert_ok(fp4lr_func_info_query(ctx, f, &info));
    cr_assert_eq(info.static_smem, 1024);

    const unsigned grid[3] = {1, 1, 1}, block[3] = {256, 1, 1};
    CUdeviceptr out = 0;
    assert_ok(fp4lr_dev_alloc(ctx, &out, 256 * 4));
    void *params[] = {&out};
    assert_ok(fp4lr_launch(ctx, f, grid, block, 0, 1, NULL, params));
    assert_ok(fp4lr_ctx_sync(ctx));
    uint32_t host[256];
    assert_ok(fp4lr_dev_download(ctx, host, out, sizeof host));
    for (unsigned i = 0; i < 256; ++i)
        cr_assert_eq(host[i], i);
    assert_ok(fp4lr_dev_free(ctx, out));
    assert_ok(fp4lr_module_unload(&m));
    fp4lr_ctx_destroy(ctx);
}

Test(gpu_env, ptx_syntax_error_is_jit_with_the_log)
{
    fp4lr_ctx *ctx = sm90a_ctx();
    /* "stt" is no instruction. */
    char *bad = strdup(test_ptx);
    char *st = strstr(bad, "st.global.u32");
    cr_assert_not_null(st);
    memcpy(st, "sx", 2);
    fp4lr_module m;
    fp4lr_jit_log *log = malloc(sizeof *log);
    fp4lr_status s = fp4lr_module_load_image(ctx, bad, "inline:bad_ptx", &m, log);
    cr_assert_eq(s.code, FP4LR_E_JIT, "%s: %s", fp4lr_code_name(s.code), s.msg);
    cr_assert_neq(s.cu_result, 0);
    assert_has(s.msg, "inline:bad_ptx");
    assert_has(s.msg, "sx");
    assert_has(log->error, "sx");
    cr_log_info("JIT failure reported as: %s", s.msg);
    cr_assert_null(m.handle);
    free(log);
    free(bad);
    fp4lr_ctx_destroy(ctx);
}

Test(gpu_env, missing_entry_is_named)
{
    fp4lr_ctx *ctx = sm90a_ctx();
    fp4lr_module m;
    load_test_module(ctx, &m, NULL);
    CUfunction f;
    fp4lr_status s = fp4lr_module_function(&m, "fp4lr_test_absent", &f);
    cr_assert_eq(s.code, FP4LR_E_UNSUPPORTED, "%s", s.msg);
    cr_assert_str_eq(s.rule, "module_entry_missing");
    assert_has(s.msg, "'fp4lr_test_absent'");
    assert_has(s.msg, "'inline:test_ptx'");
    assert_ok(fp4lr_module_unload(&m));
    fp4lr_ctx_destroy(ctx);
}

Test(gpu_env, resource_mismatch_is_reported)
{
    fp4lr_ctx *ctx = sm90a_ctx();
    fp4lr_module m;
    load_test_module(ctx, &m, NULL);
    CUfunction f;
    assert_ok(fp4lr_module_function(&m, "fp4lr_test_smem", &f));

    fp4lr_func_expect expect = {.max_regs = 1, .dyn_smem = 0, .max_static_smem = 2048,
                                .threads = 256};
    fp4lr_status s = fp4lr_func_prepare(ctx, f, "fp4lr_test_smem", &expect, NULL);
    cr_assert_eq(s.code, FP4LR_E_RESOURCE, "%s", s.msg);
    cr_assert_str_eq(s.rule, "func_regs");
    assert_has(s.msg, "NUM_REGS");
    assert_has(s.msg, "expected <= 1");

    expect.max_regs = 255;
    expect.max_static_smem = 512;
    s = fp4lr_func_prepare(ctx, f, "fp4lr_test_smem", &expect, NULL);
    cr_assert_str_eq(s.rule, "func_static_smem", "%s", s.msg);
    assert_has(s.msg, "SHARED_SIZE_BYTES = 1024, expected <= 512");

    expect.max_static_smem = 1024;
    expect.dyn_smem = ctx->max_smem_optin; /* + 1024 static: one byte block too many */
    s = fp4lr_func_prepare(ctx, f, "fp4lr_test_smem", &expect, NULL);
    cr_assert_str_eq(s.rule, "func_smem_optin", "%s", s.msg);
    assert_ok(fp4lr_module_unload(&m));
    fp4lr_ctx_destroy(ctx);
}
