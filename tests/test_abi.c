/* CPU suite: the kernel ABI of ptx/ABI.md against the code, so the page cannot drift.
 *
 *  - tools/gen_abi.py --check --cubin-dir <build>/ptx: the generated tables of ABI.md match
 *    the kernels' .entry declarations, FP4LR_KERNEL_ABI matches them, and the layout matches
 *    the parameter records of the built cubins;
 *  - the library (host/sm90a_gemm.c), run on a recording fake driver, passes the fields of
 *    its parameter structs in the kernels' parameter order with the kernels' sizes, and
 *    encodes the maps, scalars, grid, block and cluster that ABI.md §2, §4 and §5 state
 *    (literal values worked out by hand from those sections for fixed problems);
 *  - raw_launch --print-params packs every sm_90a family as gen_abi.py --params says;
 *  - the version report of fp4lr.h names the PTX ISA of every kernel file. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fp4lr.h"
#include "sm90a_gemm.h"
#include "support_cmd.h"
#include "support_fakedrv.h"
#include "support_kparams.h"

/* ---- the recording fake driver (maps: support_fakedrv.c) ----------------------------------
 * Each test runs in its own process, so the recorder starts zeroed. */

static struct {
    int launches;
    CUlaunchConfig cfg;
    CUlaunchAttribute attr;
    const tsupport_kparams *layout;     /* where the fake launch puts each parameter */
    unsigned char image[2048];          /* the parameter area the kernel would see */
    void *pointers[TSUPPORT_MAX_PARAMS]; /* kernelParams as the library passed them */
} rec;

static CUresult fake_launch(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    rec.launches++;
    rec.cfg = *cfg;
    if (cfg->numAttrs)
        rec.attr = cfg->attrs[0];
    cr_assert_not_null(params, "the library passes kernelParams");
    cr_assert_null(extra);
    for (int i = 0; i < rec.layout->count; i++) {
        rec.pointers[i] = params[i];
        memcpy(rec.image + rec.layout->offset[i], params[i], rec.layout->bytes[i]);
    }
    return CUDA_SUCCESS;
}

static fp4lr_driver fake_drv = {
    .cuGetErrorName = tsupport_fake_error_name,
    .cuTensorMapEncodeTiled = tsupport_fake_encode,
    .cuLaunchKernelEx = fake_launch,
};

/* An H200-like context on the fake driver. */
static fp4lr_ctx fake_ctx = {
    .drv = &fake_drv, .cc_major = 9, .cc_minor = 0, .sm_count = 132, .max_smem_optin = 232448,
};

/* Fake device addresses, 16-byte aligned and distinct. */
enum { DEV_A = 0x10000000, DEV_SFA = 0x11000000, DEV_W = 0x12000000, DEV_SFW = 0x13000000,
       DEV_L = 0x14000000, DEV_U = 0x15000000, DEV_WC = 0x16000000, DEV_BETA = 0x17000000,
       DEV_Y = 0x18000000 };

#define DEV(type, addr) ((type)(uintptr_t)(addr))
static const fp4lr_args fake_args = {
    .A = DEV(const uint8_t *, DEV_A), .SFA = DEV(const uint8_t *, DEV_SFA), .W = DEV(const uint8_t *, DEV_W),
    .SFW = DEV(const uint8_t *, DEV_SFW), .L = DEV(const uint16_t *, DEV_L), .U = DEV(const uint16_t *, DEV_U),
    .wc = DEV(const float *, DEV_WC), .beta = DEV(const float *, DEV_BETA), .alpha = 0.375f, .Y = DEV(void *, DEV_Y),
};

/* Plans p, builds the library's parameters and launches them on the fake driver with a
 * persistent grid of 132 CTAs; the parameter area lands in rec.image. */
static void library_launch_opts(const fp4lr_problem *p, const fp4lr_plan_opts *o, const tsupport_kparams *layout,
                                fp4lr_plan *plan, fp4lr_sm90a_params *prm)
{
    fp4lr_status st = fp4lr_plan_make(p, FP4LR_ARCH_SM90A, o, plan);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    st = fp4lr_sm90a_params_make(&fake_ctx, plan, &fake_args, prm);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    rec.layout = layout;
    st = fp4lr_sm90a_launch(&fake_ctx, (CUfunction)0x1234, plan, prm, 132, NULL);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    cr_assert_eq(rec.launches, 1);
}

static void library_launch(const fp4lr_problem *p, int cluster, const tsupport_kparams *layout, fp4lr_plan *plan,
                           fp4lr_sm90a_params *prm)
{
    const fp4lr_plan_opts o = {.cluster = cluster};
    library_launch_opts(p, &o, layout, plan, prm);
}

static uint32_t u32_at(const tsupport_kparams *l, const char *name)
{
    uint32_t v;
    memcpy(&v, rec.image + l->offset[tsupport_kparams_index(l, name)], sizeof v);
    return v;
}

