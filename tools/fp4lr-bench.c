/* fp4lr-bench: times fp4lr's dense kernel against cuBLASLt on the shape table.
 *
 * For each shape: fp4lr dense (r = 0) in each selected format - planned,
 * validated on sampled rows against the double reference, then timed with
 * input rotation - and cuBLASLt bf16 and fp8 on the same M, N, K, timed with
 * their own rotation.  Prints one fixed-width line per (shape, variant), the
 * geometric mean of the fp4lr / cuBLAS-bf16 ratios over the large shapes, and
 * appends the run's record to bench/results (results.h).  Without a GPU it
 * says so and lists what would run.  The method is in bench/README.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cli.h"
#include "compare.h"
#include "cublaslt.h"
#include "devproblem.h"
#include "gemm.h"
#include "plan.h"
#include "problem_gen.h"
#include "reference.h"
#include "results.h"
#include "rotate.h"
#include "timer.h"

#define PROG "fp4lr-bench"

typedef struct bench {
    const fp4lr_bench_opts *o;
    fp4lr_ctx *ctx;
    fp4lr_runtime rt;
    fp4lr_cublaslt *lt;                 /* NULL when the peers do not run */
    int peer_ok[FP4LR_PEER_KINDS];      /* the kind passed its self-check */
    char peer_why[FP4LR_PEER_KINDS][256]; /* why a kind does not run */
    FILE *csv;
    fp4lr_bench_row *rows;
    int nrows, cap;
    int step, steps;                    /* progress */
    int validation_failed, errors;
} bench;

static void say_status(const char *what, fp4lr_status st)
{
    fprintf(stderr, PROG ": %s: %s [%s%s%s]\n", what, st.msg, fp4lr_code_name(st.code), st.rule[0] ? " " : "",
            st.rule);
}

/* Copies src into dst (capacity cap), truncated to fit. */
static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void note(fp4lr_bench_row *row, fp4lr_status st) { copy_text(row->note, sizeof row->note, st.msg); }

/* A new row at the end of the list (NULL when memory is short). */
static fp4lr_bench_row *new_row(bench *b, const fp4lr_shape *s, const char *format, const char *variant)
{
    if (b->nrows == b->cap) {
        int cap = b->cap ? 2 * b->cap : 32;
        fp4lr_bench_row *rows = realloc(b->rows, sizeof *rows * (size_t)cap);
        if (!rows)
            return NULL;
        b->rows = rows, b->cap = cap;
    }
    fp4lr_bench_row *row = &b->rows[b->nrows++];
    fp4lr_bench_row_init(row, s->name, s->large, s->M, s->N, s->K, format, variant);
    return row;
}

static void progress(bench *b, const fp4lr_shape *s, const char *variant)
{
    fprintf(stderr, "[%d/%d] %s %s\n", ++b->step, b->steps, s->name, variant);
}

/* The problem fp4lr runs for a shape: dense, bf16 output, rows of Y padded to 16 bytes. */
static fp4lr_problem dense_problem(const fp4lr_shape *s, fp4lr_format f)
{
    fp4lr_problem p = {.M = s->M, .N = s->N, .K = s->K, .r = 0, .format = f, .out = FP4LR_OUT_BF16};
    p.ldY = (s->N + 7) / 8 * 8;
    fp4lr_problem_resolve(&p);
    return p;
}

static void record_plan(fp4lr_bench_row *row, const fp4lr_plan *plan)
{
    row->has_plan = 1;
    snprintf(row->entry, sizeof row->entry, "%s", plan->entry);
    row->stages_main = plan->budget.stages_main;
    row->smem_bytes = plan->budget.total_bytes;
    row->budget = plan->budget;
}

/* The variant name of fp4lr's dense kernel in a format. */
static const char *fp4lr_variant(fp4lr_format f) { return f == FP4LR_NVFP4 ? "fp4lr-nvfp4" : "fp4lr-mxfp4"; }

/* ---- fp4lr: plan, validate on sampled rows, time with rotation ------------------------- */

typedef struct host_side {
    fp4lr_pgen_problem host;
    int64_t rows[FP4LR_BENCH_VALIDATE_ROWS];
    int64_t nrows;
    double *ref, *mag;
} host_side;

