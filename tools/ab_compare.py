#!/usr/bin/env python3
"""ab_compare.py -- compares two kernel builds timed alternately by tools/ab_kernels.sh.

    ab_compare.py [--timing-only LABEL] DIR

DIR holds fp4lr-bench CSVs named LABEL-ROUND.csv for exactly two labels, A and B (the order
ab_kernels.sh wrote to DIR/.ab_order; without that file, alphabetical), timed alternately:
A-1, B-1, A-2, B-2, ...  For every (shape, variant) both builds ran, it prints one
fixed-width line with the TFLOP/s of each round and B / A of the means; then the geometric
mean of B / A per variant.  Rows that are not `ok` are listed, never averaged: a build that
fails validation on a shape (state `invalid`, or `pass` 0) or cannot run it (`failed`) has
no speed on it, and a skipped row (not built, does not fit) is only named.

--timing-only LABEL: LABEL is a timing-only build (e.g. FP4LR_GEN_EXPERIMENT=epinowait, whose
results may be wrong by design): its rows that fail validation are compared by their time
all the same, marked "t", and do not make the exit status 1.  The other build's must pass.

Exit status: 0; 1 when a row of either build failed validation or failed to run; 2 for
unusable input (among it a CSV that is empty, header-only, or holds a truncated row).
"""
import collections
import csv
import math
import os
import re
import sys

NAME = re.compile(r"^(?P<label>[A-Za-z0-9_.+]+)-(?P<round>[0-9]+)\.csv$")


class InputError(Exception):
    pass


def load(d):
    runs = collections.defaultdict(dict)   # label -> round -> rows
    try:
        names = sorted(os.listdir(d))
    except OSError as e:
        raise InputError(f"{d}: cannot list ({e.strerror}) [AB_DIR]")
    for n in names:
        m = NAME.match(n)
        if not m:
            continue
        try:
            with open(os.path.join(d, n), newline="") as f:
                rows = list(csv.DictReader(f))
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            raise InputError(f"{d}/{n}: cannot read ({e}) [AB_CSV]")
        if not rows:
            raise InputError(f"{d}/{n}: no rows (an empty or header-only CSV: did that run measure "
                             "anything?) [AB_CSV_EMPTY]")
        if not {"shape", "variant", "state", "tflops", "pass"} <= set(rows[0]):
            raise InputError(f"{d}/{n}: not an fp4lr-bench CSV (columns shape, variant, state, tflops, "
                             "pass) [AB_CSV_COLUMNS]")
        for i, r in enumerate(rows, 1):
            if None in r or None in r.values():
                raise InputError(f"{d}/{n}: row {i}: not as many fields as the header (a truncated or "
                                 "malformed row) [AB_CSV_ROW]")
            try:
                if r["tflops"] or r["state"] == "ok":
                    float(r["tflops"])
            except ValueError:
                raise InputError(f"{d}/{n}: row {i}: tflops '{r['tflops']}' is not a number [AB_CSV_ROW]")
        runs[m.group("label")][int(m.group("round"))] = rows
    if len(runs) != 2:
        raise InputError(f"{d}: expected the CSVs of exactly two labels (LABEL-ROUND.csv), found "
                         f"{len(runs)}: {', '.join(sorted(runs)) or 'none'} [AB_LABELS]")
    return runs


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    timing_only = None
    if len(argv) == 3 and argv[0] == "--timing-only":
        timing_only, argv = argv[1], argv[2:]
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__.strip())
        return 2
    d = argv[0]
    try:
        runs = load(d)
    except InputError as e:
        print(f"ab_compare: {e}", file=sys.stderr)
        return 2
    first = os.path.join(d, ".ab_order")
    if os.path.exists(first):
        with open(first) as f:
            order = f.read().split()[:2]
        if len(order) != 2:
            print(f"ab_compare: {first} does not name two labels [AB_ORDER]", file=sys.stderr)
            return 2
        a, b = order
        if {a, b} != set(runs):
            print(f"ab_compare: {first} names {a}, {b}; the CSVs are of {', '.join(sorted(runs))} "
                  "[AB_ORDER]", file=sys.stderr)
            return 2
    else:
        a, b = sorted(runs)
    if timing_only is not None and timing_only not in (a, b):
        print(f"ab_compare: --timing-only {timing_only}: the labels are {a}, {b} [AB_TIMING_ONLY]",
              file=sys.stderr)
        return 2
    timed_only = set()   # (shape, variant) compared by the time of a timing-only build's failed row
    speed = collections.defaultdict(lambda: {a: {}, b: {}})
    bad = []
    for label in (a, b):
        for rnd, rows in sorted(runs[label].items()):
            for r in rows:
                key = (r["shape"], r["variant"])
                where = f"{label}-{rnd}: {r['shape']} {r['variant']}"
                # a peer's row (cuBLAS: validated 0, "timed only") is compared like the others: the
                # same library in both builds' runs, so its ratio is the runs' drift
                checked = r.get("validated", "1") not in ("0", "false")
                failed = r["state"] == "invalid" or (r["state"] == "ok" and checked and r["pass"] not in ("1", "true"))
                if failed and label == timing_only and r.get("tflops"):
                    timed_only.add(key)
                    speed[key][label][rnd] = float(r["tflops"])
                    continue
                if failed:
                    bad.append(f"{where}: validation FAILED")
                    continue
                if r["state"] == "failed":
                    bad.append(f"{where}: run FAILED {r.get('note', '')}".rstrip())
                    continue
                if r["state"] != "ok":
                    bad.append(f"{where}: {r['state']} {r.get('note', '')}".rstrip())
                    continue
                speed[key][label][rnd] = float(r["tflops"])
    print(f"{'shape':<16} {'variant':<22} {a + ' (rounds)':>24} {b + ' (rounds)':>24} {b + '/' + a:>10}")
    ratios = collections.defaultdict(list)
    for (shape, variant), by in speed.items():
        if not by[a] or not by[b]:
            continue
        ma = sum(by[a].values()) / len(by[a])
        mb = sum(by[b].values()) / len(by[b])
        ra = " ".join(f"{by[a][k]:.1f}" for k in sorted(by[a]))
        rb = " ".join(f"{by[b][k]:.1f}" for k in sorted(by[b]))
        ratios[variant].append(mb / ma)
        mark = " t" if (shape, variant) in timed_only else ""
        print(f"{shape:<16} {variant:<22} {ra:>24} {rb:>24} {mb / ma:>10.3f}{mark}")
    for variant, rs in sorted(ratios.items()):
        g = math.exp(sum(math.log(x) for x in rs) / len(rs))
        print(f"geometric mean {b}/{a} {variant}: {g:.3f} ({len(rs)} shapes)")
    if timed_only:
        print(f"t: {timing_only} failed validation there (a timing-only build): its time compared all the same")
    for line in bad:
        print(f"not compared: {line}")
    return 1 if any("FAILED" in line for line in bad) else 0


if __name__ == "__main__":
    sys.exit(main())
