/* fp4lr-check: plan, run and validate one problem on the GPU.
 *
 * Builds the problem (a row of the shape table or MxNxK[:r]), prints the plan
 * and its budget, generates random inputs over the full code and scale ranges,
 * runs the kernel on poisoned outputs, validates sampled rows (or all rows)
 * against the double reference, and times it.  Without a GPU it says so, then
 * still plans, generates and runs the CPU reference on a few rows.
 *
 * --in DIR reads the problem from .npy files instead of generating it, and
 * --out DIR writes the output (and, with --out-ref, the reference) as .npy files;
 * tools/README.md lists the files and their layouts. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_npy.h"
#include "cli_paths.h"
#include "cli_timeline.h"
#include "compare.h"
#include "devproblem.h"
#include "gemm.h"
#include "sm100a_gemm.h"
#include "plan.h"
#include "problem_gen.h"
#include "reference.h"
#include "scale_atom.h"
#include "shapes.h"
#include "timer.h"

typedef struct opts {
    fp4lr_problem p;
    const char *shape_name;
    int rank_set, affine, affine_set, dense, rows, iters, warmup, threads, plan_only, repeat;
    uint64_t seed;
    fp4lr_pgen_scales scales;
    fp4lr_plan_opts plan;
    const char *in_dir, *out_dir; /* --in, --out (NULL: generate / write nothing) */
    const char *timeline;         /* --timeline FILE (NULL: none) */
    int out_ref, alpha_set;
    float alpha; /* --alpha, with --in */
} opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fp4lr-check [options]\n"
            "Plans, runs and validates one problem on the GPU against the double reference.\n\n"
            "  --shape NAME        a row of the shape table (default flux-qkv); --list-shapes lists them\n"
            "  --mnk MxNxK[:r]     a custom shape\n"
            "  --format F          nvfp4 (default) or mxfp4\n"
            "  --rank R            low-rank rank (default: the shape's r, e.g. 32 for flux-qkv)\n"
            "  --affine            include wc and beta (the default)\n"
            "  --no-affine         leave wc and beta out (1 and 0)\n"
            "  --dense             the dense kernel alone: r = 0, no wc, no beta\n"
            "  --seed S            input seed (default 1)\n"
            "  --scales S          realistic (default), full (every scale code; sums may overflow) or\n"
            "                      small (MXFP4 block scales <= 2^0, as a trained model's)\n"
            "  --rows N            rows validated, sampled (default 384, at least 12; 0 = every row)\n"
            "  --iters N           timed launches (default 20; 0 = no timing)\n"
            "  --repeat N          after validating, N more launches, each into a poisoned Y and\n"
            "                      compared bit for bit with the validated Y (default 0)\n"
            "  --stages N          force the main stage count (an instantiation must exist)\n"
            "  --transform-slots N sm_90a: force the W transform ring to 2 or 3 slots (the W ring\n"
            "                      2..5 with --w-prep on, 2..10 with --tile-n 128; a count without a\n"
            "                      built kernel is refused or fails to load)\n"
            "  --lora-chunk N      force N ranks a low-rank chunk (a multiple of 16, at most r)\n"
            "  --lora-slots N      force N low-rank ring slots (1..4)\n"
            "  --cluster N         CTAs per cluster: 1, or 2 (a pair shares W; default: the plan's)\n"
            "  --schedule S        sm_90a tile walk: auto (default), dp (whole tiles) or sk (stream-K:\n"
            "                      the last waves' tiles split along K)\n"
            "  --w-prep W          sm_90a: auto (default: one CTA inline when M >= %d, off below;\n"
            "                      a pair on), on (W converted once per launch into a\n"
            "                      workspace, then loaded by bulk copies; in a pair rank 0 multicasts\n"
            "                      them), off (the transform warps convert W in the K loop) or inline\n"
            "                      (one CTA: the kernel's idle warps convert W; no preparation launch)\n"
            "  --swap S            sm_90a, one CTA: auto (default: on when M < %d <= N), on (the\n"
            "                      kernel computes Y^T = W.A^T, converting A once inside the kernel,\n"
            "                      or with --w-prep on in a preparation launch before it, and stores\n"
            "                      its tiles transposed: the _yt kernels) or off\n"
            "  --pdl P             swapped prepared plans (--swap on --w-prep on): auto (default: on),\n"
            "                      on (the kernel is launched as the programmatic dependent of the\n"
            "                      preparation: it starts while that runs and waits for it before its\n"
            "                      first read of the prepared A; other plans refuse on) or off\n"
            "  --graph             plan for a stream captured into a CUDA graph (plan_opts.graph: whole\n"
            "                      tiles, W never converted in the kernel; the plan's 'graph capture'\n"
            "                      line says whether fp4lr_gemm may be captured with it)\n"
            "  --tile-n W          sm_90a swapped plans: the kernel's tile width, auto (default: 160 where\n"
            "                      the 256-wide grid is under one wave of the GPU's SMs and the 160-wide\n"
            "                      one fits in one; 256 without a GPU), 256 or 160 (other plans: 256);\n"
            "                      128: the dense NVFP4 ping-pong kernels (W prepared, not swapped)\n"
            "  --sm-count N        plan for a GPU of N SMs (AUTO's tile width; default: the GPU's, or\n"
            "                      none without one), e.g. 132 (H100 SXM, H200) with --plan-only\n"
            "  --threads N         CPU threads of the reference (default: all)\n"
            "  --plan-only         print the plan and budget, then stop\n"
            "  --timeline FILE     after timing, one more launch whose per-CTA event times go to FILE (replaced)\n"
            "                      (CSV; kernels built with tools/experiment_build.sh tline DIR PATTERN,\n"
            "                      run with FP4LR_KERNEL_DIR=DIR; tools/tline_summary.py FILE summarises it)\n"
            "  --in DIR            read the problem from DIR/*.npy instead of generating it: A, SFA, W, SFW;\n"
            "                      optional L and U, wc, beta, alpha (M, N, K, r from the shapes; --format\n"
            "                      still chooses the format; see tools/README.md)\n"
            "  --alpha X           with --in and no alpha.npy: alpha (default 1; nan and inf are taken,\n"
            "                      a finite X outside fp32's range is refused)\n"
            "  --out DIR           write DIR/Y.npy (M x N, uint16 bf16 bit patterns; DIR is created, files of\n"
            "                      those names in it are replaced)\n"
            "  --out-ref           with --out: also DIR/ref.npy (float64, rows x N) and DIR/rows.npy (int64)\n"
            "  --help              this text\n"
            "Exit status: 0 pass, 1 validation failed, 2 bad arguments or input files, 3 other error.\n",
            FP4LR_SM90A_WPREP_MIN_M, FP4LR_SM90A_WPREP_MIN_M);
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
    fprintf(stderr, "fp4lr-check: %s%s%s: %s (see --help)\n", flag, val ? " " : "", val ? val : "", why);
    return 2;
}

