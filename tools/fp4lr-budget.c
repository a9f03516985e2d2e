/* fp4lr-budget: solve and print the shared-memory / tensor-memory budget of one
 * kernel configuration (ARCHITECTURE.md §5) without a GPU or a CUDA driver.
 * Exit status: 0 solved, 2 bad input (the rule is named on stderr),
 * 3 infeasible (the reason on stderr), 1 anything else (an output error). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"

#define EXIT_BAD_INPUT 2
#define EXIT_INFEASIBLE 3

static const char usage[] =
    "usage: fp4lr-budget [options]\n"
    "  --arch sm90a|sm100a       target (default sm100a)\n"
    "  --format nvfp4|mxfp4      4-bit format (default nvfp4)\n"
    "  --tile MxNxK              the cluster's output tile and K stage\n"
    "                            (default 256x256x256 on sm100a, 128x256x128 on sm90a)\n"
    "  --cluster 1|2             CTAs per cluster (default 2 on sm100a, 1 on sm90a)\n"
    "  --rank R                  low-rank rank, 0 or a multiple of 16 (default 0)\n"
    "  --family dense|fused      default: fused when R > 0, else dense\n"
    "  --no-affine               fused without wc/beta slices\n"
    "  --out bf16|f16|f32        output type (default bf16)\n"
    "  --policy split|naive      per-CTA charge of pair-split objects (default split)\n"
    "  --smem BYTES              shared-memory capacity per block (default: the arch's)\n"
    "  --stages N                force N main stages (default: as many as fit)\n"
    "  --transform-slots N       sm90a: force the W transform ring to 2 or 3 slots (2..5 with --w-prep;\n"
    "                            2..10 with --w-prep --tile 128x128x128, the dense ping-pong tile)\n"
    "  --w-prep                  sm90a, one CTA or the 256-wide pair: the W-prepared kernels' table (W\n"
    "                            arrives converted by bulk copies into its ring: no fp4 W or SFW in the\n"
    "                            main stages; a pair's per-CTA rows are one CTA's)\n"
    "  --w-inline                sm90a, one CTA: the _x kernels' table (W converted inside\n"
    "                            the kernel: the converter warps' staging beside the W-prepared rings)\n"
    "  --yt-prepared             sm90a, one CTA: the swapped prepared kernels' table (_w<n>_yt: as\n"
    "                            --w-prep, the fused family with two writeback buffers)\n"
    "  --lora-chunk N            force N ranks a low-rank chunk (a multiple of 16, at most R)\n"
    "  --lora-slots N            force N low-rank ring slots (1..4)\n"
    "  --json                    print one JSON object instead of the table\n"
    "  --help                    this text\n"
    "exit status: 0 solved, 2 bad input (the rule named on stderr), 3 infeasible (the reason on\n"
    "stderr: nothing fits, or a tile no MMA / kernel takes), 1 an output error\n";

/* Command-line state before it becomes a request. */
typedef struct cli {
    fp4lr_budget_req req;
    int tile_given, cluster_given, family_given, no_affine, json;
} cli;

static int bad(const char *rule, const char *what, const char *value)
{
    fprintf(stderr, "fp4lr-budget: %s: %s '%s' (see --help)\n", rule, what, value);
    return EXIT_BAD_INPUT;
}

/* The range of every integer option but --smem (whose values are bytes). */
#define INT_OPT_MAX 1000000
#define NOT_INT " is not a whole number in [-10^6, 10^6]:"

/* A whole decimal number in [lo, hi]; 0 on success. */
static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *s, int *out)
{
    int64_t v;
    if (parse_i64(s, -INT_OPT_MAX, INT_OPT_MAX, &v))
        return -1;
    *out = (int)v;
    return 0;
}

/* "MxNxK" with three whole numbers. */
static int parse_tile(const char *s, fp4lr_budget_req *r)
{
    char buf[64], *save, *parts[3];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    int n = 0;
    for (char *t = strtok_r(buf, "x", &save); t; t = strtok_r(NULL, "x", &save)) {
        if (n == 3)
            return -1;
        parts[n++] = t;
    }
    if (n != 3 || s[0] == 'x' || s[strlen(s) - 1] == 'x' || strstr(s, "xx"))
        return -1;
    return parse_int(parts[0], &r->tile_m) || parse_int(parts[1], &r->tile_n) ||
                   parse_int(parts[2], &r->tile_k)
               ? -1
               : 0;
}

static int parse_out(const char *s, int *bytes)
{
    if (!strcmp(s, "bf16") || !strcmp(s, "f16")) { *bytes = 2; return 0; }
    if (!strcmp(s, "f32")) { *bytes = 4; return 0; }
    return -1;
}

