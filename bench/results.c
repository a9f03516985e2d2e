/* Benchmark results: rows, ratios, geometric means, run information, and the
 * table, CSV and JSON Lines forms (results.h). */
#include "results.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

const char *fp4lr_bench_variant_name(fp4lr_bench_variant v)
{
    switch (v) {
    case FP4LR_BENCH_DENSE: return "dense";
    case FP4LR_BENCH_DENSE_C2: return "dense-c2";
    case FP4LR_BENCH_NAIVE: return "dense-c2-naive";
    case FP4LR_BENCH_FUSED: return "fused";
    case FP4LR_BENCH_FUSED_C2: return "fused-c2";
    case FP4LR_BENCH_PEERS: return "peers";
    case FP4LR_BENCH_VARIANTS: break;
    }
    return "?";
}

const char *fp4lr_row_state_name(fp4lr_row_state s)
{
    switch (s) {
    case FP4LR_ROW_OK: return "ok";
    case FP4LR_ROW_INVALID: return "invalid";
    case FP4LR_ROW_FAILED: return "failed";
    case FP4LR_ROW_SKIPPED: return "skipped";
    }
    return "unknown";
}

/* ---- rows and geometric means ------------------------------------------------------- */

void fp4lr_bench_row_init(fp4lr_bench_row *row, const char *shape, int large, int64_t M, int64_t N, int64_t K,
                          const char *format, const char *variant)
{
    memset(row, 0, sizeof *row);
    snprintf(row->shape, sizeof row->shape, "%s", shape);
    row->large = large;
    row->M = M, row->N = N, row->K = K;
    snprintf(row->format, sizeof row->format, "%s", format);
    snprintf(row->variant, sizeof row->variant, "%s", variant);
    row->state = FP4LR_ROW_FAILED;
    row->kind = FP4LR_BENCH_DENSE;
    row->tflops = row->ratio_bf16 = row->ratio_dense = NAN;
    row->ratio_bf16_lo = row->ratio_bf16_hi = NAN;
    row->timed_check = -1;
    row->max_err = row->max_err_over_mag = row->tol_acc = NAN;
}

void fp4lr_bench_row_timed(fp4lr_bench_row *row, const fp4lr_timing *t, int copies)
{
    row->state = FP4LR_ROW_OK;
    row->t = *t;
    row->copies = copies;
    double flop = 2.0 * (double)row->M * (double)row->N * (double)row->K;
    row->tflops = t->median_ms > 0 ? flop / (t->median_ms * 1e-3) / 1e12 : NAN;
    row->rounds = 1;
    row->round_median_ms[0] = t->median_ms;
}

fp4lr_status fp4lr_bench_row_timed_rounds(fp4lr_bench_row *row, const double *ms, int rounds, int per_round,
                                          int copies)
{
    if (rounds < 1 || rounds > FP4LR_BENCH_MAX_ROUNDS || per_round < 1)
        return fp4lr_fail(FP4LR_E_INVALID, "BENCH_ROUNDS", "rounds must be 1..%d with >= 1 launch each (got %d x %d)",
                          FP4LR_BENCH_MAX_ROUNDS, rounds, per_round);
    fp4lr_timing t;
    fp4lr_timing_of(ms, rounds * per_round, &t);
    fp4lr_bench_row_timed(row, &t, copies);
    row->rounds = rounds;
    for (int k = 0; k < rounds; k++) {
        fp4lr_timing one;
        fp4lr_timing_of(ms + (size_t)k * (size_t)per_round, per_round, &one);
        row->round_median_ms[k] = one.median_ms;
    }
    return fp4lr_ok();
}

int fp4lr_bench_row_host(fp4lr_bench_row *row, const double *host_ms, int rounds)
{
    double known[FP4LR_BENCH_MAX_ROUNDS];
    int n = 0;
    for (int k = 0; k < rounds && k < FP4LR_BENCH_MAX_ROUNDS; k++)
        if (host_ms[k] > 0 && isfinite(host_ms[k]))
            known[n++] = host_ms[k];
    fp4lr_timing m;
    fp4lr_timing_of(known, n, &m); /* n = 0: all zero */
    const double h = m.median_ms;
    row->t.host_ms = h;
    return h > 0 && row->t.median_ms > 0 && h >= FP4LR_BENCH_HOST_BOUND * row->t.median_ms;
}

double fp4lr_geomean(const double *v, int n, int *used)
{
    double s = 0.0;
    int c = 0;
    for (int i = 0; i < n; i++)
        if (v[i] > 0 && isfinite(v[i]))
            s += log(v[i]), c++;
    if (used)
        *used = c;
    return c ? exp(s / c) : NAN;
}

void fp4lr_bench_row_plan(fp4lr_bench_row *row, const fp4lr_plan *plan)
{
    row->has_plan = 1;
    snprintf(row->entry, sizeof row->entry, "%s", plan->entry);
    row->stages_main = plan->budget.stages_main;
    row->smem_bytes = plan->budget.total_bytes;
    row->budget = plan->budget;
}

