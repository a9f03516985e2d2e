/* The sm_100a descriptor encoders (host/sm100a_desc.c) against the worked
 * values of shared/facts/sm100a-tcgen05.md: the block-scaled idesc (§2), the
 * shared-memory descriptor (§3), the scale-factor copy descriptor and the TMEM
 * scale-factor columns (§5.3); every checker rule; decode/encode round trips;
 * and the budget solver's tensor-memory plan against the SF column functions. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "sm100a_desc.h"

/* ---- helpers --------------------------------------------------------------- */

/* A deterministic 64-bit LCG (Knuth's MMIX constants); the state is the caller's. */
static uint32_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static fp4lr_sm100a_idesc nvfp4(int m, int n)
{
    fp4lr_sm100a_idesc d = {.kind = FP4LR_SM100A_KIND_MXF4NVF4, .block = FP4LR_SM100A_BLOCK16,
                            .cta_group = m == 256 ? 2 : 1, .scale = FP4LR_SM100A_SCALE_UE4M3,
                            .m = m, .n = n};
    return d;
}

static fp4lr_sm100a_idesc ue8m0(int m, int n)
{
    fp4lr_sm100a_idesc d = {.kind = FP4LR_SM100A_KIND_MXF4, .block = FP4LR_SM100A_BLOCK32,
                            .cta_group = m == 256 ? 2 : 1, .scale = FP4LR_SM100A_SCALE_UE8M0,
                            .m = m, .n = n};
    return d;
}

static void expect_idesc_ok(const fp4lr_sm100a_idesc *d)
{
    const fp4lr_status s = fp4lr_sm100a_idesc_check(d);
    cr_assert_eq(s.code, FP4LR_OK, "rejected: %s: %s", s.rule, s.msg);
}

static void expect_idesc_rule(fp4lr_sm100a_idesc d, fp4lr_code code, const char *rule)
{
    const fp4lr_status s = fp4lr_sm100a_idesc_check(&d);
    cr_assert_eq(s.code, code, "expected %s, got code %d (%s: %s)", rule, s.code, s.rule, s.msg);
    cr_assert_str_eq(s.rule, rule, "message: %s", s.msg);
    cr_assert(s.msg[0] != '\0');
}

static void expect_sdesc_rule(uint32_t addr, uint32_t lbo, uint32_t sbo, fp4lr_sm100a_swizzle sw,
                              uint32_t base, const char *rule)
{
    const fp4lr_status s = fp4lr_sm100a_smem_desc_check(addr, lbo, sbo, sw, base);
    cr_assert_eq(s.code, FP4LR_E_INVALID, "expected %s, got code %d", rule, s.code);
    cr_assert_str_eq(s.rule, rule, "message: %s", s.msg);
}

/* Everything f's writer printed, as a heap string. */
typedef fp4lr_status (*print_fn)(FILE *, uint64_t);
static fp4lr_status print_idesc(FILE *f, uint64_t v) { return fp4lr_sm100a_idesc_print(f, (uint32_t)v); }

static char *printed(print_fn fn, uint64_t v)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    const fp4lr_status s = fn(f, v);
    fclose(f);
    cr_assert_eq(s.code, FP4LR_OK, "%s", s.msg);
    return text;
}

/* ==== instruction descriptor ==================================================== */

/* One row of the fact sheet's §2 table of dense worked values (SF IDs 0). */
typedef struct worked_value { int m, n; uint32_t want; } worked_value;

/* Each value from the explicit fields (make) and from fp4lr's format helper. */
static void expect_worked(fp4lr_sm100a_idesc (*make)(int, int), fp4lr_format f,
                          const worked_value *v, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const fp4lr_sm100a_idesc d = make(v[i].m, v[i].n);
        expect_idesc_ok(&d);
        cr_assert_eq(fp4lr_sm100a_idesc_block_scaled(&d), v[i].want, "%dx%d: 0x%08X != 0x%08X",
                     v[i].m, v[i].n, fp4lr_sm100a_idesc_block_scaled(&d), v[i].want);
        const fp4lr_sm100a_idesc g = fp4lr_sm100a_idesc_for_format(f, v[i].m / 128, v[i].n);
        expect_idesc_ok(&g);
        cr_assert_eq(fp4lr_sm100a_idesc_block_scaled(&g), v[i].want);
    }
}

Test(sm100a_idesc, nvfp4_worked_values)
{
    const worked_value v[] = {
        {128, 128, 0x08200480u}, {128, 256, 0x08400480u},
        {256, 128, 0x10200480u}, {256, 256, 0x10400480u},
    };
    expect_worked(nvfp4, FP4LR_NVFP4, v, sizeof v / sizeof v[0]);
}

/* kind::mxf4 (ue8m0) and kind::mxf4nvf4 with ue8m0 block32 (what fp4lr uses for MXFP4)
 * encode the same bits. */
Test(sm100a_idesc, ue8m0_worked_values)
{
    const worked_value v[] = {
        {128, 128, 0x08A00480u}, {128, 256, 0x08C00480u},
        {256, 128, 0x10A00480u}, {256, 256, 0x10C00480u},
    };
    expect_worked(ue8m0, FP4LR_MXFP4, v, sizeof v / sizeof v[0]);
}

Test(sm100a_idesc, sf_id_2_variants)
{
    fp4lr_sm100a_idesc d = ue8m0(128, 128);
    d.sfa_id = 2;
    cr_assert_eq(fp4lr_sm100a_idesc_block_scaled(&d), 0x08A00480u + (2u << 29)); /* 0x48A00480 */
    cr_assert_eq(fp4lr_sm100a_idesc_block_scaled(&d), 0x48A00480u);
    d.sfa_id = 0, d.sfb_id = 2;
    cr_assert_eq(fp4lr_sm100a_idesc_block_scaled(&d), 0x08A00480u + (2u << 4));
    cr_assert_eq(fp4lr_sm100a_idesc_block_scaled(&d), 0x08A004A0u);
    d.sfa_id = 2;
    expect_idesc_ok(&d);
    cr_assert_eq(fp4lr_sm100a_idesc_block_scaled(&d), 0x48A004A0u);
    fp4lr_sm100a_idesc e = ue8m0(256, 256);
    e.sfa_id = e.sfb_id = 2;
    cr_assert_eq(fp4lr_sm100a_idesc_block_scaled(&e), 0x10C00480u + (2u << 29) + (2u << 4));
}

