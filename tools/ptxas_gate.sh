#!/bin/sh
# ptxas_gate.sh ARCH IN.ptx OUT.cubin
# Assembles one kernel source with `ptxas -v`, keeps the report next to the cubin
# (OUT.ptxas.txt) and fails when any function spills, uses local memory (a stack
# frame), or when ptxas reports a performance warning that serializes wgmma
# (C7508 setmaxnreg ignored, C7517/C7519 injected waits/arrives).  PTXAS names the
# assembler (default ptxas); PTXAS_FLAGS adds options (e.g. -lineinfo).
set -eu
arch=$1; in=$2; out=$3
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
if grep -E 'C75(08|17|19)' "$report" >/dev/null; then
    echo "ptxas gate: $in has a serializing ptxas warning:" >&2
    grep -E 'C75(08|17|19)' "$report" >&2; bad=1
fi
if [ $bad -ne 0 ]; then rm -f "$out"; exit 1; fi
exit 0
