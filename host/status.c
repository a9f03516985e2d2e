/* Construction and naming of fp4lr_status values. */
#include "status.h"

#include <stdio.h>
#include <string.h>

fp4lr_status fp4lr_ok(void)
{
    fp4lr_status s;
    s.code = FP4LR_OK;
    s.cu_result = 0;
    s.rule = "";
    s.msg[0] = '\0';
    return s;
}

fp4lr_status fp4lr_vfail(fp4lr_code code, const char *rule, const char *fmt, va_list ap)
{
    fp4lr_status s;
    s.code = code;
    s.cu_result = 0;
    s.rule = rule ? rule : "";
    vsnprintf(s.msg, sizeof s.msg, fmt, ap);
    return s;
}

fp4lr_status fp4lr_fail(fp4lr_code code, const char *rule, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fp4lr_status s = fp4lr_vfail(code, rule, fmt, ap);
    va_end(ap);
    return s;
}

const char *fp4lr_code_name(fp4lr_code code)
{
    switch (code) {
    case FP4LR_OK: return "FP4LR_OK";
    case FP4LR_E_INVALID: return "FP4LR_E_INVALID";
    case FP4LR_E_INFEASIBLE: return "FP4LR_E_INFEASIBLE";
    case FP4LR_E_NO_DRIVER: return "FP4LR_E_NO_DRIVER";
    case FP4LR_E_NO_DEVICE: return "FP4LR_E_NO_DEVICE";
    case FP4LR_E_DRIVER_TOO_OLD: return "FP4LR_E_DRIVER_TOO_OLD";
    case FP4LR_E_DRIVER: return "FP4LR_E_DRIVER";
    case FP4LR_E_JIT: return "FP4LR_E_JIT";
    case FP4LR_E_RESOURCE: return "FP4LR_E_RESOURCE";
    case FP4LR_E_NOMEM: return "FP4LR_E_NOMEM";
    case FP4LR_E_IO: return "FP4LR_E_IO";
    case FP4LR_E_UNSUPPORTED: return "FP4LR_E_UNSUPPORTED";
    case FP4LR_E_MISMATCH: return "FP4LR_E_MISMATCH";
    }
    return "FP4LR_E_UNKNOWN";
}
