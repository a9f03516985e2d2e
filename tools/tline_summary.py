#!/usr/bin/env python3
"""tline_summary.py FILE [FILE ...] -- what a launch's timeline says (fp4lr-check --timeline).

FILE: "cta,event,us" rows (microseconds after the launch's earliest entry), from a kernel
built with FP4LR_GEN_EXPERIMENT=tline (tools/sm90a_ptx/flags.py names the events).  Prints, per
event, how many CTAs stored it and the minimum, median and maximum time over them, then
per CTA the busy span: from its entry to its last event.

Exit status: 0 ok; 2 bad arguments or unusable input (a FILE that cannot be read, lacks the
cta,event,us header, holds a row that is not three numbers, or has no rows).
"""
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sm90a_ptx.flags import TLINE_NAMES  # noqa: E402  (the event names, one table)

COLUMNS = ("cta", "event", "us")


def summary(path):
    ev = {}
    last = {}
    with open(path) as f:
        rows = csv.DictReader(f)
        if rows.fieldnames is None:
            raise ValueError("no rows (an empty file)")
        missing = [k for k in COLUMNS if k not in rows.fieldnames]
        if missing:
            raise ValueError(f"not a timeline CSV: no {','.join(COLUMNS)} header (missing columns: "
                             f"{', '.join(missing)})")
        for row in rows:
            try:
                c, e, us = int(row["cta"]), int(row["event"]), float(row["us"])
            except (TypeError, ValueError):
                raise ValueError(f"line {rows.line_num}: not cta,event,us numbers (a truncated or malformed row)")
            ev.setdefault(e, []).append(us)
            last[c] = max(last.get(c, 0.0), us)
    if not ev:
        raise ValueError("no rows (an empty timeline: did the kernel store any event?)")
    out = [f"# {path}", f"{'event':>5}  {'name':<42}{'CTAs':>5}{'min':>9}{'median':>9}{'max':>9}  (us)"]
    for e in sorted(ev):
        v = ev[e]
        out.append(f"{e:>5}  {TLINE_NAMES.get(e, '?'):<42}{len(v):>5}{min(v):>9.2f}"
                   f"{statistics.median(v):>9.2f}{max(v):>9.2f}")
    ends = sorted(last.values())
    if ends:
        out.append(f"last event of a CTA: min {ends[0]:.2f}, median {statistics.median(ends):.2f}, "
                   f"max {ends[-1]:.2f} us")
    return "\n".join(out)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    for p in argv[1:]:
        try:
            print(summary(p))
        except (OSError, ValueError, csv.Error) as err:
            why = f"cannot read ({err.strerror})" if isinstance(err, OSError) else err
            print(f"tline_summary: {p}: {why}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
