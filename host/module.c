/* Loading modules through cuModuleLoadDataEx, entry lookup, and the
 * function resource checks. */
#include "module.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *fp4lr_kernel_dir(const char *dir)
{
    const char *env = getenv("FP4LR_KERNEL_DIR");
    if (env && *env)
        return env;
    if (dir && *dir)
        return dir;
    return FP4LR_KERNEL_DIR_DEFAULT;
}

fp4lr_status fp4lr_module_path(char *out, size_t cap, const char *dir, const char *arch,
                               const char *name, const char *ext)
{
    if (!out || !cap || !arch || !*arch || !name || !*name)
        return fp4lr_fail(FP4LR_E_INVALID, "null_argument",
                          "fp4lr_module_path needs an output buffer, an arch and a name");
    const char *kdir = fp4lr_kernel_dir(dir);
    int n = snprintf(out, cap, "%s/%s/%s.%s", kdir, arch, name, ext ? ext : "cubin");
    if (n < 0 || (size_t)n >= cap) {
        out[0] = '\0';
        return fp4lr_fail(FP4LR_E_INVALID, "path_too_long",
                          "module path %s/%s/%s.%s needs %d bytes, the buffer holds %zu", kdir,
                          arch, name, ext ? ext : "cubin", n + 1, cap);
    }
    return fp4lr_ok();
}

/* Drops trailing newlines and spaces a JIT log ends with. */
static void trim_log(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = '\0';
}

/* The JIT failure status: the log first (it is what the reader needs), then
 * the driver's error with expression and file:line. */
static fp4lr_status jit_failure(const fp4lr_driver *drv, CUresult r, const char *origin,
                                const fp4lr_jit_log *log, int line)
{
    fp4lr_status c = fp4lr_cu_status(drv, r, "drv->cuModuleLoadDataEx(&handle, image, ...)",
                                     __FILE__, line);
    const char *text = *log->error ? log->error : *log->info ? log->info : "(empty)";
    fp4lr_status s = fp4lr_fail(FP4LR_E_JIT, c.rule, "cannot load module '%s': %s; JIT log: %s [%s]",
                                origin, c.rule, text, c.msg);
    s.cu_result = c.cu_result;
    return s;
}

fp4lr_status fp4lr_module_load_image(const fp4lr_ctx *ctx, const void *image, const char *origin,
                                     fp4lr_module *out, fp4lr_jit_log *log)
{
    if (!out || !image)
        return fp4lr_fail(FP4LR_E_INVALID, "null_argument",
                          "fp4lr_module_load_image needs an image and an output module");
    memset(out, 0, sizeof *out);
    out->ctx = ctx;
    snprintf(out->origin, sizeof out->origin, "%s", origin ? origin : "(memory)");

    /* The logs need a home even when the caller wants none. */
    fp4lr_jit_log *own = NULL;
    if (!log) {
        own = malloc(sizeof *own);
        if (!own)
            return fp4lr_fail(FP4LR_E_NOMEM, "host_alloc", "cannot allocate the JIT log");
        log = own;
    }
    log->info[0] = log->error[0] = '\0';
    log->wall_ms = 0.0f;

    /* Scalar option values travel in the pointer slot itself; the driver
     * writes the bytes used and the wall time back into their slots. */
    CUjit_option opts[] = {
        CU_JIT_INFO_LOG_BUFFER,  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        CU_JIT_LOG_VERBOSE,      CU_JIT_WALL_TIME,
    };
    void *vals[] = {
        log->info,  (void *)(uintptr_t)sizeof log->info,
        log->error, (void *)(uintptr_t)sizeof log->error,
        (void *)(uintptr_t)1, NULL,
    };
    const fp4lr_driver *drv = ctx->drv;
    CUresult r = drv->cuModuleLoadDataEx(&out->handle, image, (unsigned)(sizeof opts / sizeof opts[0]),
                                         opts, vals);
    log->info[sizeof log->info - 1] = log->error[sizeof log->error - 1] = '\0';
    trim_log(log->info);
    trim_log(log->error);
    memcpy(&log->wall_ms, &vals[5], sizeof log->wall_ms);

    fp4lr_status s = r == CUDA_SUCCESS ? fp4lr_ok() : jit_failure(drv, r, out->origin, log, __LINE__);
    if (r != CUDA_SUCCESS)
        out->handle = NULL;
    free(own);
    return s;
}

