/* fp4lr-check: plan, run and validate one problem on the GPU.
 *
 * Builds the problem (a row of the shape table or MxNxK[:r]), prints the plan
 * and its budget, generates random inputs over the full code and scale ranges,
 * runs the kernel on poisoned outputs, validates sampled rows (or all rows)
 * against the double reference, and times it.  Without a GPU it says so, then
 * still plans, generates and runs the CPU reference on a few rows. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "devproblem.h"
#include "gemm.h"
#include "plan.h"
#include "problem_gen.h"
#include "reference.h"
#include "shapes.h"
#include "timer.h"

typedef struct opts {
    fp4lr_problem p;
    const char *shape_name;
    int rank_set, affine, rows, iters, warmup, threads, plan_only;
    uint64_t seed;
    fp4lr_pgen_scales scales;
    fp4lr_plan_opts plan;
} opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fp4lr-check [options]\n"
            "Plans, runs and validates one problem on the GPU against the double reference.\n\n"
            "  --shape NAME        a row of the shape table (default flux-qkv); --list-shapes lists them\n"
            "  --mnk MxNxK[:r]     a custom shape\n"
            "  --format F          nvfp4 (default) or mxfp4\n"
            "  --rank R            low-rank rank (default 0: the dense kernel; the shape's r needs the fused kernel)\n"
            "  --affine            include wc and beta (fused kernel)\n"
            "  --seed S            input seed (default 1)\n"
            "  --scales S          realistic (default) or full (every scale code; sums may overflow)\n"
            "  --rows N            rows validated, sampled (default 384; 0 = every row)\n"
            "  --iters N           timed launches (default 20; 0 = no timing)\n"
            "  --stages N          force the main stage count (an instantiation must exist)\n"
            "  --cluster N         CTAs per cluster: 1, or 2 (a pair shares W; default: the plan's)\n"
            "  --threads N         CPU threads of the reference (default: all)\n"
            "  --plan-only         print the plan and budget, then stop\n"
            "  --help              this text\n"
            "Exit status: 0 pass, 1 validation failed, 2 bad arguments, 3 other error.\n");
}

static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int bad_arg(const char *flag, const char *val, const char *why)
{
    fprintf(stderr, "fp4lr-check: %s %s: %s (see --help)\n", flag, val ? val : "", why);
    return 2;
}

static int parse(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->shape_name = "flux-qkv";
    o->rows = 384;
    o->iters = 20;
    o->warmup = 3;
    o->seed = 1;
    o->p.format = FP4LR_NVFP4;
    o->p.out = FP4LR_OUT_BF16;
    const char *mnk = NULL;
    long long rank = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long x;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--list-shapes")) {
            for (int s = 0; s < fp4lr_num_shapes; s++)
                printf("%-14s %-11s M=%-6lld N=%-6lld K=%-6lld r=%lld\n", fp4lr_shapes[s].name,
                       fp4lr_shapes[s].family, (long long)fp4lr_shapes[s].M, (long long)fp4lr_shapes[s].N,
                       (long long)fp4lr_shapes[s].K, (long long)fp4lr_shapes[s].r);
            exit(0);
        } else if (!strcmp(a, "--affine")) {
            o->affine = 1;
        } else if (!strcmp(a, "--plan-only")) {
            o->plan_only = 1;
        } else if (!v) {
            return bad_arg(a, NULL, "unknown flag or missing value");
        } else if (!strcmp(a, "--shape")) {
            o->shape_name = v, i++;
        } else if (!strcmp(a, "--mnk")) {
            mnk = v, i++;
        } else if (!strcmp(a, "--format")) {
            if (!strcmp(v, "nvfp4")) o->p.format = FP4LR_NVFP4;
            else if (!strcmp(v, "mxfp4")) o->p.format = FP4LR_MXFP4;
            else return bad_arg(a, v, "format must be nvfp4 or mxfp4");
            i++;
        } else if (!strcmp(a, "--rank")) {
            if (parse_int(v, 0, 1 << 20, &rank)) return bad_arg(a, v, "rank must be an integer >= 0");
            o->rank_set = 1, i++;
        } else if (!strcmp(a, "--seed")) {
            if (parse_int(v, 0, (1LL << 62), &x)) return bad_arg(a, v, "seed must be an integer >= 0");
            o->seed = (uint64_t)x, i++;
        } else if (!strcmp(a, "--scales")) {
            if (!strcmp(v, "realistic")) o->scales = FP4LR_PGEN_SCALES_REALISTIC;
            else if (!strcmp(v, "full")) o->scales = FP4LR_PGEN_SCALES_FULL;
            else return bad_arg(a, v, "scales must be realistic or full");
            i++;
        } else if (!strcmp(a, "--rows")) {
            if (parse_int(v, 0, 1 << 30, &x) || (x > 0 && x < FP4LR_SAMPLE_FIXED_MAX))
                return bad_arg(a, v, "rows must be 0 (all) or at least 12");
            o->rows = (int)x, i++;
        } else if (!strcmp(a, "--iters")) {
            if (parse_int(v, 0, 1000, &x)) return bad_arg(a, v, "iters must be 0..1000");
            o->iters = (int)x, i++;
        } else if (!strcmp(a, "--stages")) {
            if (parse_int(v, 1, 64, &x)) return bad_arg(a, v, "stages must be 1..64");
            o->plan.force_main_stages = (int)x, i++;
        } else if (!strcmp(a, "--cluster")) {
            if (parse_int(v, 1, 2, &x)) return bad_arg(a, v, "cluster must be 1 or 2");
            o->plan.cluster = (int)x, i++;
        } else if (!strcmp(a, "--threads")) {
            if (parse_int(v, 1, 1024, &x)) return bad_arg(a, v, "threads must be 1..1024");
            o->threads = (int)x, i++;
        } else {
            return bad_arg(a, v, "unknown flag");
        }
    }
    fp4lr_shape sh;
    if (mnk) {
        if (fp4lr_shape_parse(mnk, &sh))
            return bad_arg("--mnk", mnk, "expected MxNxK or MxNxK:r with integers");
        if (!o->rank_set)
            rank = sh.r;
    } else {
        const fp4lr_shape *f = fp4lr_shape_find(o->shape_name);
        if (!f)
            return bad_arg("--shape", o->shape_name, "unknown shape (--list-shapes lists them)");
        sh = *f;
    }
    o->p.M = sh.M;
    o->p.N = sh.N;
    o->p.K = sh.K;
    o->p.r = rank;
    o->p.has_wc = o->p.has_beta = o->affine;
    o->p.ldY = (sh.N + 7) / 8 * 8; /* rows of Y padded to 16 bytes (bulk tensor copy rule) */
    fp4lr_problem_resolve(&o->p);
    return 0;
}