Test(sm100a_idesc, negate_bits)
{
    fp4lr_sm100a_idesc d = nvfp4(128, 128);
    d.negate_a = 1;
    cr_assert_eq(fp4lr_sm100a_idesc_block_scaled(&d), 0x08200480u | 1u << 13);
    d.negate_a = 0, d.negate_b = 1;
    cr_assert_eq(fp4lr_sm100a_idesc_block_scaled(&d), 0x08204480u);
    expect_idesc_ok(&d);
}

/* The GPU-MODE kernel's form: (1<<7)|(1<<10)|((N>>3)<<17)|((M>>7)<<27), ue4m3, SF IDs 0. */
Test(sm100a_idesc, gpu_mode_formula_every_shape)
{
    int checked = 0;
    for (int cg = 1; cg <= 2; cg++)
        for (int m = 128; m <= 128 * cg; m += 128)
            for (int n = 8 * cg; n <= 256; n += 8 * cg) {
                fp4lr_sm100a_idesc d = nvfp4(m, n);
                d.cta_group = cg;
                expect_idesc_ok(&d);
                const uint32_t want = (1u << 7) | (1u << 10) | ((uint32_t)(n >> 3) << 17) |
                                      ((uint32_t)(m >> 7) << 27);
                cr_assert_eq(fp4lr_sm100a_idesc_block_scaled(&d), want, "M=%d N=%d", m, n);
                checked++;
            }
    cr_assert_eq(checked, 32 + 16 + 16);
}

/* CUTLASS's InstrDescriptorBlockScaled written out field by field: m_dim_ = M>>4
 * in [24,29), b_format_ 3 bits at 10, saturate_ at 3 (0).  The fact sheet's §2
 * note says this equals the PTX M>>7 at [27,29) for M in {128, 256}. */
static uint32_t cutlass_block_scaled(int m, int n, int ue8m0_scale, int sfa, int sfb, int nega,
                                     int negb)
{
    uint32_t v = 0;
    v |= (uint32_t)sfb << 4;            /* b_sf_id_ [4,6) */
    v |= 1u << 7;                       /* a_format_ [7,10) = E2M1 */
    v |= 1u << 10;                      /* b_format_ [10,13) = E2M1 */
    v |= (uint32_t)nega << 13;          /* a_negate_ */
    v |= (uint32_t)negb << 14;          /* b_negate_ */
    v |= (uint32_t)(n >> 3) << 17;      /* n_dim_ [17,23) */
    v |= (uint32_t)ue8m0_scale << 23;   /* scale_format_ */
    v |= (uint32_t)(m >> 4) << 24;      /* m_dim_ [24,29) */
    v |= (uint32_t)sfa << 29;           /* a_sf_id_ [29,31) */
    return v;
}

Test(sm100a_idesc, cutlass_m_dim_equivalence)
{
    for (int m = 128; m <= 256; m += 128) {
        /* the M field alone: bit 27 for 128, bit 28 for 256 in both forms */
        cr_assert_eq(((uint32_t)(m >> 4) & 0x1Fu) << 24, ((uint32_t)(m >> 7)) << 27);
        for (int n = 16; n <= 256; n += 16)
            for (int scale = 0; scale <= 1; scale++)
                for (int id = 0; id <= 2; id += 2)
                    for (int neg = 0; neg <= 1; neg++) {
                        fp4lr_sm100a_idesc d = scale ? ue8m0(m, n) : nvfp4(m, n);
                        d.cta_group = 2;
                        if (scale)
                            d.sfa_id = id, d.sfb_id = 2 - id;
                        d.negate_a = neg, d.negate_b = !neg;
                        expect_idesc_ok(&d);
                        cr_assert_eq(fp4lr_sm100a_idesc_block_scaled(&d),
                                     cutlass_block_scaled(m, n, scale, d.sfa_id, d.sfb_id, neg, !neg),
                                     "M=%d N=%d scale=%d id=%d", m, n, scale, id);
                    }
    }
}

/* A random idesc that passes the check. */
static fp4lr_sm100a_idesc random_valid_idesc(uint64_t *s)
{
    fp4lr_sm100a_idesc d = {0};
    d.cta_group = 1 + (int)(lcg(s) % 2);
    d.m = d.cta_group == 2 && lcg(s) % 2 ? 256 : 128;
    const int step = 8 * d.cta_group;
    d.n = step * (1 + (int)(lcg(s) % (uint32_t)(256 / step)));
    switch (lcg(s) % 4) {
    case 0: d.kind = FP4LR_SM100A_KIND_MXF4, d.scale = FP4LR_SM100A_SCALE_UE8M0,
            d.block = FP4LR_SM100A_BLOCK32; break;
    case 1: d.kind = FP4LR_SM100A_KIND_MXF4NVF4, d.scale = FP4LR_SM100A_SCALE_UE4M3,
            d.block = FP4LR_SM100A_BLOCK16; break;
    case 2: d.kind = FP4LR_SM100A_KIND_MXF4NVF4, d.scale = FP4LR_SM100A_SCALE_UE8M0,
            d.block = FP4LR_SM100A_BLOCK16; break;
    default: d.kind = FP4LR_SM100A_KIND_MXF4NVF4, d.scale = FP4LR_SM100A_SCALE_UE8M0,
             d.block = FP4LR_SM100A_BLOCK32; break;
    }
    if (d.block == FP4LR_SM100A_BLOCK32)
        d.sfa_id = 2 * (int)(lcg(s) % 2), d.sfb_id = 2 * (int)(lcg(s) % 2);
    d.negate_a = (int)(lcg(s) % 2);
    d.negate_b = (int)(lcg(s) % 2);
    return d;
}

Test(sm100a_idesc, decode_encode_round_trip_random)
{
    uint64_t seed = 0x5EED100Au;
    for (int i = 0; i < 20000; i++) {
        const fp4lr_sm100a_idesc d = random_valid_idesc(&seed);
        expect_idesc_ok(&d);
        const uint32_t v = fp4lr_sm100a_idesc_block_scaled(&d);
        /* the qualifiers are not in the 32 bits: decode leaves what the caller put there */
        fp4lr_sm100a_idesc back = {.kind = d.kind, .block = d.block, .cta_group = d.cta_group};
        back.m = back.n = back.sfa_id = back.sfb_id = -1;
        const fp4lr_status s = fp4lr_sm100a_idesc_decode(v, &back);
        cr_assert_eq(s.code, FP4LR_OK, "%s", s.msg);
        cr_assert(memcmp(&back, &d, sizeof d) == 0, "idesc 0x%08X: M %d/%d N %d/%d ids %d%d/%d%d",
                  v, back.m, d.m, back.n, d.n, back.sfa_id, back.sfb_id, d.sfa_id, d.sfb_id);
        cr_assert_eq(fp4lr_sm100a_idesc_block_scaled(&back), v);
    }
}

