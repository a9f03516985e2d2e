#!/bin/sh
# gpu_session.sh [--dry-run] [--pack] OUTDIR STEP...
#
# The GPU work of a session, on a GPU machine without make or Criterion: run from the
# repository root with the build copied beside it (build/, and the shared libraries of
# ../shared/device/pack-libs.sh in .devlibs/).  Each STEP runs under its own time limit, in
# the order given; its output goes to OUTDIR/<step>.txt and its status to OUTDIR/steps.txt
# (a failing step does not stop the later ones).  Steps:
#   info      the GPU, driver, clocks and the build's commit
#   suite     every Criterion suite (build/tests/fp4lr-tests -j$JOBS, default 8), with the
#             totals and skip reasons of tests/test_report.py
#   memcheck, racecheck, synccheck   tools/sanitize.sh with that compute-sanitizer tool
#   fault     the benchmark's planted fault: fp4lr-bench --plant-fault timed must exit 1
#   bench     the acceptance table: fp4lr-bench, every large shape, every variant, peers
#             (OUTDIR/all.csv and the record in OUTDIR/*.jsonl)
#   sweep     the stage sweep of bench/README.md (OUTDIR/stage-sweep.csv, its record)
#   sustained the large shapes' dense, fused and peer rows with a second of launches a row (the
#             card at its power cap: bench/README.md, "The power cap"), the clock logged beside
#             it and joined by tools/samples_clock.py (OUTDIR/sustained/: CSV, samples, the log gzipped as smi.csv.gz, record)
# Limits in seconds: LIMIT_<STEP> (e.g. LIMIT_BENCH=400; defaults in the table below).
# FP4LR_GIT_COMMIT names the build's commit in the records (the copy there has no .git).
# --dry-run prints each step's command and runs nothing.
# --pack ends by moving the files the steps created under OUTDIR (not steps.txt) into
#   OUTDIR/session.tgz, for a transfer that returns only a few files (the device tool: 8);
#   a file that was there before goes into it too if a step changed it, but stays in place.
# Exit status: 0 every step passed; 1 a step failed or ran past its limit; 2 bad arguments.
set -u
usage() { sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; }
dry=0 pack=0
while :; do
    case ${1:-} in
    -h|--help) usage; exit 0;;
    --dry-run) dry=1; shift;;
    --pack) pack=1; shift;;
    *) break;;
    esac
done
[ $# -ge 2 ] || { usage >&2; exit 2; }
out=$1; shift
for s in "$@"; do
    case $s in info|suite|memcheck|racecheck|synccheck|fault|bench|sweep|sustained) ;;
    *) echo "gpu_session: unknown step '$s' (info, suite, memcheck, racecheck, synccheck, fault, bench, sweep," \
            "sustained)" >&2
       exit 2;;
    esac
done
jobs=${JOBS:-8}
case $jobs in ''|*[!0-9]*|0) echo "gpu_session: JOBS '$jobs': a positive number" >&2; exit 2;; esac

# The step's default limit and its command (one line, run by sh -c).
limit_of() {
    case $1 in
    info) echo 30;; suite) echo 300;; memcheck|synccheck) echo 240;; racecheck) echo 400;;
    fault) echo 120;; bench) echo 540;; sweep) echo 400;; sustained) echo 300;;
    esac
}
command_of() {
    case $1 in
    info) echo "nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv" \
               "&& nvidia-smi -L && echo commit \${FP4LR_GIT_COMMIT:-unknown} && build/bin/fp4lr-info";;
    suite) echo "build/tests/fp4lr-tests -j$jobs --json='$out/suite.json'; rc=\$?;" \
                "python3 tests/test_report.py '$out/suite.json'; exit \$rc";;
    memcheck|racecheck|synccheck) echo "SANITIZE_TOOLS=$1 sh tools/sanitize.sh build";;
    fault) echo "build/bin/fp4lr-bench --quick --shape sana-out --format nvfp4 --variants fused --no-peers" \
                "--no-json --plant-fault timed; rc=\$?; echo \"exit \$rc (1 expected)\"; [ \$rc -eq 1 ]";;
    bench) echo "build/bin/fp4lr-bench --csv '$out/all.csv' --results-dir '$out'";;
    sweep) echo "build/bin/fp4lr-bench --sweep-stages --no-peers --variants dense,dense-c2,fused" \
                "--shape flux-qkv --shape square-r0 --shape qwen-fc1-r128 --shape sana-out" \
                "--csv '$out/stage-sweep.csv' --results-dir '$out'";;
    sustained) d="$out/sustained"
               echo "mkdir -p '$d' && { if command -v nvidia-smi >/dev/null; then nvidia-smi" \
                    "--query-gpu=timestamp,clocks.sm,power.draw.instant,clocks_event_reasons.active" \
                    "--format=csv,nounits -lms 20 > '$d/smi.csv' 2>&1 & p=\$!; else p=; fi;" \
                    "build/bin/fp4lr-bench --variants dense,fused,peers --rounds 2 --iters 1000 --warmup 50" \
                    "--csv '$d/sustained.csv' --samples '$d/samples.csv' --results-dir '$d'; rc=\$?;" \
                    "[ -n \"\$p\" ] && kill \$p && wait \$p 2>/dev/null; python3 tools/samples_clock.py '$d/samples.csv'" \
                    "\$([ -n \"\$p\" ] && echo '$d/smi.csv'); [ -f '$d/smi.csv' ] && gzip -9 -n -f '$d/smi.csv';" \
                    "exit \$rc; }";;
    esac
}

