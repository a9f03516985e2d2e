#include "cli_paths.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory that holds `path` (no trailing '/'), into out. */
static void parent_of(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, cap, ".");
    else if (slash == path)
        snprintf(out, cap, "/");
    else
        snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

/* Whether `dir` (existing) is a directory this process can create entries in. */
static int dir_usable(const char *dir, char *why, size_t cap)
{
    struct stat sb;
    if (stat(dir, &sb) || !S_ISDIR(sb.st_mode))
        return snprintf(why, cap, "%s is not a directory", dir), 1;
    if (access(dir, W_OK | X_OK))
        return snprintf(why, cap, "cannot create it in %s: %s", dir, strerror(errno)), 1;
    return 0;
}

int fp4lr_cli_writable(const char *path, fp4lr_cli_target kind, char *why, size_t cap)
{
    const size_t len = strlen(path);
    if (len == 0)
        return snprintf(why, cap, "an empty path"), 1;
    if (len > FP4LR_CLI_PATH_MAX)
        return snprintf(why, cap, "the path is %zu bytes long; at most %d", len, FP4LR_CLI_PATH_MAX), 1;
    char p[FP4LR_CLI_PATH_MAX + 1];
    snprintf(p, sizeof p, "%s", path);
    for (size_t n = strlen(p); n > 1 && p[n - 1] == '/'; n--)
        p[n - 1] = '\0';
    const int dir = kind != FP4LR_CLI_FILE;
    struct stat sb;
    if (stat(p, &sb) == 0) {
        if (dir ? !S_ISDIR(sb.st_mode) : !S_ISREG(sb.st_mode))
            return snprintf(why, cap, "exists and is not a %s", dir ? "directory" : "regular file"), 1;
        if (access(p, dir ? W_OK | X_OK : W_OK))
            return snprintf(why, cap, "not writable: %s", strerror(errno)), 1;
        return 0;
    }
    if (errno != ENOENT)
        return snprintf(why, cap, "%s", strerror(errno)), 1;
    if (!dir && len > 1 && path[len - 1] == '/')
        return snprintf(why, cap, "names a directory (ends in '/'), not a file"), 1;
    char parent[FP4LR_CLI_PATH_MAX + 1];
    parent_of(p, parent, sizeof parent);
    if (kind == FP4LR_CLI_DIRS)
        /* up to the nearest existing ancestor: mkdir -p makes the rest */
        while (stat(parent, &sb) != 0 && errno == ENOENT && strcmp(parent, ".") && strcmp(parent, "/")) {
            char up[FP4LR_CLI_PATH_MAX + 1];
            parent_of(parent, up, sizeof up);
            snprintf(parent, sizeof parent, "%s", up);
        }
    return dir_usable(parent, why, cap);
}