/* Every qualifier/field combination in range, counted by hand: the check accepts
 * exactly the PTX-valid ones. */
Test(sm100a_idesc, check_accepts_exactly_the_valid_combinations)
{
    const fp4lr_sm100a_kind kinds[] = {FP4LR_SM100A_KIND_MXF4, FP4LR_SM100A_KIND_MXF4NVF4};
    const fp4lr_sm100a_block blocks[] = {FP4LR_SM100A_BLOCK16, FP4LR_SM100A_BLOCK32};
    int accepted = 0;
    for (int k = 0; k < 2; k++)
        for (int sc = 0; sc <= 1; sc++)
            for (int b = 0; b < 2; b++)
                for (int ida = 0; ida <= 3; ida++)
                    for (int idb = 0; idb <= 3; idb++) {
                        fp4lr_sm100a_idesc d = {.kind = kinds[k], .block = blocks[b],
                                                .cta_group = 1, .scale = (fp4lr_sm100a_scale)sc,
                                                .m = 128, .n = 128, .sfa_id = ida, .sfb_id = idb};
                        accepted += fp4lr_sm100a_idesc_check(&d).code == FP4LR_OK;
                    }
    /* mxf4/ue8m0/block32: 2x2 IDs; mxf4nvf4/ue4m3/block16: 1; mxf4nvf4/ue8m0/block16: 1;
     * mxf4nvf4/ue8m0/block32: 2x2 */
    cr_assert_eq(accepted, 4 + 1 + 1 + 4);
}

Test(sm100a_idesc, check_kind_scale_block_rules)
{
    fp4lr_sm100a_idesc d = nvfp4(128, 128);
    d.kind = 0;
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_KIND");
    d = nvfp4(128, 128), d.scale = 2;
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_SCALE_TYPE");
    d = nvfp4(128, 128), d.block = 64;
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_BLOCK");
    d = ue8m0(128, 128), d.scale = FP4LR_SM100A_SCALE_UE4M3; /* mxf4 with ue4m3 */
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_MXF4_SCALE");
    d = ue8m0(128, 128), d.block = FP4LR_SM100A_BLOCK16; /* mxf4 with block16 */
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_MXF4_BLOCK");
    d = nvfp4(128, 128), d.block = FP4LR_SM100A_BLOCK32; /* ue4m3 with block32 */
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_UE4M3_BLOCK");
    cr_assert_eq(fp4lr_sm100a_idesc_check(NULL).code, FP4LR_E_INVALID);
    cr_assert_str_eq(fp4lr_sm100a_idesc_check(NULL).rule, "NULL_POINTER");
}

Test(sm100a_idesc, check_shape_rules_per_cta_group)
{
    fp4lr_sm100a_idesc d = nvfp4(128, 128);
    d.cta_group = 3;
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_CTA_GROUP");
    d = nvfp4(64, 128); /* M = 64 does not exist for the 4-bit kinds */
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_M");
    d.cta_group = 2;
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_M");
    d = nvfp4(256, 128), d.cta_group = 1; /* M = 256 needs the pair */
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_M");
    d = nvfp4(128, 128), d.cta_group = 2; /* the pair may issue M = 128 */
    expect_idesc_ok(&d);
    /* cta_group::1: N in 8..256 step 8 */
    const int bad1[] = {0, 4, 12, 260, 264, -8};
    for (size_t i = 0; i < sizeof bad1 / sizeof bad1[0]; i++) {
        d = nvfp4(128, bad1[i]);
        expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_N");
    }
    d = nvfp4(128, 8);
    expect_idesc_ok(&d);
    d = nvfp4(128, 24);
    expect_idesc_ok(&d);
    /* cta_group::2: N in 16..256 step 16, for M = 128 and 256 */
    const int bad2[] = {8, 24, 248, 272};
    for (int m = 128; m <= 256; m += 128)
        for (size_t i = 0; i < sizeof bad2 / sizeof bad2[0]; i++) {
            d = nvfp4(m, bad2[i]);
            d.cta_group = 2;
            expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_N");
        }
    d = nvfp4(256, 16);
    expect_idesc_ok(&d);
}

Test(sm100a_idesc, check_sf_id_rules)
{
    fp4lr_sm100a_idesc d = nvfp4(128, 128);
    d.sfa_id = 2; /* block16 uses all 4 bytes: IDs must be 0 */
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_SF_ID_BLOCK16");
    d = nvfp4(128, 128), d.sfb_id = 1;
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_SF_ID_BLOCK16");
    /* block32 with ue8m0 through mxf4nvf4 too */
    d = fp4lr_sm100a_idesc_for_format(FP4LR_MXFP4, 2, 256);
    const int bad[] = {1, 3, 4, -2};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fp4lr_sm100a_idesc a = d, b = d;
        a.sfa_id = bad[i];
        b.sfb_id = bad[i];
        expect_idesc_rule(a, FP4LR_E_INVALID, "IDESC_SF_ID_BLOCK32");
        expect_idesc_rule(b, FP4LR_E_INVALID, "IDESC_SF_ID_BLOCK32");
    }
    d.sfa_id = 2, d.sfb_id = 0;
    expect_idesc_ok(&d);
}

Test(sm100a_idesc, check_flag_rules)
{
    fp4lr_sm100a_idesc d = nvfp4(128, 128);
    d.negate_b = 2;
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_NEGATE");
    d = nvfp4(128, 128), d.transpose_a = 1;
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_TRANSPOSE");
    d = ue8m0(256, 256), d.transpose_b = 1;
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_TRANSPOSE");
    d = nvfp4(256, 256), d.k96 = 1; /* K = 96 is a B300 (sm_103a) feature */
    expect_idesc_rule(d, FP4LR_E_INVALID, "IDESC_K96");
    d = nvfp4(128, 128), d.sparse = 1;
    expect_idesc_rule(d, FP4LR_E_UNSUPPORTED, "IDESC_SPARSE");
}

