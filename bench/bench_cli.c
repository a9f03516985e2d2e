/* fp4lr-bench's command line, its variants and its jobs (bench_cli.h). */
#include "bench_cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cublaslt.h"
#include "module.h"

void fp4lr_bench_usage(FILE *f)
{
    fprintf(f,
            "usage: fp4lr-bench [options]\n"
            "Times fp4lr's kernels - dense 1-CTA and 2-CTA, the whole operator (fused; on sm_90a also on\n"
            "the pair, fused-c2), on sm_100a the naive-policy pair - against cuBLASLt bf16 and fp8 on the\n"
            "shape table.  Each fp4lr variant\n"
            "is validated on %d sampled rows before it is timed.\n\n"
            "  --shape NAME      a row of the shape table (repeatable)\n"
            "  --list-shapes     list the table (large shapes marked) and stop\n"
            "  --mnk MxNxK[:r]   a custom shape (repeatable; r for the fused variant, default 0);\n"
            "                    default: every large shape of the table\n"
            "  --format F        nvfp4, mxfp4 or both (default both)\n"
            "  --variants LIST   comma-separated: dense, dense-c2, naive (dense-c2-naive: sm_100a only),\n"
            "                    fused, fused-c2 (sm_90a only), peers, all (default all)\n"
            "  --no-peers        skip cuBLASLt (no ratios vs cuBLAS)\n"
            "  --iters N         timed launches per variant and round (default %d; at least %d unless --quick)\n"
            "  --warmup N        untimed launches before each round's (default %d)\n"
            "  --preheat MS      0..%d: before a shape's first round its first row runs untimed for MS\n"
            "                    milliseconds, so that no row is timed on a card that idled through the\n"
            "                    shape's set-up and is not yet at its power cap (default %d; --quick 0)\n"
            "  --rounds N        1..%d: a shape's variants and peers take turns N times, forward then\n"
            "                    backward, and each is the median of its pooled launches; the table\n"
            "                    shows the spread of the per-round ratios (default %d; --quick 1)\n"
            "  --quick           allow fewer iterations (default %d, warm-up %d): a smoke run, not a measurement\n"
            "  --stages N        force the main stage count of every fp4lr variant\n"
            "  --transform-slots N  sm_90a: force the W transform ring to 2 or 3 slots\n"
            "  --lora-chunk N    force N ranks a low-rank chunk (fused rows with r >= N; a multiple of 16)\n"
            "  --lora-slots N    force N low-rank ring slots, 1..4 (fused rows with r > 0)\n"
            "  --scales S        the inputs' block scales: realistic (default) or small (MXFP4 scales\n"
            "                    <= 2^0, as a trained model's)\n"
            "  --schedule S      sm_90a tile walk: auto (default), dp (whole tiles), sk (stream-K)\n"
            "  --w-prep W        sm_90a rows (dense, fused; the pair's too but for inline): auto (default:\n"
            "                    one CTA inline when M >= %d, off below; the pair\n"
            "                    on), on (W converted once per launch, timed with the kernel), off (W\n"
            "                    converted by the transform warps in the K loop) or inline (the\n"
            "                    kernel's idle warps convert W while it runs)\n"
            "  --swap S          sm_90a one-CTA rows (dense, fused): auto (default: on when M < %d <= N), on (the\n"
            "                    kernel computes Y^T = W.A^T, converting A once inside it: _yt; with\n"
            "                    --w-prep on, A prepared by its own launch, timed with the kernel) or off\n"
            "  --pdl P           swapped prepared rows (--swap on --w-prep on): auto (default: on), on or\n"
            "                    off: the kernel launched as the programmatic dependent of the preparation\n"
            "  --graph           sm_90a rows: the plans a CUDA graph may capture (plan_opts.graph: whole\n"
            "                    tiles, W never converted in the kernel), timed as eager launches\n"
            "  --stream S        legacy (default: the legacy default stream) or own (a non-blocking stream of\n"
            "                    the run's own): where every timed launch goes, fp4lr and peers alike\n"
            "  --tile-n W        sm_90a swapped rows: the kernel's tile width, auto (default: 160 where the\n"
            "                    256-wide grid is under one wave of the GPU's SMs and the 160-wide one fits\n"
            "                    in one), 256 or 160 (rows that do not swap refuse 160); 128: the dense\n"
            "                    NVFP4 ping-pong kernels (W prepared, not swapped; other rows refuse it)\n"
            "  --sweep-stages    also run every main stage count from 1 to the solver's (dense, dense-c2,\n"
            "                    fused; on sm_90a at 2 transform slots when the solver's plan has 3, and\n"
            "                    the rows with the W transform unless --w-prep on);\n"
            "                    counts without a built kernel are reported as not built\n"
            "  --arch A          sm90a or sm100a: the plans listed without a GPU (default sm90a)\n"
            "  --seed S          input seed (default 1)\n"
            "  --csv FILE        also write one CSV line per (shape, variant) (FILE is replaced)\n"
            "  --samples FILE    also write one CSV line per timed launch: round, launch, input copy, time\n"
            "                    and about when it ran (host clock; FILE is replaced)\n"
            "  --json            append the run's record to the results directory (the default)\n"
            "  --no-json         do not\n"
            "  --results-dir D   where the record goes (default %s; made with its parents; the record is\n"
            "                    appended to D/<device>-<date>.jsonl; D, --csv and --samples are checked\n"
            "                    before the run)\n"
            "  --plant-fault timed  the check's self-test: one output of the timed launches is made NaN\n"
            "                    before the check after the last round (the run must then fail, exit 1;\n"
            "                    nothing is recorded)\n"
            "  --help            this text\n"
            "Exit status: 0 ok, 1 a validation failed, 2 bad arguments (also: an option some row's plan\n"
            "refuses, e.g. --pdl on for a plan that is not swapped; the other rows still run), 3 other\n"
            "errors.\n",
            FP4LR_BENCH_VALIDATE_ROWS, FP4LR_BENCH_ITERS_DEFAULT, FP4LR_BENCH_ITERS_MIN, FP4LR_BENCH_WARMUP_DEFAULT,
            FP4LR_BENCH_PREHEAT_MS_MAX, FP4LR_BENCH_PREHEAT_MS_DEFAULT, FP4LR_BENCH_MAX_ROUNDS, FP4LR_BENCH_ROUNDS_DEFAULT,
            FP4LR_BENCH_QUICK_ITERS, FP4LR_BENCH_QUICK_WARMUP, FP4LR_SM90A_WPREP_MIN_M, FP4LR_SM90A_WPREP_MIN_M,
            FP4LR_RESULTS_DIR_DEFAULT);
}

