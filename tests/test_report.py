#!/usr/bin/env python3
"""test_report.py REPORT.json -- one line on what `make test` ran, and why the rest was skipped.

Criterion's closing line counts the tests that ran; the GPU suites skip themselves without a
GPU and are not in it.  This reads the suite's JSON report (fp4lr-tests --json=FILE) and
prints the totals with each distinct skip reason and how many tests gave it, so that a log
says how much was not tested.  Exit status: 0; 1 the report counts failures or errors; 2 the
report cannot be read.
"""

import collections
import json
import sys


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(argv) != 2 else sys.stdout)
        return 0 if len(argv) == 2 else 2
    try:
        with open(argv[1]) as f:
            report = json.load(f)
        counts = {k: int(report[k]) for k in ("passed", "failed", "errored", "skipped")}
        reasons = collections.Counter()
        for suite in report["test_suites"]:
            for test in suite["tests"]:
                if test["status"] == "SKIPPED":
                    why = " ".join(test.get("messages") or []).strip() or "no reason given"
                    reasons[why.split("\n")[0][:160]] += 1
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"test_report: {argv[1]}: not a readable Criterion JSON report ({e})", file=sys.stderr)
        return 2
    line = (f"tests: {counts['passed']} passed, {counts['failed']} failed, {counts['errored']} errored, "
            f"{counts['skipped']} skipped")
    print(line + (":" if reasons else ""))
    for why, n in reasons.most_common():
        # Criterion's word for a test its filter left out
        shown = "not selected (--filter)" if why == "The test was skipped." else why
        print(f"  {n:4d} skipped: {shown}")
    return 1 if counts["failed"] or counts["errored"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
