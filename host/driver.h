/* The CUDA driver, opened at run time.
 *
 * Nothing in fp4lr links -lcuda: libcuda.so.1 is opened with dlopen (the path
 * can be overridden with the environment variable FP4LR_LIBCUDA) and every
 * entry point the project uses is resolved once into an fp4lr_driver table of
 * typed function pointers.  Every binary therefore starts on a machine without
 * a driver and reports that as a status.
 *
 * Driver errors become statuses through ONE macro, FP4LR_CU, defined here. */
#ifndef FP4LR_DRIVER_H
#define FP4LR_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>

#include "status.h"

/* Oldest driver fp4lr accepts: CUDA 12.0, the first to load sm_90a cubins and
 * to provide cuTensorMapEncodeTiled. */
#define FP4LR_DRIVER_MIN_VERSION 12000

/* Every entry point, as X(name, abi, symbol).
 * - `abi` is the CUDA version whose ABI the PFN_<name>_v<abi> typedef of
 *   cudaTypedefs.h describes; it is also the version asked of
 *   cuGetProcAddress, so a newer driver never hands back a later ABI (asked at
 *   13000, cuCtxSynchronize would take a context argument).
 * - `symbol` is the exported name of that ABI, for the dlsym fallback.
 * cuda.h renames some names with macros (cuMemAlloc -> cuMemAlloc_v2); the
 * rename applies alike wherever a field is named, so drv->cuMemAlloc works. */
#define FP4LR_DRIVER_ENTRIES(X)                                                                         \
    X(cuGetErrorName, 6000, "cuGetErrorName")                                                           \
    X(cuGetErrorString, 6000, "cuGetErrorString")                                                       \
    X(cuInit, 2000, "cuInit")                                                                           \
    X(cuDriverGetVersion, 2020, "cuDriverGetVersion")                                                   \
    X(cuDeviceGetCount, 2000, "cuDeviceGetCount")                                                       \
    X(cuDeviceGet, 2000, "cuDeviceGet")                                                                 \
    X(cuDeviceGetName, 2000, "cuDeviceGetName")                                                         \
    X(cuDeviceGetAttribute, 2000, "cuDeviceGetAttribute")                                               \
    X(cuDevicePrimaryCtxRetain, 7000, "cuDevicePrimaryCtxRetain")                                       \
    X(cuDevicePrimaryCtxRelease, 11000, "cuDevicePrimaryCtxRelease_v2")                                 \
    X(cuCtxSetCurrent, 4000, "cuCtxSetCurrent")                                                         \
    X(cuCtxSynchronize, 2000, "cuCtxSynchronize")                                                       \
    X(cuModuleLoadDataEx, 2010, "cuModuleLoadDataEx")                                                   \
    X(cuModuleUnload, 2000, "cuModuleUnload")                                                           \
    X(cuModuleGetFunction, 2000, "cuModuleGetFunction")                                                 \
    X(cuModuleGetGlobal, 3020, "cuModuleGetGlobal_v2")                                                  \
    X(cuFuncGetAttribute, 2020, "cuFuncGetAttribute")                                                   \
    X(cuFuncSetAttribute, 9000, "cuFuncSetAttribute")                                                   \
    X(cuTensorMapEncodeTiled, 12000, "cuTensorMapEncodeTiled")                                          \
    X(cuLaunchKernelEx, 11060, "cuLaunchKernelEx")                                                      \
    X(cuOccupancyMaxActiveClusters, 11070, "cuOccupancyMaxActiveClusters")                              \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050, "cuOccupancyMaxActiveBlocksPerMultiprocessor") \
    X(cuMemAlloc, 3020, "cuMemAlloc_v2")                                                                \
    X(cuMemFree, 3020, "cuMemFree_v2")                                                                  \
    X(cuMemcpyHtoD, 3020, "cuMemcpyHtoD_v2")                                                            \
    X(cuMemcpyHtoDAsync, 3020, "cuMemcpyHtoDAsync_v2")                                                  \
    X(cuMemcpyDtoH, 3020, "cuMemcpyDtoH_v2")                                                            \
    X(cuMemcpyDtoD, 3020, "cuMemcpyDtoD_v2")                                                            \
    X(cuMemcpy2DAsync, 3020, "cuMemcpy2DAsync_v2")                                                      \
    X(cuMemsetD8, 3020, "cuMemsetD8_v2")                                                                \
    X(cuMemsetD16, 3020, "cuMemsetD16_v2")                                                              \
    X(cuMemsetD32, 3020, "cuMemsetD32_v2")                                                              \
    X(cuMemsetD8Async, 3020, "cuMemsetD8Async")                                                         \
    X(cuMemsetD32Async, 3020, "cuMemsetD32Async")                                                       \
    X(cuStreamIsCapturing, 10000, "cuStreamIsCapturing")                                                \
    X(cuStreamCreate, 2000, "cuStreamCreate")                                                           \
    X(cuStreamDestroy, 4000, "cuStreamDestroy_v2")                                                      \
    X(cuStreamSynchronize, 2000, "cuStreamSynchronize")                                                 \
    X(cuEventCreate, 2000, "cuEventCreate")                                                             \
    X(cuEventRecord, 2000, "cuEventRecord")                                                             \
    X(cuStreamWaitEvent, 3020, "cuStreamWaitEvent")                                                     \
    X(cuEventSynchronize, 2000, "cuEventSynchronize")                                                   \
    X(cuEventElapsedTime, 2000, "cuEventElapsedTime")                                                   \
    X(cuEventDestroy, 4000, "cuEventDestroy_v2")                                                        \
    X(cuMemGetInfo, 3020, "cuMemGetInfo_v2")

