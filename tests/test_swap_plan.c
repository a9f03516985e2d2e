/* CPU suite: the swapped plan (plan.h, fp4lr_swap): where AUTO takes it, what ON refuses,
 * the plan it makes (the _w plan - A prepared by its own launch, the kernel its programmatic
 * dependent - of the problem with M and N exchanged where that kernel is built, else the _x
 * plan (A converted inside the kernel; also with pdl off), entry _yt, the user's problem kept), the built-kernel table, and the view the launcher hands the kernel
 * (fp4lr_sm90a_kernel_view: A / SFA and W / SFW exchanged). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"
#include "support_ptx.h"
#include "sm90a_gemm.h"

static fp4lr_problem dense(int64_t M, int64_t N, int64_t K, fp4lr_format f)
{
    fp4lr_problem p = {.M = M, .N = N, .K = K, .format = f, .out = FP4LR_OUT_BF16};
    return p;
}

static fp4lr_plan plan_of(fp4lr_problem p, const fp4lr_plan_opts *o)
{
    fp4lr_plan pl;
    fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, o, &pl);
    cr_assert_eq(st.code, FP4LR_OK, "M=%lld N=%lld: %s [%s]", (long long)p.M, (long long)p.N, st.msg, st.rule);
    return pl;
}

static void expect_refused(fp4lr_problem p, const fp4lr_plan_opts *o, fp4lr_code code, const char *what)
{
    fp4lr_plan pl;
    fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, o, &pl);
    cr_expect_eq(st.code, code, "%s: %s", what, st.msg);
    cr_expect_str_eq(st.rule, "SWAP", "%s", what);
}

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

/* AUTO with pdl off: A converted inside the kernel (the _x<n>_yt kernels). */
static const fp4lr_plan_opts INLINE_AUTO = {.pdl = FP4LR_PDL_OFF};

/* 1 when pl is the swapped prepared plan launched as its preparation's dependent. */
static int is_wyt(const fp4lr_plan *pl)
{
    return pl->swap_ab && pl->w_prep && !pl->w_inline && pl->pdl && strstr(pl->entry, "_w") && ends_with(pl->entry, "_yt");
}

/* SANA's shapes (M = 1024 < 1536 <= N), both formats: AUTO takes the swapped prepared plan
 * (the one swap on + w_prep on make); with pdl off, the _x plan of N x M, stored transposed. */
Test(swap_plan, auto_swaps_small_m_dense_problems)
{
    static const int64_t shapes[][3] = {{1024, 6912, 2240}, {1024, 2240, 2304}, {1024, 11200, 2240}, {77, 1536, 256}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int f = 0; f < 2; f++) {
            fp4lr_problem p = dense(shapes[i][0], shapes[i][1], shapes[i][2], f ? FP4LR_MXFP4 : FP4LR_NVFP4);
            if (p.K % fp4lr_format_k_multiple(p.format))
                continue;
            fp4lr_plan wyt = plan_of(p, NULL);
            cr_expect(is_wyt(&wyt), "%s", wyt.entry);
            const fp4lr_plan_opts asked = {.swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_ON};
            fp4lr_plan on = plan_of(p, &asked);
            cr_expect_str_eq(wyt.entry, on.entry);
            cr_expect_eq(wyt.smem_bytes, on.smem_bytes);
            cr_expect_eq(wyt.tiles, ((p.N + 127) / 128) * ((p.M + 255) / 256), "%s", wyt.entry);
            fp4lr_plan pl = plan_of(p, &INLINE_AUTO);
            cr_expect(pl.swap_ab, "%lld x %lld", (long long)p.M, (long long)p.N);
            cr_expect(pl.w_prep && pl.w_inline && !pl.pdl, "%s", pl.entry);
            cr_expect(ends_with(pl.entry, "_x4_yt"), "%s", pl.entry);
            /* the user's problem (resolved: ldY = N), the kernel's tiles and budget */
            cr_expect_eq(pl.problem.M, p.M);
            cr_expect_eq(pl.problem.N, p.N);
            cr_expect_eq(pl.problem.ldY, p.N);
            cr_expect_eq(pl.tiles, ((p.N + 127) / 128) * ((p.M + 255) / 256), "%s", pl.entry);
            fp4lr_problem ps = fp4lr_problem_swapped(&p);
            ps.ldY = (ps.N + 7) / 8 * 8;
            fp4lr_plan_opts x = {.w_prep = FP4LR_WPREP_INLINE, .swap = FP4LR_SWAP_OFF};
            fp4lr_plan ref = plan_of(ps, &x);
            cr_expect_eq(pl.smem_bytes, ref.smem_bytes);
            cr_expect_eq(pl.budget.stages_main, ref.budget.stages_main);
            char want[FP4LR_ENTRY_NAME_LEN + 4];
            snprintf(want, sizeof want, "%s_yt", ref.entry);
            cr_expect_str_eq(pl.entry, want);
        }
}

