/* Test support: commands and the build directory. */
#include "support_cmd.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int tsupport_run_capture(const char *cmd, char *out, size_t cap)
{
    FILE *f = popen(cmd, "r");
    cr_assert(f, "cannot run %s", cmd);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void tsupport_build_dir(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    cr_assert(n > 0, "cannot read /proc/self/exe");
    out[n] = '\0';
    /* <B>/tests/fp4lr-tests: two levels up */
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(out, '/');
        cr_assert(slash, "unexpected test binary path %s", out);
        *slash = '\0';
    }
}

int tsupport_run_py_tool(const char *script, const char *args, char *out, size_t cap)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 tools/%s %s 2>&1", script, args);
    return tsupport_run_capture(cmd, out, cap);
}

int tsupport_run_bin(const char *tool, const char *args, char *out, size_t cap)
{
    char dir[1024], cmd[2048];
    tsupport_build_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "'%s/bin/%s' %s 2>&1", dir, tool, args);
    return tsupport_run_capture(cmd, out, cap);
}
