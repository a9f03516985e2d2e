/* Test support: the committed ptx/sm90a files against the host's tables of built kernels. */
#include "support_ptx.h"

#include <criterion/criterion.h>
#include <stdio.h>

void tsupport_expect_xconv_table(int (*built)(fp4lr_family, int, int, int), const char *suffix)
{
    static const char *const fam[] = {"dense", "fused"};
    static const int widths[] = {256, 160, 128, 192};
    for (int w = 0; w < 4; w++)
        for (int f = 0; f < 2; f++)
            for (int m = 1; m <= 6; m++)
                for (int t = 2; t <= 6; t++) {
                    int files = 0;
                    for (int fmt = 0; fmt < 2; fmt++) {
                        char path[256];
                        snprintf(path, sizeof path, "ptx/sm90a/fp4lr_sm90a_%s_%s_m128n%dk128_c1_s%d_x%d%s.ptx",
                                 fmt ? "mxfp4" : "nvfp4", fam[f], widths[w], m, t, suffix);
                        FILE *fp = fopen(path, "r");
                        files += fp != NULL;
                        if (fp)
                            fclose(fp);
                    }
                    cr_expect_neq(files, 1, "%s n%d s%d_x%d%s: one format only", fam[f], widths[w], m, t, suffix);
                    cr_expect_eq(built(f ? FP4LR_FAMILY_FUSED : FP4LR_FAMILY_DENSE, widths[w], m, t), files == 2,
                                 "%s n%d s%d_x%d%s: the table and ptx/sm90a disagree", fam[f], widths[w], m, t,
                                 suffix);
                }
}
