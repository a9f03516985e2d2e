/* OPERATOR.md §6, one row per (layer, rank). */
#include "shapes.h"

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

int fp4lr_shape_parse(const char *text, fp4lr_shape *out)
{
    long long m, n, k, r = 0;
    int used = 0;
    if (sscanf(text, "%lldx%lldx%lld%n", &m, &n, &k, &used) != 3)
        return -1;
    if (text[used] == ':') {
        int used2 = 0;
        if (sscanf(text + used + 1, "%lld%n", &r, &used2) != 1)
            return -1;
        used += 1 + used2;
    }
    if (text[used] != '\0' || m < 0 || n < 0 || k < 0 || r < 0)
        return -1;
    out->name = "custom";
    out->family = "custom";
    out->M = m; out->N = n; out->K = k; out->r = r;
    out->large = 0;
    return 0;
}
