/* Test support: running a command and finding the build directory.
 *
 * Suites that drive the tools or scripts run them through a shell and read
 * their standard output; the tools live beside the test binary, in the build
 * directory <B> (the binary is <B>/tests/fp4lr-tests).  Symbols are prefixed
 * tsupport_. */
#ifndef FP4LR_TESTS_SUPPORT_CMD_H
#define FP4LR_TESTS_SUPPORT_CMD_H

#include <stddef.h>

/* Runs `cmd` through the shell; returns its exit status (-1 when it did not
 * exit) and up to cap - 1 bytes of its standard output, NUL-terminated, in out. */
int tsupport_run_capture(const char *cmd, char *out, size_t cap);

/* Runs `python3 tools/<script> <args> 2>&1` (a repository tool, from the repository root)
 * through tsupport_run_capture: its status, and its output and messages in out. */
int tsupport_run_py_tool(const char *script, const char *args, char *out, size_t cap);

/* Runs the build's tool `<B>/bin/<tool> <args> 2>&1` through tsupport_run_capture: its
 * status, and its output and messages in out. */
int tsupport_run_bin(const char *tool, const char *args, char *out, size_t cap);

/* Writes the build directory <B> of this test binary into out. */
void tsupport_build_dir(char *out, size_t cap);

#endif
