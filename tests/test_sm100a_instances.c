/* CPU suite: the sm_100a (tcgen05) kernel instantiations agree with the budget solver.
 *
 * No Blackwell GPU runs these kernels here, so this suite is what ties the PTX to the
 * host.  It reads every ptx/sm100a/<entry>.ptx (tests run from the repository root),
 * parses the entry name and the header lines written by tools/gen_sm100a.py
 *     //   total N bytes                     (shared-memory map)
 *     //   tmem alloc N columns (..., U used  (tensor-memory map)
 *     //   Accumulator stages: N
 * and checks that
 *  - the file's .entry is its file name and what fp4lr_plan_make names for its
 *    configuration, with the solver's unforced stage count,
 *  - the shared-memory map fits the plan's dynamic shared memory,
 *  - the TMEM allocation, the columns used and the accumulator stages are the solver's
 *    tensor-memory plan, with one scale-factor area per main stage,
 *  - every tcgen05 instruction of a kernel names the same cta_group, the cluster size,
 *  - the MMA stage's constants are those of the tested encoders of host/sm100a_desc.h:
 *    the kind qualifier and idesc of every MMA, the operand and scale-atom descriptor
 *    constants, the K step, the SF columns each MMA reads, the SF area per stage, and
 *    the scale-atom copies cover that area exactly once,
 *  - the default sm_100a plans (pair, and one CTA) of both formats have a built kernel,
 *  - every kernel has its sm_100f (family-target) twin in ptx/sm100f/, identical but for
 *    the target, the PTX ISA version, the block-scale spelling and the header note,
 *  - tools/gen_sm100a.py --check passes (the committed PTX is the generator's output). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "sm100a_desc.h"
#include "sm100a_gemm.h"

#define PTX_DIR "ptx/sm100a"
#define MAX_KERNELS 48

typedef struct sm100a_kernel {
    char file[256];
    char entry[FP4LR_ENTRY_NAME_LEN];
    char declared[FP4LR_ENTRY_NAME_LEN]; /* the name after .entry */
    fp4lr_format format;
    int fused;
    int tm, tn, tk, cluster, stages;
    long lora_at;         /* fused: offset of the low-rank ring ("low-rank ring at N") */
    unsigned idesc_lr;    /* fused: the kind::f16 idesc of the low-rank MMAs */
    long smem_total;
    int tmem_alloc, tmem_used, acc_stages;
    int tcgen05_ops;      /* tcgen05 instructions carrying a cta_group */
    int foreign_group;    /* of them, naming another cta_group than the cluster size */
} sm100a_kernel;

/* Counts one instruction line's cta_group against the kernel's cluster size. */
static void note_cta_group(sm100a_kernel *k, const char *line)
{
    const char *op = strstr(line, "tcgen05.");
    const char *comment = strstr(line, "//");
    if (!op || (comment && comment < op))
        return;
    const char *g = strstr(op, "cta_group::");
    if (!g)
        return;
    k->tcgen05_ops++;
    if (atoi(g + strlen("cta_group::")) != k->cluster)
        k->foreign_group++;
}