int fp4lr_bench_format_fits(const fp4lr_shape *s, fp4lr_format f)
{
    return s->K % fp4lr_format_k_multiple(f) == 0;
}

static int parse_ll(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int bad(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return 2;
}

/* The selected shapes from the requested ones: a request with an earlier one's
 * M, N, K (and r, when the fused variant runs) is a dup; a kept shape with an
 * earlier one's M, N, K points at it in same_mnk. */
static void select_shapes(fp4lr_bench_opts *o, const fp4lr_shape *req, int nreq)
{
    int by_rank = (o->variants & (FP4LR_BENCH_BIT(FP4LR_BENCH_FUSED) | FP4LR_BENCH_BIT(FP4LR_BENCH_FUSED_C2))) != 0;
    o->nshapes = o->ndups = 0;
    for (int q = 0; q < nreq; q++) {
        const fp4lr_shape *s = &req[q];
        int dup = -1, mnk = -1;
        for (int i = 0; i < o->nshapes && dup < 0; i++) {
            const fp4lr_shape *k = &o->shapes[i];
            if (k->M == s->M && k->N == s->N && k->K == s->K) {
                if (mnk < 0)
                    mnk = i;
                if (!by_rank || k->r == s->r)
                    dup = i;
            }
        }
        if (dup >= 0) {
            o->dups[o->ndups++] = (fp4lr_bench_dup){s->name, o->shapes[dup].name};
            continue;
        }
        o->same_mnk[o->nshapes] = mnk;
        o->shapes[o->nshapes++] = *s;
    }
}

int fp4lr_bench_opts_parse(int argc, char **argv, fp4lr_bench_opts *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->formats = 1 << FP4LR_NVFP4 | 1 << FP4LR_MXFP4;
    o->variants = FP4LR_BENCH_VARIANTS_DEFAULT;
    o->json = 1;
    o->results_dir = FP4LR_RESULTS_DIR_DEFAULT;
    o->arch = FP4LR_ARCH_SM90A;
    o->seed = 1;
    err[0] = '\0';
    fp4lr_shape req[FP4LR_BENCH_MAX_SHAPES];
    int custom[FP4LR_BENCH_MAX_SHAPES] = {0}; /* req[i] came from --mnk */
    int nreq = 0, iters = -1, warmup = -1, rounds = -1, preheat = -1, no_peers = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long x;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            o->help = 1;
            return 0;
        } else if (!strcmp(a, "--list-shapes")) {
            o->list_shapes = 1; /* the other arguments are still checked, as fp4lr-check does */
        } else if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "--no-peers")) {
            no_peers = 1;
        } else if (!strcmp(a, "--sweep-stages")) {
            o->sweep_stages = 1;
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (!strcmp(a, "--graph")) {
            o->graph = 1;
        } else if (!strcmp(a, "--no-json")) {
            o->json = 0;
        } else if (!v) {
            return bad(err, errlen, "%s: unknown flag or missing value", a);
        } else if (!*v || !strncmp(v, "--", 2)) {
            return bad(err, errlen, "%s '%s': an unknown flag, or a missing value (the next argument is empty or an "
                       "option)", a, v);
        } else if (!strcmp(a, "--shape") || !strcmp(a, "--mnk")) {
            fp4lr_shape s;
            if (nreq == FP4LR_BENCH_MAX_SHAPES)
                return bad(err, errlen, "at most %d shapes", FP4LR_BENCH_MAX_SHAPES);
            if (!strcmp(a, "--shape")) {
                const fp4lr_shape *t = fp4lr_shape_find(v);
                if (!t)
                    return bad(err, errlen, "--shape %s: unknown shape (--list-shapes lists them)", v);
                s = *t;
            } else {
                const int rc = fp4lr_shape_parse(v, &s);
                if (rc == -2)
                    return bad(err, errlen, "--mnk %s: a number exceeds 2^63 - 1", v);
                if (rc || s.M < 1 || s.N < 1 || s.K < 1)
                    return bad(err, errlen, "--mnk %s: expected MxNxK or MxNxK:r with positive decimal integers "
                               "(r >= 0)", v);
                s.name = v;
                custom[nreq] = 1;
            }
            req[nreq++] = s, i++;
        } else if (!strcmp(a, "--format")) {
            if (!strcmp(v, "nvfp4")) o->formats = 1 << FP4LR_NVFP4;
            else if (!strcmp(v, "mxfp4")) o->formats = 1 << FP4LR_MXFP4;
            else if (!strcmp(v, "both")) o->formats = 1 << FP4LR_NVFP4 | 1 << FP4LR_MXFP4;
            else return bad(err, errlen, "--format %s: expected nvfp4, mxfp4 or both", v);
            i++;
        } else if (!strcmp(a, "--variants")) {
            if (fp4lr_bench_variants_parse(v, &o->variants, err, errlen))
                return 2;
            i++;
        } else if (!strcmp(a, "--arch")) {
            if (fp4lr_arch_parse(v, &o->arch))
                return bad(err, errlen, "--arch %s: expected sm90a or sm100a", v);
            i++;
        } else if (!strcmp(a, "--iters")) {
            if (parse_ll(v, 1, FP4LR_BENCH_ITERS_MAX, &x))
                return bad(err, errlen, "--iters %s: expected 1..%d", v, FP4LR_BENCH_ITERS_MAX);
            iters = (int)x, i++;
        } else if (!strcmp(a, "--warmup")) {
            if (parse_ll(v, 0, FP4LR_BENCH_ITERS_MAX, &x))
                return bad(err, errlen, "--warmup %s: expected 0..%d", v, FP4LR_BENCH_ITERS_MAX);
            warmup = (int)x, i++;
        } else if (!strcmp(a, "--preheat")) {
            if (parse_ll(v, 0, FP4LR_BENCH_PREHEAT_MS_MAX, &x))
                return bad(err, errlen, "--preheat %s: expected 0..%d milliseconds", v ? v : "(missing)",
                           FP4LR_BENCH_PREHEAT_MS_MAX);
            preheat = (int)x, i++;
        } else if (!strcmp(a, "--plant-fault")) {
            if (!v || strcmp(v, "timed"))
                return bad(err, errlen, "--plant-fault %s: expected timed", v ? v : "(missing)");
            o->plant_timed_fault = 1, i++;
        } else if (!strcmp(a, "--rounds")) {
            if (parse_ll(v, 1, FP4LR_BENCH_MAX_ROUNDS, &x))
                return bad(err, errlen, "--rounds %s: expected 1..%d", v, FP4LR_BENCH_MAX_ROUNDS);
            rounds = (int)x, i++;
        } else if (!strcmp(a, "--w-prep")) {
            const int w = fp4lr_wprep_parse(v);
            if (w < 0)
                return bad(err, errlen, "--w-prep %s: expected auto, on, off or inline", v);
            o->w_prep = (fp4lr_wprep)w, i++;
        } else if (!strcmp(a, "--swap")) {
            const int sw = fp4lr_swap_parse(v);
            if (sw < 0)
                return bad(err, errlen, "--swap %s: expected auto, on or off", v);
            o->swap = (fp4lr_swap)sw, i++;
        } else if (!strcmp(a, "--stream")) {
            if (v && !strcmp(v, "legacy"))
                o->own_stream = 0;
            else if (v && !strcmp(v, "own"))
                o->own_stream = 1;
            else
                return bad(err, errlen, "--stream %s: expected legacy or own", v ? v : "(missing)");
            i++;
        } else if (!strcmp(a, "--pdl")) {
            const int d = fp4lr_pdl_parse(v);
            if (d < 0)
                return bad(err, errlen, "--pdl %s: expected auto, on or off", v ? v : "(missing)");
            o->pdl = (fp4lr_pdl)d, i++;
        } else if (!strcmp(a, "--tile-n")) {
            if (v && !strcmp(v, "auto"))
                o->tile_n = 0;
            else if (v && (!strcmp(v, "256") || !strcmp(v, "160") || !strcmp(v, "128")))
                o->tile_n = atoi(v);
            else
                return bad(err, errlen, "--tile-n %s: expected auto, 256, 160 or 128", v ? v : "(missing)");
            i++;
        } else if (!strcmp(a, "--schedule")) {
            const int sch = fp4lr_schedule_parse(v);
            if (sch < 0)
                return bad(err, errlen, "--schedule %s: expected auto, dp or sk", v);
            o->schedule = (fp4lr_schedule)sch, i++;
        } else if (!strcmp(a, "--stages")) {
            if (parse_ll(v, 1, FP4LR_BENCH_MAX_STAGES, &x))
                return bad(err, errlen, "--stages %s: expected 1..%d", v, FP4LR_BENCH_MAX_STAGES);
            o->force_stages = (int)x, i++;
        } else if (!strcmp(a, "--transform-slots")) {
            if (parse_ll(v, 2, 10, &x))
                return bad(err, errlen, "--transform-slots %s: expected 2 or 3 (2..5 with a prepared W, "
                           "2..10 with --tile-n 128)", v);
            o->force_transform_slots = (int)x, i++;
        } else if (!strcmp(a, "--lora-chunk")) {
            if (parse_ll(v, 16, 1024, &x) || x % 16)
                return bad(err, errlen, "--lora-chunk %s: expected a multiple of 16", v);
            o->force_lora_chunk = (int)x, i++;
        } else if (!strcmp(a, "--scales")) {
            if (v && (!strcmp(v, "realistic") || !strcmp(v, "small")))
                o->small_scales = !strcmp(v, "small"), i++;
            else
                return bad(err, errlen, "--scales %s: expected realistic or small", v ? v : "(nothing)");
        } else if (!strcmp(a, "--lora-slots")) {
            if (parse_ll(v, 1, 4, &x))
                return bad(err, errlen, "--lora-slots %s: expected 1..4", v);
            o->force_lora_slots = (int)x, i++;
        } else if (!strcmp(a, "--seed")) {
            if (parse_ll(v, 0, 1LL << 62, &x))
                return bad(err, errlen, "--seed %s: expected an integer >= 0", v);
            o->seed = (uint64_t)x, i++;
        } else if (!strcmp(a, "--csv")) {
            o->csv = v, i++;
        } else if (!strcmp(a, "--samples")) {
            o->samples = v, i++;
        } else if (!strcmp(a, "--results-dir")) {
            if (!v[0])
                return bad(err, errlen, "--results-dir: empty directory name");
            o->results_dir = v, i++;
        } else {
            return bad(err, errlen, "%s: unknown flag", a);
        }
    }
    if (o->csv && o->samples && !strcmp(o->csv, o->samples))
        return bad(err, errlen, "--csv and --samples name the same file %s: one would overwrite the other", o->csv);
    if (no_peers)
        o->variants &= ~FP4LR_BENCH_BIT(FP4LR_BENCH_PEERS);
    if (!o->variants)
        return bad(err, errlen, "no variant left to run (--no-peers with --variants peers)");
    if (o->force_stages && o->sweep_stages)
        return bad(err, errlen, "--stages and --sweep-stages exclude each other");
    o->iters = iters >= 0 ? iters : o->quick ? FP4LR_BENCH_QUICK_ITERS : FP4LR_BENCH_ITERS_DEFAULT;
    o->warmup = warmup >= 0 ? warmup : o->quick ? FP4LR_BENCH_QUICK_WARMUP : FP4LR_BENCH_WARMUP_DEFAULT;
    o->rounds = rounds >= 0 ? rounds : o->quick ? 1 : FP4LR_BENCH_ROUNDS_DEFAULT;
    o->preheat_ms = preheat >= 0 ? preheat : o->quick ? 0 : FP4LR_BENCH_PREHEAT_MS_DEFAULT;
    if (o->plant_timed_fault)
        o->json = 0; /* a self-test is not a result */
    if (o->iters < FP4LR_BENCH_ITERS_MIN && !o->quick)
        return bad(err, errlen, "--iters %d: at least %d for a measurement (--quick allows fewer)", o->iters,
                   FP4LR_BENCH_ITERS_MIN);
    /* a shape the user wrote must be a problem in at least one of the run's formats (a table
     * shape that one format cannot run, as SANA's K = 2240 in MXFP4, is a skipped row) */
    for (int q = 0; q < nreq; q++) {
        fp4lr_status first = fp4lr_ok();
        int fits = 0;
        for (int f = FP4LR_NVFP4; f <= FP4LR_MXFP4; f++) {
            if (!(o->formats & 1 << f))
                continue;
            fp4lr_problem p = {.M = req[q].M, .N = req[q].N, .K = req[q].K, .r = req[q].r,
                               .format = (fp4lr_format)f, .out = FP4LR_OUT_BF16,
                               .ldY = fp4lr_ldY_padded(req[q].N, FP4LR_OUT_BF16)}; /* as the jobs' */
            fp4lr_problem_resolve(&p);
            fp4lr_status st = fp4lr_problem_validate(&p);
            fits += st.code == FP4LR_OK;
            if (st.code != FP4LR_OK && first.code == FP4LR_OK)
                first = st;
        }
        if (custom[q] && !fits)
            return bad(err, errlen, "--mnk %s: %s [%s]", req[q].name, first.msg, first.rule);
    }
    if (!nreq)
        for (int s = 0; s < fp4lr_num_shapes; s++)
            if (fp4lr_shapes[s].large) {
                if (nreq == FP4LR_BENCH_MAX_SHAPES)
                    return bad(err, errlen, "at most %d shapes", FP4LR_BENCH_MAX_SHAPES);
                req[nreq++] = fp4lr_shapes[s];
            }
    select_shapes(o, req, nreq);
    return 0;
}

