/* Test support: the tensor-map half of a recording fake driver.
 *
 * CPU suites run the host launchers on an fp4lr_driver whose
 * cuTensorMapEncodeTiled is tsupport_fake_encode: it records every argument
 * of each encode and writes a tag into the map naming the record, so a test
 * can follow a map from the kernel parameter that carries it back to the
 * arguments that made it, and compare them with literal values
 * (tsupport_expect_map).  Each Criterion test runs in its own process, so the
 * record starts empty; tsupport_fake_maps_reset() empties it within a test.
 * Symbols are prefixed tsupport_. */
#ifndef FP4LR_TESTS_SUPPORT_FAKEDRV_H
#define FP4LR_TESTS_SUPPORT_FAKEDRV_H

#include <stdint.h>

#include "tensormap.h"

/* The arguments of one cuTensorMapEncodeTiled call. */
typedef struct tsupport_map {
    CUtensorMapDataType type;
    cuuint32_t rank;
    uint64_t addr;
    cuuint64_t dims[FP4LR_TMAP_MAX_RANK], strides[FP4LR_TMAP_MAX_RANK - 1];
    cuuint32_t box[FP4LR_TMAP_MAX_RANK], est[FP4LR_TMAP_MAX_RANK];
    CUtensorMapInterleave interleave;
    CUtensorMapSwizzle swizzle;
    CUtensorMapL2promotion promotion;
    CUtensorMapFloatOOBfill fill;
} tsupport_map;

/* One expected map of rank 2 or 3 (element strides 1, interleave and fill
 * NONE always; the address is given apart). */
typedef struct tsupport_want_map {
    CUtensorMapDataType type;
    cuuint32_t rank;
    cuuint64_t dims[3], strides[2];
    cuuint32_t box[3];
    CUtensorMapSwizzle swizzle;
    CUtensorMapL2promotion promotion;
} tsupport_want_map;

/* cuGetErrorName: "CUDA_SUCCESS", else "CUDA_ERROR_FAKE". */
CUresult tsupport_fake_error_name(CUresult r, const char **s);

/* cuTensorMapEncodeTiled: records the arguments and tags *m with the record. */
CUresult tsupport_fake_encode(CUtensorMap *m, CUtensorMapDataType t, cuuint32_t rank, void *addr,
                              const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                              const cuuint32_t *est, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                              CUtensorMapL2promotion pr, CUtensorMapFloatOOBfill fill);

/* How many maps were encoded since the start (or the last reset). */
int tsupport_fake_nmaps(void);

void tsupport_fake_maps_reset(void);

/* Expects the map whose bytes start at `param` (a kernel parameter named
 * `name`) to be encoded at `addr` as `w` says. */
void tsupport_expect_map(const void *param, const char *name, uint64_t addr, tsupport_want_map w);

/* The module half, for suites that run fp4lr_gemm on the fake driver: a kernel directory of
 * stand-in cubins (files starting "fake "), one module, one function. */
#define TSUPPORT_FAKE_FN ((CUfunction)0x100a)
#define TSUPPORT_FAKE_MODULE ((CUmodule)0x200a)
typedef struct tsupport_fake_module_rec {
    int loads, unloads;
    char function[128]; /* the entry cuModuleGetFunction was last asked for */
    int dyn_smem_set;   /* the last CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES set */
} tsupport_fake_module_rec;
/* The record of this test process (it starts zeroed). */
extern tsupport_fake_module_rec tsupport_fake_module;
/* cuModuleLoadDataEx (the image must be a stand-in), cuModuleUnload, cuModuleGetFunction,
 * cuFuncSetAttribute. */
CUresult tsupport_fake_load(CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v);
CUresult tsupport_fake_unload(CUmodule m);
CUresult tsupport_fake_get_function(CUfunction *f, CUmodule m, const char *name);
CUresult tsupport_fake_set_attr(CUfunction f, CUfunction_attribute a, int v);
/* The fp4lr_driver initializers of the calls above and the map recorder's. */
#define TSUPPORT_FAKE_DRIVER_ENTRIES                                                                  \
    .cuGetErrorName = tsupport_fake_error_name, .cuTensorMapEncodeTiled = tsupport_fake_encode,    \
    .cuModuleLoadDataEx = tsupport_fake_load, .cuModuleUnload = tsupport_fake_unload,               \
    .cuModuleGetFunction = tsupport_fake_get_function, .cuFuncSetAttribute = tsupport_fake_set_attr
/* cuStreamIsCapturing: no stream is ever captured. */
CUresult tsupport_fake_not_capturing(CUstream s, CUstreamCaptureStatus *status);
/* Writes the stand-in cubin of `entry` at <dir>/<arch>/<entry>.cubin (the directory made). */
void tsupport_fake_cubin(const char *dir, const char *arch, const char *entry);

#endif
