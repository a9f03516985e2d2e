/* Problem -> plan: family selection, per-architecture defaults and overrides,
 * the budget, the entry name (ARCHITECTURE.md §3) and the launch shape. */
#include "plan.h"

#include <inttypes.h>
#include <string.h>

#include "sm90a_wprep.h"

/* The architecture's default tile, cluster and threads. */
static void arch_defaults(fp4lr_arch arch, fp4lr_plan *pl)
{
    if (arch == FP4LR_ARCH_SM100A) {
        pl->tile_m = 256, pl->tile_n = 256, pl->tile_k = 256, pl->cluster = 2;
        pl->block_threads = FP4LR_SM100A_THREADS;
    } else {
        pl->tile_m = 128, pl->tile_n = 256, pl->tile_k = 128, pl->cluster = 1;
        pl->block_threads = FP4LR_SM90A_THREADS;
    }
}

static int or_default(int v, int dflt) { return v ? v : dflt; }

fp4lr_problem fp4lr_problem_swapped(const fp4lr_problem *p)
{
    fp4lr_problem s = *p;
    s.M = p->N;
    s.N = p->M;
    return s;
}

static fp4lr_status plan_kernel(const fp4lr_problem *p, fp4lr_arch arch, const fp4lr_plan_opts *o, int swapped,
                                fp4lr_plan *out);

int fp4lr_sm90a_narrow_fits(const fp4lr_problem *kp, int sm_count)
{
    if (sm_count < 1 || kp->M < 1 || kp->N < 1)
        return 0;
    const int64_t rows = (kp->M + 127) / 128;
    const int64_t wide = rows * ((kp->N + FP4LR_SM90A_TILE_N - 1) / FP4LR_SM90A_TILE_N);
    const int64_t narrow = rows * ((kp->N + FP4LR_SM90A_TILE_N_NARROW - 1) / FP4LR_SM90A_TILE_N_NARROW);
    return wide < sm_count && narrow <= sm_count;
}

/* 1 when the swapped plan's kernel for pl (the kernel's plan, before "_yt") is built: the
 * _w<n>_yt kernels for `prep` (w_prep ON), the _x<n>_yt ones otherwise. */
static int yt_built(int prep, const fp4lr_plan *pl)
{
    const fp4lr_budget *b = &pl->budget;
    return prep ? fp4lr_sm90a_wyt_built(pl->format, pl->family, pl->tile_n, b->stages_main, b->stages_transform)
                : fp4lr_sm90a_yt_built(pl->family, pl->tile_n, b->stages_main, b->stages_transform);
}

/* The kernel plan of the swapped problem of p: A prepared by its own launch (`prep`, the
 * _w<n>_yt kernels) or converted inside the kernel (_x<n>_yt); the tile width the caller's,
 * or AUTO's (plan.h), narrow only onto a built kernel. */
static fp4lr_status swapped_kernel(const fp4lr_problem *p, fp4lr_arch arch, const fp4lr_plan_opts *o, int prep,
                                   fp4lr_plan *out)
{
    fp4lr_problem ps = fp4lr_problem_swapped(p);
    /* Y keeps its own ldY (validated above); the kernel's problem is planned with any legal one */
    ps.ldY = (ps.N + 7) / 8 * 8;
    fp4lr_plan_opts os = *o;
    os.swap = FP4LR_SWAP_OFF;
    os.w_prep = prep ? FP4LR_WPREP_ON : FP4LR_WPREP_INLINE;
    os.pdl = FP4LR_PDL_AUTO; /* decided by the caller, for the swapped plan */
    os.tile_n = o->tile_n ? o->tile_n : fp4lr_sm90a_narrow_fits(&ps, o->sm_count) ? FP4LR_SM90A_TILE_N_NARROW
                                                                                  : FP4LR_SM90A_TILE_N;
    fp4lr_status st = plan_kernel(&ps, arch, &os, 1, out);
    if (!o->tile_n && os.tile_n != FP4LR_SM90A_TILE_N && (st.code != FP4LR_OK || !yt_built(prep, out))) {
        os.tile_n = FP4LR_SM90A_TILE_N;
        st = plan_kernel(&ps, arch, &os, 1, out);
    }
    return st;
}

