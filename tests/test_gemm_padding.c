/* GPU suite: fp4lr_gemm writes Y inside its M x N elements only.  Y's rows are ldY >= N
 * elements apart, and what lies past column N may be another tensor's (a column slice of a
 * wider buffer).  The kernels' bulk tensor stores write whole 16-byte pieces of a row, so a
 * row that does not end on 16 bytes (N % 8 != 0 in bf16) goes through the runtime's Y
 * staging (gemm.h); a row that does is clipped by the store itself.  Each case pads Y's rows
 * well past N and expects the padding to hold the run's poison afterwards, for every kernel
 * family the planner picks (this check found 4 written elements a row, N = 1700, before the
 * staging: the test can fail).  Skips without a GPU. */
#include <criterion/criterion.h>
#include <string.h>

#include "support_gpu_case.h"

typedef struct pad_case {
    const char *what;
    int64_t M, N, K, r;
    int affine, cluster;
    fp4lr_wprep w_prep;
    fp4lr_swap swap;
    int sm90a_only; /* the option exists on sm_90a only */
} pad_case;

static const pad_case cases[] = {
    {"dense, one CTA (transform)", 300, 1001, 512, 0, 0, 1, FP4LR_WPREP_AUTO, FP4LR_SWAP_OFF, 0},
    {"dense, the pair", 300, 1001, 512, 0, 0, 2, FP4LR_WPREP_AUTO, FP4LR_SWAP_OFF, 0},
    {"fused r = 32 with the affine", 300, 1001, 512, 32, 1, 1, FP4LR_WPREP_AUTO, FP4LR_SWAP_OFF, 0},
    {"dense, W prepared", 300, 1001, 512, 0, 0, 1, FP4LR_WPREP_ON, FP4LR_SWAP_OFF, 1},
    {"fused r = 128, W converted in the kernel", 300, 1001, 512, 128, 1, 1, FP4LR_WPREP_INLINE, FP4LR_SWAP_OFF, 1},
    {"dense, swapped (Y^T stored transposed)", 300, 1700, 512, 0, 0, 1, FP4LR_WPREP_AUTO, FP4LR_SWAP_AUTO, 1},
    {"dense, N a multiple of 8 (the store clips)", 300, 1000, 512, 0, 0, 1, FP4LR_WPREP_AUTO, FP4LR_SWAP_OFF, 0},
    {"dense, swapped, N a multiple of 8", 300, 1600, 512, 0, 0, 1, FP4LR_WPREP_AUTO, FP4LR_SWAP_AUTO, 1},
};

Test(gemm_padding, y_past_column_n_is_never_written, .timeout = 600)
{
    fp4lr_ctx *ctx = tsupport_gemm_or_skip(FP4LR_FAMILY_FUSED);
    const int sm90a = tsupport_ctx_is_sm90a(ctx);
    uint64_t seed = 1100;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const pad_case *c = &cases[i];
        if (c->sm90a_only && !sm90a)
            continue;
        for (int f = 0; f < 2; f++) {
            fp4lr_problem p = {.M = c->M, .N = c->N, .K = c->K, .r = c->r, .format = f ? FP4LR_MXFP4 : FP4LR_NVFP4,
                               .out = FP4LR_OUT_BF16, .has_wc = c->affine, .has_beta = c->affine,
                               .ldY = (c->N + 7) / 8 * 8 + 24};
            fp4lr_plan_opts o = {.cluster = c->cluster, .tile_m = 128 * c->cluster};
            if (sm90a)
                o.w_prep = c->w_prep, o.swap = c->swap;
            tsupport_case g;
            tsupport_case_setup(&g, ctx, &p, seed++, FP4LR_PGEN_SCALES_REALISTIC, 0, &o);
            if (c->swap == FP4LR_SWAP_AUTO)
                cr_expect(g.plan.swap_ab, "%s: %s is not swapped", c->what, g.plan.entry);
            tsupport_case_run(&g);
            tsupport_case_expect_pass(&g);
            tsupport_case_expect_padding_untouched(&g);
            tsupport_case_teardown(&g);
        }
    }
    fp4lr_ctx_destroy(ctx);
}
