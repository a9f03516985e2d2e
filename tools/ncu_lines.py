#!/usr/bin/env python3
"""ncu_lines.py -- where a kernel's warps spend their samples, by line of its generated PTX.

Reads the source view that Nsight Compute exports for one kernel profiled with line
information (tools/lineinfo_build.sh builds the cubins with a `.loc` per PTX instruction):

    FP4LR_KERNEL_DIR=DIR ncu --set full --import-source yes -k regex:fp4lr -c 1 -o prof BINARY ...
    ncu -i prof.ncu-rep --page source --csv --print-source cuda,sass > lines.csv

In that export a row with a line number is one PTX line (its totals); the SASS rows under
it carry no line number.  ptxas moves an mbarrier wait's retry loop behind the function's
end and ncu credits its samples to the PTX line before the wait's label (the address
computation), so a wait shows up in the region that leads to it.  The report prints

  - the samples of each region of the PTX file: a region starts at every label line
    (`L_name:`), every full-line comment (the generator opens each block with one) and
    after every mbarrier wait loop, so a wait's samples and the code it guards, the
    transform's chunks, the producer step and the consumer's K loop come out separately;
  - the --top lines holding the most samples, each with its PTX text and its three
    largest stall reasons.

--ptx FILE names the PTX file the line numbers refer to (the export names it in its first
row, relative to where ncu ran; give it when this runs elsewhere).  Without it only line
numbers are printed.

Exit status: 0, or 2 for unreadable or foreign input (the message says which rule).
"""
import argparse
import csv
import re
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def fail(rule, msg):
    print(f"ncu_lines: {msg} [{rule}]", file=sys.stderr)
    sys.exit(2)


def to_int(text):
    try:
        return int(text)
    except ValueError:
        return 0


def read_lines(path):
    """{line number: (samples, executed, {stall: samples})}, the PTX file named in the export."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        fail("NCU_LINES_READ", f"{path}: cannot read ({getattr(err, 'strerror', None) or err})")
    ptx = None
    header = None
    for i, row in enumerate(rows[:8]):
        if len(row) >= 2 and row[0] == "File Path":
            ptx = row[1]
        if "Line No" in row and SAMPLES in row:
            header = i
            break
    if header is None:
        fail("NCU_LINES_FORMAT", f"{path}: not an `ncu --page source --csv --print-source cuda,sass` "
             "export with line information (no 'Line No' column)")
    names = rows[header]
    col = {name: names.index(name) for name in (SAMPLES, EXECUTED)}
    stalls = [(i, n[len("stall_"):]) for i, n in enumerate(names)
              if n.startswith("stall_") and "Not Issued" not in n]
    lines = {}
    for row in rows[header + 1:]:
        if len(row) < len(names) or not row[0].isdigit():
            continue
        reasons = {name: to_int(row[i]) for i, name in stalls}
        lines[int(row[0])] = (to_int(row[col[SAMPLES]]), to_int(row[col[EXECUTED]]), reasons)
    if not lines:
        fail("NCU_LINES_EMPTY", f"{path}: no row with a line number")
    return lines, ptx


BLOCK = re.compile(r"^\s*(L_\w+:|//)")
WAIT_END = re.compile(r"^\s*@!%pw bra (L_wait_\w+);")


def regions(text_lines):
    """[(first line, title)] where a region starts (1-based line numbers): a label, a
    full-line comment, and the line after an mbarrier wait loop's branch back (so a wait's
    own samples stay apart from the code it guards; a bounded wait, tools/ptxgen.py's
    watchdog, ends at its own label L_wait_<what>_<n>_ok)."""
    out = [(1, "(top of file)")]
    for n, text in enumerate(text_lines, 1):
        if BLOCK.match(text):
            out.append((n, text.strip()[:70]))
        elif n > 1 and WAIT_END.match(text_lines[n - 2]):
            out.append((n, f"(after {WAIT_END.match(text_lines[n - 2]).group(1)})"))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("csv", help="the source view export (see above)")
    ap.add_argument("--ptx", help="the PTX file its line numbers refer to")
    ap.add_argument("--top", type=int, default=25, help="lines to list (default 25)")
    ap.add_argument("--min-share", type=float, default=0.5,
                    help="regions below this share of the samples are not listed (percent; default 0.5)")
    args = ap.parse_args(argv)
    if args.top < 0:
        fail("NCU_LINES_TOP", f"--top {args.top}: must be >= 0")
    lines, named = read_lines(args.csv)
    text = None
    ptx = args.ptx or named
    if ptx:
        try:
            with open(ptx) as f:
                text = f.read().split("\n")
        except OSError:
            if args.ptx:
                fail("NCU_LINES_PTX", f"--ptx {args.ptx}: cannot read")
            text = None   # the export's path need not exist here
    total = sum(s for s, _, _ in lines.values())
    if total == 0:
        fail("NCU_LINES_SAMPLES", f"{args.csv}: no warp-state samples (profile with --set full)")
    print(f"{args.csv}: {total} samples over {len(lines)} PTX lines"
          + (f" of {ptx}" if text else " (no PTX text: pass --ptx)"))

    if text:
        starts = regions(text)
        print(f"\nby region (a label, a comment line or the end of a wait loop opens one; >= {args.min_share} % listed):")
        print(f"  {'first':>6} {'samples':>8} {'share':>6} {'executed':>11}  region")
        for k, (first, title) in enumerate(starts):
            last = starts[k + 1][0] - 1 if k + 1 < len(starts) else len(text)
            sel = [v for n, v in lines.items() if first <= n <= last]
            s = sum(v[0] for v in sel)
            if 100.0 * s / total < args.min_share:
                continue
            print(f"  {first:>6} {s:>8} {100.0 * s / total:5.1f}% {sum(v[1] for v in sel):>11}  {title}")

    print(f"\nthe {args.top} lines with the most samples:")
    for n, (s, ex, reasons) in sorted(lines.items(), key=lambda kv: -kv[1][0])[:args.top]:
        top = sorted(reasons.items(), key=lambda kv: -kv[1])[:3]
        why = ", ".join(f"{name} {100.0 * v / s:.0f}%" for name, v in top if v) if s else ""
        src = text[n - 1].strip()[:60] if text and n <= len(text) else ""
        print(f"  {n:>6} {100.0 * s / total:5.1f}% {ex:>10}  {src:60}  {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
