#!/bin/sh
# ab_kernels.sh [-n ROUNDS] OUTDIR LABEL_A BENCH_A KDIR_A LABEL_B BENCH_B KDIR_B -- BENCH_ARGS...
#
# Times two kernel builds against each other on one GPU, alternately (A, B, A, B, ...:
# clock and thermal drift lands on both), each round one fp4lr-bench run with the same
# BENCH_ARGS: FP4LR_KERNEL_DIR=KDIR_X BENCH_X BENCH_ARGS --csv OUTDIR/LABEL_X-ROUND.csv.
# BENCH_X is an fp4lr-bench binary (a build's own: an experiment may need its own host, e.g.
# -DFP4LR_SM90A_THREADS=512; or, to compare options of one build, a two-line script
# `exec .../fp4lr-bench --transform-slots 3 "$@"`), KDIR_X the directory above its sm90a/
# or sm100a/ cubins.
# Then tools/ab_compare.py OUTDIR prints B / A per shape and variant.  Each run validates
# before it times; a build that fails validation is reported, not compared.  ROUNDS: 2.
# Exit status: ab_compare's (0, or 1 when a build failed validation); 2 for bad arguments;
# a bench run failing otherwise than by validation (status 1) stops the script with its status;
# a run that measured nothing (no GPU: no CSV) stops it with status 3.
set -eu
usage() {
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
rounds=2
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then usage; fi
if [ "${1:-}" = "-n" ]; then
    [ $# -ge 2 ] || usage
    rounds=$2; shift 2
fi
case $rounds in ''|*[!0-9]*|0) echo "ab_kernels: -n needs a positive integer, got '$rounds'" >&2; exit 2;; esac
[ $# -ge 8 ] && [ "$8" = "--" ] || usage
out=$1 la=$2 ba=$3 ka=$4 lb=$5 bb=$6 kb=$7
shift 8
for l in "$la" "$lb"; do
    case $l in ''|*[!A-Za-z0-9_.+]*) echo "ab_kernels: label '$l': letters, digits, '_', '.', '+' only" >&2; exit 2;; esac
done
[ "$la" != "$lb" ] || { echo "ab_kernels: the two labels must differ" >&2; exit 2; }
for b in "$ba" "$bb"; do [ -x "$b" ] || { echo "ab_kernels: $b is not an executable" >&2; exit 2; }; done
for k in "$ka" "$kb"; do [ -d "$k" ] || { echo "ab_kernels: kernel directory $k does not exist" >&2; exit 2; }; done
mkdir -p "$out"
if ls "$out"/*.csv >/dev/null 2>&1; then
    echo "ab_kernels: $out already holds CSVs; use an empty directory" >&2
    exit 2
fi
printf '%s %s\n' "$la" "$lb" > "$out/.ab_order"
here=$(dirname "$0")
i=1
# one bench run; its status 1 (a validation failed) is carried on to the comparison, which
# reports the failing rows; any other failure stops here
bench() {
    label=$1 kdir=$2 bin=$3; shift 3
    echo "ab_kernels: round $i: $label" >&2
    rc=0
    FP4LR_KERNEL_DIR=$kdir "$bin" "$@" --csv "$out/$label-$i.csv" || rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
        echo "ab_kernels: $bin (round $i, $label) failed with status $rc" >&2
        exit "$rc"
    fi
    # without a GPU fp4lr-bench lists its jobs, measures nothing and writes no CSV
    if [ ! -s "$out/$label-$i.csv" ]; then
        echo "ab_kernels: $bin (round $i, $label) measured nothing (no GPU?): no $out/$label-$i.csv" >&2
        exit 3
    fi
}
while [ "$i" -le "$rounds" ]; do
    bench "$la" "$ka" "$ba" "$@"
    bench "$lb" "$kb" "$bb" "$@"
    i=$((i + 1))
done
exec python3 "$here/ab_compare.py" "$out"