/* The swapped plan (plan.h, fp4lr_swap) of p into *out with out->swap_ab set; or, for AUTO
 * where it does not apply (or its kernel is not built, or the kernel's problem has no plan),
 * out->swap_ab = 0 and OK.  `one_cta_sm90a`: the plan's arch and cluster allow it. */
static fp4lr_status swapped_plan(const fp4lr_problem *p, fp4lr_arch arch, const fp4lr_plan_opts *o,
                                 fp4lr_family family, int one_cta_sm90a, fp4lr_plan *out)
{
    memset(out, 0, sizeof *out);
    const int eligible = one_cta_sm90a;
    if (o->swap == FP4LR_SWAP_AUTO &&
        !(eligible && o->w_prep == FP4LR_WPREP_AUTO && p->M < FP4LR_SM90A_WPREP_MIN_M &&
          p->N >= FP4LR_SM90A_WPREP_MIN_M && (family == FP4LR_FAMILY_DENSE || p->r <= FP4LR_SM90A_SWAP_AUTO_MAX_RANK)))
        return fp4lr_ok();
    if (!eligible)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "SWAP",
                          "the swapped plan (Y^T = W.A^T, the _yt kernels) exists for sm90a plans with one CTA; "
                          "this plan is %s %s with cluster %d",
                          fp4lr_arch_name(arch), fp4lr_family_name(family), o->cluster ? o->cluster : 1);
    if (o->w_prep == FP4LR_WPREP_OFF)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "SWAP",
                          "the swapped plan converts A once per launch: w_prep must be auto or inline (inside the "
                          "kernel) or on (a preparation launch), not %s",
                          fp4lr_wprep_name(o->w_prep));
    /* w_prep ON (or a graph's plan: nothing converted in the kernel): A prepared by its own
     * launch, the _w<n>_yt kernels.  w_prep AUTO takes them too, as the programmatic dependent
     * of the preparation, where they are built (measured faster than converting A inside the
     * kernel: plan.h, fp4lr_swap) - not with pdl OFF, where they are not. */
    const int prep_forced = o->w_prep == FP4LR_WPREP_ON || o->graph;
    const int prep_auto = o->w_prep == FP4LR_WPREP_AUTO && !o->graph && o->pdl != FP4LR_PDL_OFF;
    int prep = prep_forced || prep_auto;
    if (o->pdl == FP4LR_PDL_ON && !prep)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "PDL",
                          "the programmatic dependent launch exists for the swapped prepared plans (w_prep on: the "
                          "_w<n>_yt kernels wait for their preparation); this swapped plan has w_prep %s",
                          fp4lr_wprep_name(o->w_prep));
    fp4lr_status st = swapped_kernel(p, arch, o, prep, out);
    if (prep_auto && (st.code != FP4LR_OK || !yt_built(1, out))) { /* AUTO: A converted inside instead */
        prep = 0;
        st = swapped_kernel(p, arch, o, 0, out);
    }
    const int take = st.code == FP4LR_OK && (o->swap == FP4LR_SWAP_ON || yt_built(prep, out));
    if (!take) {
        memset(out, 0, sizeof *out);
        return o->swap == FP4LR_SWAP_ON ? st : fp4lr_ok();
    }
    const size_t len = strlen(out->entry);
    snprintf(out->entry + len, sizeof out->entry - len, "_yt");
    out->swap_ab = 1;
    out->pdl = prep && o->pdl != FP4LR_PDL_OFF;
    out->problem = *p;
    fp4lr_problem_resolve(&out->problem);
    return fp4lr_ok();
}

