/* CPU suite: the sm_90a kernel instantiations agree with the budget solver.
 *
 * Reads every ptx/sm90a/<entry>.ptx (tests run from the repository root), parses its
 * entry name and the shared-memory total of its header, and checks that
 *  - the entry is what fp4lr_plan_make names for that configuration,
 *  - its stage count is one the solver allows (the largest is the solver's own
 *    unforced answer; smaller ones exist for the stage sweep),
 *  - the kernel's shared-memory map fits in the plan's dynamic shared memory,
 *  - every plan the host picks by default has a built instantiation. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "sm90a_gemm.h"
#include "support_cmd.h"
#include "../tools/cli_timeline.h"

#define PTX_DIR "ptx/sm90a"

typedef struct instance {
    char entry[FP4LR_ENTRY_NAME_LEN];
    fp4lr_format format;
    int fused;
    int tm, tn, tk, cluster, stages;
    int tslots;             /* W ring slots: 3 for entries ending in _t3, n for _w<n>, else 2 */
    int wprep;              /* _w<n> or _x<n>: W prepared (its ring filled by bulk copies) */
    int xconv;              /* _x<n>: W converted in the kernel (fp4lr_wprep INLINE) */
    int yt;                 /* _x<n>_yt, _w<n>_yt: the swapped plan's kernel (fp4lr_swap ON) */
    int pp;                 /* _w<n>_pp: the ping-pong kernels (a low-rank ring per consumer) */
    long smem_total;
    long lora_at;           /* fused: offset of the low-rank ring */
} instance;

static int load_instances(instance *out, int cap)
{
    DIR *d = opendir(PTX_DIR);
    cr_assert(d, "cannot open %s (run the tests from the repository root)", PTX_DIR);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < cap) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".ptx"))
            continue;
        if (strstr(de->d_name, "_wprep.ptx") || strstr(de->d_name, "_wprep_pdl.ptx"))
            continue; /* the W preparation kernels: wprep_kernels_are_built */
        instance *in = &out[n];
        memset(in, 0, sizeof *in);
        char fmt[8], fam[8];
        cr_assert_eq(sscanf(de->d_name, "fp4lr_sm90a_%5[a-z0-9]_%5[a-z]_m%dn%dk%d_c%d_s%d.ptx", fmt, fam, &in->tm,
                            &in->tn, &in->tk, &in->cluster, &in->stages),
                     7, "unexpected kernel file name %s", de->d_name);
        in->tslots = strstr(de->d_name, "_t3.ptx") ? 3 : 2;
        const char *w = strstr(de->d_name, "_w");
        if (w && sscanf(w, "_w%d.ptx", &in->tslots) == 1)
            in->wprep = 1;
        const char *x = strstr(de->d_name, "_x");
        if (x && sscanf(x, "_x%d", &in->tslots) == 1)
            in->wprep = in->xconv = 1;
        in->yt = strstr(de->d_name, "_yt.ptx") != NULL;
        in->pp = strstr(de->d_name, "_pp.ptx") != NULL;
        in->format = strcmp(fmt, "nvfp4") == 0 ? FP4LR_NVFP4 : FP4LR_MXFP4;
        in->fused = strcmp(fam, "fused") == 0;
        snprintf(in->entry, sizeof in->entry, "%.*s", (int)(len - 4), de->d_name);
        char path[512];
        snprintf(path, sizeof path, "%s/%s", PTX_DIR, de->d_name);
        FILE *f = fopen(path, "r");
        cr_assert(f, "cannot read %s", path);
        char line[512];
        while (fgets(line, sizeof line, f)) {
            const char *t = strstr(line, "//   total ");
            if (t)
                sscanf(t, "//   total %ld bytes", &in->smem_total);
            t = strstr(line, "low-rank ring at ");
            if (t)
                sscanf(t, "low-rank ring at %ld", &in->lora_at);
        }
        fclose(f);
        cr_assert_gt(in->smem_total, 0, "%s: no shared-memory total in its header", path);
        if (in->fused)
            cr_assert_gt(in->lora_at, 0, "%s: no low-rank ring offset in its header", path);
        n++;
    }
    closedir(d);
    cr_assert_lt(n, cap, "%s holds %d kernels or more: raise the callers' capacity", PTX_DIR, cap);
    return n;
}

/* A problem of the instance's family: dense, or fused with the affine and rank r. */
static fp4lr_problem family_problem(fp4lr_format f, int fused, int64_t r)
{
    fp4lr_problem p = {.M = 4096, .N = 4096, .K = 4096, .r = r, .format = f, .out = FP4LR_OUT_BF16,
                       .has_wc = fused, .has_beta = fused};
    return p;
}

static const int64_t ranks[] = {0, 16, 32, 48, 64, 128, 256, 1024};

Test(sm90a_instances, entries_match_the_solver)
{
    instance in[128];
    int n = load_instances(in, 128);
    cr_assert_geq(n, 2, "expected at least one NVFP4 and one MXFP4 instantiation");
    for (int i = 0; i < n; i++) {
        /* the fused ping-pong kernels are built for the solver's plans only (plan.h): each at
         * the rank whose plan it is (s3_w10 affine only, s3_w9 r = 16, s3_w8 r = 32) */
        const int64_t r = in[i].pp && in[i].fused ? (in[i].tslots == 10 ? 0 : in[i].tslots == 9 ? 16 : 32) : 0;
        fp4lr_problem p = family_problem(in[i].format, in[i].fused, r);
        fp4lr_plan_opts o = {.tile_m = in[i].tm, .tile_n = in[i].tn, .tile_k = in[i].tk,
                             .cluster = in[i].cluster, .force_main_stages = in[i].stages,
                             .force_transform_stages = in[i].tslots,
                             .w_prep = in[i].xconv   ? FP4LR_WPREP_INLINE
                                       : in[i].wprep ? FP4LR_WPREP_ON
                                                     : FP4LR_WPREP_OFF,
                             .swap = in[i].yt ? FP4LR_SWAP_ON : FP4LR_SWAP_OFF};
        fp4lr_plan plan;
        fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &o, &plan);
        cr_assert_eq(st.code, FP4LR_OK, "%s: %s", in[i].entry, st.msg);
        cr_expect_str_eq(plan.entry, in[i].entry);
        cr_expect_eq(plan.budget.stages_main, in[i].stages);
        cr_expect_eq(plan.budget.stages_transform, in[i].tslots, "%s", in[i].entry);
        cr_expect_leq(in[i].smem_total, plan.smem_bytes, "%s: kernel map %ld B > plan %lld B", in[i].entry,
                      in[i].smem_total, (long long)plan.smem_bytes);
        /* the solver, main stages unforced (with the instance's transform ring), never gives
         * fewer stages than an instance uses */
        fp4lr_plan_opts u = o;
        u.force_main_stages = 0;
        st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &u, &plan);
        cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
        cr_expect_geq(plan.budget.stages_main, in[i].stages, "%s uses more stages than fit", in[i].entry);
    }
}

/* The index of the plan's entry among the n instances (a Criterion expectation that there is
 * one), or -1. */
static int built_instance(const instance *in, int n, const fp4lr_plan *plan, const fp4lr_problem *p)
{
    int found = -1;
    for (int i = 0; i < n; i++)
        if (strcmp(in[i].entry, plan->entry) == 0)
            found = i;
    cr_expect(found >= 0, "the plan %s (r = %lld) has no built kernel", plan->entry, (long long)p->r);
    return found;
}

/* The kernel's low-rank ring, as the host sizes it (a slot of 128 L rows and tile_n U rows
 * at the kernel's ring offset; the ping-pong kernels hold one ring per consumer), fits the
 * plan's shared memory. */
static void expect_ring_fits(const instance *k, const fp4lr_plan *plan, const fp4lr_problem *p)
{
    int64_t rc = fp4lr_sm90a_lora_chunk(plan);
    int64_t slots = fp4lr_sm90a_lora_slots(plan);
    int64_t need = k->lora_at + (k->pp ? 2 : 1) * slots * (128 + plan->tile_n) * rc * 2;
    cr_expect_leq(need, plan->smem_bytes, "%s r=%lld affine %d: kernel needs %lld B, plan gives %lld B", plan->entry,
                  (long long)p->r, p->has_wc, (long long)need, (long long)plan->smem_bytes);
}

/* Every plan of the family over ranks x affine x formats, with the host's default options
 * (o = NULL) or forced ones, has a built kernel whose low-rank ring fits the plan. */
static void every_plan_is_built(const fp4lr_plan_opts *o)
{
    instance in[128];
    int n = load_instances(in, 128);
    for (int f = 0; f < 2; f++)
        for (int fused = 0; fused < 2; fused++)
            for (size_t k = 0; k < (fused ? 2 * sizeof ranks / sizeof ranks[0] : 1); k++) {
                /* fused: every rank with the affine, then without (different slack) */
                const size_t nr = sizeof ranks / sizeof ranks[0];
                fp4lr_problem p = family_problem((fp4lr_format)f, fused, ranks[k % nr]);
                if (k >= nr)
                    p.has_wc = p.has_beta = 0;
                fp4lr_plan plan;
                fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, o, &plan);
                cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
                int found = built_instance(in, n, &plan, &p);
                if (found < 0 || !fused || p.r == 0)
                    continue;
                expect_ring_fits(&in[found], &plan, &p);
            }
}

Test(sm90a_instances, every_default_plan_is_built) { every_plan_is_built(NULL); }

