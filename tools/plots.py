#!/usr/bin/env python3
"""plots.py -- the benchmark's plots, drawn by gnuplot from bench/results.

Reads what fp4lr-bench wrote (JSON Lines, one record per run; or its --csv output for a
stage sweep) and draws three SVGs into bench/results/plots/:

  throughput.svg      TFLOP/s per shape and variant against the cuBLASLt peers (bars), from
                      the newest record that ran the peers;
  stage_sweep.svg     TFLOP/s against the main stage count, one line per (shape, variant),
                      from the newest record made with --sweep-stages, else from the file's
                      records made with --stages N (one count each), else from --sweep FILE;
  fused_vs_dense.svg  the fused kernel's time ratio against the dense kernel (same shape, same
                      run) against the rank r, from the newest record with fused rows; skipped
                      (and said so) when there is none.

    tools/plots.py                        newest bench/results/*.jsonl[.gz] (by the date in its name)
    tools/plots.py FILE.jsonl             a given results file
    tools/plots.py --sweep FILE           the stage sweep from FILE (.jsonl, or fp4lr-bench --csv)
    tools/plots.py --update-readme        also rewrite the block between the plots markers of
                                          README.md (inserted after the results block if absent)

The gnuplot data and scripts go to build/plots/ (--work); gnuplot is the Debian package
gnuplot-nox (`make plots` installs it when missing and run as root).  Exit status: 0 ok,
2 no usable results (also: a results or --sweep file that cannot be read or is not
fp4lr-bench output, a --sweep file without usable rows, an --out or --work directory that
cannot be written, README.md without the markers), 3 gnuplot missing or failed.
"""
import argparse
import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_jsonl  # noqa: E402  (the one reader of bench/results/*.jsonl)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- plots:begin -->", "<!-- plots:end -->"
RESULTS_END = "<!-- results:end -->"

# The CSV columns of schema fp4lr-bench/1, for files whose first lines come before any header.
CSV_V1 = ("shape,large,M,N,K,r,format,variant,state,median_ms,min_ms,max_ms,p10_ms,p90_ms,reps,tflops,"
          "ratio_vs_cublas_bf16,rotation_copies,validated,pass,rows_checked,max_err,max_err_over_mag,tol_acc,"
          "entry,stages_main,smem_bytes,note").split(",")

# One colour per variant label, so a variant looks the same in every plot.
COLOURS = {
    "fp4lr-nvfp4": "#1f4e9a", "fp4lr-mxfp4": "#6f9fd8",
    "fp4lr-nvfp4-c2": "#1b7a3a", "fp4lr-mxfp4-c2": "#7cc48f",
    "fp4lr-nvfp4-c2-naive": "#c0661a", "fp4lr-mxfp4-c2-naive": "#efa869",
    "fp4lr-nvfp4-fused": "#6a2c91", "fp4lr-mxfp4-fused": "#b48ad0",
    "fp4lr-nvfp4-fused-c2": "#8c1d40", "fp4lr-mxfp4-fused-c2": "#d98ba4",
    "cublas-bf16": "#555555", "cublas-fp8": "#a8a8a8",
}
SPARE = ["#b2182b", "#2166ac", "#8c510a", "#01665e", "#762a83", "#e08214"]
TERMINAL = "set terminal svg size {w},{h} dynamic noenhanced font 'Helvetica,12' background rgb 'white'"


def colour(label, i):
    return COLOURS.get(label, SPARE[i % len(SPARE)])


def rel(path):
    return os.path.relpath(path, ROOT)


def fail(msg, status=2):
    """One line on stderr (the message names the file), then the exit status."""
    print(f"plots: {msg}", file=sys.stderr)
    sys.exit(status)


# ---- reading results ------------------------------------------------------------------------

def read_jsonl(path):
    """The file's records (results_jsonl.read_records); fails naming the file and line otherwise."""
    try:
        records = results_jsonl.read_records(path)
    except results_jsonl.ResultsError as e:
        fail(str(e))
    return records