static uint64_t u64_at(const tsupport_kparams *l, const char *name)
{
    uint64_t v;
    memcpy(&v, rec.image + l->offset[tsupport_kparams_index(l, name)], sizeof v);
    return v;
}

typedef tsupport_want_map want_map;

/* Expects the map in parameter slot `name` of the launched image to be `w` at `addr`
 * (ABI.md §4). */
static void expect_map(const tsupport_kparams *l, const char *name, uint64_t addr, want_map w)
{
    tsupport_expect_map(rec.image + l->offset[tsupport_kparams_index(l, name)], name, addr, w);
}

#define U8 CU_TENSOR_MAP_DATA_TYPE_UINT8
#define BF16 CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
#define SW(x) CU_TENSOR_MAP_SWIZZLE_##x
#define L2(x) CU_TENSOR_MAP_L2_PROMOTION_##x

/* ---- the generated tables against the kernels and the cubins ----------------------------- */

Test(abi, generated_tables_match_the_kernels_and_cubins)
{
    char dir[1024], cmd[1400], out[16384];
    tsupport_build_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "python3 tools/gen_abi.py --check --cubin-dir '%s/ptx' 2>&1", dir);
    int rc = tsupport_run_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 0, "%s failed (ptx/ABI.md or FP4LR_KERNEL_ABI drifted from the kernels, or the cubins "
                        "are not built):\n%s", cmd, out);
}

/* ---- the library's parameter structs follow the kernel order ------------------------------ */

/* The fields of fp4lr_sm90a_params in kernel order: the dense ten, then (fused family only)
 * the shared low-rank ones. */
static const tsupport_field dense_fields[] = {
    {"p_tmA", offsetof(fp4lr_sm90a_params, tmA), sizeof(CUtensorMap)},
    {"p_tmW", offsetof(fp4lr_sm90a_params, tmW), sizeof(CUtensorMap)},
    {"p_tmSFA", offsetof(fp4lr_sm90a_params, tmSFA), sizeof(CUtensorMap)},
    {"p_tmSFW", offsetof(fp4lr_sm90a_params, tmSFW), sizeof(CUtensorMap)},
    {"p_tmY", offsetof(fp4lr_sm90a_params, tmY), sizeof(CUtensorMap)},
    {"p_num_k_stages", offsetof(fp4lr_sm90a_params, num_k_stages), sizeof(uint32_t)},
    {"p_alpha", offsetof(fp4lr_sm90a_params, alpha), sizeof(float)},
    {"p_tiles_m", offsetof(fp4lr_sm90a_params, tiles_m), sizeof(uint32_t)},
    {"p_tiles_n", offsetof(fp4lr_sm90a_params, tiles_n), sizeof(uint32_t)},
    {"p_group", offsetof(fp4lr_sm90a_params, group), sizeof(uint32_t)},
};
#define N_DENSE ((int)(sizeof dense_fields / sizeof dense_fields[0]))

/* Every family ends with the stream-K five. */
static const tsupport_field sk_fields[] = {
    {"p_sk_ws", offsetof(fp4lr_sm90a_params, sk_ws), sizeof(CUdeviceptr)},
    {"p_sk_dp_tiles", offsetof(fp4lr_sm90a_params, sk.dp_tiles), sizeof(uint32_t)},
    {"p_sk_q", offsetof(fp4lr_sm90a_params, sk.q), sizeof(uint32_t)},
    {"p_sk_r", offsetof(fp4lr_sm90a_params, sk.r), sizeof(uint32_t)},
    {"p_sk_epoch", offsetof(fp4lr_sm90a_params, sk_epoch), sizeof(uint32_t)},
};
#define N_SK ((int)(sizeof sk_fields / sizeof sk_fields[0]))

/* Kernel parameter i of a family with (fused) or without the low-rank block. */
static tsupport_field lib_field(int i, int fused)
{
    if (i < N_DENSE)
        return dense_fields[i];
    const int n_lr = fused ? TSUPPORT_LOWRANK_FIELDS : 0;
    if (i < N_DENSE + n_lr) {
        tsupport_field f = tsupport_lowrank_fields[i - N_DENSE];
        f.offset += offsetof(fp4lr_sm90a_params, lr);
        return f;
    }
    return sk_fields[i - N_DENSE - n_lr];
}