Test(sm100a_idesc, decode_rejects_reserved_bits_and_types)
{
    const uint32_t good = 0x08200480u;
    const int reserved[] = {0, 1, 3, 6, 12, 24, 25, 26};
    fp4lr_sm100a_idesc d;
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++) {
        const fp4lr_status s = fp4lr_sm100a_idesc_decode(good | 1u << reserved[i], &d);
        cr_assert_eq(s.code, FP4LR_E_INVALID, "bit %d", reserved[i]);
        cr_assert_str_eq(s.rule, "IDESC_RESERVED");
        cr_assert_eq(d.m, 128); /* filled either way */
    }
    /* A type E2M1 is 1 for the 4-bit kinds (5 is mxf8f6f4's E2M1) */
    fp4lr_status s = fp4lr_sm100a_idesc_decode((good & ~(7u << 7)) | 5u << 7, &d);
    cr_assert_str_eq(s.rule, "IDESC_AB_TYPE");
    s = fp4lr_sm100a_idesc_decode(good & ~(3u << 10), &d);
    cr_assert_str_eq(s.rule, "IDESC_AB_TYPE");
    s = fp4lr_sm100a_idesc_decode(0x10C00480u, &d);
    cr_assert_eq(s.code, FP4LR_OK);
    cr_assert_eq(d.m, 256);
    cr_assert_eq(d.n, 256);
    cr_assert_eq(d.scale, FP4LR_SM100A_SCALE_UE8M0);
}

Test(sm100a_idesc, print_describes_the_fields)
{
    char *t = printed(print_idesc, 0x50A004A0u); /* 256x128 ue8m0, SF IDs 2/2 */
    cr_assert(strstr(t, "0x50A004A0") != NULL, "%s", t);
    cr_assert(strstr(t, "M=256 N=128 K=64 scale=ue8m0 sfa_id=2 sfb_id=2") != NULL, "%s", t);
    cr_assert(strstr(t, "[") == NULL, "%s", t);
    free(t);
    t = printed(print_idesc, 0x08200480u | 1u << 25);
    cr_assert(strstr(t, "IDESC_RESERVED") != NULL, "%s", t);
    free(t);
    cr_assert_str_eq(fp4lr_sm100a_kind_name(FP4LR_SM100A_KIND_MXF4NVF4), "mxf4nvf4");
    cr_assert_str_eq(fp4lr_sm100a_kind_name(0), "?");
}

/* ==== shared-memory descriptor ================================================== */

static fp4lr_status print_sdesc(FILE *f, uint64_t v) { return fp4lr_sm100a_smem_desc_print(f, v); }

/* kind::f16, bf16 x bf16 -> fp32 (the fused kernels' low-rank MMA): the block-scaled
 * worked value of the same M x N with the D format F32 (bit 4) where the SFB ID would be. */
Test(sm100a_idesc, f16_bf16_worked_values)
{
    cr_expect_eq(fp4lr_sm100a_idesc_f16_bf16(128, 256, 1), 0x08400490u);
    cr_expect_eq(fp4lr_sm100a_idesc_f16_bf16(256, 256, 2), 0x10400490u);
    cr_expect_eq(fp4lr_sm100a_idesc_f16_bf16(128, 128, 1), 0x08200490u);
    cr_expect_eq(fp4lr_sm100a_idesc_f16_bf16(128, 256, 2), 0x08400490u, "the pair may issue M = 128 too");
    fp4lr_sm100a_idesc d = fp4lr_sm100a_idesc_for_format(FP4LR_NVFP4, 2, 256);
    cr_expect_eq(fp4lr_sm100a_idesc_f16_bf16(256, 256, 2), fp4lr_sm100a_idesc_block_scaled(&d) | (1u << 4));
    /* shapes the MMA cannot issue */
    cr_expect_eq(fp4lr_sm100a_idesc_f16_bf16(256, 256, 1), 0u, "M = 256 needs the pair");
    cr_expect_eq(fp4lr_sm100a_idesc_f16_bf16(64, 256, 1), 0u);
    cr_expect_eq(fp4lr_sm100a_idesc_f16_bf16(128, 264, 1), 0u);
    cr_expect_eq(fp4lr_sm100a_idesc_f16_bf16(256, 200, 2), 0u, "N steps of 16 with the pair");
    cr_expect_eq(fp4lr_sm100a_idesc_f16_bf16(128, 256, 3), 0u);
}

Test(sm100a_smem_desc, sw128_kmajor_constant)
{
    for (uint32_t addr = 0; addr < FP4LR_SM100A_SMEM_DESC_ADDR_LIMIT; addr += 1024) {
        const uint64_t want = 0x4000404000000000ull | (addr >> 4);
        cr_assert_eq(fp4lr_sm100a_smem_desc_kmajor_sw128(addr), want, "addr 0x%X", addr);
        cr_assert_eq(fp4lr_sm100a_smem_desc(addr, 0, 1024, FP4LR_SM100A_SWIZZLE_128B, 0), want);
        cr_assert_eq(fp4lr_sm100a_smem_desc_check(addr, 0, 1024, FP4LR_SM100A_SWIZZLE_128B, 0).code,
                     FP4LR_OK);
    }
    cr_assert_eq(fp4lr_sm100a_smem_desc_kmajor_sw128(0x1C400), 0x4000404000001C40ull);
}

Test(sm100a_smem_desc, sf_copy_constant)
{
    for (uint32_t addr = 0; addr < FP4LR_SM100A_SMEM_DESC_ADDR_LIMIT; addr += 512)
        cr_assert_eq(fp4lr_sm100a_sf_copy_desc(addr), 0x0000400800000000ull | (addr >> 4));
    cr_assert_eq(fp4lr_sm100a_sf_copy_desc(0x30200), 0x0000400800003020ull);
    cr_assert_eq(fp4lr_sm100a_smem_desc_check(0x30200, 0, 128, FP4LR_SM100A_SWIZZLE_NONE, 0).code,
                 FP4LR_OK);
}