/* parse's status when it has done the whole job (--help, --list-shapes): exit 0 */
enum { PARSE_DONE = -1 };

/* Fills *o; 0 to go on, PARSE_DONE, or an exit status (2: bad arguments). */
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
    int shape_set = 0, scales_set = 0, list_shapes = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long x;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return PARSE_DONE;
        } else if (!strcmp(a, "--list-shapes")) {
            list_shapes = 1; /* after the other arguments are checked */
        } else if (!strcmp(a, "--affine")) {
            o->affine = 1, o->affine_set = 1;
        } else if (!strcmp(a, "--no-affine")) {
            o->affine = 0, o->affine_set = 1;
        } else if (!strcmp(a, "--graph")) {
            o->plan.graph = 1;
        } else if (!strcmp(a, "--dense")) {
            o->dense = 1;
        } else if (!strcmp(a, "--plan-only")) {
            o->plan_only = 1;
        } else if (!strcmp(a, "--out-ref")) {
            o->out_ref = 1;
        } else if (!v) {
            return bad_arg(a, NULL, "unknown flag or missing value");
        } else if (!*v || !strncmp(v, "--", 2)) {
            return bad_arg(a, v, "an unknown flag, or a missing value (the next argument is empty or an option)");
        } else if (!strcmp(a, "--shape")) {
            o->shape_name = v, shape_set = 1, i++;
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
            else if (!strcmp(v, "small")) o->scales = FP4LR_PGEN_SCALES_SMALL;
            else return bad_arg(a, v, "scales must be realistic, full or small");
            scales_set = 1, i++;
        } else if (!strcmp(a, "--rows")) {
            if (parse_int(v, 0, 1 << 30, &x) || (x > 0 && x < FP4LR_SAMPLE_FIXED_MAX))
                return bad_arg(a, v, "rows must be 0 (all) or at least 12");
            o->rows = (int)x, i++;
        } else if (!strcmp(a, "--iters")) {
            if (parse_int(v, 0, 1000, &x)) return bad_arg(a, v, "iters must be 0..1000");
            o->iters = (int)x, i++;
        } else if (!strcmp(a, "--repeat")) {
            if (parse_int(v, 0, 100000, &x)) return bad_arg(a, v, "repeat must be 0..100000");
            o->repeat = (int)x, i++;
        } else if (!strcmp(a, "--stages")) {
            if (parse_int(v, 1, 64, &x)) return bad_arg(a, v, "stages must be 1..64");
            o->plan.force_main_stages = (int)x, i++;
        } else if (!strcmp(a, "--transform-slots")) {
            if (parse_int(v, 2, 10, &x))
                return bad_arg(a, v, "transform slots must be 2 or 3 (2..5 with --w-prep on, 2..10 with --tile-n 128)");
            o->plan.force_transform_stages = (int)x, i++;
        } else if (!strcmp(a, "--lora-chunk")) {
            if (parse_int(v, 16, 1024, &x) || x % 16) return bad_arg(a, v, "low-rank chunk must be a multiple of 16");
            o->plan.force_lora_chunk = (int)x, i++;
        } else if (!strcmp(a, "--lora-slots")) {
            if (parse_int(v, 1, 4, &x)) return bad_arg(a, v, "low-rank slots must be 1..4");
            o->plan.force_lora_stages = (int)x, i++;
        } else if (!strcmp(a, "--schedule")) {
            const int sch = fp4lr_schedule_parse(v);
            if (sch < 0) return bad_arg(a, v, "schedule must be auto, dp or sk");
            o->plan.schedule = (fp4lr_schedule)sch, i++;
        } else if (!strcmp(a, "--w-prep")) {
            const int w = fp4lr_wprep_parse(v);
            if (w < 0) return bad_arg(a, v, "w-prep must be auto, on, off or inline");
            o->plan.w_prep = (fp4lr_wprep)w, i++;
        } else if (!strcmp(a, "--swap")) {
            const int sw = fp4lr_swap_parse(v);
            if (sw < 0) return bad_arg(a, v, "swap must be auto, on or off");
            o->plan.swap = (fp4lr_swap)sw, i++;
        } else if (!strcmp(a, "--pdl")) {
            const int d = fp4lr_pdl_parse(v);
            if (d < 0) return bad_arg(a, v, "pdl must be auto, on or off");
            o->plan.pdl = (fp4lr_pdl)d, i++;
        } else if (!strcmp(a, "--tile-n")) {
            if (v && !strcmp(v, "auto"))
                x = 0;
            else if (parse_int(v, 128, 256, &x) || (x != 128 && x != 160 && x != 256))
                return bad_arg(a, v, "tile-n must be auto, 256, 160 or 128");
            o->plan.tile_n = (int)x, i++;
        } else if (!strcmp(a, "--sm-count")) {
            if (parse_int(v, 1, 1024, &x)) return bad_arg(a, v, "sm-count must be 1..1024");
            o->plan.sm_count = (int)x, i++;
        } else if (!strcmp(a, "--cluster")) {
            if (parse_int(v, 1, 2, &x)) return bad_arg(a, v, "cluster must be 1 or 2");
            o->plan.cluster = (int)x, i++;
        } else if (!strcmp(a, "--in")) {
            if (strlen(v) > FP4LR_CLI_PATH_MAX) {
                char why[64];
                snprintf(why, sizeof why, "the path is %zu bytes long; at most %d", strlen(v), FP4LR_CLI_PATH_MAX);
                return bad_arg(a, NULL, why);
            }
            o->in_dir = v, i++;
        } else if (!strcmp(a, "--out")) {
            o->out_dir = v, i++;
        } else if (!strcmp(a, "--timeline")) {
            o->timeline = v, i++;
        } else if (!strcmp(a, "--alpha")) {
            char *end;
            errno = 0;
            o->alpha = strtof(v, &end);
            if (end == v || *end)
                return bad_arg(a, v, "alpha must be a number");
            /* nan and inf are inputs (OPERATOR.md §3: NaN in alpha propagates); a finite value
             * that fp32 turns into inf or 0 is a typo */
            if (errno == ERANGE && (isinf(o->alpha) || o->alpha == 0.0f))
                return bad_arg(a, v, "outside fp32's range (it would become inf or 0; write inf or 0 for those)");
            o->alpha_set = 1, i++;
        } else if (!strcmp(a, "--threads")) {
            if (parse_int(v, 1, 1024, &x)) return bad_arg(a, v, "threads must be 1..1024");
            o->threads = (int)x, i++;
        } else {
            return bad_arg(a, v, "unknown flag");
        }
    }
    if (list_shapes) {
        for (int s = 0; s < fp4lr_num_shapes; s++)
            printf("%-14s %-11s M=%-6lld N=%-6lld K=%-6lld r=%lld\n", fp4lr_shapes[s].name, fp4lr_shapes[s].family,
                   (long long)fp4lr_shapes[s].M, (long long)fp4lr_shapes[s].N, (long long)fp4lr_shapes[s].K,
                   (long long)fp4lr_shapes[s].r);
        return PARSE_DONE;
    }
    if (o->out_ref && !o->out_dir)
        return bad_arg("--out-ref", NULL, "needs --out DIR");
    if (o->in_dir) {
        /* The shapes come from the files (load_inputs); nothing else may set them. */
        if (shape_set || mnk || o->rank_set || o->affine_set || o->dense || scales_set)
            return bad_arg("--in", o->in_dir,
                           "the problem comes from the files: --shape, --mnk, --rank, --affine, --no-affine, --dense "
                           "and --scales do not apply");
        return 0;
    }
    if (o->alpha_set)
        return bad_arg("--alpha", NULL, "needs --in (generated problems draw their own alpha)");
    fp4lr_shape sh;
    if (mnk && shape_set)
        return bad_arg("--mnk", mnk, "excludes --shape (both name the problem's shape)");
    if (mnk) {
        const int rc = fp4lr_shape_parse(mnk, &sh);
        if (rc)
            return bad_arg("--mnk", mnk, rc == -2 ? "a number exceeds 2^63 - 1"
                                                  : "expected MxNxK or MxNxK:r of non-negative decimal integers");
        if (strchr(mnk, ':') && (o->rank_set || o->dense))
            return bad_arg("--mnk", mnk, o->dense ? "names a rank, which --dense excludes"
                                                  : "names a rank; --rank names it again");
    } else {
        const fp4lr_shape *f = fp4lr_shape_find(o->shape_name);
        if (!f)
            return bad_arg("--shape", o->shape_name, "unknown shape (--list-shapes lists them)");
        sh = *f;
    }
    /* the whole operator by default: the shape's rank and the affine; --dense: neither */
    if (o->dense && (o->rank_set || o->affine_set))
        return bad_arg("--dense", NULL, "excludes --rank, --affine and --no-affine");
    if (!o->rank_set)
        rank = o->dense ? 0 : sh.r;
    if (!o->affine_set)
        o->affine = !o->dense;
    o->p.M = sh.M;
    o->p.N = sh.N;
    o->p.K = sh.K;
    o->p.r = rank;
    o->p.has_wc = o->p.has_beta = o->affine;
    o->p.ldY = fp4lr_ldY_padded(sh.N, o->p.out); /* rows of Y padded to 16 bytes (bulk tensor copy rule) */
    fp4lr_problem_resolve(&o->p);
    return 0;
}

