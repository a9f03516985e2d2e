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
 *  - the default sm_100a plans (pair, and one CTA) of both formats have a built kernel,
 *  - tools/gen_sm100a.py --check passes (the committed PTX is the generator's output). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

#define PTX_DIR "ptx/sm100a"
#define MAX_KERNELS 32

typedef struct sm100a_kernel {
    char file[256];
    char entry[FP4LR_ENTRY_NAME_LEN];
    char declared[FP4LR_ENTRY_NAME_LEN]; /* the name after .entry */
    fp4lr_format format;
    int tm, tn, tk, cluster, stages;
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
    char fmt[8];
    cr_assert_eq(sscanf(name, "fp4lr_sm100a_%5[a-z0-9]_dense_m%dn%dk%d_c%d_s%d.ptx", fmt, &k->tm, &k->tn,
                        &k->tk, &k->cluster, &k->stages),
                 6, "unexpected kernel file name %s", name);
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
        else
            note_cta_group(k, line);
    }
    fclose(f);
    cr_assert_gt(k->smem_total, 0, "%s: no '//   total N bytes' line in its header", k->file);
    cr_assert_gt(k->tmem_alloc, 0, "%s: no '//   tmem alloc N columns' line in its header", k->file);
    cr_assert_gt(k->tmem_used, 0, "%s: no 'N used' in its tmem alloc line", k->file);
    cr_assert_gt(k->acc_stages, 0, "%s: no 'Accumulator stages: N' line in its header", k->file);
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

/* The plan the solver makes for the kernel's tile and cluster, unforced. */
static fp4lr_plan plan_for(const sm100a_kernel *k)
{
    fp4lr_problem p = dense_problem(k->format);
    fp4lr_plan_opts o = {.tile_m = k->tm, .tile_n = k->tn, .tile_k = k->tk, .cluster = k->cluster};
    fp4lr_plan plan;
    fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM100A, &o, &plan);
    cr_assert_eq(st.code, FP4LR_OK, "%s: %s", k->entry, st.msg);
    return plan;
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

Test(sm100a_instances, generator_output_is_reproducible)
{
    int rc = system("python3 tools/gen_sm100a.py --check > /dev/null");
    cr_expect_eq(rc, 0, "tools/gen_sm100a.py --check failed: the committed PTX differs from the generator");
}