/* Reads a whole file and appends a NUL (PTX must be NUL-terminated; a cubin
 * ignores the extra byte). */
static fp4lr_status read_file(const char *path, char **data)
{
    *data = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return fp4lr_fail(FP4LR_E_IO, "module_file", "cannot open module file '%s': %s", path,
                          strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len - 1, f);
        if (len < cap - 1)
            break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf)
        return fp4lr_fail(FP4LR_E_NOMEM, "host_alloc", "cannot hold module file '%s'", path);
    if (bad || len == 0) {
        free(buf);
        return fp4lr_fail(FP4LR_E_IO, "module_file", "cannot read module file '%s': %s", path,
                          bad ? "read error" : "the file is empty");
    }
    buf[len] = '\0';
    *data = buf;
    return fp4lr_ok();
}

fp4lr_status fp4lr_module_load_file(const fp4lr_ctx *ctx, const char *path, fp4lr_module *out,
                                    fp4lr_jit_log *log)
{
    if (!path || !out)
        return fp4lr_fail(FP4LR_E_INVALID, "null_argument",
                          "fp4lr_module_load_file needs a path and an output module");
    memset(out, 0, sizeof *out);
    char *data = NULL;
    FP4LR_TRY(read_file(path, &data));
    fp4lr_status s = fp4lr_module_load_image(ctx, data, path, out, log);
    free(data);
    return s;
}

fp4lr_status fp4lr_module_load_cubin(const fp4lr_ctx *ctx, const char *dir, const char *name,
                                     fp4lr_module *out, fp4lr_jit_log *log)
{
    const char *arch = NULL;
    char path[512];
    FP4LR_TRY(fp4lr_ctx_arch(ctx, &arch));
    FP4LR_TRY(fp4lr_module_path(path, sizeof path, dir, arch, name, "cubin"));
    return fp4lr_module_load_file(ctx, path, out, log);
}

fp4lr_status fp4lr_module_unload(fp4lr_module *m)
{
    if (!m || !m->handle)
        return fp4lr_ok();
    CUmodule handle = m->handle;
    m->handle = NULL;
    FP4LR_CU(m->ctx->drv, m->ctx->drv->cuModuleUnload(handle));
    return fp4lr_ok();
}

fp4lr_status fp4lr_module_function(const fp4lr_module *m, const char *entry, CUfunction *out)
{
    if (!m || !m->handle || !entry || !out)
        return fp4lr_fail(FP4LR_E_INVALID, "null_argument",
                          "fp4lr_module_function needs a loaded module, an entry name and an output");
    *out = NULL;
    const fp4lr_driver *drv = m->ctx->drv;
    CUresult r = drv->cuModuleGetFunction(out, m->handle, entry);
    if (r == CUDA_ERROR_NOT_FOUND) {
        fp4lr_status s = fp4lr_fail(FP4LR_E_UNSUPPORTED, "module_entry_missing",
                                    "entry '%s' is not in module '%s' (%s)", entry, m->origin,
                                    fp4lr_cu_name(drv, r));
        s.cu_result = (int)r;
        return s;
    }
    if (r != CUDA_SUCCESS)
        return fp4lr_cu_status(drv, r, "drv->cuModuleGetFunction(out, m->handle, entry)",
                               __FILE__, __LINE__);
    return fp4lr_ok();
}

