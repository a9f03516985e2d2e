# `make install PREFIX=...` and `make uninstall PREFIX=...` (included by the Makefile).
#
# install writes, under $(DESTDIR)$(PREFIX):
#   lib/libfp4lr.a, lib/libfp4lr.so        the library (static and shared)
#   include/fp4lr/*.h                       fp4lr.h, the public header, and every header it needs
#   share/fp4lr/ptx/<arch>/<entry>.cubin    the kernels, with <entry>.ptx beside each: the
#                                           library finds them through FP4LR_KERNEL_DIR=<prefix>/share/fp4lr/ptx
#   share/fp4lr/ABI.md                      the kernel ABI (ptx/ABI.md)
#   share/fp4lr/examples/raw_launch.c       the driver-API example (tools/raw_launch.c)
#   bin/fp4lr-*                             the tools
#   lib/pkgconfig/fp4lr.pc                  Cflags, Libs, and the variable kerneldir
#   share/fp4lr/install-manifest.txt        every file and directory install created
# uninstall removes exactly what the manifest lists: the files, then the directories install
# created (the prefix included, not its parents), when they are empty.  Installing over an
# earlier install uninstalls that first.  DESTDIR stages an install; fp4lr.pc names PREFIX.
# Nothing installed links -lcuda: the driver is opened at run time.

FP4LR_DEST     = $(DESTDIR)$(PREFIX)
FP4LR_MANIFEST = share/fp4lr/install-manifest.txt
FP4LR_PC       = $(B)/pkgconfig/fp4lr.pc
FP4LR_VERSION_TEXT := $(shell sed -n 's/^\#define FP4LR_VERSION "\(.*\)"/\1/p' host/fp4lr.h)

# The architecture directory of a kernel file: build/ptx/sm90a/x.cubin -> sm90a.
fp4lr_arch_of = $(notdir $(patsubst %/,%,$(dir $(1))))

# What install copies, as "mode source directory" triples (directory relative to the prefix).
FP4LR_INSTALL_FILES = \
    $(foreach f,$(LIB_A),644 $(f) lib) \
    $(foreach f,$(LIB_SO),755 $(f) lib) \
    $(foreach f,$(sort $(wildcard host/*.h layouts/*.h)),644 $(f) include/fp4lr) \
    $(foreach f,$(CUBINS) $(PTX_SM90) $(PTX_SM100),644 $(f) share/fp4lr/ptx/$(call fp4lr_arch_of,$(f))) \
    644 ptx/ABI.md share/fp4lr \
    644 tools/raw_launch.c share/fp4lr/examples \
    $(foreach f,$(TOOL_BIN),755 $(f) bin) \
    644 $(FP4LR_PC) lib/pkgconfig

.PHONY: install uninstall

# The pkg-config file for this PREFIX (rewritten on every install: PREFIX may change).
fp4lr-pc:
	$(Q)mkdir -p $(dir $(FP4LR_PC))
	$(Q)printf '%s\n' 'prefix=$(PREFIX)' 'exec_prefix=$${prefix}' 'libdir=$${exec_prefix}/lib' \
	    'includedir=$${prefix}/include' 'kerneldir=$${prefix}/share/fp4lr/ptx' '' \
	    'Name: fp4lr' \
	    'Description: 4-bit block-scaled GEMM with low-rank branch and affine (NVFP4/MXFP4), PTX kernels and a CUDA driver API host library' \
	    'Version: $(FP4LR_VERSION_TEXT)' \
	    'Cflags: -I$${includedir}/fp4lr -I$(abspath $(CUDA_HOME)/include)' \
	    'Libs: -L$${libdir} -lfp4lr -ldl -lpthread -lm' > $(FP4LR_PC)
.PHONY: fp4lr-pc

# mkd DIR: creates DIR (and its missing parents) under the prefix, listing each one created.
# put MODE SRC DIR: installs SRC into DIR, listing the file.  The list is the manifest, which
# lives in share/fp4lr once that exists, so an interrupted install can still be uninstalled.
install: lib tools cubins fp4lr-pc
	$(Q)if [ -f "$(FP4LR_DEST)/$(FP4LR_MANIFEST)" ]; then $(MAKE) --no-print-directory uninstall; fi
	$(call say,INSTALL,$(FP4LR_DEST))
	$(Q)set -e; dest="$(FP4LR_DEST)"; list="$(B)/install-manifest.tmp"; : > "$$list"; \
	mkd() { [ -d "$$dest/$$1" ] && return 0; \
	        if [ "$$1" = . ]; then mkdir -p "$$dest"; else mkd "$$(dirname "$$1")"; mkdir "$$dest/$$1"; fi; \
	        echo "dir $$1" >> "$$list"; }; \
	put() { mkd "$$3"; install -m "$$1" "$$2" "$$dest/$$3/$${2##*/}"; echo "file $$3/$${2##*/}" >> "$$list"; }; \
	mkd share/fp4lr; mv "$$list" "$$dest/$(FP4LR_MANIFEST)"; list="$$dest/$(FP4LR_MANIFEST)"; \
	echo "file $(FP4LR_MANIFEST)" >> "$$list"; \
	set -- $(FP4LR_INSTALL_FILES); \
	while [ $$# -gt 0 ]; do put "$$1" "$$2" "$$3"; shift 3; done; \
	echo "install: $$(grep -c '^file ' "$$list") files under $$dest; kernels: FP4LR_KERNEL_DIR=$(PREFIX)/share/fp4lr/ptx"

uninstall:
	$(Q)dest="$(FP4LR_DEST)"; m="$$dest/$(FP4LR_MANIFEST)"; \
	if [ ! -f "$$m" ]; then \
	    echo "uninstall: no $$m: make install put nothing under $$dest (check PREFIX)" >&2; exit 1; fi; \
	entries=$$(cat "$$m"); \
	echo "$$entries" | sed -n 's/^file //p' | while IFS= read -r f; do rm -f "$$dest/$$f"; done; \
	echo "$$entries" | sed -n 's/^dir //p' | sed '1!G;h;$$!d' | while IFS= read -r d; do \
	    p="$$dest/$$d"; [ "$$d" = . ] && p="$$dest"; \
	    rmdir "$$p" 2>/dev/null || echo "uninstall: kept $$p (not empty)"; done; \
	echo "uninstall: removed $$(echo "$$entries" | grep -c '^file ') files from $$dest"