def number(text):
    """A CSV field as a float; None when empty or not a number."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def read_csv_rows(path):
    """The rows of fp4lr-bench --csv output as result-like dicts.  A line starting 'shape,' is a
    header (files made by concatenating runs repeat it); lines before any header use schema 1's."""
    rows, fields = [], CSV_V1
    with open(path, newline="") as f:
        for rec in csv.reader(f):
            if not rec:
                continue
            if rec[0] == "shape":
                fields = rec
                continue
            x = dict(zip(fields, rec))
            rows.append({
                "shape": x.get("shape"), "variant": x.get("variant"), "format": x.get("format"),
                "kind": x.get("kind"), "state": x.get("state"), "r": int(number(x.get("r")) or 0),
                "tflops": number(x.get("tflops")), "sweep": x.get("sweep") == "1",
                "ratio_vs_dense": number(x.get("ratio_vs_dense")),
                "plan": {"entry": x["entry"], "stages_main": int(number(x.get("stages_main"))),
                         "smem_bytes": int(number(x.get("smem_bytes")) or 0)} if x.get("entry") else None,
            })
    return rows


def is_fp4lr(row):
    return bool(row.get("plan")) and row.get("kind", "dense") != "peers"


def ok(row):
    return row.get("state") == "ok" and row.get("tflops") is not None


def describe(rec, time=True):
    dev, git = rec.get("device", {}), rec.get("git", {})
    text = f"{dev.get('name', '?')}, commit {git.get('commit', '?')}"
    return text + (f", {rec.get('time_utc', '?')}" if time else "")


# ---- choosing the data ---------------------------------------------------------------------------

def throughput_data(records):
    """(record, shapes, labels, table[shape][label] = TFLOP/s) of the newest record that ran the peers."""
    with_peers = [r for r in records if any(x.get("ratio_vs_cublas_bf16") for x in r.get("results", []))]
    if not with_peers:
        return None
    rec = with_peers[-1]
    shapes, labels, table = [], [], {}
    for x in rec["results"]:
        if not ok(x) or x.get("sweep"):
            continue
        if x["shape"] not in table:
            shapes.append(x["shape"])
            table[x["shape"]] = {}
        if x["variant"] not in labels:
            labels.append(x["variant"])
        table[x["shape"]][x["variant"]] = x["tflops"]
    return rec, shapes, labels, table


def ring(row):
    """The sm_90a W transform ring of a row's kernel: 3 slots for the _t3 entries, else 2."""
    return 3 if row["plan"]["entry"].endswith("_t3") else 2


def sweep_curves(rows):
    """{(shape, variant, transform slots): {stages: (TFLOP/s, smem bytes)}} over the valid fp4lr
    rows; later rows win.  The 3-slot plans (the solver's own point of a sweep whose forced
    points keep 2 slots) are their own curve, kept as a single point beside a 2-slot line."""
    curves = {}
    for x in rows:
        if ok(x) and is_fp4lr(x):
            curves.setdefault((x["shape"], x["variant"], ring(x)), {})[x["plan"]["stages_main"]] = \
                (x["tflops"], x["plan"]["smem_bytes"])
    lines = {k: v for k, v in curves.items() if len(v) > 1}
    return {k: v for k, v in curves.items()
            if k in lines or (k[2] == 3 and (k[0], k[1], 2) in lines)}


def sweep_from_records(records):
    """(curves, where they came from, a short title) of the newest --sweep-stages record (its sweep
    rows and the solver's row of each swept variant), else of every --stages N record of the file."""
    for rec in reversed(records):
        rows = rec.get("results", [])
        swept = {(x["shape"], x["variant"]) for x in rows if x.get("sweep")}
        if swept:
            curves = sweep_curves([x for x in rows if (x["shape"], x["variant"]) in swept])
            return curves, f"the --sweep-stages run of {describe(rec)}", describe(rec, time=False)
    forced = [r for r in records if r.get("settings", {}).get("force_stages")]
    if forced:
        rows = [x for r in forced for x in r.get("results", [])]
        counts = sorted({r["settings"]["force_stages"] for r in forced})
        return sweep_curves(rows), (f"{len(forced)} runs with --stages {', '.join(map(str, counts))}, "
                                    f"{describe(forced[0])} to {forced[-1].get('time_utc', '?')}"), \
            describe(forced[0], time=False)
    return {}, None, None