/* AUTO keeps the other plans: M >= 1536, N < 1536, the pair, w_prep forced; fused plans swap
 * like dense ones (L and U exchanged too): prepared, or with pdl off converted inside. */
Test(swap_plan, auto_keeps_the_other_plans)
{
    cr_expect_not(plan_of(dense(1536, 6912, 2240, FP4LR_NVFP4), NULL).swap_ab, "M = 1536: the _x plan as it is");
    cr_expect_not(plan_of(dense(1024, 1528, 2240, FP4LR_NVFP4), NULL).swap_ab, "N < 1536");
    fp4lr_problem fused = dense(1024, 6912, 2240, FP4LR_NVFP4);
    fused.r = 32;
    fused.has_wc = fused.has_beta = 1;
    cr_expect_str_eq(plan_of(fused, NULL).entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_w4_yt");
    cr_expect_str_eq(plan_of(fused, &INLINE_AUTO).entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4_yt");
    fused.r = 0;
    fused.has_beta = 0;
    fp4lr_plan affine = plan_of(fused, NULL);
    cr_expect(is_wyt(&affine), "fused, affine only: %s", affine.entry);
    cr_expect_str_eq(plan_of(fused, &INLINE_AUTO).entry, "fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s4_x4_yt",
                     "fused, affine only");
    fused.r = 1024;
    cr_expect(plan_of(fused, NULL).swap_ab == (1024 <= FP4LR_SM90A_SWAP_AUTO_MAX_RANK), "r = 1024");
    const fp4lr_plan_opts pair = {.cluster = 2};
    cr_expect_not(plan_of(dense(1024, 6912, 2240, FP4LR_NVFP4), &pair).swap_ab, "cluster 2");
    for (int w = FP4LR_WPREP_ON; w <= FP4LR_WPREP_INLINE; w++) {
        const fp4lr_plan_opts o = {.w_prep = (fp4lr_wprep)w};
        fp4lr_plan pl = plan_of(dense(1024, 6912, 2240, FP4LR_NVFP4), &o);
        cr_expect_not(pl.swap_ab, "w_prep %s", fp4lr_wprep_name((fp4lr_wprep)w));
        cr_expect_not(ends_with(pl.entry, "_yt"), "%s", pl.entry);
    }
    const fp4lr_plan_opts off = {.swap = FP4LR_SWAP_OFF};
    cr_expect_not(plan_of(dense(1024, 6912, 2240, FP4LR_NVFP4), &off).swap_ab, "swap off");
}

/* ON swaps any dense one-CTA problem (M >= N too) and refuses the rest by rule SWAP; with
 * w_prep auto it takes the prepared kernel where built, the inline one with pdl off. */
Test(swap_plan, on_swaps_or_names_the_rule)
{
    const fp4lr_plan_opts on_auto = {.swap = FP4LR_SWAP_ON};
    fp4lr_plan prepared = plan_of(dense(4608, 3072, 3072, FP4LR_MXFP4), &on_auto);
    cr_expect(is_wyt(&prepared), "%s", prepared.entry);
    const fp4lr_plan_opts on = {.swap = FP4LR_SWAP_ON, .pdl = FP4LR_PDL_OFF};
    fp4lr_plan pl = plan_of(dense(4608, 3072, 3072, FP4LR_MXFP4), &on);
    cr_expect(pl.swap_ab);
    cr_expect_str_eq(pl.entry, "fp4lr_sm90a_mxfp4_dense_m128n256k128_c1_s4_x4_yt");
    cr_expect_eq(pl.tiles, 24 * 18);
    /* a padded Y: the user's ldY stays, planning the kernel's problem does not trip LDY_MIN */
    fp4lr_problem padded = dense(4608, 3072, 3072, FP4LR_NVFP4);
    padded.ldY = 3080;
    cr_expect_eq(plan_of(padded, &on).problem.ldY, 3080);

    fp4lr_problem fused = dense(1024, 6912, 2240, FP4LR_MXFP4);
    fused.K = 2304;
    fused.r = 128;
    cr_expect_str_eq(plan_of(fused, &on).entry, "fp4lr_sm90a_mxfp4_fused_m128n256k128_c1_s3_x4_yt");
    const fp4lr_plan_opts pair = {.swap = FP4LR_SWAP_ON, .cluster = 2};
    expect_refused(dense(1024, 6912, 2240, FP4LR_NVFP4), &pair, FP4LR_E_UNSUPPORTED, "cluster 2");
    const fp4lr_plan_opts transform = {.swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_OFF};
    expect_refused(dense(1024, 6912, 2240, FP4LR_NVFP4), &transform, FP4LR_E_UNSUPPORTED, "w_prep off");
    /* w_prep on takes the prepared kernels, narrow ones too */
    const fp4lr_plan_opts prep160 = {.swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_ON, .tile_n = 160};
    cr_expect_str_eq(plan_of(dense(1024, 2240, 2304, FP4LR_NVFP4), &prep160).entry,
                     "fp4lr_sm90a_nvfp4_dense_m128n160k128_c1_s4_w5_yt");
    fp4lr_plan out;
    fp4lr_problem p = dense(1024, 6912, 2240, FP4LR_NVFP4);
    cr_expect_eq(fp4lr_plan_make(&p, FP4LR_ARCH_SM100A, &on, &out).code, FP4LR_E_UNSUPPORTED, "sm_100a");
    const fp4lr_plan_opts bad = {.swap = (fp4lr_swap)7};
    expect_refused(p, &bad, FP4LR_E_INVALID, "swap 7");
}

/* At any shared-memory capacity AUTO names a built _yt kernel or does not swap. */
Test(swap_plan, auto_swaps_only_onto_built_kernels)
{
    int swapped = 0, kept = 0;
    for (int cap = 200704; cap <= 232448; cap += 1024)
        for (int f = 0; f < 2; f++) {
            const fp4lr_plan_opts o = {.smem_capacity = cap};
            fp4lr_problem p = dense(1024, 2240, 2304, f ? FP4LR_MXFP4 : FP4LR_NVFP4);
            fp4lr_plan pl;
            if (fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &o, &pl).code != FP4LR_OK)
                continue;
            if (pl.swap_ab) {
                swapped++;
                const fp4lr_budget *b = &pl.budget;
                cr_expect(pl.w_inline ? fp4lr_sm90a_yt_built(pl.family, pl.tile_n, b->stages_main, b->stages_transform)
                                      : fp4lr_sm90a_wyt_built(pl.format, pl.family, pl.tile_n, b->stages_main,
                                                              b->stages_transform),
                          "%s at %d B", pl.entry, cap);
            } else {
                kept++;
            }
        }
    cr_expect_gt(swapped, 0, "the H200's capacity swaps");
    cr_expect_gt(kept, 0, "smaller capacities solve to unbuilt layouts and keep the plain plan");
}

/* The narrow tile (plan.h FP4LR_SM90A_TILE_N_NARROW): AUTO takes it where the 256-wide grid
 * is under one wave of the device's SMs and the 160-wide one fits in one, only when the SM
 * count is known; an explicit tile_n is taken as asked; non-swapped plans refuse it. */
Test(swap_plan, auto_takes_the_narrow_tile_where_one_wave_holds_it)
{
    for (int f = 0; f < 2; f++) {
        const fp4lr_format fmt = f ? FP4LR_MXFP4 : FP4LR_NVFP4;
        const fp4lr_plan_opts h200 = {.sm_count = 132, .pdl = FP4LR_PDL_OFF}, h200_auto = {.sm_count = 132};
        /* sana-out: 72 tiles of 256, 126 of 160 */
        fp4lr_problem out = dense(1024, 2240, 2304, fmt);
        fp4lr_plan wyt = plan_of(out, &h200_auto);
        cr_expect(is_wyt(&wyt) && wyt.tile_n == 160, "%s", wyt.entry);
        fp4lr_plan pl = plan_of(out, &h200);
        cr_expect_eq(pl.tile_n, 160, "%s", pl.entry);
        cr_expect_str_eq(pl.entry, f ? "fp4lr_sm90a_mxfp4_dense_m128n160k128_c1_s4_x5_yt"
                                     : "fp4lr_sm90a_nvfp4_dense_m128n160k128_c1_s4_x5_yt");
        cr_expect_eq(pl.tiles, 18 * 7);
        /* fused, every rank: the same kernel (its low-rank ring sized at run time) */
        static const int64_t ranks[] = {0, 16, 32, 128, 1024};
        for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++) {
            fp4lr_problem fu = out;
            fu.r = ranks[i];
            fu.has_wc = fu.has_beta = 1;
            fp4lr_plan fp = plan_of(fu, &h200);
            if (!fp.swap_ab)
                continue; /* beyond FP4LR_SM90A_SWAP_AUTO_MAX_RANK */
            fp4lr_plan fw = plan_of(fu, &h200_auto);
            cr_expect(is_wyt(&fw) && fw.tile_n == 160, "r = %lld: %s", (long long)fu.r, fw.entry);
            cr_expect_str_eq(fp.entry, f ? "fp4lr_sm90a_mxfp4_fused_m128n160k128_c1_s4_x5_yt"
                                         : "fp4lr_sm90a_nvfp4_fused_m128n160k128_c1_s4_x5_yt", "r = %lld",
                             (long long)fu.r);
            cr_expect_eq(fp.budget.stages_lora >= 1, fu.r > 0, "r = %lld", (long long)fu.r);
        }
        /* unknown SM count, or a grid of a wave or more at 256 (sana-qkv: 216 tiles), or one
         * that would not fit a wave at 160 (114 SMs: 126 tiles): 256 */
        cr_expect_eq(plan_of(out, NULL).tile_n, 256);
        if (fmt == FP4LR_NVFP4) {
            cr_expect_eq(plan_of(dense(1024, 6912, 2240, fmt), &h200).tile_n, 256, "sana-qkv");
            cr_expect_eq(plan_of(dense(1024, 11200, 2240, fmt), &h200).tile_n, 256, "sana-mlp");
        }
        const fp4lr_plan_opts pcie = {.sm_count = 114};
        cr_expect_eq(plan_of(out, &pcie).tile_n, 256, "114 SMs");
        /* asked: taken as asked, by AUTO's swap and by ON */
        const fp4lr_plan_opts narrow = {.tile_n = 160}, wide = {.tile_n = 256, .sm_count = 132},
                              on = {.tile_n = 160, .swap = FP4LR_SWAP_ON};
        cr_expect_eq(plan_of(out, &narrow).tile_n, 160);
        cr_expect_eq(plan_of(out, &wide).tile_n, 256);
        cr_expect_eq(plan_of(dense(4608, 3072, 3072, fmt), &on).tile_n, 160);
    }
    /* refused: the narrow tile without the swap, and widths never built */
    static const struct {
        int64_t M;
        int tile_n;
        fp4lr_swap swap;
    } bad[] = {{4608, 160, FP4LR_SWAP_AUTO}, {1024, 160, FP4LR_SWAP_OFF}, {1024, 192, FP4LR_SWAP_AUTO},
               {1024, 128, FP4LR_SWAP_ON}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fp4lr_problem p = dense(bad[i].M, 2240, 2304, FP4LR_NVFP4);
        const fp4lr_plan_opts o = {.tile_n = bad[i].tile_n, .swap = bad[i].swap};
        fp4lr_plan pl;
        fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &o, &pl);
        cr_expect_neq(st.code, FP4LR_OK, "M %lld tile_n %d swap %d", (long long)bad[i].M, bad[i].tile_n,
                      (int)bad[i].swap);
        cr_expect(!strcmp(st.rule, "TILE_N") || !strcmp(st.rule, "SM90A_TILE_N"), "rule %s: %s", st.rule, st.msg);
    }
}

