#!/bin/sh
# tests/test_install.sh: `make install` into a fresh prefix, then build programs against the
# installed copy with pkg-config alone, as a user on another machine would, run them, and
# `make uninstall` again.  It checks that
#   - a two-file C program compiles with `pkg-config --cflags --libs fp4lr` (-Werror), links
#     against the shared library and, separately, the static one, and runs: it prints the
#     library and PTX versions and plans a problem, and finds the plan's cubin under the
#     kernel directory `pkg-config --variable=kerneldir fp4lr` (FP4LR_KERNEL_DIR);
#   - fp4lr.h also compiles as C++ (when a C++ compiler is there);
#   - the installed example share/fp4lr/examples/raw_launch.c builds and runs the same way;
#   - uninstall leaves nothing behind.
# No GPU is needed.  Environment: B (build directory, default build), MAKE, CC, CXX.
# Run from the repository root; exit status 0 on success.
set -eu

B=${B:-build}
MAKE=${MAKE:-make}
CC=${CC:-cc}
CXX=${CXX:-c++}
root=$(pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fp4lr-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "test_install: FAIL: $*" >&2; exit 1; }

command -v pkg-config >/dev/null || fail "pkg-config is not installed (apt-get install pkg-config)"

"$MAKE" --no-print-directory -C "$root" B="$B" PREFIX="$prefix" install >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; fail "make install PREFIX=$prefix"; }

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg-config --exists fp4lr || fail "pkg-config does not find fp4lr.pc in $PKG_CONFIG_PATH"
version=$(sed -n 's/^#define FP4LR_VERSION "\(.*\)"/\1/p' "$root/host/fp4lr.h")
[ "$(pkg-config --modversion fp4lr)" = "$version" ] || fail "fp4lr.pc says $(pkg-config --modversion fp4lr), fp4lr.h $version"
kerneldir=$(pkg-config --variable=kerneldir fp4lr)
[ "$kerneldir" = "$prefix/share/fp4lr/ptx" ] || fail "kerneldir is $kerneldir"
cflags=$(pkg-config --cflags fp4lr)
libs=$(pkg-config --libs fp4lr)
case "$libs" in *-lcuda\ *|*-lcuda) fail "fp4lr.pc links -lcuda: $libs" ;; esac

# The user's program, in a directory of its own: main.c plans, plan_files.c finds the kernel.
mkdir "$tmp/app"
cd "$tmp/app"
cat > app.h <<'EOF'
#include "fp4lr.h"
/* Prints where the plan's kernel lives and returns 1 when the cubin is there. */
int app_kernel_present(const fp4lr_plan *plan);
EOF
cat > main.c <<'EOF'
#include <stdio.h>
#include <string.h>
#include "app.h"

int main(void)
{
    printf("fp4lr %s (header %s)\n", fp4lr_version(), FP4LR_VERSION);
    printf("ptx: %s\n", fp4lr_ptx_version());
    if (strcmp(fp4lr_version(), FP4LR_VERSION))
        return 1;
    fp4lr_problem p = {.M = 4608, .N = 9216, .K = 3072, .r = 32, .format = FP4LR_NVFP4,
                       .out = FP4LR_OUT_BF16, .has_wc = 1, .has_beta = 1};
    fp4lr_plan plan;
    fp4lr_status st = fp4lr_plan_make(&p, FP4LR_ARCH_SM90A, NULL, &plan);
    if (st.code != FP4LR_OK) {
        printf("plan: %s [%s]\n", st.msg, st.rule);
        return 1;
    }
    printf("entry: %s\n", plan.entry);
    printf("dynamic shared memory: %lld B\n", (long long)plan.smem_bytes);
    return app_kernel_present(&plan) ? 0 : 1;
}
EOF
cat > plan_files.c <<'EOF'
#include <stdio.h>
#include "app.h"

int app_kernel_present(const fp4lr_plan *plan)
{
    char path[1024];
    fp4lr_status st = fp4lr_module_path(path, sizeof path, NULL, fp4lr_arch_name(plan->arch), plan->entry, NULL);
    if (st.code != FP4LR_OK)
        return 0;
    FILE *f = fopen(path, "rb");
    printf("cubin: %s at %s\n", f ? "present" : "MISSING", path);
    if (f)
        fclose(f);
    return f != NULL;
}
EOF

# shellcheck disable=SC2086 # the flags are words
"$CC" -std=c11 -Wall -Wextra -Werror -o app main.c plan_files.c $cflags $libs ||
    fail "the two-file program does not build with: $cflags $libs"
FP4LR_KERNEL_DIR=$kerneldir LD_LIBRARY_PATH="$prefix/lib" ./app > shared.out || { cat shared.out; fail "./app (shared library)"; }
grep -qx "fp4lr $version (header $version)" shared.out || { cat shared.out; fail "version line"; }
grep -qx "entry: fp4lr_sm90a_nvfp4_fused_m128n256k128_c1_s3_x4" shared.out || { cat shared.out; fail "plan entry"; }
grep -q "^cubin: present at $kerneldir/sm90a/" shared.out || { cat shared.out; fail "the plan's cubin under $kerneldir"; }
LD_LIBRARY_PATH="$prefix/lib" ldd ./app | grep -q "$prefix/lib/libfp4lr.so" || fail "./app is not linked against $prefix/lib/libfp4lr.so"

# shellcheck disable=SC2086
"$CC" -std=c11 -Wall -Wextra -Werror -o app-static main.c plan_files.c $cflags \
    "$(pkg-config --variable=libdir fp4lr)/libfp4lr.a" -ldl -lpthread -lm || fail "static link"
FP4LR_KERNEL_DIR=$kerneldir ./app-static > static.out || { cat static.out; fail "./app-static"; }
cmp -s shared.out static.out || fail "the static and shared builds print different things"

if command -v "$CXX" >/dev/null; then
    printf '#include "fp4lr.h"\nint main() { return fp4lr_version()[0] == 0; }\n' > cxx.cpp
    # shellcheck disable=SC2086
    "$CXX" -std=c++17 -Wall -Wextra -Werror -o cxx cxx.cpp $cflags $libs || fail "fp4lr.h as C++"
    LD_LIBRARY_PATH="$prefix/lib" ./cxx || fail "./cxx"
    cxx_note="C++ ok"
else
    cxx_note="C++ not checked (no $CXX)"
fi

# shellcheck disable=SC2086
"$CC" -std=c11 -Wall -Wextra -Werror -o raw_launch "$prefix/share/fp4lr/examples/raw_launch.c" $cflags $libs ||
    fail "the installed raw_launch.c example does not build"
LD_LIBRARY_PATH="$prefix/lib" ./raw_launch --print-params sm90a_fused_c1 | grep -qx "total 1208" ||
    fail "the installed raw_launch example"

cd "$root"
"$MAKE" --no-print-directory -C "$root" B="$B" PREFIX="$prefix" uninstall >"$tmp/uninstall.log" 2>&1 ||
    { cat "$tmp/uninstall.log" >&2; fail "make uninstall PREFIX=$prefix"; }
if [ -e "$prefix" ]; then
    find "$prefix" >&2
    fail "make uninstall left the above behind"
fi
echo "test_install: PASS (install, pkg-config $version, two-file program shared and static, $cxx_note, raw_launch example, uninstall)"
