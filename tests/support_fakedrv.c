/* Test support: the recording fake cuTensorMapEncodeTiled and its expectations, and the
 * fake module calls for suites that run fp4lr_gemm without a GPU. */
#include "support_fakedrv.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define MAP_TAG 0xF4F4000000000000ull
#define MAX_MAPS 16

/* The record of this test process (tests never share a process). */
static struct {
    tsupport_map maps[MAX_MAPS];
    int nmaps;
} rec;

CUresult tsupport_fake_error_name(CUresult r, const char **s)
{
    *s = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_FAKE";
    return CUDA_SUCCESS;
}

CUresult tsupport_fake_encode(CUtensorMap *m, CUtensorMapDataType t, cuuint32_t rank, void *addr,
                              const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                              const cuuint32_t *est, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                              CUtensorMapL2promotion pr, CUtensorMapFloatOOBfill fill)
{
    cr_assert_lt(rec.nmaps, MAX_MAPS);
    cr_assert_leq(rank, FP4LR_TMAP_MAX_RANK);
    tsupport_map *r = &rec.maps[rec.nmaps];
    memset(r, 0, sizeof *r);
    r->type = t, r->rank = rank, r->addr = (uint64_t)(uintptr_t)addr;
    for (cuuint32_t i = 0; i < rank; i++) {
        r->dims[i] = dims[i], r->box[i] = box[i], r->est[i] = est[i];
        if (i + 1 < rank)
            r->strides[i] = strides[i];
    }
    r->interleave = il, r->swizzle = sw, r->promotion = pr, r->fill = fill;
    memset(m, 0, sizeof *m);
    m->opaque[0] = MAP_TAG | (uint64_t)rec.nmaps++; /* which encode made this map */
    return CUDA_SUCCESS;
}

int tsupport_fake_nmaps(void)
{
    return rec.nmaps;
}

void tsupport_fake_maps_reset(void)
{
    memset(&rec, 0, sizeof rec);
}

void tsupport_expect_map(const void *param, const char *name, uint64_t addr, tsupport_want_map w)
{
    uint64_t tag;
    memcpy(&tag, param, sizeof tag);
    cr_assert_eq(tag & ~0xFFull, MAP_TAG, "%s holds no encoded map", name);
    const tsupport_map *m = &rec.maps[tag & 0xFF];
    cr_expect_eq(m->type, w.type, "%s: data type %d, want %d", name, (int)m->type, (int)w.type);
    cr_assert_eq(m->rank, w.rank, "%s: rank %u, want %u", name, m->rank, w.rank);
    cr_expect_eq(m->addr, addr, "%s: address", name);
    for (cuuint32_t i = 0; i < w.rank; i++) {
        cr_expect_eq(m->dims[i], w.dims[i], "%s: dims[%u] = %llu, want %llu", name, i,
                     (unsigned long long)m->dims[i], (unsigned long long)w.dims[i]);
        cr_expect_eq(m->box[i], w.box[i], "%s: box[%u] = %u, want %u", name, i, m->box[i], w.box[i]);
        cr_expect_eq(m->est[i], 1, "%s: element stride %u", name, i);
        if (i + 1 < w.rank)
            cr_expect_eq(m->strides[i], w.strides[i], "%s: strides[%u] = %llu, want %llu", name, i,
                         (unsigned long long)m->strides[i], (unsigned long long)w.strides[i]);
    }
    cr_expect_eq(m->swizzle, w.swizzle, "%s: swizzle %s, want %s", name, fp4lr_tmap_swizzle_name(m->swizzle),
                 fp4lr_tmap_swizzle_name(w.swizzle));
    cr_expect_eq(m->promotion, w.promotion, "%s: L2 promotion %s, want %s", name,
                 fp4lr_tmap_promotion_name(m->promotion), fp4lr_tmap_promotion_name(w.promotion));
    cr_expect_eq(m->interleave, CU_TENSOR_MAP_INTERLEAVE_NONE, "%s: interleave", name);
    cr_expect_eq(m->fill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, "%s: fill", name);
}

/* ---- modules ------------------------------------------------------------------------------ */

tsupport_fake_module_rec tsupport_fake_module;

CUresult tsupport_fake_load(CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v)
{
    (void)n, (void)o, (void)v;
    cr_expect_eq(strncmp(image, "fake ", 5), 0, "the library loaded a file that is not a stand-in");
    tsupport_fake_module.loads++;
    *m = TSUPPORT_FAKE_MODULE;
    return CUDA_SUCCESS;
}

CUresult tsupport_fake_unload(CUmodule m)
{
    cr_expect_eq(m, TSUPPORT_FAKE_MODULE);
    tsupport_fake_module.unloads++;
    return CUDA_SUCCESS;
}

CUresult tsupport_fake_get_function(CUfunction *f, CUmodule m, const char *name)
{
    cr_expect_eq(m, TSUPPORT_FAKE_MODULE);
    snprintf(tsupport_fake_module.function, sizeof tsupport_fake_module.function, "%s", name);
    *f = TSUPPORT_FAKE_FN;
    return CUDA_SUCCESS;
}

CUresult tsupport_fake_set_attr(CUfunction f, CUfunction_attribute a, int v)
{
    cr_expect_eq(f, TSUPPORT_FAKE_FN);
    if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        tsupport_fake_module.dyn_smem_set = v;
    return CUDA_SUCCESS;
}

CUresult tsupport_fake_not_capturing(CUstream s, CUstreamCaptureStatus *status)
{
    (void)s;
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

void tsupport_fake_cubin(const char *dir, const char *arch, const char *entry)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, arch);
    cr_assert(mkdir(path, 0700) == 0 || errno == EEXIST, "%s", path);
    snprintf(path, sizeof path, "%s/%s/%s.cubin", dir, arch, entry);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fprintf(f, "fake %s cubin", arch);
    fclose(f);
}
