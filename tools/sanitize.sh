#!/bin/sh
# sanitize.sh [--list] [BUILD_DIR]
#
# Runs compute-sanitizer's memcheck, racecheck and synccheck on BUILD_DIR/bin/fp4lr-check
# (default build) for every case of tests/sanitize_cases.txt (--rows 0 --iters 1), stopping
# at the first failure; the log of the last case is BUILD_DIR/sanitize.log.  `make sanitize`
# runs it; on a GPU machine without make, run it directly on the copied build.  SANITIZER
# names the tool (default compute-sanitizer); SANITIZE_TOOLS the tools to run, of those three
# (default all three, in that order: a run split over two sessions' calls names a part each).
# --list prints the cases and stops.
# Exit status: 0 clean; 1 a tool reported errors, the check failed, or a case ran no
# validated kernel (no GPU: nothing was checked); 2 bad arguments.
set -u
here=$(dirname "$0")
cases="$here/../tests/sanitize_cases.txt"
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
if [ "${1:-}" = "--list" ]; then grep -v '^#' "$cases" | grep -v '^$'; exit 0; fi
[ $# -le 1 ] || { echo "sanitize: one build directory at most" >&2; exit 2; }
b=${1:-build}
san=${SANITIZER:-compute-sanitizer}
[ -x "$b/bin/fp4lr-check" ] || { echo "sanitize: $b/bin/fp4lr-check is not built" >&2; exit 2; }
command -v "$san" >/dev/null || { echo "sanitize: $san not found (it ships with the CUDA toolkit)" >&2; exit 2; }
tools=${SANITIZE_TOOLS:-memcheck racecheck synccheck}
for tool in $tools; do
    case $tool in memcheck|racecheck|synccheck) ;;
    *) echo "sanitize: SANITIZE_TOOLS '$tools': each of memcheck, racecheck, synccheck" >&2; exit 2;; esac
done
[ -n "$(echo $tools)" ] || { echo "sanitize: SANITIZE_TOOLS is empty" >&2; exit 2; }
n=0
for tool in $tools; do
    # shellcheck disable=SC2086 # a case is words
    grep -v '^#' "$cases" | grep -v '^$' | {
        while read -r c; do
            echo "== $tool $c"
            "$san" --tool "$tool" --error-exitcode 9 "$b/bin/fp4lr-check" $c --rows 0 --iters 1 \
                > "$b/sanitize.log" 2>&1
            rc=$?
            grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^validate" "$b/sanitize.log"
            if [ $rc -ne 0 ]; then
                echo "sanitize: $tool failed on $c (exit $rc; log in $b/sanitize.log)"
                exit 1
            fi
            # a clean exit that ran no kernel (no GPU: fp4lr-check's CPU path) checked nothing
            if ! grep -q '^validate: PASS' "$b/sanitize.log"; then
                echo "sanitize: $tool ran no validated kernel on $c (no GPU?), so it checked nothing (log in $b/sanitize.log)"
                exit 1
            fi
        done
    } || exit 1
    n=$((n + 1))
done
echo "sanitize: $(grep -cv '^#\|^$' "$cases") cases x $n tools clean ($(echo $tools))"