static int timed(const fp4lr_bench_row *r) { return r->state == FP4LR_ROW_OK || r->state == FP4LR_ROW_INVALID; }

static int same_mnk(const fp4lr_bench_row *a, const fp4lr_bench_row *b)
{
    return a->M == b->M && a->N == b->N && a->K == b->K;
}

/* The OK row of rows[0..n) that `want` accepts as the reference of `r`, or NULL. */
static const fp4lr_bench_row *reference(const fp4lr_bench_row *rows, int n, const fp4lr_bench_row *r,
                                        int (*want)(const fp4lr_bench_row *ref, const fp4lr_bench_row *r))
{
    for (int i = 0; i < n; i++)
        if (rows[i].state == FP4LR_ROW_OK && rows[i].t.median_ms > 0 && same_mnk(&rows[i], r) && want(&rows[i], r))
            return &rows[i];
    return NULL;
}

int fp4lr_bench_variant_fused(fp4lr_bench_variant v)
{
    return v == FP4LR_BENCH_FUSED || v == FP4LR_BENCH_FUSED_C2;
}

static int is_bf16_peer(const fp4lr_bench_row *ref, const fp4lr_bench_row *r)
{
    (void)r;
    return ref->kind == FP4LR_BENCH_PEERS && strcmp(ref->format, "bf16") == 0;
}

/* The dense row r is compared with: same format, the solver's stage count (not a
 * sweep point), one CTA - or, for the fused kernel, as many as it runs with. */
static int is_dense_of(const fp4lr_bench_row *ref, const fp4lr_bench_row *r)
{
    int cluster = fp4lr_bench_variant_fused(r->kind) && r->has_plan ? r->budget.req.cluster : 1;
    return (ref->kind == FP4LR_BENCH_DENSE || ref->kind == FP4LR_BENCH_DENSE_C2) && !ref->sweep && ref->has_plan &&
           ref->budget.req.cluster == cluster && strcmp(ref->format, r->format) == 0;
}

void fp4lr_bench_set_ratios(fp4lr_bench_row *rows, int n)
{
    for (int i = 0; i < n; i++) {
        fp4lr_bench_row *r = &rows[i];
        if (!timed(r) || !(r->t.median_ms > 0))
            continue;
        const fp4lr_bench_row *bf16 = reference(rows, n, r, is_bf16_peer);
        if (bf16)
            r->ratio_bf16 = bf16->t.median_ms / r->t.median_ms;
        r->ratio_bf16_lo = r->ratio_bf16_hi = NAN;
        if (bf16 && r->rounds >= 2 && bf16->rounds == r->rounds) {
            for (int k = 0; k < r->rounds; k++) {
                double q = r->round_median_ms[k] > 0 ? bf16->round_median_ms[k] / r->round_median_ms[k] : NAN;
                if (!isfinite(q)) {
                    r->ratio_bf16_lo = r->ratio_bf16_hi = NAN;
                    break;
                }
                if (k == 0 || q < r->ratio_bf16_lo)
                    r->ratio_bf16_lo = q;
                if (k == 0 || q > r->ratio_bf16_hi)
                    r->ratio_bf16_hi = q;
            }
        }
        const fp4lr_bench_row *dense = r->kind == FP4LR_BENCH_PEERS ? NULL : reference(rows, n, r, is_dense_of);
        if (dense)
            r->ratio_dense = dense->t.median_ms / r->t.median_ms;
    }
}

/* A row a geomean of `variant` looks at: large, not a sweep point, not a fused row of rank 0. */
static int counts_for(const fp4lr_bench_row *r, const char *variant)
{
    return r->large && !r->sweep && !strcmp(r->variant, variant) && !(fp4lr_bench_variant_fused(r->kind) && r->r == 0);
}

static int valid_bf16(const fp4lr_bench_row *r)
{
    return r->state == FP4LR_ROW_OK && r->ratio_bf16 > 0 && isfinite(r->ratio_bf16);
}

/* The geomean of one ratio field of `variant`'s rows that count_for; with `only` (an
 * array of n flags) just the rows flagged. */
static fp4lr_bench_geomean geomean_over(const fp4lr_bench_row *rows, int n, const char *variant, size_t ratio_offset,
                                        const unsigned char *only)
{
    fp4lr_bench_geomean g = {.value = NAN};
    snprintf(g.variant, sizeof g.variant, "%s", variant);
    double *r = malloc(sizeof *r * (size_t)(n > 0 ? n : 1));
    int k = 0;
    for (int i = 0; r && i < n; i++) {
        if (!counts_for(&rows[i], variant) || rows[i].state == FP4LR_ROW_SKIPPED || (only && !only[i]))
            continue;
        double ratio;
        memcpy(&ratio, (const char *)&rows[i] + ratio_offset, sizeof ratio);
        if (rows[i].state == FP4LR_ROW_OK && ratio > 0 && isfinite(ratio))
            r[k++] = ratio;
        else
            g.missing++;
    }
    if (r)
        g.value = fp4lr_geomean(r, k, &g.shapes);
    free(r);
    return g;
}