/* Parses one kernel file: its name, its header lines and its instructions. */
static void parse_kernel(const char *name, sm100a_kernel *k)
{
    memset(k, 0, sizeof *k);
    snprintf(k->file, sizeof k->file, "%s/%s", PTX_DIR, name);
    char fmt[8], fam[8];
    cr_assert_eq(sscanf(name, "fp4lr_sm100a_%5[a-z0-9]_%5[a-z]_m%dn%dk%d_c%d_s%d.ptx", fmt, fam, &k->tm, &k->tn,
                        &k->tk, &k->cluster, &k->stages),
                 7, "unexpected kernel file name %s", name);
    cr_assert(strcmp(fam, "dense") == 0 || strcmp(fam, "fused") == 0, "%s: family %s", name, fam);
    k->fused = strcmp(fam, "fused") == 0;
    cr_assert(strcmp(fmt, "nvfp4") == 0 || strcmp(fmt, "mxfp4") == 0, "%s: format %s", name, fmt);
    k->format = strcmp(fmt, "nvfp4") == 0 ? FP4LR_NVFP4 : FP4LR_MXFP4;
    snprintf(k->entry, sizeof k->entry, "%.*s", (int)(strlen(name) - 4), name);

    FILE *f = fopen(k->file, "r");
    cr_assert(f, "cannot read %s", k->file);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        const char *t;
        if ((t = strstr(line, "//   total ")))
            sscanf(t, "//   total %ld bytes", &k->smem_total);
        else if ((t = strstr(line, "//   tmem alloc ")))
            sscanf(t, "//   tmem alloc %d columns (%*[^)]), %d used", &k->tmem_alloc, &k->tmem_used);
        else if ((t = strstr(line, "Accumulator stages: ")))
            sscanf(t, "Accumulator stages: %d", &k->acc_stages);
        else if ((t = strstr(line, ".visible .entry ")))
            sscanf(t, ".visible .entry %95[A-Za-z0-9_]", k->declared);
        else if ((t = strstr(line, "low-rank ring at ")))
            sscanf(t, "low-rank ring at %ld", &k->lora_at);
        else if ((t = strstr(line, "mov.b32 %idesc_lr, ")))
            sscanf(t, "mov.b32 %%idesc_lr, 0x%x;", &k->idesc_lr);
        else
            note_cta_group(k, line);
    }
    fclose(f);
    cr_assert_gt(k->smem_total, 0, "%s: no '//   total N bytes' line in its header", k->file);
    cr_assert_gt(k->tmem_alloc, 0, "%s: no '//   tmem alloc N columns' line in its header", k->file);
    cr_assert_gt(k->tmem_used, 0, "%s: no 'N used' in its tmem alloc line", k->file);
    cr_assert_gt(k->acc_stages, 0, "%s: no 'Accumulator stages: N' line in its header", k->file);
    if (k->fused) {
        cr_assert_gt(k->lora_at, 0, "%s: no 'low-rank ring at N' line in its header", k->file);
        cr_assert_neq(k->idesc_lr, 0u, "%s: no 'mov.b32 %%idesc_lr, 0x...' instruction", k->file);
    }
}

static int load_kernels(sm100a_kernel *out, int cap)
{
    DIR *d = opendir(PTX_DIR);
    cr_assert(d, "cannot open %s (run the tests from the repository root)", PTX_DIR);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".ptx"))
            continue;
        cr_assert_lt(n, cap, "more than %d kernels in %s", cap, PTX_DIR);
        parse_kernel(de->d_name, &out[n++]);
    }
    closedir(d);
    return n;
}

static fp4lr_problem dense_problem(fp4lr_format f)
{
    fp4lr_problem p = {.M = 4096, .N = 4096, .K = 4096, .r = 0, .format = f, .out = FP4LR_OUT_BF16};
    return p;
}

/* The fused problems the instantiations cover: every rank of OPERATOR.md's shapes and
 * tests, with and without the affine, and (pair) both budget policies. */
static const int64_t fused_ranks[] = {0, 16, 32, 48, 64, 128, 256, 1024};
#define N_FUSED_RANKS ((int)(sizeof fused_ranks / sizeof fused_ranks[0]))

/* Fused problem i of the set: rank i / 2, affine when i is even (rank 0 always has it). */
static fp4lr_problem fused_problem(fp4lr_format f, int i)
{
    fp4lr_problem p = dense_problem(f);
    p.r = fused_ranks[i / 2];
    p.has_wc = p.has_beta = p.r == 0 || i % 2 == 0;
    return p;
}

/* The plan the solver makes for the kernel's tile and cluster, unforced: the first problem
 * (dense: the dense problem; fused: the set above) and policy (split, then naive: the pair's
 * diagnostic instantiations) whose plan names the kernel. */
static fp4lr_plan plan_for(const sm100a_kernel *k)
{
    fp4lr_plan_opts o = {.tile_m = k->tm, .tile_n = k->tn, .tile_k = k->tk, .cluster = k->cluster};
    fp4lr_plan plan;
    for (int pol = FP4LR_POLICY_SPLIT; pol <= FP4LR_POLICY_NAIVE; pol++)
        for (int i = 0; i < (k->fused ? 2 * N_FUSED_RANKS : 1); i++) {
            fp4lr_problem p = k->fused ? fused_problem(k->format, i) : dense_problem(k->format);
            o.policy = (fp4lr_policy)pol;
            fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM100A, &o, &plan);
            cr_assert_eq(st.code, FP4LR_OK, "%s: %s", k->entry, st.msg);
            if (strcmp(plan.entry, k->entry) == 0)
                return plan;
        }
    cr_assert_fail("%s: no rank, affine or policy gives a plan for it (an instantiation nothing uses)", k->entry);
    return plan;
}