/* Random inputs and the reference of the sampled rows. */
static fp4lr_status host_prepare(const fp4lr_problem *p, uint64_t seed, host_side *h)
{
    memset(h, 0, sizeof *h);
    if (fp4lr_pgen_alloc(&h->host, p))
        return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the host operands");
    fp4lr_pgen_fill(&h->host, seed, FP4LR_PGEN_SCALES_REALISTIC);
    int64_t want = p->M < FP4LR_BENCH_VALIDATE_ROWS ? p->M : FP4LR_BENCH_VALIDATE_ROWS;
    FP4LR_TRY(fp4lr_sample_rows(p->M, want, seed, h->rows, &h->nrows));
    h->ref = malloc(sizeof(double) * (size_t)(h->nrows * p->N));
    h->mag = malloc(sizeof(double) * (size_t)(h->nrows * p->N));
    if (!h->ref || !h->mag)
        return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the reference");
    return fp4lr_reference(&h->host.p, &h->host.a, h->rows, h->nrows, 0, h->ref, h->mag);
}

static void host_release(host_side *h)
{
    fp4lr_pgen_free(&h->host);
    free(h->ref);
    free(h->mag);
}

/* Runs copy 0 once on a poisoned output and compares the sampled rows. */
static fp4lr_status validate(bench *b, const fp4lr_plan *plan, fp4lr_devproblem *d, host_side *h,
                             fp4lr_bench_row *row)
{
    FP4LR_TRY(fp4lr_devproblem_poison(d));
    FP4LR_TRY(fp4lr_gemm(&b->rt, plan, &d->args, NULL));
    FP4LR_TRY(fp4lr_ctx_sync(b->ctx));
    FP4LR_TRY(fp4lr_devproblem_download(d, h->host.Y));
    fp4lr_compare_report rep;
    fp4lr_status cmp = fp4lr_compare(&h->host.p, h->host.Y, h->rows, h->nrows, h->ref, h->mag, &rep);
    if (cmp.code != FP4LR_OK && cmp.code != FP4LR_E_MISMATCH)
        return cmp;
    row->validated = 1;
    row->pass = cmp.code == FP4LR_OK;
    row->rows_checked = h->nrows;
    row->max_err = rep.max_err;
    row->max_err_over_mag = rep.max_err_over_mag;
    row->tol_acc = rep.tol_acc;
    if (!row->pass) {
        b->validation_failed = 1;
        fprintf(stderr, PROG ": %s %s: validation FAILED: %s\n", row->shape, row->variant, cmp.msg);
        fp4lr_compare_print(stderr, &rep);
    }
    return fp4lr_ok();
}

static fp4lr_status rotation_for(const fp4lr_ctx *ctx, size_t read, size_t copy, fp4lr_rotation *rot)
{
    size_t budget = 0;
    FP4LR_TRY(fp4lr_rotation_mem_budget(ctx, FP4LR_ROTATION_RESERVE_BYTES, &budget));
    *rot = fp4lr_rotation_plan(read, copy, (size_t)ctx->l2_bytes, budget);
    return fp4lr_ok();
}

static void run_fp4lr(bench *b, const fp4lr_shape *s, fp4lr_format f, fp4lr_bench_row *row)
{
    const fp4lr_bench_opts *o = b->o;
    fp4lr_problem p = dense_problem(s, f);
    fp4lr_plan_opts po = {.force_main_stages = o->force_stages};
    fp4lr_plan plan;
    fp4lr_status st = fp4lr_runtime_plan(&b->rt, &p, &po, &plan);
    if (st.code != FP4LR_OK) {
        note(row, st);
        b->errors++;
        return;
    }
    record_plan(row, &plan);

    host_side h;
    fp4lr_devproblem_ring ring = {0};
    fp4lr_rotation rot = {0};
    st = host_prepare(&plan.problem, o->seed, &h);
    if (st.code == FP4LR_OK) {
        size_t read, copy;
        fp4lr_problem_rotation_bytes(&h.host.sizes, &read, &copy);
        st = rotation_for(b->ctx, read, copy, &rot);
    }
    if (st.code == FP4LR_OK)
        st = fp4lr_devproblem_ring_create(b->ctx, &plan.problem, &h.host.a, rot.copies, &ring);
    if (st.code == FP4LR_OK)
        st = validate(b, &plan, &ring.copy[0], &h, row);
    if (st.code == FP4LR_OK) {
        fp4lr_ring_gemm g = {&b->rt, &plan, &ring};
        fp4lr_timing t;
        st = fp4lr_time(b->ctx, fp4lr_ring_gemm_timed, &g, o->warmup, o->iters, NULL, &t);
        if (st.code == FP4LR_OK)
            st = fp4lr_ctx_sync(b->ctx);
        if (st.code == FP4LR_OK) {
            fp4lr_bench_row_timed(row, &t, rot.copies);
            if (!row->pass) {
                row->state = FP4LR_ROW_INVALID;
                snprintf(row->note, sizeof row->note, "validation failed: time invalid");
            } else if (rot.limit != FP4LR_ROTATION_BY_L2) {
                snprintf(row->note, sizeof row->note, "rotation limited by %s", fp4lr_rotation_limit_name(rot.limit));
            }
        }
    }
    if (st.code != FP4LR_OK) {
        note(row, st);
        say_status(row->variant, st);
        b->errors++;
    }
    fp4lr_devproblem_ring_free(&ring);
    host_release(&h);
}

