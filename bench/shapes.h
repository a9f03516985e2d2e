/* The reference shapes of OPERATOR.md §6: the one table that tests, fp4lr-check
 * and fp4lr-bench all read. */
#ifndef FP4LR_SHAPES_H
#define FP4LR_SHAPES_H

#include <stdint.h>

typedef struct fp4lr_shape {
    const char *name;    /* e.g. "flux-qkv" */
    const char *family;  /* "FLUX.1-dev", "SANA-1.6B", "Qwen-Image", "square", "decode" */
    int64_t M, N, K, r;
    int large;           /* counts toward the large-shape geometric mean */
} fp4lr_shape;

/* The table and its length. */
extern const fp4lr_shape fp4lr_shapes[];
extern const int fp4lr_num_shapes;

/* Look a shape up by name; NULL when unknown. */
const fp4lr_shape *fp4lr_shape_find(const char *name);

/* Parse "MxNxK" or "MxNxK:r" (decimal digits only: no sign, space or other text) into a shape
 * (name "custom"); returns 0 on success, -1 with nothing written on malformed text, -2 when a
 * number exceeds 2^63 - 1. */
int fp4lr_shape_parse(const char *text, fp4lr_shape *out);

#endif