/* The narrow swapped tile (AUTO on 132 SMs for sana-out's shape), every rank with and without
 * the affine, both formats: a built kernel whose low-rank ring, 1024-byte aligned after the
 * wc / beta slices, ends inside the plan's shared memory. */
Test(sm90a_instances, every_narrow_plan_is_built_and_its_ring_fits)
{
    instance in[128];
    int n = load_instances(in, 128);
    const fp4lr_plan_opts o = {.sm_count = 132};
    const size_t nr = sizeof ranks / sizeof ranks[0];
    for (int f = 0; f < 2; f++)
        for (size_t k = 0; k < 2 * nr; k++) {
            fp4lr_problem p = {.M = 1024, .N = 2240, .K = 2304, .r = ranks[k % nr], .format = (fp4lr_format)f,
                               .out = FP4LR_OUT_BF16, .has_wc = k < nr, .has_beta = k < nr};
            fp4lr_plan plan;
            fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &o, &plan);
            cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
            if (!plan.swap_ab)
                continue; /* beyond FP4LR_SM90A_SWAP_AUTO_MAX_RANK */
            cr_expect_eq(plan.tile_n, 160, "%s", plan.entry);
            int found = built_instance(in, n, &plan, &p);
            if (found < 0 || plan.family != FP4LR_FAMILY_FUSED)
                continue;
            cr_expect_leq(in[found].smem_total, plan.smem_bytes, "%s", plan.entry);
            if (p.r > 0)
                expect_ring_fits(&in[found], &plan, &p);
        }
}

/* The same with the W transform forced (w_prep off): the dense plans of large M then take
 * the _t kernels, and the solver's unforced W-prepared plans (the default above) the _w. */
Test(sm90a_instances, every_transform_plan_is_built)
{
    fp4lr_plan_opts o = {.w_prep = FP4LR_WPREP_OFF};
    every_plan_is_built(&o);
    instance in[128];
    int n = load_instances(in, 128), wprep = 0;
    for (int i = 0; i < n; i++)
        wprep += in[i].wprep;
    cr_expect_geq(wprep, 2, "expected the W-prepared dense kernels of both formats");
}

/* Each format's W preparation kernels (plain, and _pdl for the _w<n>_yt plans) are committed
 * beside the _w kernels. */
Test(sm90a_instances, wprep_kernels_are_built)
{
    int rc = system("for f in nvfp4 mxfp4; do for e in wprep wprep_pdl; do "
                    "grep -q \"^.visible .entry fp4lr_sm90a_${f}_$e(\" ptx/sm90a/fp4lr_sm90a_${f}_$e.ptx || exit 1; "
                    "done; done");
    cr_expect_eq(rc, 0, "ptx/sm90a/fp4lr_sm90a_{nvfp4,mxfp4}_wprep{,_pdl}.ptx missing or without their entry");
}

/* Every swapped prepared plan (swap on, w_prep on: the _w<n>_yt kernels) over formats, ranks
 * and the affine, 256 wide and narrow (sana-out's shape on 132 SMs), has a built kernel whose
 * low-rank ring fits, and the built table the plan consults (fp4lr_sm90a_wyt_built) names
 * exactly the committed _w<n>_yt files. */
Test(sm90a_instances, every_swapped_prepared_plan_is_built)
{
    const fp4lr_plan_opts o = {.swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_ON};
    every_plan_is_built(&o);
    instance in[128];
    const int n = load_instances(in, 128);
    const fp4lr_plan_opts h200 = {.swap = FP4LR_SWAP_ON, .w_prep = FP4LR_WPREP_ON, .sm_count = 132};
    const size_t nr = sizeof ranks / sizeof ranks[0];
    for (int f = 0; f < 2; f++)
        for (size_t k = 0; k < 2 * nr; k++) {
            fp4lr_problem p = {.M = 1024, .N = 2240, .K = 2304, .r = ranks[k % nr], .format = (fp4lr_format)f,
                               .out = FP4LR_OUT_BF16, .has_wc = k < nr, .has_beta = k < nr};
            fp4lr_plan plan;
            fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &h200, &plan);
            cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
            cr_expect_eq(plan.tile_n, 160, "%s", plan.entry);
            const int found = built_instance(in, n, &plan, &p);
            if (found >= 0 && plan.family == FP4LR_FAMILY_FUSED && p.r > 0)
                expect_ring_fits(&in[found], &plan, &p);
        }
    static const char *const fam[] = {"dense", "fused"};
    static const int widths[] = {256, 160};
    for (int w = 0; w < 2; w++)
        for (int f = 0; f < 2; f++)
            for (int fused = 0; fused < 2; fused++)
                for (int m = 1; m <= 6; m++)
                    for (int t = 2; t <= 6; t++) {
                        char path[256];
                        snprintf(path, sizeof path, PTX_DIR "/fp4lr_sm90a_%s_%s_m128n%dk128_c1_s%d_w%d_yt.ptx",
                                 f ? "mxfp4" : "nvfp4", fam[fused], widths[w], m, t);
                        FILE *fp = fopen(path, "r");
                        if (fp)
                            fclose(fp);
                        const int built = fp4lr_sm90a_wyt_built(
                            (fp4lr_format)f, fused ? FP4LR_FAMILY_FUSED : FP4LR_FAMILY_DENSE, widths[w], m, t);
                        cr_expect_eq(built, fp != NULL, "%s: the table and ptx/sm90a disagree", path);
                    }
}

/* The pair (cluster 2, 256-row cluster tile), dense and fused: nothing is split on Hopper, so
 * its per-CTA budget is one CTA's and every rank's plan has a built instance. */
Test(sm90a_instances, every_pair_plan_is_built)
{
    fp4lr_plan_opts o = {.cluster = 2, .tile_m = 256};
    every_plan_is_built(&o);
}

Test(sm90a_instances, generator_output_is_reproducible)
{
    int rc = system("python3 tools/gen_sm90a.py --check > /dev/null");
    cr_expect_eq(rc, 0, "tools/gen_sm90a.py --check failed: the committed PTX differs from the generator");
}

/* The e2m1 -> f16 / bf16 bit placement the generator emits, run through a small interpreter
 * of its integer instructions against the e2m1 definition (every code pair in every output
 * position, and random words). */
/* The generator's parts (tools/sm90a_ptx) stay layered: each module imports only the modules
 * its package docstring lists before it (tests/sm90a_ptx_layers.py; it fails on a cycle). */
Test(sm90a_instances, generator_modules_are_layered)
{
    int rc = system("python3 tests/sm90a_ptx_layers.py > /dev/null");
    cr_expect_eq(rc, 0, "tools/sm90a_ptx imports out of order: run tests/sm90a_ptx_layers.py");
}

Test(sm90a_instances, placed_conversion_is_exact, .timeout = 120)
{
    int rc = system("python3 tests/placed_conversion.py > /dev/null");
    cr_expect_eq(rc, 0, "tests/placed_conversion.py failed: run it for the mismatching elements");
}

/* The W-prepared kernels and their preparation kernels (a grep pattern): the tw4 and
 * consumer_assist experiments build without them, and the transform layout's checks do not
 * apply to them (wprep_layout_is_the_measured_one checks theirs). */
#define WPRE_FILES "'_w[0-9]*.ptx$\\|_w[0-9]_yt.ptx$\\|_x[0-9]*.ptx$\\|_x[0-9]_yt.ptx$\\|_wprep.ptx$\\|_wprep_pdl.ptx$\\|_pp.ptx$'"

/* Generates the instances of measurement variant `flags` (FP4LR_GEN_EXPERIMENT) into a
 * temporary directory; every file but the W-prepared ones must pass the shell test `check`
 * (on $f), their count must be the committed one, and the entries
 * `gated` (space-separated, without the fp4lr_sm90a_ prefix) the ptxas gate.  Returns the
 * shell's status. */
static int experiment_builds(const char *flags, const char *check, const char *gated)
{
    char dir[] = "/tmp/fp4lr-experiment.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "FP4LR_GEN_EXPERIMENT=%s python3 tools/gen_sm90a.py --outdir %s > /dev/null && "
             "test $(ls %s/*.ptx | grep -cv " WPRE_FILES ") -eq $(ls ptx/sm90a/*.ptx | grep -cv " WPRE_FILES ") && "
             "for f in %s/*.ptx; do case $f in *_wprep.ptx|*_wprep_pdl.ptx|*_w[0-9].ptx|*_w[0-9]_yt.ptx|*_x[0-9].ptx|*_x[0-9]_yt.ptx|*_pp.ptx) continue;; esac; "
             "{ %s; } || { echo \"$f\" >&2; exit 1; }; done && "
             "for e in %s; do sh tools/ptxas_gate.sh sm_90a %s/fp4lr_sm90a_$e.ptx %s/$e.cubin || exit 1; done",
             flags, dir, dir, dir, check, gated, dir, dir);
    int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
    return rc;
}

/* Shell tests (on $f) of the default layout's four measured choices (tools/sm90a_ptx/flags.py: tw8,
 * prodrot, tprefetch, mxone) and of their opt-out flags' code. */
/* (the narrow tile, 128 x 160: halves of m64n80k16, and 64 / 192 registers: its consumers hold
 * 80 accumulators, and its MXFP4 fused converters spill at 56; so do those of the 256-wide
 * MXFP4 fused _x kernel with its 64-column epilogue, XDBUF) */
