/* CPU suite: build/bin/fp4lr-budget, the budget solver's command line - its table and JSON,
 * the W-prepared tables (--w-prep, --w-inline, --yt-prepared), and the exit statuses and rules of bad requests. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "support_cmd.h"

static int budget(const char *args, char *out, size_t cap) { return tsupport_run_bin("fp4lr-budget", args, out, cap); }

Test(budget_cli, sm90a_tables)
{
    static char out[16384];
    cr_assert_eq(budget("--arch sm90a", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "W bf16 staging") != NULL, "the transform ring: %s", out);
    cr_expect(strstr(out, "total 215040 B") != NULL, "%s", out);
    cr_assert_eq(budget("--arch sm90a --w-prep", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "W prepared (f16/bf16)") != NULL && strstr(out, "w-ring") != NULL, "%s", out);
    cr_expect(strstr(out, "W tile (fp4)") == NULL, "no fp4 W in a W-prepared main stage: %s", out);
    cr_expect(strstr(out, "total 225280 B") != NULL, "3 x 9216 + 5 x 32768 + 2 x 16384 + 1024: %s", out);
    cr_assert_eq(budget("--arch sm90a --w-prep --json --transform-slots 4", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "\"stages_transform\": 4") != NULL, "%s", out);
    cr_assert_eq(budget("--arch sm90a --w-inline", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "W converter staging") != NULL, "%s", out);
    cr_expect(strstr(out, "total 226304 B") != NULL, "4 x 9216 + 4 x 32768 + 2 x 16384 + 24576 + 1024: %s", out);
    cr_assert_eq(budget("--arch sm90a --yt-prepared --rank 32", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "writeback 2") != NULL && strstr(out, "total 230400 B") != NULL,
              "the _w_yt fused table, 4 x 9216 + 4 x 32768 + L, U, slices + 2 x 16384 + 1024: %s", out);
    cr_expect_eq(budget("--arch sm90a --yt-prepared --w-inline", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "W_PREP") != NULL, "%s", out);
}

Test(budget_cli, bad_requests_name_their_rule)
{
    static char out[4096];
    cr_expect_eq(budget("--arch sm100a --w-prep", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "W_PREP") != NULL, "%s", out);
    cr_expect_eq(budget("--arch sm90a --transform-slots 4", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "TRANSFORM_STAGES") != NULL, "%s", out);
    cr_expect_eq(budget("--arch sm90a --w-prep --transform-slots 6", out, sizeof out), 2, "%s", out);
    cr_expect_eq(budget("--arch sm90a --w-inline --cluster 2", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "W_PREP") != NULL, "the _x kernels have one CTA: %s", out);
    cr_assert_eq(budget("--arch sm90a --w-inline --rank 32", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "stages: main 3") != NULL && strstr(out, "W converter staging") != NULL, "%s", out);
    cr_expect_eq(budget("--rank 1000001", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "is not a whole number in [-10^6, 10^6]") != NULL, "the range is named: %s", out);
    cr_expect_eq(budget("--bogus", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "USAGE") != NULL, "%s", out);
    cr_assert_eq(budget("--help", out, sizeof out), 0);
    cr_expect(strstr(out, "--w-prep") != NULL, "%s", out);
    cr_expect(strstr(out, "exit status: 0 solved, 2 bad input") != NULL, "%s", out);
}