static fp4lr_bench_geomean geomean_of(const fp4lr_bench_row *rows, int n, const char *variant, size_t ratio_offset)
{
    return geomean_over(rows, n, variant, ratio_offset, NULL);
}

fp4lr_bench_geomean fp4lr_bench_geomean_of(const fp4lr_bench_row *rows, int n, const char *variant)
{
    return geomean_of(rows, n, variant, offsetof(fp4lr_bench_row, ratio_bf16));
}

fp4lr_bench_geomean fp4lr_bench_geomean_dense_of(const fp4lr_bench_row *rows, int n, const char *variant)
{
    return geomean_of(rows, n, variant, offsetof(fp4lr_bench_row, ratio_dense));
}

/* 1 when `variant` is among the first k entries of g. */
static int listed(const fp4lr_bench_geomean *g, int k, const char *variant)
{
    for (int i = 0; i < k; i++)
        if (!strcmp(g[i].variant, variant))
            return 1;
    return 0;
}

void fp4lr_bench_summarize(const fp4lr_bench_row *rows, int n, fp4lr_bench_summary *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < n; i++) {
        const fp4lr_bench_row *r = &rows[i];
        if (!r->large)
            continue;
        if (!is_bf16_peer(r, r) && out->n_bf16 < FP4LR_BENCH_MAX_GEOMEANS && !listed(out->vs_bf16, out->n_bf16, r->variant))
            out->vs_bf16[out->n_bf16++] = fp4lr_bench_geomean_of(rows, n, r->variant);
        if (r->kind != FP4LR_BENCH_PEERS && r->kind != FP4LR_BENCH_DENSE && out->n_dense < FP4LR_BENCH_MAX_GEOMEANS &&
            !listed(out->vs_dense, out->n_dense, r->variant))
            out->vs_dense[out->n_dense++] = fp4lr_bench_geomean_dense_of(rows, n, r->variant);
    }
    /* the M, N, K every variant with a valid ratio has: row i is in when, for each such
     * variant, some row of it that counts has i's M, N, K and a valid ratio */
    unsigned char *in = calloc((size_t)(n > 0 ? n : 1), 1);
    if (!in)
        return;
    int compared = 0;
    for (int v = 0; v < out->n_bf16; v++)
        compared += out->vs_bf16[v].shapes > 0;
    for (int i = 0; i < n && compared >= 2; i++) {
        const fp4lr_bench_row *r = &rows[i];
        int all = r->large && !r->sweep;
        for (int v = 0; all && v < out->n_bf16; v++) {
            if (out->vs_bf16[v].shapes == 0)
                continue;
            int has = 0;
            for (int j = 0; j < n && !has; j++)
                has = counts_for(&rows[j], out->vs_bf16[v].variant) && same_mnk(&rows[j], r) && valid_bf16(&rows[j]);
            all = has;
        }
        in[i] = (unsigned char)all;
    }
    /* the count of distinct M, N, K in the set */
    for (int i = 0; i < n; i++) {
        int first = in[i];
        for (int j = 0; j < i && first; j++)
            first = !(in[j] && same_mnk(&rows[j], &rows[i]));
        out->shapes_common += first;
    }
    if (out->shapes_common)
        for (int v = 0; v < out->n_bf16; v++)
            if (out->vs_bf16[v].shapes > 0)
                out->common[out->n_common++] =
                    geomean_over(rows, n, out->vs_bf16[v].variant, offsetof(fp4lr_bench_row, ratio_bf16), in);
    free(in);
}

static void print_geomeans(FILE *f, const char *title, const fp4lr_bench_geomean *geo, int n)
{
    fprintf(f, "%s\n", title);
    if (n == 0)
        fprintf(f, "  (no variant to compare)\n");
    for (int i = 0; i < n; i++) {
        if (geo[i].shapes == 0)
            fprintf(f, "  %-22s -       (no large shape with a valid ratio", geo[i].variant);
        else
            fprintf(f, "  %-22s %.3fx  (%d shapes", geo[i].variant, geo[i].value, geo[i].shapes);
        if (geo[i].missing)
            fprintf(f, "; %d large shapes without a valid ratio", geo[i].missing);
        fprintf(f, ")\n");
    }
}

void fp4lr_bench_summary_print(FILE *f, const fp4lr_bench_summary *s)
{
    print_geomeans(f, "geometric mean vs cuBLAS bf16 over the large shapes (same run; fused: r > 0):", s->vs_bf16,
                   s->n_bf16);
    if (s->n_common) {
        char title[160];
        snprintf(title, sizeof title,
                 "the same over only the %d large M, N, K every variant above has (to compare the variants):",
                 s->shapes_common);
        print_geomeans(f, title, s->common, s->n_common);
    }
    if (s->n_dense)
        print_geomeans(f,
                       "geometric mean vs the dense fp4lr kernel over the large shapes (same format, same run; "
                       "fused: the dense kernel of its cluster):",
                       s->vs_dense, s->n_dense);
}

