#!/bin/sh
# ptxas_gate.sh ARCH IN.ptx OUT.cubin
# Assembles one kernel source with `ptxas -v`, keeps the report next to the cubin
# (OUT.ptxas.txt) and fails when any function spills, uses local memory (a stack
# frame), or when ptxas reports a performance warning that serializes wgmma
# (C7508 setmaxnreg ignored, C7512 wgmma serialized for want of registers, C7517/C7519
# injected waits/arrives; any "serialized").  PTXAS names the
# assembler (default ptxas); PTXAS_FLAGS adds options (e.g. -lineinfo).
# Exit status: 0 gated clean; 1 ptxas failed or the gate refused; 2 bad arguments.
set -eu
usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; }
case ${1:-} in -h|--help) usage; exit 0;; esac
[ $# -eq 3 ] || { usage >&2; exit 2; }
arch=$1; in=$2; out=$3
[ -f "$in" ] || { echo "ptxas gate: $in: no such file" >&2; exit 2; }
case $out in *.cubin) ;; *) echo "ptxas gate: $out: the output's name ends in .cubin (the report goes beside it)" >&2; exit 2;; esac
report=${out%.cubin}.ptxas.txt
ptxas=${PTXAS:-ptxas}
# shellcheck disable=SC2086  # PTXAS_FLAGS is a word list
if ! "$ptxas" -arch="$arch" -v ${PTXAS_FLAGS:-} -o "$out" "$in" >"$report" 2>&1; then
    cat "$report" >&2
    rm -f "$out"
    exit 1
fi
bad=0
if grep -E '[1-9][0-9]* bytes (spill stores|spill loads)' "$report" >/dev/null; then
    echo "ptxas gate: $in spills registers (see $report)" >&2; bad=1
fi
if grep -E '[1-9][0-9]* bytes stack frame' "$report" >/dev/null; then
    echo "ptxas gate: $in uses local memory / a stack frame (see $report)" >&2; bad=1
fi
if grep -E 'C75(08|12|17|19)|serialized' "$report" >/dev/null; then
    echo "ptxas gate: $in has a serializing ptxas warning:" >&2
    grep -E 'C75(08|12|17|19)|serialized' "$report" >&2; bad=1
fi
if [ $bad -ne 0 ]; then rm -f "$out"; exit 1; fi
exit 0
