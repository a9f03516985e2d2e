#!/bin/sh
# experiment_build.sh FLAGS OUTDIR [PATTERN]
#
# Builds the sm_90a kernels of a measurement variant of tools/gen_sm90a.py
# (FP4LR_GEN_EXPERIMENT=FLAGS, comma-separated, e.g. tw4 or prodfix,notprefetch) into OUTDIR/sm90a/:
# the generated .ptx, and each through tools/ptxas_gate.sh (no spills, no local memory, no
# serialising warnings) into a .cubin beside its ptxas report.  PATTERN (a shell pattern on the
# file name, e.g. '*nvfp4_dense*_x4*'; default every kernel) keeps only the matching kernels:
# a variant that spills in kernels you do not need (tline: the fused ones) still builds the
# others.  Point FP4LR_KERNEL_DIR at OUTDIR to run them (fp4lr-check, fp4lr-bench,
# fp4lr-tests, tools/ab_kernels.sh); a variant that changes the launch (tw4: 384 threads) also
# needs its own host build, as its comment in tools/sm90a_ptx/flags.py says.  Exit status: 0; 1 when
# the generator or a gate fails; 2 for bad arguments or a PATTERN matching nothing.  PTXAS as
# in ptxas_gate.sh.  Where nvdisasm is found, tools/sass_check.py then reads the SASS: a kernel
# in which ptxas deleted wgmmas (their accumulators read by nothing: noepi,sknofix did that, and
# ran twice as fast as any kernel can) fails the build; its other findings (R2UR in the K loop,
# serialised wgmma) are printed as warnings, since a variant may be measured with them.
set -eu
usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -eq 2 ] || [ $# -eq 3 ] || usage
flags=$1 out=$2 pattern=${3:-*}
case $flags in ''|*[!a-z0-9_,]*) echo "experiment_build: FLAGS '$flags': lower-case words separated by commas" >&2; exit 2;; esac
case $pattern in ''|*/*) echo "experiment_build: PATTERN '$pattern': a file-name pattern, without '/'" >&2; exit 2;; esac
here=$(dirname "$0")
mkdir -p "$out/sm90a"
if ls "$out/sm90a"/*.ptx >/dev/null 2>&1; then
    echo "experiment_build: $out/sm90a already holds kernels; use an empty directory" >&2
    exit 2
fi
FP4LR_GEN_EXPERIMENT=$flags python3 "$here/gen_sm90a.py" --outdir "$out/sm90a" >/dev/null || exit 1
n=0
for f in "$out"/sm90a/*.ptx; do
    case $(basename "$f") in
        $pattern) ;;
        *) rm -f "$f"; continue;;
    esac
    sh "$here/ptxas_gate.sh" sm_90a "$f" "${f%.ptx}.cubin" || exit 1
    n=$((n + 1))
done
if [ "$n" -eq 0 ]; then
    echo "experiment_build: no kernel of '$flags' matches '$pattern'" >&2
    exit 2
fi
rc=0
report=$(python3 "$here/sass_check.py" --quiet "$out"/sm90a/*.cubin 2>&1) || rc=$?
case $rc in
0) ;;
3) echo "experiment_build: no nvdisasm: the SASS was not read (sass_check.py)" >&2;;
*) if printf '%s\n' "$report" | grep -q 'ptxas removed wgmmas'; then
       printf '%s\n' "$report" >&2
       echo "experiment_build: ptxas deleted wgmmas in the kernels above: their timings would not be the kernel's" >&2
       exit 1
   fi
   printf '%s\n' "$report" | sed 's/^/experiment_build: warning: /' >&2;;
esac
echo "experiment_build: $n kernels of '$flags' in $out/sm90a"
