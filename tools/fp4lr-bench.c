/* fp4lr-bench: times fp4lr's kernels against cuBLASLt on the shape table.
 *
 * The options become a list of jobs (bench_cli.h): per shape and format the
 * dense kernel on one CTA, the 2-CTA pair, on sm_100a the naive-policy pair,
 * and the whole operator (fused) - each at the solver's main stage count, or
 * at every count of --sweep-stages - then cuBLASLt bf16 and fp8 on the same
 * M, N, K.  Every fp4lr job is validated on sampled rows against the double
 * reference, then timed with input rotation, in rounds in which a shape's jobs
 * take turns, and its timed output is checked again; the jobs of one shape
 * that run one problem share its inputs, reference and device copies.  One
 * fixed-width line per job is printed as each shape completes, then the
 * geometric means, and the run's record is appended to bench/results
 * (results.h).  Without a GPU it says so and lists the jobs with their plans.
 * The method is in bench/README.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cli.h"
#include "cli_paths.h"
#include "compare.h"
#include "cublaslt.h"
#include "devproblem.h"
#include "gemm.h"
#include "plan.h"
#include "problem_gen.h"
#include "reference.h"
#include "results.h"
#include "rotate.h"
#include "samples.h"
#include "timer.h"

#define PROG "fp4lr-bench"

/* The host side of a generated problem: operands and the reference of the sampled rows. */
typedef struct host_side {
    fp4lr_pgen_problem host;
    int64_t rows[FP4LR_BENCH_VALIDATE_ROWS];
    int64_t nrows;
    double *ref, *mag;
} host_side;

/* One generated problem, its sampled reference and its rotation copies on the
 * device, shared by the jobs of one shape that run it (a format's dense
 * variants and their stage points; the fused variant's). */
typedef struct workload {
    int ready;                 /* prepared; st says how that went */
    fp4lr_problem p;           /* the (resolved) problem it holds */
    host_side h;
    fp4lr_rotation rot;
    fp4lr_devproblem_ring ring;
    fp4lr_status st;
} workload;

/* A shape's problems live while its rows take turns: one per format and fused-ness. */
#define MAX_WORKLOADS 8

/* What one job holds across the rounds of its shape. */
typedef struct job_state {
    int live;                  /* started, no error since */
    workload *w;               /* fp4lr jobs */
    fp4lr_peer_gemm peer;      /* peer jobs */
    int peer_made;
    fp4lr_rotation rot;        /* peer jobs' rotation */
    double *ms;                /* rounds x iters launch times */
    double t0[FP4LR_BENCH_MAX_ROUNDS]; /* host wall clock at each round's first enqueue (--samples) */
    double host_ms[FP4LR_BENCH_MAX_ROUNDS]; /* each round's host time per enqueued launch (warm-up) */
} job_state;

typedef struct bench {
    const fp4lr_bench_opts *o;
    fp4lr_ctx *ctx;
    fp4lr_runtime rt;
    fp4lr_cublaslt *lt;                   /* NULL when the peers do not run */
    int peer_ok[FP4LR_PEER_KINDS];        /* the kind passed its self-check */
    char peer_why[FP4LR_PEER_KINDS][256]; /* why a kind does not run */
    FILE *csv;
    FILE *samples;                        /* --samples: every timed launch */
    fp4lr_bench_jobs jobs;
    workload w[MAX_WORKLOADS];
    CUstream stream;                      /* where the timed launches go: NULL (legacy) or --stream own's */
    int step, steps;                      /* progress */
    int validation_failed, errors, refused; /* refused: rows whose plan the options ask what it refuses */
} bench;

static void say_status(const char *what, fp4lr_status st)
{
    fprintf(stderr, PROG ": %s: %s [%s%s%s]\n", what, st.msg, fp4lr_code_name(st.code), st.rule[0] ? " " : "",
            st.rule);
}

/* The row's note: the status message, cut to fit. */
static void note(fp4lr_bench_row *row, fp4lr_status st) { snprintf(row->note, sizeof row->note, "%.255s", st.msg); }

/* Appends "; text" (or text) to the row's note. */
static void note_add(fp4lr_bench_row *row, const char *text)
{
    const size_t n = strlen(row->note);
    snprintf(row->note + n, sizeof row->note - n, "%s%s", n ? "; " : "", text);
}

static void progress(bench *b, const fp4lr_bench_row *row, int round)
{
    fprintf(stderr, "[%d/%d] %s %s", ++b->step, b->steps, row->shape, row->variant);
    if (row->has_plan && row->force_stages)
        fprintf(stderr, " stages %d/%d", row->stages_main, row->stages_solver);
    if (b->o->rounds > 1)
        fprintf(stderr, " (round %d/%d)", round + 1, b->o->rounds);
    fputc('\n', stderr);
}

/* ---- the problems a shape's jobs share ------------------------------------------------------ */

