#!/usr/bin/env python3
"""ncu_roles.py -- where a warp-specialised sm_90a kernel's warps spend their time, by role.

Reads the per-instruction source view that Nsight Compute exports for one profiled kernel,

    ncu --set full --import-source no -o prof BINARY ...
    ncu -i prof.ncu-rep --page source --csv --print-source sass > src.csv

and splits the SASS into the kernel's roles by its register moves (tools/gen_sm90a.py's
kernels): instructions before `USETMAXREG.DEALLOC` are the common setup, from there to
`USETMAXREG.TRY_ALLOC` the transform / producer warpgroup(s), after it the consumers.  The
mbarrier retry loops ptxas moves to the end of the function go to the role whose branch
jumps to them.  For each role it prints the warp-state samples (share of the kernel's
samples, the share in which a warp issued, `stall_selected`), the stall reasons, the
instructions executed, and the instructions that hold the most samples; with
--details (ncu --page details --csv) also the kernel-wide figures (SM frequency, elapsed
cycles, issue slots, L1/shared-memory throughput).

Exit status: 0, or 2 for unreadable or foreign input (the message says which rule).
"""
import argparse
import collections
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"
DETAIL_METRICS = ("SM Frequency", "Elapsed Cycles", "Duration", "Compute (SM) Throughput",
                  "L1/TEX Cache Throughput", "Issue Slots Busy", "Executed Ipc Active",
                  "Registers Per Thread", "Block Size")


class InputError(Exception):
    pass


def read_csv(path, rule):
    try:
        with open(path, newline="") as f:
            return list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise InputError(f"{path}: cannot read ({getattr(e, 'strerror', None) or e}) [{rule}]")


def read_source(path):
    """The kernel name and the rows (dicts) of an ncu source-page CSV."""
    rows = read_csv(path, "NCU_SOURCE_READ")
    if len(rows) < 3 or rows[0][:1] != ["Kernel Name"]:
        raise InputError(f"{path}: not an ncu source page (first line must be \"Kernel Name\",<name>; "
                         "export with --page source --csv --print-source sass) [NCU_SOURCE_FORMAT]")
    header = rows[1]
    for need in ("Address", "Source", SAMPLES, EXECUTED):
        if need not in header:
            raise InputError(f"{path}: column \"{need}\" missing [NCU_SOURCE_COLUMNS]")
    body = [dict(zip(header, r)) for r in rows[2:] if len(r) == len(header)]
    return rows[0][1], header, body


def as_int(text):
    try:
        return int(text.replace(",", "")) if text not in ("", "-") else 0
    except ValueError:
        return 0


def opcode(src):
    words = src.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else "?"


def barrier_wait(body, i):
    """The mbarrier operand when row i is a branch on a try_wait's predicate Pn in the rows
    just before it (ptxas keeps the first try_wait inline), else None: the `@!Pn BRA` that
    loops on an unbounded wait, or the `@Pn BRA` out of a bounded one (the watchdog's spin,
    tools/ptxgen.py: its loop-back branches on a time compare that may reuse Pn)."""
    src = body[i]["Source"].strip()
    if opcode(src) != "BRA" or not src.startswith(("@!P", "@P")):
        return None
    pred = src.split()[0].lstrip("@!")
    for j in range(i - 1, max(i - 48, -1), -1):
        prev = body[j]["Source"].strip()
        if "TRYWAIT" in prev and f" {pred}," in prev:
            return prev[prev.index("["):prev.index("]") + 1]
    return None


