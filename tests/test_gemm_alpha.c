/* GPU suite: the epilogue's alpha (NVFP4 on sm_90a folds 2^28 into it).
 *
 * The sm_90a NVFP4 accumulators hold sum * 2^-28; the epilogue (dense) and the affine (fused)
 * multiply by alpha * 2^28 once when that product is finite, and by 2^28 and then alpha when
 * it is not (|alpha| >= 2^100, tools/sm90a_ptx/convert.py alpha_fold_begin).  Each case runs one
 * problem at the largest folded alpha (just below 2^100), at 2^100 (the two-multiply path:
 * a kernel that folded there would write inf or NaN) and at -2^100, through the plain and the
 * transposed (_yt) epilogue of both families, against the double reference; alpha * main
 * stays far inside fp32 and bf16 (the generated main is about 2^15).  Outputs are poisoned
 * before every launch, and a changed scale byte must fail the comparison.  Runs wherever
 * the fused and dense kernels run (the fold is sm_90a's; elsewhere the same cases check
 * alpha's range); skips, naming the reason, without such a GPU. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "support_gpu_case.h"

static const float alphas[] = {0x1.fffffep+99f, 0x1p+100f, -0x1p+100f};

/* One problem (NVFP4) at each alpha; `swapped` says whether the plan must be the _yt one
 * (sm_90a only; other architectures do not swap). */
static void check_alphas(fp4lr_family family, int64_t M, int64_t N, int64_t K, int64_t r, int swapped,
                         uint64_t seed)
{
    fp4lr_ctx *ctx = tsupport_gemm_or_skip(family);
    int fused = family == FP4LR_FAMILY_FUSED;
    fp4lr_problem p = {.M = M, .N = N, .K = K, .r = r, .format = FP4LR_NVFP4, .out = FP4LR_OUT_BF16,
                       .has_wc = fused, .has_beta = fused};
    tsupport_case g;
    tsupport_case_setup(&g, ctx, &p, seed, FP4LR_PGEN_SCALES_REALISTIC, 0, NULL);
    cr_assert_eq(g.plan.family, family, "%s", g.plan.entry);
    if (tsupport_ctx_is_sm90a(ctx))
        cr_assert_eq(strstr(g.plan.entry, "_yt") != NULL, swapped, "%s", g.plan.entry);
    for (size_t i = 0; i < sizeof alphas / sizeof alphas[0]; i++) {
        g.host.a.alpha = alphas[i];
        tsupport_case_refresh(&g);
        tsupport_case_run(&g);
        tsupport_case_expect_pass(&g);
        cr_log_info("%s alpha %a: pass", g.plan.entry, (double)alphas[i]);
    }
    tsupport_case_expect_sfw_flip_fails(&g, N / 3, 1);
    tsupport_case_teardown(&g);
    fp4lr_ctx_destroy(ctx);
}

Test(gemm_alpha, dense_plain_epilogue, .timeout = 300)
{
    check_alphas(FP4LR_FAMILY_DENSE, 300, 520, 512, 0, 0, 901);
}

Test(gemm_alpha, dense_transposed_epilogue, .timeout = 300)
{
    check_alphas(FP4LR_FAMILY_DENSE, 256, 1600, 384, 0, 1, 902);
}

Test(gemm_alpha, fused_affine, .timeout = 300)
{
    check_alphas(FP4LR_FAMILY_FUSED, 300, 520, 512, 32, 0, 903);
}

Test(gemm_alpha, fused_affine_transposed, .timeout = 300)
{
    check_alphas(FP4LR_FAMILY_FUSED, 256, 1600, 384, 32, 1, 904);
}