/* The fused kernel's low-rank ring, as the host sizes it, fits the plan's shared memory. */
static void expect_ring_fits(const sm100a_kernel *k, const fp4lr_plan *plan)
{
    if (!k->fused || plan->problem.r == 0)
        return;
    const int64_t rc = fp4lr_sm100a_lora_chunk(plan), slots = fp4lr_sm100a_lora_slots(plan);
    const int64_t need = k->lora_at + slots * (128 + 256 / k->cluster) * rc * 2;
    cr_expect_leq(need, plan->smem_bytes, "%s r=%lld: ring at %ld + %lld x %lld B > plan %lld B", k->entry,
                  (long long)plan->problem.r, k->lora_at, (long long)slots,
                  (long long)((128 + 256 / k->cluster) * rc * 2), (long long)plan->smem_bytes);
}

Test(sm100a_instances, entries_are_the_solvers)
{
    sm100a_kernel k[MAX_KERNELS];
    int n = load_kernels(k, MAX_KERNELS);
    cr_assert_geq(n, 4, "expected NVFP4 and MXFP4 kernels, one CTA and a pair (found %d)", n);
    for (int i = 0; i < n; i++) {
        fp4lr_plan plan = plan_for(&k[i]);
        cr_expect_str_eq(k[i].declared, k[i].entry, "%s declares .entry %s", k[i].file, k[i].declared);
        cr_expect_str_eq(plan.entry, k[i].entry);
        cr_expect_eq(plan.budget.stages_main, k[i].stages, "%s: the solver gives %d main stages", k[i].entry,
                     plan.budget.stages_main);
        cr_expect_leq(k[i].smem_total, plan.smem_bytes, "%s: kernel map %ld B > plan %lld B", k[i].entry,
                      k[i].smem_total, (long long)plan.smem_bytes);
        if (k[i].fused) {
            cr_expect_eq(k[i].lora_at, k[i].smem_total, "%s: the ring starts after the fixed map", k[i].entry);
            cr_expect_eq(k[i].idesc_lr, fp4lr_sm100a_idesc_f16_bf16(128 * k[i].cluster, k[i].tn, k[i].cluster),
                         "%s: low-rank idesc 0x%08x", k[i].entry, k[i].idesc_lr);
        }
    }
}

Test(sm100a_instances, tensor_memory_is_the_solvers)
{
    sm100a_kernel k[MAX_KERNELS];
    int n = load_kernels(k, MAX_KERNELS);
    for (int i = 0; i < n; i++) {
        const fp4lr_plan plan = plan_for(&k[i]);
        const fp4lr_tmem_plan *t = &plan.budget.tmem;
        cr_expect_eq(k[i].tmem_alloc, t->alloc_cols, "%s: allocates %d columns, the plan %d", k[i].entry,
                     k[i].tmem_alloc, t->alloc_cols);
        cr_expect_eq(k[i].tmem_used, t->total_cols, "%s: uses %d columns, the plan %d", k[i].entry,
                     k[i].tmem_used, t->total_cols);
        cr_expect_eq(k[i].acc_stages, t->acc_stages, "%s: %d accumulator stages, the plan %d", k[i].entry,
                     k[i].acc_stages, t->acc_stages);
        /* the kernel keeps one SF area per main stage (no reuse while MMAs may read it) */
        cr_expect_eq(t->sf_stages, k[i].stages, "%s: the plan has %d SF stages for %d main stages",
                     k[i].entry, t->sf_stages, k[i].stages);
    }
}

Test(sm100a_instances, one_cta_group_per_kernel)
{
    sm100a_kernel k[MAX_KERNELS];
    int n = load_kernels(k, MAX_KERNELS);
    for (int i = 0; i < n; i++) {
        /* alloc, relinquish, cp, mma, commit, dealloc at least */
        cr_expect_geq(k[i].tcgen05_ops, 6, "%s: only %d tcgen05 instructions with a cta_group", k[i].entry,
                      k[i].tcgen05_ops);
        cr_expect_eq(k[i].foreign_group, 0, "%s: %d tcgen05 instructions name a cta_group other than ::%d",
                     k[i].entry, k[i].foreign_group, k[i].cluster);
    }
}