def fused_points(records, prefer=None):
    """(record, [(format, r, ratio, shape)]) of `prefer` (the throughput plot's record) when it has
    fused rows with a ratio, else of the newest record that has."""
    for rec in ([prefer] if prefer else []) + list(reversed(records)):
        pts = [(x["format"], x["r"], x["ratio_vs_dense"], x["shape"]) for x in rec.get("results", [])
               if x.get("kind") == "fused" and ok(x) and not x.get("sweep") and x.get("ratio_vs_dense")]
        if pts:
            return rec, pts
    return None, []


# ---- gnuplot ----------------------------------------------------------------------------------

def quote(text):
    return "'" + str(text).replace("'", "''") + "'"


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def plot_throughput(data, work, svg):
    rec, shapes, labels, table = data
    dat = os.path.join(work, "throughput.dat")
    lines = ["# shape " + " ".join(labels)]
    for s in shapes:
        lines.append(s + " " + " ".join(f"{table[s][v]:.1f}" if v in table[s] else "-" for v in labels))
    write(dat, "\n".join(lines) + "\n")
    width = max(960, 60 + 14 * len(shapes) * (len(labels) + 1))
    clauses = [f"{quote(dat)} using {i + 2}{':xtic(1)' if i == 0 else ''} title {quote(v)} lc rgb {quote(colour(v, i))}"
               for i, v in enumerate(labels)]
    gp = "\n".join([
        TERMINAL.format(w=width, h=520),
        f"set output {quote(svg)}",
        f"set title {quote('fp4lr vs cuBLASLt, ' + describe(rec))}",
        "set datafile missing '-'",
        "set style data histograms",
        "set style histogram clustered gap 1",
        "set style fill solid 0.9 border rgb '#333333'",
        "set boxwidth 0.9",
        "set ylabel 'TFLOP/s (2MNK / median time)'",
        "set yrange [0:*]",
        "set grid ytics lc rgb '#dddddd'",
        f"set xrange [-0.6:{len(shapes) - 0.4}]",
        "set xtics rotate by 30 right nomirror",
        "set key outside right top vertical",
        "plot " + ", \\\n     ".join(clauses),
    ]) + "\n"
    return gp


def variant_order(label):
    """Table order of a variant label: format, then dense, -c2, -c2-naive, -fused, -fused-c2, then the rest."""
    suffixes = ["", "-c2", "-c2-naive", "-fused", "-fused-c2"]
    for f, fmt in enumerate(["nvfp4", "mxfp4"]):
        for i, suf in enumerate(suffixes):
            if label == f"fp4lr-{fmt}{suf}":
                return (f, i, label)
    return (9, 9, label)


