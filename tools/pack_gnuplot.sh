#!/bin/sh
# pack_gnuplot.sh OUT.tar.xz
# Exit status: 0 packed; 1 no gnuplot here or the packing failed; 2 bad arguments.
# Packs this machine's gnuplot with the shared libraries it needs beyond the C library
# into one relocatable archive, for a GPU machine that has no gnuplot and no package
# access (the benchmark's plots are drawn by gnuplot).  There:
#     tar xJf OUT.tar.xz -C /tmp && make bench GNUPLOT=/tmp/gnuplot-bundle/gnuplot
# The archive holds gnuplot-bundle/{bin/gnuplot, lib/*.so*, gnuplot}; the last is a wrapper
# that runs the binary with LD_LIBRARY_PATH set to lib/ (for gnuplot alone).
set -eu
usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; }
case ${1:-} in -h|--help) usage; exit 0;; esac
[ $# -eq 1 ] || { usage >&2; exit 2; }
out=$1
case $out in
    -*) echo "pack_gnuplot: '$out' is not an option; the archive's name may not start with '-' (write ./$out)" >&2; exit 2;;
    *.tar.xz) ;;
    *) echo "pack_gnuplot: '$out': the archive is xz-compressed tar, its name ends in .tar.xz" >&2; exit 2;;
esac
[ -d "$(dirname -- "$out")" ] || { echo "pack_gnuplot: $(dirname -- "$out") is not a directory" >&2; exit 2; }
gp=$(command -v gnuplot) || { echo "pack_gnuplot: gnuplot not found (Debian: apt-get install gnuplot-nox)" >&2; exit 1; }
gp=$(readlink -f "$gp")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/gnuplot-bundle/bin" "$work/gnuplot-bundle/lib"
cp "$gp" "$work/gnuplot-bundle/bin/gnuplot"
ldd "$gp" | awk '/=> \//{print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
        libc.so*|libm.so*|ld-linux*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|libgcc_s.so*|libstdc++.so*) ;;
        *) cp -L "$lib" "$work/gnuplot-bundle/lib/" ;;
    esac
done
cat > "$work/gnuplot-bundle/gnuplot" <<'WRAP'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/bin/gnuplot" "$@"
WRAP
chmod +x "$work/gnuplot-bundle/gnuplot"
tar cJf "$out" -C "$work" gnuplot-bundle
echo "pack_gnuplot: $(ls "$work/gnuplot-bundle/lib" | wc -l) libraries, $(du -h "$out" | cut -f1) in $out"