/* fp4lr_sm90a_yt_built names exactly the _yt kernels the generator writes (both formats). */
Test(swap_plan, yt_built_matches_the_generator) { tsupport_expect_xconv_table(fp4lr_sm90a_yt_built, "_yt"); }

Test(swap_plan, names_round_trip)
{
    for (int s = FP4LR_SWAP_AUTO; s <= FP4LR_SWAP_OFF; s++)
        cr_expect_eq(fp4lr_swap_parse(fp4lr_swap_name((fp4lr_swap)s)), s);
    cr_expect_null(fp4lr_swap_name((fp4lr_swap)3));
    cr_expect_eq(fp4lr_swap_parse("yes"), -1);
    cr_expect_eq(fp4lr_swap_parse(NULL), -1);
}

/* The launcher's view: the kernel's problem is N x M, its A is the user's W (and scales), its
 * W the user's A; an unswapped plan passes through unchanged. */
Test(swap_plan, kernel_view_exchanges_the_operands)
{
    static const uint8_t a[16], sfa[16], w[16], sfw[16];
    uint16_t y[8];
    const fp4lr_args dev = {.A = a, .SFA = sfa, .W = w, .SFW = sfw, .alpha = 0.5f, .Y = y};
    fp4lr_problem p = dense(1024, 6912, 2240, FP4LR_NVFP4);
    p.ldY = 6920;
    fp4lr_plan pl = plan_of(p, NULL);
    cr_assert(pl.swap_ab);
    fp4lr_plan kp;
    fp4lr_args kd;
    fp4lr_sm90a_kernel_view(&pl, &dev, &kp, &kd);
    cr_expect_eq(kp.problem.M, 6912);
    cr_expect_eq(kp.problem.N, 1024);
    cr_expect_eq(kp.problem.ldY, 6920, "Y keeps its leading dimension");
    cr_expect(kd.A == w && kd.SFA == sfw && kd.W == a && kd.SFW == sfa);
    /* fused: L and U (and their leading dimensions) exchanged, wc and beta kept */
    static const uint16_t l[16], u[16];
    static const float wc[8], beta[8];
    fp4lr_args fdev = dev;
    fdev.L = l, fdev.U = u, fdev.wc = wc, fdev.beta = beta;
    fp4lr_problem fp = p;
    fp.r = 32, fp.ldL = 40, fp.ldU = 48, fp.has_wc = fp.has_beta = 1;
    fp4lr_plan fpl = plan_of(fp, NULL);
    cr_assert(fpl.swap_ab, "%s", fpl.entry);
    fp4lr_sm90a_kernel_view(&fpl, &fdev, &kp, &kd);
    cr_expect(kd.L == u && kd.U == l && kd.wc == wc && kd.beta == beta);
    cr_expect_eq(kp.problem.ldL, 48);
    cr_expect_eq(kp.problem.ldU, 40);
    cr_expect(kd.Y == y && kd.alpha == 0.5f);
    cr_expect_str_eq(kp.entry, fpl.entry, "the view keeps the plan's entry");
    const fp4lr_plan_opts off = {.swap = FP4LR_SWAP_OFF};
    fp4lr_plan plain = plan_of(p, &off);
    fp4lr_sm90a_kernel_view(&plain, &dev, &kp, &kd);
    cr_expect_eq(kp.problem.M, 1024);
    cr_expect(kd.A == a && kd.W == w && kd.SFA == sfa && kd.SFW == sfw);
}

