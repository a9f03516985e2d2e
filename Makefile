# fp4lr build.  `make` builds the library, the tools, the tests and every cubin
# (through the ptxas gate); `make run` runs the main job; `make test` runs every
# suite.  V=1 shows full commands.  Nothing here links -lcuda: the driver is
# opened at run time with dlopen.

CUDA_HOME ?= /usr/local/cuda
PTXAS     ?= $(CUDA_HOME)/bin/ptxas
CC        ?= gcc
PYTHON    ?= python3
PREFIX    ?= /usr/local

B := build
Q := $(if $(V),,@)
say = $(if $(V),,@printf '  %-7s %s\n' $(1) $(2);)

CPPFLAGS += -Ihost -Ilayouts -Ibench -I$(CUDA_HOME)/include -D_GNU_SOURCE
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -Wno-unused-parameter -Wshadow -fPIC -pthread -MMD -MP
LDLIBS   += -ldl -lpthread -lm

# ---- library: host/ and layouts/ --------------------------------------------
LIB_SRC := $(wildcard host/*.c layouts/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(B)/obj/%.o)
LIB_A   := $(B)/lib/libfp4lr.a
LIB_SO  := $(B)/lib/libfp4lr.so

# ---- shape table and benchmark harness pieces shared by tools and tests -----
BENCH_SRC := $(wildcard bench/*.c)
BENCH_OBJ := $(BENCH_SRC:%.c=$(B)/obj/%.o)

# ---- tools: tools/fp4lr-<name>.c is a program; tools/cli_*.c are shared ------
TOOL_MAIN := $(wildcard tools/fp4lr-*.c)
TOOL_LIB  := $(wildcard tools/cli_*.c)
TOOL_BIN  := $(TOOL_MAIN:tools/%.c=$(B)/bin/%)
TOOL_LOBJ := $(TOOL_LIB:%.c=$(B)/obj/%.o)
EXTRA_BIN := $(patsubst tools/%.c,$(B)/bin/%,$(filter-out $(TOOL_MAIN) $(TOOL_LIB),$(wildcard tools/*.c)))

# ---- tests: every tests/*.c goes into one Criterion binary -------------------
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(B)/obj/%.o)
TEST_BIN := $(B)/tests/fp4lr-tests

# ---- kernels: ptx/<arch>/*.ptx -> build/ptx/<arch>/*.cubin via the ptxas gate -
PTX_SM90  := $(wildcard ptx/sm90a/*.ptx)
PTX_SM100 := $(wildcard ptx/sm100a/*.ptx) $(wildcard ptx/sm100f/*.ptx)
CUBINS    := $(PTX_SM90:ptx/%.ptx=$(B)/ptx/%.cubin) $(PTX_SM100:ptx/%.ptx=$(B)/ptx/%.cubin)

.PHONY: all lib tools tests cubins run test check-vectors sanitize clean help
all: lib tools tests cubins

help:
	@echo "make            build library, tools, tests and cubins"
	@echo "make run        plan, validate and time the kernel on the default problem"
	@echo "make test       run every test suite (GPU suites skip without a GPU)"
	@echo "make sanitize   compute-sanitizer memcheck, racecheck, synccheck on representative kernels (GPU)"
	@echo "make install PREFIX=DIR   library, headers, kernels, tools, fp4lr.pc (make uninstall PREFIX=DIR)"
	@echo "make plots      SVG plots of the newest bench/results (gnuplot)"
	@echo "make bench      the benchmark (all shapes, variants, peers, stage sweep), results table and plots"
	@echo "make clean      remove build/"
	@echo "V=1             show full commands"

lib: $(LIB_A) $(LIB_SO)
tools: $(TOOL_BIN) $(EXTRA_BIN)
tests: $(TEST_BIN)
cubins: $(CUBINS)

$(B)/obj/%.o: %.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIB_A): $(LIB_OBJ)
	$(call say,AR,$@)
	$(Q)mkdir -p $(@D) && rm -f $@ && ar rcs $@ $^

$(LIB_SO): $(LIB_OBJ)
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) -shared -o $@ $^ $(LDLIBS)

$(B)/bin/%: tools/%.c $(TOOL_LOBJ) $(BENCH_OBJ) $(LIB_A)
	$(call say,LINK,$@)
	$(Q)mkdir -p $(@D) $(B)/obj/tools && $(CC) $(CPPFLAGS) -Itools $(CFLAGS) -MF $(B)/obj/tools/$*.d $< $(TOOL_LOBJ) $(BENCH_OBJ) $(LIB_A) -o $@ $(LDLIBS)

$(TEST_BIN): $(TEST_OBJ) $(BENCH_OBJ) $(LIB_A)
	$(call say,LINK,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $^ -o $@ -lcriterion $(LDLIBS)

# The ptxas gate: assemble with -v, keep the report, fail on spills or local memory.
$(B)/ptx/sm90a/%.cubin: ptx/sm90a/%.ptx tools/ptxas_gate.sh
	$(call say,PTXAS,$<)
	$(Q)mkdir -p $(@D) && PTXAS=$(PTXAS) sh tools/ptxas_gate.sh sm_90a $< $@

$(B)/ptx/sm100a/%.cubin: ptx/sm100a/%.ptx tools/ptxas_gate.sh
	$(call say,PTXAS,$<)
	$(Q)mkdir -p $(@D) && PTXAS=$(PTXAS) sh tools/ptxas_gate.sh sm_100a $< $@

# The family target (every compute capability 10.x part): the same kernels, PTX ISA 8.8.
$(B)/ptx/sm100f/%.cubin: ptx/sm100f/%.ptx tools/ptxas_gate.sh
	$(call say,PTXAS,$<)
	$(Q)mkdir -p $(@D) && PTXAS=$(PTXAS) sh tools/ptxas_gate.sh sm_100f $< $@

# The main job: plan, budget, quantize, reference; with a GPU, run and validate the kernel.
run: all
	$(Q)$(B)/bin/fp4lr-check $(RUN_ARGS)

# Every suite in one Criterion binary (one closing line, then tests/test_report.py: the totals
# with each skip reason, since the closing line does not count skipped tests), then the codec
# oracle check and the .npy round trip of fp4lr-check against an independent numpy reference.
test: all
	$(Q)cd $(CURDIR) && $(TEST_BIN) $(TEST_ARGS) --json=$(B)/test-report.json
	$(Q)$(PYTHON) tests/test_report.py $(B)/test-report.json
	$(Q)$(MAKE) --no-print-directory check-vectors
	$(Q)$(PYTHON) tests/npy_roundtrip.py --tool $(B)/bin/fp4lr-check
	$(Q)B=$(B) MAKE="$(MAKE)" CC="$(CC)" sh tests/test_install.sh

# Regenerate the ml_dtypes codec vectors and compare with the committed ones.
check-vectors:
	$(Q)$(PYTHON) tests/gen_codec_vectors.py --check

# compute-sanitizer's three tools on the cases of tests/sanitize_cases.txt (tools/sanitize.sh,
# which also runs on a GPU machine without make).  Needs a GPU.
SANITIZER ?= compute-sanitizer
sanitize: all
	$(Q)SANITIZER=$(SANITIZER) sh tools/sanitize.sh $(B)

clean:
	$(call say,RM,$(B))
	$(Q)rm -rf $(B)

# Targets kept in their own files: `make install` / `uninstall` (tools/install.mk) and
# `make plots` (bench/plots.mk).
-include tools/install.mk bench/plots.mk

# the shared tool objects are real products, not intermediates make may delete
.SECONDARY: $(TOOL_LOBJ)

-include $(wildcard $(B)/obj/*/*.d $(B)/obj/*/*/*.d)
