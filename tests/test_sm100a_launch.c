/* CPU suite: the sm_100a host launcher (host/sm100a_gemm.c) and its dispatch from fp4lr_gemm,
 * on a recording fake driver (no Blackwell GPU has run any of it).
 *
 *  - for each built instantiation (NVFP4 / MXFP4, one CTA / pair) the encoded tensor maps
 *    equal the host contract of ptx/sm100a/README.md (literal values worked out by hand for
 *    fixed problems), the scalars are right, and kernelParams follows the `.entry` parameter
 *    list parsed from the kernel's .ptx (names, sizes, one struct field each, in order);
 *  - the launch has 256 threads, the plan's shared memory, the (2,1,1) cluster for the pair
 *    and a persistent grid of whole clusters;
 *  - a fused plan (the pair, rank 32, wc without beta) gets the L and U maps of the host
 *    contract, the low-rank scalars and the 21-parameter list of its .entry;
 *  - other tiles, other outputs and non-sm_100a plans give their own status;
 *  - fp4lr_gemm on a cc 10.0 context loads <kernel dir>/sm100a/<entry>.cubin, prepares it and
 *    launches it through this launcher. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gemm.h"
#include "sm100a_gemm.h"
#include "support_fakedrv.h"
#include "support_kparams.h"

/* The kernel's parameter list, parsed from ptx/sm100a/<entry>.ptx. */
static void kernel_params_load(const char *entry, tsupport_kparams *k)
{
    char path[256];
    snprintf(path, sizeof path, "ptx/sm100a/%s.ptx", entry);
    tsupport_kparams_from_ptx(path, entry, k);
}

/* ---- the recording fake driver (maps: support_fakedrv.c) ----------------------------------
 * Each test runs in its own process, so the recorder starts zeroed. */

#define FAKE_FN TSUPPORT_FAKE_FN

static struct {
    int launches, nparams;
    CUlaunchConfig cfg;
    CUlaunchAttribute attr;
    void *params[TSUPPORT_MAX_PARAMS]; /* kernelParams as the library passed them */
    char function[128];                /* the entry cuModuleGetFunction was asked for */
    int clusters, syncs;
} rec;

static CUresult fake_launch(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    rec.launches++;
    rec.cfg = *cfg;
    if (cfg->numAttrs)
        rec.attr = cfg->attrs[0];
    cr_assert_eq(f, FAKE_FN);
    cr_assert_not_null(params, "the library passes kernelParams");
    cr_assert_null(extra);
    cr_assert_gt(rec.nparams, 0, "the test sets how many parameters the kernel declares");
    memcpy(rec.params, params, (size_t)rec.nparams * sizeof *params);
    return CUDA_SUCCESS;
}

/* What ptxas -v reports for the pair (ptx/sm100a/README.md): 176 registers, no local memory. */
static CUresult fake_func_attr(int *v, CUfunction_attribute a, CUfunction f)
{
    (void)f;
    *v = a == CU_FUNC_ATTRIBUTE_NUM_REGS ? 176 : a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 256
       : a == CU_FUNC_ATTRIBUTE_PTX_VERSION ? 87 : a == CU_FUNC_ATTRIBUTE_BINARY_VERSION ? 100 : 0;
    return CUDA_SUCCESS;
}

static CUresult fake_clusters(int *n, CUfunction f, const CUlaunchConfig *cfg)
{
    (void)f;
    cr_expect_eq(cfg->numAttrs, 1, "the occupancy query carries the cluster attribute");
    *n = rec.clusters;
    return CUDA_SUCCESS;
}

/* fp4lr_runtime_release synchronises before it unloads the kernels */
static CUresult fake_sync(void)
{
    rec.syncs++;
    return CUDA_SUCCESS;
}

static fp4lr_driver fake_drv = {
    .cuCtxSynchronize = fake_sync,
    TSUPPORT_FAKE_DRIVER_ENTRIES,
    .cuLaunchKernelEx = fake_launch,
    .cuFuncGetAttribute = fake_func_attr,
    .cuOccupancyMaxActiveClusters = fake_clusters,
    .cuStreamIsCapturing = tsupport_fake_not_capturing,
};

