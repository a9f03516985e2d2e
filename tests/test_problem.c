/* Problem and argument validation (host/problem.c): one test per rule, each
 * asserting the rule name and that the message names the offending value;
 * resolution of packed leading dimensions; buffer sizes against hand values. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "problem.h"

/* A valid NVFP4 problem with every optional part present. */
static fp4lr_problem base(void)
{
    fp4lr_problem p = {.M = 256, .N = 512, .K = 1024, .r = 32, .format = FP4LR_NVFP4,
                       .out = FP4LR_OUT_BF16, .has_wc = 1, .has_beta = 1};
    return p;
}

/* Asserts a FP4LR_E_INVALID with the given rule whose message contains `needle`. */
static void expect_rule(fp4lr_status s, const char *rule, const char *needle)
{
    cr_assert_eq(s.code, FP4LR_E_INVALID, "expected %s, got code %d (%s)", rule, s.code, s.msg);
    cr_assert_str_eq(s.rule, rule, "message: %s", s.msg);
    cr_assert(strstr(s.msg, needle) != NULL, "'%s' not in message '%s'", needle, s.msg);
}

Test(problem, valid_base_passes)
{
    fp4lr_problem p = base();
    cr_assert_eq(fp4lr_problem_validate(&p).code, FP4LR_OK);
}

Test(problem, null_problem)
{
    expect_rule(fp4lr_problem_validate(NULL), "NULL_POINTER", "problem");
}

Test(problem, format_rule)
{
    fp4lr_problem p = base();
    p.format = (fp4lr_format)7;
    expect_rule(fp4lr_problem_validate(&p), "FORMAT", "format = 7");
}

Test(problem, out_type_rule)
{
    fp4lr_problem p = base();
    p.out = (fp4lr_out_type)5;
    expect_rule(fp4lr_problem_validate(&p), "OUT_TYPE", "type = 5");
}

Test(problem, m_zero)
{
    fp4lr_problem p = base();
    p.M = 0;
    expect_rule(fp4lr_problem_validate(&p), "M_POSITIVE", "M = 0: M must be >= 1");
}

Test(problem, n_negative)
{
    fp4lr_problem p = base();
    p.N = -3;
    expect_rule(fp4lr_problem_validate(&p), "N_POSITIVE", "N = -3");
}

Test(problem, k_zero)
{
    fp4lr_problem p = base();
    p.K = 0;
    expect_rule(fp4lr_problem_validate(&p), "K_POSITIVE", "K = 0");
}

Test(problem, k_not_multiple_of_64_nvfp4)
{
    fp4lr_problem p = base();
    p.K = 100;
    expect_rule(fp4lr_problem_validate(&p), "K_MULTIPLE", "K = 100 is not a multiple of 64");
}

Test(problem, k_odd)
{
    fp4lr_problem p = base();
    p.K = 63;
    expect_rule(fp4lr_problem_validate(&p), "K_MULTIPLE", "K = 63");
}

Test(problem, k_not_multiple_of_128_mxfp4)
{
    /* 192 = 3 * 64 is fine for NVFP4 but not one MXFP4 atom column (4 x 32). */
    fp4lr_problem p = base();
    p.K = 192;
    cr_assert_eq(fp4lr_problem_validate(&p).code, FP4LR_OK);
    p.format = FP4LR_MXFP4;
    expect_rule(fp4lr_problem_validate(&p), "K_MULTIPLE", "K = 192 is not a multiple of 128");
}

Test(problem, rank_17)
{
    fp4lr_problem p = base();
    p.r = 17;
    expect_rule(fp4lr_problem_validate(&p), "R_MULTIPLE", "rank 17 is not 0 or a multiple of 16");
}

Test(problem, rank_negative)
{
    fp4lr_problem p = base();
    p.r = -16;
    expect_rule(fp4lr_problem_validate(&p), "R_MULTIPLE", "rank -16");
}

Test(problem, rank_max)
{
    fp4lr_problem p = base();
    p.r = 8192;
    cr_assert_eq(fp4lr_problem_validate(&p).code, FP4LR_OK);
    p.r = 8208;
    expect_rule(fp4lr_problem_validate(&p), "R_MAX", "rank 8208");
}

Test(problem, rank_zero_ignores_ldl_ldu)
{
    /* With r = 0 there is no L or U: their leading dimensions are not read. */
    fp4lr_problem p = base();
    p.r = 0;
    p.ldL = 3;
    p.ldU = -1;
    cr_assert_eq(fp4lr_problem_validate(&p).code, FP4LR_OK);
}

Test(problem, ldl_min)
{
    fp4lr_problem p = base();
    p.ldL = 16;
    expect_rule(fp4lr_problem_validate(&p), "LDL_MIN", "ldL = 16 is less than r = 32");
}