/* ---- the cuBLASLt peers ---------------------------------------------------------------- */

static void run_peer(bench *b, const fp4lr_shape *s, fp4lr_peer_kind k, fp4lr_bench_row *row)
{
    if (!b->peer_ok[k]) {
        row->state = FP4LR_ROW_SKIPPED;
        snprintf(row->note, sizeof row->note, "%s", b->peer_why[k]);
        return;
    }
    size_t read, copy;
    fp4lr_peer_bytes(k, s->M, s->N, s->K, &read, &copy);
    fp4lr_rotation rot;
    fp4lr_peer_gemm g;
    int created = 0;
    fp4lr_status st = rotation_for(b->ctx, read, copy, &rot);
    if (st.code == FP4LR_OK) {
        st = fp4lr_peer_gemm_create(b->lt, b->ctx, k, s->M, s->N, s->K, rot.copies, b->o->seed, &g);
        created = st.code == FP4LR_OK;
    }
    if (st.code == FP4LR_OK) {
        fp4lr_timing t;
        st = fp4lr_time(b->ctx, fp4lr_peer_gemm_timed, &g, b->o->warmup, b->o->iters, NULL, &t);
        if (st.code == FP4LR_OK)
            st = fp4lr_ctx_sync(b->ctx);
        if (st.code == FP4LR_OK) {
            fp4lr_bench_row_timed(row, &t, rot.copies);
            snprintf(row->note, sizeof row->note, "timed only%s%s",
                     rot.limit != FP4LR_ROTATION_BY_L2 ? "; rotation limited by " : "",
                     rot.limit != FP4LR_ROTATION_BY_L2 ? fp4lr_rotation_limit_name(rot.limit) : "");
        }
    }
    if (created)
        fp4lr_peer_gemm_destroy(&g);
    if (st.code != FP4LR_OK) {
        note(row, st);
        say_status(row->variant, st);
        /* A peer that has no kernel for the shape is a fact, not an error. */
        if (st.code != FP4LR_E_UNSUPPORTED)
            b->errors++;
    }
}

/* Opens cuBLASLt and self-checks each kind; fills run->peer_*. */
static void peers_open(bench *b, fp4lr_run_info *run)
{
    for (int k = 0; k < FP4LR_PEER_KINDS; k++)
        snprintf(b->peer_why[k], sizeof b->peer_why[k], "cuBLASLt unavailable");
    if (!b->o->peers) {
        snprintf(run->peer_status, sizeof run->peer_status, "disabled (--no-peers)");
        return;
    }
    fp4lr_status st = fp4lr_cublaslt_open(&b->lt);
    if (st.code == FP4LR_OK)
        st = fp4lr_cublaslt_init_handle(b->lt);
    if (st.code != FP4LR_OK) {
        printf("cuBLASLt: not available (%s); continuing without peers\n", st.msg);
        snprintf(run->peer_status, sizeof run->peer_status, "unavailable: %.480s", st.msg);
        if (b->lt)
            snprintf(run->peer_lib, sizeof run->peer_lib, "%s", b->lt->path);
        fp4lr_cublaslt_close(b->lt);
        b->lt = NULL;
        return;
    }
    snprintf(run->peer_lib, sizeof run->peer_lib, "%s", b->lt->path);
    run->peer_version = (long long)b->lt->version;
    printf("cuBLASLt: %s (version %zu)\n", b->lt->path, b->lt->version);
    run->peer_status[0] = '\0';
    for (int k = 0; k < FP4LR_PEER_KINDS; k++) {
        fp4lr_peer_check rep;
        st = fp4lr_peer_selfcheck(b->lt, b->ctx, (fp4lr_peer_kind)k, &rep);
        const char *name = fp4lr_peer_name((fp4lr_peer_kind)k);
        char line[400];
        if (st.code == FP4LR_OK) {
            b->peer_ok[k] = 1;
            snprintf(line, sizeof line, "%s self-check ok (%lld outputs, max err/mag %.2g)", name,
                     (long long)rep.checked, rep.max_err_over_mag);
        } else {
            snprintf(b->peer_why[k], sizeof b->peer_why[k], "self-check failed: %.200s", st.msg);
            snprintf(line, sizeof line, "%s self-check FAILED: %.300s", name, st.msg);
            /* A kind the device cannot run is reported; a wrong answer is an error. */
            if (st.code != FP4LR_E_UNSUPPORTED)
                b->errors++;
            say_status(name, st);
        }
        printf("cuBLASLt: %s\n", line);
        size_t used = strlen(run->peer_status);
        snprintf(run->peer_status + used, sizeof run->peer_status - used, "%s%s", used ? "; " : "", line);
    }
}