/* Random inputs and the reference of the sampled rows. */
static fp4lr_status host_prepare(const fp4lr_problem *p, uint64_t seed, fp4lr_pgen_scales scales, host_side *h)
{
    memset(h, 0, sizeof *h);
    if (fp4lr_pgen_alloc(&h->host, p))
        return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "cannot allocate the host operands");
    fp4lr_pgen_fill(&h->host, seed, scales);
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

static fp4lr_status rotation_for(const fp4lr_ctx *ctx, size_t read, size_t copy, fp4lr_rotation *rot)
{
    size_t budget = 0;
    FP4LR_TRY(fp4lr_rotation_mem_budget(ctx, FP4LR_ROTATION_RESERVE_BYTES, &budget));
    *rot = fp4lr_rotation_plan(read, copy, (size_t)ctx->l2_bytes, budget);
    return fp4lr_ok();
}

static int same_problem(const fp4lr_problem *a, const fp4lr_problem *b)
{
    return a->M == b->M && a->N == b->N && a->K == b->K && a->r == b->r && a->format == b->format &&
           a->out == b->out && a->ldL == b->ldL && a->ldU == b->ldU && a->ldY == b->ldY && a->has_wc == b->has_wc &&
           a->has_beta == b->has_beta;
}

static void workload_release(workload *w)
{
    if (w->ready) {
        fp4lr_devproblem_ring_free(&w->ring);
        host_release(&w->h);
    }
    memset(w, 0, sizeof *w);
}

static void workloads_release(bench *b)
{
    for (int i = 0; i < MAX_WORKLOADS; i++)
        workload_release(&b->w[i]);
}

/* The workload of problem p: the one that holds it, else a new one in a free
 * place; none free is an error (rule BENCH_WORKLOADS: a shape's jobs hold their
 * workloads until the shape is done, run_shape). */
static fp4lr_status workload_for(bench *b, const fp4lr_problem *p, workload **out)
{
    workload *w = NULL;
    for (int i = 0; i < MAX_WORKLOADS && !w; i++)
        if (b->w[i].ready && same_problem(&b->w[i].p, p))
            w = &b->w[i];
    if (w) {
        *out = w;
        return w->st;
    }
    for (int i = 0; i < MAX_WORKLOADS && !w; i++)
        if (!b->w[i].ready)
            w = &b->w[i];
    if (!w) {
        *out = NULL;
        return fp4lr_fail(FP4LR_E_NOMEM, "BENCH_WORKLOADS", "more than %d problems in one shape", MAX_WORKLOADS);
    }
    *out = w;
    w->ready = 1;
    w->p = *p;
    w->st = host_prepare(p, b->o->seed, b->o->small_scales ? FP4LR_PGEN_SCALES_SMALL : FP4LR_PGEN_SCALES_REALISTIC,
                         &w->h);
    if (w->st.code == FP4LR_OK) {
        size_t read, copy;
        fp4lr_problem_rotation_bytes(&w->h.host.sizes, &read, &copy);
        w->st = rotation_for(b->ctx, read, copy, &w->rot);
    }
    if (w->st.code == FP4LR_OK)
        w->st = fp4lr_devproblem_ring_create(b->ctx, p, &w->h.host.a, w->rot.copies, &w->ring);
    return w->st;
}

/* ---- fp4lr: validate on sampled rows, time with rotation ------------------------------------ */

/* Compares copy d's output with the sampled reference: into *pass and rep. */
static fp4lr_status compare_copy(fp4lr_devproblem *d, host_side *h, int *pass, fp4lr_compare_report *rep,
                                 fp4lr_status *why)
{
    FP4LR_TRY(fp4lr_devproblem_download(d, h->host.Y));
    fp4lr_status cmp = fp4lr_compare(&h->host.p, h->host.Y, h->rows, h->nrows, h->ref, h->mag, rep);
    if (cmp.code != FP4LR_OK && cmp.code != FP4LR_E_MISMATCH)
        return cmp;
    *pass = cmp.code == FP4LR_OK;
    *why = cmp;
    return fp4lr_ok();
}

/* Runs copy 0 once on a poisoned output and compares the sampled rows. */
static fp4lr_status validate(bench *b, const fp4lr_plan *plan, fp4lr_devproblem *d, host_side *h,
                             fp4lr_bench_row *row)
{
    FP4LR_TRY(fp4lr_devproblem_poison(d));
    FP4LR_TRY(fp4lr_gemm(&b->rt, plan, &d->args, NULL));
    FP4LR_TRY(fp4lr_ctx_sync(b->ctx));
    fp4lr_compare_report rep;
    fp4lr_status why;
    int pass = 0;
    FP4LR_TRY(compare_copy(d, h, &pass, &rep, &why));
    row->validated = 1;
    row->pass = pass;
    row->rows_checked = h->nrows;
    row->max_err = rep.max_err;
    row->max_err_over_mag = rep.max_err_over_mag;
    row->tol_acc = rep.tol_acc;
    if (!row->pass) {
        b->validation_failed = 1;
        fprintf(stderr, PROG ": %s %s: validation FAILED: %s\n", row->shape, row->variant, why.msg);
        fp4lr_compare_print(stderr, &rep);
    }
    return fp4lr_ok();
}