/* ---- the MMA stage against the descriptor encoders -------------------------------- */

#define MAX_MMAS 8
#define MAX_REGS 64
#define MAX_CPS 32

/* What one K stage of the MMA issuer does, read from its instructions.  The issuer
 * computes the stage's descriptor start field into one register (`and.b32 %rD, %rD,
 * 0x3FFF`) and its SF area into another (`mad.lo.u32 %rS, %s, STRIDE, %tsf`); every
 * descriptor low word and TMEM operand is one of those plus an immediate. */
typedef struct mma_stage {
    int desc_reg, sf_reg, sf_stride;
    long lo_imm[MAX_REGS], col_imm[MAX_REGS]; /* register -> immediate added to the base */
    unsigned idesc_val[2];                    /* %idesc, %idesc1 */
    unsigned opnd_hi, sf_hi;                  /* high words of %ad/%bd and %sd */
    int bad_hi;                               /* a descriptor high word differing from the first */
    int n_mma;
    struct {
        char qual[96];   /* the qualifiers between cta_group::N. and the operands */
        int idesc1;      /* 1: %idesc1 */
        long a_lo, b_lo; /* descriptor start offsets (16-byte units) */
        long sfa, sfb;   /* SF columns */
    } mma[MAX_MMAS];
    long a_lo, b_lo;     /* the latest %ad / %bd */
    int n_cp;
    long cp_col[MAX_CPS];
} mma_stage;

static int reg_ok(int r) { return r >= 0 && r < MAX_REGS; }

static void stage_line(mma_stage *st, const char *t)
{
    int d, r, imm;
    unsigned v, hi;
    char qual[96], which[8];
    if (sscanf(t, "and.b32 %%r%d, %%r%d, 0x3FFF;", &d, &r) == 2)
        st->desc_reg = d;
    else if (sscanf(t, "mad.lo.u32 %%r%d, %%s, %d, %%tsf;", &d, &imm) == 2)
        st->sf_reg = d, st->sf_stride = imm;
    else if (sscanf(t, "add.u32 %%r%d, %%r%d, %d;", &d, &r, &imm) == 3 && reg_ok(d)) {
        if (r == st->desc_reg)
            st->lo_imm[d] = imm;
        if (r == st->sf_reg)
            st->col_imm[d] = imm;
    } else if (sscanf(t, "mov.b32 %%idesc%1[1], 0x%x;", which, &v) == 2)
        st->idesc_val[1] = v;
    else if (sscanf(t, "mov.b32 %%idesc, 0x%x;", &v) == 1)
        st->idesc_val[0] = v;
    else if (sscanf(t, "mov.b64 %%%1[ab]d, {%%r%d, 0x%x};", which, &r, &hi) == 3 && reg_ok(r)) {
        st->bad_hi += st->opnd_hi && hi != st->opnd_hi;
        st->opnd_hi = hi;
        *(which[0] == 'a' ? &st->a_lo : &st->b_lo) = st->lo_imm[r];
    } else if (sscanf(t, "mov.b64 %%sd, {%%r%d, 0x%x};", &r, &hi) == 2) {
        st->bad_hi += st->sf_hi && hi != st->sf_hi;
        st->sf_hi = hi;
    } else if (sscanf(t, "tcgen05.cp.cta_group::%*d.32x128b.warpx4 [%%r%d]", &r) == 1 && reg_ok(r) &&
               st->n_cp < MAX_CPS)
        st->cp_col[st->n_cp++] = st->col_imm[r];
    else if (sscanf(t, "tcgen05.mma.cta_group::%*d.%95s [%%tacc], %%ad, %%bd, %%%7[a-z0-9], [%%r%d], [%%r%d]",
                    qual, which, &d, &r) == 4 && reg_ok(d) && reg_ok(r) && st->n_mma < MAX_MMAS) {
        st->mma[st->n_mma].idesc1 = strcmp(which, "idesc1") == 0;
        snprintf(st->mma[st->n_mma].qual, sizeof st->mma[0].qual, "%s", qual);
        st->mma[st->n_mma].a_lo = st->a_lo;
        st->mma[st->n_mma].b_lo = st->b_lo;
        st->mma[st->n_mma].sfa = st->col_imm[d];
        st->mma[st->n_mma].sfb = st->col_imm[r];
        st->n_mma++;
    }
}