Test(problem, ldl_align)
{
    /* 36 bf16 = 72 bytes, not a multiple of 16; 40 bf16 = 80 bytes is. */
    fp4lr_problem p = base();
    p.ldL = 40;
    cr_assert_eq(fp4lr_problem_validate(&p).code, FP4LR_OK);
    p.ldL = 36;
    expect_rule(fp4lr_problem_validate(&p), "LDL_ALIGN", "ldL = 36");
}

Test(problem, ldu_min)
{
    fp4lr_problem p = base();
    p.ldU = 24;
    expect_rule(fp4lr_problem_validate(&p), "LDU_MIN", "ldU = 24 is less than r = 32");
}

Test(problem, ldu_align)
{
    fp4lr_problem p = base();
    p.ldU = 33;
    expect_rule(fp4lr_problem_validate(&p), "LDU_ALIGN", "ldU = 33");
}

Test(problem, ldy_min)
{
    fp4lr_problem p = base();
    p.ldY = 500;
    expect_rule(fp4lr_problem_validate(&p), "LDY_MIN", "ldY = 500 is less than N = 512");
}

Test(problem, ldy_align_bf16)
{
    fp4lr_problem p = base();
    p.ldY = 1001;
    expect_rule(fp4lr_problem_validate(&p), "LDY_ALIGN", "ldY = 1001 bf16");
}

Test(problem, ldy_align_depends_on_output_type)
{
    /* ldY = 516: 1032 bytes in bf16 (not a multiple of 16), 2064 in f32 (is). */
    fp4lr_problem p = base();
    p.ldY = 516;
    expect_rule(fp4lr_problem_validate(&p), "LDY_ALIGN", "ldY = 516");
    p.out = FP4LR_OUT_F32;
    cr_assert_eq(fp4lr_problem_validate(&p).code, FP4LR_OK);
}

Test(problem, dim_limit_m)
{
    fp4lr_problem p = base();
    p.M = ((int64_t)1 << 32) + 1;
    expect_rule(fp4lr_problem_validate(&p), "DIM_LIMIT", "M = 4294967297");
}

Test(problem, dim_limit_stride)
{
    /* ldY = 2^39 bf16 elements = 2^40 bytes: the row stride reaches the limit. */
    fp4lr_problem p = base();
    p.ldY = (int64_t)1 << 39;
    expect_rule(fp4lr_problem_validate(&p), "DIM_LIMIT", "ldY = 549755813888");
}

Test(problem, dim_limit_size_overflow)
{
    /* M = 2^31 - 256 rows of ldY = 2^38 bf16 (2^39 bytes): each limit holds, the
     * size (about 2^70 bytes) overflows int64. */
    fp4lr_problem p = base();
    p.M = ((int64_t)1 << 31) - 256;
    p.ldY = (int64_t)1 << 38;
    expect_rule(fp4lr_problem_validate(&p), "DIM_LIMIT", "size of Y");
}

/* The kernels' bulk tensor copies take signed 32-bit coordinates (tile x tile size): M, N
 * and K/2 stop at 2^31 - 256, under the tensor maps' own 2^32. */
Test(problem, dim_limit_copy_coordinates)
{
    fp4lr_problem p = base();
    p.M = ((int64_t)1 << 31) - 256;
    cr_expect_eq(fp4lr_problem_validate(&p).code, FP4LR_OK, "M = 2^31 - 256 is addressable");
    p.M = ((int64_t)1 << 31) + 128;
    expect_rule(fp4lr_problem_validate(&p), "DIM_LIMIT", "signed 32-bit coordinates");
    p = base();
    p.N = (int64_t)1 << 31;
    expect_rule(fp4lr_problem_validate(&p), "DIM_LIMIT", "N = 2147483648");
    p = base();
    p.M = 1;
    p.N = 8;
    p.K = ((int64_t)1 << 32) + 128;
    expect_rule(fp4lr_problem_validate(&p), "DIM_LIMIT", "K/2");
    p.K = ((int64_t)1 << 32) - 512;
    cr_expect_eq(fp4lr_problem_validate(&p).code, FP4LR_OK, "K/2 = 2^31 - 256");
}

/* A dimension beyond its limit is named before any leading dimension derived from it (an
 * N of 2^63 - 1 used to be refused as an ldY alignment). */
Test(problem, dim_limit_before_the_leading_dimensions)
{
    fp4lr_problem p = base();
    p.N = INT64_MAX;
    p.ldY = INT64_MAX;
    expect_rule(fp4lr_problem_validate(&p), "DIM_LIMIT", "N = 9223372036854775807");
    p = base();
    p.M = INT64_MAX;
    p.ldY = 3; /* also below N: the dimension still comes first */
    expect_rule(fp4lr_problem_validate(&p), "DIM_LIMIT", "M = 9223372036854775807");
}