/* The ping-pong tile's rules (plan.h, FP4LR_SM90A_TILE_N_PP) for plan pl with options o. */
static fp4lr_status pp_check(const fp4lr_plan *pl, const fp4lr_plan_opts *o, int swapped)
{
    char why[96] = "";
    if (swapped || o->swap == FP4LR_SWAP_ON)
        snprintf(why, sizeof why, "this plan is swapped (Y^T = W.A^T)");
    else if (pl->format != FP4LR_NVFP4)
        snprintf(why, sizeof why, "this plan is %s", fp4lr_format_name(pl->format));
    else if (pl->cluster != 1)
        snprintf(why, sizeof why, "this plan has cluster %d", pl->cluster);
    else if (o->w_prep == FP4LR_WPREP_OFF || o->w_prep == FP4LR_WPREP_INLINE)
        snprintf(why, sizeof why, "this plan has w_prep %s", fp4lr_wprep_name(o->w_prep));
    else if (o->schedule == FP4LR_SCHEDULE_SK)
        snprintf(why, sizeof why, "this plan has schedule sk (split tiles)");
    if (!why[0])
        return fp4lr_ok();
    return fp4lr_fail(FP4LR_E_UNSUPPORTED, "TILE_N",
                      "tile_n = %d is the sm_90a ping-pong tile: NVFP4, one CTA, not swapped, W prepared "
                      "(w_prep auto or on), whole tiles (schedule auto or dp); %s",
                      FP4LR_SM90A_TILE_N_PP, why);
}

fp4lr_status fp4lr_plan_make(const fp4lr_problem *p, fp4lr_arch arch, const fp4lr_plan_opts *opts,
                             fp4lr_plan *out)
{
    return plan_kernel(p, arch, opts, 0, out);
}