/* A sweep loads many kernels: start a fresh runtime rather than overflow it (init
 * fails only on NULL arguments). */
static void runtime_room(bench *b)
{
    if (b->rt.nkernels == FP4LR_RUNTIME_MAX_KERNELS) {
        fp4lr_runtime_release(&b->rt);
        (void)fp4lr_runtime_init(&b->rt, b->ctx, NULL);
    }
}

/* A job's failure: its note, the error count (no kernel for the device or the
 * configuration is a fact of the build: a skipped row). */
static void job_failed(bench *b, job_state *js, fp4lr_bench_row *row, fp4lr_status st)
{
    js->live = 0;
    note(row, st);
    if (st.code == FP4LR_E_UNSUPPORTED) {
        row->state = FP4LR_ROW_SKIPPED;
    } else {
        row->state = FP4LR_ROW_FAILED;
        say_status(row->variant, st);
        b->errors++;
    }
}

static void fp4lr_start(bench *b, const fp4lr_bench_job *job, fp4lr_bench_row *row, job_state *js)
{
    runtime_room(b);
    fp4lr_status st = workload_for(b, &job->plan.problem, &js->w);
    if (st.code == FP4LR_OK)
        st = validate(b, &job->plan, &js->w->ring.copy[0], &js->w->h, row);
    if (st.code != FP4LR_OK)
        job_failed(b, js, row, st);
    else
        js->live = 1;
}

/* The output of the job's last timed launch against the reference, right after its last
 * round (a later job of the shape may share the workload and overwrite the copies): into
 * row->timed_check.  --plant-fault timed makes one output NaN first (the self-test). */
static fp4lr_status timed_check(bench *b, fp4lr_bench_row *row, workload *w)
{
    const int last = fp4lr_rotation_index(b->o->warmup + b->o->iters - 1, w->ring.n);
    fp4lr_devproblem *d = &w->ring.copy[last];
    if (b->o->plant_timed_fault) {
        /* all-ones bytes, a NaN in every output type, at the first sampled row */
        const int ob = fp4lr_out_bytes(d->p.out);
        FP4LR_CU(b->ctx->drv,
                 b->ctx->drv->cuMemsetD8(d->Y + (CUdeviceptr)(w->h.rows[0] * d->p.ldY * ob), 0xFF, (size_t)ob));
    }
    fp4lr_compare_report rep;
    fp4lr_status why;
    int pass = 0;
#if defined FP4LR_MEASURE_NOPREP || defined FP4LR_MEASURE_TINYPREP
    /* the measurement builds that prepare an operand once or in part (host/gemm.c,
     * host/sm90a_wprep.c): their timed launches read a stale prepared operand, so their
     * output is wrong by design and not checked */
    fprintf(stderr, PROG ": %s %s: a FP4LR_MEASURE_*PREP build: the timed output is not checked\n", row->shape,
            row->variant);
    row->timed_check = 1;
    return fp4lr_ok();
#endif
    FP4LR_TRY(compare_copy(d, &w->h, &pass, &rep, &why));
    row->timed_check = pass;
    if (!pass) {
        b->validation_failed = 1;
        fprintf(stderr, PROG ": %s %s: the output of the timed launches is WRONG: %s\n", row->shape, row->variant,
                why.msg);
        fp4lr_compare_print(stderr, &rep);
    }
    return fp4lr_ok();
}

/* One round: warm-up, then iters timed launches into js->ms.  The last round poisons
 * every copy's output first and checks the timed output after (timed_check). */
static void fp4lr_round(bench *b, const fp4lr_bench_job *job, fp4lr_bench_row *row, job_state *js, int round)
{
    runtime_room(b);
    workload *w = js->w;
    const int last_round = round == b->o->rounds - 1;
    fp4lr_status st = fp4lr_ok();
    if (last_round)
        for (int c = 0; c < w->ring.n && st.code == FP4LR_OK; c++)
            st = fp4lr_devproblem_poison(&w->ring.copy[c]);
    if (st.code == FP4LR_OK) {
        fp4lr_ring_gemm g = {&b->rt, &job->plan, &w->ring};
        fp4lr_timing t;
        js->t0[round] = fp4lr_samples_now();
        st = fp4lr_time_samples(b->ctx, fp4lr_ring_gemm_timed, &g, b->o->warmup, b->o->iters, b->stream, &t,
                                js->ms + (size_t)round * (size_t)b->o->iters);
        js->host_ms[round] = t.host_ms;
    }
    if (st.code == FP4LR_OK)
        st = fp4lr_ctx_sync(b->ctx);
    if (st.code == FP4LR_OK && last_round)
        st = timed_check(b, row, w);
    if (st.code != FP4LR_OK)
        job_failed(b, js, row, st);
}

