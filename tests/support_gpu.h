/* GPU test support: a device context, or a skip that names the reason.
 *
 * Every GPU test starts with tsupport_gpu_ctx_or_skip(): on a machine without
 * a driver or a device the test is skipped with "no GPU: <status message>",
 * so the report says why.  Symbols are prefixed tsupport_. */
#ifndef FP4LR_TESTS_SUPPORT_GPU_H
#define FP4LR_TESTS_SUPPORT_GPU_H

#include "device.h"

/* The context of device 0 ($FP4LR_TEST_DEVICE selects another).  Skips when
 * the driver is missing or too old or there is no device; any other failure
 * fails the test.  The caller destroys the context. */
fp4lr_ctx *tsupport_gpu_ctx_or_skip(void);

/* Skips (destroying ctx) unless fp4lr's kernel architecture for the device is
 * `arch` ("sm90a", "sm100a"). */
void tsupport_gpu_arch_or_skip(fp4lr_ctx *ctx, const char *arch);

#endif