/* ---- one shape -------------------------------------------------------------------------- */

/* The ratio of each timed row of one shape against that shape's cuBLAS bf16 time. */
static void set_ratios(fp4lr_bench_row *rows, int n)
{
    const fp4lr_bench_row *ref = NULL;
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].variant, fp4lr_peer_name(FP4LR_PEER_BF16)) && rows[i].state == FP4LR_ROW_OK)
            ref = &rows[i];
    for (int i = 0; ref && i < n; i++)
        if ((rows[i].state == FP4LR_ROW_OK || rows[i].state == FP4LR_ROW_INVALID) && rows[i].t.median_ms > 0)
            rows[i].ratio_bf16 = ref->t.median_ms / rows[i].t.median_ms;
}

static int run_shape(bench *b, const fp4lr_shape *s)
{
    const fp4lr_bench_opts *o = b->o;
    int first = b->nrows;
    for (int f = FP4LR_NVFP4; f <= FP4LR_MXFP4; f++) {
        if (!(o->formats & 1 << f))
            continue;
        fp4lr_bench_row *row = new_row(b, s, fp4lr_format_name((fp4lr_format)f), fp4lr_variant((fp4lr_format)f));
        if (!row)
            return -1;
        if (!fp4lr_bench_format_fits(s, (fp4lr_format)f)) {
            row->state = FP4LR_ROW_SKIPPED;
            snprintf(row->note, sizeof row->note, "K=%lld is not a multiple of %d", (long long)s->K,
                     fp4lr_format_k_multiple((fp4lr_format)f));
            continue;
        }
        progress(b, s, row->variant);
        run_fp4lr(b, s, (fp4lr_format)f, row);
    }
    for (int k = 0; o->peers && k < FP4LR_PEER_KINDS; k++) {
        fp4lr_bench_row *row = new_row(b, s, fp4lr_peer_format((fp4lr_peer_kind)k),
                                       fp4lr_peer_name((fp4lr_peer_kind)k));
        if (!row)
            return -1;
        if (b->peer_ok[k])
            progress(b, s, row->variant);
        run_peer(b, s, (fp4lr_peer_kind)k, row);
    }
    set_ratios(&b->rows[first], b->nrows - first);
    for (int i = first; i < b->nrows; i++) {
        fp4lr_results_table_row(stdout, &b->rows[i]);
        if (b->csv)
            fp4lr_results_csv_row(b->csv, &b->rows[i]);
    }
    fflush(stdout);
    if (b->csv)
        fflush(b->csv);
    return 0;
}

/* ---- summary ------------------------------------------------------------------------------ */

/* The geometric means printed and recorded: every fp4lr format run, and cuBLAS fp8. */
static int geomeans(const bench *b, fp4lr_bench_geomean *geo)
{
    int n = 0;
    for (int f = FP4LR_NVFP4; f <= FP4LR_MXFP4; f++)
        if (b->o->formats & 1 << f)
            geo[n++] = fp4lr_bench_geomean_of(b->rows, b->nrows, fp4lr_variant((fp4lr_format)f));
    if (b->o->peers)
        geo[n++] = fp4lr_bench_geomean_of(b->rows, b->nrows, fp4lr_peer_name(FP4LR_PEER_FP8));
    return n;
}

static void print_geomeans(const fp4lr_bench_geomean *geo, int n)
{
    printf("geometric mean of the ratio vs cuBLAS bf16 over the large shapes (same run):\n");
    for (int i = 0; i < n; i++) {
        if (geo[i].shapes == 0)
            printf("  %-12s -      (no large shape with a valid ratio", geo[i].variant);
        else
            printf("  %-12s %.3fx (%d shapes", geo[i].variant, geo[i].value, geo[i].shapes);
        if (geo[i].missing)
            printf("; %d large shapes without a valid ratio", geo[i].missing);
        printf(")\n");
    }
}