#define TW8_CHECK "grep -q '^.maxntid 512, 1, 1' $f && case $f in *_m128n160*) " \
                  "grep -q 'setmaxnreg.dec.sync.aligned.u32 64;' $f && " \
                  "grep -q 'setmaxnreg.inc.sync.aligned.u32 192;' $f && " \
                  "grep -q 'wgmma.mma_async.sync.aligned.m64n80k16' $f && ! grep -q 'm64n128k16' $f;; " \
                  "*mxfp4_fused_m128n256k128_c1_s[0-9]_x[0-9].ptx) " \
                  "grep -q 'setmaxnreg.dec.sync.aligned.u32 64;' $f && " \
                  "grep -q 'setmaxnreg.inc.sync.aligned.u32 192;' $f && " \
                  "grep -q 'wgmma.mma_async.sync.aligned.m64n128k16' $f;; *) " \
                  "grep -q 'setmaxnreg.dec.sync.aligned.u32 56;' $f && " \
                  "grep -q 'setmaxnreg.inc.sync.aligned.u32 200;' $f && " \
                  "grep -q 'wgmma.mma_async.sync.aligned.m64n128k16' $f;; esac && ! grep -q 'm64n256k16' $f"
#define TW4_CHECK "grep -q '^.maxntid 384, 1, 1' $f && " \
                  "grep -q 'setmaxnreg.dec.sync.aligned.u32 104;' $f && " \
                  "grep -q 'wgmma.mma_async.sync.aligned.m64n256k16' $f && ! grep -q 'm64n128k16' $f"
#define PRODROT_CHECK "grep -q '^L_prod_issued_loop:' $f && ! grep -q '@!%pthr0 bra L_prod_skip' $f"
#define PRODFIX_CHECK "grep -q '@!%pthr0 bra L_prod_skip' $f && ! grep -q '^L_prod_issued_loop:' $f"
#define PREFETCH_CHECK "test $(grep -c 'before the slot wait' $f) -eq 2"
#define NOPREFETCH_CHECK "! grep -q 'before the slot wait' $f"
#define MXONE_CHECK "case $f in *mxfp4*) grep -q 'vote.sync.any.pred %pmx' $f;; *) ! grep -q 'pmx' $f;; esac"
#define MXTWO_CHECK "! grep -q 'pmx' $f"
#define CHOIST_CHECK "grep -q 'choist: the loop-invariant' $f && test $(grep -c 'add.u32 %r25, %caoff0, %r41;' $f) -eq 2"
#define NOCHOIST_CHECK "! grep -q 'caoff0' $f"
#define TSPLIT_CHECK "case $f in *mxfp4*) test $(grep -c 'L_wait_tfullhi_' $f) -eq 4;; *) ! grep -q 'bar_tfullhi' $f;; esac"
#define NOTSPLIT_CHECK "! grep -q 'bar_tfullhi' $f"
#define TSPLIT_ALL_CHECK "test $(grep -c 'L_wait_tfullhi_' $f) -eq 4"

/* The committed kernels carry all six: 8 transform warps at 56 registers beside consumers at
 * 200 (512 threads, every wgmma as two m64n128k16 halves), the stage issue rotated over the
 * transform warps, the fp4 loads before the slot wait, in MXFP4 the per-chunk vote for the
 * one-multiply path, the consumers' hoisted chunk-0 A offset (used by both chunk loads of the
 * K loop's two copies), and in MXFP4 only the tfull split by column half (two tfull_hi waits
 * in the K loop, two labels each: one wait loop per chunk).  (The ptxas gate runs on every
 * committed file in the build.) */
Test(sm90a_instances, committed_kernels_have_the_measured_layout)
{
    int rc = system("for f in ptx/sm90a/*.ptx; do case $f in *_wprep.ptx|*_wprep_pdl.ptx|*_w[0-9].ptx|*_w[0-9]_yt.ptx|*_x[0-9].ptx|*_x[0-9]_yt.ptx|*_pp.ptx) continue;; esac; "
                    "{ " TW8_CHECK " && " PRODROT_CHECK " && " PREFETCH_CHECK
                    " && " MXONE_CHECK " && " CHOIST_CHECK " && " TSPLIT_CHECK "; } || { echo \"$f\" >&2; exit 1; }; done");
    cr_expect_eq(rc, 0, "a committed sm_90a kernel lacks part of the default layout (file above)");
}

/* The W-prepared kernels keep the 8-warp consumers (and choist) and have no transform loop:
 * thread 32 fills the W ring by bulk copies onto tfull (count 1, expect_tx), and `empty`
 * counts the 8 consumer warps alone.  Their preparation kernels convert with the transform's
 * own sequence (MXFP4: the per-warp vote) and store through the warp's staging block in 8
 * coalesced rows. */
/* ... the pair's: rank 0 alone copies each W chunk, multicast to both CTAs; tempty counts the
 * 16 consumer warps of both (each warp arrives on its own and the peer's, after each of the two
 * chunks of a stage and after the K loop); the main ring stays local (the empty count above);
 * the low-rank tail never takes the W ring; and no mbarrier wait or arrive is at cluster scope
 * (in SASS CCTL.IVALL / MEMBAR.ALL.GPU in the K loop: half the speed, tools/sm90a_ptx/docs.py). */
#define WPAIR_CHECK "test $(grep -c '^.@%prank0 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster \\[%r42\\], \\[%tmW, {%r15, %pcn0}\\], \\[%r13\\], %mask;' $f) -eq 2 && " \
                    "! grep -q 'complete_tx::bytes \\[%r42\\], \\[%tmW' $f && " \
                    "grep -q 'mbarrier.init.shared::cta.b64 \\[%bar_tempty+0\\], 16;' $f && " \
                    "test $(grep -c 'mapa.shared::cluster.u32 %r34, %r32, %peer;' $f) -eq 3 && ! grep -q ltail $f && " \
                    "test $(grep -c '^.@%p4 mbarrier.arrive.shared::cluster.b64 _, \\[%r34\\];' $f) -eq 3 && " \
                    "! grep -Eq 'mbarrier\\.[a-z_.]*(acquire|release)\\.cluster' $f"
#define WPRE_CHECK TW8_CHECK " && " CHOIST_CHECK " && grep -q '^L_wprod:' $f && ! grep -q '^L_t_k:' $f && " \
                   "grep -q 'mbarrier.init.shared::cta.b64 \\[%bar_tfull+0\\], 1;' $f && " \
                   "grep -q 'mbarrier.init.shared::cta.b64 \\[%bar_empty+0\\], 8;' $f && " \
                   "case $f in *_c2_*) " WPAIR_CHECK ";; " \
                   "*) test $(grep -c 'cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes \\[%r42\\], \\[%tmW' $f) -eq 2;; esac"
#define WPREP_CHECK "test $(grep -c '@%p1 st.global.v4.b32' $f) -eq 8 && " \
                    "case $f in *mxfp4*) grep -q 'vote.sync.any.pred %pmx' $f;; *) ! grep -q 'pmx' $f;; esac"
/* The _x kernels are W-prepared kernels whose warps 2-7 convert (16 predicated 16-byte stores
 * a unit, its flag set with a release) and whose W producer acquires an item's 8 flags. */
#define XCONV_CHECK "grep -q '^L_xconv:' $f && test $(grep -c '@%px st.global.v4.b32' $f) -eq 16 && " \
                    "grep -q '@%px st.release.gpu.global.u32' $f && grep -q 'ld.relaxed.gpu.global.v4.u32' $f && " \
                    "grep -q 'fence.acq_rel.gpu;' $f && " \
                    "case $f in *mxfp4*) grep -q 'vote.sync.any.pred %pmx' $f;; *) ! grep -q 'pmx' $f;; esac"
/* The _yt kernels are _x kernels whose epilogue stores the tile transposed: 4 stmatrix .trans
 * x4 a chunk of 64 columns (16; twice in NVFP4, whose chunks have the folded-alpha code and the
 * two-multiply code for |alpha| >= 2^100; the fused family 8 x2 a chunk of 64 columns, 32) and
 * the bulk store's coordinates exchanged (4 stores); the narrow tile (160 columns)
 * stores 32-column chunks in both families: 5 stores of 2 x4 (dense) or 4 x2 (fused); no other
 * kernel has either. */
#define YT_CHECK "case $f in *fused_m128n160*) test $(grep -c 'stmatrix.sync.aligned.m8n8.x2.trans.shared.b16' $f) -eq 20 && " \
                 "test $(grep -c 'bulk_group \\[%tmY, {%r51, %r58}\\]' $f) -eq 5;; " \
                 "*nvfp4_dense_m128n160*) test $(grep -c 'stmatrix.sync.aligned.m8n8.x4.trans.shared.b16' $f) -eq 20 && " \
                 "test $(grep -c 'bulk_group \\[%tmY, {%r51, %r58}\\]' $f) -eq 5;; " \
                 "*mxfp4_dense_m128n160*) test $(grep -c 'stmatrix.sync.aligned.m8n8.x4.trans.shared.b16' $f) -eq 10 && " \
                 "test $(grep -c 'bulk_group \\[%tmY, {%r51, %r58}\\]' $f) -eq 5;; " \
                 "*fused*) test $(grep -c 'stmatrix.sync.aligned.m8n8.x2.trans.shared.b16' $f) -eq 32 && " \
                 "test $(grep -c 'bulk_group \\[%tmY, {%r51, %r58}\\]' $f) -eq 4;; " \
                 "*nvfp4*) test $(grep -c 'stmatrix.sync.aligned.m8n8.x4.trans.shared.b16' $f) -eq 32 && " \
                 "test $(grep -c 'bulk_group \\[%tmY, {%r51, %r58}\\]' $f) -eq 4;; " \
                 "*) test $(grep -c 'stmatrix.sync.aligned.m8n8.x4.trans.shared.b16' $f) -eq 16 && " \
                 "test $(grep -c 'bulk_group \\[%tmY, {%r51, %r58}\\]' $f) -eq 4;; esac"
