/* tools/ncu_roles.py: the per-role split of an ncu source page (tests/data/ncu_source_small.csv,
 * a hand-made page of a warp-specialised kernel: setup, a transform warpgroup after
 * USETMAXREG.DEALLOC, consumers after USETMAXREG.TRY_ALLOC, and the two mbarrier retry loops
 * ptxas moves behind the last EXIT; tests/data/ncu_source_watchdog.csv: a bounded wait), and its
 * refusals. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include "support_cmd.h"

static int run(const char *args, char *out, size_t cap)
{
    return tsupport_run_py_tool("ncu_roles.py", args, out, cap);
}

Test(ncu_roles, splits_the_roles_and_their_retry_loops)
{
    static char out[16384];
    cr_assert_eq(run("tests/data/ncu_source_small.csv", out, sizeof out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "kernel: fp4lr_sm90a_test_kernel"), "%s", out);
    /* transform: 4+40+40+400+4 in the body, 500+500 in its retry loop at 0x300 */
    cr_expect_not_null(strstr(out, "transform: 54 samples (41.5% of the kernel's), issuing in 18.5% of "
                                   "them; 1488 warp instructions executed"), "%s", out);
    cr_expect_not_null(strstr(out, "consumer: 73 samples (56.2% of the kernel's), issuing in 6.8% of "
                                   "them; 2056 warp instructions executed"), "%s", out);
    cr_expect_not_null(strstr(out, "in mbarrier waits (the branch after a try_wait): 82.2%"), "%s", out);
    cr_expect_not_null(strstr(out, "[waits on [UR11]]"), "%s", out);
    cr_expect_not_null(strstr(out, "[waits on [R22+URZ]]"), "%s", out);
}

/* tests/data/ncu_source_watchdog.csv: a bounded wait (tools/ptxgen.py's watchdog): the first
 * try_wait's `@P0 BRA` out of the wait, and the spin behind the last EXIT that leaves by
 * `@P0 BRA` too and loops on a time compare; both branches are the wait's samples (70 of the
 * transform's 95) */
Test(ncu_roles, counts_a_bounded_wait_as_a_wait)
{
    static char out[16384];
    static const char *const want[] = {"transform: 95 samples (86.4% of the kernel's)",
                                       "in mbarrier waits (the branch after a try_wait): 73.7%",
                                       "row    12  @P0  BRA 0x160", "long_sb:40  [waits on [R22+URZ]]",
                                       "long_sb:30  [waits on [R22+URZ]]"};
    cr_assert_eq(run("tests/data/ncu_source_watchdog.csv", out, sizeof out), 0, "%s", out);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_expect_not_null(strstr(out, want[i]), "no '%s' in:\n%s", want[i], out);
}

Test(ncu_roles, refuses_what_it_cannot_read)
{
    static char out[4096];
    cr_expect_eq(run("/nonexistent/src.csv", out, sizeof out), 2);
    cr_expect_not_null(strstr(out, "[NCU_SOURCE_READ]"), "%s", out);
    cr_expect_eq(run("tests/data/ncu_source_small.csv --details tests/data/ncu_source_small.csv", out,
                     sizeof out), 2);
    cr_expect_not_null(strstr(out, "[NCU_DETAILS_FORMAT]"), "%s", out);
    cr_expect_eq(run("Makefile", out, sizeof out), 2);
    cr_expect_not_null(strstr(out, "[NCU_SOURCE_FORMAT]"), "%s", out);
}