/* fp4lr_plan_make; `swapped`: p is a swapped plan's kernel problem (its narrow tile allowed). */
static fp4lr_status plan_kernel(const fp4lr_problem *p, fp4lr_arch arch, const fp4lr_plan_opts *opts, int swapped,
                                fp4lr_plan *out)
{
    if (!out)
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER", "output plan is NULL");
    FP4LR_TRY(fp4lr_problem_validate(p));
    if (!fp4lr_arch_valid(arch))
        return fp4lr_fail(FP4LR_E_INVALID, "ARCH", "arch = %d is neither sm90a nor sm100a",
                          (int)arch);
    const fp4lr_plan_opts none = {0};
    const fp4lr_plan_opts *o = opts ? opts : &none;
    if (o->family_target && arch != FP4LR_ARCH_SM100A)
        return fp4lr_fail(FP4LR_E_INVALID, "FAMILY_TARGET",
                          "family_target names the sm_100f kernels: it needs arch sm100a, not %s",
                          fp4lr_arch_name(arch));

    fp4lr_plan *pl = out;
    memset(pl, 0, sizeof *pl);
    pl->problem = *p;
    fp4lr_problem_resolve(&pl->problem);
    pl->arch = arch;
    pl->format = p->format;
    pl->family = p->r == 0 && !p->has_wc && !p->has_beta ? FP4LR_FAMILY_DENSE : FP4LR_FAMILY_FUSED;
    arch_defaults(arch, pl);
    pl->cluster = or_default(o->cluster, pl->cluster);
    /* 128 rows per CTA on both architectures, so the default cluster tile follows the cluster */
    pl->tile_m = or_default(o->tile_m, 128 * pl->cluster);
    pl->tile_n = or_default(o->tile_n, pl->tile_n);
    pl->tile_k = or_default(o->tile_k, pl->tile_k);
    pl->policy = o->policy;
    if (!fp4lr_schedule_name(o->schedule))
        return fp4lr_fail(FP4LR_E_INVALID, "SCHEDULE", "schedule %d is not auto (0), dp (1) or sk (2)",
                          (int)o->schedule);
    pl->schedule = o->schedule;
    if (o->graph && o->schedule == FP4LR_SCHEDULE_SK)
        return fp4lr_fail(FP4LR_E_INVALID, "GRAPH",
                          "a plan for a captured graph walks whole tiles: schedule sk splits them with flags "
                          "valued per launch (auto and dp walk whole tiles)");
    if (o->graph && o->w_prep == FP4LR_WPREP_INLINE)
        return fp4lr_fail(FP4LR_E_INVALID, "GRAPH",
                          "a plan for a captured graph does not convert W in the kernel (its flags are valued "
                          "per launch): w_prep inline excludes graph; auto, on and off do not");
    if (o->graph && pl->schedule == FP4LR_SCHEDULE_AUTO)
        pl->schedule = FP4LR_SCHEDULE_DP;
    if (!fp4lr_wprep_name(o->w_prep))
        return fp4lr_fail(FP4LR_E_INVALID, "W_PREP", "w_prep %d is not auto (0), on (1), off (2) or inline (3)",
                          (int)o->w_prep);
    const int wprep_ok = arch == FP4LR_ARCH_SM90A && pl->cluster == 1;
    /* the pair's prepared plan: the _w kernels of cluster 2, W multicast by rank 0 (plan.h) */
    const int wpair_ok = arch == FP4LR_ARCH_SM90A && pl->cluster == 2 && pl->tile_n == FP4LR_SM90A_TILE_N;
    if (!fp4lr_swap_name(o->swap))
        return fp4lr_fail(FP4LR_E_INVALID, "SWAP", "swap %d is not auto (0), on (1) or off (2)", (int)o->swap);
    if (!fp4lr_pdl_name(o->pdl))
        return fp4lr_fail(FP4LR_E_INVALID, "PDL", "pdl %d is not auto (0), on (1) or off (2)", (int)o->pdl);
    /* the ping-pong tile (plan.h): never swapped, W always prepared, whole tiles */
    const int pp = arch == FP4LR_ARCH_SM90A && pl->tile_n == FP4LR_SM90A_TILE_N_PP;
    if (pp) {
        FP4LR_TRY(pp_check(pl, o, swapped));
        if (pl->schedule == FP4LR_SCHEDULE_AUTO)
            pl->schedule = FP4LR_SCHEDULE_DP;
    }
    if (o->swap != FP4LR_SWAP_OFF && !pp) {
        fp4lr_plan sw;
        FP4LR_TRY(swapped_plan(p, arch, o, pl->family, wprep_ok, &sw));
        if (sw.swap_ab) {
            *out = sw;
            return fp4lr_ok();
        }
    }
    if (o->pdl == FP4LR_PDL_ON && !swapped)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "PDL",
                          "the programmatic dependent launch exists for the swapped prepared plans (swap on, "
                          "w_prep on: the _w<n>_yt kernels wait for their preparation); this plan is not one");
    /* sm_90a kernels are built 256 wide; a swapped plan's (_x5_yt, _w5_yt) also 160 (plan.h) */
    if (arch == FP4LR_ARCH_SM90A && pl->tile_n != FP4LR_SM90A_TILE_N &&
        !(pl->tile_n == FP4LR_SM90A_TILE_N_NARROW && swapped) && !pp)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "TILE_N",
                          "sm_90a kernels are %d wide, %d in a swapped plan (Y^T = W.A^T, _yt kernels) and %d "
                          "for the dense ping-pong kernels; this plan is not swapped and asks tile_n = %d",
                          FP4LR_SM90A_TILE_N, FP4LR_SM90A_TILE_N_NARROW, FP4LR_SM90A_TILE_N_PP, pl->tile_n);
    if (o->w_prep == FP4LR_WPREP_INLINE && !wprep_ok)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "W_PREP",
                          "W converted in the kernel (inline) exists for sm90a plans with one CTA; "
                          "this plan is %s %s with cluster %d", fp4lr_arch_name(arch), fp4lr_family_name(pl->family),
                          pl->cluster);
    if (o->w_prep == FP4LR_WPREP_ON && !wprep_ok && !wpair_ok)
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "W_PREP",
                          "a prepared W exists for sm90a plans with one CTA and the 256-wide pair; this plan is "
                          "%s %s with cluster %d", fp4lr_arch_name(arch), fp4lr_family_name(pl->family), pl->cluster);
    /* a W too large for the preparation: AUTO keeps the transform, ON is refused by its rule */
    const fp4lr_status fits = fp4lr_sm90a_wprep_check(p);
    if ((o->w_prep == FP4LR_WPREP_ON || o->w_prep == FP4LR_WPREP_INLINE || pp) && fits.code != FP4LR_OK)
        return fits;
    /* the pair prepares W at every M: its transform kernels ran at 0.53-0.58 of one CTA on
     * SANA's M = 1024 (plan.h) */
    const int auto_prep = o->w_prep == FP4LR_WPREP_AUTO && fits.code == FP4LR_OK &&
                          ((wprep_ok && p->M >= FP4LR_SM90A_WPREP_MIN_M) || wpair_ok);
    /* AUTO converts inside the kernel where that measured faster than the preparation (plan.h;
     * one CTA: the pair has no _x kernels) */
    pl->w_inline = o->w_prep == FP4LR_WPREP_INLINE ||
                   (auto_prep && wprep_ok && !o->graph);
    pl->w_prep = o->w_prep == FP4LR_WPREP_ON || pl->w_inline || auto_prep || pp;
    if (pp)
        pl->w_inline = 0;

    fp4lr_budget_req req = {
        .arch = arch,
        .format = p->format,
        .tile_m = pl->tile_m,
        .tile_n = pl->tile_n,
        .tile_k = pl->tile_k,
        .cluster = pl->cluster,
        .rank = (int)p->r, /* <= FP4LR_RANK_MAX after validation */
        .family = pl->family,
        .has_affine = p->has_wc || p->has_beta,
        .out_bytes = fp4lr_out_bytes(p->out),
        .policy = o->policy,
        .smem_capacity = o->smem_capacity,
        .force_main_stages = o->force_main_stages,
        .force_transform_stages = o->force_transform_stages,
        .force_lora_chunk = o->force_lora_chunk,
        .force_lora_stages = o->force_lora_stages,
        .w_prep = pl->w_prep,
        .w_inline = pl->w_inline,
        .yt_prepared = swapped && pl->w_prep && !pl->w_inline,
        .yt = swapped,
    };
    FP4LR_TRY(fp4lr_budget_solve(&req, &pl->budget));
    /* AUTO takes only the _x layouts that are built (another shared-memory capacity may solve
     * to one that is not): otherwise the preparation, whose layouts are */
    if (pl->w_inline && o->w_prep == FP4LR_WPREP_AUTO &&
        !fp4lr_sm90a_xconv_built(pl->family, pl->tile_n, pl->budget.stages_main, pl->budget.stages_transform)) {
        pl->w_inline = req.w_inline = 0;
        FP4LR_TRY(fp4lr_budget_solve(&req, &pl->budget));
    }

    pl->family_target = o->family_target;
    /* sm_90a kernels with the deep (3-slot) transform ring carry _t3, W-prepared ones
     * _w<slots> */
    const int deep = arch == FP4LR_ARCH_SM90A && pl->budget.stages_transform == 3;
    char ring[16] = "";
    if (pl->w_prep)
        snprintf(ring, sizeof ring, pl->w_inline ? "_x%d" : "_w%d", pl->budget.stages_transform);
    else if (deep)
        snprintf(ring, sizeof ring, "_t3");
    if (pp && !fp4lr_sm90a_pp_built(pl->format, pl->family, pl->budget.stages_main, pl->budget.stages_transform))
        return fp4lr_fail(FP4LR_E_UNSUPPORTED, "TILE_N",
                          "no %s ping-pong kernel is built for %d main stages and %d W slots (tools/gen_sm90a_pp.py "
                          "INSTANCES: dense s3_w10, the solver's, and s4_w8; fused the solver's over every rank)",
                          fp4lr_family_name(pl->family), pl->budget.stages_main, pl->budget.stages_transform);
    snprintf(pl->entry, sizeof pl->entry, "fp4lr_%s_%s_%s_m%dn%dk%d_c%d_s%d%s%s",
             o->family_target ? "sm100f" : fp4lr_arch_name(arch),
             fp4lr_format_name(pl->format), fp4lr_family_name(pl->family), pl->tile_m, pl->tile_n,
             pl->tile_k, pl->cluster, pl->budget.stages_main, ring, pp ? "_pp" : "");
    pl->smem_bytes = pl->budget.total_bytes;
    pl->tiles = ((p->M + pl->tile_m - 1) / pl->tile_m) * ((p->N + pl->tile_n - 1) / pl->tile_n);
    return fp4lr_ok();
}