/* XDBUF: the 256-wide fused _x kernels' converter warps arrive on xdone when they leave and
 * each epilogue tests it once a WG (their second writeback buffer); no other kernel has it. */
#define XDBUF_CHECK "case $f in *fused_m128n256k128_c1_s[0-9]_x[0-9]*) grep -q '^L_x_leave:' $f && " \
                    "test $(grep -c 'mbarrier.test_wait.parity.shared::cta.b64 %pxd' $f) -eq 1 && " \
                    "grep -q 'xdone: the converters left' $f;; *) ! grep -q 'xdone' $f;; esac"
/* HALFK: the 256-wide NVFP4 _yt kernels' consumers and W producer step over a chunk wholly past
 * K (K % 128 = 64) and the first fill stays out of such a K block (the _w_yt kernels have no
 * first fill and read K from p_K); not in MXFP4 (K % 128 = 0), the narrow tile or the
 * non-swapped _x kernels (measured slower there on other K). */
#define HALFK_CHECK "case $f in *nvfp4*n256*_w[0-9]_yt.ptx) grep -q '^L_c_halfk_test:' $f && " \
                    "test $(grep -c '^L_wp_halfk_[0-9]*:' $f) -eq 1 && grep -q 'ld.param.u32 %r13, \\[p_K\\];' $f && " \
                    "! grep -q 'halfk: this fill' $f;; " \
                    "*nvfp4*n256*_x[0-9]_yt.ptx) grep -q '^L_c_halfk_test:' $f && test $(grep -c '^L_wp_halfk_[0-9]*:' $f) -eq 1 && " \
                    "test $(grep -c 'halfk: this fill would reach a half K block' $f) -eq 1 && " \
                    "test $(grep -c 'halfk: no first fill where it would reach a half K block' $f) -eq 1;; " \
                    "*) ! grep -q 'halfk' $f;; esac"
#define NOYT_CHECK "! grep -q 'stmatrix' $f && ! grep -q '%tmY, {%r51, %r58}' $f"
/* The _w<n>_yt kernels' W producer waits for the preparation grid (griddepcontrol.wait, once,
 * before its first copy of Wp) and no other kernel does; the _wprep_pdl kernels release their
 * dependent (griddepcontrol.launch_dependents, once) and the plain ones do not. */
#define GDWAIT_CHECK "case $f in *_w[0-9]_yt.ptx) test $(grep -c '^.griddepcontrol.wait;' $f) -eq 1 && " \
                     "test $(sed -n '/^L_wprod:/,$p' $f | grep -n -m1 -e 'griddepcontrol.wait' -e '%tmW' | " \
                     "grep -c griddepcontrol) -eq 1;; *) ! grep -q '^.griddepcontrol.wait' $f;; esac && " \
                     "case $f in *_wprep_pdl.ptx) test $(grep -c '^.griddepcontrol.launch_dependents;' $f) -eq 1;; " \
                     "*) ! grep -q '^.griddepcontrol.launch_dependents' $f;; esac"
Test(sm90a_instances, wprep_layout_is_the_measured_one)
{
    int rc = system("for f in ptx/sm90a/*_w[0-9].ptx; do { " WPRE_CHECK "; } || { echo \"$f\" >&2; exit 1; }; done && "
                    "for f in ptx/sm90a/*_w[0-9]_yt.ptx; do { " WPRE_CHECK " && " YT_CHECK " && " XDBUF_CHECK " && " HALFK_CHECK "; } || "
                    "{ echo \"$f\" >&2; exit 1; }; done && "
                    "for f in ptx/sm90a/*.ptx; do { " GDWAIT_CHECK "; } || { echo \"$f\" >&2; exit 1; }; done && "
                    "for f in ptx/sm90a/*_x[0-9].ptx; do { " WPRE_CHECK " && " XCONV_CHECK " && " NOYT_CHECK " && " XDBUF_CHECK " && " HALFK_CHECK "; } || "
                    "{ echo \"$f\" >&2; exit 1; }; done && "
                    "for f in ptx/sm90a/*_x[0-9]_yt.ptx; do { " WPRE_CHECK " && " XCONV_CHECK " && " YT_CHECK " && " XDBUF_CHECK " && " HALFK_CHECK "; } || "
                    "{ echo \"$f\" >&2; exit 1; }; done && "
                    "for f in ptx/sm90a/*_wprep.ptx ptx/sm90a/*_wprep_pdl.ptx; do { " WPREP_CHECK "; } || { echo \"$f\" >&2; exit 1; }; done");
    cr_expect_eq(rc, 0, "a W-prepared kernel or a preparation kernel lacks its layout (file above)");
}

/* The ping-pong kernels (tools/gen_sm90a_pp.py): 512 threads, producers at 24 registers and
 * consumers at 232 (at 216 ptxas serialises their wgmmas), the tile count and the grid stride
 * computed on each side of the roles' split, not before it, the W-prepared producers (thread 32's ring on tfull count
 * 1, two W copies a stage), `empty` and `tempty` counting the owning consumer's 4 warps, 16
 * m64n128k16 f16 wgmmas in the K loop (two a k16 step, four steps a chunk, two chunks) and, in
 * the fused family, 14 bf16 ones of the low-rank term (two a k16 step, paths of 4, 2 and 1
 * steps) and none of another shape, the turn (one conditional arrive, one conditional sync on
 * the other consumer's barrier), the fused consumers' own low-rank barriers (lempty count 4,
 * 2 x 4 of each) and the unit walk of their own (no stream-K fixup: no workspace stores). */
#define PP_CHECK "grep -q '^.maxntid 512, 1, 1' $f && grep -q 'setmaxnreg.dec.sync.aligned.u32 24;' $f && " \
                 "grep -q 'setmaxnreg.inc.sync.aligned.u32 232;' $f && " \
                 "test $(grep -c 'mul.lo.u32 %ntiles, %tiles_m, %tiles_n;' $f) -eq 2 && " \
                 "test $(grep -c 'mov.u32 %tstride, %nctaid.x;' $f) -eq 2 && case $f in *_fused_*) " \
                 "test $(grep -c 'wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16' $f) -eq 14 && " \
                 "test $(grep -c 'wgmma.mma_async' $f) -eq 30 && " \
                 "test $(grep -c 'mbarrier.init.shared::cta.b64 \\[%r10+[0-9]*\\], 4;  *// lempty' $f) -eq 8 && " \
                 "test $(grep -c 'mbarrier.init.shared::cta.b64 \\[%r10+[0-9]*\\], 1;  *// lfull' $f) -eq 8;; " \
                 "*) test $(grep -c 'wgmma.mma_async' $f) -eq 16 && ! grep -q 'lfull' $f;; esac && " \
                 "grep -q '^L_wprod:' $f && " \
                 "grep -q 'mbarrier.init.shared::cta.b64 \\[%bar_tfull+0\\], 1;' $f && " \
                 "grep -q 'mbarrier.init.shared::cta.b64 \\[%bar_empty+0\\], 4;' $f && " \
                 "grep -q 'mbarrier.init.shared::cta.b64 \\[%bar_tempty+0\\], 4;' $f && " \
                 "! grep -q 'bar_empty+[0-9]*\\], 8;' $f && ! grep -q 'bar_tempty+[0-9]*\\], 8;' $f && " \
                 "test $(grep -c 'cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes \\[%r42\\], \\[%tmW' $f) -eq 2 && " \
                 "test $(grep -c 'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16' $f) -eq 16 && " \
                 "test $(grep -c '^.@%pnext bar.arrive %r10, 256;' $f) -eq 1 && " \
                 "test $(grep -c '^.@!%p0 bar.sync %r10, 256;' $f) -eq 1 && " \
                 "grep -q 'ping-pong: every tile whole' $f && ! grep -q 'st.global' $f && ! grep -q 'p_sk_ws\\]' $f"

Test(sm90a_instances, pingpong_layout_is_the_designed_one)
{
    char out[4096];
    int rc = tsupport_run_capture("n=0; for f in ptx/sm90a/*_pp.ptx; do { " PP_CHECK "; } || { echo \"$f\"; exit 1; }; "
                                  "n=$((n+1)); done; echo $n",
                                  out, sizeof out);
    cr_expect_eq(rc, 0, "a ping-pong kernel lacks its layout: %s", out);
    cr_expect_eq(atoi(out), 5, "expected the five ping-pong kernels: %s", out);
}

/* The ptxas gate refuses serialised wgmmas: the fused ping-pong kernel with its consumers at
 * 216 registers (40 for the producers), where ptxas 13.0 serialises every wgmma (C7512), must
 * fail the gate; the committed one at 232 passes it. */