/* A B200-like context on the fake driver (cc 10.0: the "sm100a" kernels). */
static fp4lr_ctx fake_ctx = {
    .drv = &fake_drv, .cc_major = 10, .cc_minor = 0, .sm_count = 148, .max_smem_optin = 232448,
};

/* Fake device addresses, 16-byte aligned and distinct. */
enum { DEV_A = 0x20000000, DEV_SFA = 0x21000000, DEV_W = 0x22000000, DEV_SFW = 0x23000000, DEV_Y = 0x28000000,
       DEV_L = 0x24000000, DEV_U = 0x25000000, DEV_WC = 0x26000000 };

#define DEV(type, addr) ((type)(uintptr_t)(addr))
static const fp4lr_args fake_args = {
    .A = DEV(const uint8_t *, DEV_A), .SFA = DEV(const uint8_t *, DEV_SFA), .W = DEV(const uint8_t *, DEV_W),
    .SFW = DEV(const uint8_t *, DEV_SFW), .alpha = 0.375f, .Y = DEV(void *, DEV_Y),
    .L = DEV(const void *, DEV_L), .U = DEV(const void *, DEV_U), .wc = DEV(const float *, DEV_WC),
};

/* ---- expected values ------------------------------------------------------------------- */

#define U8 CU_TENSOR_MAP_DATA_TYPE_UINT8
#define BF16 CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
#define SW(x) CU_TENSOR_MAP_SWIZZLE_##x
#define L2(x) CU_TENSOR_MAP_L2_PROMOTION_##x

typedef tsupport_want_map want_map;

/* One instantiation on a fixed problem, with everything the launch must carry. */
typedef struct launch_case {
    const char *entry;
    fp4lr_problem problem;
    int cluster, occupancy;
    want_map A, W, SFA, SFW, Y;
    uint32_t num_k_stages, tiles_m, tiles_n;
    unsigned grid, smem;
} launch_case;