/* Generates the inputs and runs the reference on the selected rows. */
typedef struct checked {
    fp4lr_pgen_problem host;
    int64_t *rows;
    int64_t nrows;
    double *ref, *mag;
} checked;

static fp4lr_status prepare(const opts *o, checked *c)
{
    memset(c, 0, sizeof *c);
    if (fp4lr_pgen_alloc(&c->host, &o->p))
        return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the host operands");
    fp4lr_pgen_fill(&c->host, o->seed, o->scales);
    int64_t want = o->rows == 0 || o->rows >= o->p.M ? o->p.M : o->rows;
    c->rows = malloc(sizeof *c->rows * (size_t)want);
    c->ref = malloc(sizeof *c->ref * (size_t)(want * o->p.N));
    c->mag = malloc(sizeof *c->mag * (size_t)(want * o->p.N));
    if (!c->rows || !c->ref || !c->mag)
        return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the reference (%lld rows)", (long long)want);
    FP4LR_TRY(fp4lr_sample_rows(o->p.M, want, o->seed, c->rows, &c->nrows));
    return fp4lr_reference(&c->host.p, &c->host.a, c->rows, c->nrows, o->threads, c->ref, c->mag);
}

static void release(checked *c)
{
    fp4lr_pgen_free(&c->host);
    free(c->rows);
    free(c->ref);
    free(c->mag);
}

typedef struct launch_ctx {
    fp4lr_runtime *rt;
    const fp4lr_plan *plan;
    const fp4lr_args *args;
} launch_ctx;

static fp4lr_status launch_once(void *user, int i, CUstream stream)
{
    launch_ctx *l = user;
    (void)i;
    return fp4lr_gemm(l->rt, l->plan, l->args, stream);
}

static int fail(fp4lr_status st, int code)
{
    fprintf(stderr, "fp4lr-check: %s [%s%s%s]\n", st.msg, fp4lr_code_name(st.code), st.rule[0] ? " " : "",
            st.rule);
    return code;
}