/* ---- without a GPU: what would run ------------------------------------------------------------ */

static int dry_run(const fp4lr_bench_opts *o, fp4lr_status gpu)
{
    printf("no GPU: %s\n", gpu.msg);
    fp4lr_cublaslt *lt = NULL;
    char peers[640] = "disabled (--no-peers)";
    if (o->peers) {
        fp4lr_status st = fp4lr_cublaslt_open(&lt);
        if (st.code == FP4LR_OK)
            snprintf(peers, sizeof peers, "cuBLASLt found: %s (version %zu)", lt->path, lt->version);
        else
            snprintf(peers, sizeof peers, "cuBLASLt not available: %.600s", st.msg);
        fp4lr_cublaslt_close(lt);
    }
    printf("peers: %s\n", peers);
    printf("would run (sm_90a plans; %d timed launches after %d warm-up, %d validated rows; nothing is timed here):\n",
           o->iters, o->warmup, FP4LR_BENCH_VALIDATE_ROWS);
    fp4lr_results_table_header(stdout);
    for (int i = 0; i < o->nshapes; i++) {
        const fp4lr_shape *s = &o->shapes[i];
        for (int f = FP4LR_NVFP4; f <= FP4LR_MXFP4; f++) {
            if (!(o->formats & 1 << f))
                continue;
            fp4lr_bench_row row;
            fp4lr_bench_row_init(&row, s->name, s->large, s->M, s->N, s->K, fp4lr_format_name((fp4lr_format)f),
                                 fp4lr_variant((fp4lr_format)f));
            row.state = FP4LR_ROW_SKIPPED;
            if (!fp4lr_bench_format_fits(s, (fp4lr_format)f)) {
                snprintf(row.note, sizeof row.note, "K=%lld is not a multiple of %d", (long long)s->K,
                         fp4lr_format_k_multiple((fp4lr_format)f));
            } else {
                fp4lr_problem p = dense_problem(s, (fp4lr_format)f);
                fp4lr_plan_opts po = {.force_main_stages = o->force_stages};
                fp4lr_plan plan;
                fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, &po, &plan);
                if (st.code == FP4LR_OK) {
                    record_plan(&row, &plan);
                    snprintf(row.note, sizeof row.note, "no GPU (kernel %s)", plan.entry);
                } else {
                    row.state = FP4LR_ROW_FAILED;
                    note(&row, st);
                }
            }
            fp4lr_results_table_row(stdout, &row);
        }
        for (int k = 0; o->peers && k < FP4LR_PEER_KINDS; k++) {
            fp4lr_bench_row row;
            fp4lr_bench_row_init(&row, s->name, s->large, s->M, s->N, s->K, fp4lr_peer_format((fp4lr_peer_kind)k),
                                 fp4lr_peer_name((fp4lr_peer_kind)k));
            row.state = FP4LR_ROW_SKIPPED;
            snprintf(row.note, sizeof row.note, "no GPU");
            fp4lr_results_table_row(stdout, &row);
        }
    }
    return 0;
}

/* ---- main -------------------------------------------------------------------------------------- */

static int count_steps(const fp4lr_bench_opts *o, const bench *b)
{
    int n = 0;
    for (int i = 0; i < o->nshapes; i++) {
        for (int f = FP4LR_NVFP4; f <= FP4LR_MXFP4; f++)
            n += (o->formats & 1 << f) && fp4lr_bench_format_fits(&o->shapes[i], (fp4lr_format)f);
        for (int k = 0; o->peers && k < FP4LR_PEER_KINDS; k++)
            n += b->peer_ok[k];
    }
    return n;
}

