/* fp4lr-bench's command line: the options, their parsing, and the list of
 * shapes they select (pure logic, tested on the CPU). */
#ifndef FP4LR_BENCH_CLI_H
#define FP4LR_BENCH_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format.h"
#include "shapes.h"

#define FP4LR_BENCH_MAX_SHAPES 64
#define FP4LR_BENCH_ITERS_DEFAULT 30
#define FP4LR_BENCH_ITERS_MIN 20      /* below this only with --quick */
#define FP4LR_BENCH_ITERS_MAX 1000
#define FP4LR_BENCH_WARMUP_DEFAULT 5
#define FP4LR_BENCH_QUICK_ITERS 5
#define FP4LR_BENCH_QUICK_WARMUP 2
#define FP4LR_BENCH_VALIDATE_ROWS 128

/* A shape that was dropped because an earlier one has the same M, N, K (the
 * dense kernel ignores r, so e.g. qwen-qkv-r32 and -r128 are one problem). */
typedef struct fp4lr_bench_dup {
    const char *dropped, *kept;
} fp4lr_bench_dup;

typedef struct fp4lr_bench_opts {
    /* Shapes in order; names point into the shape table or at the --mnk argument. */
    fp4lr_shape shapes[FP4LR_BENCH_MAX_SHAPES];
    int nshapes;
    fp4lr_bench_dup dups[FP4LR_BENCH_MAX_SHAPES];
    int ndups;
    int formats;              /* bit (1 << fp4lr_format) per selected format */
    int iters, warmup, quick;
    int peers;                /* 0 with --no-peers */
    int json;                 /* append the record to results_dir (default 1) */
    const char *results_dir;
    const char *csv;          /* NULL: no CSV */
    int force_stages;         /* 0: the solver's */
    uint64_t seed;
    int help, list_shapes;    /* asked for; nothing else runs */
} fp4lr_bench_opts;

/* Parses argv (argv[0] is the program).  Returns 0 when the options are good
 * (also after --help / --list-shapes, which set their flags), 2 with a message
 * in err when they are not (unknown flag, missing or bad value, iterations
 * below FP4LR_BENCH_ITERS_MIN without --quick, too many shapes).  Without
 * --shape / --mnk the shapes are every `large` row of the table.  argv must
 * outlive *o (custom shape names point into it). */
int fp4lr_bench_opts_parse(int argc, char **argv, fp4lr_bench_opts *o, char *err, size_t errlen);

/* The usage text. */
void fp4lr_bench_usage(FILE *f);

/* 1 when K is a multiple of the format's K granularity (64 NVFP4, 128 MXFP4). */
int fp4lr_bench_format_fits(const fp4lr_shape *s, fp4lr_format f);

#endif