static void read_stage(const char *path, mma_stage *st)
{
    memset(st, 0, sizeof *st);
    st->desc_reg = st->sf_reg = -1;
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot read %s", path);
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        const char *t = line + strspn(line, " \t");
        if (strncmp(t, "//", 2) != 0)
            stage_line(st, t);
    }
    fclose(f);
}

Test(sm100a_instances, constants_are_the_encoders)
{
    sm100a_kernel k[MAX_KERNELS];
    int n = load_kernels(k, MAX_KERNELS);
    const int mmas = k[0].tk / FP4LR_SM100A_MMA_K;
    for (int i = 0; i < n; i++) {
        mma_stage st;
        read_stage(k[i].file, &st);
        const char *e = k[i].entry;
        const fp4lr_format f = k[i].format;
        cr_assert_eq(st.n_mma, mmas, "%s: %d MMAs in its stage, %d expected", e, st.n_mma, mmas);
        cr_expect_eq((uint64_t)st.opnd_hi << 32, fp4lr_sm100a_smem_desc_kmajor_sw128(0), "%s: operand hi 0x%08x",
                     e, st.opnd_hi);
        cr_expect_eq((uint64_t)st.sf_hi << 32, fp4lr_sm100a_sf_copy_desc(0), "%s: SF hi 0x%08x", e, st.sf_hi);
        cr_expect_eq(st.bad_hi, 0, "%s: descriptor high words differ between instructions", e);
        cr_expect_eq(st.sf_stride, fp4lr_sm100a_sf_stage_cols(f, k[i].tn, k[i].tk), "%s: SF area %d columns", e,
                     st.sf_stride);

        /* the qualifiers and idesc the encoders give for MMA j of the stage */
        fp4lr_sm100a_idesc d = fp4lr_sm100a_idesc_for_format(f, k[i].cluster, k[i].tn);
        char qual[96];
        snprintf(qual, sizeof qual, "kind::%s.block_scale.scale_vec::%dX", fp4lr_sm100a_kind_name(d.kind),
                 d.block == FP4LR_SM100A_BLOCK16 ? 4 : 2);
        const int sfb_base = fp4lr_sm100a_sf_stage_sfb_base(f, k[i].tk);
        const long k_step = FP4LR_SM100A_MMA_K_BYTES >> 4;
        for (int j = 0; j < st.n_mma; j++) {
            d.sfa_id = d.sfb_id = fp4lr_sm100a_sf_id(f, j);
            fp4lr_status cs = fp4lr_sm100a_idesc_check(&d);
            cr_expect_eq(cs.code, FP4LR_OK, "%s MMA %d: %s", e, j, cs.msg);
            cr_expect_str_eq(st.mma[j].qual, qual, "%s MMA %d", e, j);
            cr_expect_eq(st.idesc_val[st.mma[j].idesc1], fp4lr_sm100a_idesc_block_scaled(&d),
                         "%s MMA %d: idesc 0x%08x", e, j, st.idesc_val[st.mma[j].idesc1]);
            cr_expect_eq(st.mma[j].sfa, fp4lr_sm100a_sfa_col(f, j), "%s MMA %d: SFA column %ld", e, j,
                         st.mma[j].sfa);
            cr_expect_eq(st.mma[j].sfb, sfb_base + fp4lr_sm100a_sfb_col(f, k[i].tn, j, 0),
                         "%s MMA %d: SFB column %ld", e, j, st.mma[j].sfb);
            cr_expect_eq(st.mma[j].a_lo - st.mma[0].a_lo, j * k_step, "%s MMA %d: A K step", e, j);
            cr_expect_eq(st.mma[j].b_lo - st.mma[0].b_lo, j * k_step, "%s MMA %d: W K step", e, j);
        }
        /* the copies fill the stage's SF area, 4 columns each, every column once */
        int covered[512] = {0};
        cr_expect_eq(st.n_cp * FP4LR_SM100A_SF_COLS_PER_ATOM, st.sf_stride, "%s: %d scale-atom copies", e, st.n_cp);
        for (int c = 0; c < st.n_cp; c++)
            for (int x = 0; x < FP4LR_SM100A_SF_COLS_PER_ATOM; x++) {
                long col = st.cp_col[c] + x;
                cr_assert(col >= 0 && col < st.sf_stride, "%s: copy %d reaches column %ld", e, c, col);
                covered[col]++;
            }
        for (int col = 0; col < st.sf_stride; col++)
            cr_expect_eq(covered[col], 1, "%s: SF column %d written %d times", e, col, covered[col]);
    }
}