/* ---- variants ---------------------------------------------------------------------------- */

int fp4lr_bench_variants_parse(const char *list, int *mask, char *err, size_t errlen)
{
    int m = 0;
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        char item[32];
        if (len == 0 || len >= sizeof item)
            return bad(err, errlen, "--variants %s: empty or overlong item (expected dense, dense-c2, naive, fused, "
                       "fused-c2, peers or all)", list);
        memcpy(item, p, len);
        item[len] = '\0';
        int found = -1;
        for (int v = 0; v < FP4LR_BENCH_VARIANTS; v++)
            if (!strcmp(item, fp4lr_bench_variant_name((fp4lr_bench_variant)v)))
                found = v;
        if (!strcmp(item, "naive"))
            found = FP4LR_BENCH_NAIVE;
        if (!strcmp(item, "all"))
            m |= FP4LR_BENCH_VARIANTS_DEFAULT;
        else if (found < 0)
            return bad(err, errlen, "--variants: unknown variant '%s' (expected dense, dense-c2, naive, fused, "
                       "fused-c2, peers or all)", item);
        else
            m |= FP4LR_BENCH_BIT(found);
        if (!p[len])
            break;
        p += len + 1;
    }
    *mask = m;
    return 0;
}

void fp4lr_bench_variants_format(int mask, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int v = 0; v < FP4LR_BENCH_VARIANTS; v++)
        if (mask & FP4LR_BENCH_BIT(v) && used < cap) {
            int w = snprintf(out + used, cap - used, "%s%s", used ? "," : "",
                             fp4lr_bench_variant_name((fp4lr_bench_variant)v));
            used += w > 0 ? (size_t)w : 0;
        }
}