def plot_sweep(curves, title, work, svg):
    """One panel per variant, one line per shape (2 transform slots) and the solver's 3-slot
    plan as an open marker of the same colour; a shape keeps its colour across panels."""
    dat = os.path.join(work, "stage_sweep.dat")
    keys = sorted(curves, key=lambda k: (variant_order(k[1]), k[0], k[2]))
    write(dat, "\n\n\n".join("\n".join(f"{s} {t:.1f} {m}" for s, (t, m) in sorted(curves[k].items()))
                              for k in keys) + "\n")
    variants = sorted({k[1] for k in keys}, key=variant_order)
    shapes = sorted({k[0] for k in keys})
    cols = min(len(variants), 3)
    rows = (len(variants) + cols - 1) // cols
    top = max(t for c in curves.values() for t, _ in c.values())
    gp = [TERMINAL.format(w=max(640, 80 + 400 * cols), h=60 + 400 * rows),
          f"set output {quote(svg)}",
          f"set multiplot layout {rows},{cols} title {quote('Main stage sweep, ' + title)}",
          "set ylabel 'TFLOP/s'",
          f"set yrange [0:{top * 1.12:.0f}]",
          "set grid lc rgb '#dddddd'",
          "set key bottom right font ',9'",
          "set bmargin 5"]
    for v in variants:
        mine = [(i, k) for i, k in enumerate(keys) if k[1] == v]
        stages = sorted({s for _, k in mine for s in curves[k]})
        # x tics: the count, with the shared memory when every shape agrees on it at that count
        tics = []
        for st in stages:
            smem = {curves[k][st][1] for _, k in mine if st in curves[k]}
            text = f"{st}\\n{next(iter(smem)) / 1024:.0f} KiB" if len(smem) == 1 else str(st)
            tics.append(f"\"{text}\" {st}")
        clauses = [f"{quote(dat)} index {i} using 1:2 "
                   + ("with points pt 6 ps 1.6 lw 2 " if k[2] == 3 else "with linespoints lw 2 pt 7 ps 0.8 ")
                   + f"lc rgb {quote(SPARE[shapes.index(k[0]) % len(SPARE)])} "
                   + f"title {quote(k[0] + (', 3 transform slots' if k[2] == 3 else ''))}"
                   for i, k in mine]
        gp += [f"set title {quote(v)}",
               "set xlabel 'main stages (shared memory per CTA)' offset 0,-0.5",
               f"set xrange [{min(stages) - 0.5}:{max(stages) + 0.5}]",
               "set xtics (" + ", ".join(tics) + ")",
               "plot " + ", \\\n     ".join(clauses)]
    gp.append("unset multiplot")
    return "\n".join(gp) + "\n"


def plot_fused(rec, pts, work, svg):
    """x: the rank (one slot per rank, shapes side by side in it), y: dense time / fused time."""
    dat = os.path.join(work, "fused_vs_dense.dat")
    formats = sorted({p[0] for p in pts}, key=lambda f: (f != "nvfp4", f))
    ranks = sorted({p[1] for p in pts})
    slot = {}
    for r in ranks:
        names = sorted({p[3] for p in pts if p[1] == r})
        for j, name in enumerate(names):
            slot[(r, name)] = ranks.index(r) + (j - (len(names) - 1) / 2) * min(0.8 / len(names), 0.2)
    # the formats of one shape a hair apart, so neither hides the other
    blocks = ["\n".join(f"{slot[(r, shape)] + (i - (len(formats) - 1) / 2) * 0.03:.3f} {ratio:.4f} {shape}"
                        for f, r, ratio, shape in sorted(pts) if f == fmt)
              for i, fmt in enumerate(formats)]
    # one label per shape and rank, above its highest point
    top = {}
    for f, r, ratio, shape in pts:
        top[(r, shape)] = max(ratio, top.get((r, shape), ratio))
    blocks.append("\n".join(f"{slot[k]:.3f} {v:.4f} {k[1]}" for k, v in sorted(top.items())))
    write(dat, "\n\n\n".join(blocks) + "\n")
    lo = min(p[2] for p in pts)
    clauses = [f"{quote(dat)} index {i} using 1:2 with points pt 7 ps 1.1 lc rgb "
               f"{quote(colour('fp4lr-' + fmt + '-fused', i))} title {quote(fmt)}"
               for i, fmt in enumerate(formats)]
    clauses.append(f"{quote(dat)} index {len(formats)} using 1:2:3 with labels rotate by 60 left offset 0,0.7 "
                   "font ',8' notitle")
    clauses.append("1 with lines dt 2 lc rgb '#555555' title 'dense (same run)'")
    gp = "\n".join([
        TERMINAL.format(w=760, h=500),
        f"set output {quote(svg)}",
        f"set title {quote('Fused (r, wc, beta) against dense, ' + describe(rec, time=False))}",
        "set xlabel 'rank r'",
        "set ylabel 'dense time / fused time'",
        f"set xrange [-0.6:{len(ranks) - 0.4}]",
        "set xtics (" + ", ".join(f"'{r}' {i}" for i, r in enumerate(ranks)) + ")",
        f"set yrange [{min(lo, 0.9) - 0.05:.2f}:1.12]",
        "set grid ytics lc rgb '#dddddd'",
        "set key top right horizontal",
        "plot " + ", \\\n     ".join(clauses),
    ]) + "\n"
    return gp


