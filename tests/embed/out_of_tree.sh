#!/usr/bin/env bash
# Installs ndp into a scratch root and builds the embedding examples against it from outside the
# tree: the JIT example twice, with `pkg-config --cflags --libs ndp` by hand and as a Meson
# project whose dependency('ndp') finds ndp.pc; and the ahead-of-time example, compiled by the
# installed `ndp compile` and linked with `pkg-config --libs ndp-runtime`. Each binary must print
# the expected answers.
#   tests/embed/out_of_tree.sh BUILD_DIR SOURCE_ROOT
set -euo pipefail
# NDP_TEST_CXX: the compiler of the test programs (tools/sanitize.sh passes clang with the sanitizers).
build=$(realpath "$1")
src=$(realpath "$2")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

DESTDIR="$scratch/root" meson install -C "$build" --no-rebuild --quiet
option() {
  meson introspect "$build" --buildoptions |
    python3 -c "import json,sys; print(next(o['value'] for o in json.load(sys.stdin) if o['name'] == '$1'))"
}
prefix=$(option prefix)
libdir=$(option libdir)
case "$libdir" in /*) ;; *) libdir="$prefix/$libdir" ;; esac
export PKG_CONFIG_PATH="$scratch/root$libdir/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$scratch/root"  # the .pc file's paths, under the scratch root
export LD_LIBRARY_PATH="$scratch/root$libdir"
test -f "$scratch/root$prefix/include/ndp/ndp.hpp" || { echo "the header was not installed" >&2; exit 1; }

expected="$src/tests/embed/jit_example.expected"
check() {  # BINARY: its answers on cpu, without the line naming the backend
  "$1" cpu | grep -v '^backend ' | diff -u "$expected" - || { echo "FAIL: $1 printed other answers" >&2; exit 1; }
}

echo "pkg-config --cflags --libs ndp: $(pkg-config --cflags --libs ndp)"
${NDP_TEST_CXX:-c++} -std=c++20 "$src/examples/embed/jit_example.cpp" $(pkg-config --cflags --libs ndp) -o "$scratch/by_hand"
check "$scratch/by_hand"

CXX="${NDP_TEST_CXX:-c++}" meson setup "$scratch/meson" "$src/examples/embed" >/dev/null
ninja -C "$scratch/meson" >/dev/null
check "$scratch/meson/jit_example"
# Ahead of time: the installed ndp compiles, the runtime library alone runs.
cp "$src/examples/embed/kernels.ndp" "$src/examples/embed/aot_example.cpp" "$scratch/"
(cd "$scratch" && "$scratch/root$prefix/bin/ndp" compile kernels.ndp -o kernels --target=cpu)
echo "pkg-config --cflags --libs ndp-runtime: $(pkg-config --cflags --libs ndp-runtime)"
${NDP_TEST_CXX:-c++} -std=c++20 "$scratch/aot_example.cpp" "$scratch/kernels.o" $(pkg-config --cflags --libs ndp-runtime) -o "$scratch/aot"
"$scratch/aot" | diff -u "$src/tests/embed/aot_example.expected" - || { echo "FAIL: the AOT example printed other answers" >&2; exit 1; }
echo "out-of-tree builds: OK"