int fp4lr_sm90a_pp_built(fp4lr_format format, fp4lr_family family, int stages_main, int stages_transform)
{
    /* tools/gen_sm90a_pp.py INSTANCES (tests/test_sm90a_instances.c compares) */
    static const struct {
        fp4lr_family family;
        int main, transform;
    } built[] = {{FP4LR_FAMILY_DENSE, 3, 10}, {FP4LR_FAMILY_DENSE, 4, 8}, {FP4LR_FAMILY_FUSED, 3, 10},
                 {FP4LR_FAMILY_FUSED, 3, 9},   {FP4LR_FAMILY_FUSED, 3, 8}};
    for (size_t i = 0; i < sizeof built / sizeof built[0]; i++)
        if (format == FP4LR_NVFP4 && built[i].family == family && built[i].main == stages_main &&
            built[i].transform == stages_transform)
            return 1;
    return 0;
}

int fp4lr_sm90a_xconv_built(fp4lr_family family, int tile_n, int stages_main, int stages_transform)
{
    /* tools/sm90a_ptx/instances.py INSTANCES, the _x rows (tests/test_wprep_plan.c compares) */
    static const struct {
        fp4lr_family family;
        int main, transform;
    } built[] = {{FP4LR_FAMILY_DENSE, 4, 4}, {FP4LR_FAMILY_FUSED, 4, 4}, {FP4LR_FAMILY_FUSED, 3, 4}};
    for (size_t i = 0; i < sizeof built / sizeof built[0]; i++)
        if (tile_n == FP4LR_SM90A_TILE_N && built[i].family == family && built[i].main == stages_main &&
            built[i].transform == stages_transform)
            return 1;
    return 0;
}