/* fp4lr_ldY_padded: whole 16-byte rows for the output type, any N valid; N itself where
 * rounding would overflow or N < 1 (validation names the rule). */
Test(problem, ldy_padded)
{
    cr_expect_eq(fp4lr_ldY_padded(100, FP4LR_OUT_BF16), 104);
    cr_expect_eq(fp4lr_ldY_padded(104, FP4LR_OUT_F16), 104);
    cr_expect_eq(fp4lr_ldY_padded(1, FP4LR_OUT_BF16), 8);
    cr_expect_eq(fp4lr_ldY_padded(5, FP4LR_OUT_F32), 8);
    cr_expect_eq(fp4lr_ldY_padded(4, FP4LR_OUT_F32), 4);
    cr_expect_eq(fp4lr_ldY_padded(0, FP4LR_OUT_BF16), 0);
    cr_expect_eq(fp4lr_ldY_padded(-9, FP4LR_OUT_BF16), -9);
    cr_expect_eq(fp4lr_ldY_padded(INT64_MAX, FP4LR_OUT_BF16), INT64_MAX);
    cr_expect_eq(fp4lr_ldY_padded(INT64_MAX - 7, FP4LR_OUT_BF16), INT64_MAX - 7); /* a multiple of 8 */
    for (int64_t n = 1; n < 40; n++) {
        fp4lr_problem p = base();
        p.N = n;
        p.out = n % 3 == 0 ? FP4LR_OUT_F32 : FP4LR_OUT_BF16;
        p.ldY = fp4lr_ldY_padded(n, p.out);
        cr_expect_eq(fp4lr_problem_validate(&p).code, FP4LR_OK, "N = %lld", (long long)n);
    }
}

Test(problem, resolve_fills_packed)
{
    fp4lr_problem p = base();
    p.ldU = 48;
    fp4lr_problem_resolve(&p);
    cr_assert_eq(p.ldL, 32);
    cr_assert_eq(p.ldU, 48);
    cr_assert_eq(p.ldY, 512);
}

Test(problem, sizes_hand_values)
{
    /* M=300 N=200 K=192 NVFP4 r=32, wc only, bf16 packed:
     * A = 300*96 = 28800; W = 200*96 = 19200;
     * SFA = ceil(300/128)=3 * ceil(12/4)=3 * 512 = 4608; SFW = 2*3*512 = 3072;
     * L = 300*32*2 = 19200; U = 200*32*2 = 12800; wc = 800; beta = 0;
     * Y = 300*200*2 = 120000. */
    fp4lr_problem p = {.M = 300, .N = 200, .K = 192, .r = 32, .format = FP4LR_NVFP4,
                       .out = FP4LR_OUT_BF16, .has_wc = 1};
    fp4lr_sizes s = fp4lr_problem_sizes(&p);
    cr_assert_eq(s.A, 28800);
    cr_assert_eq(s.W, 19200);
    cr_assert_eq(s.SFA, 4608);
    cr_assert_eq(s.SFW, 3072);
    cr_assert_eq(s.L, 19200);
    cr_assert_eq(s.U, 12800);
    cr_assert_eq(s.wc, 800);
    cr_assert_eq(s.beta, 0);
    cr_assert_eq(s.Y, 120000);
}

Test(problem, sizes_mxfp4_strided_f32)
{
    /* M=1 N=8 K=128 MXFP4 r=0, ldY=16, f32: A = 64; SFA = 1*1*512 = 512 (Kv = 4);
     * L = U = 0; Y = 1*16*4 = 64. */
    fp4lr_problem p = {.M = 1, .N = 8, .K = 128, .format = FP4LR_MXFP4, .out = FP4LR_OUT_F32,
                       .ldY = 16};
    fp4lr_sizes s = fp4lr_problem_sizes(&p);
    cr_assert_eq(s.A, 64);
    cr_assert_eq(s.SFA, 512);
    cr_assert_eq(s.SFW, 512);
    cr_assert_eq(s.L, 0);
    cr_assert_eq(s.U, 0);
    cr_assert_eq(s.Y, 64);
}

Test(problem, out_names)
{
    cr_assert_str_eq(fp4lr_out_name(FP4LR_OUT_BF16), "bf16");
    cr_assert_str_eq(fp4lr_out_name(FP4LR_OUT_F16), "f16");
    cr_assert_str_eq(fp4lr_out_name(FP4LR_OUT_F32), "f32");
    cr_assert_str_eq(fp4lr_out_name((fp4lr_out_type)9), "?");
}

/* ---- argument pointers ----------------------------------------------------- */

/* Device-like addresses, 16-byte aligned, 256 MiB apart (validation never dereferences
 * them): operand i at (i + 1) << 28. */
