#!/bin/sh
# lineinfo_build.sh SRC_DIR OUTDIR
#
# Builds every SRC_DIR/*.ptx (sm_90a kernels: ptx/sm90a, or an experiment_build.sh
# directory) into OUTDIR/sm90a/*.cubin with line information, for profiling: each kernel
# through tools/ptx_lineinfo.py (a .loc per instruction, naming the line of SRC_DIR's file)
# and the ptxas gate with -lineinfo.  Point FP4LR_KERNEL_DIR at OUTDIR and profile with
#     ncu --set full --import-source yes ... ; ncu -i REP --page source --csv --print-source cuda,sass
# run from the directory the names resolve from (SRC_DIR as given).  The code is the
# committed kernels' (only line tables are added).  Exit status: 0; 1 when a kernel fails;
# 2 for bad arguments.
set -eu
usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -eq 2 ] || usage
src=$1 out=$2
here=$(dirname "$0")
ls "$src"/*.ptx >/dev/null 2>&1 || { echo "lineinfo_build: $src holds no .ptx files" >&2; exit 2; }
mkdir -p "$out/sm90a"
n=0
for f in "$src"/*.ptx; do
    base=$(basename "$f" .ptx)
    python3 "$here/ptx_lineinfo.py" "$f" "$out/sm90a/$base.ptx" >/dev/null || exit 1
    PTXAS_FLAGS=-lineinfo sh "$here/ptxas_gate.sh" sm_90a "$out/sm90a/$base.ptx" "$out/sm90a/$base.cubin" || exit 1
    n=$((n + 1))
done
echo "lineinfo_build: $n kernels of $src with line information in $out/sm90a"