Test(sm100a_instances, default_plans_are_built)
{
    sm100a_kernel k[MAX_KERNELS];
    int n = load_kernels(k, MAX_KERNELS);
    const fp4lr_plan_opts pair = {0}, one_cta = {.cluster = 1};
    const fp4lr_plan_opts *opts[] = {&pair, &one_cta};
    for (int f = 0; f < 2; f++)
        for (int o = 0; o < 2; o++) {
            fp4lr_problem p = dense_problem((fp4lr_format)f);
            fp4lr_plan plan;
            fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM100A, opts[o], &plan);
            cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
            int found = 0;
            for (int i = 0; i < n; i++)
                found |= strcmp(k[i].entry, plan.entry) == 0;
            cr_expect(found, "the default %s plan %s has no built kernel", fp4lr_format_name((fp4lr_format)f),
                      plan.entry);
        }
}

/* Every fused problem of the set, one CTA and the pair, split and (pair) naive policy: its
 * plan names a built kernel and the kernel's low-rank ring fits the plan. */
Test(sm100a_instances, fused_plans_are_built)
{
    sm100a_kernel k[MAX_KERNELS];
    int n = load_kernels(k, MAX_KERNELS);
    for (int f = 0; f < 2; f++)
        for (int c = 1; c <= 2; c++)
            for (int pol = FP4LR_POLICY_SPLIT; pol <= (c == 2 ? FP4LR_POLICY_NAIVE : FP4LR_POLICY_SPLIT); pol++)
                for (int i = 0; i < 2 * N_FUSED_RANKS; i++) {
                    fp4lr_problem p = fused_problem((fp4lr_format)f, i);
                    fp4lr_plan_opts o = {.cluster = c, .policy = (fp4lr_policy)pol};
                    fp4lr_plan plan;
                    fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM100A, &o, &plan);
                    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
                    int found = -1;
                    for (int j = 0; j < n; j++)
                        if (strcmp(k[j].entry, plan.entry) == 0)
                            found = j;
                    cr_expect(found >= 0, "the plan %s (r = %lld, affine %d, %s policy) has no built kernel",
                              plan.entry, (long long)p.r, p.has_wc, pol == FP4LR_POLICY_NAIVE ? "naive" : "split");
                    if (found >= 0)
                        expect_ring_fits(&k[found], &plan);
                }
}

Test(sm100a_instances, generator_output_is_reproducible)
{
    int rc = system("python3 tools/gen_sm100a.py --check > /dev/null");
    cr_expect_eq(rc, 0, "tools/gen_sm100a.py --check failed: the committed PTX differs from the generator");
}

/* paircta (FP4LR_GEN100_EXPERIMENT; a measurement build, never committed, not run: there is
 * no sm_100 device): the pair kernels wait and arrive at CTA scope everywhere but `affdone`
 * (ptx/sm100a/README.md item 12).  Dense pairs keep no cluster-scope mbarrier op, fused pairs
 * exactly affdone's wait (its two polls: the first and the watchdog's spin) and arrive; the committed pairs keep theirs; every one-CTA kernel is
 * byte for byte the committed one; two of the pairs pass the ptxas gate; a misspelt flag is
 * refused. */
