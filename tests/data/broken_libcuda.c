/* A CUDA driver library whose device is there but unusable, for the tools' tests
 * (tests/test_check_cli.c builds it with `cc -shared -fPIC` and points FP4LR_LIBCUDA at it).
 *
 * It reports driver 13000, cuInit, cuDeviceGetCount (one device) and cuDeviceGet succeed, and
 * every other entry point fp4lr resolves (through cuGetProcAddress_v2) fails with
 * CUDA_ERROR_OUT_OF_MEMORY (2): the context cannot be made.  That is neither "no driver" nor
 * "no device", so a tool must report it as an error, not fall back to its CPU-only dry run.
 * The failing entry ignores its arguments (the x86-64 C calling convention lets any call land
 * on it). */
#include <stddef.h>
#include <string.h>

typedef int CUresult;

CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
static CUresult ok_init(unsigned flags) { (void)flags; return 0; }
static CUresult one_device(int *n) { *n = 1; return 0; }
static CUresult device_zero(int *dev, int ordinal) { (void)ordinal; *dev = 0; return 0; }
static CUresult error_name(CUresult r, const char **s)
{
    *s = r == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_UNKNOWN";
    return 0;
}
static CUresult error_string(CUresult r, const char **s)
{
    *s = r == 2 ? "out of memory (the fake broken driver of tests/data/broken_libcuda.c)" : "unknown";
    return 0;
}
static CUresult out_of_memory(void) { return 2; }

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags, int *status)
{
    (void)version, (void)flags;
    void *f = (void *)out_of_memory;
    if (!strcmp(symbol, "cuInit"))
        f = (void *)ok_init;
    else if (!strcmp(symbol, "cuDeviceGetCount"))
        f = (void *)one_device;
    else if (!strcmp(symbol, "cuDeviceGet"))
        f = (void *)device_zero;
    else if (!strcmp(symbol, "cuGetErrorName"))
        f = (void *)error_name;
    else if (!strcmp(symbol, "cuGetErrorString"))
        f = (void *)error_string;
    *pfn = f;
    if (status)
        *status = 0; /* CU_GET_PROC_ADDRESS_SUCCESS */
    return 0;
}