/* ---- --in DIR: the problem from .npy files -------------------------------------- */

enum { IN_A, IN_SFA, IN_W, IN_SFW, IN_L, IN_U, IN_WC, IN_BETA, IN_ALPHA, IN_FILES };
static const char *const in_names[IN_FILES] = {"A.npy", "SFA.npy", "W.npy",    "SFW.npy",  "L.npy",
                                               "U.npy", "wc.npy",  "beta.npy", "alpha.npy"};
#define IN_REQUIRED 4 /* A, SFA, W, SFW; the others may be absent */

typedef struct npy_inputs {
    fp4lr_npy a[IN_FILES];
    int present[IN_FILES];
    char path[IN_FILES][1024];
} npy_inputs;

static fp4lr_status read_inputs(const char *dir, npy_inputs *in)
{
    for (int i = 0; i < IN_FILES; i++) {
        if (snprintf(in->path[i], sizeof in->path[i], "%s/%s", dir, in_names[i]) >= (int)sizeof in->path[i])
            return fp4lr_fail(FP4LR_E_INVALID, "IN_PATH", "--in %s: path too long", dir);
        if (i >= IN_REQUIRED && access(in->path[i], F_OK) && errno == ENOENT)
            continue;
        FP4LR_TRY(fp4lr_npy_read(in->path[i], &in->a[i]));
        in->present[i] = 1;
    }
    return fp4lr_ok();
}