Test(sm100a_smem_desc, field_positions)
{
    /* start 0x1230>>4 = 0x123; LBO 0x40>>4 = 4 at 16; SBO 0x400>>4 = 0x40 at 32; bit 46;
     * base offset 3 at 49; 64B swizzle 4 at 61 */
    cr_assert_eq(fp4lr_sm100a_smem_desc(0x1230, 0x40, 0x400, FP4LR_SM100A_SWIZZLE_64B, 3),
                 0x8006404000040123ull);
    /* the swizzle codes at bits 61-63 */
    cr_assert_eq(fp4lr_sm100a_smem_desc(0, 0, 0, FP4LR_SM100A_SWIZZLE_NONE, 0), 0x0000400000000000ull);
    cr_assert_eq(fp4lr_sm100a_smem_desc(0, 0, 0, FP4LR_SM100A_SWIZZLE_128B_BASE32B, 0),
                 0x2000400000000000ull);
    cr_assert_eq(fp4lr_sm100a_smem_desc(0, 0, 0, FP4LR_SM100A_SWIZZLE_128B, 0), 0x4000400000000000ull);
    cr_assert_eq(fp4lr_sm100a_smem_desc(0, 0, 0, FP4LR_SM100A_SWIZZLE_64B, 0), 0x8000400000000000ull);
    cr_assert_eq(fp4lr_sm100a_smem_desc(0, 0, 0, FP4LR_SM100A_SWIZZLE_32B, 0), 0xC000400000000000ull);
    /* largest fields: 14 bits each, LBO mode (bit 52) stays 0 */
    cr_assert_eq(fp4lr_sm100a_smem_desc(0x3FFF0, 0x3FFF0, 0x3FFF0, FP4LR_SM100A_SWIZZLE_NONE, 0),
                 0x00007FFF3FFF3FFFull);
    /* the address is taken modulo 256 KiB: (addr & 0x3FFFF) >> 4 */
    cr_assert_eq(fp4lr_sm100a_smem_desc(0x40010, 0, 0, FP4LR_SM100A_SWIZZLE_NONE, 0),
                 0x0000400000000001ull);
}

Test(sm100a_smem_desc, k_advance_walks_the_sw128_row)
{
    const uint32_t base = 0x8000;
    const uint64_t d0 = fp4lr_sm100a_smem_desc_kmajor_sw128(base);
    uint64_t d = d0;
    for (int k = 1; k < 4; k++) { /* 256 fp4 per 128-byte row = 4 MMAs of 32 bytes */
        d = fp4lr_sm100a_smem_desc_advance(d, FP4LR_SM100A_MMA_K_BYTES);
        cr_assert_eq(d, d0 + 2u * (uint32_t)k, "MMA %d: +2 per MMA", k);
        cr_assert_eq(d, fp4lr_sm100a_smem_desc_kmajor_sw128(base + 32u * (uint32_t)k));
        cr_assert_eq(d >> 14, d0 >> 14, "no bit above the start field changes");
    }
    /* the start field wraps inside its 14 bits, never into the reserved bits 14-15 */
    const uint64_t top = fp4lr_sm100a_smem_desc_kmajor_sw128(0x3FFE0);
    cr_assert_eq(fp4lr_sm100a_smem_desc_advance(top, 32), 0x4000404000000000ull);
    cr_assert_eq(fp4lr_sm100a_smem_desc_advance(d0, 0), d0);
}

Test(sm100a_smem_desc, kmajor_sw128_offsets)
{
    /* 128 rows: K chunks of 256 elements are 16 KiB apart, 32 bytes per MMA inside */
    cr_assert_eq(fp4lr_sm100a_kmajor_sw128_offset(128, 0), 0u);
    cr_assert_eq(fp4lr_sm100a_kmajor_sw128_offset(128, 64), 32u);
    cr_assert_eq(fp4lr_sm100a_kmajor_sw128_offset(128, 192), 96u);
    cr_assert_eq(fp4lr_sm100a_kmajor_sw128_offset(128, 256), 16384u);
    cr_assert_eq(fp4lr_sm100a_kmajor_sw128_offset(128, 320), 16416u);
    /* ThunderKittens' chunk_descriptor form: (chunk%4)*32 + (chunk/4)*rows*128 */
    for (uint32_t rows = 64; rows <= 256; rows += 64)
        for (uint32_t chunk = 0; chunk < 16; chunk++) {
            const uint32_t off = fp4lr_sm100a_kmajor_sw128_offset(rows, 64 * chunk);
            cr_assert_eq(off, (chunk % 4) * 32 + (chunk / 4) * rows * 128);
            const uint32_t base = 0x10000;
            cr_assert_eq(fp4lr_sm100a_smem_desc_advance(fp4lr_sm100a_smem_desc_kmajor_sw128(base), off),
                         fp4lr_sm100a_smem_desc_kmajor_sw128(base + off));
        }
}

Test(sm100a_smem_desc, check_rules)
{
    const fp4lr_sm100a_swizzle sw = FP4LR_SM100A_SWIZZLE_128B;
    expect_sdesc_rule(0x1008, 0, 1024, sw, 0, "SDESC_ADDR_ALIGN");
    expect_sdesc_rule(0x40000, 0, 1024, sw, 0, "SDESC_ADDR_RANGE");
    expect_sdesc_rule(0x1000, 8, 1024, sw, 0, "SDESC_LBO_ALIGN");
    expect_sdesc_rule(0x1000, 0x40000, 1024, sw, 0, "SDESC_LBO_RANGE");
    expect_sdesc_rule(0x1000, 0, 1000, sw, 0, "SDESC_SBO_ALIGN");
    expect_sdesc_rule(0x1000, 0, 0x40000, sw, 0, "SDESC_SBO_RANGE");
    const int bad_codes[] = {3, 5, 7, 8};
    for (size_t i = 0; i < sizeof bad_codes / sizeof bad_codes[0]; i++)
        expect_sdesc_rule(0x1000, 0, 1024, (fp4lr_sm100a_swizzle)bad_codes[i], 0, "SDESC_SWIZZLE");
    expect_sdesc_rule(0x1000, 0, 1024, sw, 8, "SDESC_BASE_OFFSET");
    expect_sdesc_rule(0x1000, 0, 128, FP4LR_SM100A_SWIZZLE_NONE, 1, "SDESC_BASE_OFFSET");
    /* the edges that pass */
    cr_assert_eq(fp4lr_sm100a_smem_desc_check(0x3FFF0, 0x3FFF0, 0x3FFF0, sw, 7).code, FP4LR_OK);
    cr_assert_eq(fp4lr_sm100a_smem_desc_check(0x10, 16, 16, FP4LR_SM100A_SWIZZLE_32B, 0).code,
                 FP4LR_OK);
}

