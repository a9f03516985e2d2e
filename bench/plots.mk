# `make plots`: the benchmark's plots as SVG in bench/results/plots/, drawn by gnuplot
# through tools/plots.py from the newest bench/results/*.jsonl (throughput per shape and
# variant against cuBLASLt; throughput against the main stage count; fused/dense ratio
# against the rank).  PLOTS_ARGS passes options to tools/plots.py, e.g.
#   make plots PLOTS_ARGS=--update-readme                 also rewrite README.md's plots block
#   make plots PLOTS_ARGS="--sweep bench/results/X.csv"   the stage sweep from fp4lr-bench --csv output
# gnuplot is the Debian package gnuplot-nox: installed with apt-get when missing and run
# as root, otherwise the rule says how.

GNUPLOT    ?= gnuplot
PLOTS_ARGS ?=

.PHONY: plots plots-gnuplot
plots: plots-gnuplot
	$(Q)$(PYTHON) tools/plots.py --gnuplot $(GNUPLOT) $(PLOTS_ARGS)

# gnuplot present, or installed: apt-get's cached lists first, then refreshed ones.
plots-gnuplot:
	$(Q)command -v $(GNUPLOT) >/dev/null 2>&1 && exit 0; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
	    echo "plots: $(GNUPLOT) not found; install it (Debian/Ubuntu: sudo apt-get install gnuplot-nox) and run make plots again"; \
	    exit 1; \
	fi; \
	echo "plots: $(GNUPLOT) not found; installing gnuplot-nox with apt-get"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get install -y -q gnuplot-nox >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null && apt-get install -y -q gnuplot-nox >/dev/null; } || \
	    { echo "plots: apt-get could not install gnuplot-nox (no network?); install it, or copy bench/results to a machine with gnuplot and run make plots there"; exit 1; }; \
	command -v $(GNUPLOT) >/dev/null 2>&1 || { echo "plots: gnuplot-nox installed but $(GNUPLOT) is not on PATH"; exit 1; }

# `make bench`: the whole benchmark in one command - every shape and variant against the
# cuBLASLt peers, the main-stage sweep on four shapes, both appended to bench/results/ (JSON
# Lines, plus CSV), then the plots and the README's results table and plots.  Without a GPU
# fp4lr-bench lists the jobs it would run and records nothing, and the rest is skipped (the
# README and plots stay as they are); without gnuplot (and no way to
# install it) the plots step says how to draw them elsewhere.  BENCH_ARGS adds options.
BENCH_ARGS  ?=
SWEEP_SHAPES := --shape flux-qkv --shape square-r0 --shape qwen-fc1-r128 --shape sana-out
.PHONY: bench
bench: all
	$(Q)rm -f $(B)/bench-all.csv $(B)/bench-sweep.csv
	$(Q)$(B)/bin/fp4lr-bench $(BENCH_ARGS) --csv $(B)/bench-all.csv
	$(Q)if [ ! -s $(B)/bench-all.csv ]; then \
	    echo "bench: nothing was measured (no GPU?): README.md and the plots are left as they are"; exit 0; fi; \
	$(B)/bin/fp4lr-bench --sweep-stages --no-peers --variants dense,dense-c2,fused $(SWEEP_SHAPES) \
	    $(BENCH_ARGS) --csv $(B)/bench-sweep.csv && \
	$(PYTHON) tools/results_table.py --update-readme && \
	$(MAKE) --no-print-directory plots PLOTS_ARGS=--update-readme