/* A scale file: bytes in the 128x4 atom layout, fp4lr_sf_bytes(rows, kv) of them in
 * any shape (a row-major (rows, kv) array of another size is named as such). */
static fp4lr_status check_scales(const npy_inputs *in, int f, const char *rows_name, int64_t rows, int64_t kv)
{
    const fp4lr_npy *a = &in->a[f];
    FP4LR_TRY(fp4lr_npy_expect(a, in->path[f], FP4LR_NPY_BYTES, "uint8 scale bytes", -1, NULL, NULL));
    const size_t want = fp4lr_sf_bytes(rows, kv);
    if (a->count == (int64_t)want)
        return fp4lr_ok();
    char sh[160];
    fp4lr_npy_shape_text(a->ndim, a->shape, sh, sizeof sh);
    int rowmajor = a->ndim == 2 && a->shape[0] == rows && a->shape[1] == kv;
    return fp4lr_fail(FP4LR_E_INVALID, "NPY_EXPECT_SHAPE",
                      "%s: expected %zu scale bytes, the 128x4 atom layout of %s = %lld rows x K/B = %lld block "
                      "columns (ceil(%lld/128) x ceil(%lld/4) x 512; 1-D or any shape with that many elements); "
                      "found shape %s = %lld elements%s",
                      in->path[f], want, rows_name, (long long)rows, (long long)kv, (long long)rows, (long long)kv, sh,
                      (long long)a->count,
                      rowmajor ? " (row-major scales: convert them to the atom layout, e.g. with to_blocked)" : "");
}

/* M, N, K, r and the optional operands from the shapes, every file checked
 * against them; the problem is validated. */