Test(sm100a_smem_desc, base_offset_rule)
{
    cr_assert_eq(fp4lr_sm100a_smem_base_offset(0x4000, FP4LR_SM100A_SWIZZLE_128B), 0u);
    cr_assert_eq(fp4lr_sm100a_smem_base_offset(0x4080, FP4LR_SM100A_SWIZZLE_128B), 1u);
    cr_assert_eq(fp4lr_sm100a_smem_base_offset(0x4380, FP4LR_SM100A_SWIZZLE_128B_BASE32B), 7u);
    cr_assert_eq(fp4lr_sm100a_smem_base_offset(0x200, FP4LR_SM100A_SWIZZLE_64B), 0u);
    cr_assert_eq(fp4lr_sm100a_smem_base_offset(0x280, FP4LR_SM100A_SWIZZLE_64B), 5u);
    cr_assert_eq(fp4lr_sm100a_smem_base_offset(0x100, FP4LR_SM100A_SWIZZLE_32B), 0u);
    cr_assert_eq(fp4lr_sm100a_smem_base_offset(0x180, FP4LR_SM100A_SWIZZLE_32B), 3u);
    cr_assert_eq(fp4lr_sm100a_smem_base_offset(0x180, FP4LR_SM100A_SWIZZLE_NONE), 0u);
}

Test(sm100a_smem_desc, decode_encode_round_trip_random)
{
    const fp4lr_sm100a_swizzle codes[] = {FP4LR_SM100A_SWIZZLE_NONE, FP4LR_SM100A_SWIZZLE_128B_BASE32B,
                                          FP4LR_SM100A_SWIZZLE_128B, FP4LR_SM100A_SWIZZLE_64B,
                                          FP4LR_SM100A_SWIZZLE_32B};
    uint64_t seed = 0xDE5C0001u;
    for (int i = 0; i < 20000; i++) {
        const uint32_t addr = (lcg(&seed) % 0x4000u) << 4, lbo = (lcg(&seed) % 0x4000u) << 4,
                       sbo = (lcg(&seed) % 0x4000u) << 4;
        const fp4lr_sm100a_swizzle sw = codes[lcg(&seed) % 5];
        const uint32_t base = sw == FP4LR_SM100A_SWIZZLE_NONE ? 0 : lcg(&seed) % 8;
        cr_assert_eq(fp4lr_sm100a_smem_desc_check(addr, lbo, sbo, sw, base).code, FP4LR_OK);
        const uint64_t v = fp4lr_sm100a_smem_desc(addr, lbo, sbo, sw, base);
        fp4lr_sm100a_smem_fields f;
        const fp4lr_status s = fp4lr_sm100a_smem_desc_decode(v, &f);
        cr_assert_eq(s.code, FP4LR_OK, "%s", s.msg);
        cr_assert_eq(f.start_addr, addr);
        cr_assert_eq(f.lbo_bytes, lbo);
        cr_assert_eq(f.sbo_bytes, sbo);
        cr_assert_eq(f.fixed_46_48, 1u);
        cr_assert_eq(f.base_offset, base);
        cr_assert_eq(f.lbo_mode, 0u);
        cr_assert_eq(f.swizzle, (uint32_t)sw);
        cr_assert_eq(f.reserved, 0u);
        cr_assert_eq(fp4lr_sm100a_smem_desc(f.start_addr, f.lbo_bytes, f.sbo_bytes,
                                            (fp4lr_sm100a_swizzle)f.swizzle, f.base_offset), v);
    }
}

Test(sm100a_smem_desc, decode_rejects)
{
    const uint64_t good = 0x4000404000000400ull;
    fp4lr_sm100a_smem_fields f;
    const int reserved[] = {14, 15, 30, 31, 53, 60};
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++) {
        const fp4lr_status s = fp4lr_sm100a_smem_desc_decode(good | 1ull << reserved[i], &f);
        cr_assert_str_eq(s.rule, "SDESC_RESERVED", "bit %d", reserved[i]);
        cr_assert_eq(f.reserved, 1ull << reserved[i]);
    }
    cr_assert_str_eq(fp4lr_sm100a_smem_desc_decode(good & ~(1ull << 46), &f).rule, "SDESC_FIXED");
    cr_assert_eq(f.fixed_46_48, 0u);
    cr_assert_str_eq(fp4lr_sm100a_smem_desc_decode(good | 1ull << 47, &f).rule, "SDESC_FIXED");
    cr_assert_str_eq(fp4lr_sm100a_smem_desc_decode(good | 1ull << 52, &f).rule, "SDESC_LBO_MODE");
    cr_assert_str_eq(fp4lr_sm100a_smem_desc_decode((good & ~(7ull << 61)) | 5ull << 61, &f).rule,
                     "SDESC_SWIZZLE");
    const fp4lr_status s = fp4lr_sm100a_smem_desc_decode(good, &f);
    cr_assert_eq(s.code, FP4LR_OK);
    cr_assert_eq(f.start_addr, 0x4000u);
    cr_assert_eq(f.sbo_bytes, 1024u);
    cr_assert_eq(f.swizzle, 2u);
}

Test(sm100a_smem_desc, print_describes_the_fields)
{
    char *t = printed(print_sdesc, fp4lr_sm100a_smem_desc_kmajor_sw128(0x4000));
    cr_assert(strstr(t, "0x4000404000000400") != NULL, "%s", t);
    cr_assert(strstr(t, "start=0x04000 LBO=0 SBO=1024 fixed=1 base_offset=0 lbo_mode=0 "
                        "swizzle=2 (128B)") != NULL, "%s", t);
    free(t);
    t = printed(print_sdesc, fp4lr_sm100a_sf_copy_desc(0x200) | 1ull << 52);
    cr_assert(strstr(t, "SBO=128") != NULL && strstr(t, "SDESC_LBO_MODE") != NULL, "%s", t);
    free(t);
}

/* ==== tensor memory ============================================================== */

Test(sm100a_tmem, addresses)
{
    cr_assert_eq(fp4lr_sm100a_tmem_addr(0, 0), 0u);
    cr_assert_eq(fp4lr_sm100a_tmem_addr(32, 5), 0x00200005u);
    cr_assert_eq(fp4lr_sm100a_tmem_addr(96, 511), 0x006001FFu);
    const uint32_t a = fp4lr_sm100a_tmem_addr(64, 300);
    cr_assert_eq(fp4lr_sm100a_tmem_lane(a), 64u);
    cr_assert_eq(fp4lr_sm100a_tmem_col(a), 300u);
}