/* The printed plan says what the kernel computes. */
Test(swap_plan, print_names_the_swap)
{
    fp4lr_plan pl = plan_of(dense(1024, 6912, 2240, FP4LR_NVFP4), &INLINE_AUTO);
    char buf[8192] = {0};
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    cr_assert_not_null(f);
    cr_expect_eq(fp4lr_plan_print(f, &pl).code, FP4LR_OK);
    fclose(f);
    cr_expect(strstr(buf, "swapped: the kernel computes Y^T = W.A^T") != NULL, "%s", buf);
    cr_expect(strstr(buf, "convert A (the kernel's W)") != NULL, "%s", buf);
    cr_expect(strstr(buf, "plan: M=1024 N=6912") != NULL, "the user's problem: %s", buf);
}

/* The swapped prepared plan (swap on, w_prep on): the _w plan of the problem with M and N
 * exchanged (the user's A prepared by its own launch), entry _w<n>_yt, the user's problem
 * kept; the narrow tile where AUTO's rule takes it (sana-out on 132 SMs), as for the inline
 * plan; launched as the preparation's programmatic dependent unless pdl is off.  AUTO takes
 * the same plan (its kernels are built for these shapes); AUTO with pdl off the inline one. */
Test(swap_plan, prepared_swapped_plans)
{
    static const int64_t shapes[][4] = {{1024, 6912, 2240, 0}, {1024, 2240, 2304, 32}, {1024, 11200, 2240, 32},
                                        {300, 1600, 512, 128}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int f = 0; f < 2; f++) {
            fp4lr_problem p = dense(shapes[i][0], shapes[i][1], shapes[i][2], f ? FP4LR_MXFP4 : FP4LR_NVFP4);
            if (p.K % fp4lr_format_k_multiple(p.format))
                continue;
            p.r = shapes[i][3];
            p.has_wc = p.has_beta = p.r > 0;
            const fp4lr_plan_opts o = {.swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_ON, .sm_count = 132};
            fp4lr_plan pl = plan_of(p, &o);
            cr_expect(pl.swap_ab && pl.w_prep && !pl.w_inline && pl.pdl, "%s", pl.entry);
            fp4lr_problem ps = fp4lr_problem_swapped(&p);
            const int width = fp4lr_sm90a_narrow_fits(&ps, 132) ? 160 : 256;
            cr_expect_eq(pl.tile_n, width, "%s", pl.entry);
            cr_expect_eq(pl.problem.M, p.M);
            cr_expect_eq(pl.problem.N, p.N);
            /* the solver's prepared layout of the kernel's tile, fused with two writeback
             * buffers (budget.h yt_prepared) */
            fp4lr_budget_req req = {.arch = FP4LR_ARCH_SM90A, .format = p.format, .tile_m = 128, .tile_n = width,
                                    .tile_k = 128, .cluster = 1, .rank = (int)p.r, .family = pl.family,
                                    .has_affine = p.has_wc, .out_bytes = 2, .w_prep = 1, .yt_prepared = 1};
            fp4lr_plan ref;
            memset(&ref, 0, sizeof ref);
            cr_assert_eq(fp4lr_budget_solve(&req, &ref.budget).code, FP4LR_OK);
            ref.smem_bytes = ref.budget.total_bytes;
            snprintf(ref.entry, sizeof ref.entry, "fp4lr_sm90a_%s_%s_m128n%dk128_c1_s%d_w%d",
                     fp4lr_format_name(p.format), fp4lr_family_name(pl.family), width, ref.budget.stages_main,
                     ref.budget.stages_transform);
            cr_expect_eq(ref.budget.stages_wb, 2, "%s", ref.entry);
            char want[FP4LR_ENTRY_NAME_LEN + 4];
            snprintf(want, sizeof want, "%s_yt", ref.entry);
            cr_expect_str_eq(pl.entry, want);
            cr_expect(strstr(pl.entry, "_w") != NULL, "%s", pl.entry);
            cr_expect_eq(pl.smem_bytes, ref.smem_bytes, "%s", pl.entry);
            cr_expect(fp4lr_sm90a_wyt_built(pl.format, pl.family, pl.tile_n, pl.budget.stages_main,
                                            pl.budget.stages_transform),
                      "%s is not built", pl.entry);
            /* pdl off: the same plan, the two launches one after the other */
            fp4lr_plan_opts off = o;
            off.pdl = FP4LR_PDL_OFF;
            fp4lr_plan plo = plan_of(p, &off);
            cr_expect_not(plo.pdl);
            cr_expect_str_eq(plo.entry, pl.entry);
            /* AUTO (w_prep auto): the same plan; with pdl off the inline one */
            const fp4lr_plan_opts auto_o = {.sm_count = 132}, auto_off = {.sm_count = 132, .pdl = FP4LR_PDL_OFF};
            fp4lr_plan pa = plan_of(p, &auto_o);
            cr_expect(pa.swap_ab && pa.pdl && !strcmp(pa.entry, pl.entry), "%s", pa.entry);
            pa = plan_of(p, &auto_off);
            cr_expect(pa.swap_ab && pa.w_inline && !pa.pdl, "%s", pa.entry);
        }
}

