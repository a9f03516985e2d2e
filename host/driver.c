/* Opening the CUDA driver library, resolving its entry table, and turning
 * CUresult values into statuses. */
#include "driver.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One row per entry point: the names to resolve, the ABI, the table slot. */
typedef struct driver_entry {
    const char *name;   /* base name, as cuGetProcAddress wants it */
    const char *symbol; /* exported name of that ABI, for dlsym */
    int abi;            /* CUDA version of the ABI the slot's type describes */
    size_t offset;      /* position of the slot in fp4lr_driver */
} driver_entry;

/* #name is not macro-expanded (the base name); offsetof sees the same
 * cuda.h-renamed field name as the struct declaration. */
#define DRIVER_ROW_(name, abi, symbol) {#name, symbol, abi, offsetof(fp4lr_driver, name)},
static const driver_entry driver_entries[] = {FP4LR_DRIVER_ENTRIES(DRIVER_ROW_)};

static const char *default_library = "libcuda.so.1";

fp4lr_status fp4lr_driver_check_version(int version)
{
    if (version < FP4LR_DRIVER_MIN_VERSION)
        return fp4lr_fail(FP4LR_E_DRIVER_TOO_OLD, "driver_min_version",
                          "CUDA driver version %d (CUDA %d.%d) is too old: fp4lr needs >= %d "
                          "(CUDA %d.%d, the first to load sm_90a cubins)",
                          version, version / 1000, version % 1000 / 10, FP4LR_DRIVER_MIN_VERSION,
                          FP4LR_DRIVER_MIN_VERSION / 1000, FP4LR_DRIVER_MIN_VERSION % 1000 / 10);
    return fp4lr_ok();
}

/* Resolves one entry: cuGetProcAddress at the entry's ABI version first (when
 * the driver has it), else dlsym of the versioned exported name. */
static void *resolve_entry(void *lib, PFN_cuGetProcAddress_v12000 get_proc, const driver_entry *e,
                           int *via_proc_address)
{
    if (get_proc) {
        void *fn = NULL;
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        CUresult r = get_proc(e->name, &fn, e->abi, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);
        if (r == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS && fn) {
            ++*via_proc_address;
            return fn;
        }
    }
    return dlsym(lib, e->symbol);
}

/* Version check and entry resolution on an opened library. */
static fp4lr_status driver_load(fp4lr_driver *drv)
{
    PFN_cuDriverGetVersion_v2020 get_version =
        (PFN_cuDriverGetVersion_v2020)dlsym(drv->lib, "cuDriverGetVersion");
    if (!get_version)
        return fp4lr_fail(FP4LR_E_NO_DRIVER, "driver_not_cuda",
                          "no CUDA driver: '%s' has no cuDriverGetVersion, it is not a CUDA "
                          "driver library", drv->path);

    int version = 0;
    CUresult r = get_version(&version);
    if (r == CUDA_ERROR_STUB_LIBRARY)
        return fp4lr_fail(FP4LR_E_NO_DRIVER, "driver_stub",
                          "no CUDA driver: '%s' is the CUDA toolkit's stub library "
                          "(no NVIDIA driver is installed)", drv->path);
    if (r != CUDA_SUCCESS)
        return fp4lr_fail(FP4LR_E_NO_DRIVER, "driver_version",
                          "no CUDA driver: cuDriverGetVersion of '%s' failed with CUresult %d",
                          drv->path, (int)r);
    drv->version = version;
    FP4LR_TRY(fp4lr_driver_check_version(version));

    /* cuGetProcAddress_v2 exists from CUDA 12.0; a driver without it still
     * exports every versioned name. */
    PFN_cuGetProcAddress_v12000 get_proc =
        (PFN_cuGetProcAddress_v12000)dlsym(drv->lib, "cuGetProcAddress_v2");
    size_t n = sizeof driver_entries / sizeof driver_entries[0];
    for (size_t i = 0; i < n; ++i) {
        const driver_entry *e = &driver_entries[i];
        void *fn = resolve_entry(drv->lib, get_proc, e, &drv->via_proc_address);
        if (!fn)
            return fp4lr_fail(FP4LR_E_DRIVER_TOO_OLD, "driver_entry_missing",
                              "CUDA driver %d at '%s' has no %s (ABI %d, symbol %s)", version,
                              drv->path, e->name, e->abi, e->symbol);
        memcpy((char *)drv + e->offset, &fn, sizeof fn);
    }
    return fp4lr_ok();
}

fp4lr_status fp4lr_driver_open(fp4lr_driver **out)
{
    if (!out)
        return fp4lr_fail(FP4LR_E_INVALID, "null_argument", "fp4lr_driver_open: out is NULL");
    *out = NULL;

    const char *path = getenv("FP4LR_LIBCUDA");
    if (!path || !*path)
        path = default_library;

    /* RTLD_NODELETE: strings the driver returns (error names held in
     * statuses) must outlive fp4lr_driver_close. */
    dlerror();
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) {
        const char *why = dlerror();
        return fp4lr_fail(FP4LR_E_NO_DRIVER, "driver_dlopen",
                          "no CUDA driver: cannot open '%s': %s", path,
                          why ? why : "dlopen gave no reason");
    }

    fp4lr_driver *drv = calloc(1, sizeof *drv);
    if (!drv) {
        dlclose(lib);
        return fp4lr_fail(FP4LR_E_NOMEM, "host_alloc", "cannot allocate the driver table");
    }
    drv->lib = lib;
    snprintf(drv->path, sizeof drv->path, "%s", path);

    fp4lr_status s = driver_load(drv);
    if (s.code != FP4LR_OK) {
        fp4lr_driver_close(drv);
        return s;
    }
    *out = drv;
    return fp4lr_ok();
}

void fp4lr_driver_close(fp4lr_driver *drv)
{
    if (!drv)
        return;
    if (drv->lib)
        dlclose(drv->lib);
    free(drv);
}

const char *fp4lr_cu_name(const fp4lr_driver *drv, CUresult res)
{
    const char *name = NULL;
    if (drv && drv->cuGetErrorName && drv->cuGetErrorName(res, &name) == CUDA_SUCCESS && name)
        return name;
    return "CUDA_ERROR_UNNAMED";
}

fp4lr_status fp4lr_cu_status(const fp4lr_driver *drv, CUresult res, const char *expr,
                             const char *file, int line)
{
    const char *name = fp4lr_cu_name(drv, res);
    const char *text = NULL;
    if (!(drv && drv->cuGetErrorString && drv->cuGetErrorString(res, &text) == CUDA_SUCCESS && text))
        text = "no description from the driver";
    /* A kernel that stopped: fp4lr's sm_90a kernels trap when a wait passes their watchdog
     * (ptx/sm90a/README.md), which the driver reports as this one error. */
    const char *hint = res == CUDA_ERROR_LAUNCH_FAILED
                           ? "; a kernel stopped (fp4lr's kernels trap when a wait passes their 4 s watchdog: "
                             "ptx/sm90a/README.md), and the context cannot be used again"
                           : "";
    fp4lr_status s = fp4lr_fail(FP4LR_E_DRIVER, name, "%s failed: %s (%d: %s) at %s:%d%s",
                                expr ? expr : "(driver call)", name, (int)res, text,
                                file ? file : "?", line, hint);
    s.cu_result = (int)res;
    return s;
}