int fp4lr_sm90a_wyt_built(fp4lr_format format, fp4lr_family family, int tile_n, int stages_main,
                          int stages_transform)
{
    /* tools/sm90a_ptx/instances.py INSTANCES, the _w<n>_yt rows (tests/test_sm90a_instances.c compares):
     * the solver's layouts of every rank (fused with two writeback buffers, budget.h
     * yt_prepared; NVFP4's 9 KiB main stages and MXFP4's 8.5 KiB ones solve differently) */
    static const struct {
        int tile_n;
        fp4lr_format format;
        fp4lr_family family;
        int main, transform;
    } built[] = {
        {256, FP4LR_NVFP4, FP4LR_FAMILY_DENSE, 3, 5}, {256, FP4LR_MXFP4, FP4LR_FAMILY_DENSE, 4, 5},
        {256, FP4LR_NVFP4, FP4LR_FAMILY_FUSED, 3, 5}, {256, FP4LR_NVFP4, FP4LR_FAMILY_FUSED, 4, 4},
        {256, FP4LR_MXFP4, FP4LR_FAMILY_FUSED, 3, 5}, {256, FP4LR_MXFP4, FP4LR_FAMILY_FUSED, 4, 4},
        {256, FP4LR_MXFP4, FP4LR_FAMILY_FUSED, 3, 4}, {160, FP4LR_NVFP4, FP4LR_FAMILY_DENSE, 4, 5},
        {160, FP4LR_MXFP4, FP4LR_FAMILY_DENSE, 4, 5}, {160, FP4LR_NVFP4, FP4LR_FAMILY_FUSED, 4, 5},
        {160, FP4LR_NVFP4, FP4LR_FAMILY_FUSED, 3, 5}, {160, FP4LR_MXFP4, FP4LR_FAMILY_FUSED, 4, 5},
    };
    for (size_t i = 0; i < sizeof built / sizeof built[0]; i++)
        if (built[i].tile_n == tile_n && built[i].format == format && built[i].family == family &&
            built[i].main == stages_main && built[i].transform == stages_transform)
            return 1;
    return 0;
}

