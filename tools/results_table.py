#!/usr/bin/env python3
"""results_table.py -- the README's results table, generated from bench/results.

Reads a results file written by fp4lr-bench (JSON Lines, one record per run), takes the
newest record that compared against cuBLAS (or the record given with --index), and prints
a Markdown table: one line per (shape, variant), TFLOP/s, the ratio against cuBLAS bf16
measured in the same run, the plan's main stages and shared memory, and the validation.

    tools/results_table.py                        newest bench/results/*.jsonl[.gz] (by the
                                                  date in its name)
    tools/results_table.py FILE [--index N]       a given file / record
    tools/results_table.py --update-readme        rewrite the block between the
                                                  results markers of README.md

Exit status: 0 ok; 2 bad arguments or unusable input (no results file, one that cannot be
read or is not fp4lr-bench JSON Lines, no record compared against cuBLAS, --index out of
range, README.md without the results markers); the message names the file.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_jsonl  # noqa: E402  (the one reader of bench/results/*.jsonl)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def fail(msg):
    """Unusable input: one line on stderr, exit status 2."""
    print(f"results_table: {msg}", file=sys.stderr)
    sys.exit(2)


def newest_file():
    files = results_jsonl.results_files(ROOT)
    if not files:
        fail("no bench/results/*.jsonl yet (run fp4lr-bench on a GPU)")
    return files[-1]


def read_records(path):
    """The file's records (results_jsonl.read_records); fails naming the file and line otherwise."""
    try:
        records = results_jsonl.read_records(path)
    except results_jsonl.ResultsError as e:
        fail(str(e))
    if not records:
        fail(f"{path}: no records (an empty file)")
    return records


def pick(records, index, path):
    if index is not None:
        if not -len(records) <= index < len(records):
            fail(f"{path}: --index {index} out of range (the file holds {len(records)} records: "
                 f"0..{len(records) - 1}, or -{len(records)}..-1)")
        return records[index]
    try:
        with_peers = [r for r in records if any(x.get("ratio_vs_cublas_bf16") for x in r.get("results", []))]
    except (AttributeError, TypeError):
        fail(f"{path}: not fp4lr-bench records (their \"results\" are not lists of objects)")
    if not with_peers:
        fail(f"{path}: no record compared against cuBLAS (--index N picks one)")
    return with_peers[-1]


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def table(rec, path):
    out = []
    dev = rec["device"]
    git = rec.get("git", {})
    out.append(f"{dev['name']}, {dev['sm_count']} SMs, driver {dev['driver_version']}, "
               f"commit {git.get('commit', '?')}, {rec['time_utc']} "
               f"(`{os.path.relpath(path, ROOT)}`; `{rec['command']}`)")
    out.append("")
    out.append("| shape | M | N | K | r | variant | median ms | TFLOP/s | vs cuBLAS bf16 | per round | stages | "
               "smem KiB | validation |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for x in rec["results"]:
        if x.get("state") != "ok" or x.get("sweep"):
            continue  # stage-sweep points belong to the sweep plot, not the table
        plan = x.get("plan") or {}
        val = x.get("validation") or {}
        valtxt = ("pass, err/mag " + format(val["max_err_over_mag"], ".2g")) if val.get("pass") else \
            ("FAIL" if val else "timed only")
        if val and val.get("timed_output_pass") is False:
            valtxt = "FAIL (timed output)"
        smem = plan.get("smem_bytes")
        lo, hi = x.get("ratio_vs_cublas_bf16_round_min"), x.get("ratio_vs_cublas_bf16_round_max")
        spread = f"{lo:.3f}-{hi:.3f}" if lo is not None and hi is not None else "-"
        out.append(f"| {x['shape']} | {x['M']} | {x['N']} | {x['K']} | {x.get('r', 0)} | {x['variant']} | "
                   f"{fmt(x['time_ms']['median'], '.4f')} | {fmt(x.get('tflops'), '.1f')} | "
                   f"{fmt(x.get('ratio_vs_cublas_bf16'), '.3f')} | {spread} | {plan.get('stages_main', '-')} | "
                   f"{fmt(smem / 1024 if smem else None, '.1f')} | {valtxt} |")
    out.append("")
    for g in rec.get("geomean_vs_cublas_bf16", []):
        if g.get("value") is not None:
            out.append(f"- geometric mean of {g['variant']} / cuBLAS bf16 over {g['shapes']} large shapes: "
                       f"**{g['value']:.3f}x**")
    common = [g for g in rec.get("geomean_vs_cublas_bf16_common", []) if g.get("value") is not None]
    if common:
        out.append(f"- over only the {rec.get('common_shapes')} large M, N, K that every variant above has "
                   "(the figures to compare variants by): " +
                   ", ".join(f"{g['variant']} {g['value']:.3f}x" for g in common))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?")
    ap.add_argument("--index", type=int, help="record number in the file (default: newest with peers)")
    ap.add_argument("--update-readme", action="store_true")
    args = ap.parse_args()
    path = args.file or newest_file()
    records = read_records(path)
    try:
        text = table(pick(records, args.index, path), path)
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        fail(f"{path}: not an fp4lr-bench record ({type(e).__name__}: {e})")
    if not args.update_readme:
        sys.stdout.write(text)
        return 0
    readme = os.path.join(ROOT, "README.md")
    try:
        with open(readme) as f:
            s = f.read()
    except OSError as e:
        fail(f"{readme}: cannot read ({e.strerror})")
    if BEGIN not in s or END not in s.split(BEGIN, 1)[1]:
        fail(f"{readme}: has no {BEGIN} ... {END} block; left as it is")
    head, rest = s.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    try:
        with open(readme, "w") as f:
            f.write(head + BEGIN + "\n" + text + END + tail)
    except OSError as e:
        fail(f"{readme}: cannot write ({e.strerror})")
    print("results_table: README.md updated from", os.path.relpath(path, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