#define FAKE(i) ((uintptr_t)(i + 1) << 28)
#define ARENA(i, off) ((const uint8_t *)(FAKE(i) + (off)))

static fp4lr_args args_all(void)
{
    fp4lr_args a = {
        .A = ARENA(0, 0), .SFA = ARENA(1, 0), .W = ARENA(2, 0), .SFW = ARENA(3, 0),
        .L = (const uint16_t *)ARENA(4, 0), .U = (const uint16_t *)ARENA(5, 0),
        .wc = (const float *)ARENA(6, 0), .beta = (const float *)ARENA(7, 0),
        .alpha = 1.0f, .Y = (void *)FAKE(8),
    };
    return a;
}

Test(args, all_present_pass)
{
    fp4lr_problem p = base();
    fp4lr_args a = args_all();
    cr_assert_eq(fp4lr_args_validate(&p, &a).code, FP4LR_OK);
}

Test(args, nan_alpha_is_legal)
{
    fp4lr_problem p = base();
    fp4lr_args a = args_all();
    a.alpha = NAN;
    cr_assert_eq(fp4lr_args_validate(&p, &a).code, FP4LR_OK);
}

Test(args, null_a)
{
    fp4lr_problem p = base();
    fp4lr_args a = args_all();
    a.A = NULL;
    expect_rule(fp4lr_args_validate(&p, &a), "NULL_POINTER", "A is NULL");
}

Test(args, null_y)
{
    fp4lr_problem p = base();
    fp4lr_args a = args_all();
    a.Y = NULL;
    expect_rule(fp4lr_args_validate(&p, &a), "NULL_POINTER", "Y is NULL");
}

Test(args, null_l_when_rank)
{
    fp4lr_problem p = base();
    fp4lr_args a = args_all();
    a.L = NULL;
    expect_rule(fp4lr_args_validate(&p, &a), "NULL_POINTER", "L is NULL");
    /* Without a low-rank branch L and U may be NULL. */
    p.r = 0;
    a.U = NULL;
    cr_assert_eq(fp4lr_args_validate(&p, &a).code, FP4LR_OK);
}

Test(args, null_wc_beta_only_when_present)
{
    fp4lr_problem p = base();
    fp4lr_args a = args_all();
    a.beta = NULL;
    expect_rule(fp4lr_args_validate(&p, &a), "NULL_POINTER", "beta is NULL");
    p.has_beta = 0;
    a.wc = NULL;
    expect_rule(fp4lr_args_validate(&p, &a), "NULL_POINTER", "wc is NULL");
    p.has_wc = 0;
    cr_assert_eq(fp4lr_args_validate(&p, &a).code, FP4LR_OK);
}

Test(args, misaligned_sfw)
{
    fp4lr_problem p = base();
    fp4lr_args a = args_all();
    a.SFW = ARENA(3, 49);
    expect_rule(fp4lr_args_validate(&p, &a), "PTR_ALIGN", "SFW = 0x");
}

Test(args, misaligned_u)
{
    /* 8-byte aligned is not enough. */
    fp4lr_problem p = base();
    fp4lr_args a = args_all();
    a.U = (const uint16_t *)ARENA(5, 8);
    expect_rule(fp4lr_args_validate(&p, &a), "PTR_ALIGN", "not 16-byte aligned");
}

Test(args, null_args_struct)
{
    fp4lr_problem p = base();
    expect_rule(fp4lr_args_validate(&p, NULL), "NULL_POINTER", "args");
}

/* Y_ALIAS: Y's written bytes share a byte with an operand; touching ranges do not. */
Test(args, y_overlapping_an_operand)
{
    fp4lr_problem p = base(); /* 256 x 512 bf16 Y: 262144 bytes; W 512 x 512 bytes */
    fp4lr_args a = args_all();
    a.Y = (void *)(FAKE(2) + 262144 - 16); /* its first row lies on W's last 16 bytes... */
    expect_rule(fp4lr_args_validate(&p, &a), "Y_ALIAS", "overlaps W");
    a.Y = (void *)(FAKE(2) + 262144); /* ...and right after it, not */
    cr_expect_eq(fp4lr_args_validate(&p, &a).code, FP4LR_OK);
    a = args_all();
    a.Y = (void *)FAKE(6); /* in place of wc */
    expect_rule(fp4lr_args_validate(&p, &a), "Y_ALIAS", "overlaps wc");
    p.has_wc = 0; /* wc unused: its place is free */
    a.wc = NULL;
    cr_expect_eq(fp4lr_args_validate(&p, &a).code, FP4LR_OK);
    a = args_all();
    p = base();
    a.Y = (void *)(FAKE(1) + 64); /* inside SFA */
    expect_rule(fp4lr_args_validate(&p, &a), "Y_ALIAS", "overlaps SFA");
}
