/* fp4lr status values: every library function returns one of these.
 *
 * A status carries a machine-readable code, the name of the rule or
 * driver error that produced it, and a readable message.  The library
 * never prints and never exits; callers decide what to do with a status. */
#ifndef FP4LR_STATUS_H
#define FP4LR_STATUS_H

#include <stdarg.h>

typedef enum fp4lr_code {
    FP4LR_OK = 0,
    FP4LR_E_INVALID,        /* an argument or a problem rule (OPERATOR.md §2) is violated */
    FP4LR_E_INFEASIBLE,     /* the budget solver cannot build the requested plan */
    FP4LR_E_NO_DRIVER,      /* libcuda.so.1 could not be opened */
    FP4LR_E_NO_DEVICE,      /* the driver loaded but reports no usable device */
    FP4LR_E_DRIVER_TOO_OLD, /* the driver is older than the project needs */
    FP4LR_E_DRIVER,         /* a driver API call failed (cu_result holds the CUresult) */
    FP4LR_E_JIT,            /* module load / JIT compilation failed (log in the message) */
    FP4LR_E_RESOURCE,       /* a loaded function does not match its plan */
    FP4LR_E_NOMEM,          /* host allocation failed */
    FP4LR_E_IO,             /* file input/output failed */
    FP4LR_E_UNSUPPORTED,    /* no kernel for this device / configuration */
    FP4LR_E_MISMATCH,       /* a result failed validation against the reference */
} fp4lr_code;

#define FP4LR_STATUS_MSG_LEN 1024

typedef struct fp4lr_status {
    fp4lr_code code;
    int cu_result;           /* CUresult for FP4LR_E_DRIVER, else 0 */
    const char *rule;        /* static name of the violated rule or driver enum, or "" */
    char msg[FP4LR_STATUS_MSG_LEN];
} fp4lr_status;

/* A success status. */
fp4lr_status fp4lr_ok(void);
/* A failure with a rule name (static string, may be NULL) and a printf-style message. */
fp4lr_status fp4lr_fail(fp4lr_code code, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
fp4lr_status fp4lr_vfail(fp4lr_code code, const char *rule, const char *fmt, va_list ap);
/* The enum name of a code, e.g. "FP4LR_E_INVALID". */
const char *fp4lr_code_name(fp4lr_code code);

/* Propagate a failing status to the caller. */
#define FP4LR_TRY(expr)                                  \
    do {                                                 \
        fp4lr_status fp4lr_try_s_ = (expr);              \
        if (fp4lr_try_s_.code != FP4LR_OK)               \
            return fp4lr_try_s_;                         \
    } while (0)

#endif