static fp4lr_status check_inputs(const opts *o, const npy_inputs *in, fp4lr_problem *p)
{
    const fp4lr_npy *a = in->a;
    const int64_t any2[2] = {FP4LR_NPY_ANY, FP4LR_NPY_ANY};
    char want[128];
    memset(p, 0, sizeof *p);
    p->format = o->p.format;
    p->out = FP4LR_OUT_BF16;

    FP4LR_TRY(fp4lr_npy_expect(&a[IN_A], in->path[IN_A], FP4LR_NPY_BYTES, "uint8 (two e2m1 codes per byte)", 2,
                               any2, "(M, K/2)"));
    p->M = a[IN_A].shape[0];
    if (a[IN_A].shape[1] > INT64_MAX / 2)
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_EXPECT_SHAPE", "%s: shape (M, K/2) = (%lld, %lld): K = 2 x K/2 overflows",
                          in->path[IN_A], (long long)p->M, (long long)a[IN_A].shape[1]);
    p->K = 2 * a[IN_A].shape[1];
    const int km = fp4lr_format_k_multiple(p->format);
    if (p->M < 1 || p->K < km || p->K % km)
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_EXPECT_SHAPE",
                          "%s: shape (M, K/2) = (%lld, %lld) needs M >= 1 and K = 2 x K/2 a positive multiple of %d "
                          "(%s)",
                          in->path[IN_A], (long long)p->M, (long long)(p->K / 2), km, fp4lr_format_name(p->format));

    snprintf(want, sizeof want, "(N, K/2) = (N, %lld)", (long long)(p->K / 2));
    const int64_t w_shape[2] = {FP4LR_NPY_ANY, p->K / 2};
    FP4LR_TRY(fp4lr_npy_expect(&a[IN_W], in->path[IN_W], FP4LR_NPY_BYTES, "uint8 (two e2m1 codes per byte)", 2,
                               w_shape, want));
    p->N = a[IN_W].shape[0];
    if (p->N < 1)
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_EXPECT_SHAPE", "%s: expected shape %s with N >= 1, found N = 0",
                          in->path[IN_W], want);

    const int64_t kv = p->K / fp4lr_format_block(p->format);
    FP4LR_TRY(check_scales(in, IN_SFA, "M", p->M, kv));
    FP4LR_TRY(check_scales(in, IN_SFW, "N", p->N, kv));

    /* The low-rank branch: both factors or neither. */
    if (in->present[IN_L] != in->present[IN_U])
        return fp4lr_fail(FP4LR_E_INVALID, "IN_LOWRANK_PAIR",
                          "%s is present but %s is not: the low-rank branch needs both L (M, r) and U (N, r)",
                          in->path[in->present[IN_L] ? IN_L : IN_U], in->path[in->present[IN_L] ? IN_U : IN_L]);
    if (in->present[IN_L]) {
        const char *bf16 = "bf16 bit patterns (uint16, int16, V2 or ml_dtypes.bfloat16)";
        snprintf(want, sizeof want, "(M, r) = (%lld, r)", (long long)p->M);
        const int64_t l_shape[2] = {p->M, FP4LR_NPY_ANY};
        FP4LR_TRY(fp4lr_npy_expect(&a[IN_L], in->path[IN_L], FP4LR_NPY_BF16_BITS, bf16, 2, l_shape, want));
        p->r = a[IN_L].shape[1];
        if (p->r % 16 || p->r > FP4LR_RANK_MAX)
            return fp4lr_fail(FP4LR_E_INVALID, "R_MULTIPLE",
                              "%s: r = %lld (shape[1]) must be 0 or a multiple of 16, at most %d", in->path[IN_L],
                              (long long)p->r, FP4LR_RANK_MAX);
        snprintf(want, sizeof want, "(N, r) = (%lld, %lld)", (long long)p->N, (long long)p->r);
        const int64_t u_shape[2] = {p->N, p->r};
        FP4LR_TRY(fp4lr_npy_expect(&a[IN_U], in->path[IN_U], FP4LR_NPY_BF16_BITS, bf16, 2, u_shape, want));
    }

    /* The per-column affine, each part optional. */
    snprintf(want, sizeof want, "(N,) = (%lld,)", (long long)p->N);
    for (int f = IN_WC; f <= IN_BETA; f++)
        if (in->present[f])
            FP4LR_TRY(fp4lr_npy_expect(&a[f], in->path[f], FP4LR_NPY_MASK(FP4LR_NPY_F4), "float32", 1, &p->N, want));
    p->has_wc = in->present[IN_WC];
    p->has_beta = in->present[IN_BETA];

    if (in->present[IN_ALPHA]) {
        const fp4lr_npy *al = &a[IN_ALPHA];
        FP4LR_TRY(fp4lr_npy_expect(al, in->path[IN_ALPHA], FP4LR_NPY_MASK(FP4LR_NPY_F4), "float32", -1, NULL, NULL));
        if (!(al->ndim == 0 || (al->ndim == 1 && al->shape[0] == 1))) {
            char sh[160];
            fp4lr_npy_shape_text(al->ndim, al->shape, sh, sizeof sh);
            return fp4lr_fail(FP4LR_E_INVALID, "NPY_EXPECT_SHAPE", "%s: expected shape () or (1,), found %s",
                              in->path[IN_ALPHA], sh);
        }
        if (o->alpha_set)
            return fp4lr_fail(FP4LR_E_INVALID, "IN_ALPHA_TWICE",
                              "%s and --alpha both give alpha: remove one of them", in->path[IN_ALPHA]);
    }

    p->ldY = fp4lr_ldY_padded(p->N, p->out); /* rows of Y padded to 16 bytes (bulk tensor copy rule) */
    fp4lr_problem_resolve(p);
    fp4lr_status st = fp4lr_problem_validate(p);
    if (st.code)
        return fp4lr_fail(st.code, st.rule, "--in %s: %s", o->in_dir, st.msg);
    return fp4lr_ok();
}

