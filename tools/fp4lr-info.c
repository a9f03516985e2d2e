/* fp4lr-info: what the CUDA driver and device report, and which kernel
 * architecture fp4lr would use.  Starts on a machine without a driver: it then
 * says so and exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "module.h"

static void usage(FILE *to)
{
    fprintf(to,
            "usage: fp4lr-info [--device N] [--help]\n"
            "\n"
            "Prints the CUDA driver version, the device's name, compute capability, SM count,\n"
            "shared-memory limits, L2 size and clocks, and the kernel architecture fp4lr\n"
            "would use (sm90a or sm100a) with the directory its cubins are loaded from.\n"
            "\n"
            "  --device N   device ordinal (default 0)\n"
            "  --help       this text\n"
            "\n"
            "Environment: FP4LR_LIBCUDA (driver library, default libcuda.so.1),\n"
            "FP4LR_KERNEL_DIR (cubin directory, default " FP4LR_KERNEL_DIR_DEFAULT ").\n"
            "Exit status: 0 printed, and also without a CUDA driver or device (it says so);\n"
            "1 a driver or device that fails (the error on stderr); 2 bad arguments.\n");
}

static int parse_args(int argc, char **argv, int *ordinal)
{
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(argv[i], "--device")) {
            char *end = NULL;
            long v = i + 1 < argc ? strtol(argv[++i], &end, 10) : -1;
            if (!end || !*argv[i] || *end || v < 0 || v > 1 << 20) {
                fprintf(stderr, "fp4lr-info: --device needs a non-negative integer\n");
                return 2;
            }
            *ordinal = (int)v;
            continue;
        }
        fprintf(stderr, "fp4lr-info: unknown argument '%s'\n", argv[i]);
        usage(stderr);
        return 2;
    }
    return 0;
}

static void print_device(const fp4lr_ctx *ctx)
{
    printf("%-22s %d: %s\n", "device", ctx->ordinal, ctx->name);
    printf("%-22s %d.%d\n", "compute capability", ctx->cc_major, ctx->cc_minor);
    printf("%-22s %d\n", "SMs", ctx->sm_count);
    printf("%-22s %d B\n", "smem per block opt-in", ctx->max_smem_optin);
    printf("%-22s %d B\n", "smem per SM", ctx->smem_per_sm);
    printf("%-22s %d B\n", "smem reserved/block", ctx->reserved_smem_per_block);
    printf("%-22s %d\n", "registers per SM", ctx->regs_per_sm);
    printf("%-22s %d B (%.1f MiB)\n", "L2", ctx->l2_bytes, ctx->l2_bytes / 1048576.0);
    printf("%-22s %d kHz\n", "SM clock", ctx->clock_khz);
    printf("%-22s %d kHz\n", "memory clock", ctx->mem_clock_khz);
    printf("%-22s %s\n", "cluster launch", ctx->cluster_launch ? "yes" : "no");

    size_t free_b = 0, total_b = 0;
    if (ctx->drv->cuMemGetInfo(&free_b, &total_b) == CUDA_SUCCESS)
        printf("%-22s %.1f GiB free of %.1f GiB\n", "memory", free_b / 1073741824.0,
               total_b / 1073741824.0);

    const char *arch = NULL;
    fp4lr_status s = fp4lr_ctx_arch(ctx, &arch);
    if (s.code == FP4LR_OK)
        printf("%-22s %s (cubins in %s/%s)\n", "fp4lr arch path", arch, fp4lr_kernel_dir(NULL),
               arch);
    else
        printf("%-22s none: %s\n", "fp4lr arch path", s.msg);
}

int main(int argc, char **argv)
{
    int ordinal = 0;
    int rc = parse_args(argc, argv, &ordinal);
    if (rc)
        return rc;

    fp4lr_driver *drv = NULL;
    fp4lr_status s = fp4lr_driver_open(&drv);
    if (s.code == FP4LR_E_NO_DRIVER) {
        printf("%s\n", s.msg); /* "no CUDA driver: <reason>" */
        printf("note: fp4lr runs its CPU parts (planning, budgets, reference) without one; "
               "GPU kernels need an NVIDIA driver >= %d.\n", FP4LR_DRIVER_MIN_VERSION);
        return 0;
    }
    if (s.code != FP4LR_OK) {
        fprintf(stderr, "fp4lr-info: CUDA driver unusable: %s: %s\n", fp4lr_code_name(s.code), s.msg);
        return 1;
    }
    printf("%-22s %s\n", "driver library", drv->path);
    printf("%-22s %d (CUDA %d.%d)\n", "driver version", drv->version, drv->version / 1000,
           drv->version % 1000 / 10);
    printf("%-22s %d of %d through cuGetProcAddress, the rest by dlsym\n", "entry points",
           drv->via_proc_address, FP4LR_DRIVER_ENTRY_COUNT);
    fp4lr_driver_close(drv);

    fp4lr_ctx *ctx = NULL;
    s = fp4lr_ctx_create(ordinal, &ctx);
    if (s.code == FP4LR_E_NO_DEVICE) {
        printf("%s\n", s.msg); /* "no CUDA device...: <reason>" */
        return 0;
    }
    if (s.code != FP4LR_OK) {
        fprintf(stderr, "fp4lr-info: cannot open device %d: %s: %s\n", ordinal, fp4lr_code_name(s.code), s.msg);
        return 1;
    }
    print_device(ctx);
    fp4lr_ctx_destroy(ctx);
    return 0;
}