int fp4lr_bench_variant_runs_on(fp4lr_bench_variant v, fp4lr_arch arch)
{
    if (v == FP4LR_BENCH_NAIVE)
        return arch == FP4LR_ARCH_SM100A;
    if (v == FP4LR_BENCH_FUSED_C2) /* sm_100a's fused kernel is the pair already */
        return arch == FP4LR_ARCH_SM90A;
    return 1;
}

fp4lr_problem fp4lr_bench_variant_problem(fp4lr_bench_variant v, const fp4lr_shape *s, fp4lr_format f)
{
    fp4lr_problem p = {.M = s->M, .N = s->N, .K = s->K, .format = f, .out = FP4LR_OUT_BF16};
    if (fp4lr_bench_variant_fused(v)) {
        p.r = s->r;
        p.has_wc = p.has_beta = 1;
    }
    p.ldY = fp4lr_ldY_padded(s->N, p.out); /* rows of Y on 16 bytes: the bulk tensor store's rule */
    fp4lr_problem_resolve(&p);
    return p;
}

fp4lr_plan_opts fp4lr_bench_variant_opts(fp4lr_bench_variant v, int64_t smem_capacity, int force_stages)
{
    fp4lr_plan_opts po = {.smem_capacity = smem_capacity, .force_main_stages = force_stages};
    if (v == FP4LR_BENCH_DENSE)
        po.cluster = 1;
    if (v == FP4LR_BENCH_DENSE_C2 || v == FP4LR_BENCH_NAIVE || v == FP4LR_BENCH_FUSED_C2)
        po.cluster = 2, po.tile_m = 256;
    if (v == FP4LR_BENCH_NAIVE)
        po.policy = FP4LR_POLICY_NAIVE;
    return po;
}