/* pdl: ON only for the swapped prepared plans, by rule PDL; out-of-range values by rule PDL;
 * the names round-trip. */
Test(swap_plan, pdl_is_refused_where_no_kernel_waits)
{
    fp4lr_problem sana = dense(1024, 6912, 2240, FP4LR_NVFP4);
    const fp4lr_plan_opts cases[] = {
        {.pdl = FP4LR_PDL_ON, .swap = FP4LR_SWAP_OFF, .w_prep = FP4LR_WPREP_ON}, /* the _w plan, not swapped */
        {.pdl = FP4LR_PDL_ON, .swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_INLINE},
        {.pdl = FP4LR_PDL_ON, .swap = FP4LR_SWAP_OFF, .w_prep = FP4LR_WPREP_OFF},
        {.pdl = FP4LR_PDL_ON, .swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_ON, .cluster = 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fp4lr_plan pl;
        fp4lr_status st = fp4lr_plan_make(&sana, FP4LR_ARCH_SM90A, &cases[i], &pl);
        cr_expect_eq(st.code, FP4LR_E_UNSUPPORTED, "case %zu: %s", i, st.msg);
        cr_expect(!strcmp(st.rule, "PDL") || (cases[i].cluster == 2 && !strcmp(st.rule, "SWAP")),
                  "case %zu: rule %s", i, st.rule);
    }
    const fp4lr_plan_opts on = {.pdl = FP4LR_PDL_ON, .swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_ON},
                          auto_on = {.pdl = FP4LR_PDL_ON};
    cr_expect(plan_of(sana, &on).pdl);
    fp4lr_plan ap = plan_of(sana, &auto_on);
    cr_expect(is_wyt(&ap), "AUTO's swapped plan is the prepared one: %s", ap.entry);
    const fp4lr_plan_opts bad = {.pdl = (fp4lr_pdl)3};
    fp4lr_plan pl;
    fp4lr_status st = fp4lr_plan_make(&sana, FP4LR_ARCH_SM90A, &bad, &pl);
    cr_expect_eq(st.code, FP4LR_E_INVALID);
    cr_expect_str_eq(st.rule, "PDL");
    for (int d = FP4LR_PDL_AUTO; d <= FP4LR_PDL_OFF; d++)
        cr_expect_eq(fp4lr_pdl_parse(fp4lr_pdl_name((fp4lr_pdl)d)), d);
    cr_expect_eq(fp4lr_pdl_parse("yes"), -1);
    cr_expect_null(fp4lr_pdl_name((fp4lr_pdl)3));
    /* only the swapped prepared plans carry it: no other AUTO plan does */
    cr_expect_not(plan_of(dense(4608, 9216, 3072, FP4LR_NVFP4), NULL).pdl);
    const fp4lr_plan_opts wp = {.w_prep = FP4LR_WPREP_ON};
    cr_expect_not(plan_of(dense(4608, 9216, 3072, FP4LR_NVFP4), &wp).pdl);
}

/* The kernels take a low-rank chunk of at most 64 ranks (one TMA box); where the budget sizes
 * its ring in a bigger chunk, the launch fills those bytes with slots of the kernel's chunk
 * (fp4lr_lowrank_slots) instead of leaving half the ring empty: qwen-qkv-r128 on the narrow
 * swapped tile is budgeted as one 128-rank slot and launched as two of 64 (one of 64 before,
 * 36 KiB unused); a 48-rank budget chunk in two slots is three of 32. */
Test(swap_plan, lowrank_ring_in_the_kernels_chunk)
{
    fp4lr_problem p = {.M = 7168, .N = 9216, .K = 3072, .r = 128, .format = FP4LR_NVFP4,
                       .out = FP4LR_OUT_BF16, .has_wc = 1, .has_beta = 1};
    const fp4lr_plan_opts o = {.swap = FP4LR_SWAP_ON, .tile_n = 160};
    fp4lr_plan pl;
    fp4lr_status s = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &o, &pl);
    cr_assert_eq(s.code, FP4LR_OK, "%s: %s", s.rule, s.msg);
    cr_assert_eq(pl.tile_n, 160, "%s", pl.entry);
    cr_assert_eq(pl.budget.lora_chunk, 128);
    cr_assert_eq(pl.budget.stages_lora, 1);
    cr_expect_eq(fp4lr_sm90a_lora_chunk(&pl), 64);
    cr_expect_eq(fp4lr_sm90a_lora_slots(&pl), 2);
    pl.budget.lora_chunk = 48, pl.budget.stages_lora = 2;
    cr_expect_eq(fp4lr_sm90a_lora_chunk(&pl), 32);
    cr_expect_eq(fp4lr_sm90a_lora_slots(&pl), 3);
    pl.budget.lora_chunk = 128, pl.budget.stages_lora = 4;
    cr_expect_eq(fp4lr_sm90a_lora_slots(&pl), FP4LR_SM90A_LORA_SLOTS, "at most the kernel's barriers");
}