/* The fields of fp4lr_sm100a_params, by the kernel's parameter names. */
static const struct {
    const char *param;
    size_t offset, size;
} fields[] = {
    {"p_tmA", offsetof(fp4lr_sm100a_params, tmA), sizeof(CUtensorMap)},
    {"p_tmW", offsetof(fp4lr_sm100a_params, tmW), sizeof(CUtensorMap)},
    {"p_tmSFA", offsetof(fp4lr_sm100a_params, tmSFA), sizeof(CUtensorMap)},
    {"p_tmSFW", offsetof(fp4lr_sm100a_params, tmSFW), sizeof(CUtensorMap)},
    {"p_tmY", offsetof(fp4lr_sm100a_params, tmY), sizeof(CUtensorMap)},
    {"p_num_k_stages", offsetof(fp4lr_sm100a_params, num_k_stages), sizeof(uint32_t)},
    {"p_alpha", offsetof(fp4lr_sm100a_params, alpha), sizeof(float)},
    {"p_tiles_m", offsetof(fp4lr_sm100a_params, tiles_m), sizeof(uint32_t)},
    {"p_tiles_n", offsetof(fp4lr_sm100a_params, tiles_n), sizeof(uint32_t)},
    {"p_group", offsetof(fp4lr_sm100a_params, group), sizeof(uint32_t)},
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

static uint32_t u32_passed(const tsupport_kparams *k, const char *name)
{
    uint32_t v;
    memcpy(&v, rec.params[tsupport_kparams_index(k, name)], sizeof v);
    return v;
}

/* Expects the map the library passed as kernel parameter `name` to be `w` at `addr`
 * (the host contract). */
static void expect_map(const tsupport_kparams *k, const char *name, uint64_t addr, want_map w)
{
    tsupport_expect_map(rec.params[tsupport_kparams_index(k, name)], name, addr, w);
}

static fp4lr_plan plan_of(const fp4lr_problem *p, fp4lr_arch arch, const fp4lr_plan_opts *o)
{
    fp4lr_plan plan;
    fp4lr_status st = fp4lr_plan_make(p, arch, o, &plan);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    return plan;
}

/* Plans, builds the parameters, launches on the fake driver and checks everything. */
static void check_case(const launch_case *c)
{
    tsupport_kparams k;
    kernel_params_load(c->entry, &k);
    const fp4lr_plan_opts o = {.cluster = c->cluster};
    fp4lr_plan plan = plan_of(&c->problem, FP4LR_ARCH_SM100A, &o);
    cr_assert_str_eq(plan.entry, c->entry);
    fp4lr_sm100a_params prm;
    fp4lr_status st = fp4lr_sm100a_params_make(&fake_ctx, &plan, &fake_args, &prm);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    rec.nparams = k.count;
    st = fp4lr_sm100a_launch(&fake_ctx, FAKE_FN, &plan, &prm, c->occupancy, NULL);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    cr_assert_eq(rec.launches, 1);

    /* kernelParams: the .entry list, in order, each pointing at its struct field */
    cr_assert_eq(k.count, NFIELDS, "%s declares %d parameters, the library passes %d", c->entry, k.count, NFIELDS);
    for (int i = 0; i < k.count; i++) {
        cr_expect_str_eq(k.name[i], fields[i].param, "%s parameter %d", c->entry, i);
        cr_expect_eq(k.bytes[i], fields[i].size, "%s: %s is %zu bytes in the kernel, %zu in the struct", c->entry,
                     k.name[i], k.bytes[i], fields[i].size);
        cr_expect_eq((char *)rec.params[i], (char *)&prm + fields[i].offset,
                     "%s: kernelParams[%d] does not point at the field for %s", c->entry, i, k.name[i]);
    }

    cr_expect_eq(tsupport_fake_nmaps(), 5, "A, W, SFA, SFW and Y are encoded, once each");
    expect_map(&k, "p_tmA", DEV_A, c->A);
    expect_map(&k, "p_tmW", DEV_W, c->W);
    expect_map(&k, "p_tmSFA", DEV_SFA, c->SFA);
    expect_map(&k, "p_tmSFW", DEV_SFW, c->SFW);
    expect_map(&k, "p_tmY", DEV_Y, c->Y);

    cr_expect_eq(u32_passed(&k, "p_num_k_stages"), c->num_k_stages);
    float alpha;
    memcpy(&alpha, rec.params[tsupport_kparams_index(&k, "p_alpha")], sizeof alpha);
    cr_expect_eq(alpha, 0.375f);
    cr_expect_eq(u32_passed(&k, "p_tiles_m"), c->tiles_m);
    cr_expect_eq(u32_passed(&k, "p_tiles_n"), c->tiles_n);
    cr_expect_eq(u32_passed(&k, "p_group"), 8);

    cr_expect_eq(rec.cfg.gridDimX, c->grid, "%s: grid %u, want %u", c->entry, rec.cfg.gridDimX, c->grid);
    cr_expect_eq(rec.cfg.gridDimY * rec.cfg.gridDimZ, 1);
    cr_expect_eq(rec.cfg.blockDimX, 256);
    cr_expect_eq(rec.cfg.blockDimY * rec.cfg.blockDimZ, 1);
    cr_expect_eq(rec.cfg.sharedMemBytes, c->smem);
    cr_expect_null(rec.cfg.hStream);
    if (c->cluster == 1) {
        cr_expect_eq(rec.cfg.numAttrs, 0, "one CTA: no cluster attribute");
        return;
    }
    cr_assert_eq(rec.cfg.numAttrs, 1);
    cr_expect_eq(rec.attr.id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    cr_expect_eq(rec.attr.value.clusterDim.x, 2);
    cr_expect_eq(rec.attr.value.clusterDim.y, 1);
    cr_expect_eq(rec.attr.value.clusterDim.z, 1);
}

/* ---- the four instantiations ----------------------------------------------------------------
 * NVFP4: M 300, N 520, K 1280: K/2 = 640 bytes; KA = ceil(1280/16/4) = 20 (40 half-atoms,
 * 10240 B per row block); 4 atoms per 256-K stage (box 8); 3 A and 5 W row blocks; 5 K stages.
 * MXFP4: M 257, N 300, K 640, ldY 304: K/2 = 320; KA = ceil(640/32/4) = 5 (10 half-atoms, 2560 B);
 * 2 atoms per stage (box 4); 3 and 3 row blocks; ceil(640/256) = 3 K stages (the last half read
 * as zeros).  Shared memory: the kernels' totals (ptx/sm100a/README.md). */

#define NV_PROBLEM {.M = 300, .N = 520, .K = 1280, .format = FP4LR_NVFP4}
#define NV_A {U8, 2, {640, 300}, {640}, {128, 128}, SW(128B), L2(L2_256B)}
#define NV_SFA {U8, 3, {256, 40, 3}, {256, 10240}, {256, 8, 1}, SW(NONE), L2(L2_256B)}
#define NV_SFW {U8, 3, {256, 40, 5}, {256, 10240}, {256, 8, 2}, SW(NONE), L2(L2_256B)}
#define NV_Y {BF16, 2, {520, 300}, {1040}, {64, 32}, SW(128B), L2(NONE)}

#define MX_PROBLEM {.M = 257, .N = 300, .K = 640, .format = FP4LR_MXFP4, .ldY = 304}
#define MX_A {U8, 2, {320, 257}, {320}, {128, 128}, SW(128B), L2(L2_256B)}
#define MX_SFA {U8, 3, {256, 10, 3}, {256, 2560}, {256, 4, 1}, SW(NONE), L2(L2_256B)}
#define MX_SFW {U8, 3, {256, 10, 3}, {256, 2560}, {256, 4, 2}, SW(NONE), L2(L2_256B)}
#define MX_Y {BF16, 2, {300, 257}, {608}, {64, 32}, SW(128B), L2(NONE)}

/* One CTA: W box 256 rows; 3 x 3 tiles, all resident (occupancy 148). */
Test(sm100a_launch, nvfp4_one_cta)
{
    check_case(&(launch_case){"fp4lr_sm100a_nvfp4_dense_m128n256k256_c1_s3", NV_PROBLEM, 1, 148, NV_A,
                              {U8, 2, {640, 520}, {640}, {128, 256}, SW(128B), L2(L2_256B)}, NV_SFA, NV_SFW, NV_Y,
                              5, 3, 3, 9, 199680});
}

/* Pair: W box 128 rows (the CTA's half of N), SFW still two row blocks; 2 x 3 pair tiles,
 * 12 CTAs. */
Test(sm100a_launch, nvfp4_pair)
{
    check_case(&(launch_case){"fp4lr_sm100a_nvfp4_dense_m256n256k256_c2_s5", NV_PROBLEM, 2, 148, NV_A,
                              {U8, 2, {640, 520}, {640}, {128, 128}, SW(128B), L2(L2_256B)}, NV_SFA, NV_SFW, NV_Y,
                              5, 2, 3, 12, 228352});
}

/* One CTA: 3 x 2 tiles, but an occupancy of 4 CTAs caps the grid. */
Test(sm100a_launch, mxfp4_one_cta_capped_by_occupancy)
{
    check_case(&(launch_case){"fp4lr_sm100a_mxfp4_dense_m128n256k256_c1_s3", MX_PROBLEM, 1, 4, MX_A,
                              {U8, 2, {320, 300}, {320}, {128, 256}, SW(128B), L2(L2_256B)}, MX_SFA, MX_SFW, MX_Y,
                              3, 3, 2, 4, 190464});
}

/* Pair: 2 x 2 pair tiles = 8 CTAs; an occupancy of 7 leaves 3 whole pairs = 6 CTAs. */
Test(sm100a_launch, mxfp4_pair_whole_pairs_under_occupancy)
{
    check_case(&(launch_case){"fp4lr_sm100a_mxfp4_dense_m256n256k256_c2_s5", MX_PROBLEM, 2, 7, MX_A,
                              {U8, 2, {320, 300}, {320}, {128, 128}, SW(128B), L2(L2_256B)}, MX_SFA, MX_SFW, MX_Y,
                              3, 2, 2, 6, 212992});
}

/* ---- the persistent grid ------------------------------------------------------------------- */

/* The grid the launcher picks for `p` (default pair plan) under occupancy `occ`. */
static unsigned grid_for(const fp4lr_problem *p, int cluster, int occ)
{
    memset(&rec, 0, sizeof rec);
    tsupport_fake_maps_reset();
    rec.nparams = NFIELDS;
    const fp4lr_plan_opts o = {.cluster = cluster};
    fp4lr_plan plan = plan_of(p, FP4LR_ARCH_SM100A, &o);
    fp4lr_sm100a_params prm;
    fp4lr_status st = fp4lr_sm100a_params_make(&fake_ctx, &plan, &fake_args, &prm);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    st = fp4lr_sm100a_launch(&fake_ctx, FAKE_FN, &plan, &prm, occ, NULL);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    return rec.cfg.gridDimX;
}

Test(sm100a_launch, persistent_grid_is_whole_clusters)
{
    const fp4lr_problem big = {.M = 4096, .N = 4096, .K = 4096, .format = FP4LR_NVFP4};
    const fp4lr_problem one = {.M = 64, .N = 64, .K = 256, .format = FP4LR_NVFP4};
    cr_expect_eq(grid_for(&big, 2, 148), 148, "256 pair tiles: the occupancy");
    cr_expect_eq(grid_for(&big, 2, 147), 146, "an odd occupancy: whole pairs below it");
    cr_expect_eq(grid_for(&big, 1, 148), 148, "16 x 32 tiles: the occupancy");
    cr_expect_eq(grid_for(&one, 2, 148), 2, "one tile: one pair");
    cr_expect_eq(grid_for(&one, 1, 148), 1, "one tile: one CTA");
    cr_expect_eq(grid_for(&big, 2, 1), 2, "at least one pair, even below the occupancy");
    cr_expect_eq(grid_for(&big, 1, 0), 1, "at least one CTA");
}

/* ---- what the sm_100a kernels do not cover ---------------------------------------------- */

/* The status params_make gives for `p` planned with `o` on `arch`; nothing may be encoded. */
static fp4lr_status make_status(const fp4lr_problem *p, fp4lr_arch arch, const fp4lr_plan_opts *o)
{
    memset(&rec, 0, sizeof rec);
    tsupport_fake_maps_reset();
    fp4lr_plan plan = plan_of(p, arch, o);
    fp4lr_sm100a_params prm;
    fp4lr_status st = fp4lr_sm100a_params_make(&fake_ctx, &plan, &fake_args, &prm);
    cr_expect_eq(tsupport_fake_nmaps(), 0, "no map is encoded for a plan that is refused");
    return st;
}

static void expect_refused(fp4lr_status st, const char *rule, const char *words)
{
    cr_expect_eq(st.code, FP4LR_E_UNSUPPORTED, "%s: code %d", rule, (int)st.code);
    cr_expect_str_eq(st.rule, rule);
    cr_expect(strstr(st.msg, words) != NULL, "'%s' not in: %s", words, st.msg);
}

/* NVFP4 pair, M 300, N 520, K 512, r = 48, wc without beta: the solver's chunk is 48, so the
 * kernel's rc is 32 (2 chunks of 32 ranks: 48 rounded up), the ring holds stages_lora x 48
 * ranks in 32-rank slots; L box {32, 128} and U box {32, 128} (the CTA's half of N), 64-byte
 * swizzle over the 64-byte rows; descriptor high word: SBO 8 x 64 = 512 (32 at bit 32), the
 * fixed bit 46, swizzle code 4 (64B) at 61 -> 0x80004020. */
Test(sm100a_launch, fused_pair_lowrank_maps_and_scalars)
{
    const char *entry_prefix = "fp4lr_sm100a_nvfp4_fused_m256n256k256_c2_s";
    const fp4lr_problem lowrank = {.M = 300, .N = 520, .K = 512, .r = 48, .format = FP4LR_NVFP4, .has_wc = 1};
    fp4lr_plan plan = plan_of(&lowrank, FP4LR_ARCH_SM100A, NULL);
    cr_assert_eq(strncmp(plan.entry, entry_prefix, strlen(entry_prefix)), 0, "%s", plan.entry);
    cr_assert_eq(plan.budget.lora_chunk, 48);
    tsupport_kparams k;
    kernel_params_load(plan.entry, &k);
    fp4lr_sm100a_params prm;
    fp4lr_status st = fp4lr_sm100a_params_make(&fake_ctx, &plan, &fake_args, &prm);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    rec.nparams = k.count;
    st = fp4lr_sm100a_launch(&fake_ctx, FAKE_FN, &plan, &prm, 148, NULL);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);

    const tsupport_field *lr_fields = tsupport_lowrank_fields;
    cr_assert_eq(k.count, NFIELDS + TSUPPORT_LOWRANK_FIELDS, "%s declares %d parameters", plan.entry, k.count);
    for (int i = 0; i < k.count; i++) {
        const char *want = i < NFIELDS ? fields[i].param : lr_fields[i - NFIELDS].param;
        size_t off = i < NFIELDS ? fields[i].offset
                                 : offsetof(fp4lr_sm100a_params, lr) + lr_fields[i - NFIELDS].offset;
        size_t size = i < NFIELDS ? fields[i].size : lr_fields[i - NFIELDS].size;
        cr_expect_str_eq(k.name[i], want, "%s parameter %d", plan.entry, i);
        cr_expect_eq(k.bytes[i], size, "%s: %s", plan.entry, k.name[i]);
        cr_expect_eq((char *)rec.params[i], (char *)&prm + off, "%s: kernelParams[%d] (%s)", plan.entry, i,
                     k.name[i]);
    }
    cr_expect_eq(tsupport_fake_nmaps(), 7, "the dense five, L and U");
    expect_map(&k, "p_tmL", DEV_L, (want_map){BF16, 2, {48, 300}, {96}, {32, 128}, SW(64B), L2(L2_128B)});
    expect_map(&k, "p_tmU", DEV_U, (want_map){BF16, 2, {48, 520}, {96}, {32, 128}, SW(64B), L2(L2_128B)});
    uint64_t wc, beta;
    memcpy(&wc, rec.params[tsupport_kparams_index(&k, "p_wc")], 8);
    memcpy(&beta, rec.params[tsupport_kparams_index(&k, "p_beta")], 8);
    cr_expect_eq(wc, (uint64_t)DEV_WC);
    cr_expect_eq(beta, 0, "an absent beta is passed as 0");
    cr_expect_eq(u32_passed(&k, "p_N"), 520);
    cr_expect_eq(u32_passed(&k, "p_lora_chunks"), 2);
    cr_expect_eq(u32_passed(&k, "p_lora_wk"), 32);
    cr_expect_eq(u32_passed(&k, "p_lora_ksteps"), 2);
    cr_expect_eq(u32_passed(&k, "p_lora_sub"), 1);
    cr_expect_eq(u32_passed(&k, "p_lora_deschi"), 0x80004020u);
    cr_expect_eq(u32_passed(&k, "p_lora_slots"), (uint32_t)fp4lr_sm100a_lora_slots(&plan));
    cr_expect_eq(rec.cfg.sharedMemBytes, (unsigned)plan.smem_bytes);
    cr_expect_eq(rec.cfg.blockDimX, 256);
    cr_expect_eq(rec.attr.value.clusterDim.x, 2);
}

Test(sm100a_launch, other_tiles_outputs_and_arches_are_refused)
{
    const fp4lr_problem dense = {.M = 512, .N = 512, .K = 512, .format = FP4LR_NVFP4};
    const fp4lr_problem f16 = {.M = 512, .N = 512, .K = 512, .format = FP4LR_NVFP4, .out = FP4LR_OUT_F16};
    const fp4lr_plan_opts narrow = {.tile_n = 128, .cluster = 1};
    const fp4lr_plan_opts short_k = {.tile_k = 128, .cluster = 2};
    expect_refused(make_status(&dense, FP4LR_ARCH_SM100A, &narrow), "SM100A_TILE", "128x128x256, cluster 1");
    expect_refused(make_status(&dense, FP4LR_ARCH_SM100A, &short_k), "SM100A_TILE", "256x256x128, cluster 2");
    expect_refused(make_status(&f16, FP4LR_ARCH_SM100A, NULL), "SM100A_OUT", "f16");
    expect_refused(make_status(&dense, FP4LR_ARCH_SM90A, NULL), "SM100A_PLAN", "fp4lr_sm90a_");
}

/* ---- fp4lr_gemm dispatches sm_100a plans here ---------------------------------------------- */

/* A kernel directory holding a stand-in cubin for `entry` at <dir>/sm100a/<entry>.cubin. */
static void fake_kernel_dir(char *dir, size_t cap, const char *entry)
{
    snprintf(dir, cap, "/tmp/fp4lr-sm100a-launch-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    tsupport_fake_cubin(dir, "sm100a", entry);
}

static void remove_kernel_dir(const char *dir, const char *entry)
{
    char path[512];
    snprintf(path, sizeof path, "%s/sm100a/%s.cubin", dir, entry);
    unlink(path);
    snprintf(path, sizeof path, "%s/sm100a", dir);
    rmdir(path);
    rmdir(dir);
}

/* Dense NVFP4 on a cc 10.0 context: the runtime plans the pair, loads its cubin, sets the
 * dynamic shared memory, asks the cluster occupancy (60 pairs) and launches
 * min(2 x 3 pair tiles x 2, 60 x 2) = 12 CTAs of the pair kernel. */
Test(sm100a_launch, gemm_dispatches_dense_sm100a_plans)
{
    const char *entry = "fp4lr_sm100a_nvfp4_dense_m256n256k256_c2_s5";
    char dir[64];
    fake_kernel_dir(dir, sizeof dir, entry);
    unsetenv("FP4LR_KERNEL_DIR");
    rec.clusters = 60;
    rec.nparams = NFIELDS;

    fp4lr_runtime rt;
    fp4lr_status st = fp4lr_runtime_init(&rt, &fake_ctx, dir);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    const fp4lr_problem p = NV_PROBLEM;
    fp4lr_plan plan;
    st = fp4lr_runtime_plan(&rt, &p, NULL, &plan);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    cr_assert_str_eq(plan.entry, entry, "the default sm_100a plan is the pair");
    st = fp4lr_gemm(&rt, &plan, &fake_args, NULL);
    fp4lr_runtime_release(&rt);
    remove_kernel_dir(dir, entry);

    cr_assert_eq(st.code, FP4LR_OK, "%s: %s", st.rule, st.msg);
    cr_expect_str_eq(tsupport_fake_module.function, entry);
    cr_expect_eq(tsupport_fake_module.dyn_smem_set, 228352);
    cr_expect_eq(tsupport_fake_module.unloads, 1);
    cr_expect_eq(rec.syncs, 1, "release waits for the launch before it unloads the kernel");
    cr_assert_eq(rec.launches, 1);
    cr_expect_eq(tsupport_fake_nmaps(), 5);
    cr_expect_eq(rec.cfg.gridDimX, 12);
    cr_expect_eq(rec.cfg.blockDimX, 256);
    cr_expect_eq(rec.cfg.sharedMemBytes, 228352);
    cr_assert_eq(rec.cfg.numAttrs, 1);
    cr_expect_eq(rec.attr.value.clusterDim.x, 2);
}

/* A fused sm_100a plan goes the same way: the runtime loads the fused pair's cubin and the
 * launcher passes the dense maps, L and U and the 21 parameters of the fused entry. */
Test(sm100a_launch, gemm_dispatches_fused_sm100a_plans)
{
    const fp4lr_problem p = {.M = 300, .N = 520, .K = 1280, .r = 32, .format = FP4LR_NVFP4};
    fp4lr_plan want = plan_of(&p, FP4LR_ARCH_SM100A, NULL);
    cr_assert_eq(want.family, FP4LR_FAMILY_FUSED);
    char dir[64];
    fake_kernel_dir(dir, sizeof dir, want.entry);
    unsetenv("FP4LR_KERNEL_DIR");
    rec.clusters = 60;
    tsupport_kparams k;
    kernel_params_load(want.entry, &k);
    rec.nparams = k.count;

    fp4lr_runtime rt;
    fp4lr_status st = fp4lr_runtime_init(&rt, &fake_ctx, dir);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    fp4lr_plan plan;
    st = fp4lr_runtime_plan(&rt, &p, NULL, &plan);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    cr_assert_str_eq(plan.entry, want.entry);
    st = fp4lr_gemm(&rt, &plan, &fake_args, NULL);
    fp4lr_runtime_release(&rt);
    remove_kernel_dir(dir, want.entry);

    cr_assert_eq(st.code, FP4LR_OK, "%s: %s", st.rule, st.msg);
    cr_expect_str_eq(tsupport_fake_module.function, want.entry);
    cr_expect_eq(tsupport_fake_module.dyn_smem_set, (int)plan.smem_bytes);
    cr_assert_eq(rec.launches, 1);
    cr_expect_eq(k.count, 21);
    cr_expect_eq(tsupport_fake_nmaps(), 7, "A, W, SFA, SFW, Y, L, U");
    cr_expect_eq(rec.cfg.sharedMemBytes, (unsigned)plan.smem_bytes);
    cr_expect_eq(rec.attr.value.clusterDim.x, 2);
}