void fp4lr_bench_variant_label(fp4lr_bench_variant v, fp4lr_format f, char *out, size_t cap)
{
    static const char *const suffix[FP4LR_BENCH_VARIANTS] = {"", "-c2", "-c2-naive", "-fused", "-fused-c2", ""};
    snprintf(out, cap, "fp4lr-%s%s", fp4lr_format_name(f), v < FP4LR_BENCH_VARIANTS ? suffix[v] : "");
}

int fp4lr_bench_stage_points(const fp4lr_bench_opts *o, fp4lr_bench_variant v, int solver_stages, int *points,
                             int cap)
{
    int n = 0;
    if (o->sweep_stages && v != FP4LR_BENCH_NAIVE) {
        for (int s = 1; s < solver_stages && n < cap; s++)
            points[n++] = s;
        if (n < cap)
            points[n++] = 0;
    } else if (cap > 0) {
        points[n++] = o->force_stages;
    }
    return n;
}

/* ---- jobs -------------------------------------------------------------------------------- */

int fp4lr_bench_plan_built(const fp4lr_plan *plan, const char *kernel_dir, char *path, size_t cap)
{
    char buf[1024];
    struct stat sb;
    int built = fp4lr_module_path(buf, sizeof buf, kernel_dir, fp4lr_arch_name(plan->arch), plan->entry, "cubin")
                        .code == FP4LR_OK &&
                stat(buf, &sb) == 0 && S_ISREG(sb.st_mode);
    if (path)
        snprintf(path, cap, "%s", buf);
    return built;
}