/* ---- run information ------------------------------------------------------------------ */

/* The first line a shell command prints (newline stripped) into out; 0 when it
 * printed something. */
static int command_line_output(const char *cmd, char *out, size_t cap)
{
    out[0] = '\0';
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    int got = fgets(out, (int)cap, p) != NULL;
    pclose(p);
    out[strcspn(out, "\r\n")] = '\0';
    return got && out[0] ? 0 : -1;
}

/* Appends text to out (NUL-terminated, capacity cap), truncating. */
static void append(char *out, size_t cap, const char *text)
{
    size_t used = strlen(out);
    if (used + 1 < cap)
        snprintf(out + used, cap - used, "%s", text);
}

/* Appends arg to the command line, single-quoted unless every character is safe. */
static void append_shell_word(char *out, size_t cap, const char *arg)
{
    const char *safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-@%";
    if (arg[0] && strspn(arg, safe) == strlen(arg)) {
        append(out, cap, arg);
        return;
    }
    append(out, cap, "'");
    for (const char *c = arg; *c; c++) {
        char one[2] = {*c, '\0'};
        append(out, cap, *c == '\'' ? "'\\''" : one);
    }
    append(out, cap, "'");
}

void fp4lr_run_info_capture(fp4lr_run_info *run, int argc, char **argv)
{
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(run->time_utc, sizeof run->time_utc, "%Y-%m-%dT%H:%M:%SZ", &utc);
    strftime(run->date, sizeof run->date, "%Y-%m-%d", &utc);

    const char *env = getenv("FP4LR_GIT_COMMIT");
    run->git_dirty = -1;
    if (env && env[0]) {
        snprintf(run->git_commit, sizeof run->git_commit, "%s", env);
    } else if (command_line_output("git rev-parse --short HEAD 2>/dev/null", run->git_commit,
                                   sizeof run->git_commit) == 0) {
        char line[256];
        run->git_dirty = command_line_output("git status --porcelain --untracked-files=no 2>/dev/null", line,
                                             sizeof line) == 0;
    } else {
        snprintf(run->git_commit, sizeof run->git_commit, "unknown");
    }

    run->command[0] = '\0';
    for (int i = 0; i < argc; i++) {
        if (i)
            append(run->command, sizeof run->command, " ");
        append_shell_word(run->command, sizeof run->command, argv[i]);
    }
}

void fp4lr_run_info_device(fp4lr_run_info *run, const fp4lr_ctx *ctx)
{
    snprintf(run->device, sizeof run->device, "%s", ctx->name);
    run->sm_count = ctx->sm_count;
    run->cc_major = ctx->cc_major, run->cc_minor = ctx->cc_minor;
    run->driver_version = ctx->driver_version;
    run->clock_khz = ctx->clock_khz, run->mem_clock_khz = ctx->mem_clock_khz;
    run->l2_bytes = ctx->l2_bytes;
}

void fp4lr_nvidia_smi_query(char *out, size_t cap)
{
    out[0] = '\0';
    FILE *p = popen("command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi "
                    "--query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>/dev/null",
                    "r");
    if (!p)
        return;
    char line[256];
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        if (out[0])
            append(out, cap, " | ");
        append(out, cap, line);
    }
    pclose(p);
}

/* ---- JSON primitives ----------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when s[0] starts none. */
static int utf8_length(const unsigned char *s)
{
    unsigned c = s[0];
    int n;
    unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

void fp4lr_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        unsigned c = *p;
        int n = utf8_length(p);
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c == '\r')
            fputs("\\r", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else if (n == 0)
            fputs("\\ufffd", f);
        else
            fwrite(p, 1, (size_t)n, f);
        p += n ? n : 1;
    }
    fputc('"', f);
}

void fp4lr_json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fputs("null", f);
}

/* An object being written: keys are preceded by ", " after the first. */
typedef struct json_obj {
    FILE *f;
    int count;
} json_obj;

static void key(json_obj *o, const char *k)
{
    if (o->count++)
        fputs(", ", o->f);
    fp4lr_json_string(o->f, k);
    fputs(": ", o->f);
}

static json_obj obj_open(FILE *f)
{
    fputc('{', f);
    return (json_obj){f, 0};
}

static json_obj obj_child(json_obj *parent, const char *k)
{
    key(parent, k);
    return obj_open(parent->f);
}

static void obj_close(json_obj *o) { fputc('}', o->f); }

static void put_str(json_obj *o, const char *k, const char *v)
{
    key(o, k);
    if (v)
        fp4lr_json_string(o->f, v);
    else
        fputs("null", o->f);
}

/* A string that is null when empty. */
static void put_str_or_null(json_obj *o, const char *k, const char *v) { put_str(o, k, v && v[0] ? v : NULL); }

static void put_int(json_obj *o, const char *k, long long v)
{
    key(o, k);
    fprintf(o->f, "%lld", v);
}

static void put_num(json_obj *o, const char *k, double v)
{
    key(o, k);
    fp4lr_json_number(o->f, v);
}