def run_gnuplot(gnuplot, script_path):
    out = subprocess.run([gnuplot, script_path], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"gnuplot failed on {rel(script_path)}:\n{out.stderr}", 3)


# ---- the README block -----------------------------------------------------------------------

def geomean_text(rec):
    parts = [f"{g['variant']} {g['value']:.3f}x" for g in rec.get("geomean_vs_cublas_bf16", [])
             if g.get("value") is not None]
    return ("; geometric mean vs cuBLAS bf16 over the large shapes: " + ", ".join(parts)) if parts else ""


def sweep_text(curves):
    parts = []
    for (shape, variant, slots), c in sorted(curves.items(),
                                             key=lambda kv: (variant_order(kv[0][1]), kv[0][0], kv[0][2])):
        pts = sorted(c.items())
        parts.append(f"{shape} {variant} " + ", ".join(f"{t:.0f}" for s, (t, m) in pts) +
                     f" TFLOP/s at {', '.join(str(s) for s, _ in pts)} stages" +
                     (" with 3 transform slots" if slots == 3 else ""))
    return "; ".join(parts)


def readme_block(made, results_path):
    out = [f"Generated by `tools/plots.py --update-readme` from `{rel(results_path)}` "
           "(`make plots` redraws the SVGs); do not edit by hand.", ""]
    t = made.get("throughput")
    if t:
        rec = t[0]
        out += ["[![throughput per shape and variant against cuBLASLt](bench/results/plots/throughput.svg)]"
                "(bench/results/plots/throughput.svg)", "",
                f"Throughput of every variant on every shape against cuBLASLt measured in the same run "
                f"({describe(rec)}){geomean_text(rec)}.", ""]
    s = made.get("sweep")
    if s:
        curves, source = s
        out += ["[![throughput against the main stage count](bench/results/plots/stage_sweep.svg)]"
                "(bench/results/plots/stage_sweep.svg)", "",
                f"Throughput against the main stage count, each count at the shared memory its budget "
                f"assigns ({source}): {sweep_text(curves)}.", ""]
    f = made.get("fused")
    if f:
        rec, pts = f
        geo = [f"{g['variant']} {g['value']:.3f}x" for g in rec.get("geomean_vs_dense", [])
               if g.get("value") is not None and g["variant"].endswith("-fused")]
        low = min(pts, key=lambda p: p[2])
        out += ["[![fused/dense ratio against the rank](bench/results/plots/fused_vs_dense.svg)]"
                "(bench/results/plots/fused_vs_dense.svg)", "",
                f"The whole operator (low-rank r, wc, beta) against the dense kernel on the same shape in the same "
                f"run ({describe(rec)})" + (f": geometric mean {', '.join(geo)}" if geo else "") +
                f"; lowest {low[2]:.3f}x ({low[3]} {low[0]}, r = {low[1]}).", ""]
    else:
        out += ["The fused/dense ratio against the rank (`fused_vs_dense.svg`) is drawn once a results file "
                "holds a run of the fused variant.", ""]
    return "\n".join(out)


def update_readme(block):
    """Replaces the plots block; without one, inserts it on the line after the results block."""
    readme = os.path.join(ROOT, "README.md")
    try:
        with open(readme) as f:
            s = f.read()
    except OSError as e:
        fail(f"{readme}: cannot read ({e.strerror})")
    if BEGIN in s and END in s:
        head, rest = s.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
    elif RESULTS_END in s:
        before, tail = s.split(RESULTS_END, 1)
        head = before + RESULTS_END + "\n"
        tail = tail[1:] if tail.startswith("\n") else tail  # the results line's own newline
        tail = "\n" + tail
    else:
        fail(f"{readme}: has neither {BEGIN} ... {END} nor {RESULTS_END}; left as it is")
    try:
        with open(readme, "w") as f:
            f.write(head + BEGIN + "\n" + block + END + tail)
    except OSError as e:
        fail(f"{readme}: cannot write ({e.strerror})")
    print("plots: README.md updated")


