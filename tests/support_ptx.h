/* Test support: the committed ptx/sm90a files against the host's tables of built kernels.
 * Symbols prefixed tsupport_. */
#ifndef FP4LR_TESTS_SUPPORT_PTX_H
#define FP4LR_TESTS_SUPPORT_PTX_H

#include "plan.h"

/* Criterion expectations: built(family, tile width, main stages, W slots) is 1 exactly where
 * both formats' ptx/sm90a/fp4lr_sm90a_<fmt>_<family>_m128n<width>k128_c1_s<main>_x<slots><suffix>.ptx
 * exist (width 256, 160, 128, 192; main 1..6, slots 2..6), and no configuration exists in one
 * format only. */
void tsupport_expect_xconv_table(int (*built)(fp4lr_family, int, int, int), const char *suffix);

#endif
