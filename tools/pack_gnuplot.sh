#!/bin/sh
# pack_gnuplot.sh OUT.tar.xz
# Packs this machine's gnuplot with the shared libraries it needs beyond the C library
# into one relocatable archive, for a GPU machine that has no gnuplot and no package
# access (the benchmark's plots are drawn by gnuplot).  There:
#     tar xJf OUT.tar.xz -C /tmp && make bench GNUPLOT=/tmp/gnuplot-bundle/gnuplot
# The archive holds gnuplot-bundle/{bin/gnuplot, lib/*.so*, gnuplot}; the last is a wrapper
# that runs the binary with LD_LIBRARY_PATH set to lib/ (for gnuplot alone).
set -eu
[ $# -eq 1 ] || { echo "usage: $0 OUT.tar.xz" >&2; exit 2; }
out=$1
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