static void put_bool(json_obj *o, const char *k, int v)
{
    key(o, k);
    fputs(v < 0 ? "null" : v ? "true" : "false", o->f);
}

static void put_null(json_obj *o, const char *k)
{
    key(o, k);
    fputs("null", o->f);
}

/* The budget as fp4lr_budget_json writes it, on one line (its newlines are
 * JSON whitespace, so spaces keep it valid). */
static void put_budget(json_obj *o, const char *k, const fp4lr_budget *b)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    int ok = m && fp4lr_budget_json(m, b).code == FP4LR_OK;
    if (m)
        fclose(m);
    key(o, k);
    if (ok && text) {
        for (char *c = text; *c; c++)
            if (*c == '\n')
                *c = ' ';
        fputs(text, o->f);
    } else {
        fputs("null", o->f);
    }
    free(text);
}

/* ---- the record ------------------------------------------------------------------------ */

/* The plan of an fp4lr row: what ran (entry, arch, tile, cluster, policy,
 * family, rank) and what the budget solved (stages, chunk, shared memory). */
static void put_plan(json_obj *o, const fp4lr_bench_row *r)
{
    const fp4lr_budget *b = &r->budget;
    json_obj p = obj_child(o, "plan");
    put_str(&p, "entry", r->entry);
    put_str(&p, "arch", fp4lr_arch_name(b->req.arch));
    key(&p, "tile");
    fprintf(p.f, "[%d, %d, %d]", b->req.tile_m, b->req.tile_n, b->req.tile_k);
    put_int(&p, "cluster", b->req.cluster);
    put_str(&p, "policy", fp4lr_policy_name(b->req.policy));
    put_str(&p, "family", fp4lr_family_name(b->req.family));
    put_int(&p, "rank", b->req.rank);
    put_bool(&p, "affine", b->req.has_affine);
    put_int(&p, "stages_main", r->stages_main);
    put_int(&p, "stages_lora", b->stages_lora);
    put_int(&p, "lora_chunk", b->lora_chunk);
    put_int(&p, "stages_transform", b->stages_transform);
    put_int(&p, "stages_wb", b->stages_wb);
    put_int(&p, "smem_bytes", (long long)r->smem_bytes);
    put_budget(&p, "budget", b);
    obj_close(&p);
}

static void put_row(FILE *f, const fp4lr_bench_row *r)
{
    json_obj o = obj_open(f);
    put_str(&o, "shape", r->shape);
    put_bool(&o, "large", r->large);
    put_int(&o, "M", (long long)r->M);
    put_int(&o, "N", (long long)r->N);
    put_int(&o, "K", (long long)r->K);
    put_int(&o, "r", (long long)r->r);
    put_str(&o, "format", r->format);
    put_str(&o, "variant", r->variant);
    put_str(&o, "kind", fp4lr_bench_variant_name(r->kind));
    put_int(&o, "force_stages", r->force_stages);
    put_bool(&o, "sweep", r->sweep);
    if (r->stages_solver > 0)
        put_int(&o, "stages_solver", r->stages_solver);
    else
        put_null(&o, "stages_solver");
    put_str(&o, "state", fp4lr_row_state_name(r->state));
    put_bool(&o, "time_valid", r->state == FP4LR_ROW_OK);
    if (timed(r)) {
        json_obj t = obj_child(&o, "time_ms");
        put_num(&t, "median", r->t.median_ms);
        put_num(&t, "min", r->t.min_ms);
        put_num(&t, "max", r->t.max_ms);
        put_num(&t, "p10", r->t.p10_ms);
        put_num(&t, "p90", r->t.p90_ms);
        put_int(&t, "reps", r->t.reps);
        put_num(&t, "host_per_launch", r->t.host_ms > 0 ? r->t.host_ms : NAN);
        put_int(&t, "rounds", r->rounds);
        key(&t, "round_medians");
        fputc('[', f);
        for (int k = 0; k < r->rounds && k < FP4LR_BENCH_MAX_ROUNDS; k++) {
            if (k)
                fputs(", ", f);
            fp4lr_json_number(f, r->round_median_ms[k]);
        }
        fputc(']', f);
        obj_close(&t);
    } else {
        put_null(&o, "time_ms");
    }
    put_num(&o, "tflops", timed(r) ? r->tflops : NAN);
    put_num(&o, "ratio_vs_cublas_bf16", r->ratio_bf16);
    put_num(&o, "ratio_vs_cublas_bf16_round_min", r->ratio_bf16_lo);
    put_num(&o, "ratio_vs_cublas_bf16_round_max", r->ratio_bf16_hi);
    put_num(&o, "ratio_vs_dense", r->ratio_dense);
    put_int(&o, "rotation_copies", r->copies);
    if (r->validated) {
        json_obj v = obj_child(&o, "validation");
        put_bool(&v, "pass", r->pass);
        put_int(&v, "rows", (long long)r->rows_checked);
        put_num(&v, "max_err", r->max_err);
        put_num(&v, "max_err_over_mag", r->max_err_over_mag);
        put_num(&v, "tol_acc", r->tol_acc);
        if (r->timed_check >= 0)
            put_bool(&v, "timed_output_pass", r->timed_check);
        else
            put_null(&v, "timed_output_pass");
        obj_close(&v);
    } else {
        put_null(&o, "validation");
    }
    if (r->has_plan)
        put_plan(&o, r);
    else
        put_null(&o, "plan");
    put_str_or_null(&o, "note", r->note);
    obj_close(&o);
}

