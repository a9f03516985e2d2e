/* tests/test_report.py (the line `make test` prints after Criterion's) on the reports Criterion
 * 2.4.1 writes: messages go in unescaped, so a failure or skip message with a double quote, a
 * backslash or a tab makes the file invalid JSON.  The report must still be read: the counts,
 * the skip reason as written, exit status 1 for a failure; a file that is not a report at all
 * is refused with status 2 and no traceback. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support_cmd.h"

/* What Criterion 2.4.1 wrote for a suite of one skipped, one passed and one failed test whose
 * messages hold quotes, a backslash, a tab and a trailing comma (checked by hand, 2026-12-05). */
static const char REPORT[] =
    "{\n"
    "  \"id\": \"Criterion v2.4.1\",\n"
    "  \"passed\": 1,\n"
    "  \"failed\": 1,\n"
    "  \"errored\": 0,\n"
    "  \"skipped\": 1,\n"
    "  \"test_suites\": [\n"
    "    {\n"
    "      \"name\": \"q\",\n"
    "      \"passed\": 1,\n"
    "      \"failed\": 1,\n"
    "      \"errored\": 0,\n"
    "      \"skipped\": 1,\n"
    "      \"tests\": [\n"
    "        {\n"
    "          \"name\": \"skip\",\n"
    "          \"assertions\": 0,\n"
    "          \"status\": \"SKIPPED\",\n"
    "          \"messages\": [\"no \"GPU\" here\"]\n"
    "        },\n"
    "        {\n"
    "          \"name\": \"passes\",\n"
    "          \"assertions\": 1,\n"
    "          \"status\": \"PASSED\"\n"
    "        },\n"
    "        {\n"
    "          \"name\": \"fails\",\n"
    "          \"assertions\": 1,\n"
    "          \"status\": \"FAILED\",\n"
    "          \"messages\": [\n"
    "            \"cq.c:2: a \"quoted\" word and a back\\slash\ttab\",\n"
    "            \"  second \"line\",\",\n"
    "            \"  third\"\n"
    "          ]\n"
    "        }\n"
    "      ]\n"
    "    }\n"
    "  ]\n"
    "}\n";

static char dir[64], out[4096];

static int report(const char *text)
{
    char path[128], cmd[256];
    snprintf(dir, sizeof dir, "/tmp/fp4lr-report.XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/r.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "python3 tests/test_report.py '%s' 2>&1; rc=$?; rm -rf '%s'; exit $rc", path, dir);
    return tsupport_run_capture(cmd, out, sizeof out);
}

Test(test_report, reads_criterions_unescaped_messages)
{
    cr_expect_eq(report(REPORT), 1, "a failure is status 1: %s", out);
    cr_expect_str_eq(out, "tests: 1 passed, 1 failed, 0 errored, 1 skipped:\n     1 skipped: no \"GPU\" here\n");
}

Test(test_report, refuses_what_is_not_a_report)
{
    static char broken[sizeof REPORT];
    strcpy(broken, REPORT);
    char *cut = strstr(broken, "\"  third\"");
    cr_assert_not_null(cut);
    strcpy(cut, "  third\"\n");  /* a message element without its opening quote, and the end cut off */
    cr_expect_eq(report(broken), 2, "%s", out);
    cr_expect_not_null(strstr(out, "not a readable Criterion JSON report"), "%s", out);
    cr_expect_null(strstr(out, "Traceback"), "%s", out);
    cr_expect_eq(report("[1, 2]\n"), 2, "%s", out);
    cr_expect_null(strstr(out, "Traceback"), "%s", out);
}