int fp4lr_sm90a_yt_built(fp4lr_family family, int tile_n, int stages_main, int stages_transform)
{
    /* tools/sm90a_ptx/instances.py INSTANCES, the _yt rows (tests/test_swap_plan.c compares): the _x ones,
     * and the narrow tile's 4 main stages beside 5 W slots (both families) */
    if (tile_n == FP4LR_SM90A_TILE_N_NARROW)
        return stages_main == 4 && stages_transform == 5;
    return fp4lr_sm90a_xconv_built(family, tile_n, stages_main, stages_transform);
}

/* The switches that are auto (0), on (1) or off (2): fp4lr_swap and fp4lr_pdl. */
static const char *const auto_on_off[] = {"auto", "on", "off"};
_Static_assert(FP4LR_SWAP_AUTO == 0 && FP4LR_SWAP_ON == 1 && FP4LR_SWAP_OFF == 2 && FP4LR_PDL_AUTO == 0 &&
                   FP4LR_PDL_ON == 1 && FP4LR_PDL_OFF == 2,
               "fp4lr_swap and fp4lr_pdl index auto_on_off");

static const char *auto_on_off_name(int v) { return v >= 0 && v <= 2 ? auto_on_off[v] : NULL; }

static int auto_on_off_parse(const char *name)
{
    for (int v = 0; v <= 2; v++)
        if (name && !strcmp(name, auto_on_off[v]))
            return v;
    return -1;
}

const char *fp4lr_pdl_name(fp4lr_pdl d) { return auto_on_off_name((int)d); }
int fp4lr_pdl_parse(const char *name) { return auto_on_off_parse(name); }
const char *fp4lr_swap_name(fp4lr_swap s) { return auto_on_off_name((int)s); }
int fp4lr_swap_parse(const char *name) { return auto_on_off_parse(name); }

const char *fp4lr_schedule_name(fp4lr_schedule s)
{
    switch (s) {
    case FP4LR_SCHEDULE_AUTO: return "auto";
    case FP4LR_SCHEDULE_DP: return "dp";
    case FP4LR_SCHEDULE_SK: return "sk";
    }
    return NULL;
}

const char *fp4lr_wprep_name(fp4lr_wprep w)
{
    switch (w) {
    case FP4LR_WPREP_AUTO: return "auto";
    case FP4LR_WPREP_ON: return "on";
    case FP4LR_WPREP_OFF: return "off";
    case FP4LR_WPREP_INLINE: return "inline";
    }
    return NULL;
}

int fp4lr_wprep_parse(const char *name)
{
    for (int w = FP4LR_WPREP_AUTO; w <= FP4LR_WPREP_INLINE; w++)
        if (name && !strcmp(name, fp4lr_wprep_name((fp4lr_wprep)w)))
            return w;
    return -1;
}

int fp4lr_schedule_parse(const char *name)
{
    for (int s = FP4LR_SCHEDULE_AUTO; s <= FP4LR_SCHEDULE_SK; s++)
        if (name && !strcmp(name, fp4lr_schedule_name((fp4lr_schedule)s)))
            return s;
    return -1;
}