Test(sm90a_instances, gate_refuses_serialised_wgmma, .timeout = 60)
{
    char out[4096];
    int rc = tsupport_run_capture(
        "d=$(mktemp -d) && f=ptx/sm90a/fp4lr_sm90a_nvfp4_fused_m128n128k128_c1_s3_w8_pp.ptx && "
        "sed -e 's/setmaxnreg.dec.sync.aligned.u32 24;/setmaxnreg.dec.sync.aligned.u32 40;/' "
        "-e 's/setmaxnreg.inc.sync.aligned.u32 232;/setmaxnreg.inc.sync.aligned.u32 216;/' $f > $d/k.ptx && "
        "! cmp -s $f $d/k.ptx && sh tools/ptxas_gate.sh sm_90a $f $d/ok.cubin && "
        "{ sh tools/ptxas_gate.sh sm_90a $d/k.ptx $d/k.cubin 2>&1; echo \"gate rc=$?\"; test ! -f $d/k.cubin; }; "
        "s=$?; rm -rf $d; exit $s",
        out, sizeof out);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "gate rc=1") != NULL && strstr(out, "serializing ptxas warning") != NULL &&
                  (strstr(out, "C7512") || strstr(out, "serialized")),
              "%s", out);
}

/* The ping-pong generator's output is the committed PTX, and the table the plan consults
 * (fp4lr_sm90a_pp_built) names exactly the committed _pp files. */
Test(sm90a_instances, pingpong_generator_and_built_table)
{
    int rc = system("python3 tools/gen_sm90a_pp.py --check > /dev/null");
    cr_expect_eq(rc, 0, "tools/gen_sm90a_pp.py --check failed: the committed PTX differs from the generator");
    for (int f = 0; f < 2; f++)
        for (int fused = 0; fused < 2; fused++)
            for (int m = 1; m <= 6; m++)
                for (int t = 2; t <= 12; t++) {
                    char path[256];
                    snprintf(path, sizeof path, PTX_DIR "/fp4lr_sm90a_%s_%s_m128n128k128_c1_s%d_w%d_pp.ptx",
                             f ? "mxfp4" : "nvfp4", fused ? "fused" : "dense", m, t);
                    FILE *fp = fopen(path, "r");
                    if (fp)
                        fclose(fp);
                    cr_expect_eq(fp4lr_sm90a_pp_built((fp4lr_format)f, fused ? FP4LR_FAMILY_FUSED : FP4LR_FAMILY_DENSE,
                                                      m, t),
                                 fp != NULL, "%s: the table and ptx/sm90a disagree", path);
                }
}

/* Every NVFP4 ping-pong plan (tile_n 128) over the ranks, with and without the affine, has a
 * built kernel whose two low-rank rings fit the plan's shared memory. */
Test(sm90a_instances, every_pingpong_plan_is_built_and_its_rings_fit)
{
    instance in[128];
    const int n = load_instances(in, 128);
    const fp4lr_plan_opts o = {.tile_n = 128};
    const size_t nr = sizeof ranks / sizeof ranks[0];
    for (size_t k = 0; k < 2 * nr; k++) {
        fp4lr_problem p = family_problem(FP4LR_NVFP4, k < nr, ranks[k % nr]);
        if (p.r == 0 && k >= nr)
            continue; /* dense: once */
        fp4lr_plan plan;
        fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &o, &plan);
        cr_assert_eq(st.code, FP4LR_OK, "r = %lld: %s", (long long)p.r, st.msg);
        cr_expect(strstr(plan.entry, "_pp") != NULL, "%s", plan.entry);
        const int found = built_instance(in, n, &plan, &p);
        if (found < 0)
            continue;
        cr_expect_leq(in[found].smem_total, plan.smem_bytes, "%s", plan.entry);
        if (p.r > 0)
            expect_ring_fits(&in[found], &plan, &p);
    }
}

/* The ping-pong protocol (tests/pp_protocol.py: the rings shared by two consumers that own
 * alternate units, and the turn), model-checked over random interleavings: it holds with the
 * turn, and the model finds the violation without it (FP4LR_GEN_PP_FAULT=noturn's fault). */
Test(sm90a_instances, pingpong_protocol_model, .timeout = 120)
{
    char out[2048];
    int rc = tsupport_run_capture("python3 tests/pp_protocol.py", out, sizeof out);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "the protocol held in 1920 runs") != NULL, "%s", out);
    rc = tsupport_run_capture("python3 tests/pp_protocol.py --noturn", out, sizeof out);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "without the turn, as expected, a violation") != NULL, "%s", out);
}

/* tw4 (4 transform warps at 104 registers, 384 threads, one m64n256k16 a k16 step: the
 * layout before e36a593+1, measured against in the A/B) stays buildable; four
 * representatives (both formats, dense and fused, one CTA and the pair) pass the ptxas gate. */
Test(sm90a_instances, tw4_experiment_builds, .timeout = 180)
{
    int rc = experiment_builds("tw4", TW4_CHECK " && " PRODROT_CHECK,
                               "nvfp4_dense_m128n256k128_c1_s3_t3 mxfp4_dense_m128n256k128_c1_s3_t3 "
                               "nvfp4_fused_m128n256k128_c1_s3_t3 mxfp4_fused_m256n256k128_c2_s4");
    cr_expect_eq(rc, 0, "the tw4 experiment does not build (run experiment_builds' command by hand)");
}

/* prodfix (thread 0 issues every stage), notprefetch, mxtwo, notsplit and nochoist stay
 * buildable, tsplit also splits NVFP4's tfull, and all six opt-outs together rebuild the
 * 0a33f42 kernels' code paths. */
Test(sm90a_instances, opt_out_experiments_build, .timeout = 240)
{
    const char *gated = "nvfp4_dense_m128n256k128_c1_s3_t3 mxfp4_fused_m256n256k128_c2_s4";
    cr_expect_eq(experiment_builds("prodfix", TW8_CHECK " && " PRODFIX_CHECK, gated), 0,
                 "the prodfix experiment does not build");
    cr_expect_eq(experiment_builds("notprefetch,mxtwo", TW8_CHECK " && " NOPREFETCH_CHECK " && " MXTWO_CHECK,
                                   "mxfp4_dense_m128n256k128_c1_s3_t3 mxfp4_fused_m256n256k128_c2_s4"),
                 0, "notprefetch with mxtwo does not build");
    cr_expect_eq(experiment_builds("notsplit,nochoist", TW8_CHECK " && " NOTSPLIT_CHECK " && " NOCHOIST_CHECK,
                                   "mxfp4_dense_m128n256k128_c1_s3_t3 mxfp4_fused_m256n256k128_c2_s4"),
                 0, "notsplit with nochoist does not build");
    cr_expect_eq(experiment_builds("tsplit", TW8_CHECK " && " TSPLIT_ALL_CHECK " && " CHOIST_CHECK,
                                   "nvfp4_dense_m128n256k128_c1_s3_t3 nvfp4_fused_m256n256k128_c2_s4"),
                 0, "tsplit (NVFP4 too) does not build");
    cr_expect_eq(experiment_builds("tw4,prodfix,notprefetch,mxtwo,notsplit,nochoist",
                                   TW4_CHECK " && " PRODFIX_CHECK " && " NOPREFETCH_CHECK " && " MXTWO_CHECK
                                   " && " NOTSPLIT_CHECK " && " NOCHOIST_CHECK, gated),
                 0, "the six opt-outs together do not build");
}

/* The consumers order their generic-proxy reads of a main stage before the bulk copy that
 * refills it (fence.proxy.async before the `empty` arrive; tools/sm90a_ptx/consumer.py says what its
 * absence did on the H200): every committed kernel has it once a K loop. */
Test(sm90a_instances, consumers_fence_their_stage_reads_before_release)
{
    char out[4096];
    int rc = tsupport_run_capture("n=0 && for f in ptx/sm90a/fp4lr_sm90a_*_m*.ptx; do "
                                  "c=$(grep -c 'fence.proxy.async.shared::cta; *// the stage.s reads before its refill' $f); "
                                  "[ \"$c\" = 1 ] || { echo \"$f: $c\"; exit 1; }; n=$((n+1)); done; echo $n",
                                  out, sizeof out);
    cr_expect_eq(rc, 0, "a kernel without the fence: %s", out);
    cr_expect(atoi(out) >= 40, "kernels checked: %s", out);
}

/* lprefetch (measurement: the fused issuer prefetches a tile's later low-rank chunks into L2)
 * stays buildable: every fused kernel carries the prefetch of L and U, no dense one does. */
Test(sm90a_instances, lprefetch_experiment_builds, .timeout = 180)
{
    cr_expect_eq(experiment_builds("lprefetch",
                                   "case $f in *fused*) test $(grep -c 'prefetch.tensor.2d.L2.global.tile' $f) -eq 2;; "
                                   "*) ! grep -q 'prefetch.tensor.2d.L2' $f;; esac",
                                   "nvfp4_fused_m128n256k128_c1_s3_t3 mxfp4_fused_m256n256k128_c2_s4"),
                 0, "the lprefetch experiment does not build");
}

/* tools/experiment_build.sh and the generator refuse what they cannot build: a misspelt
 * experiment flag (it would build the default kernels under an experiment's name) and a
 * malformed flag list. */
