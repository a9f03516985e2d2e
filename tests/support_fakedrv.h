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

#endif