/* The row's host time per launch (the rounds' warm-ups), and a note when the host may have
 * paced the timed launches: then the median is the host's, not the kernel's. */
static void host_note(const bench *b, fp4lr_bench_row *row, const job_state *js)
{
    if (!fp4lr_bench_row_host(row, js->host_ms, b->o->rounds))
        return;
    char t[128];
    snprintf(t, sizeof t, "host-bound? enqueueing a launch took %.1f us, the median launch %.1f us",
             row->t.host_ms * 1e3, row->t.median_ms * 1e3);
    note_add(row, t);
}

/* After the rounds: the pooled timing; the time is invalid when either check failed. */
static void fp4lr_finish(bench *b, const fp4lr_bench_job *job, fp4lr_bench_row *row, job_state *js)
{
    workload *w = js->w;
    fp4lr_status st = fp4lr_bench_row_timed_rounds(row, js->ms, b->o->rounds, b->o->iters, w->rot.copies);
    if (st.code != FP4LR_OK) {
        job_failed(b, js, row, st);
        return;
    }
    if (!row->pass || row->timed_check != 1) {
        row->state = FP4LR_ROW_INVALID;
        snprintf(row->note, sizeof row->note, "validation failed: time invalid");
        return;
    }
    if (w->rot.limit != FP4LR_ROTATION_BY_L2) {
        char t[64];
        snprintf(t, sizeof t, "rotation limited by %s", fp4lr_rotation_limit_name(w->rot.limit));
        note_add(row, t);
    }
    if (job->plan.pdl) /* the entry does not say how it was launched */
        note_add(row, "programmatic dependent of its preparation");
    host_note(b, row, js);
}

/* ---- the cuBLASLt peers ---------------------------------------------------------------- */

static void peer_start(bench *b, const fp4lr_shape *s, fp4lr_peer_kind k, fp4lr_bench_row *row, job_state *js)
{
    size_t read, copy;
    fp4lr_peer_bytes(k, s->M, s->N, s->K, &read, &copy);
    fp4lr_status st = rotation_for(b->ctx, read, copy, &js->rot);
    if (st.code == FP4LR_OK)
        st = fp4lr_peer_gemm_create(b->lt, b->ctx, k, s->M, s->N, s->K, js->rot.copies, b->o->seed, &js->peer);
    js->peer_made = st.code == FP4LR_OK;
    if (st.code != FP4LR_OK)
        job_failed(b, js, row, st); /* a peer without a kernel for the shape: skipped, not an error */
    else
        js->live = 1;
}

static void peer_round(bench *b, fp4lr_bench_row *row, job_state *js, int round)
{
    fp4lr_timing t;
    js->t0[round] = fp4lr_samples_now();
    fp4lr_status st = fp4lr_time_samples(b->ctx, fp4lr_peer_gemm_timed, &js->peer, b->o->warmup, b->o->iters,
                                         b->stream, &t, js->ms + (size_t)round * (size_t)b->o->iters);
    js->host_ms[round] = t.host_ms;
    if (st.code == FP4LR_OK)
        st = fp4lr_ctx_sync(b->ctx);
    if (st.code != FP4LR_OK)
        job_failed(b, js, row, st);
}

static void peer_finish(bench *b, fp4lr_bench_row *row, job_state *js)
{
    fp4lr_status st = fp4lr_bench_row_timed_rounds(row, js->ms, b->o->rounds, b->o->iters, js->rot.copies);
    if (st.code != FP4LR_OK) {
        job_failed(b, js, row, st);
        return;
    }
    snprintf(row->note, sizeof row->note, "timed only%s%s",
             js->rot.limit != FP4LR_ROTATION_BY_L2 ? "; rotation limited by " : "",
             js->rot.limit != FP4LR_ROTATION_BY_L2 ? fp4lr_rotation_limit_name(js->rot.limit) : "");
    host_note(b, row, js);
}