#define FP4LR_DRIVER_FIELD_(name, abi, symbol) PFN_##name##_v##abi name;
#define FP4LR_DRIVER_COUNT_(name, abi, symbol) +1
/* How many entry points the table holds. */
#define FP4LR_DRIVER_ENTRY_COUNT (0 FP4LR_DRIVER_ENTRIES(FP4LR_DRIVER_COUNT_))

/* The resolved driver.  A hand-filled table (lib == NULL) is valid too: the
 * CPU tests build one from fake functions. */
typedef struct fp4lr_driver {
    void *lib;           /* dlopen handle; NULL for a hand-filled table */
    char path[512];      /* the library that was opened */
    int version;         /* cuDriverGetVersion, e.g. 13000 */
    int via_proc_address;/* entries resolved through cuGetProcAddress (the rest by dlsym) */
    FP4LR_DRIVER_ENTRIES(FP4LR_DRIVER_FIELD_)
} fp4lr_driver;

/* Opens the driver library ($FP4LR_LIBCUDA, else "libcuda.so.1"), checks its
 * version and resolves every entry.  Does not call cuInit.
 * FP4LR_E_NO_DRIVER: the library cannot be opened (message: path, dlerror), is
 *   not a CUDA driver, or is the toolkit's stub library;
 * FP4LR_E_DRIVER_TOO_OLD: version below FP4LR_DRIVER_MIN_VERSION, or an entry
 *   point is missing. */
fp4lr_status fp4lr_driver_open(fp4lr_driver **out);
/* Releases the table (NULL is fine).  The library stays mapped (RTLD_NODELETE)
 * so that driver strings held in statuses stay valid. */
void fp4lr_driver_close(fp4lr_driver *drv);

/* The version rule alone: FP4LR_E_DRIVER_TOO_OLD naming the version found and
 * the one needed, or success. */
fp4lr_status fp4lr_driver_check_version(int version);

/* The status for a failed driver call: FP4LR_E_DRIVER, cu_result = res, rule =
 * the enum name (looked up through drv->cuGetErrorName), and a message with the
 * expression text, the enum name, the driver's message and file:line.
 * drv may be NULL (the name is then unknown). */
fp4lr_status fp4lr_cu_status(const fp4lr_driver *drv, CUresult res, const char *expr,
                             const char *file, int line);

/* The enum name of a CUresult through the table ("CUDA_ERROR_INVALID_VALUE"), or
 * "CUDA_ERROR_UNNAMED" when the driver has no name for it. */
const char *fp4lr_cu_name(const fp4lr_driver *drv, CUresult res);

/* Evaluates a driver call; on failure returns the fp4lr_cu_status of it from
 * the enclosing function (which must return fp4lr_status). */
#define FP4LR_CU(drv, expr)                                                        \
    do {                                                                           \
        CUresult fp4lr_cu_res_ = (expr);                                           \
        if (fp4lr_cu_res_ != CUDA_SUCCESS)                                         \
            return fp4lr_cu_status((drv), fp4lr_cu_res_, #expr, __FILE__, __LINE__); \
    } while (0)

#endif