fp4lr_status fp4lr_func_info_query(const fp4lr_ctx *ctx, CUfunction f, fp4lr_func_info *info)
{
    const fp4lr_driver *drv = ctx->drv;
    const struct {
        CUfunction_attribute attr;
        int *slot;
    } rows[] = {
        {CU_FUNC_ATTRIBUTE_NUM_REGS, &info->num_regs},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &info->local_bytes},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &info->static_smem},
        {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, &info->const_bytes},
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &info->max_threads},
        {CU_FUNC_ATTRIBUTE_PTX_VERSION, &info->ptx_version},
        {CU_FUNC_ATTRIBUTE_BINARY_VERSION, &info->binary_version},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
        FP4LR_CU(drv, drv->cuFuncGetAttribute(rows[i].slot, rows[i].attr, f));
    return fp4lr_ok();
}

/* One resource rule: FP4LR_E_RESOURCE naming the attribute, found and expected. */
static fp4lr_status resource(const char *rule, const char *entry, const char *attribute, int found,
                             const char *relation, int expected, const char *why)
{
    return fp4lr_fail(FP4LR_E_RESOURCE, rule, "entry '%s': %s = %d, expected %s %d (%s)",
                      entry ? entry : "?", attribute, found, relation, expected, why);
}

fp4lr_status fp4lr_func_check(const fp4lr_ctx *ctx, const char *entry, const fp4lr_func_info *info,
                              const fp4lr_func_expect *e)
{
    if (e->max_regs <= 0 || e->dyn_smem < 0 || e->max_static_smem < 0 || e->threads <= 0)
        return fp4lr_fail(FP4LR_E_INVALID, "func_expect",
                          "entry '%s': malformed expectation max_regs=%d dyn_smem=%d "
                          "max_static_smem=%d threads=%d", entry ? entry : "?", e->max_regs,
                          e->dyn_smem, e->max_static_smem, e->threads);
    /* -DFP4LR_MEASURE_ALLOW_LOCAL (measurement builds only, e.g. the timeline variants of
     * kernels that spill with it): load a kernel with a stack frame anyway */
#ifndef FP4LR_MEASURE_ALLOW_LOCAL
    if (info->local_bytes != 0)
        return resource("func_local_memory", entry, "LOCAL_SIZE_BYTES", info->local_bytes, "==", 0,
                        "local memory means a stack frame or register spills");
#endif
    if (info->num_regs > e->max_regs)
        return resource("func_regs", entry, "NUM_REGS", info->num_regs, "<=", e->max_regs,
                        "registers per thread of the plan");
    if (info->static_smem > e->max_static_smem)
        return resource("func_static_smem", entry, "SHARED_SIZE_BYTES", info->static_smem, "<=",
                        e->max_static_smem, "static shared memory of the plan");
    long long total = (long long)info->static_smem + e->dyn_smem;
    if (total > ctx->max_smem_optin)
        return resource("func_smem_optin", entry, "SHARED_SIZE_BYTES + dynamic", (int)total, "<=",
                        ctx->max_smem_optin, "the device's opt-in shared memory per block");
    if (e->threads > info->max_threads)
        return resource("func_threads", entry, "MAX_THREADS_PER_BLOCK", info->max_threads, ">=",
                        e->threads, "threads per block of the launch");
    if (e->threads_exact && e->threads != info->max_threads)
        return resource("func_threads_exact", entry, "MAX_THREADS_PER_BLOCK", info->max_threads, "==",
                        e->threads, "threads per block of the launch: the kernel's warp roles "
                        "follow from its .maxntid");
    return fp4lr_ok();
}

fp4lr_status fp4lr_func_prepare(const fp4lr_ctx *ctx, CUfunction f, const char *entry,
                                const fp4lr_func_expect *expect, fp4lr_func_info *info_out)
{
    fp4lr_func_info info;
    memset(&info, 0, sizeof info);
    FP4LR_TRY(fp4lr_func_info_query(ctx, f, &info));
    if (info_out)
        *info_out = info;
    FP4LR_TRY(fp4lr_func_check(ctx, entry, &info, expect));
    const fp4lr_driver *drv = ctx->drv;
    FP4LR_CU(drv, drv->cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          expect->dyn_smem));
    return fp4lr_ok();
}
