/* fp4lr-bench's command line (bench_cli.h). */
#include "bench_cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"

void fp4lr_bench_usage(FILE *f)
{
    fprintf(f,
            "usage: fp4lr-bench [options]\n"
            "Times fp4lr's dense kernel (r = 0) against cuBLASLt bf16 and fp8 on the shape table.\n"
            "Each fp4lr variant is validated on %d sampled rows before it is timed.\n\n"
            "  --shape NAME      a row of the shape table (repeatable)\n"
            "  --list-shapes     list the table (large shapes marked) and stop\n"
            "  --mnk MxNxK       a custom shape (repeatable); default: every large shape of the table\n"
            "  --format F        nvfp4, mxfp4 or both (default both)\n"
            "  --iters N         timed launches per variant (default %d; at least %d unless --quick)\n"
            "  --warmup N        untimed launches first (default %d)\n"
            "  --quick           allow fewer iterations (default %d, warm-up %d): a smoke run, not a measurement\n"
            "  --stages N        force the main stage count (an instantiation must exist)\n"
            "  --seed S          input seed (default 1)\n"
            "  --no-peers        skip cuBLASLt (no ratios)\n"
            "  --csv FILE        also write one CSV line per (shape, variant)\n"
            "  --json            append the run's record to the results directory (the default)\n"
            "  --no-json         do not\n"
            "  --results-dir D   where the record goes (default %s)\n"
            "  --help            this text\n"
            "Exit status: 0 ok, 1 a validation failed, 2 bad arguments, 3 other errors.\n",
            FP4LR_BENCH_VALIDATE_ROWS, FP4LR_BENCH_ITERS_DEFAULT, FP4LR_BENCH_ITERS_MIN, FP4LR_BENCH_WARMUP_DEFAULT,
            FP4LR_BENCH_QUICK_ITERS, FP4LR_BENCH_QUICK_WARMUP, FP4LR_RESULTS_DIR_DEFAULT);
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

/* Appends a shape unless one with the same M, N, K is there (recorded as a dup). */
static int add_shape(fp4lr_bench_opts *o, const fp4lr_shape *s)
{
    for (int i = 0; i < o->nshapes; i++)
        if (o->shapes[i].M == s->M && o->shapes[i].N == s->N && o->shapes[i].K == s->K) {
            if (o->ndups == FP4LR_BENCH_MAX_SHAPES)
                return -1;
            o->dups[o->ndups++] = (fp4lr_bench_dup){s->name, o->shapes[i].name};
            return 0;
        }
    if (o->nshapes == FP4LR_BENCH_MAX_SHAPES)
        return -1;
    o->shapes[o->nshapes++] = *s;
    return 0;
}

int fp4lr_bench_opts_parse(int argc, char **argv, fp4lr_bench_opts *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->formats = 1 << FP4LR_NVFP4 | 1 << FP4LR_MXFP4;
    o->peers = 1;
    o->json = 1;
    o->results_dir = FP4LR_RESULTS_DIR_DEFAULT;
    o->seed = 1;
    err[0] = '\0';
    int iters = -1, warmup = -1, explicit_shapes = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long x;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            o->help = 1;
            return 0;
        } else if (!strcmp(a, "--list-shapes")) {
            o->list_shapes = 1;
            return 0;
        } else if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "--no-peers")) {
            o->peers = 0;
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (!strcmp(a, "--no-json")) {
            o->json = 0;
        } else if (!v) {
            return bad(err, errlen, "%s: unknown flag or missing value", a);
        } else if (!strcmp(a, "--shape")) {
            const fp4lr_shape *s = fp4lr_shape_find(v);
            if (!s)
                return bad(err, errlen, "--shape %s: unknown shape (--list-shapes lists them)", v);
            if (add_shape(o, s))
                return bad(err, errlen, "at most %d shapes", FP4LR_BENCH_MAX_SHAPES);
            explicit_shapes = 1, i++;
        } else if (!strcmp(a, "--mnk")) {
            fp4lr_shape s;
            if (fp4lr_shape_parse(v, &s) || s.M < 1 || s.N < 1 || s.K < 1)
                return bad(err, errlen, "--mnk %s: expected MxNxK with positive integers", v);
            s.name = v;
            if (add_shape(o, &s))
                return bad(err, errlen, "at most %d shapes", FP4LR_BENCH_MAX_SHAPES);
            explicit_shapes = 1, i++;
        } else if (!strcmp(a, "--format")) {
            if (!strcmp(v, "nvfp4")) o->formats = 1 << FP4LR_NVFP4;
            else if (!strcmp(v, "mxfp4")) o->formats = 1 << FP4LR_MXFP4;
            else if (!strcmp(v, "both")) o->formats = 1 << FP4LR_NVFP4 | 1 << FP4LR_MXFP4;
            else return bad(err, errlen, "--format %s: expected nvfp4, mxfp4 or both", v);
            i++;
        } else if (!strcmp(a, "--iters")) {
            if (parse_ll(v, 1, FP4LR_BENCH_ITERS_MAX, &x))
                return bad(err, errlen, "--iters %s: expected 1..%d", v, FP4LR_BENCH_ITERS_MAX);
            iters = (int)x, i++;
        } else if (!strcmp(a, "--warmup")) {
            if (parse_ll(v, 0, FP4LR_BENCH_ITERS_MAX, &x))
                return bad(err, errlen, "--warmup %s: expected 0..%d", v, FP4LR_BENCH_ITERS_MAX);
            warmup = (int)x, i++;
        } else if (!strcmp(a, "--stages")) {
            if (parse_ll(v, 1, 64, &x))
                return bad(err, errlen, "--stages %s: expected 1..64", v);
            o->force_stages = (int)x, i++;
        } else if (!strcmp(a, "--seed")) {
            if (parse_ll(v, 0, 1LL << 62, &x))
                return bad(err, errlen, "--seed %s: expected an integer >= 0", v);
            o->seed = (uint64_t)x, i++;
        } else if (!strcmp(a, "--csv")) {
            o->csv = v, i++;
        } else if (!strcmp(a, "--results-dir")) {
            if (!v[0])
                return bad(err, errlen, "--results-dir: empty directory name");
            o->results_dir = v, i++;
        } else {
            return bad(err, errlen, "%s: unknown flag", a);
        }
    }
    o->iters = iters >= 0 ? iters : o->quick ? FP4LR_BENCH_QUICK_ITERS : FP4LR_BENCH_ITERS_DEFAULT;
    o->warmup = warmup >= 0 ? warmup : o->quick ? FP4LR_BENCH_QUICK_WARMUP : FP4LR_BENCH_WARMUP_DEFAULT;
    if (o->iters < FP4LR_BENCH_ITERS_MIN && !o->quick)
        return bad(err, errlen, "--iters %d: at least %d for a measurement (--quick allows fewer)", o->iters,
                   FP4LR_BENCH_ITERS_MIN);
    if (!explicit_shapes)
        for (int s = 0; s < fp4lr_num_shapes; s++)
            if (fp4lr_shapes[s].large && add_shape(o, &fp4lr_shapes[s]))
                return bad(err, errlen, "at most %d shapes", FP4LR_BENCH_MAX_SHAPES);
    return 0;
}
