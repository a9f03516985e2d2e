/* The library and kernel version report (fp4lr.h).
 *
 * The PTX ISA versions are those of the `.version` line the generators write
 * into every kernel file of ptx/<arch>/; tests/test_abi.c reads the files and
 * checks that this report names the same ones. */
#include "fp4lr.h"

#define FP4LR_PTX_ISA_SM90A "8.0"
#define FP4LR_PTX_ISA_SM100A "8.7"

const char *fp4lr_version(void) { return FP4LR_VERSION; }

const char *fp4lr_ptx_version(void)
{
    return "sm90a: PTX ISA " FP4LR_PTX_ISA_SM90A ", tools/gen_sm90a.py; "
           "sm100a: PTX ISA " FP4LR_PTX_ISA_SM100A ", tools/gen_sm100a.py; "
           "kernel ABI " FP4LR_KERNEL_ABI;
}