def split_roles(body):
    """Role of every row: setup, transform, consumer; retry loops by their branches."""
    srcs = [r["Source"].strip() for r in body]
    dealloc = next((i for i, s in enumerate(srcs) if "USETMAXREG.DEALLOC" in s), None)
    alloc = next((i for i, s in enumerate(srcs) if "USETMAXREG.TRY_ALLOC" in s), None)
    if dealloc is None or alloc is None or alloc < dealloc:
        raise InputError("no USETMAXREG.DEALLOC ... USETMAXREG.TRY_ALLOC pair in the SASS: not a "
                         "warp-specialised fp4lr kernel [NCU_ROLES_MARKERS]")
    exits = [i for i, s in enumerate(srcs) if opcode(s) == "EXIT"]
    last_exit = max(e for e in exits) if exits else len(srcs) - 1
    roles = []
    for i in range(len(srcs)):
        roles.append("setup" if i < dealloc else "transform" if i < alloc else "consumer")
    # the out-of-line retry loops after the last EXIT: each block belongs to the role of
    # the branch in the body that jumps to its first instruction
    owner = {}
    for i, src in enumerate(srcs[:last_exit + 1]):
        if opcode(src) == "BRA":
            owner.setdefault(src.split()[-1].lower(), roles[i])
    current = "consumer"
    for j in range(last_exit + 1, len(srcs)):
        current = owner.get(body[j]["Address"].lower(), current)
        roles[j] = current
    return roles


def summarise(body, header, roles, top):
    stalls = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    total = sum(as_int(r[SAMPLES]) for r in body) or 1
    out = []
    for role in ("setup", "transform", "consumer"):
        rows = [(i, r) for i, r in enumerate(body) if roles[i] == role]
        samples = sum(as_int(r[SAMPLES]) for _, r in rows)
        if not rows:
            continue
        reasons = collections.Counter()
        for _, r in rows:
            for h in stalls:
                reasons[h[len("stall_"):]] += as_int(r[h])
        executed = sum(as_int(r[EXECUTED]) for _, r in rows)
        issued = reasons.get("selected", 0)
        out.append(f"{role}: {samples} samples ({samples / total:.1%} of the kernel's), issuing in "
                   f"{issued / max(samples, 1):.1%} of them; {executed} warp instructions executed")
        parts = [f"{k} {v / max(samples, 1):.1%}" for k, v in reasons.most_common(10) if v]
        out.append("    stalls: " + ", ".join(parts))
        ops = collections.Counter()
        for _, r in rows:
            ops[opcode(r["Source"].strip())] += as_int(r[EXECUTED])
        out.append("    executed by opcode: " + ", ".join(f"{k} {v}" for k, v in ops.most_common(8)))
        waits = sum(as_int(r[SAMPLES]) for i, r in rows if barrier_wait(body, i))
        out.append(f"    in mbarrier waits (the branch after a try_wait): {waits / max(samples, 1):.1%}")
        heavy = sorted(rows, key=lambda ir: -as_int(ir[1][SAMPLES]))[:top]
        for i, r in heavy:
            s = as_int(r[SAMPLES])
            if not s:
                break
            why = sorted(((as_int(r[h]), h[len("stall_"):]) for h in stalls), reverse=True)[:2]
            tag = f"  [waits on {barrier_wait(body, i)}]" if barrier_wait(body, i) else ""
            out.append(f"    {s / max(samples, 1):6.1%}  row {i:5d}  {r['Source'].strip()[:64]:64s} "
                       + " ".join(f"{n}:{v}" for v, n in why if v) + tag)
    return out


def details(path):
    rows = read_csv(path, "NCU_DETAILS_READ")
    if not rows or "Metric Name" not in rows[0]:
        raise InputError(f"{path}: not an ncu details page (export with --page details --csv) "
                         "[NCU_DETAILS_FORMAT]")
    h = rows[0]
    out = []
    for r in rows[1:]:
        d = dict(zip(h, r))
        if d.get("Metric Name") in DETAIL_METRICS:
            out.append(f"{d['Metric Name']}: {d.get('Metric Value', '')} {d.get('Metric Unit', '')}".rstrip())
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", help="ncu --page source --csv --print-source sass output")
    ap.add_argument("--details", help="ncu --page details --csv output of the same report")
    ap.add_argument("--top", type=int, default=6, help="instructions listed per role (default 6)")
    a = ap.parse_args(argv)
    try:
        name, header, body = read_source(a.source)
        roles = split_roles(body)
        lines = [f"kernel: {name}"]
        if a.details:
            lines += details(a.details)
        lines += summarise(body, header, roles, max(a.top, 0))
    except InputError as e:
        print(f"ncu_roles: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