Test(sm100a_instances, paircta_measurement_builds, .timeout = 120)
{
#define CL_OP "'mbarrier\\.[a-z_.]*(acquire|release)\\.cluster'"
    int rc = system(
        "D=$(mktemp -d /tmp/fp4lr-p100.XXXXXX) || exit 1; ("
        "FP4LR_GEN100_EXPERIMENT=paircta python3 tools/gen_sm100a.py --outdir $D > /dev/null && n=0 && "
        "for f in $D/sm100a/*.ptx $D/sm100f/*.ptx; do c=ptx/${f#$D/}; case $f in "
        "*_dense_*_c2_*) n=$((n+1)); ! grep -Eq " CL_OP " $f && grep -Eq " CL_OP " $c && "
        "grep -q '^// Scope (paircta, a measurement build)' $f || { echo $f >&2; exit 1; };; "
        "*_fused_*_c2_*) n=$((n+1)); test $(grep -Ec " CL_OP " $f) -eq 3 && "
        "grep -A1 '^L_wait_affdone_' $f | grep -q 'try_wait.parity.acquire.cluster' && "
        "grep -A1 \"the even CTA's affdone\" $f | grep -q 'arrive.release.cluster' && "
        "test $(grep -Ec " CL_OP " $c) -gt 2 || { echo $f >&2; exit 1; };; "
        "*) cmp -s $f $c || { echo $f >&2; exit 1; };; esac; done && test $n -eq 24 && "
        "for e in nvfp4_dense_m256n256k256_c2_s3 mxfp4_fused_m256n256k256_c2_s3; do "
        "sh tools/ptxas_gate.sh sm_100a $D/sm100a/fp4lr_sm100a_$e.ptx $D/$e.cubin || exit 1; done && "
        "! FP4LR_GEN100_EXPERIMENT=pairCTA python3 tools/gen_sm100a.py --outdir $D/x 2> $D/err && "
        "grep -q 'unknown FP4LR_GEN100_EXPERIMENT flag(s) pairCTA' $D/err"
        "); rc=$?; rm -rf $D; exit $rc");
#undef CL_OP
    cr_expect_eq(rc, 0, "paircta does not build as described (file above)");
}

/* ---- the sm_100f twins ---------------------------------------------------------- */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert(buf);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* Replaces every `from` by `to` in place (to is never longer than from). */
static void replace_all(char *s, const char *from, const char *to)
{
    size_t lf = strlen(from), lt = strlen(to);
    cr_assert_leq(lt, lf);
    char *p;
    while ((p = strstr(s, from))) {
        memcpy(p, to, lt);
        memmove(p + lt, p + lf, strlen(p + lf) + 1);
    }
}

/* Drops the header lines that only the family-target file has (the target note). */
static void drop_target_note(char *s)
{
    char *p = strstr(s, "// Target sm_100f");
    if (!p)
        return;
    char *end = strstr(p, "PTX ISA 8.8.\n//\n");
    cr_assert_not_null(end, "the sm_100f note ends with 'PTX ISA 8.8.' and an empty comment line");
    end += strlen("PTX ISA 8.8.\n//\n");
    memmove(p, end, strlen(end) + 1);
}

Test(sm100a_instances, every_kernel_has_its_family_target_twin)
{
    sm100a_kernel ks[MAX_KERNELS];
    int n = load_kernels(ks, MAX_KERNELS);
    cr_assert_geq(n, 4);
    for (int i = 0; i < n; i++) {
        char a_path[256], f_path[256];
        snprintf(a_path, sizeof a_path, "%s/%s.ptx", PTX_DIR, ks[i].entry);
        snprintf(f_path, sizeof f_path, "ptx/sm100f/fp4lr_sm100f_%s.ptx", ks[i].entry + strlen("fp4lr_sm100a_"));
        char *a = slurp(a_path), *f = slurp(f_path);
        cr_assert_not_null(a, "%s", a_path);
        cr_assert_not_null(f, "%s has no family-target twin %s", ks[i].entry, f_path);
        cr_expect_not_null(strstr(f, ".target sm_100f"), "%s", f_path);
        cr_expect_not_null(strstr(f, ".version 8.8"), "%s", f_path);
        cr_expect_null(strstr(f, "block_scale.scale_vec"), "%s still spells .scale_vec", f_path);
        /* the arch-specific text in the family target's spelling */
        drop_target_note(f);
        replace_all(a, "fp4lr_sm100a_", "fp4lr_sm100f_");
        replace_all(a, ".target sm_100a", ".target sm_100f");
        replace_all(a, ".version 8.7", ".version 8.8");
        replace_all(a, "block_scale.scale_vec::4X", "block_scale.block16");
        replace_all(a, "block_scale.scale_vec::2X", "block_scale.block32");
        cr_expect_str_eq(f, a, "%s differs from %s beyond the target spelling", f_path, a_path);
        free(a);
        free(f);
    }
}
