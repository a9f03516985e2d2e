#!/usr/bin/env python3
"""tline_summary.py [--walk G,DP,Q,R,NKS[,cfirst]] [--span A,B ...] FILE [FILE ...] -- what a launch's timeline says (fp4lr-check --timeline).

FILE: "cta,event,us" rows (microseconds after the launch's earliest entry), from a kernel
built with FP4LR_GEN_EXPERIMENT=tline (tools/sm90a_ptx/flags.py names the events).  Prints, per
event, how many CTAs stored it and the minimum, median and maximum time over them, then
per CTA the busy span: from its entry to its last event.

--walk G,DP,Q,R,NKS[,cfirst]: the launch's stream-K walk (fp4lr_sm90a_sk of host/sm90a_gemm.h:
G clusters, DP whole tiles, the split iterations dealt q to each cluster and one more to the
first r, NKS K stages a tile; one-CTA clusters).  Then each CTA's units get their roles (a
whole tile; a contributor, which does not start its tile; an owner, which starts it and does
not reach its end), and it prints per role: the K loop's time per K stage (event 3+4u minus
2+4u over the unit's stages), a contributor's hand-off (unit finished minus K loop done), an
owner's fix-up (fix-up done minus K loop done) and the gap before a unit's first A stage (the
previous unit finished -> this one's A stage 0 full).  `cfirst` models the walk of
FP4LR_GEN_EXPERIMENT=skorder (a contributor piece before the whole tiles).  Units past the
events the kernel stores (six) are left out.

--span A,B (repeatable): event B minus event A over the CTAs that stored both: their count,
mean, median and maximum.  The mean, because %globaltimer moves in steps of about 0.26 us, so
the median of a sub-microsecond span is one of a few values (how the stamps of
FP4LR_GEN_EXPERIMENT=tline,tlpro are read: bench/results/experiments/README.md).

Exit status: 0 ok; 2 bad arguments or unusable input (a FILE that cannot be read, lacks the
cta,event,us header, holds a row that is not three numbers, or has no rows; a --walk that is
not five non-negative integers with G, NKS >= 1 and an optional cfirst; a --span that is not
two event numbers).
"""
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sm90a_ptx.flags import TLINE_NAMES  # noqa: E402  (the event names, one table)

COLUMNS = ("cta", "event", "us")


def parse_walk(text):
    """G,DP,Q,R,NKS[,cfirst] -> (g, dp, q, r, nks, cfirst); ValueError naming the rule."""
    parts = text.split(",")
    cfirst = len(parts) == 6 and parts[5] == "cfirst"
    nums = parts[:5] if cfirst else parts
    try:
        vals = [int(x) for x in nums]
    except ValueError:
        vals = []
    if len(vals) != 5 or min(vals) < 0 or vals[0] < 1 or vals[4] < 1:
        raise ValueError(f"--walk '{text}': G,DP,Q,R,NKS (non-negative integers, G and NKS >= 1), "
                         "optionally followed by ,cfirst")
    return (*vals, cfirst)


def cta_units(b, walk):
    """The units of CTA b in walk order, as (role, kb, ke): walk.py's unit_first / unit_next."""
    g, dp, q, r, nks, cfirst = walk
    whole = [("whole", 0, nks)] * len(range(b, dp, g))
    s0 = b * q + min(b, r)
    s1 = s0 + q + (1 if b < r else 0)
    split, it = [], s0
    while it < s1:
        t = it // nks
        kb = it - t * nks
        ke = min(nks, kb + s1 - it)
        split.append(("contributor" if kb else "owner" if ke < nks else "whole", kb, ke))
        it = t * nks + ke
    if cfirst and split and split[0][0] == "contributor":
        return split[:1] + whole + split[1:]
    return whole + split


def events_by_cta(path):
    """{cta: {event: us}} of a timeline that summary() has read without complaint."""
    cta = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            cta.setdefault(int(row["cta"]), {})[int(row["event"])] = float(row["us"])
    return cta


