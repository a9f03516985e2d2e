/* Output paths of the command-line tools, checked before any work so that a long run does
 * not end refused (fp4lr-check --out / --timeline, fp4lr-bench --csv / --results-dir). */
#ifndef FP4LR_CLI_PATHS_H
#define FP4LR_CLI_PATHS_H

#include <stddef.h>

/* The longest output path taken: the files under a directory are named in 1024-byte buffers,
 * and an error about the path must still fit its reason in a status message. */
#define FP4LR_CLI_PATH_MAX 900

typedef enum {
    FP4LR_CLI_FILE, /* a writable regular file, or a new one in a writable directory */
    FP4LR_CLI_DIR,  /* a writable directory, or a new one in a writable directory */
    FP4LR_CLI_DIRS, /* a writable directory, or one made with its missing parents (mkdir -p)
                     * below the nearest existing one, which must be a writable directory */
} fp4lr_cli_target;

/* 0 when `path` names a place of `kind` this run can write; else 1 with the reason in `why`
 * (a trailing '/' is allowed; an empty path or one longer than FP4LR_CLI_PATH_MAX is not). */
int fp4lr_cli_writable(const char *path, fp4lr_cli_target kind, char *why, size_t cap);

#endif