static void expect_struct_order(const char *key, const fp4lr_problem *p, int cluster)
{
    tsupport_kparams l;
    tsupport_kparams_from_gen_abi(key, &l);
    fp4lr_plan plan;
    fp4lr_sm90a_params prm;
    library_launch(p, cluster, &l, &plan, &prm);
    const int fused = plan.family == FP4LR_FAMILY_FUSED;
    cr_assert_eq(l.count, N_DENSE + (fused ? TSUPPORT_LOWRANK_FIELDS : 0) + N_SK,
                 "%s has other parameters than the library's struct", key);
    for (int i = 0; i < l.count; i++) {
        const tsupport_field f = lib_field(i, fused);
        cr_expect_str_eq(l.name[i], f.param, "%s parameter %d", key, i);
        cr_expect_eq(l.bytes[i], f.size, "%s: %s is %zu bytes in the kernel, %zu in the struct", key,
                     l.name[i], l.bytes[i], f.size);
        cr_expect_eq((char *)rec.pointers[i], (char *)&prm + f.offset,
                     "%s: kernelParams[%d] does not point at the struct's field for %s", key, i, l.name[i]);
        if (i > 0)
            cr_expect_gt(f.offset, lib_field(i - 1, fused).offset, "struct order differs at %s", l.name[i]);
        if (f.size == sizeof(CUtensorMap))
            cr_expect_eq(f.offset % 64, 0, "%s: a CUtensorMap field must be 64-byte aligned", l.name[i]);
    }
}

Test(abi, library_structs_follow_the_kernel_parameter_order)
{
    fp4lr_problem fused = {.M = 300, .N = 520, .K = 512, .r = 32, .format = FP4LR_NVFP4, .has_wc = 1, .has_beta = 1};
    fp4lr_problem dense = {.M = 300, .N = 520, .K = 512, .format = FP4LR_MXFP4};
    expect_struct_order("sm90a_fused_c1", &fused, 1);
    memset(&rec, 0, sizeof rec);
    tsupport_fake_maps_reset();
    expect_struct_order("sm90a_dense_c1", &dense, 1);
    memset(&rec, 0, sizeof rec);
    tsupport_fake_maps_reset();
    expect_struct_order("sm90a_dense_c2", &dense, 2);
}

/* ---- ABI.md §2, §4, §5 on fixed problems (values worked out by hand) ----------------------- */

/* Fused NVFP4, M 300, N 520, K 512, r 32, wc and beta: KA = ceil(512/16/4) = 8, KS = 2;
 * the plan's low-rank chunk is 32 (rc = 32: swizzle 64B), one ring slot; 3 x 3 tiles;
 * 3 main stages beside 3 transform slots (one writeback buffer and the wc / beta slices in
 * the fused family). */