def parse_span(text):
    """A,B -> (a, b); ValueError naming the rule."""
    parts = text.split(",")
    if len(parts) != 2 or not all(x.isdigit() for x in parts):
        raise ValueError(f"--span '{text}': two event numbers, A,B")
    return int(parts[0]), int(parts[1])


def spans(path, pairs):
    """Event B minus event A over the CTAs that stored both, for each (A, B) of `pairs`."""
    cta = events_by_cta(path)
    out = []
    for a, b in pairs:
        v = [ev[b] - ev[a] for ev in cta.values() if a in ev and b in ev]
        fig = (f"mean {statistics.mean(v):.3f}, median {statistics.median(v):.2f}, max {max(v):.2f} us"
               if v else "no CTA stored both")
        out.append(f"span {a} -> {b} ({TLINE_NAMES.get(a, '?')} -> {TLINE_NAMES.get(b, '?')}): "
                   f"{len(v)} CTAs, {fig}")
    return "\n".join(out)


def roles(path, walk):
    """Per-role figures of one timeline under `walk` (see --walk)."""
    cta = events_by_cta(path)
    per_stage, handoff, fixup, gap = {}, [], [], {}
    for b, ev in cta.items():
        for u, (role, kb, ke) in enumerate(cta_units(b, walk)[:6]):
            start, kdone, fdone, fin = 2 + 4 * u, 3 + 4 * u, 4 + 4 * u, 5 + 4 * u
            if start in ev and kdone in ev:
                per_stage.setdefault(role, []).append((ev[kdone] - ev[start]) / (ke - kb))
            if role == "contributor" and kdone in ev and fin in ev:
                handoff.append(ev[fin] - ev[kdone])
            if role == "owner" and kdone in ev and fdone in ev:
                fixup.append(ev[fdone] - ev[kdone])
            if u and start in ev and fin - 4 in ev:
                gap.setdefault(role, []).append(ev[start] - ev[fin - 4])

    def fig(v):
        return f"median {statistics.median(v):.2f}, max {max(v):.2f} us ({len(v)} units)" if v else "none"
    out = [f"walk G={walk[0]} DP={walk[1]} q={walk[2]} r={walk[3]} K stages={walk[4]}"
           f"{' (contributor piece first)' if walk[5] else ''}:"]
    for role in ("whole", "contributor", "owner"):
        if role in per_stage:
            out.append(f"  {role:<12} K loop per stage: median {statistics.median(per_stage[role]):.3f} us"
                       f" ({len(per_stage[role])} units); gap before it: {fig(gap.get(role, []))}")
    out.append(f"  contributor hand-off (K loop done -> finished): {fig(handoff)}")
    out.append(f"  owner fix-up (K loop done -> fix-up done): {fig(fixup)}")
    return "\n".join(out)


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
    args, walk, pairs = argv[1:], None, []
    while args and args[0] in ("--walk", "--span"):
        try:
            if len(args) < 2:
                raise ValueError(f"{args[0]} needs " + ("G,DP,Q,R,NKS[,cfirst]" if args[0] == "--walk" else "A,B"))
            if args[0] == "--walk":
                walk = parse_walk(args[1])
            else:
                pairs.append(parse_span(args[1]))
        except ValueError as err:
            print(f"tline_summary: {err}", file=sys.stderr)
            return 2
        args = args[2:]
    if not args:
        print("tline_summary: no FILE (tline_summary.py --help)", file=sys.stderr)
        return 2
    for p in args:
        try:
            print(summary(p))
            if walk:
                print(roles(p, walk))
            if pairs:
                print(spans(p, pairs))
        except (OSError, ValueError, csv.Error) as err:
            why = f"cannot read ({err.strerror})" if isinstance(err, OSError) else err
            print(f"tline_summary: {p}: {why}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