/* Reads, checks and copies the inputs into host buffers laid out as the
 * generator's (Y rows padded to 16 bytes). */
static fp4lr_status load_inputs(const opts *o, fp4lr_pgen_problem *host)
{
    npy_inputs *in = calloc(1, sizeof *in);
    if (!in)
        return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the input table");
    fp4lr_problem p;
    fp4lr_status st = read_inputs(o->in_dir, in);
    if (st.code == FP4LR_OK)
        st = check_inputs(o, in, &p);
    if (st.code == FP4LR_OK && fp4lr_pgen_alloc(host, &p))
        st = fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the host operands");
    if (st.code == FP4LR_OK) {
        void *dst[IN_FILES] = {host->A, host->SFA, host->W, host->SFW, host->L, host->U, host->wc, host->beta, NULL};
        for (int f = 0; f < IN_ALPHA; f++) /* sizes were checked: count * itemsize = the buffer's size */
            if (in->present[f] && in->a[f].count)
                memcpy(dst[f], in->a[f].data, (size_t)in->a[f].count * (size_t)in->a[f].itemsize);
        host->a.alpha = in->present[IN_ALPHA] ? *(const float *)in->a[IN_ALPHA].data : o->alpha_set ? o->alpha : 1.0f;
    }
    for (int f = 0; f < IN_FILES; f++)
        fp4lr_npy_free(&in->a[f]);
    free(in);
    return st;
}

/* Generates the inputs (unless --in loaded them) and runs the reference on the selected rows. */
typedef struct checked {
    fp4lr_pgen_problem host;
    int64_t *rows;
    int64_t nrows;
    double *ref, *mag;
} checked;