Test(sm90a_instances, experiment_flags_are_checked)
{
    char out[2048];
    int rc = tsupport_run_capture("sh tools/experiment_build.sh tw9 /tmp/fp4lr-experiment-none 2>&1", out, sizeof out);
    cr_expect_eq(rc, 1, "%s", out);
    cr_expect_not_null(strstr(out, "unknown FP4LR_GEN_EXPERIMENT flag(s) tw9; known:"), "%s", out);
    rc = tsupport_run_capture("sh tools/experiment_build.sh 'tw4 x' /tmp/fp4lr-experiment-none 2>&1", out, sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect_not_null(strstr(out, "lower-case words separated by commas"), "%s", out);
    cr_expect_eq(system("rm -rf /tmp/fp4lr-experiment-none"), 0);
}


/* The _x kernels' first fill (tools/sm90a_ptx/flags.py XSELF, the default since 2026-12-04): the
 * consumers convert the first unit's first two K blocks into slots 0-3 and complete their
 * tfull phase 0 (four arrives) and the W producer steps over them (every _x kernel but the
 * MXFP4 fused _x, which spills with it), and nothing is stored in slots 2-3 for a one-K-block
 * unit (the race fixed then: the check comes before chunk 2's conversion).  noxself emits the
 * kernels without it; xself1 does one K block (two arrives); xpre makes the NVFP4 converters
 * load both passes first; tline gives every kernel the fp4lr_tline global of fp4lr-check
 * --timeline.  No committed kernel has an opt-in flag; each builds, representatives pass the
 * ptxas gate. */
#define XSELF_CHECK "grep -q 'first fill (xself)' $f && " \
                    "test $(grep -c 'mbarrier.arrive.shared::cta.b64 _, \\[%bar_tfull+' $f) -eq 4 && " \
                    "grep -q 'xself: the consumers convert the first unit' $f && " \
                    "grep -B1 -A12 'a one-K-block unit: the producer brings the rest' $f | grep -q 'chunk 2 -> slot 2'"
#define NOXSELF_CHECK "! grep -q 'xself' $f"
#define NOOPTIN_CHECK "! grep -q 'xpre' $f && ! grep -q 'fp4lr_tline' $f && ! grep -q 'xstag' $f && ! grep -q 'cstag' $f"
#define XPRE_CHECK "case $f in *nvfp4*) grep -q 'xpre: pass 1.s loads now' $f;; *) ! grep -q 'xpre' $f;; esac"
Test(sm90a_instances, committed_kernels_have_the_first_fill_and_no_opt_in_experiment)
{
    int rc = system("n=0; for f in ptx/sm90a/*.ptx; do { " NOOPTIN_CHECK "; } || { echo \"$f\" >&2; exit 1; }; "
                    "case $f in *mxfp4_fused*_x[0-9].ptx) " NOXSELF_CHECK " || exit 1;; "
                    "*_x[0-9].ptx|*_x[0-9]_yt.ptx) { " XSELF_CHECK "; } || { echo \"$f\" >&2; exit 1; }; n=$((n+1));; "
                    "*) " NOXSELF_CHECK " || { echo \"$f\" >&2; exit 1; };; esac; done; test $n -eq 14");
    cr_expect_eq(rc, 0, "a committed kernel has an opt-in converter prefetch or timeline, or the first fill is "
                        "missing from an _x kernel or present elsewhere (file above)");
}

/* Runs `script` with $D a fresh temporary directory (removed afterwards); the shell's status. */
/* The ptxas gate on each of the space-separated entries (without the fp4lr_sm90a_ prefix) in
 * SRC, cubins into OUT (shell words): the loop the measurement-build tests below share. */
#define GATE_EACH(SRC, OUT, ENTRIES) \
    "for e in " ENTRIES "; do sh tools/ptxas_gate.sh sm_90a " SRC "/fp4lr_sm90a_$e.ptx " OUT "/$e.cubin || exit 1; done"

static int run_in_tmpdir(const char *script)
{
    char dir[] = "/tmp/fp4lr-experiment.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "D=%s; %s", dir, script);
    int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
    return rc;
}

Test(sm90a_instances, xself_variants_and_tline_experiments_build, .timeout = 240)
{
    int rc = run_in_tmpdir(
        "FP4LR_GEN_EXPERIMENT=noxself python3 tools/gen_sm90a.py --outdir $D/a > /dev/null && "
        "for f in $D/a/*.ptx; do " NOXSELF_CHECK " || { echo \"$f\" >&2; exit 1; }; done && "
        "sh tools/ptxas_gate.sh sm_90a $D/a/fp4lr_sm90a_mxfp4_fused_m128n256k128_c1_s3_x4_yt.ptx $D/a.cubin && "
        "FP4LR_GEN_EXPERIMENT=xself1,xpre python3 tools/gen_sm90a.py --outdir $D/c > /dev/null && "
        "for f in $D/c/*_x[0-9].ptx $D/c/*_x[0-9]_yt.ptx; do { " XPRE_CHECK "; } || exit 1; done && "
        "test $(grep -c 'mbarrier.arrive.shared::cta.b64 _, .%bar_tfull+' $D/c/fp4lr_sm90a_mxfp4_dense_m128n256k128_c1_s4_x4_yt.ptx) -eq 2 && "
        "sh tools/ptxas_gate.sh sm_90a $D/c/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt.ptx $D/c.cubin && "
        "FP4LR_GEN_EXPERIMENT=tline python3 tools/gen_sm90a.py --outdir $D/b > /dev/null && "
        "for f in $D/b/fp4lr_sm90a_*_m*.ptx; do grep -q '^.visible .global .align 8 .u64 fp4lr_tline' $f || exit 1; done && "
        "test $(grep -c '// tline: event' $D/b/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt.ptx) -eq 24 && "
        "grep -q '// tline: event 32$' $D/b/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt.ptx && "
        "grep -q '// tline: event 40$' $D/b/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt.ptx && "
        "grep -q '// tline: event 46$' $D/b/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt.ptx && "
        "grep -q '// tline: event 47$' $D/b/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt.ptx && "
        "sh tools/ptxas_gate.sh sm_90a $D/b/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt.ptx $D/b.cubin");
    cr_expect_eq(rc, 0, "noxself, xself1 with xpre, or tline does not build (or lacks its code)");
}

/* filldep, n160one, aprefetch, walkpre, tlineself, wnocopy, anocopy (opt-in measurements of
 * 2026-12-04: the first four slower or no faster, the last two timing only; kept to repeat them): the fill's loads ahead of its first slot store (NVFP4 dense
 * and narrow kernels) and built clean; one m64n160k16 a k16 step in the narrow main loop; the
 * next unit's first A stages prefetched into L2; the fill's timeline events with tline.
 * (n160one makes ptxas serialise the narrow FUSED kernels' wgmmas, C7511, which the gate
 * refuses since 2026-12-05: only the dense narrow kernels are gated with it.) */
Test(sm90a_instances, fill_wgmma_and_prefetch_measurements_build, .timeout = 240)
{
    int rc = run_in_tmpdir(
        "FP4LR_GEN_EXPERIMENT=filldep,n160one,aprefetch python3 tools/gen_sm90a.py --outdir $D/a > /dev/null && "
        "test $(grep -l 'FILLDEP: all these loads' $D/a/*.ptx | wc -l) -eq 6 && "
        "grep -q 'ld.global.nc.v2.b32 {%sw0, %sw1}' $D/a/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt.ptx && "
        "! grep -q 'FILLDEP' $D/a/fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4_yt.ptx && "
        "test $(grep -c 'wgmma.mma_async.sync.aligned.m64n160k16' $D/a/fp4lr_sm90a_nvfp4_dense_m128n160k128_c1_s4_x5_yt.ptx) -eq 8 && "
        "! grep -q 'wgmma.mma_async.sync.aligned.m64n80k16' $D/a/fp4lr_sm90a_nvfp4_dense_m128n160k128_c1_s4_x5_yt.ptx && "
        "test $(grep -c 'prefetch.tensor.2d.L2.global.tile .%tmA' $D/a/fp4lr_sm90a_mxfp4_dense_m128n256k128_c1_s4_x4.ptx) -eq 8 && "
        GATE_EACH("$D/a", "$D", "nvfp4_dense_m128n256k128_c1_s4_x4_yt nvfp4_dense_m128n160k128_c1_s4_x5_yt mxfp4_dense_m128n160k128_c1_s4_x5_yt") " && "
        "FP4LR_GEN_EXPERIMENT=wnocopy,anocopy python3 tools/gen_sm90a.py --outdir $D/c > /dev/null && "
        "grep -q 'wnocopy: no bulk copy' $D/c/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4.ptx && "
        "! grep -q 'cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes .%r42., .%tmW' "
        "$D/c/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4.ptx && "
        "grep -q 'anocopy: no bulk copies' $D/c/fp4lr_sm90a_mxfp4_dense_m128n256k128_c1_s4_w5.ptx && "
        "sh tools/ptxas_gate.sh sm_90a $D/c/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4.ptx $D/c.cubin && "
        "FP4LR_GEN_EXPERIMENT=walkpre python3 tools/gen_sm90a.py --outdir $D/d > /dev/null && "
        "grep -q 'walkpre: the next unit, computed after the K loop' $D/d/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt.ptx && "
        "! grep -q 'walkpre' $D/d/fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4_yt.ptx && "
        GATE_EACH("$D/d", "$D/d", "nvfp4_dense_m128n256k128_c1_s4_x4_yt mxfp4_fused_m128n256k128_c1_s3_x4") " && "
        "FP4LR_GEN_EXPERIMENT=tline,tlineself python3 tools/gen_sm90a.py --outdir $D/b > /dev/null && "
        "grep -q '// tline: event 42$' $D/b/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt.ptx && "
        "grep -q '// tline: event 44$' $D/b/fp4lr_sm90a_nvfp4_dense_m128n160k128_c1_s4_x5_yt.ptx && "
        "sh tools/ptxas_gate.sh sm_90a $D/b/fp4lr_sm90a_nvfp4_dense_m128n160k128_c1_s4_x5_yt.ptx $D/b.cubin");
    cr_expect_eq(rc, 0, "filldep / n160one / aprefetch / walkpre / wnocopy / anocopy / tlineself does not build (or lacks its code)");
}

/* epistg / fillasync / epinostore (opt-in measurements, bench/results/experiments, "What the
 * epilogue and the start cost, bounded"): epistg declares Y, ldY and M after the _x parameters
 * and stores with stmatrix + st.global.v4 in the 256-wide non-swapped _x kernels but MXFP4
 * fused (no bulk store left there); fillasync copies the NVFP4 first fill with cp.async; each
 * builds clean where it is emitted (but epistg's NVFP4 fused kernel: 16 bytes of spill since the
 * converters' flag index comes from registers, 2026-12-04), and the default kernels declare
 * none of it. */
Test(sm90a_instances, epistg_fillasync_measurements_build, .timeout = 240)
{
    int rc = run_in_tmpdir(
        "FP4LR_GEN_EXPERIMENT=epistg python3 tools/gen_sm90a.py --outdir $D/a > /dev/null && "
        "test $(grep -l '.param .u32 p_ym' $D/a/*.ptx | wc -l) -eq 4 && "
        "test $(grep -c 'stmatrix.sync.aligned.m8n8.x4.shared.b16' $D/a/fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4.ptx) -eq 16 && "
        "! grep -q 'cp.async.bulk.tensor.2d.global.shared::cta.bulk_group .%tmY' $D/a/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4.ptx && "
        "grep -q 'cp.async.bulk.tensor.2d.global.shared::cta.bulk_group .%tmY' $D/a/fp4lr_sm90a_mxfp4_fused_m128n256k128_c1_s3_x4.ptx && "
        "! grep -q 'p_ym' ptx/sm90a/*.ptx && "
        GATE_EACH("$D/a", "$D", "nvfp4_dense_m128n256k128_c1_s4_x4 mxfp4_dense_m128n256k128_c1_s4_x4") " && "
        "FP4LR_GEN_EXPERIMENT=fillasync,epinostore python3 tools/gen_sm90a.py --outdir $D/b > /dev/null && "
        "test $(grep -c 'cp.async.cg.shared.global' $D/b/fp4lr_sm90a_nvfp4_dense_m128n160k128_c1_s4_x5_yt.ptx) -eq 5 && "
        "test $(grep -c 'cp.async.cg.shared.global' $D/b/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt.ptx) -eq 8 && "
        "! grep -q 'cp.async.cg' $D/b/fp4lr_sm90a_mxfp4_dense_m128n256k128_c1_s4_x4.ptx && "
        "grep -q 'epinostore: no bulk store' $D/b/fp4lr_sm90a_mxfp4_dense_m128n256k128_c1_s4_x4.ptx && "
        GATE_EACH("$D/b", "$D/b", "nvfp4_dense_m128n160k128_c1_s4_x5_yt nvfp4_dense_m128n256k128_c1_s4_x4_yt nvfp4_fused_m128n160k128_c1_s4_x5_yt"));
    cr_expect_eq(rc, 0, "epistg / fillasync / epinostore does not build (or lacks its code)");
}

/* epinowait (timing only, bench/results/experiments "The identity conversion order ..."): no
 * epilogue waits for a bulk store's reads of its staging buffer, every other line as
 * committed; the kernel-end wait for the stores stays, and the swapped, narrow and fused
 * epilogues take it too. */
Test(sm90a_instances, epinowait_measurement_builds, .timeout = 180)
{
    int rc = run_in_tmpdir(
        "FP4LR_GEN_EXPERIMENT=epinowait python3 tools/gen_sm90a.py --outdir $D/a > /dev/null && "
        "for e in nvfp4_dense_m128n256k128_c1_s4_x4 nvfp4_fused_m128n256k128_c1_s3_x4_yt "
        "mxfp4_fused_m128n160k128_c1_s4_x5_yt; do "
        "grep -q 'epinowait: no wait' $D/a/fp4lr_sm90a_$e.ptx || exit 1; "
        "! grep -q 'cp.async.bulk.wait_group.read' $D/a/fp4lr_sm90a_$e.ptx || exit 1; "
        "grep -q 'cp.async.bulk.wait_group 0' $D/a/fp4lr_sm90a_$e.ptx || exit 1; done && "
        "! grep -q 'epinowait' ptx/sm90a/*.ptx && "
        GATE_EACH("$D/a", "$D", "nvfp4_dense_m128n256k128_c1_s4_x4 nvfp4_fused_m128n256k128_c1_s3_x4_yt"));
    cr_expect_eq(rc, 0, "epinowait does not build (or lacks its code)");
}

/* xstag / xstagl (opt-in measurement): the _x kernels' converter warps past the first 128 units
 * wait 1 / 2 us before their first; the NVFP4 _x kernels build clean with the wait (the MXFP4
 * fused _yt kernel spills with it). */
Test(sm90a_instances, xstag_experiment_builds, .timeout = 180)
{
    int rc = run_in_tmpdir(
        "sh tools/experiment_build.sh xstagl $D/a '*nvfp4*_x4*' > /dev/null && "
        "test $(ls $D/a/sm90a/*.cubin | wc -l) -eq 6 && "
        "for f in $D/a/sm90a/*.ptx; do grep -q 'xstag: a warp whose first unit comes after the first 128 waits 2000 ns' $f "
        "|| exit 1; done && FP4LR_GEN_EXPERIMENT=xstag python3 tools/gen_sm90a.py --outdir $D/b > /dev/null && "
        "grep -q 'waits 1000 ns' $D/b/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4.ptx && "
        "! grep -q xstag $D/b/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_w4.ptx");
    cr_expect_eq(rc, 0, "the xstag experiment does not build (or lacks its code)");
}

/* cstag / cstagl (opt-in measurement): the second consumer warpgroup waits 1 / 2 us once, after
 * its first W slot is full; the 256-wide fused _x kernels go without it (they spill with it,
 * and without the first fill, which cstag builds drop there); the dense _x4 kernels build clean
 * and have the out-of-line wait and its one branch in the K loop. */
Test(sm90a_instances, cstag_experiment_builds, .timeout = 180)
{
    int rc = run_in_tmpdir(
        "sh tools/experiment_build.sh cstagl $D/a '*dense*_x4*' > /dev/null && "
        "test $(ls $D/a/sm90a/*.cubin | wc -l) -eq 4 && "
        "for f in $D/a/sm90a/*.ptx; do "
        "grep -q 'cstag: 2000 ns once, after the first W slot is full' $f && "
        "test $(grep -c '@%pcst bra L_cstag;' $f) -eq 1 && "
        "grep -q 'setp.eq.u32 %pcst, %r42, 1;' $f || exit 1; done && "
        "FP4LR_GEN_EXPERIMENT=cstag python3 tools/gen_sm90a.py --outdir $D/b > /dev/null && "
        "for f in $D/b/*fused*_x4*.ptx; do ! grep -q cstag $f || exit 1; done && "
        "grep -q 'cstag: 1000 ns once' $D/b/fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_w4.ptx");
    cr_expect_eq(rc, 0, "the cstag experiment does not build (or lacks its code)");
}

/* The NVFP4 accumulators carry 2^-28: every NVFP4 GEMM kernel folds it into alpha where
 * alpha * 2^28 is finite and keeps the two multiplies behind the test (one test and branch a
 * 64-column epilogue chunk in the dense family, one before the affine in the fused); MXFP4
 * (bf16 operands, no 2^-28) has neither the test nor a multiply by 2^28. */
Test(sm90a_instances, alpha_fold_only_where_the_accumulators_carry_2_pow_minus_28)
{
    int rc = system(
        "for f in ptx/sm90a/fp4lr_sm90a_*_m*.ptx; do "
        "n=$(grep -c 'testp.finite.f32 %pafold, %alpha28;' $f); "
        "case $f in *nvfp4_dense_m128n160*) want=5;; *nvfp4_dense*) want=4;; *nvfp4_fused*) want=1;; *) want=0;; esac; "
        "test $n -eq $want || { echo $f: $n fold tests, want $want >&2; exit 1; }; "
        "test $(grep -c '@!%pafold bra L_' $f) -eq $want || { echo $f: branch >&2; exit 1; }; "
        "case $f in *mxfp4*) ! grep -q '0f4D800000' $f || exit 1;; esac; "
        "done");
    cr_expect_eq(rc, 0, "the alpha fold is missing, misplaced or in a kernel without 2^-28 (above)");
}

/* tools/experiment_build.sh with a PATTERN builds only the matching kernels (tline: the NVFP4
 * dense _x4 pair, which pass the gate with it), refuses a pattern matching nothing or
 * holding a '/' (status 2). */
Test(sm90a_instances, experiment_build_keeps_the_pattern, .timeout = 120)
{
    int rc = run_in_tmpdir(
        "sh tools/experiment_build.sh tline $D/a '*nvfp4_dense*_x4*' > /dev/null && "
        "test $(ls $D/a/sm90a/*.cubin | wc -l) -eq 2 && test $(ls $D/a/sm90a/*.ptx | wc -l) -eq 2 && "
        "test -f $D/a/sm90a/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt.cubin && "
        "{ sh tools/experiment_build.sh tline $D/b 'nomatch*' 2> /dev/null; test $? -eq 2; } && "
        "{ sh tools/experiment_build.sh tline $D/c 'a/b' 2> /dev/null; test $? -eq 2; }");
    cr_expect_eq(rc, 0, "experiment_build.sh PATTERN: wrong kernels built or a bad pattern accepted");
}

/* fp4lr-check --timeline reads fp4lr_tline as [CTA][FP4LR_TLINE_EVENTS]: the generator's
 * row length must be the same number. */
Test(sm90a_instances, timeline_rows_match_the_generator)
{
    char out[64] = {0};
    int rc = tsupport_run_capture("python3 -c 'import sys; sys.path.insert(0, \"tools\"); "
                                  "from sm90a_ptx.flags import TLINE_EVENTS; print(TLINE_EVENTS)'", out, sizeof out);
    cr_assert_eq(rc, 0, "tools/sm90a_ptx/flags.py does not import: %s", out);
    cr_expect_eq(atoi(out), FP4LR_TLINE_EVENTS, "sm90a_ptx.flags TLINE_EVENTS = %s, cli_timeline.h %d", out,
                 FP4LR_TLINE_EVENTS);
}

/* skbulk (opt-in measurement): the _x4 kernels bring a stream-K owner's peer partials into the
 * W ring by bulk copies; every one builds clean and carries the copies and its barrier, but
 * the MXFP4 fused _yt kernel, which would spill with them, and the one-CTA fused _x4 kernels,
 * whose low-rank tail comes through the same W slots (since 2026-12-06): built without. */
Test(sm90a_instances, skbulk_experiment_builds, .timeout = 180)
{
    int rc = run_in_tmpdir(
        "sh tools/experiment_build.sh skbulk $D/a '*_x4*' > /dev/null && "
        "test $(ls $D/a/sm90a/*.cubin | wc -l) -eq 12 && "
        "for f in $D/a/sm90a/*.ptx; do case $f in *mxfp4_fused*_yt.ptx|*_fused_*_x4.ptx) ! grep -q skbulk $f || exit 1;; *) "
        "test $(grep -c 'cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes' $f) -eq 4 && "
        "grep -q 'mbarrier.init.shared::cta.b64 .*skbulk' $f || exit 1;; esac; done && "
        "! grep -q skbulk ptx/sm90a/*.ptx");
    cr_expect_eq(rc, 0, "the skbulk experiment does not build (or lacks its code)");
}

/* nogdwait (the planted fault of tests/test_gemm_swap_wprep.c): the _w<n>_yt kernels without
 * griddepcontrol.wait, everything else as committed (the preparations byte for byte); and the
 * tline builds of the dense _w<n>_yt kernels record event 28 (the W producer past the wait) and
 * build clean. */
Test(sm90a_instances, nogdwait_and_the_wyt_timeline_build, .timeout = 240)
{
    int rc = run_in_tmpdir(
        "FP4LR_GEN_EXPERIMENT=nogdwait python3 tools/gen_sm90a.py --outdir $D/a > /dev/null && "
        "test $(ls $D/a/*_w[0-9]_yt.ptx | wc -l) -eq $(ls ptx/sm90a/*_w[0-9]_yt.ptx | wc -l) && "
        "! grep -q '^.griddepcontrol.wait' $D/a/*.ptx && "
        "cmp -s $D/a/fp4lr_sm90a_nvfp4_wprep_pdl.ptx ptx/sm90a/fp4lr_sm90a_nvfp4_wprep_pdl.ptx && "
        "cmp -s $D/a/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt.ptx ptx/sm90a/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4_yt.ptx && "
        "test $(diff $D/a/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5_yt.ptx "
        "ptx/sm90a/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5_yt.ptx | grep -c '^>.*griddepcontrol.wait;') -eq 1 && "
        GATE_EACH("$D/a", "$D", "nvfp4_dense_m128n256k128_c1_s3_w5_yt") " && "
        "FP4LR_GEN_EXPERIMENT=tline python3 tools/gen_sm90a.py --outdir $D/b > /dev/null && "
        "grep -q '// tline: event 28$' $D/b/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s3_w5_yt.ptx && "
        "grep -q '// tline: event 28$' $D/b/fp4lr_sm90a_mxfp4_dense_m128n160k128_c1_s4_w5_yt.ptx && "
        GATE_EACH("$D/b", "$D/b", "nvfp4_dense_m128n256k128_c1_s3_w5_yt nvfp4_dense_m128n160k128_c1_s4_w5_yt"));
    cr_expect_eq(rc, 0, "nogdwait or the _w_yt tline builds do not build (or lack their code)");
}

/* w3wb (a measurement, with noxself or xself1): the 256-wide _x4 kernels with 3 W slots and the
 * fourth slot's 32 KiB as two more 64-column writeback buffers (dense four, fused three of
 * their own and no XDBUF), under their committed names and shared-memory totals, so that the
 * committed host runs them; with noxself every one builds clean (with xself1 the NVFP4 fused
 * ones spill, as they do with xself1 alone), and nothing else changes. */
Test(sm90a_instances, w3wb_measurement_builds, .timeout = 300)
{
    int rc = run_in_tmpdir(
        "FP4LR_GEN_EXPERIMENT=w3wb,noxself python3 tools/gen_sm90a.py --outdir $D/a > /dev/null && "
        "FP4LR_GEN_EXPERIMENT=noxself python3 tools/gen_sm90a.py --outdir $D/b > /dev/null && "
        "for f in $D/a/*_x4.ptx $D/a/*_x4_yt.ptx; do c=ptx/sm90a/$(basename $f); "
        "case $f in *dense*) n=4;; *) n=3;; esac; "
        "grep -q 'W ring, 3 slots of 256 x 64' $f && grep -q \"writeback staging, $n buffers of\" $f && "
        "grep -q 'tfull\\[3\\], tempty\\[3\\]' $f && ! grep -q 'xdone' $f && "
        "test \"$(grep -o '^//   total [0-9]*' $f)\" = \"$(grep -o '^//   total [0-9]*' $c)\" && "
        "grep -q \"cp.async.bulk.wait_group.read $((n - 1));\" $f || { echo $f >&2; exit 1; }; done && "
        "test $(ls $D/a/*_x4.ptx $D/a/*_x4_yt.ptx | wc -l) -eq 12 && "
        "for f in $D/a/*.ptx; do case $f in *_x4.ptx|*_x4_yt.ptx) continue;; esac; "
        "cmp -s $f $D/b/$(basename $f) || { echo $f >&2; exit 1; }; done && "
        "FP4LR_GEN_EXPERIMENT=w3wb,xself1 python3 tools/gen_sm90a.py --outdir $D/c > /dev/null && "
        "grep -q 'xself: the consumers convert the first unit.s first 1 K blocks' "
        "$D/c/fp4lr_sm90a_nvfp4_dense_m128n256k128_c1_s4_x4.ptx && "
        GATE_EACH("$D/a", "$D", "nvfp4_fused_m128n256k128_c1_s3_x4 nvfp4_dense_m128n256k128_c1_s4_x4_yt "
                                "mxfp4_fused_m128n256k128_c1_s3_x4_yt") " && "
        GATE_EACH("$D/c", "$D/c", "nvfp4_dense_m128n256k128_c1_s4_x4"));
    cr_expect_eq(rc, 0, "w3wb does not build (or lacks its layout)");
}

/* The transform pair (`_c2_s<S>`, `_c2_s<S>_t3`) waits and arrives at CTA scope, as the
 * prepared pair does (tools/sm90a_ptx/docs.py TPAIR_SCOPE_DOC; the default since it ran on an
 * H100, 1.33-1.45x its cluster-scope build): no committed pair kernel has a cluster-scope
 * mbarrier op and each says why in its header.  tpaircl (a measurement) emits the old cluster
 * scope in those 14 files, one cluster-scope remote arrive for each CTA-scope one, and leaves
 * every other kernel byte for byte the committed one. */
#define CLUSTER_SCOPE_OP "'mbarrier\\.[a-z_.]*(acquire|release)\\.cluster'"
Test(sm90a_instances, transform_pair_at_cta_scope_and_tpaircl, .timeout = 180)
{
    int rc = run_in_tmpdir(
        "for f in ptx/sm90a/*_c2_*.ptx; do ! grep -Eq " CLUSTER_SCOPE_OP " $f || { echo $f >&2; exit 1; }; done && "
        "FP4LR_GEN_EXPERIMENT=tpaircl python3 tools/gen_sm90a.py --outdir $D/a > /dev/null && n=0 && "
        "for f in $D/a/*.ptx; do c=ptx/sm90a/$(basename $f); case $f in "
        "*_c2_s[0-9].ptx|*_c2_s[0-9]_t3.ptx) n=$((n+1)); grep -Eq " CLUSTER_SCOPE_OP " $f && "
        "! grep -q '^// Scope: every wait acquires' $f && grep -q '^// Scope: every wait acquires' $c && "
        "test $(grep -c 'mbarrier.arrive.release.cluster.shared::cluster.b64' $f) -eq $(grep -c 'mbarrier.arrive.shared::cluster.b64' $c) "
        "|| { echo $f >&2; exit 1; };; "
        "*) cmp -s $f $c || { echo $f >&2; exit 1; };; esac; done && test $n -eq 14 && "
        GATE_EACH("$D/a", "$D", "nvfp4_dense_m256n256k128_c2_s4 mxfp4_fused_m256n256k128_c2_s4"));
    cr_expect_eq(rc, 0, "a committed pair kernel keeps a cluster-scope op, or tpaircl does not build its 14 files (file above)");
}
