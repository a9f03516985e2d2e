#!/usr/bin/env python3
"""results_table.py -- the README's results table, generated from bench/results.

Reads a results file written by fp4lr-bench (JSON Lines, one record per run), takes the
newest record that compared against cuBLAS (or the record given with --index), and prints
a Markdown table: one line per (shape, variant), TFLOP/s, the ratio against cuBLAS bf16
measured in the same run, the plan's main stages and shared memory, and the validation.

    tools/results_table.py                        newest bench/results/*.jsonl
    tools/results_table.py FILE [--index N]       a given file / record
    tools/results_table.py --update-readme        rewrite the block between the
                                                  results markers of README.md
"""
import argparse
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def newest_file():
    files = sorted(glob.glob(os.path.join(ROOT, "bench", "results", "*.jsonl")), key=os.path.getmtime)
    if not files:
        sys.exit("results_table: no bench/results/*.jsonl yet (run fp4lr-bench on a GPU)")
    return files[-1]


def pick(records, index):
    if index is not None:
        return records[index]
    with_peers = [r for r in records if any(x.get("ratio_vs_cublas_bf16") for x in r.get("results", []))]
    if not with_peers:
        sys.exit("results_table: no record in the file compared against cuBLAS")
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
    out.append("| shape | M | N | K | variant | median ms | TFLOP/s | vs cuBLAS bf16 | stages | smem KiB | validation |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for x in rec["results"]:
        if x.get("state") != "ok" or x.get("sweep"):
            continue  # stage-sweep points belong to the sweep plot, not the table
        plan = x.get("plan") or {}
        val = x.get("validation") or {}
        valtxt = ("pass, err/mag " + format(val["max_err_over_mag"], ".2g")) if val.get("pass") else \
            ("FAIL" if val else "timed only")
        smem = plan.get("smem_bytes")
        out.append(f"| {x['shape']} | {x['M']} | {x['N']} | {x['K']} | {x['variant']} | "
                   f"{fmt(x['time_ms']['median'], '.4f')} | {fmt(x.get('tflops'), '.1f')} | "
                   f"{fmt(x.get('ratio_vs_cublas_bf16'), '.3f')} | {plan.get('stages_main', '-')} | "
                   f"{fmt(smem / 1024 if smem else None, '.1f')} | {valtxt} |")
    out.append("")
    for g in rec.get("geomean_vs_cublas_bf16", []):
        if g.get("value") is not None:
            out.append(f"- geometric mean of {g['variant']} / cuBLAS bf16 over {g['shapes']} large shapes: "
                       f"**{g['value']:.3f}x**")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?")
    ap.add_argument("--index", type=int, help="record number in the file (default: newest with peers)")
    ap.add_argument("--update-readme", action="store_true")
    args = ap.parse_args()
    path = args.file or newest_file()
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    text = table(pick(records, args.index), path)
    if not args.update_readme:
        sys.stdout.write(text)
        return 0
    readme = os.path.join(ROOT, "README.md")
    with open(readme) as f:
        s = f.read()
    if BEGIN not in s or END not in s:
        sys.exit(f"results_table: README.md has no {BEGIN} ... {END} block")
    head, rest = s.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(readme, "w") as f:
        f.write(head + BEGIN + "\n" + text + END + tail)
    print("results_table: README.md updated from", os.path.relpath(path, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