fp4lr_status fp4lr_plan_print(FILE *f, const fp4lr_plan *pl)
{
    if (!f || !pl)
        return fp4lr_fail(FP4LR_E_INVALID, "NULL_POINTER", "%s is NULL", !f ? "FILE" : "plan");
    const fp4lr_problem *p = &pl->problem;
    fprintf(f, "plan: M=%" PRId64 " N=%" PRId64 " K=%" PRId64 " r=%" PRId64 " %s out=%s "
               "ldL=%" PRId64 " ldU=%" PRId64 " ldY=%" PRId64 " wc=%s beta=%s\n",
            p->M, p->N, p->K, p->r, fp4lr_format_name(p->format), fp4lr_out_name(p->out), p->ldL,
            p->ldU, p->ldY, p->has_wc ? "yes" : "no", p->has_beta ? "yes" : "no");
    fprintf(f, "entry: %s\n", pl->entry);
    if (pl->arch == FP4LR_ARCH_SM90A)
        fprintf(f, "schedule: %s (tile walk: %s)\n", fp4lr_schedule_name(pl->schedule),
                pl->schedule == FP4LR_SCHEDULE_DP   ? "whole tiles only"
                : pl->schedule == FP4LR_SCHEDULE_SK ? "the last waves split along K (stream-K)"
                                                    : "the last waves split along K when whole tiles leave SMs idle");
    if (pl->swap_ab)
        fprintf(f, "swapped: the kernel computes Y^T = W.A^T (A and W, M and N exchanged: %" PRId64 " x %" PRId64
                   " tiles below are Y^T's) and stores its tiles transposed; the operand it converts once per "
                   "launch is A\n", p->N, p->M);
    if (pl->w_inline)
        fprintf(f, "W converted in the kernel: its warps 2-7 convert %s once per launch into a %" PRId64
                   "-byte workspace (%s x K %s) while the main loop runs; the W producer waits for each "
                   "(K block, N tile) item's flags, then loads it by bulk copies\n",
                pl->swap_ab ? "A (the kernel's W)" : "W", (pl->swap_ab ? p->M : p->N) * p->K * 2,
                pl->swap_ab ? "M" : "N", pl->format == FP4LR_NVFP4 ? "f16" : "bf16");
    else if (pl->w_prep)
        fprintf(f, "%s prepared: fp4lr_%s_%s_wprep%s converts %s once per launch into a %" PRId64
                   "-byte workspace (%s x K %s), the kernel loads it by bulk copies%s\n",
                pl->swap_ab ? "A (the kernel's W)" : "W", fp4lr_arch_name(pl->arch), fp4lr_format_name(pl->format),
                pl->pdl ? "_pdl" : "", pl->swap_ab ? "A" : "W", (pl->swap_ab ? p->M : p->N) * p->K * 2,
                pl->swap_ab ? "M" : "N",
                pl->format == FP4LR_NVFP4 ? "f16" : "bf16",
                pl->pdl ? "; the kernel is launched as its programmatic dependent (starts while it runs, "
                          "waits for it before the first copy)"
                        : "");
    if (pl->arch == FP4LR_ARCH_SM90A) /* fp4lr_gemm on a stream captured into a graph (gemm.h) */
        fprintf(f, "graph capture: %s\n",
                pl->w_inline ? "refused (W converted in the kernel: plan with graph = 1)"
                : pl->schedule == FP4LR_SCHEDULE_DP
                    ? "allowed (whole tiles, nothing converted in the kernel)"
                    : "refused when the walk splits tiles (schedule auto or sk: plan with graph = 1 or schedule dp)");
    fprintf(f, "launch: %d threads per CTA, cluster %d, %" PRId64 " B dynamic shared memory, "
               "%" PRId64 " tiles of %dx%d\n",
            pl->block_threads, pl->cluster, pl->smem_bytes, pl->tiles, pl->tile_m, pl->tile_n);
    return fp4lr_budget_print(f, &pl->budget);
}
