/* The two 4-bit block-scaled formats (OPERATOR.md §3). */
#ifndef FP4LR_FORMAT_H
#define FP4LR_FORMAT_H

typedef enum fp4lr_format {
    FP4LR_NVFP4 = 0, /* e2m1 elements, ue4m3 scale per 16, fp32 global scale (alpha) */
    FP4LR_MXFP4 = 1, /* e2m1 elements, ue8m0 scale per 32 (OCP MX v1.0) */
} fp4lr_format;

/* Elements per scale block: 16 (NVFP4) or 32 (MXFP4). */
static inline int fp4lr_format_block(fp4lr_format f) { return f == FP4LR_NVFP4 ? 16 : 32; }
/* K granularity: one 128x4 scale atom column = 4 blocks (64 or 128 elements). */
static inline int fp4lr_format_k_multiple(fp4lr_format f) { return 4 * fp4lr_format_block(f); }
/* "nvfp4" / "mxfp4". */
static inline const char *fp4lr_format_name(fp4lr_format f) { return f == FP4LR_NVFP4 ? "nvfp4" : "mxfp4"; }

#endif
