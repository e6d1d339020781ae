#!/usr/bin/env bash
# On the GPU machine, after `bash .device/unpack.sh` (tools/gpu-build.sh cli/ndp tests/difftest
# tests/unit_runtime_cuda tests/unit_exec_llvm_free): issue 23's checks on the cuda backend.
#   tools/gpu-reliability.sh tests                  unit tests, every program test on cuda, Ctrl-C
#                                                   under a pseudo-terminal, compile time
#   tools/gpu-reliability.sh difftest FIRST COUNT   interp against cuda, programs FIRST.. of seed 2026
# Logs under $OUT (or /tmp/ndp-gpu); a summary last.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/ndp-gpu}
mkdir -p "$out"
B=${NDP_GPU_BUILD:-build-gpu}
run() { tools/gpu-run.sh "$@"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>&1
export NDP_CACHE_DIR=$(mktemp -d)
case "${1:-tests}" in
  tests)
    run $B/tests/unit_runtime_cuda > "$out/unit_runtime_cuda.log" 2>&1; echo "unit_runtime_cuda: $(grep -E 'test cases:' "$out/unit_runtime_cuda.log")"
    run $B/tests/unit_exec_llvm_free > "$out/unit_exec_llvm_free.log" 2>&1; echo "unit_exec_llvm_free: $(grep -E 'test cases:' "$out/unit_exec_llvm_free.log")"
    run $B/cli/ndp test tests examples --backend=cuda > "$out/programs_cuda.log" 2>&1; echo "ndp test --backend=cuda: $(tail -1 "$out/programs_cuda.log")"
    grep -A3 '^FAIL' "$out/programs_cuda.log" | head -40
    LD_LIBRARY_PATH="$PWD/$B/lib" python3 tests/cli/interrupt.py "$PWD/$B/cli/ndp" cuda > "$out/interrupt_cuda.log" 2>&1; echo "Ctrl-C on cuda: $(tail -1 "$out/interrupt_cuda.log")"
    grep -E 'stops|FAIL' "$out/interrupt_cuda.log"
    LD_LIBRARY_PATH="$PWD/$B/lib" python3 bench/compile_time.py --ndp $B/cli/ndp --backends cuda,cpu --runs 2 --out "$out/compile_time" > "$out/compile_time.log" 2>&1
    echo "compile time:"; grep -E 'constant|expression' "$out/compile_time.log"
    ;;
  difftest)
    run $B/tests/difftest --backend cuda --rand --seed 2026 --first "$2" --count "$3" > "$out/difftest_cuda_$2.log" 2>&1
    echo "difftest interp vs cuda, seed 2026, programs $2..$(($2 + $3 - 1)): exit $?"
    tail -12 "$out/difftest_cuda_$2.log"
    ;;
esac
cat "$out/gpu.txt"