/* A new job and its row at the end of the list; NULL when memory is short. */
static fp4lr_bench_job *job_new(fp4lr_bench_jobs *j, const fp4lr_shape *s, const char *format, const char *label,
                                fp4lr_bench_variant v, fp4lr_bench_row **row)
{
    if (j->n == j->cap) {
        int cap = j->cap ? 2 * j->cap : 64;
        fp4lr_bench_job *job = realloc(j->job, sizeof *job * (size_t)cap);
        if (job)
            j->job = job;
        fp4lr_bench_row *rows = job ? realloc(j->row, sizeof *rows * (size_t)cap) : NULL;
        if (!rows)
            return NULL;
        j->row = rows, j->cap = cap;
    }
    fp4lr_bench_job *job = &j->job[j->n];
    *row = &j->row[j->n++];
    memset(job, 0, sizeof *job);
    job->shape = s;
    job->variant = v;
    fp4lr_bench_row_init(*row, s->name, s->large, s->M, s->N, s->K, format, label);
    (*row)->kind = v;
    return job;
}

/* A row that says why a job has no plan: a count that does not fit is skipped,
 * any other planning failure is an error. */
static void plan_failed(fp4lr_bench_job *job, fp4lr_bench_row *row, fp4lr_status st)
{
    int fit = st.code == FP4LR_E_INFEASIBLE;
    row->state = fit ? FP4LR_ROW_SKIPPED : FP4LR_ROW_FAILED;
    job->plan_error = !fit;
    job->plan_refused = !fit && (st.code == FP4LR_E_INVALID ||
                                 (st.code == FP4LR_E_UNSUPPORTED && strcmp(st.rule, "arch_unsupported") != 0));
    snprintf(row->note, sizeof row->note, "%s%.200s [%s]", fit ? "does not fit: " : "plan: ", st.msg, st.rule);
}