static int measure(const fp4lr_bench_opts *o, fp4lr_ctx *ctx, fp4lr_run_info *run)
{
    bench b = {.o = o, .ctx = ctx};
    fp4lr_run_info_device(run, ctx);
    printf("device: %s (cc %d.%d, %d SMs, L2 %d KiB, clock %d MHz, memory clock %d MHz, driver %d)\n", ctx->name,
           ctx->cc_major, ctx->cc_minor, ctx->sm_count, ctx->l2_bytes / 1024, ctx->clock_khz / 1000,
           ctx->mem_clock_khz / 1000, ctx->driver_version);
    if (o->csv) {
        b.csv = fopen(o->csv, "w");
        if (!b.csv) {
            fprintf(stderr, PROG ": cannot open %s for writing\n", o->csv);
            return 3;
        }
        fp4lr_results_csv_header(b.csv);
    }
    fp4lr_status st = fp4lr_runtime_init(&b.rt, ctx, NULL);
    if (st.code != FP4LR_OK) {
        say_status("runtime", st);
        if (b.csv)
            fclose(b.csv);
        return 3;
    }
    peers_open(&b, run);
    b.steps = count_steps(o, &b);
    printf("method: %d warm-up + %d timed launches per variant, CUDA events, median; inputs rotated over copies "
           "> %dx L2 (at most %d); fp4lr validated on %d sampled rows first\n",
           o->warmup, o->iters, FP4LR_ROTATION_L2_FACTOR, FP4LR_ROTATION_MAX_COPIES, FP4LR_BENCH_VALIDATE_ROWS);

    fp4lr_nvidia_smi_query(run->smi_before, sizeof run->smi_before);
    if (run->smi_before[0])
        printf("nvidia-smi before (sm clock, mem clock, temperature, power): %s\n", run->smi_before);
    fp4lr_results_table_header(stdout);
    for (int i = 0; i < o->nshapes; i++)
        if (run_shape(&b, &o->shapes[i])) {
            fprintf(stderr, PROG ": out of host memory for the result rows\n");
            b.errors++;
            break;
        }
    fp4lr_nvidia_smi_query(run->smi_after, sizeof run->smi_after);
    if (run->smi_after[0])
        printf("nvidia-smi after: %s\n", run->smi_after);

    fp4lr_bench_geomean geo[3];
    int ngeo = geomeans(&b, geo);
    print_geomeans(geo, ngeo);

    if (o->json) {
        char path[1024];
        st = fp4lr_results_append(o->results_dir, run, b.rows, b.nrows, geo, ngeo, path, sizeof path);
        if (st.code == FP4LR_OK) {
            printf("results: appended to %s\n", path);
        } else {
            say_status("results", st);
            b.errors++;
        }
    }
    if (b.csv && fclose(b.csv) != 0) {
        fprintf(stderr, PROG ": writing %s failed\n", o->csv);
        b.errors++;
    }
    fp4lr_cublaslt_close(b.lt);
    fp4lr_runtime_release(&b.rt);
    free(b.rows);
    /* A failed validation outranks other errors: a wrong result must not hide behind one. */
    return b.validation_failed ? 1 : b.errors ? 3 : 0;
}

int main(int argc, char **argv)
{
    fp4lr_bench_opts o;
    char err[512];
    if (fp4lr_bench_opts_parse(argc, argv, &o, err, sizeof err)) {
        fprintf(stderr, PROG ": %s (see --help)\n", err);
        return 2;
    }
    if (o.help) {
        fp4lr_bench_usage(stdout);
        return 0;
    }
    if (o.list_shapes) {
        for (int s = 0; s < fp4lr_num_shapes; s++)
            printf("%-14s %-11s M=%-6lld N=%-6lld K=%-6lld r=%-4lld%s\n", fp4lr_shapes[s].name, fp4lr_shapes[s].family,
                   (long long)fp4lr_shapes[s].M, (long long)fp4lr_shapes[s].N, (long long)fp4lr_shapes[s].K,
                   (long long)fp4lr_shapes[s].r, fp4lr_shapes[s].large ? "  large" : "");
        return 0;
    }
    for (int i = 0; i < o.ndups; i++)
        printf("note: %s has the M, N, K of %s (the dense kernel ignores r): measured once\n", o.dups[i].dropped,
               o.dups[i].kept);

    fp4lr_run_info run;
    memset(&run, 0, sizeof run);
    fp4lr_run_info_capture(&run, argc, argv);
    run.iters = o.iters, run.warmup = o.warmup, run.seed = (unsigned long long)o.seed;
    run.force_stages = o.force_stages, run.validate_rows = FP4LR_BENCH_VALIDATE_ROWS;

    fp4lr_ctx *ctx = NULL;
    fp4lr_status gpu = fp4lr_ctx_create(0, &ctx);
    if (gpu.code == FP4LR_E_NO_DRIVER || gpu.code == FP4LR_E_NO_DEVICE || gpu.code == FP4LR_E_DRIVER_TOO_OLD)
        return dry_run(&o, gpu);
    if (gpu.code != FP4LR_OK) {
        say_status("device", gpu);
        return 3;
    }
    int rc = measure(&o, ctx, &run);
    fp4lr_ctx_destroy(ctx);
    return rc;
}
