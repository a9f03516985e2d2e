/* tools/ncu_lines.py: an ncu source view with line information split by PTX line and by
 * region (tests/data/ncu_lines_small.csv and .ptx, a hand-made export of a 13-line kernel:
 * 100 samples, 60 of them on the address computation before a wait label, where ncu
 * credits a retry loop that ptxas moved behind the function's end), and its refusals. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include "support_cmd.h"

static int run(const char *args, char *out, size_t cap)
{
    return tsupport_run_py_tool("ncu_lines.py", args, out, cap);
}

Test(ncu_lines, splits_the_samples_by_line_and_region)
{
    static char out[8192];
    cr_assert_eq(run("tests/data/ncu_lines_small.csv --top 3", out, sizeof out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "100 samples over 5 PTX lines of tests/data/ncu_lines_small.ptx"), "%s", out);
    /* regions: the label L_loop holds line 7 (60), the wait's own line 9 (3), and the code
     * after the wait loop lines 11-12 (25 + 10) */
    cr_expect_not_null(strstr(out, "       6       60  60.0%          40  L_loop:"), "%s", out);
    cr_expect_not_null(strstr(out, "       8        3   3.0%          40  L_wait_tfull_1:"), "%s", out);
    cr_expect_not_null(strstr(out, "      11       35  35.0%          80  (after L_wait_tfull_1)"), "%s", out);
    cr_expect_not_null(strstr(out, "long_sb 92%, selected 8%"), "%s", out);
    cr_expect_not_null(strstr(out, "math 80%, selected 20%"), "%s", out);
    /* --top 3: the two lines with fewest samples are not listed */
    cr_expect_null(strstr(out, "mov.u32 %r1, 0;"), "%s", out);
}

Test(ncu_lines, refuses_what_it_cannot_read)
{
    static char out[4096];
    cr_expect_eq(run("/nonexistent/lines.csv", out, sizeof out), 2);
    cr_expect_not_null(strstr(out, "[NCU_LINES_READ]"), "%s", out);
    cr_expect_eq(run("tests/data/ncu_source_small.csv", out, sizeof out), 2);
    cr_expect_not_null(strstr(out, "[NCU_LINES_FORMAT]"), "%s", out);
    cr_expect_eq(run("tests/data/ncu_lines_small.csv --ptx /nonexistent.ptx", out, sizeof out), 2);
    cr_expect_not_null(strstr(out, "[NCU_LINES_PTX]"), "%s", out);
    cr_expect_eq(run("tests/data/ncu_lines_small.csv --top -1", out, sizeof out), 2);
    cr_expect_not_null(strstr(out, "[NCU_LINES_TOP]"), "%s", out);
}