/* The jobs of one fp4lr variant on one shape and format: one per stage point. */
static fp4lr_status variant_jobs(fp4lr_bench_jobs *j, const fp4lr_bench_opts *o, const fp4lr_bench_target *t,
                                 const fp4lr_shape *s, fp4lr_format f, fp4lr_bench_variant v)
{
    char label[24];
    fp4lr_bench_variant_label(v, f, label, sizeof label);
    fp4lr_bench_row *row;
    fp4lr_bench_job *job;
    fp4lr_problem p = fp4lr_bench_variant_problem(v, s, f);
    if (!fp4lr_bench_format_fits(s, f)) {
        if (!(job = job_new(j, s, fp4lr_format_name(f), label, v, &row)))
            return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the job list");
        job->format = f;
        row->r = p.r;
        row->state = FP4LR_ROW_SKIPPED;
        snprintf(row->note, sizeof row->note, "K=%lld is not a multiple of %d", (long long)s->K,
                 fp4lr_format_k_multiple(f));
        return fp4lr_ok();
    }
    fp4lr_plan solver;
    fp4lr_plan_opts po = fp4lr_bench_variant_opts(v, t->smem_capacity, 0);
    po.schedule = o->schedule;
    po.sm_count = t->sm_count;
    /* the stage sweep runs the transform kernels (their main ring holds W) unless asked; the
     * sm_90a pair rows take --w-prep too, but inline (no pair converts W in the kernel) */
    const int pair90 = t->arch == FP4LR_ARCH_SM90A && (v == FP4LR_BENCH_DENSE_C2 || v == FP4LR_BENCH_FUSED_C2);
    if (v == FP4LR_BENCH_DENSE || v == FP4LR_BENCH_FUSED || (pair90 && o->w_prep != FP4LR_WPREP_INLINE))
        po.w_prep = o->sweep_stages && o->w_prep == FP4LR_WPREP_AUTO ? FP4LR_WPREP_OFF : o->w_prep;
    if ((v == FP4LR_BENCH_DENSE || v == FP4LR_BENCH_FUSED) && t->arch == FP4LR_ARCH_SM90A) /* one-CTA rows */
        po.swap = o->swap, po.tile_n = o->tile_n, po.pdl = o->pdl;
    if (t->arch == FP4LR_ARCH_SM90A)
        po.force_transform_stages = o->force_transform_slots, po.graph = o->graph;
    if (p.r > 0)
        po.force_lora_chunk = o->force_lora_chunk, po.force_lora_stages = o->force_lora_slots;
    if (po.force_lora_chunk > p.r) { /* a chunk above the rank: that row is not this run's */
        if (!(job = job_new(j, s, fp4lr_format_name(f), label, v, &row)))
            return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the job list");
        job->format = f;
        row->r = p.r;
        row->state = FP4LR_ROW_SKIPPED;
        snprintf(row->note, sizeof row->note, "--lora-chunk %d exceeds r = %lld", po.force_lora_chunk,
                 (long long)p.r);
        return fp4lr_ok();
    }
    fp4lr_status st = fp4lr_plan_make(&p, t->arch, &po, &solver);
    /* The sweep varies the main stage count alone: on sm_90a its forced points keep 2
     * transform slots (1 .. the 2-slot maximum) even where the solver's own plan, the last
     * point, has the 3-slot ring. */
    int ring2 = o->sweep_stages && !o->force_transform_slots && st.code == FP4LR_OK &&
                solver.budget.stages_transform == 3;
    int top = st.code == FP4LR_OK ? solver.budget.stages_main : 0;
    if (ring2) {
        fp4lr_plan two;
        fp4lr_plan_opts p2 = po;
        p2.force_transform_stages = 2;
        if (fp4lr_plan_make(&p, t->arch, &p2, &two).code == FP4LR_OK)
            top = two.budget.stages_main + 1;
    }
    int points[FP4LR_BENCH_MAX_STAGES];
    int npoints = st.code == FP4LR_OK ? fp4lr_bench_stage_points(o, v, top, points, FP4LR_BENCH_MAX_STAGES) : 1;
    for (int i = 0; i < npoints; i++) {
        if (!(job = job_new(j, s, fp4lr_format_name(f), label, v, &row)))
            return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the job list");
        job->format = f;
        row->r = p.r;
        if (st.code != FP4LR_OK) { /* the solver's own plan failed: one line says why */
            plan_failed(job, row, st);
            continue;
        }
        int force = points[i];
        row->force_stages = force;
        row->sweep = o->sweep_stages && force != 0;
        row->stages_solver = solver.budget.stages_main;
        fp4lr_status pst = fp4lr_ok();
        if (force) {
            po.force_main_stages = force;
            po.force_transform_stages = ring2 ? 2 : po.force_transform_stages;
            pst = fp4lr_plan_make(&p, t->arch, &po, &job->plan);
        } else {
            job->plan = solver;
        }
        if (pst.code != FP4LR_OK) {
            plan_failed(job, row, pst);
            continue;
        }
        fp4lr_bench_row_plan(row, &job->plan);
        char path[1024];
        if (fp4lr_bench_plan_built(&job->plan, t->kernel_dir, path, sizeof path)) {
            job->runnable = 1;
        } else {
            row->state = FP4LR_ROW_SKIPPED;
            snprintf(row->note, sizeof row->note, "not built (%.230s)", path);
        }
    }
    return fp4lr_ok();
}

