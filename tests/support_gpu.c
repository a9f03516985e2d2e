/* GPU test support: context creation or a reasoned skip. */
#include "support_gpu.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

fp4lr_ctx *tsupport_gpu_ctx_or_skip(void)
{
    const char *env = getenv("FP4LR_TEST_DEVICE");
    int ordinal = env && *env ? atoi(env) : 0;
    fp4lr_ctx *ctx = NULL;
    fp4lr_status s = fp4lr_ctx_create(ordinal, &ctx);
    if (s.code == FP4LR_E_NO_DRIVER || s.code == FP4LR_E_NO_DEVICE ||
        s.code == FP4LR_E_DRIVER_TOO_OLD)
        cr_skip_test("no GPU: %s", s.msg);
    cr_assert(s.code == FP4LR_OK, "cannot create the context of device %d: %s: %s", ordinal,
              fp4lr_code_name(s.code), s.msg);
    return ctx;
}

void tsupport_gpu_arch_or_skip(fp4lr_ctx *ctx, const char *arch)
{
    const char *have = NULL;
    fp4lr_status s = fp4lr_ctx_arch(ctx, &have);
    if (s.code == FP4LR_OK && strcmp(have, arch) == 0)
        return;
    char why[FP4LR_STATUS_MSG_LEN + sizeof ctx->name + 128];
    snprintf(why, sizeof why, "needs %s; device %s (cc %d.%d) %s %s", arch, ctx->name,
             ctx->cc_major, ctx->cc_minor, s.code == FP4LR_OK ? "uses" : "is",
             s.code == FP4LR_OK ? have : s.msg);
    fp4lr_ctx_destroy(ctx);
    cr_skip_test("%s", why);
}