int main(int argc, char **argv)
{
    opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    fp4lr_status st = fp4lr_problem_validate(&o.p);
    if (st.code)
        return fail(st, 2);

    fp4lr_ctx *ctx = NULL;
    fp4lr_status gpu = fp4lr_ctx_create(0, &ctx);
    fp4lr_runtime rt;
    fp4lr_plan plan;
    if (gpu.code == FP4LR_OK) {
        fp4lr_runtime_init(&rt, ctx, NULL);
        printf("device: %s (cc %d.%d, %d SMs, %d B shared memory per block, driver %d)\n", ctx->name,
               ctx->cc_major, ctx->cc_minor, ctx->sm_count, ctx->max_smem_optin, ctx->driver_version);
        st = fp4lr_runtime_plan(&rt, &o.p, &o.plan, &plan);
    } else {
        printf("no GPU: %s\n", gpu.msg);
        printf("without a GPU fp4lr-check plans for sm_90a, generates the inputs and runs the CPU reference only.\n");
        st = fp4lr_plan_make(&o.p, FP4LR_ARCH_SM90A, &o.plan, &plan);
    }
    printf("problem: M=%lld N=%lld K=%lld r=%lld %s%s, seed %llu\n", (long long)o.p.M, (long long)o.p.N,
           (long long)o.p.K, (long long)o.p.r, fp4lr_format_name(o.p.format), o.affine ? " affine" : "",
           (unsigned long long)o.seed);
    if (st.code)
        return fail(st, 3);
    fp4lr_plan_print(stdout, &plan);
    if (o.plan_only)
        return 0;

    if (gpu.code != FP4LR_OK) {
        /* CPU path: a few rows are enough to show the quantized inputs and the reference work. */
        if (o.rows == 0 || o.rows > 16)
            o.rows = 16;
        checked c;
        st = prepare(&o, &c);
        if (st.code == FP4LR_OK) {
            double amax = 0;
            for (int64_t i = 0; i < c.nrows * o.p.N; i++)
                if (c.ref[i] > amax || -c.ref[i] > amax)
                    amax = c.ref[i] < 0 ? -c.ref[i] : c.ref[i];
            printf("reference: %lld rows x %lld columns in double, max |ref| = %.6g, tol_acc = %.3g\n",
                   (long long)c.nrows, (long long)o.p.N, amax, fp4lr_tol_acc(&c.host.p));
            printf("no kernel was run (no GPU).\n");
        }
        release(&c);
        return st.code ? fail(st, 3) : 0;
    }

    checked c;
    fp4lr_devproblem dp;
    int dp_ok = 0;
    st = prepare(&o, &c);
    if (st.code == FP4LR_OK)
        st = fp4lr_devproblem_alloc(ctx, &plan.problem, &dp), dp_ok = st.code == FP4LR_OK;
    if (st.code == FP4LR_OK)
        st = fp4lr_devproblem_upload(&dp, &c.host.a);
    if (st.code == FP4LR_OK)
        st = fp4lr_devproblem_poison(&dp);
    if (st.code == FP4LR_OK)
        st = fp4lr_gemm(&rt, &plan, &dp.args, NULL);
    if (st.code == FP4LR_OK)
        st = fp4lr_ctx_sync(ctx);
    if (st.code == FP4LR_OK)
        st = fp4lr_devproblem_download(&dp, c.host.Y);
    int exit_code = 0;
    if (st.code == FP4LR_OK) {
        fp4lr_compare_report rep;
        fp4lr_status cmp = fp4lr_compare(&c.host.p, c.host.Y, c.rows, c.nrows, c.ref, c.mag, &rep);
        fp4lr_compare_print(stdout, &rep);
        printf("validate: %s (%lld rows x %lld columns checked, max err/mag %.3g, tol_acc %.3g)\n",
               cmp.code == FP4LR_OK ? "PASS" : "FAIL", (long long)c.nrows, (long long)o.p.N,
               rep.max_err_over_mag, rep.tol_acc);
        exit_code = cmp.code == FP4LR_OK ? 0 : 1;
    }
    if (st.code == FP4LR_OK && o.iters > 0) {
        launch_ctx l = {&rt, &plan, &dp.args};
        fp4lr_timing t;
        st = fp4lr_time(ctx, launch_once, &l, o.warmup, o.iters, NULL, &t);
        if (st.code == FP4LR_OK) {
            double flop = 2.0 * (double)o.p.M * (double)o.p.N * (double)(o.p.K + o.p.r);
            printf("time: median %.3f ms (min %.3f, max %.3f, %d launches) -> %.1f TFLOP/s\n", t.median_ms,
                   t.min_ms, t.max_ms, t.reps, flop / (t.median_ms * 1e-3) / 1e12);
        }
    }
    if (dp_ok)
        fp4lr_devproblem_free(&dp);
    release(&c);
    fp4lr_runtime_release(&rt);
    fp4lr_ctx_destroy(ctx);
    if (st.code)
        return fail(st, 3);
    return exit_code;
}
