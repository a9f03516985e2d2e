/* tools/samples_clock.py: fp4lr-bench --samples joined with an nvidia-smi clock log
 * (tests/data/samples_clock_small.csv and samples_clock_smi.csv, hand-made: a row whose
 * four 10 ms launches ran at 1980 MHz uncapped, one whose 20 ms launches ran at 990 MHz
 * under the power cap, and one with two of each; the log every 5 ms between them, ending
 * in the partial line a killed nvidia-smi leaves), --skip, and its refusals. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "support_cmd.h"

static int run(const char *args, char *out, size_t cap)
{
    return tsupport_run_py_tool("samples_clock.py", args, out, cap);
}

#define SMALL "tests/data/samples_clock_small.csv"
#define LOG "tests/data/samples_clock_smi.csv"

Test(samples_clock, clock_cap_correlation_cycles_and_energy_per_row)
{
    static char out[8192];
    cr_assert_eq(run(SMALL " " LOG, out, sizeof out), 0, "%s", out);
    /* launches, median / min / p90 ms, med/min, MHz, capped, corr, Mcycles, W, mJ */
    cr_expect_not_null(strstr(out, "s               fast                         4    10.0000   10.0000   10.0000   "
                                   "1.000    1980      0%      -   19.800   600  6000.0"),
                       "%s", out);
    cr_expect_not_null(strstr(out, "s               slow                         4    20.0000   20.0000   20.0000   "
                                   "1.000     990    100%      -   19.800   700 14000.0"),
                       "%s", out);
    /* the mixed row: time follows the clock exactly (corr -1), its cycles do not move */
    cr_expect_not_null(strstr(out, "s               mixed                        4    15.0000   10.0000   20.0000   "
                                   "1.500    1485     50%  -1.00   19.800   650  9750.0"),
                       "%s", out);
    cr_expect_not_null(strstr(out, "launches under the power cap: 6 of 12 (50 %)"), "%s", out);
}

Test(samples_clock, skip_leaves_out_the_first_launches_of_a_round)
{
    static char out[8192];
    cr_assert_eq(run(SMALL " " LOG " --skip 2", out, sizeof out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "s               mixed                        2    20.0000   20.0000   20.0000   "
                                   "1.000     990    100%"),
                       "%s", out);
    cr_expect_not_null(strstr(out, "launches under the power cap: 4 of 6 (67 %)"), "%s", out);
}

Test(samples_clock, without_a_log_only_the_times)
{
    static char out[8192];
    cr_assert_eq(run(SMALL, out, sizeof out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "s               mixed                        4    15.0000   10.0000   20.0000   "
                                   "1.500       -      -       -        -     -       -"),
                       "%s", out);
    cr_expect_null(strstr(out, "power cap"), "%s", out);
}

Test(samples_clock, refuses_what_it_cannot_use)
{
    static char out[4096];
    cr_expect_eq(run("/nonexistent/samples.csv", out, sizeof out), 2);
    cr_expect_not_null(strstr(out, "[SAMPLES_CLOCK_READ]"), "%s", out);
    cr_expect_eq(run(LOG, out, sizeof out), 2, "a clock log is not a samples file");
    cr_expect_not_null(strstr(out, "no column shape, variant, round, launch, ms, start_unix_s"), "%s", out);
    cr_expect_not_null(strstr(out, "[SAMPLES_CLOCK_FORMAT]"), "%s", out);
    cr_expect_eq(run(SMALL " " SMALL, out, sizeof out), 2, "a samples file is not a clock log");
    cr_expect_not_null(strstr(out, "[SAMPLES_CLOCK_LOG]"), "%s", out);
    cr_expect_eq(run(SMALL " --skip 4", out, sizeof out), 2, "no launch left");
    cr_expect_not_null(strstr(out, "no launch left after --skip 4 [SAMPLES_CLOCK_SKIP]"), "%s", out);
    cr_expect_eq(run(SMALL " --skip -1", out, sizeof out), 2);
    cr_expect_not_null(strstr(out, "[SAMPLES_CLOCK_SKIP]"), "%s", out);
}