/* The swapped kernels (_x<n>_yt, _w<n>_yt) have no low-rank tail through the W ring: the solver
 * streams every chunk through their ring (2 slots of 16 ranks at r = 128), and says no tail.  A
 * review caught the inline swapped plan taken for one with a tail (4 chunks of 32 through one
 * slot, the 0.96x layout) when the one-CTA _x kernels got theirs (2026-12-06). */
Test(swap_plan, swapped_kernels_have_no_lowrank_tail)
{
    const fp4lr_problem p = {.M = 1024, .N = 11200, .K = 2240, .r = 128, .format = FP4LR_NVFP4,
                             .out = FP4LR_OUT_BF16, .has_wc = 1, .has_beta = 1};
    const fp4lr_plan_opts inl = {.swap = FP4LR_SWAP_ON, .pdl = FP4LR_PDL_OFF, .tile_n = 256};
    const fp4lr_plan_opts prep = {.swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_ON, .tile_n = 256};
    const fp4lr_plan_opts *opts[] = {&inl, &prep};
    for (int i = 0; i < 2; i++) {
        fp4lr_plan pl;
        fp4lr_status s = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, opts[i], &pl);
        cr_assert_eq(s.code, FP4LR_OK, "%s: %s", s.rule, s.msg);
        cr_expect(pl.swap_ab && strstr(pl.entry, "_yt") != NULL, "%s", pl.entry);
        cr_expect_eq(pl.budget.lora_tail, 0, "%s", pl.entry);
        cr_expect_eq(pl.budget.lora_chunk, 16, "%s", pl.entry);
        cr_expect_eq(pl.budget.stages_lora, 2, "%s", pl.entry);
    }
}
