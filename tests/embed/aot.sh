#!/usr/bin/env bash
# `ndp compile` end to end: compiles examples/embed/kernels.ndp, links aot_example.cpp against
# the runtime library alone (libndp_runtime), and checks its answers, that nothing of LLVM is
# linked in, each --emit stage, and the errors (with no partial output left behind).
#   tests/embed/aot.sh NDP BUILD_DIR SOURCE_ROOT
set -euo pipefail
# NDP_TEST_CXX: the compiler of the test programs (tools/sanitize.sh passes clang with the sanitizers).
ndp=$(realpath "$1")
build=$(realpath "$2")
src=$(realpath "$3")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
fail() { echo "FAIL: $*" >&2; exit 1; }

cp "$src/examples/embed/kernels.ndp" "$src/examples/embed/aot_example.cpp" .
"$ndp" compile kernels.ndp -o kernels --target=cpu
test -f kernels.o && test -f kernels.h || fail "kernels.o and kernels.h were not both written"
${NDP_TEST_CXX:-c++} -std=c++20 aot_example.cpp kernels.o -I"$src/include" -L"$build/exec" -lndp_runtime -o aot_example
LD_LIBRARY_PATH="$build/exec" ./aot_example | diff -u "$src/tests/embed/aot_example.expected" - || fail "other answers"

# The program links the runtime alone: no LLVM in the binary or in what it loads.
if nm -C aot_example | grep -qi llvm; then fail "aot_example holds LLVM symbols"; fi
if LD_LIBRARY_PATH="$build/exec" ldd aot_example | grep -qiE 'llvm|libndp\.so'; then fail "aot_example loads LLVM or libndp"; fi
if nm -DC "$build/exec/libndp_runtime.so" | grep -qi llvm; then fail "libndp_runtime holds LLVM symbols"; fi

# Each stage writes its own file, and nothing else.
for stage in core flat llvm obj header; do
  rm -rf stage && mkdir stage
  "$ndp" compile kernels.ndp -o stage/k --emit=$stage --target=cpu
  files=$(ls stage)
  case $stage in core) want=k.core ;; flat) want=k.flat ;; llvm) want=k.ll ;; obj) want=k.o ;; header) want=k.h ;; esac
  [ "$files" = "$want" ] || fail "--emit=$stage wrote '$files', not $want"
done
grep -q 'define internal void @ndp_kernel_k_' <("$ndp" compile kernels.ndp -o stage/k --emit=llvm && cat stage/k.ll) ||
  fail "--emit=llvm has no kernel loop"
grep -q 'qsort' <("$ndp" compile kernels.ndp -o stage/k --emit=flat && cat stage/k.flat) || fail "--emit=flat lacks qsort"

# Errors: each is reported with its place, and no output file is left.
expect_error() {  # STATUS PATTERN ARGS...: the exit status, a text stderr must hold
  local status=$1 pattern=$2
  shift 2
  rm -rf out && mkdir out
  set +e
  "$ndp" compile "$@" 2> err.txt
  local got=$?
  set -e
  [ "$got" = "$status" ] || fail "ndp compile $* exited $got, not $status: $(cat err.txt)"
  grep -qF -- "$pattern" err.txt || fail "ndp compile $*: stderr lacks '$pattern': $(cat err.txt)"
  [ -z "$(ls out)" ] || fail "ndp compile $* left $(ls out)"
}
printf 'function id(x) = x;\n' > poly.ndp
expect_error 1 "poly.ndp:1:1: error: function 'id' is polymorphic" poly.ndp -o out/p
printf 'function id(x) : int -> int = x;\nfunction helper(x) = x;\n' > two.ndp
"$ndp" compile two.ndp -o out2 --export=id >/dev/null || fail "--export=id of two.ndp failed"
expect_error 2 "defines no function 'nope'" two.ndp -o out/p --export=nope
printf 'function bad(x) : int -> int = x +;\n' > syntax.ndp
expect_error 1 "syntax.ndp:1:" syntax.ndp -o out/p
printf 'function w(s) : stream -> int = 1;\n' > stream.ndp
expect_error 1 "which the C++ header cannot express" stream.ndp -o out/p
expect_error 2 "cannot read" missing.ndp -o out/p
expect_error 2 "unknown stage" kernels.ndp -o out/p --emit=assembly
expect_error 1 "unknown CPU" kernels.ndp -o out/p --cpu=pentium9000 --emit=obj --target=cpu
expect_error 2 "GPU stages" kernels.ndp -o out/p --target=cpu --emit=ptx

# For the GPU (the default target): the same object runs on the CPU where there is no GPU, and
# on the GPU with the modules it holds (tools/gpu-test.sh runs it there). A build without the
# GPU kernels (the sanitizer build's) says so, and this part is skipped.
if ! "$ndp" compile kernels.ndp -o probe --emit=ptx 2> probe.err; then
  grep -q "built without the GPU" probe.err || fail "GPU output failed: $(cat probe.err)"
  echo "ndp compile: OK (GPU output skipped: $(cat probe.err))"
  exit 0
fi
mkdir gpu
"$ndp" compile kernels.ndp -o gpu/kernels
${NDP_TEST_CXX:-c++} -std=c++20 aot_example.cpp gpu/kernels.o -Igpu -I"$src/include" -L"$build/exec" -lndp_runtime -o gpu/aot_example
LD_LIBRARY_PATH="$build/exec" gpu/aot_example | diff -u "$src/tests/embed/aot_example.expected" - ||
  fail "the GPU build answered otherwise"
rm -rf stage && mkdir stage
"$ndp" compile kernels.ndp -o stage/k --emit=ptx
grep -q '^// ---- module sm_90|' stage/k.ptx || fail "--emit=ptx lists no module"
grep -q '^// ---- module sm_90|rev [0-9a-f][0-9a-f]*|consumer ' stage/k.ptx || fail "--emit=ptx lists no consumer program"
"$ndp" compile kernels.ndp -o stage/k --emit=fatbin
[ "$(ls stage/k.fatbin | wc -l)" = "$(grep -c '^// ---- module' stage/k.ptx)" ] || fail "one fatbinary a module"
"$ndp" compile kernels.ndp -o stage/k --emit=cubin
for c in stage/k.cubin/*.cubin; do
  head -c 4 "$c" | od -An -c | grep -q 'E   L   F' || fail "$c is not an ELF cubin"
done
echo "ndp compile: OK"