static void put_geomeans(json_obj *o, const char *k, const fp4lr_bench_geomean *geo, int n)
{
    key(o, k);
    fputc('[', o->f);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", o->f);
        json_obj g = obj_open(o->f);
        put_str(&g, "variant", geo[i].variant);
        put_num(&g, "value", geo[i].value);
        put_int(&g, "shapes", geo[i].shapes);
        put_int(&g, "missing", geo[i].missing);
        obj_close(&g);
    }
    fputc(']', o->f);
}

fp4lr_status fp4lr_results_write_record(FILE *f, const fp4lr_run_info *run, const fp4lr_bench_row *rows, int n,
                                        const fp4lr_bench_summary *sum)
{
    json_obj o = obj_open(f);
    put_str(&o, "schema", FP4LR_RESULTS_SCHEMA);
    put_str(&o, "time_utc", run->time_utc);
    json_obj git = obj_child(&o, "git");
    put_str(&git, "commit", run->git_commit);
    put_bool(&git, "dirty", run->git_dirty);
    obj_close(&git);
    put_str(&o, "command", run->command);

    json_obj dev = obj_child(&o, "device");
    put_str(&dev, "name", run->device);
    put_int(&dev, "sm_count", run->sm_count);
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", run->cc_major, run->cc_minor);
    put_str(&dev, "cc", cc);
    put_str_or_null(&dev, "arch", run->arch);
    put_int(&dev, "driver_version", run->driver_version);
    put_int(&dev, "clock_khz", run->clock_khz);
    put_int(&dev, "mem_clock_khz", run->mem_clock_khz);
    put_int(&dev, "l2_bytes", run->l2_bytes);
    obj_close(&dev);

    json_obj smi = obj_child(&o, "nvidia_smi");
    put_str(&smi, "query", "clocks.sm,clocks.mem,temperature.gpu,power.draw");
    put_str_or_null(&smi, "before", run->smi_before);
    put_str_or_null(&smi, "after", run->smi_after);
    obj_close(&smi);

    json_obj peers = obj_child(&o, "peers");
    put_str_or_null(&peers, "library", run->peer_lib);
    put_int(&peers, "version", run->peer_version);
    put_str(&peers, "status", run->peer_status);
    obj_close(&peers);

    json_obj set = obj_child(&o, "settings");
    put_int(&set, "iters", run->iters);
    put_int(&set, "warmup", run->warmup);
    put_int(&set, "rounds", run->rounds);
    put_int(&set, "preheat_ms", run->preheat_ms);
    put_int(&set, "seed", (long long)run->seed);
    put_int(&set, "force_stages", run->force_stages);
    put_int(&set, "force_transform_slots", run->force_transform_slots);
    put_int(&set, "force_lora_chunk", run->force_lora_chunk);
    put_int(&set, "force_lora_slots", run->force_lora_slots);
    put_str(&set, "scales", run->small_scales ? "small" : "realistic");
    put_bool(&set, "sweep_stages", run->sweep_stages);
    put_str(&set, "schedule", run->schedule[0] ? run->schedule : "auto");
    put_str(&set, "stream", run->own_stream ? "own" : "legacy");
    put_bool(&set, "graph", run->graph);
    put_str(&set, "variants", run->variants);
    put_int(&set, "validate_rows", run->validate_rows);
    obj_close(&set);

    key(&o, "results");
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        put_row(f, &rows[i]);
    }
    fputc(']', f);
    put_geomeans(&o, "geomean_vs_cublas_bf16", sum->vs_bf16, sum->n_bf16);
    put_geomeans(&o, "geomean_vs_dense", sum->vs_dense, sum->n_dense);
    put_int(&o, "common_shapes", sum->shapes_common);
    put_geomeans(&o, "geomean_vs_cublas_bf16_common", sum->common, sum->n_common);
    obj_close(&o);
    fputc('\n', f);
    if (ferror(f))
        return fp4lr_fail(FP4LR_E_IO, "WRITE", "writing the results record failed");
    return fp4lr_ok();
}

/* ---- the results file ------------------------------------------------------------------- */

void fp4lr_results_sanitize(const char *name, char *out, size_t cap)
{
    size_t n = 0;
    int dash = 0;
    for (const char *c = name ? name : ""; *c && n + 1 < cap; c++) {
        char ch = *c;
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
            if (dash && n > 0 && n + 2 < cap)
                out[n++] = '-';
            dash = 0;
            out[n++] = ch;
        } else {
            dash = 1;
        }
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, cap, "unknown-device");
}