Test(sm100a_tmem, sf_columns_per_mma_nvfp4)
{
    cr_assert_eq(fp4lr_sm100a_sf_mmas_per_atom(FP4LR_NVFP4), 1);
    cr_assert_eq(fp4lr_sm100a_sf_atoms_k(FP4LR_NVFP4, 256), 4);
    for (int k = 0; k < 4; k++) { /* one atom per MMA: sfa_col = base + 4k, SF_ID 0 */
        cr_assert_eq(fp4lr_sm100a_sfa_col(FP4LR_NVFP4, k), 4 * k);
        cr_assert_eq(fp4lr_sm100a_sf_id(FP4LR_NVFP4, k), 0);
        cr_assert_eq(fp4lr_sm100a_sfb_col(FP4LR_NVFP4, 256, k, 0), 8 * k);
        cr_assert_eq(fp4lr_sm100a_sfb_col(FP4LR_NVFP4, 128, k, 1), 4 * k);
    }
    cr_assert_eq(fp4lr_sm100a_sf_stage_sfb_base(FP4LR_NVFP4, 256), 16);
    /* fact sheet §5.3: K=256 NVFP4, SFA 16 columns + SFB (N=256) 32 columns */
    cr_assert_eq(fp4lr_sm100a_sf_stage_cols(FP4LR_NVFP4, 256, 256), 48);
}

Test(sm100a_tmem, sf_columns_per_mma_mxfp4)
{
    cr_assert_eq(fp4lr_sm100a_sf_mmas_per_atom(FP4LR_MXFP4), 2);
    cr_assert_eq(fp4lr_sm100a_sf_atoms_k(FP4LR_MXFP4, 256), 2);
    /* one atom feeds two MMAs: same columns, SF_ID 0 then 2 */
    const int col[] = {0, 0, 4, 4}, id[] = {0, 2, 0, 2};
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(fp4lr_sm100a_sfa_col(FP4LR_MXFP4, k), col[k]);
        cr_assert_eq(fp4lr_sm100a_sf_id(FP4LR_MXFP4, k), id[k]);
        cr_assert_eq(fp4lr_sm100a_sfb_col(FP4LR_MXFP4, 256, k, 0), 2 * col[k]);
    }
    cr_assert_eq(fp4lr_sm100a_sf_stage_sfb_base(FP4LR_MXFP4, 256), 8);
    /* "MXFP4: half of each (... 8 columns and ... 16 columns)" */
    cr_assert_eq(fp4lr_sm100a_sf_stage_cols(FP4LR_MXFP4, 256, 256), 24);
    /* and an idesc per parity carries the ID in bits 29-30 and 4-5 */
    fp4lr_sm100a_idesc d = fp4lr_sm100a_idesc_for_format(FP4LR_MXFP4, 2, 256);
    d.sfa_id = d.sfb_id = fp4lr_sm100a_sf_id(FP4LR_MXFP4, 1);
    expect_idesc_ok(&d);
    cr_assert_eq(fp4lr_sm100a_idesc_block_scaled(&d), 0x50C004A0u);
}

Test(sm100a_tmem, sfb_odd_tile_offsets)
{
    /* N = 64: "+2 columns for the odd 64-wide tile" */
    const int n64[] = {0, 2, 0, 2, 0};
    for (int t = 0; t < 5; t++)
        cr_assert_eq(fp4lr_sm100a_sfb_tile_col(64, t), n64[t], "N=64 tile %d", t);
    /* N = 192: "treats SFB as 256 wide and offsets by 2 on odd tiles" */
    const int n192[] = {0, 2, 0, 2};
    for (int t = 0; t < 4; t++)
        cr_assert_eq(fp4lr_sm100a_sfb_tile_col(192, t), n192[t], "N=192 tile %d", t);
    for (int t = 0; t < 4; t++) {
        cr_assert_eq(fp4lr_sm100a_sfb_tile_col(128, t), 0);
        cr_assert_eq(fp4lr_sm100a_sfb_tile_col(256, t), 0);
    }
    cr_assert_eq(fp4lr_sm100a_sfb_col(FP4LR_NVFP4, 64, 3, 7), 3 * 4 + 2);
    cr_assert_eq(fp4lr_sm100a_sfb_col(FP4LR_NVFP4, 192, 1, 1), 8 + 2);
    /* columns the MMA reads, and what a stage reserves per atom column */
    cr_assert_eq(fp4lr_sm100a_sfb_mma_cols(64), 2);
    cr_assert_eq(fp4lr_sm100a_sfb_mma_cols(192), 6);
    cr_assert_eq(fp4lr_sm100a_sfb_mma_cols(256), 8);
    cr_assert_eq(fp4lr_sm100a_sfb_atom_cols(64), 4);
    cr_assert_eq(fp4lr_sm100a_sfb_atom_cols(192), 8);
    cr_assert_eq(fp4lr_sm100a_sfb_atom_cols(256), 8);
}

Test(sm100a_tmem, sfb_tile_check)
{
    const int good[] = {32, 64, 128, 160, 192, 256};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const fp4lr_status s = fp4lr_sm100a_sfb_tile_check(good[i]);
        cr_assert_eq(s.code, FP4LR_OK, "N=%d: %s", good[i], s.msg);
    }
    /* 96: tile 1 starts at row 96 and needs rows 96..191 of a 128-row copy;
     * 80: tile 1 starts mid-column (row 80); 224: tile 1 at 96 needs 96..319 of 256 */
    const int bad[] = {80, 96, 224, 0, 264};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const fp4lr_status s = fp4lr_sm100a_sfb_tile_check(bad[i]);
        cr_assert_eq(s.code, FP4LR_E_INVALID, "N=%d", bad[i]);
        cr_assert_str_eq(s.rule, "SFB_TILE_N");
    }
    cr_assert(strstr(fp4lr_sm100a_sfb_tile_check(96).msg, "96..191") != NULL);
    /* 16: every tile stays inside its atom, but tile 1 starts at row 16, inside a column */
    const fp4lr_status s16 = fp4lr_sm100a_sfb_tile_check(16);
    cr_assert_str_eq(s16.rule, "SFB_TILE_N");
    cr_assert(strstr(s16.msg, "not on a TMEM column") != NULL, "%s", s16.msg);
}

/* ---- the budget's tensor-memory plan against the SF column functions ---------- */

static fp4lr_budget solve_sm100(fp4lr_format f, fp4lr_family fam, int cluster, int tile_n)
{
    const fp4lr_budget_req r = {.arch = FP4LR_ARCH_SM100A, .format = f, .tile_m = 128 * cluster,
                                .tile_n = tile_n, .tile_k = 256, .cluster = cluster, .family = fam,
                                .rank = fam == FP4LR_FAMILY_FUSED ? 64 : 0,
                                .has_affine = fam == FP4LR_FAMILY_FUSED, .out_bytes = 2,
                                .policy = FP4LR_POLICY_SPLIT};
    fp4lr_budget b;
    const fp4lr_status s = fp4lr_budget_solve(&r, &b);
    cr_assert_eq(s.code, FP4LR_OK, "solve failed: %s: %s", s.rule, s.msg);
    return b;
}