# ---- main ------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", help="results file (.jsonl); default: the newest in bench/results")
    ap.add_argument("--sweep", help="stage-sweep points from this file (.jsonl, or fp4lr-bench --csv output)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "plots"), help="SVG directory")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "plots"), help="gnuplot data and scripts")
    ap.add_argument("--gnuplot", default="gnuplot", help="the gnuplot program")
    ap.add_argument("--update-readme", action="store_true", help="rewrite README.md's plots block")
    args = ap.parse_args()

    files = results_jsonl.results_files(ROOT)
    path = args.file or (files[-1] if files else None)
    if not path:
        print("plots: no bench/results/*.jsonl yet (run fp4lr-bench on a GPU)", file=sys.stderr)
        return 2
    records = read_jsonl(path)
    try:
        t = throughput_data(records)
        fused = fused_points(records, t[0] if t else None)
        if not args.sweep:
            curves, source, title = sweep_from_records(records)
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        fail(f"{path}: not fp4lr-bench results ({type(e).__name__}: {e})")
    if args.sweep:
        try:
            if args.sweep.endswith(".csv"):
                rows = read_csv_rows(args.sweep)
                curves, source = sweep_curves(rows), rel(os.path.abspath(args.sweep))
                title = os.path.basename(args.sweep)
            else:
                sweep_records = read_jsonl(args.sweep)
                rows = [x for r in sweep_records for x in r.get("results", [])]
                curves, source, title = sweep_from_records(sweep_records)
            usable = any(ok(x) and is_fp4lr(x) for x in rows)
        except OSError as e:
            fail(f"{args.sweep}: cannot read ({e.strerror})")
        except (KeyError, TypeError, AttributeError, ValueError, csv.Error) as e:
            fail(f"{args.sweep}: not fp4lr-bench output ({type(e).__name__}: {e})")
        if not usable:
            fail(f"{args.sweep}: no usable rows (no fp4lr row in state ok with a plan): no stage sweep to draw")
    for opt, d in (("--out", args.out), ("--work", args.work)):
        try:
            os.makedirs(d, exist_ok=True)
            tempfile.TemporaryFile(dir=d).close()
        except OSError as e:
            fail(f"{opt} {d}: not a writable directory ({e.strerror})")
    gnuplot = shutil.which(args.gnuplot)

    scripts, made = [], {}
    if t:
        made["throughput"] = t
        scripts.append(("throughput", plot_throughput(t, args.work, os.path.join(args.out, "throughput.svg"))))
    else:
        print(f"plots: {rel(path)} has no run with cuBLASLt ratios: skipping throughput.svg")
    if curves:
        made["sweep"] = (curves, source)
        scripts.append(("stage_sweep", plot_sweep(curves, title, args.work, os.path.join(args.out, "stage_sweep.svg"))))
    else:
        print("plots: no stage sweep (fp4lr-bench --sweep-stages, or runs with --stages N) with two or more "
              "counts of one variant: skipping stage_sweep.svg")
    rec, pts = fused
    if pts:
        made["fused"] = (rec, pts)
        scripts.append(("fused_vs_dense", plot_fused(rec, pts, args.work, os.path.join(args.out, "fused_vs_dense.svg"))))
    else:
        print(f"plots: {rel(path)} has no fused rows with a ratio against the dense kernel yet "
              "(fp4lr-bench --variants dense,fused): skipping fused_vs_dense.svg")

    for name, gp in scripts:
        write(os.path.join(args.work, name + ".gp"), gp)
    if not scripts:
        fail(f"{path}: no usable results: no plot to draw")
    if not gnuplot:
        print(f"plots: {args.gnuplot} not found; the data and scripts are in {rel(args.work)} "
              "(install gnuplot-nox, then make plots)", file=sys.stderr)
        return 3
    for name, _ in scripts:
        run_gnuplot(gnuplot, os.path.join(args.work, name + ".gp"))
        print(f"plots: {rel(os.path.join(args.out, name + '.svg'))}")
    if args.update_readme:
        update_readme(readme_block(made, path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