fp4lr_status fp4lr_results_path(const char *dir, const char *device, const char *date, char *out, size_t cap)
{
    char dev[256];
    fp4lr_results_sanitize(device, dev, sizeof dev);
    int len = snprintf(out, cap, "%s/%s-%s.jsonl", dir, dev, date);
    if (len < 0 || (size_t)len >= cap)
        return fp4lr_fail(FP4LR_E_INVALID, "PATH_TOO_LONG", "results path under %s does not fit %zu bytes", dir, cap);
    return fp4lr_ok();
}

/* mkdir -p. */
static fp4lr_status make_dirs(const char *dir)
{
    char path[1024];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return fp4lr_fail(FP4LR_E_INVALID, "PATH_TOO_LONG", "results directory %s is too long", dir);
    for (char *c = path + 1;; c++) {
        if (*c == '/' || *c == '\0') {
            char saved = *c;
            *c = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return fp4lr_fail(FP4LR_E_IO, "MKDIR", "cannot create %s: %s", path, strerror(errno));
            *c = saved;
            if (!saved)
                break;
        }
    }
    return fp4lr_ok();
}

fp4lr_status fp4lr_results_append(const char *dir, const fp4lr_run_info *run, const fp4lr_bench_row *rows, int n,
                                  const fp4lr_bench_summary *sum, char *path_out, size_t path_cap)
{
    char path[1024];
    FP4LR_TRY(fp4lr_results_path(dir, run->device, run->date, path, sizeof path));
    FP4LR_TRY(make_dirs(dir));
    if (path_out)
        snprintf(path_out, path_cap, "%s", path);
    /* The record goes to memory first, then to the file in one write. */
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot buffer the results record");
    fp4lr_status st = fp4lr_results_write_record(m, run, rows, n, sum);
    fclose(m);
    FILE *f = st.code == FP4LR_OK ? fopen(path, "a") : NULL;
    if (st.code == FP4LR_OK && !f)
        st = fp4lr_fail(FP4LR_E_IO, "OPEN", "cannot open %s: %s", path, strerror(errno));
    if (f) {
        if (fwrite(text, 1, len, f) != len || fclose(f) != 0)
            st = fp4lr_fail(FP4LR_E_IO, "WRITE", "cannot write %s", path);
    }
    free(text);
    return st;
}

/* ---- CSV ---------------------------------------------------------------------------------- */

static void csv_text(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* A number, or an empty field when not finite. */
static void csv_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
}

fp4lr_status fp4lr_results_csv_header(FILE *f)
{
    fputs("shape,large,M,N,K,r,format,variant,kind,state,median_ms,min_ms,max_ms,p10_ms,p90_ms,reps,tflops,"
          "ratio_vs_cublas_bf16,ratio_vs_dense,rotation_copies,validated,pass,rows_checked,max_err,max_err_over_mag,"
          "tol_acc,entry,cluster,policy,stages_main,stages_solver,force_stages,sweep,stages_lora,lora_chunk,smem_bytes,"
          "rounds,ratio_bf16_round_min,ratio_bf16_round_max,timed_output_pass,host_ms,note\n",
          f);
    return ferror(f) ? fp4lr_fail(FP4LR_E_IO, "WRITE", "writing the CSV header failed") : fp4lr_ok();
}

fp4lr_status fp4lr_results_csv_row(FILE *f, const fp4lr_bench_row *r)
{
    int t = timed(r);
    csv_text(f, r->shape);
    fprintf(f, ",%d,%lld,%lld,%lld,%lld,", r->large, (long long)r->M, (long long)r->N, (long long)r->K,
            (long long)r->r);
    csv_text(f, r->format);
    fputc(',', f);
    csv_text(f, r->variant);
    fprintf(f, ",%s,%s,", fp4lr_bench_variant_name(r->kind), fp4lr_row_state_name(r->state));
    const double times[] = {r->t.median_ms, r->t.min_ms, r->t.max_ms, r->t.p10_ms, r->t.p90_ms};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        csv_num(f, t ? times[i] : NAN);
        fputc(',', f);
    }
    if (t)
        fprintf(f, "%d", r->t.reps);
    fputc(',', f);
    csv_num(f, t ? r->tflops : NAN);
    fputc(',', f);
    csv_num(f, r->ratio_bf16);
    fputc(',', f);
    csv_num(f, r->ratio_dense);
    fprintf(f, ",%d,%d,", r->copies, r->validated);
    if (r->validated)
        fprintf(f, "%d,%lld", r->pass, (long long)r->rows_checked);
    else
        fputc(',', f);
    const double val[] = {r->max_err, r->max_err_over_mag, r->tol_acc};
    for (size_t i = 0; i < sizeof val / sizeof val[0]; i++) {
        fputc(',', f);
        csv_num(f, r->validated ? val[i] : NAN);
    }
    fputc(',', f);
    if (r->has_plan) {
        const fp4lr_budget *b = &r->budget;
        csv_text(f, r->entry);
        fprintf(f, ",%d,%s,%d,", b->req.cluster, fp4lr_policy_name(b->req.policy), r->stages_main);
    } else {
        fputs(",,,,", f);
    }
    if (r->stages_solver > 0)
        fprintf(f, "%d", r->stages_solver);
    fprintf(f, ",%d,%d,", r->force_stages, r->sweep);
    if (r->has_plan)
        fprintf(f, "%d,%d,%lld,", r->budget.stages_lora, r->budget.lora_chunk, (long long)r->smem_bytes);
    else
        fputs(",,,", f);
    if (t)
        fprintf(f, "%d", r->rounds);
    fputc(',', f);
    csv_num(f, r->ratio_bf16_lo);
    fputc(',', f);
    csv_num(f, r->ratio_bf16_hi);
    fputc(',', f);
    if (r->timed_check >= 0)
        fprintf(f, "%d", r->timed_check);
    fputc(',', f);
    csv_num(f, t && r->t.host_ms > 0 ? r->t.host_ms : NAN);
    fputc(',', f);
    csv_text(f, r->note);
    fputc('\n', f);
    return ferror(f) ? fp4lr_fail(FP4LR_E_IO, "WRITE", "writing a CSV row failed") : fp4lr_ok();
}