/* Opens cuBLASLt and self-checks each kind; fills run->peer_*. */
static void peers_open(bench *b, fp4lr_run_info *run)
{
    for (int k = 0; k < FP4LR_PEER_KINDS; k++)
        snprintf(b->peer_why[k], sizeof b->peer_why[k], "cuBLASLt unavailable");
    if (!(b->o->variants & FP4LR_BENCH_BIT(FP4LR_BENCH_PEERS))) {
        snprintf(run->peer_status, sizeof run->peer_status, "not selected (--no-peers or --variants)");
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

/* ---- the jobs -------------------------------------------------------------------------------- */

/* Prints the rows [first, last) of one shape, ratios set over every row so far. */
static void print_shape(bench *b, int first, int last)
{
    fp4lr_bench_set_ratios(b->jobs.row, last);
    for (int i = first; i < last; i++) {
        fp4lr_results_table_row(stdout, &b->jobs.row[i]);
        if (b->csv)
            fp4lr_results_csv_row(b->csv, &b->jobs.row[i]);
    }
    fflush(stdout);
    if (b->csv)
        fflush(b->csv);
}

/* --preheat: the shape's first live row runs untimed, in batches of launches, until
 * preheat_ms of wall time have passed.  A shape's set-up (inputs, the CPU reference,
 * validation) leaves the card idle for a second or more; without this, the first rows of
 * round 1 run at the clock of an idle card until the driver lowers it to the power cap
 * (~100 ms: bench/README.md, "The power cap"), and the first row of every shape gains. */
static void preheat(bench *b, int first, int n, job_state *js)
{
    const fp4lr_bench_jobs *J = &b->jobs;
    int i = 0;
    while (i < n && !js[i].live)
        i++;
    if (b->o->preheat_ms <= 0 || i == n)
        return;
    const fp4lr_bench_job *job = &J->job[first + i];
    runtime_room(b);
    fp4lr_ring_gemm g = {&b->rt, &job->plan, js[i].w ? &js[i].w->ring : NULL};
    const int peer = job->variant == FP4LR_BENCH_PEERS;
    const double end = fp4lr_samples_now() + 1e-3 * b->o->preheat_ms;
    fp4lr_status st = fp4lr_ok();
    for (int k = 0; st.code == FP4LR_OK && fp4lr_samples_now() < end;) {
        for (int j = 0; j < 16 && st.code == FP4LR_OK; j++, k++)
            st = peer ? fp4lr_peer_gemm_timed(&js[i].peer, k, b->stream) : fp4lr_ring_gemm_timed(&g, k, b->stream);
        if (st.code == FP4LR_OK)
            st = fp4lr_ctx_sync(b->ctx);
    }
    if (st.code != FP4LR_OK)
        job_failed(b, &js[i], &J->row[first + i], st);
}

/* The jobs [first, last) of one shape: each is set up once (fp4lr: validated);
 * then the first live job preheats the card (--preheat); then, round after round, every
 * live job is timed in turn - forward in even
 * rounds, backward in odd ones, so that no row always follows the same
 * neighbour -; then each row gets its pooled time, and the fp4lr rows the check
 * of their timed output.  Their problems and the peers' copies live until the
 * shape is done. */
static void run_shape(bench *b, int first, int last, double *ms)
{
    const fp4lr_bench_jobs *J = &b->jobs;
    const int rounds = b->o->rounds, n = last - first;
    job_state js[n > 0 ? n : 1];
    memset(js, 0, sizeof js);
    for (int i = 0; i < n; i++) {
        const fp4lr_bench_job *job = &J->job[first + i];
        fp4lr_bench_row *row = &J->row[first + i];
        js[i].ms = ms + (size_t)i * (size_t)rounds * (size_t)b->o->iters;
        b->errors += job->plan_error && !job->plan_refused;
        b->refused += job->plan_refused;
        if (!job->runnable)
            continue;
        if (job->variant != FP4LR_BENCH_PEERS) {
            fp4lr_start(b, job, row, &js[i]);
        } else if (!b->peer_ok[job->peer]) {
            row->state = FP4LR_ROW_SKIPPED;
            snprintf(row->note, sizeof row->note, "%s", b->peer_why[job->peer]);
        } else {
            peer_start(b, job->shape, (fp4lr_peer_kind)job->peer, row, &js[i]);
        }
    }
    preheat(b, first, n, js);
    for (int round = 0; round < rounds; round++)
        for (int k = 0; k < n; k++) {
            const int i = round % 2 ? n - 1 - k : k;
            const fp4lr_bench_job *job = &J->job[first + i];
            fp4lr_bench_row *row = &J->row[first + i];
            if (!js[i].live)
                continue;
            progress(b, row, round);
            if (job->variant == FP4LR_BENCH_PEERS)
                peer_round(b, row, &js[i], round);
            else
                fp4lr_round(b, job, row, &js[i], round);
        }
    for (int i = 0; i < n; i++) {
        if (js[i].live) {
            if (J->job[first + i].variant == FP4LR_BENCH_PEERS)
                peer_finish(b, &J->row[first + i], &js[i]);
            else
                fp4lr_finish(b, &J->job[first + i], &J->row[first + i], &js[i]);
        }
        const fp4lr_bench_row *row = &J->row[first + i];
        if (b->samples && (row->state == FP4LR_ROW_OK || row->state == FP4LR_ROW_INVALID))
            fp4lr_samples_row(b->samples, row, js[i].ms, rounds, b->o->iters, b->o->warmup, row->copies, js[i].t0);
        if (js[i].peer_made)
            fp4lr_peer_gemm_destroy(&js[i].peer);
    }
    workloads_release(b);
}

static void run_jobs(bench *b)
{
    const fp4lr_bench_jobs *J = &b->jobs;
    int first = 0, most = 1;
    for (int i = 1; i <= J->n; i++)
        if (i == J->n || J->job[i].shape != J->job[i - 1].shape) {
            most = i - first > most ? i - first : most;
            first = i;
        }
    double *ms = malloc(sizeof *ms * (size_t)most * (size_t)b->o->rounds * (size_t)b->o->iters);
    if (!ms) {
        fprintf(stderr, PROG ": cannot allocate the timing samples\n");
        b->errors++;
        return;
    }
    first = 0;
    for (int i = 1; i <= J->n; i++)
        if (i == J->n || J->job[i].shape != J->job[i - 1].shape) {
            run_shape(b, first, i, ms);
            print_shape(b, first, i);
            first = i;
        }
    free(ms);
}

/* Opens path for writing into *f (NULL path: nothing, *f NULL); 0 with a message on failure. */
static int open_output(const char *path, FILE **f)
{
    *f = NULL;
    if (!path)
        return 1;
    *f = fopen(path, "w");
    if (!*f)
        fprintf(stderr, PROG ": cannot open %s for writing: %s\n", path, strerror(errno));
    return *f != NULL;
}

static int count_steps(const bench *b)
{
    int n = 0;
    for (int i = 0; i < b->jobs.n; i++) {
        const fp4lr_bench_job *job = &b->jobs.job[i];
        n += job->runnable && (job->variant != FP4LR_BENCH_PEERS || b->peer_ok[job->peer]);
    }
    return n * b->o->rounds;
}

/* What the selection leaves out, and why, before the table. */
static void print_notes(const fp4lr_bench_opts *o, fp4lr_arch arch)
{
    int fused = (o->variants & (FP4LR_BENCH_BIT(FP4LR_BENCH_FUSED) | FP4LR_BENCH_BIT(FP4LR_BENCH_FUSED_C2))) != 0;
    for (int i = 0; i < o->ndups; i++)
        printf("note: %s has the M, N, K%s of %s: measured once\n", o->dups[i].dropped, fused ? " and r" : "",
               o->dups[i].kept);
    for (int i = 0; i < o->nshapes; i++)
        if (o->same_mnk[i] >= 0)
            printf("note: %s has the M, N, K of %s: only its fused variant runs (the dense kernels and the peers "
                   "ignore r)\n",
                   o->shapes[i].name, o->shapes[o->same_mnk[i]].name);
    if (o->variants & FP4LR_BENCH_BIT(FP4LR_BENCH_NAIVE) && !fp4lr_bench_variant_runs_on(FP4LR_BENCH_NAIVE, arch))
        printf("note: dense-c2-naive (the diagnostic curve: 1-CTA, 2-CTA naive, 2-CTA split) runs on sm_100a only; "
               "%s splits nothing between a pair, so its naive and split budgets agree: skipped\n",
               fp4lr_arch_name(arch));
    if ((o->variants & FP4LR_BENCH_BIT(FP4LR_BENCH_FUSED)) && !(o->variants & FP4LR_BENCH_BIT(FP4LR_BENCH_DENSE)))
        printf("note: fused without dense: no fused/dense ratio\n");
    if (o->variants & FP4LR_BENCH_BIT(FP4LR_BENCH_FUSED_C2)) {
        if (!fp4lr_bench_variant_runs_on(FP4LR_BENCH_FUSED_C2, arch))
            printf("note: fused-c2 runs on sm_90a only; %s's fused kernel is the pair already: skipped\n",
                   fp4lr_arch_name(arch));
        else if (!(o->variants & FP4LR_BENCH_BIT(FP4LR_BENCH_DENSE_C2)))
            printf("note: fused-c2 without dense-c2: no fused-c2/dense-c2 ratio\n");
    }
}

/* 0 when some job of `jobs` can run; else 2 with the reason on stderr (the options leave nothing
 * to run on this architecture, e.g. --variants naive on sm_90a: a bad argument, not a result). */
static int nothing_to_run(const fp4lr_bench_jobs *jobs, fp4lr_arch arch)
{
    for (int i = 0; i < jobs->n; i++)
        if (jobs->job[i].runnable || jobs->job[i].plan_error)
            return 0;
    fprintf(stderr, PROG ": the options leave no job to run on %s (%d row(s), none runnable; --help says which "
            "variant runs where)\n", fp4lr_arch_name(arch), jobs->n);
    return 2;
}

/* ---- without a GPU: what would run ------------------------------------------------------------ */

static int dry_run(const fp4lr_bench_opts *o, fp4lr_status gpu)
{
    printf("no GPU: %s\n", gpu.msg);
    fp4lr_cublaslt *lt = NULL;
    char peers[640] = "not selected";
    if (o->variants & FP4LR_BENCH_BIT(FP4LR_BENCH_PEERS)) {
        fp4lr_status st = fp4lr_cublaslt_open(&lt);
        if (st.code == FP4LR_OK)
            snprintf(peers, sizeof peers, "cuBLASLt found: %s (version %zu)", lt->path, lt->version);
        else
            snprintf(peers, sizeof peers, "cuBLASLt not available: %.600s", st.msg);
        fp4lr_cublaslt_close(lt);
    }
    printf("peers: %s\n", peers);
    fp4lr_bench_target t = {.arch = o->arch};
    fp4lr_bench_jobs jobs;
    fp4lr_status st = fp4lr_bench_jobs_make(o, &t, &jobs);
    if (st.code != FP4LR_OK) {
        say_status("jobs", st);
        return 3;
    }
    if (nothing_to_run(&jobs, o->arch)) {
        fp4lr_bench_jobs_free(&jobs);
        return 2;
    }
    int runnable = 0;
    for (int i = 0; i < jobs.n; i++)
        runnable += jobs.job[i].runnable;
    printf("would run %d jobs (%s plans, kernels from %s; %d round(s) of %d timed launches after %d warm-up, "
           "%d ms preheat a shape, %d validated rows; nothing is timed here):\n",
           runnable, fp4lr_arch_name(o->arch), fp4lr_kernel_dir(NULL), o->rounds, o->iters, o->warmup,
           o->preheat_ms, FP4LR_BENCH_VALIDATE_ROWS);
    print_notes(o, o->arch);
    fp4lr_results_table_header(stdout);
    int plan_errors = 0, refused = 0;
    for (int i = 0; i < jobs.n; i++) {
        fp4lr_bench_row *row = &jobs.row[i];
        plan_errors += jobs.job[i].plan_error && !jobs.job[i].plan_refused;
        refused += jobs.job[i].plan_refused;
        if (jobs.job[i].runnable) {
            row->state = FP4LR_ROW_SKIPPED;
            if (row->has_plan)
                snprintf(row->note, sizeof row->note, "no GPU (kernel %s)", row->entry);
            else
                snprintf(row->note, sizeof row->note, "no GPU");
        }
        fp4lr_results_table_row(stdout, row);
    }
    fp4lr_bench_jobs_free(&jobs);
    if (o->csv || o->samples || o->json) {
        char what[1024] = "";
        size_t n = 0;
        if (o->csv)
            n += (size_t)snprintf(what + n, sizeof what - n, "--csv %s", o->csv);
        if (o->samples && n < sizeof what)
            n += (size_t)snprintf(what + n, sizeof what - n, "%s--samples %s", n ? ", " : "", o->samples);
        if (o->json && n < sizeof what)
            snprintf(what + n, sizeof what - n, "%sthe results record", n ? ", " : "");
        printf("nothing measured, so nothing recorded (%s not written)\n", what);
    }
    /* as with a GPU: a plan that failed for a reason other than fit is an error (exit 3), or a
     * bad argument when the options ask what it refuses (exit 2, as in fp4lr-check) */
    if (plan_errors)
        printf("%d job(s) have no plan (rows FAILED above): exit 3\n", plan_errors);
    else if (refused)
        printf("%d job(s) refused by their options (rows FAILED above): exit 2\n", refused);
    return plan_errors ? 3 : refused ? 2 : 0;
}

/* ---- main -------------------------------------------------------------------------------------- */

static int measure(const fp4lr_bench_opts *o, fp4lr_ctx *ctx, fp4lr_run_info *run)
{
    bench b = {.o = o, .ctx = ctx};
    fp4lr_run_info_device(run, ctx);
    printf("device: %s (cc %d.%d, %d SMs, L2 %d KiB, clock %d MHz, memory clock %d MHz, driver %d)\n", ctx->name,
           ctx->cc_major, ctx->cc_minor, ctx->sm_count, ctx->l2_bytes / 1024, ctx->clock_khz / 1000,
           ctx->mem_clock_khz / 1000, ctx->driver_version);
    const char *arch_name = NULL;
    fp4lr_arch arch = FP4LR_ARCH_SM90A;
    fp4lr_status st = fp4lr_ctx_arch(ctx, &arch_name);
    if (st.code == FP4LR_OK && fp4lr_arch_parse(arch_name, &arch))
        st = fp4lr_fail(FP4LR_E_UNSUPPORTED, "ARCH", "no fp4lr kernels for %s", arch_name);
    if (st.code == FP4LR_OK)
        st = fp4lr_runtime_init(&b.rt, ctx, NULL);
    if (st.code != FP4LR_OK) {
        say_status("device", st);
        return 3;
    }
    snprintf(run->arch, sizeof run->arch, "%s", fp4lr_arch_name(arch));
    fp4lr_bench_target t = {.arch = arch, .smem_capacity = ctx->max_smem_optin, .sm_count = ctx->sm_count,
                            .kernel_dir = b.rt.kernel_dir};
    st = fp4lr_bench_jobs_make(o, &t, &b.jobs);
    if (st.code != FP4LR_OK) {
        say_status("jobs", st);
        fp4lr_runtime_release(&b.rt);
        return 3;
    }
    if (nothing_to_run(&b.jobs, arch)) {
        fp4lr_bench_jobs_free(&b.jobs);
        fp4lr_runtime_release(&b.rt);
        return 2;
    }
    int ready = open_output(o->csv, &b.csv) && open_output(o->samples, &b.samples);
    if (ready && b.csv)
        fp4lr_results_csv_header(b.csv);
    if (ready && b.samples)
        fp4lr_samples_header(b.samples);
    if (ready && o->own_stream) {
        const CUresult r = ctx->drv->cuStreamCreate(&b.stream, CU_STREAM_NON_BLOCKING);
        if (r != CUDA_SUCCESS) {
            say_status("stream", fp4lr_cu_status(ctx->drv, r, "cuStreamCreate", __FILE__, __LINE__));
            ready = 0;
        }
    }
    if (!ready) {
        if (b.csv)
            fclose(b.csv);
        if (b.samples)
            fclose(b.samples);
        fp4lr_bench_jobs_free(&b.jobs);
        fp4lr_runtime_release(&b.rt);
        return 3;
    }
    peers_open(&b, run);
    b.steps = count_steps(&b);
    printf("method: %d round(s) in which a shape's rows take turns, each %d warm-up + %d timed launches, after "
           "%d ms of the shape's first row untimed (--preheat), CUDA "
           "events, median of the pooled launches; inputs rotated over copies > %dx L2 (at most %d); fp4lr "
           "validated on %d sampled rows before and on the last timed launch's output after; kernels from %s; "
           "%s stream\n",
           o->rounds, o->warmup, o->iters, o->preheat_ms, FP4LR_ROTATION_L2_FACTOR, FP4LR_ROTATION_MAX_COPIES,
           FP4LR_BENCH_VALIDATE_ROWS, b.rt.kernel_dir, o->own_stream ? "a non-blocking" : "the legacy");
    print_notes(o, arch);

    fp4lr_nvidia_smi_query(run->smi_before, sizeof run->smi_before);
    if (run->smi_before[0])
        printf("nvidia-smi before (sm clock, mem clock, temperature, power): %s\n", run->smi_before);
    fp4lr_results_table_header(stdout);
    run_jobs(&b);
    fp4lr_nvidia_smi_query(run->smi_after, sizeof run->smi_after);
    if (run->smi_after[0])
        printf("nvidia-smi after: %s\n", run->smi_after);

    fp4lr_bench_summary sum;
    fp4lr_bench_summarize(b.jobs.row, b.jobs.n, &sum);
    fp4lr_bench_summary_print(stdout, &sum);

    if (o->json) {
        char path[1024];
        st = fp4lr_results_append(o->results_dir, run, b.jobs.row, b.jobs.n, &sum, path, sizeof path);
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
    if (b.samples && fclose(b.samples) != 0) {
        fprintf(stderr, PROG ": writing %s failed\n", o->samples);
        b.errors++;
    }
    fp4lr_cublaslt_close(b.lt);
    fp4lr_runtime_release(&b.rt);
    if (b.stream)
        ctx->drv->cuStreamDestroy(b.stream);
    fp4lr_bench_jobs_free(&b.jobs);
    /* A failed validation outranks other errors: a wrong result must not hide behind one.  A
     * row refused for its options alone is a bad argument (exit 2, as in fp4lr-check). */
    if (b.refused)
        printf("%d job(s) refused by their options (rows FAILED above)\n", b.refused);
    return b.validation_failed ? 1 : b.errors ? 3 : b.refused ? 2 : 0;
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
    /* where the results go, checked before the run: a run's figures are not lost to a path */
    char why[1200];
    if (o.csv && fp4lr_cli_writable(o.csv, FP4LR_CLI_FILE, why, sizeof why)) {
        fprintf(stderr, PROG ": --csv %s: %s (see --help)\n", o.csv, why);
        return 2;
    }
    if (o.samples && fp4lr_cli_writable(o.samples, FP4LR_CLI_FILE, why, sizeof why)) {
        fprintf(stderr, PROG ": --samples %s: %s (see --help)\n", o.samples, why);
        return 2;
    }
    if (o.json && fp4lr_cli_writable(o.results_dir, FP4LR_CLI_DIRS, why, sizeof why)) {
        fprintf(stderr, PROG ": --results-dir %s: %s (see --help)\n", o.results_dir, why);
        return 2;
    }

    fp4lr_run_info run;
    memset(&run, 0, sizeof run);
    fp4lr_run_info_capture(&run, argc, argv);
    run.iters = o.iters, run.warmup = o.warmup, run.rounds = o.rounds, run.preheat_ms = o.preheat_ms, run.seed = (unsigned long long)o.seed;
    run.force_stages = o.force_stages, run.sweep_stages = o.sweep_stages;
    run.force_transform_slots = o.force_transform_slots;
    run.force_lora_chunk = o.force_lora_chunk, run.force_lora_slots = o.force_lora_slots;
    run.small_scales = o.small_scales;
    snprintf(run.schedule, sizeof run.schedule, "%s", fp4lr_schedule_name(o.schedule));
    run.own_stream = o.own_stream;
    run.graph = o.graph;
    run.validate_rows = FP4LR_BENCH_VALIDATE_ROWS;
    fp4lr_bench_variants_format(o.variants, run.variants, sizeof run.variants);

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