fp4lr_status fp4lr_bench_jobs_make(const fp4lr_bench_opts *o, const fp4lr_bench_target *t, fp4lr_bench_jobs *out)
{
    memset(out, 0, sizeof *out);
    fp4lr_status st = fp4lr_ok();
    for (int i = 0; i < o->nshapes && st.code == FP4LR_OK; i++) {
        const fp4lr_shape *s = &o->shapes[i];
        for (int f = FP4LR_NVFP4; f <= FP4LR_MXFP4 && st.code == FP4LR_OK; f++) {
            if (!(o->formats & 1 << f))
                continue;
            for (int v = 0; v < FP4LR_BENCH_PEERS && st.code == FP4LR_OK; v++)
                if (o->variants & FP4LR_BENCH_BIT(v) && fp4lr_bench_variant_runs_on((fp4lr_bench_variant)v, t->arch) &&
                    (fp4lr_bench_variant_fused((fp4lr_bench_variant)v) || o->same_mnk[i] < 0))
                    st = variant_jobs(out, o, t, s, (fp4lr_format)f, (fp4lr_bench_variant)v);
        }
        if (!(o->variants & FP4LR_BENCH_BIT(FP4LR_BENCH_PEERS)) || o->same_mnk[i] >= 0)
            continue;
        for (int k = 0; k < FP4LR_PEER_KINDS && st.code == FP4LR_OK; k++) {
            fp4lr_bench_row *row;
            fp4lr_bench_job *job = job_new(out, s, fp4lr_peer_format((fp4lr_peer_kind)k),
                                           fp4lr_peer_name((fp4lr_peer_kind)k), FP4LR_BENCH_PEERS, &row);
            if (!job) {
                st = fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the job list");
                break;
            }
            job->peer = k;
            job->runnable = 1;
        }
    }
    if (st.code != FP4LR_OK)
        fp4lr_bench_jobs_free(out);
    return st;
}

void fp4lr_bench_jobs_free(fp4lr_bench_jobs *j)
{
    free(j->job);
    free(j->row);
    memset(j, 0, sizeof *j);
}