/* ---- the terminal table ---------------------------------------------------------------------- */

#define TABLE_FMT "%-16s %6s %6s %6s %5s  %-20s %10s %7s %8s %8s %11s %8s %6s %6s %8s  %s\n"

void fp4lr_results_table_header(FILE *f)
{
    fprintf(f, TABLE_FMT, "shape", "M", "N", "K", "r", "variant", "median_ms", "host_us", "TFLOP/s", "vs_bf16",
            "bf16_rounds", "vs_dense", "stages", "lora", "smem_KiB", "validation");
}

/* A ratio cell: "0.950x", "invalid" for an invalid time, "-" when unknown. */
static void ratio_cell(char *out, size_t cap, const fp4lr_bench_row *r, double ratio)
{
    if (r->state == FP4LR_ROW_INVALID)
        snprintf(out, cap, "invalid");
    else if (timed(r) && isfinite(ratio))
        snprintf(out, cap, "%.3fx", ratio);
    else
        snprintf(out, cap, "-");
}

void fp4lr_results_table_row(FILE *f, const fp4lr_bench_row *r)
{
    char m[24], n[24], k[24], rank[24], med[24] = "-", host[24] = "-", tf[24] = "-", vbf[24], vdn[24];
    char st[32] = "-", lora[32] = "-", smem[24] = "-", val[320] = "-", spread[32] = "-";
    snprintf(m, sizeof m, "%lld", (long long)r->M);
    snprintf(n, sizeof n, "%lld", (long long)r->N);
    snprintf(k, sizeof k, "%lld", (long long)r->K);
    snprintf(rank, sizeof rank, "%lld", (long long)r->r);
    if (timed(r)) {
        snprintf(med, sizeof med, "%.4f", r->t.median_ms);
        snprintf(tf, sizeof tf, "%.1f", r->tflops);
        if (r->t.host_ms > 0) /* the host's time to enqueue one launch (timer.h) */
            snprintf(host, sizeof host, "%.1f", r->t.host_ms * 1e3);
    }
    ratio_cell(vbf, sizeof vbf, r, r->ratio_bf16);
    ratio_cell(vdn, sizeof vdn, r, r->ratio_dense);
    if (r->state == FP4LR_ROW_OK && isfinite(r->ratio_bf16_lo) && isfinite(r->ratio_bf16_hi))
        snprintf(spread, sizeof spread, "%.3f-%.3f", r->ratio_bf16_lo, r->ratio_bf16_hi);
    if (r->has_plan) {
        /* a forced count next to the solver's: "2/4" */
        if (r->force_stages && r->stages_solver > 0)
            snprintf(st, sizeof st, "%d/%d", r->stages_main, r->stages_solver);
        else
            snprintf(st, sizeof st, "%d", r->stages_main);
        if (r->budget.stages_lora > 0)
            snprintf(lora, sizeof lora, "%dx%d", r->budget.stages_lora, r->budget.lora_chunk);
        snprintf(smem, sizeof smem, "%.1f", (double)r->smem_bytes / 1024.0);
    }
    if (r->state == FP4LR_ROW_SKIPPED)
        snprintf(val, sizeof val, "skipped: %s", r->note);
    else if (r->state == FP4LR_ROW_FAILED)
        snprintf(val, sizeof val, "FAILED: %s", r->note);
    else if (r->validated)
        snprintf(val, sizeof val, "%s %.2g%s", r->pass && r->timed_check != 0 ? "PASS" : "FAIL", r->max_err_over_mag,
                 r->timed_check == 0 ? " (timed output wrong)" : r->timed_check == 1 ? " +timed" : "");
    else if (r->note[0])
        snprintf(val, sizeof val, "%s", r->note);
    fprintf(f, TABLE_FMT, r->shape, m, n, k, rank, r->variant, med, host, tf, vbf, spread, vdn, st, lora, smem, val);
}