Test(abi, fused_nvfp4_maps_scalars_and_launch)
{
    tsupport_kparams l;
    tsupport_kparams_from_gen_abi("sm90a_fused_c1", &l);
    fp4lr_problem p = {.M = 300, .N = 520, .K = 512, .r = 32, .format = FP4LR_NVFP4, .has_wc = 1, .has_beta = 1};
    fp4lr_plan plan;
    fp4lr_sm90a_params prm;
    library_launch(&p, 1, &l, &plan, &prm);
    cr_assert_str_eq(plan.entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_t3");

    expect_map(&l, "p_tmA", DEV_A, (want_map){U8, 2, {256, 300}, {256}, {64, 128}, SW(64B), L2(L2_256B)});
    expect_map(&l, "p_tmW", DEV_W, (want_map){U8, 2, {256, 520}, {256}, {64, 256}, SW(64B), L2(L2_256B)});
    expect_map(&l, "p_tmSFA", DEV_SFA, (want_map){U8, 3, {256, 16, 3}, {256, 4096}, {256, 4, 1}, SW(NONE), L2(L2_256B)});
    expect_map(&l, "p_tmSFW", DEV_SFW, (want_map){U8, 3, {256, 16, 5}, {256, 4096}, {256, 4, 2}, SW(NONE), L2(L2_256B)});
    expect_map(&l, "p_tmY", DEV_Y, (want_map){BF16, 2, {520, 300}, {1040}, {64, 64}, SW(128B), L2(NONE)});
    expect_map(&l, "p_tmL", DEV_L, (want_map){BF16, 2, {32, 300}, {64}, {32, 128}, SW(64B), L2(L2_128B)});
    expect_map(&l, "p_tmU", DEV_U, (want_map){BF16, 2, {32, 520}, {64}, {32, 256}, SW(64B), L2(L2_128B)});
    cr_expect_eq(tsupport_fake_nmaps(), 7);

    cr_expect_eq(u32_at(&l, "p_num_k_stages"), 4);
    float alpha;
    memcpy(&alpha, rec.image + l.offset[tsupport_kparams_index(&l, "p_alpha")], sizeof alpha);
    cr_expect_eq(alpha, 0.375f);
    cr_expect_eq(u32_at(&l, "p_tiles_m"), 3);
    cr_expect_eq(u32_at(&l, "p_tiles_n"), 3);
    cr_expect_eq(u32_at(&l, "p_group"), 8);
    cr_expect_eq(u64_at(&l, "p_wc"), DEV_WC);
    cr_expect_eq(u64_at(&l, "p_beta"), DEV_BETA);
    cr_expect_eq(u32_at(&l, "p_N"), 520);
    cr_expect_eq(u32_at(&l, "p_lora_chunks"), 1);
    cr_expect_eq(u32_at(&l, "p_lora_slots"), 1);
    cr_expect_eq(u32_at(&l, "p_lora_sub"), 1);
    cr_expect_eq(u32_at(&l, "p_lora_ksteps"), 2);
    cr_expect_eq(u32_at(&l, "p_lora_wk"), 32);
    cr_expect_eq(u32_at(&l, "p_lora_deschi"), 0x80000020u);

    /* §2: grid min(9 tiles, 132), block 512, the plan's shared memory, no cluster attribute */
    cr_expect_eq(rec.cfg.gridDimX, 9);
    cr_expect_eq(rec.cfg.gridDimY * rec.cfg.gridDimZ, 1);
    cr_expect_eq(rec.cfg.blockDimX, 512);
    cr_expect_eq(rec.cfg.blockDimY * rec.cfg.blockDimZ, 1);
    cr_expect_eq(rec.cfg.sharedMemBytes, 227328,
                 "3 x 27648 main + 3 x 32768 transform + 16384 writeback + 1024 fixed + 4096 "
                 "wc/beta slices + 24576 L/U: %u", rec.cfg.sharedMemBytes);
    cr_expect_eq(rec.cfg.numAttrs, 0);
}

/* Fused MXFP4, M 200, N 264, K 256, r 128 with ldL 136, wc only: KA = ceil(256/32/4) = 2,
 * KS = 1; 3 transform slots beside 3 main stages, so chunk 16 (32-byte swizzle, ksteps 1,
 * deschi 0xC0000010) with two ring slots: 8 chunks; 2 x 2 tiles. */
Test(abi, fused_mxfp4_strided_lowrank_without_beta)
{
    tsupport_kparams l;
    tsupport_kparams_from_gen_abi("sm90a_fused_c1", &l);
    fp4lr_problem p = {.M = 200, .N = 264, .K = 256, .r = 128, .format = FP4LR_MXFP4, .ldL = 136, .has_wc = 1};
    fp4lr_plan plan;
    fp4lr_sm90a_params prm;
    library_launch(&p, 1, &l, &plan, &prm);
    cr_assert_str_eq(plan.entry, "fp4lr_sm90a_mxfp4_fused_m128n256k128_c1_s3_t3");

    expect_map(&l, "p_tmSFA", DEV_SFA, (want_map){U8, 3, {256, 4, 2}, {256, 1024}, {256, 2, 1}, SW(NONE), L2(L2_256B)});
    expect_map(&l, "p_tmSFW", DEV_SFW, (want_map){U8, 3, {256, 4, 3}, {256, 1024}, {256, 2, 2}, SW(NONE), L2(L2_256B)});
    expect_map(&l, "p_tmY", DEV_Y, (want_map){BF16, 2, {264, 200}, {528}, {64, 64}, SW(128B), L2(NONE)});
    expect_map(&l, "p_tmL", DEV_L, (want_map){BF16, 2, {128, 200}, {272}, {16, 128}, SW(32B), L2(L2_128B)});
    expect_map(&l, "p_tmU", DEV_U, (want_map){BF16, 2, {128, 264}, {256}, {16, 256}, SW(32B), L2(L2_128B)});
    cr_expect_eq(u32_at(&l, "p_num_k_stages"), 2);
    cr_expect_eq(u32_at(&l, "p_tiles_m"), 2);
    cr_expect_eq(u32_at(&l, "p_tiles_n"), 2);
    cr_expect_eq(u64_at(&l, "p_wc"), DEV_WC);
    cr_expect_eq(u64_at(&l, "p_beta"), 0, "an absent beta is passed as 0");
    cr_expect_eq(u32_at(&l, "p_lora_chunks"), 8);
    cr_expect_eq(u32_at(&l, "p_lora_slots"), 2);
    cr_expect_eq(u32_at(&l, "p_lora_ksteps"), 1);
    cr_expect_eq(u32_at(&l, "p_lora_wk"), 16);
    cr_expect_eq(u32_at(&l, "p_lora_deschi"), 0xC0000010u);
    cr_expect_eq(rec.cfg.gridDimX, 4);
    cr_expect_eq(rec.cfg.sharedMemBytes, 223232,
                 "3 stages of 26112 B + 512 B ring alignment + 3 x 32768 transform + 16384 writeback "
                 "(one buffer) + 1024 fixed + 4096 wc/beta slices + 2 x 12288 L/U: %u",
                 rec.cfg.sharedMemBytes);
}

/* Fused with r = 0 (affine only): no L or U map is encoded and their slots stay zero;
 * rc = 16: ksteps 1, deschi 0xC0000010; no chunks, one slot. */
Test(abi, fused_affine_only_leaves_lowrank_maps_zero)
{
    tsupport_kparams l;
    tsupport_kparams_from_gen_abi("sm90a_fused_c1", &l);
    fp4lr_problem p = {.M = 300, .N = 520, .K = 512, .format = FP4LR_NVFP4, .has_wc = 1, .has_beta = 1};
    fp4lr_plan plan;
    fp4lr_sm90a_params prm;
    library_launch(&p, 1, &l, &plan, &prm);
    cr_expect_eq(tsupport_fake_nmaps(), 5, "only A, W, SFA, SFW and Y are encoded");
    for (const char *const *name = (const char *const[]){"p_tmL", "p_tmU", NULL}; *name; name++) {
        const unsigned char *m = rec.image + l.offset[tsupport_kparams_index(&l, *name)];
        for (int i = 0; i < 128; i++)
            cr_expect_eq(m[i], 0, "%s byte %d", *name, i);
    }
    cr_expect_eq(u32_at(&l, "p_lora_chunks"), 0);
    cr_expect_eq(u32_at(&l, "p_lora_slots"), 1);
    cr_expect_eq(u32_at(&l, "p_lora_ksteps"), 1);
    cr_expect_eq(u32_at(&l, "p_lora_wk"), 16);
    cr_expect_eq(u32_at(&l, "p_lora_deschi"), 0xC0000010u);
}

/* A swapped prepared plan (swap on, w_prep on; ABI.md 4.3): the kernel's view has M and N
 * exchanged in its counts, and fp4lr_sm90a_launch gives it the programmatic-dependent
 * attribute unless pdl is off (no other plan has it: every other test here sees none). */
Test(abi, swapped_prepared_plans_launch_as_dependents)
{
    tsupport_kparams l;
    tsupport_kparams_from_gen_abi("sm90a_dense_yt_c1", &l);
    fp4lr_problem p = {.M = 1024, .N = 2240, .K = 2304, .format = FP4LR_NVFP4};
    for (int off = 0; off < 2; off++) {
        const fp4lr_plan_opts o = {.swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_ON,
                                   .pdl = off ? FP4LR_PDL_OFF : FP4LR_PDL_AUTO};
        fp4lr_plan plan, kplan;
        fp4lr_args kdev;
        fp4lr_sm90a_params prm;
        cr_assert_eq(fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &o, &plan).code, FP4LR_OK);
        cr_assert_str_eq(plan.entry, "fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5_yt");
        fp4lr_sm90a_kernel_view(&plan, &fake_args, &kplan, &kdev);
        cr_assert_eq(fp4lr_sm90a_params_make(&fake_ctx, &kplan, &kdev, &prm).code, FP4LR_OK);
        rec.layout = &l;
        rec.launches = 0;
        memset(&rec.attr, 0, sizeof rec.attr);
        cr_assert_eq(fp4lr_sm90a_launch(&fake_ctx, (CUfunction)0x1234, &kplan, &prm, 132, NULL).code, FP4LR_OK);
        cr_assert_eq(rec.launches, 1);
        cr_expect_eq(u32_at(&l, "p_tiles_m"), 18, "ceil(N / 128): the kernel's rows are Y's columns");
        cr_expect_eq(u32_at(&l, "p_tiles_n"), 4, "ceil(M / 256)");
        cr_expect_eq(u32_at(&l, "p_group"), 18, "a prepared plan walks one raster group");
        cr_expect_eq(u32_at(&l, "p_K"), 2304, "the _w_yt kernels' last parameter");
        if (off) {
            cr_expect_eq(rec.cfg.numAttrs, 0);
        } else {
            cr_assert_eq(rec.cfg.numAttrs, 1);
            cr_expect_eq(rec.attr.id, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
            cr_expect_eq(rec.attr.value.programmaticStreamSerializationAllowed, 1);
        }
    }
    /* a plan edited to ask it for a kernel that does not wait is refused, not launched */
    fp4lr_problem big = {.M = 4608, .N = 3072, .K = 3072, .format = FP4LR_NVFP4};
    fp4lr_plan plan;
    fp4lr_sm90a_params prm;
    cr_assert_eq(fp4lr_plan_make(&big, FP4LR_ARCH_SM90A, NULL, &plan).code, FP4LR_OK);
    plan.pdl = 1;
    fp4lr_status st = fp4lr_sm90a_params_make(&fake_ctx, &plan, &fake_args, &prm);
    cr_expect_eq(st.code, FP4LR_E_INVALID, "%s", plan.entry);
    cr_expect_str_eq(st.rule, "PDL");
}

/* The ping-pong plan (tile_n 128, dense NVFP4, W prepared): the sm90a_dense_c1 parameters with
 * p_tiles_n = ceil(N / 128), one raster group, no workspace; the fp4 W map and the prepared W's
 * (FLOAT16 {K, N}, 128-byte swizzle) both box 128 rows, the kernel's W slot. */
Test(abi, pingpong_plan_maps_and_counts)
{
    tsupport_kparams l;
    tsupport_kparams_from_gen_abi("sm90a_dense_c1", &l);
    fp4lr_problem p = {.M = 1000, .N = 300, .K = 640, .format = FP4LR_NVFP4, .ldY = 304};
    const fp4lr_plan_opts o = {.tile_n = 128};
    fp4lr_plan plan;
    fp4lr_sm90a_params prm;
    library_launch_opts(&p, &o, &l, &plan, &prm);
    cr_assert_str_eq(plan.entry, "fp4lr_sm90a_nvfp4_dense_m128n128k128_c1_s3_w10_pp");
    expect_map(&l, "p_tmW", DEV_W, (want_map){U8, 2, {320, 300}, {320}, {64, 128}, SW(64B), L2(L2_256B)});
    expect_map(&l, "p_tmY", DEV_Y, (want_map){BF16, 2, {300, 1000}, {608}, {64, 64}, SW(128B), L2(NONE)});
    cr_expect_eq(u32_at(&l, "p_tiles_m"), 8);
    cr_expect_eq(u32_at(&l, "p_tiles_n"), 3, "ceil(300 / 128)");
    cr_expect_eq(u32_at(&l, "p_group"), 8, "a prepared plan walks one raster group");
    cr_expect_eq(u64_at(&l, "p_sk_ws"), 0);
    cr_expect_eq(rec.cfg.gridDimX, 24, "min(8 x 3 tiles, 132 SMs)");
    cr_expect_eq(rec.cfg.blockDimX, 512);
    cr_expect_eq(rec.cfg.sharedMemBytes, 225280);
    CUtensorMap wp;
    fp4lr_status st = fp4lr_sm90a_wprep_tmap(&fake_ctx, &p, (CUdeviceptr)DEV_W, (uint32_t)plan.tile_n, &wp);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    tsupport_expect_map(&wp, "Wp", DEV_W,
                        (want_map){CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, {640, 300}, {1280}, {64, 128}, SW(128B),
                                   L2(L2_256B)});
}

/* The fused ping-pong plan (tile_n 128, r = 128 with the affine): the sm90a_fused_c1
 * parameters with p_tiles_n = ceil(N / 128), U's box 128 rows (the tile's columns), chunks of 16
 * ranks in 2 slots of each consumer's ring (p_lora_slots is a consumer's), no workspace. */
Test(abi, fused_pingpong_plan_maps_and_counts)
{
    tsupport_kparams l;
    tsupport_kparams_from_gen_abi("sm90a_fused_c1", &l);
    fp4lr_problem p = {.M = 1000, .N = 520, .K = 512, .r = 128, .format = FP4LR_NVFP4, .has_wc = 1, .has_beta = 1};
    const fp4lr_plan_opts o = {.tile_n = 128};
    fp4lr_plan plan;
    fp4lr_sm90a_params prm;
    library_launch_opts(&p, &o, &l, &plan, &prm);
    cr_assert_str_eq(plan.entry, "fp4lr_sm90a_nvfp4_fused_m128n128k128_c1_s3_w8_pp");
    expect_map(&l, "p_tmW", DEV_W, (want_map){U8, 2, {256, 520}, {256}, {64, 128}, SW(64B), L2(L2_256B)});
    expect_map(&l, "p_tmL", DEV_L, (want_map){BF16, 2, {128, 1000}, {256}, {16, 128}, SW(32B), L2(L2_128B)});
    expect_map(&l, "p_tmU", DEV_U, (want_map){BF16, 2, {128, 520}, {256}, {16, 128}, SW(32B), L2(L2_128B)});
    cr_expect_eq(u32_at(&l, "p_tiles_m"), 8);
    cr_expect_eq(u32_at(&l, "p_tiles_n"), 5, "ceil(520 / 128)");
    cr_expect_eq(u32_at(&l, "p_group"), 8, "a prepared plan walks one raster group");
    cr_expect_eq(u32_at(&l, "p_lora_chunks"), 8);
    cr_expect_eq(u32_at(&l, "p_lora_slots"), 2, "a consumer's ring");
    cr_expect_eq(u32_at(&l, "p_lora_wk"), 16);
    cr_expect_eq(u32_at(&l, "p_lora_ksteps"), 1);
    cr_expect_eq(u64_at(&l, "p_sk_ws"), 0);
    cr_expect_eq(rec.cfg.gridDimX, 40, "min(8 x 5 tiles, 132 SMs)");
    cr_expect_eq(rec.cfg.sharedMemBytes, 227328,
                 "3 x 9216 main + 8 x 16384 W + 2 x 16384 writeback + 1024 fixed + 2048 slices + 2 rings x 2 "
                 "slots x 8192 L/U: %u", rec.cfg.sharedMemBytes);
}

/* Dense MXFP4 in a pair with the W transform (w_prep off), M 257, N 300, K 640: KA = 5,
 * KS = 1; tiles_m counts 256-row cluster tiles (2), tiles_n 2; grid min(2*2*2, 132) = 8 CTAs
 * with the (2,1,1) cluster. */
Test(abi, dense_pair_counts_cluster_tiles)
{
    tsupport_kparams l;
    tsupport_kparams_from_gen_abi("sm90a_dense_c2", &l);
    fp4lr_problem p = {.M = 257, .N = 300, .K = 640, .format = FP4LR_MXFP4, .ldY = 304};
    fp4lr_plan plan;
    fp4lr_sm90a_params prm;
    const fp4lr_plan_opts off = {.cluster = 2, .w_prep = FP4LR_WPREP_OFF};
    library_launch_opts(&p, &off, &l, &plan, &prm);
    cr_assert_str_eq(plan.entry, "fp4lr_sm90a_mxfp4_dense_m256n256k128_c2_s5");

    expect_map(&l, "p_tmA", DEV_A, (want_map){U8, 2, {320, 257}, {320}, {64, 128}, SW(64B), L2(L2_256B)});
    expect_map(&l, "p_tmW", DEV_W, (want_map){U8, 2, {320, 300}, {320}, {64, 256}, SW(64B), L2(L2_256B)});
    expect_map(&l, "p_tmSFA", DEV_SFA, (want_map){U8, 3, {256, 10, 3}, {256, 2560}, {256, 2, 1}, SW(NONE), L2(L2_256B)});
    expect_map(&l, "p_tmSFW", DEV_SFW, (want_map){U8, 3, {256, 10, 3}, {256, 2560}, {256, 2, 2}, SW(NONE), L2(L2_256B)});
    expect_map(&l, "p_tmY", DEV_Y, (want_map){BF16, 2, {300, 257}, {608}, {64, 64}, SW(128B), L2(NONE)});
    cr_expect_eq(tsupport_fake_nmaps(), 5);
    cr_expect_eq(l.total, 800, "the dense parameter area is 112 + 688 bytes on sm_90a");
    cr_expect_eq(u64_at(&l, "p_sk_ws"), 0, "fp4lr_sm90a_launch alone passes no workspace");
    cr_expect_eq(u32_at(&l, "p_sk_dp_tiles"), 4, "without a workspace every tile is whole");
    cr_expect_eq(u32_at(&l, "p_num_k_stages"), 5);
    cr_expect_eq(u32_at(&l, "p_tiles_m"), 2);
    cr_expect_eq(u32_at(&l, "p_tiles_n"), 2);
    cr_expect_eq(rec.cfg.gridDimX, 8);
    cr_expect_eq(rec.cfg.blockDimX, 512);
    cr_expect_eq(rec.cfg.sharedMemBytes, 230400,
                 "5 stages of 26112 B + 512 B ring alignment + 2 x 32768 transform + 2 x 16384 "
                 "writeback + 1024 fixed (a pair keeps 2 slots): %u", rec.cfg.sharedMemBytes);
    cr_assert_eq(rec.cfg.numAttrs, 1);
    cr_expect_eq(rec.attr.id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    cr_expect_eq(rec.attr.value.clusterDim.x, 2);
    cr_expect_eq(rec.attr.value.clusterDim.y, 1);
    cr_expect_eq(rec.attr.value.clusterDim.z, 1);
}

/* ---- raw_launch packs what the kernels declare ------------------------------------------- */

/* The same problem under the pair's default plan: W prepared (ABI.md 4.1), the _w kernel of
 * the pair with the same parameters and counts, one raster group, the (2,1,1) cluster, and a
 * Wp map whose box is the whole 256-row W slot (rank 0's one copy, multicast to both CTAs). */
Test(abi, prepared_pair_maps_and_counts)
{
    tsupport_kparams l;
    tsupport_kparams_from_gen_abi("sm90a_dense_c2", &l);
    fp4lr_problem p = {.M = 257, .N = 300, .K = 640, .format = FP4LR_MXFP4, .ldY = 304};
    fp4lr_plan plan;
    fp4lr_sm90a_params prm;
    library_launch(&p, 2, &l, &plan, &prm);
    cr_assert_str_eq(plan.entry, "fp4lr_sm90a_mxfp4_dense_m256n256k128_c2_s4_w5");
    cr_expect_eq(plan.w_prep, 1);
    cr_expect_eq(u32_at(&l, "p_tiles_m"), 2);
    cr_expect_eq(u32_at(&l, "p_tiles_n"), 2);
    cr_expect_eq(u32_at(&l, "p_group"), 2, "a prepared plan walks one raster group");
    cr_expect_eq(rec.cfg.gridDimX, 8);
    cr_expect_eq(rec.cfg.sharedMemBytes, 232448, "the one-CTA _w5 kernel's budget: 4 x 8704 + 5 x 32768 + 2 x 16384 + 1024");
    cr_assert_eq(rec.cfg.numAttrs, 1);
    cr_expect_eq(rec.attr.id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    cr_expect_eq(rec.attr.value.clusterDim.x, 2);
    CUtensorMap wp;
    fp4lr_status st = fp4lr_sm90a_wprep_tmap(&fake_ctx, &p, (CUdeviceptr)DEV_W, (uint32_t)plan.tile_n, &wp);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    tsupport_expect_map(&wp, "Wp", DEV_W,
                        (want_map){CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, {640, 300}, {1280}, {64, 256}, SW(128B),
                                   L2(L2_256B)});
}

Test(abi, raw_launch_packs_every_sm90a_family_as_generated)
{
    char dir[1024], cmd[1400], families[1024], want[4096], got[4096];
    tsupport_build_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "%s/bin/raw_launch", dir);
    cr_assert_eq(access(cmd, X_OK), 0, "%s is not built (make tools)", cmd);
    cr_assert_eq(tsupport_run_capture("python3 tools/gen_abi.py --families", families, sizeof families), 0);
    int checked = 0;
    for (char *key = strtok(families, "\n"); key; key = strtok(NULL, "\n")) {
        if (strncmp(key, "sm90a_", 6) || strstr(key, "_wprep") || strstr(key, "_xconv") || strstr(key, "_yt"))
            continue; /* raw_launch runs the sm_90a GEMM kernels only (not the W preparation), and
                       * not yet the _x kernels (ABI.md §4.2) nor the swapped ones (§4.3) */
        char gen[256];
        snprintf(gen, sizeof gen, "python3 tools/gen_abi.py --params %s", key);
        cr_assert_eq(tsupport_run_capture(gen, want, sizeof want), 0, "%s", gen);
        snprintf(cmd, sizeof cmd, "'%s/bin/raw_launch' --print-params %s", dir, key);
        cr_expect_eq(tsupport_run_capture(cmd, got, sizeof got), 0, "%s", cmd);
        cr_expect_str_eq(got, want, "raw_launch packs %s differently from the kernels", key);
        checked++;
    }
    cr_expect_eq(checked, 4, "expected the families sm90a_dense_c1, sm90a_dense_c2, sm90a_fused_c1, sm90a_fused_c2");
    snprintf(cmd, sizeof cmd, "'%s/bin/raw_launch' --print-params sm90a_nope 2>/dev/null", dir);
    cr_expect_eq(tsupport_run_capture(cmd, got, sizeof got), 2, "an unknown family is a usage error");
}

/* ---- the public header's version report --------------------------------------------------- */

Test(abi, version_macros_and_functions_agree)
{
    char text[64];
    snprintf(text, sizeof text, "%d.%d.%d", FP4LR_VERSION_MAJOR, FP4LR_VERSION_MINOR, FP4LR_VERSION_PATCH);
    cr_expect_str_eq(FP4LR_VERSION, text);
    cr_expect_str_eq(fp4lr_version(), FP4LR_VERSION, "header and library disagree");
    cr_expect_eq(FP4LR_VERSION_NUMBER, FP4LR_VERSION_MAJOR * 10000 + FP4LR_VERSION_MINOR * 100 + FP4LR_VERSION_PATCH);
    cr_expect_eq(strlen(FP4LR_KERNEL_ABI), 16);
    cr_expect(strstr(fp4lr_ptx_version(), "kernel ABI " FP4LR_KERNEL_ABI) != NULL, "%s", fp4lr_ptx_version());
}

/* The .version line of every ptx/<arch>/ kernel, against the report. */
Test(abi, ptx_version_report_names_every_kernel_file)
{
    static const char *const arches[] = {"sm90a", "sm100a"};
    const char *report = fp4lr_ptx_version();
    int files = 0;
    for (size_t a = 0; a < sizeof arches / sizeof arches[0]; a++) {
        char path[512];
        snprintf(path, sizeof path, "ptx/%s", arches[a]);
        DIR *d = opendir(path);
        cr_assert(d, "cannot open %s (run the tests from the repository root)", path);
        struct dirent *de;
        while ((de = readdir(d))) {
            size_t n = strlen(de->d_name);
            if (n < 5 || strcmp(de->d_name + n - 4, ".ptx"))
                continue;
            snprintf(path, sizeof path, "ptx/%s/%s", arches[a], de->d_name);
            FILE *f = fopen(path, "r");
            cr_assert(f, "cannot read %s", path);
            char line[256], version[16] = "";
            while (fgets(line, sizeof line, f) && !sscanf(line, ".version %15s", version))
                ;
            fclose(f);
            cr_assert(version[0], "%s has no .version line", path);
            char want[64];
            snprintf(want, sizeof want, "%s: PTX ISA %s,", arches[a], version);
            cr_expect(strstr(report, want) != NULL, "%s is PTX ISA %s; fp4lr_ptx_version() says \"%s\"", path,
                      version, report);
            files++;
        }
        closedir(d);
    }
    cr_expect_gt(files, 0);
}