static fp4lr_status prepare(const opts *o, checked *c)
{
    if (!o->in_dir) {
        if (fp4lr_pgen_alloc(&c->host, &o->p))
            return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the host operands");
        fp4lr_pgen_fill(&c->host, o->seed, o->scales);
    }
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

/* ---- --out DIR ------------------------------------------------------------------ */

static fp4lr_status out_write(const opts *o, const char *name, const char *descr, int ndim, const int64_t *shape,
                              const void *data, const char *what)
{
    char path[1024];
    if (snprintf(path, sizeof path, "%s/%s", o->out_dir, name) >= (int)sizeof path)
        return fp4lr_fail(FP4LR_E_INVALID, "OUT_PATH", "--out %s: path too long", o->out_dir);
    FP4LR_TRY(fp4lr_npy_write(path, descr, ndim, shape, data));
    printf("out: wrote %s (%s)\n", path, what);
    return fp4lr_ok();
}

/* Y.npy (when a kernel ran), and ref.npy + rows.npy with --out-ref. */
static fp4lr_status write_outputs(const opts *o, const checked *c, int have_y)
{
    if (mkdir(o->out_dir, 0777) && errno != EEXIST)
        return fp4lr_fail(FP4LR_E_IO, "OUT_DIR", "--out %s: cannot create the directory: %s", o->out_dir,
                          strerror(errno));
    const fp4lr_problem *p = &c->host.p;
    if (!have_y) {
        printf("out: Y.npy not written (no kernel ran)\n");
    } else {
        /* Y without its row padding (ldY >= N): bf16 as uint16 bit patterns, fp32 as float32. */
        const size_t ob = (size_t)fp4lr_out_bytes(p->out), row = (size_t)p->N * ob;
        uint8_t *y = malloc(row * (size_t)p->M);
        if (!y)
            return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the packed output");
        for (int64_t m = 0; m < p->M; m++)
            memcpy(y + (size_t)m * row, (const uint8_t *)c->host.Y + (size_t)(m * p->ldY) * ob, row);
        const int64_t shape[2] = {p->M, p->N};
        fp4lr_status st = out_write(o, "Y.npy", p->out == FP4LR_OUT_F32 ? "<f4" : "<u2", 2, shape, y,
                                    p->out == FP4LR_OUT_BF16 ? "M x N uint16, bf16 bit patterns" : "M x N");
        free(y);
        FP4LR_TRY(st);
    }
    if (o->out_ref) {
        const int64_t shape[2] = {c->nrows, p->N};
        FP4LR_TRY(out_write(o, "ref.npy", "<f8", 2, shape, c->ref, "rows x N float64 reference"));
        FP4LR_TRY(out_write(o, "rows.npy", "<i8", 1, &c->nrows, c->rows, "int64 indices of those rows"));
    }
    return fp4lr_ok();
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

/* --repeat: n launches, each into a freshly poisoned Y, compared bit for bit with the
 * validated Y (y0).  *bad counts the launches that differ. */
static fp4lr_status repeat_launches(fp4lr_runtime *rt, const fp4lr_plan *plan, fp4lr_devproblem *dp,
                                    const void *y0, int n, int *bad)
{
    *bad = 0;
    void *y = malloc(dp->sizes.Y);
    if (!y)
        return fp4lr_fail(FP4LR_E_NOMEM, NULL, "repeat: %zu bytes for a copy of Y", (size_t)dp->sizes.Y);
    fp4lr_status st = fp4lr_ok();
    for (int i = 0; i < n && st.code == FP4LR_OK; i++) {
        st = fp4lr_devproblem_poison(dp);
        if (st.code == FP4LR_OK)
            st = fp4lr_gemm(rt, plan, &dp->args, NULL);
        if (st.code == FP4LR_OK)
            st = fp4lr_ctx_sync(rt->ctx);
        if (st.code == FP4LR_OK)
            st = fp4lr_devproblem_download(dp, y);
        if (st.code != FP4LR_OK)
            break;
        int64_t fm, fn, diff = fp4lr_compare_bitwise(&plan->problem, y, y0, &fm, &fn);
        if (diff != 0 && (*bad)++ < 5)
            printf("repeat: launch %d differs from the validated Y in %lld outputs, first at (%lld, %lld)\n", i + 1,
                   (long long)diff, (long long)fm, (long long)fn);
    }
    free(y);
    return st;
}

/* What the fused kernel is given for the low-rank term: its chunk (a power of two up to 64,
 * one TMA box) and the ring slots, which the budget's line above states in its own chunk. */
static void print_lowrank_launch(const fp4lr_plan *plan)
{
    const int64_t r = plan->problem.r;
    if (r == 0 || plan->family != FP4LR_FAMILY_FUSED)
        return;
    const int rc = fp4lr_lowrank_chunk(plan);
    const int slots = plan->arch == FP4LR_ARCH_SM90A ? fp4lr_sm90a_lora_slots(plan) : fp4lr_sm100a_lora_slots(plan);
    printf("low-rank launch: %lld chunk(s) of %d ranks a tile through %d ring slot(s) of the kernel's chunk\n",
           (long long)((r + rc - 1) / rc), rc, slots);
}

/* The plan's kernel may be one the solver allows but nobody built (a forced stage count, say):
 * say so before anything is generated or launched. */
static void note_unbuilt(const fp4lr_plan *plan)
{
    char path[1024];
    struct stat sb;
    if (fp4lr_module_path(path, sizeof path, fp4lr_kernel_dir(NULL), fp4lr_arch_name(plan->arch), plan->entry,
                          "cubin").code == FP4LR_OK &&
        stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
        return;
    printf("note: kernel %s is not built (no %s): this plan can be printed, not launched "
           "(ptx/ABI.md lists the built kernels)\n", plan->entry, path);
}

/* A plan the options cannot have is a bad argument (2): a rule broken, a budget that does
 * not fit, a combination no kernel is built for; the device's own refusal (an architecture
 * without kernels) and every other error is 3. */
static int plan_refusal_exit(fp4lr_status st)
{
    if (st.code == FP4LR_E_INVALID || st.code == FP4LR_E_INFEASIBLE)
        return 2;
    return st.code == FP4LR_E_UNSUPPORTED && strcmp(st.rule, "arch_unsupported") ? 2 : 3;
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
        return rc == PARSE_DONE ? 0 : rc;
    char why[1200];
    if (o.out_dir && fp4lr_cli_writable(o.out_dir, FP4LR_CLI_DIR, why, sizeof why))
        return bad_arg("--out", o.out_dir, why);
    if (o.timeline && fp4lr_cli_writable(o.timeline, FP4LR_CLI_FILE, why, sizeof why))
        return bad_arg("--timeline", o.timeline, why);
    checked c;
    memset(&c, 0, sizeof c);
    fp4lr_status st;
    if (o.in_dir) {
        /* --in: the shapes (hence the problem) come from the files, read before planning. */
        st = load_inputs(&o, &c.host);
        if (st.code)
            return fail(st, 2);
        o.p = c.host.p;
        o.affine = o.p.has_wc || o.p.has_beta;
    }
    st = fp4lr_problem_validate(&o.p);
    if (st.code) {
        release(&c);
        return fail(st, 2);
    }

    fp4lr_ctx *ctx = NULL;
    fp4lr_status gpu = fp4lr_ctx_create(0, &ctx);
    fp4lr_runtime rt;
    fp4lr_plan plan;
    /* only a machine without a GPU to use runs the CPU-only part; a device that is there but
     * fails (a context that cannot be made) is an error, not a dry run that exits 0 */
    if (gpu.code != FP4LR_OK && gpu.code != FP4LR_E_NO_DRIVER && gpu.code != FP4LR_E_NO_DEVICE &&
        gpu.code != FP4LR_E_DRIVER_TOO_OLD) {
        release(&c);
        return fail(gpu, 3);
    }
    if (gpu.code == FP4LR_OK) {
        fp4lr_runtime_init(&rt, ctx, NULL);
        printf("device: %s (cc %d.%d, %d SMs, %d B shared memory per block, driver %d)\n", ctx->name,
               ctx->cc_major, ctx->cc_minor, ctx->sm_count, ctx->max_smem_optin, ctx->driver_version);
        st = fp4lr_runtime_plan(&rt, &o.p, &o.plan, &plan);
    } else {
        printf("no GPU: %s\n", gpu.msg);
        printf("without a GPU fp4lr-check plans for sm_90a, %s the inputs and runs the CPU reference only.\n",
               o.in_dir ? "reads" : "generates");
        st = fp4lr_plan_make(&o.p, FP4LR_ARCH_SM90A, &o.plan, &plan);
    }
    printf("problem: M=%lld N=%lld K=%lld r=%lld %s%s, seed %llu\n", (long long)o.p.M, (long long)o.p.N,
           (long long)o.p.K, (long long)o.p.r, fp4lr_format_name(o.p.format), o.affine ? " affine" : "",
           (unsigned long long)o.seed);
    if (o.in_dir)
        printf("inputs: read from %s (alpha = %.9g%s%s%s)\n", o.in_dir, (double)c.host.a.alpha, o.p.r ? ", L, U" : "",
               o.p.has_wc ? ", wc" : "", o.p.has_beta ? ", beta" : "");
    if (st.code) {
        release(&c);
        return fail(st, plan_refusal_exit(st));
    }
    fp4lr_plan_print(stdout, &plan);
    print_lowrank_launch(&plan);
    note_unbuilt(&plan);
    if (o.plan_only) {
        release(&c);
        return 0;
    }

    if (gpu.code == FP4LR_OK && plan.arch == FP4LR_ARCH_SM90A) {
        fp4lr_sm90a_sk walk;
        st = fp4lr_runtime_walk(&rt, &plan, &walk);
        if (st.code) {
            release(&c);
            return fail(st, 3);
        }
        if (walk.split)
            printf("walk: stream-K on %d clusters: %u whole tiles, then %u split K stages each (+1 for %u); "
                   "whole tiles would keep %.1f%% of the tile slots busy\n", walk.clusters, walk.dp_tiles, walk.q,
                   walk.r, 100.0 * walk.dp_efficiency);
        else
            printf("walk: whole tiles on %d clusters (%.1f%% of the tile slots busy)\n", walk.clusters,
                   100.0 * walk.dp_efficiency);
    }

    if (gpu.code != FP4LR_OK) {
        /* CPU path: a few rows are enough to show the quantized inputs and the reference work. */
        if (o.rows == 0 || o.rows > 16)
            o.rows = 16;
        st = prepare(&o, &c);
        if (st.code == FP4LR_OK) {
            double amax = 0;
            long long nonfinite = 0;
            for (int64_t i = 0; i < c.nrows * o.p.N; i++) {
                if (!isfinite(c.ref[i]))
                    nonfinite++;
                else if (c.ref[i] > amax || -c.ref[i] > amax)
                    amax = c.ref[i] < 0 ? -c.ref[i] : c.ref[i];
            }
            printf("reference: %lld rows x %lld columns in double, max finite |ref| = %.6g, %lld non-finite "
                   "(NaN or Inf), tol_acc = %.3g\n",
                   (long long)c.nrows, (long long)o.p.N, amax, nonfinite, fp4lr_tol_acc(&c.host.p));
            printf("no kernel was run (no GPU).\n");
            if (o.out_dir)
                st = write_outputs(&o, &c, 0);
        }
        release(&c);
        return st.code ? fail(st, 3) : 0;
    }

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
        if (o.out_dir)
            st = write_outputs(&o, &c, 1);
    }
    if (st.code == FP4LR_OK && o.repeat > 0) {
        int bad = 0;
        st = repeat_launches(&rt, &plan, &dp, c.host.Y, o.repeat, &bad);
        if (st.code == FP4LR_OK) {
            printf("repeat: %d of %d launches bitwise equal to the validated one\n", o.repeat - bad, o.repeat);
            if (bad)
                exit_code = 1;
        }
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
    if (st.code == FP4LR_OK && o.timeline) {
        st = fp4lr_cli_timeline(&rt, &plan, &dp.args, o.timeline);
        if (st.code == FP4LR_OK)
            printf("timeline: %s\n", o.timeline);
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