/* Applies one option with its value; returns 0 or an exit status. */
static int apply(cli *c, const char *opt, const char *val)
{
    fp4lr_budget_req *r = &c->req;
    if (!strcmp(opt, "--arch"))
        return fp4lr_arch_parse(val, &r->arch) ? bad("ARCH", "unknown architecture", val) : 0;
    if (!strcmp(opt, "--format")) {
        if (!strcmp(val, "nvfp4")) r->format = FP4LR_NVFP4;
        else if (!strcmp(val, "mxfp4")) r->format = FP4LR_MXFP4;
        else return bad("FORMAT", "unknown format", val);
        return 0;
    }
    if (!strcmp(opt, "--tile")) {
        c->tile_given = 1;
        return parse_tile(val, r) ? bad("TILE", "malformed tile, expected MxNxK:", val) : 0;
    }
    if (!strcmp(opt, "--cluster")) {
        c->cluster_given = 1;
        return parse_int(val, &r->cluster) ? bad("CLUSTER", "cluster" NOT_INT, val) : 0;
    }
    if (!strcmp(opt, "--rank"))
        return parse_int(val, &r->rank) ? bad("RANK", "rank" NOT_INT, val) : 0;
    if (!strcmp(opt, "--family")) {
        c->family_given = 1;
        return fp4lr_family_parse(val, &r->family) ? bad("FAMILY", "unknown family", val) : 0;
    }
    if (!strcmp(opt, "--policy")) {
        /* halve-all is a test-only defect; the tool offers split and naive. */
        if (fp4lr_policy_parse(val, &r->policy) || r->policy == FP4LR_POLICY_HALVE_ALL)
            return bad("POLICY", "unknown policy", val);
        return 0;
    }
    if (!strcmp(opt, "--out"))
        return parse_out(val, &r->out_bytes) ? bad("OUT_TYPE", "unknown output type", val) : 0;
    if (!strcmp(opt, "--smem"))
        return parse_i64(val, 0, INT64_MAX, &r->smem_capacity)
                   ? bad("SMEM", "capacity is not a non-negative number:", val)
                   : 0;
    if (!strcmp(opt, "--stages"))
        return parse_int(val, &r->force_main_stages) ? bad("STAGES", "stages" NOT_INT, val)
                                                     : 0;
    if (!strcmp(opt, "--transform-slots"))
        return parse_int(val, &r->force_transform_stages)
                   ? bad("TRANSFORM_STAGES", "transform slots" NOT_INT, val) : 0;
    if (!strcmp(opt, "--lora-chunk"))
        return parse_int(val, &r->force_lora_chunk) ? bad("LORA_CHUNK", "low-rank chunk" NOT_INT, val) : 0;
    if (!strcmp(opt, "--lora-slots"))
        return parse_int(val, &r->force_lora_stages) ? bad("LORA_STAGES", "low-rank slots" NOT_INT, val)
                                                     : 0;
    return bad("USAGE", "unknown option", opt);
}

static int takes_value(const char *opt)
{
    static const char *const opts[] = {"--arch", "--format", "--tile", "--cluster", "--rank",
                                       "--family", "--policy", "--out", "--smem", "--stages",
                                       "--transform-slots", "--lora-chunk", "--lora-slots"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (!strcmp(opt, opts[i]))
            return 1;
    return 0;
}

/* Parses argv into c; returns -1 to go on, or an exit status. */
static int parse_args(int argc, char **argv, cli *c)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--json")) { c->json = 1; continue; }
        if (!strcmp(a, "--no-affine")) { c->no_affine = 1; continue; }
        if (!strcmp(a, "--w-prep")) { c->req.w_prep = 1; continue; }
        if (!strcmp(a, "--w-inline")) { c->req.w_prep = 1; c->req.w_inline = 1; continue; }
        if (!strcmp(a, "--yt-prepared")) { c->req.w_prep = 1; c->req.yt_prepared = 1; c->req.yt = 1; continue; }
        if (strncmp(a, "--", 2) != 0)
            return bad("USAGE", "unexpected argument", a);
        /* --opt=value or --opt value */
        char opt[32];
        const char *eq = strchr(a, '='), *val;
        if (eq) {
            size_t n = (size_t)(eq - a);
            if (n >= sizeof opt)
                return bad("USAGE", "unknown option", a);
            memcpy(opt, a, n);
            opt[n] = '\0';
            val = eq + 1;
        } else {
            if (strlen(a) >= sizeof opt)
                return bad("USAGE", "unknown option", a);
            strcpy(opt, a);
            if (!takes_value(opt))
                return bad("USAGE", "unknown option", a);
            if (i + 1 >= argc)
                return bad("USAGE", "missing value for", a);
            val = argv[++i];
        }
        int rc = apply(c, opt, val);
        if (rc)
            return rc;
    }
    return -1;
}

/* Per-architecture defaults for what the command line left out. */
static void fill_defaults(cli *c)
{
    fp4lr_budget_req *r = &c->req;
    const int sm100 = r->arch == FP4LR_ARCH_SM100A;
    if (!c->tile_given) {
        r->tile_m = sm100 ? 256 : 128;
        r->tile_n = 256;
        r->tile_k = sm100 ? 256 : 128;
    }
    if (!c->cluster_given)
        r->cluster = sm100 ? 2 : 1;
    if (!c->family_given)
        r->family = r->rank > 0 ? FP4LR_FAMILY_FUSED : FP4LR_FAMILY_DENSE;
    r->has_affine = r->family == FP4LR_FAMILY_FUSED && !c->no_affine;
}

int main(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    c.req.arch = FP4LR_ARCH_SM100A;
    c.req.format = FP4LR_NVFP4;
    c.req.out_bytes = 2;
    c.req.policy = FP4LR_POLICY_SPLIT;
    int rc = parse_args(argc, argv, &c);
    if (rc >= 0)
        return rc;
    fill_defaults(&c);

    fp4lr_budget b;
    fp4lr_status s = fp4lr_budget_solve(&c.req, &b);
    if (s.code != FP4LR_OK) {
        fprintf(stderr, "fp4lr-budget: %s: %s\n", s.rule, s.msg);
        return s.code == FP4LR_E_INVALID ? EXIT_BAD_INPUT
             : s.code == FP4LR_E_INFEASIBLE ? EXIT_INFEASIBLE : 1;
    }
    s = c.json ? fp4lr_budget_json(stdout, &b) : fp4lr_budget_print(stdout, &b);
    if (s.code == FP4LR_OK && fflush(stdout) != 0)
        s = fp4lr_fail(FP4LR_E_IO, "WRITE", "writing to stdout failed");
    if (s.code != FP4LR_OK) {
        fprintf(stderr, "fp4lr-budget: %s: %s\n", s.rule, s.msg);
        return 1;
    }
    return 0;
}