if [ $dry -eq 1 ]; then
    for s in "$@"; do
        eval "lim=\${LIMIT_$(echo "$s" | tr a-z A-Z):-$(limit_of "$s")}"
        echo "$s (limit ${lim} s): $(command_of "$s")"
    done
    exit 0
fi
[ -x build/tests/fp4lr-tests ] && [ -x build/bin/fp4lr-bench ] ||
    { echo "gpu_session: build/ is not here (run from the repository root with the copied build)" >&2; exit 2; }
mkdir -p "$out" || exit 2
# what OUTDIR holds before the steps (path, mtime): --pack leaves these alone
listing() { (cd "$out" && find . -type f -printf '%P\t%T@\n' | LC_ALL=C sort); }
[ $pack -eq 1 ] && [ -e "$out/session.tgz" ] &&
    { echo "gpu_session: $out/session.tgz exists; --pack would replace it (move it or name another OUTDIR)" >&2; exit 2; }
before=$(mktemp) || exit 2
trap 'rm -f "$before"' EXIT
listing > "$before"
export LD_LIBRARY_PATH="${PWD}/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
for s in "$@"; do
    eval "lim=\${LIMIT_$(echo "$s" | tr a-z A-Z):-$(limit_of "$s")}"
    case $lim in ''|*[!0-9]*) echo "gpu_session: LIMIT for $s '$lim': seconds" >&2; exit 2;; esac
    t0=$(date +%s)
    echo "== $s $(date -u +%FT%TZ): $(command_of "$s")" > "$out/$s.txt"
    timeout "$lim" sh -c "$(command_of "$s")" >> "$out/$s.txt" 2>&1
    rc=$?
    t1=$(date +%s)
    [ $rc -eq 124 ] && echo "gpu_session: $s ran past its limit of $lim s" >> "$out/$s.txt"
    echo "$s rc=$rc ${lim}s-limit $((t1 - t0))s" | tee -a "$out/steps.txt"
    [ $rc -eq 0 ] || status=1
done

# --pack: the files the steps wrote, into session.tgz; those they created are removed once
# the archive is in place, those that were there before stay
if [ $pack -eq 1 ]; then
    wrote=$(mktemp) && created=$(mktemp) && tgz=$(mktemp) || exit 2
    listing | LC_ALL=C comm -13 "$before" - | cut -f1 | grep -v -x -e steps.txt -e session.tgz > "$wrote"
    cut -f1 "$before" | LC_ALL=C comm -13 - "$wrote" > "$created"
    if [ -s "$wrote" ] && (cd "$out" && tar czf "$tgz" -T "$wrote") && mv "$tgz" "$out/session.tgz"; then
        (cd "$out" && xargs -r -d '\n' rm -f < "$created")
        echo "packed $(wc -l < "$wrote") file(s) into $out/session.tgz" | tee -a "$out/steps.txt"
    elif [ -s "$wrote" ]; then
        echo "gpu_session: could not pack into $out/session.tgz; the files stay as written" >&2
        status=1
    fi
    rm -f "$wrote" "$created" "$tgz"
fi
exit $status
