/* OPERATOR.md §6, one row per (layer, rank). */
#include "shapes.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

const fp4lr_shape fp4lr_shapes[] = {
    /* FLUX.1-dev 1024^2, single blocks */
    {"flux-qkv", "FLUX.1-dev", 4608, 9216, 3072, 32, 1},
    {"flux-out", "FLUX.1-dev", 4608, 3072, 3072, 32, 1},
    {"flux-fc1", "FLUX.1-dev", 4608, 12288, 3072, 32, 1},
    {"flux-fc2", "FLUX.1-dev", 4608, 3072, 12288, 32, 1},
    /* SANA 1.6B 1024^2 (K = 2240 is not a multiple of 128: NVFP4 only) */
    {"sana-qkv", "SANA-1.6B", 1024, 6912, 2240, 32, 1},
    {"sana-out", "SANA-1.6B", 1024, 2240, 2304, 32, 1},
    {"sana-mlp", "SANA-1.6B", 1024, 11200, 2240, 32, 1},
    /* Qwen-Image 1328^2 */
    {"qwen-qkv-r32", "Qwen-Image", 7168, 9216, 3072, 32, 1},
    {"qwen-qkv-r128", "Qwen-Image", 7168, 9216, 3072, 128, 1},
    {"qwen-fc1-r32", "Qwen-Image", 7168, 12288, 3072, 32, 1},
    {"qwen-fc1-r128", "Qwen-Image", 7168, 12288, 3072, 128, 1},
    /* square */
    {"square-r0", "square", 8192, 8192, 8192, 0, 1},
    {"square-r32", "square", 8192, 8192, 8192, 32, 1},
    /* decode-like */
    {"decode-m1", "decode", 1, 8192, 8192, 32, 0},
    {"decode-m16", "decode", 16, 8192, 8192, 32, 0},
    {"decode-m64", "decode", 64, 8192, 8192, 32, 0},
    {"decode-m256", "decode", 256, 8192, 8192, 32, 0},
};
const int fp4lr_num_shapes = (int)(sizeof fp4lr_shapes / sizeof fp4lr_shapes[0]);

const fp4lr_shape *fp4lr_shape_find(const char *name)
{
    for (int i = 0; i < fp4lr_num_shapes; i++)
        if (strcmp(fp4lr_shapes[i].name, name) == 0)
            return &fp4lr_shapes[i];
    return NULL;
}

/* One run of decimal digits at *t into *v (advancing *t): 0, -1 when there is none, -2 when
 * the value exceeds int64. */
static int parse_count(const char **t, long long *v)
{
    if (**t < '0' || **t > '9')
        return -1;
    long long x = 0;
    for (; **t >= '0' && **t <= '9'; (*t)++) {
        const int d = **t - '0';
        if (x > (LLONG_MAX - d) / 10)
            return -2;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

int fp4lr_shape_parse(const char *text, fp4lr_shape *out)
{
    long long v[4] = {0, 0, 0, 0};
    const char *t = text;
    for (int i = 0; i < 4; i++) {
        if (i == 3 && *t != ':')
            break;
        if (i > 0)
            t++; /* the 'x' or ':' before it */
        const int rc = parse_count(&t, &v[i]);
        if (rc)
            return rc;
        if (i < 2 && *t != 'x')
            return -1;
    }
    if (*t != '\0')
        return -1;
    out->name = "custom";
    out->family = "custom";
    out->M = v[0]; out->N = v[1]; out->K = v[2]; out->r = v[3];
    out->large = 0;
    return 0;
}