/* The columns one K stage's MMAs read, walked MMA by MMA over tile indices
 * 0..127 (the SFB offsets repeat after 128 tiles at most): the end of the furthest SFA and SFB read, and whether every column
 * below it is read by some MMA. */
static int stage_cols_read(fp4lr_format f, int tile_n, int tile_k, int *all_read)
{
    unsigned char used[512] = {0};
    int end = 0;
    const int sfb_base = fp4lr_sm100a_sf_stage_sfb_base(f, tile_k);
    for (int k = 0; k < tile_k / FP4LR_SM100A_MMA_K; k++)
        for (int t = 0; t < FP4LR_SM100A_SF_ATOM_ROWS; t++) {
            const int a = fp4lr_sm100a_sfa_col(f, k);
            const int b = sfb_base + fp4lr_sm100a_sfb_col(f, tile_n, k, t);
            cr_assert(a + FP4LR_SM100A_SF_COLS_PER_ATOM <= sfb_base, "SFA runs into SFB");
            for (int c = a; c < a + FP4LR_SM100A_SF_COLS_PER_ATOM; c++)
                used[c] = 1;
            for (int c = b; c < b + fp4lr_sm100a_sfb_mma_cols(tile_n); c++)
                used[c] = 1;
            end = b + fp4lr_sm100a_sfb_mma_cols(tile_n) > end ? b + fp4lr_sm100a_sfb_mma_cols(tile_n)
                                                              : end;
        }
    *all_read = 1;
    for (int c = 0; c < end; c++)
        *all_read &= used[c];
    return end;
}

static void cross_check_tmem(const fp4lr_budget *b)
{
    const fp4lr_budget_req *r = &b->req;
    const fp4lr_tmem_plan *t = &b->tmem;
    int all_read;
    const int read = stage_cols_read(r->format, r->tile_n, r->tile_k, &all_read);
    /* one stage's SF columns = what its MMAs read = what its copies fill */
    cr_assert_eq(t->sf_cols_per_stage, read, "%s N=%d: budget %d, MMAs read %d",
                 fp4lr_format_name(r->format), r->tile_n, t->sf_cols_per_stage, read);
    cr_assert(all_read, "a reserved SF column no MMA reads");
    cr_assert_eq(t->sf_cols_per_stage,
                 fp4lr_sm100a_sf_stage_cols(r->format, r->tile_n, r->tile_k));
    const int copies = fp4lr_sm100a_sf_atoms_k(r->format, r->tile_k) *
                       (1 + (r->tile_n + 127) / 128); /* SFA atoms + SFB atoms */
    cr_assert_eq(t->sf_cols_per_stage, copies * FP4LR_SM100A_SF_COLS_PER_ATOM);
    /* the accumulator: 128 lanes x full N per CTA, also in a pair */
    cr_assert_eq(t->acc_cols, r->tile_n);
    /* the allocation: a power of two in [32, 512] that holds everything */
    cr_assert(t->alloc_cols >= 32 && t->alloc_cols <= 512, "alloc %d", t->alloc_cols);
    cr_assert_eq(t->alloc_cols & (t->alloc_cols - 1), 0, "alloc %d", t->alloc_cols);
    cr_assert(t->sf_stages >= 1 && t->sf_stages <= b->stages_main);
    cr_assert_eq(t->total_cols,
                 t->acc_stages * t->acc_cols + t->lora_cols + t->sf_stages * t->sf_cols_per_stage);
    cr_assert(t->total_cols <= t->alloc_cols && t->alloc_cols < 2 * t->total_cols + 32);
    /* the MMA this tile issues is one the idesc check accepts, and its SFB fits */
    const fp4lr_sm100a_idesc d = fp4lr_sm100a_idesc_for_format(r->format, r->cluster, r->tile_n);
    expect_idesc_ok(&d);
    cr_assert_eq(d.m, r->tile_m);
    cr_assert_eq(fp4lr_sm100a_sfb_tile_check(r->tile_n).code, FP4LR_OK);
}

Test(sm100a_tmem, budget_plan_default_configurations)
{
    const fp4lr_format fmts[] = {FP4LR_NVFP4, FP4LR_MXFP4};
    const fp4lr_family fams[] = {FP4LR_FAMILY_DENSE, FP4LR_FAMILY_FUSED};
    for (int fi = 0; fi < 2; fi++)
        for (int fa = 0; fa < 2; fa++)
            for (int cluster = 1; cluster <= 2; cluster++) {
                const fp4lr_budget b = solve_sm100(fmts[fi], fams[fa], cluster, 256);
                cross_check_tmem(&b);
            }
    /* the design point, by hand: NVFP4 256x256x256 pair, dense: 256 accumulator columns
     * and 48 SF columns per stage */
    const fp4lr_budget b = solve_sm100(FP4LR_NVFP4, FP4LR_FAMILY_DENSE, 2, 256);
    cr_assert_eq(b.tmem.sf_cols_per_stage, 48);
    cr_assert_eq(b.tmem.alloc_cols, 512);
    const fp4lr_budget m = solve_sm100(FP4LR_MXFP4, FP4LR_FAMILY_DENSE, 2, 256);
    cr_assert_eq(m.tmem.sf_cols_per_stage, 24);
}

Test(sm100a_tmem, budget_plan_narrow_tiles)
{
    /* N = 64 and 192 exercise the +2-column odd-tile rule; 128 and 160 the rest */
    const int ns[] = {64, 128, 160, 192};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (int cluster = 1; cluster <= 2; cluster++)
            for (int fi = 0; fi < 2; fi++) {
                const fp4lr_budget b = solve_sm100(fi ? FP4LR_MXFP4 : FP4LR_NVFP4,
                                                   FP4LR_FAMILY_FUSED, cluster, ns[i]);
                cross_check_tmem(&b);
            }
    /* by hand: NVFP4 N=64 K=256: SFA 4x4 + SFB 4x4 (128-row atoms) = 32 columns */
    cr_assert_eq(solve_sm100(FP4LR_NVFP4, FP4LR_FAMILY_DENSE, 2, 64).tmem.sf_cols_per_stage, 32);
    /* N=192: SFA 16 + SFB 4x8 = 48 */
    cr_assert_eq(solve_sm100(FP4LR_NVFP4, FP4LR_FAMILY_DENSE, 2, 192).tmem.sf_cols_per_stage, 48);
}
