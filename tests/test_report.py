#!/usr/bin/env python3
"""test_report.py REPORT.json -- one line on what `make test` ran, and why the rest was skipped.

Criterion's closing line counts the tests that ran; the GPU suites skip themselves without a
GPU and are not in it.  This reads the suite's JSON report (fp4lr-tests --json=FILE) and
prints the totals with each distinct skip reason and how many tests gave it, so that a log
says how much was not tested.  Exit status: 0; 1 the report counts failures or errors; 2 the
report cannot be read.

Criterion (2.4.1) writes each message into the report as it is, without escaping: a message
with a double quote, a backslash or a tab makes the file invalid JSON, and such messages come
with failures.  So a report that does not parse is read again with each message line escaped
(the report puts one message a line: `"messages": ["..."]` or one element a line between
`"messages": [` and `]`).
"""

import collections
import json
import re
import sys

ONE_LINE = re.compile(r'^(\s*"messages": \[)"(.*)"(\]\s*)$')
OPEN = re.compile(r'^\s*"messages": \[\s*$')
CLOSE = re.compile(r'^\s*\]\s*$')


def escape_messages(text):
    """The report with every message line's text escaped as a JSON string."""
    lines, out, inside = text.split("\n"), [], False
    for i, line in enumerate(lines):
        m = ONE_LINE.match(line)
        if not inside and m:
            out.append(m.group(1) + json.dumps(m.group(2)) + m.group(3))
        elif not inside and OPEN.match(line):
            inside = True
            out.append(line)
        elif inside and CLOSE.match(line):
            inside = False
            out.append(line)
        elif inside:
            # the last element (the next line closes the list) has no comma after it
            last = i + 1 < len(lines) and CLOSE.match(lines[i + 1]) is not None
            body = line.strip()
            end = len(body) if last else len(body) - 1
            if not (body.startswith('"') and body[end - 1:end] == '"' and (last or body.endswith(","))):
                raise ValueError(f"line {i + 1}: not a message element: {line[:80]!r}")
            indent = line[: len(line) - len(line.lstrip())]
            out.append(indent + json.dumps(body[1:end - 1]) + ("" if last else ","))
        else:
            out.append(line)
    return "\n".join(out)


def load_report(path):
    with open(path) as f:
        text = f.read()
    try:
        return json.loads(text)
    except ValueError:
        return json.loads(escape_messages(text))


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(argv) != 2 else sys.stdout)
        return 0 if len(argv) == 2 else 2
    try:
        report = load_report(argv[1])
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
