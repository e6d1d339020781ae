#!/usr/bin/env bash
# On the GPU machine, after `bash .device/unpack.sh`: the GPU test suite and the GPU benchmarks,
# logs under $OUT (or /tmp/ndp-gpu), a short summary last.
#   tools/gpu-test.sh [tests|sanitize|primitives|programs|profile|bench|shapes|all]...   (default: all)
# (profile: the programs once more with NDP_PROFILE=1, the per-statement table in profile_*.log;
# shapes, not in all: the scan passes' tile shapes against CUB, bench/gpu/scan_shapes.cu)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/ndp-gpu}
mkdir -p "$out"
run() { tools/gpu-run.sh "$@"; }
B=${NDP_GPU_BUILD:-build-gpu}
summary=()
want() { [[ " ${parts[*]} " == *" $1 "* || " ${parts[*]} " == *" all "* ]]; }
parts=("$@"); ((${#parts[@]})) || parts=(all)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/gpu.txt" 2>&1
if want tests; then
  run $B/tests/unit_runtime_gpu > "$out/unit_runtime_gpu.log" 2>&1; summary+=("unit_runtime_gpu: $(grep -E 'test cases:' "$out/unit_runtime_gpu.log")")
  run $B/tests/unit_runtime_cuda > "$out/unit_runtime_cuda.log" 2>&1; summary+=("unit_runtime_cuda: $(grep -E 'test cases:' "$out/unit_runtime_cuda.log")")
  # The executors linked without LLVM or the front end, on the GPU too (Note [Kernel compilers]).
  run $B/tests/unit_exec_llvm_free > "$out/unit_exec_llvm_free.log" 2>&1; summary+=("unit_exec_llvm_free: $(grep -E 'test cases:' "$out/unit_exec_llvm_free.log")")
  export NDP_CACHE_DIR=$(mktemp -d)
  run $B/cli/ndp test tests examples --backend=cuda > "$out/programs_cuda.log" 2>&1; summary+=("ndp test --backend=cuda: $(tail -1 "$out/programs_cuda.log")")
  # Map kernels without their block rows in shared memory (Note [Block rows launches]).
  NDP_BLOCK_ROWS=0 run $B/cli/ndp test tests/programs/language/block_rows.ndp tests/programs/language/map_kernels.ndp --backend=cuda > "$out/block_rows_off.log" 2>&1; summary+=("map kernels with NDP_BLOCK_ROWS=0: $(tail -1 "$out/block_rows_off.log")")
  # What still runs on the host (issue 21): each failing case names the primitive that did
  # (lifted_prims.h, NDP_HOST_FALLBACK=error). A census, not a gate, until none is left.
  NDP_HOST_FALLBACK=error run $B/cli/ndp test tests examples --backend=cuda > "$out/host_fallbacks.log" 2>&1
  summary+=("host fallbacks (cases that ran a primitive on the host): $(tail -1 "$out/host_fallbacks.log"); $(grep -o 'cuda: [^ ]* ran on the host' "$out/host_fallbacks.log" | sort | uniq -c | sort -rn | awk '{printf "%s %s, ", $3, $1}')")
  # The embedding API and a program compiled ahead of time, on the GPU (docs/embedding.md).
  run $B/tests/unit_embedding > "$out/unit_embedding.log" 2>&1; summary+=("unit_embedding: $(grep -E 'test cases:' "$out/unit_embedding.log")")
  if run tests/embed/run_example.sh $B/tests/jit_example cuda tests/embed/jit_example.expected > "$out/examples.log" 2>&1 &&
     run tests/embed/run_example.sh $B/tests/aot_example default tests/embed/aot_example.expected >> "$out/examples.log" 2>&1; then
    summary+=("embedding examples on cuda: OK"); else summary+=("embedding examples on cuda: FAILED (see examples.log)"); fi
  # Device out-of-memory is a runtime error and the session goes on (160 GB of ints).
  printf 'dist(1, 20000000000);\n1 + 2;\n' | run $B/cli/ndp --backend=cuda > "$out/oom.log" 2>&1
  if grep -q "Out of memory." "$out/oom.log" && grep -q "it = 3 : int" "$out/oom.log"; then summary+=("device OOM: reported, REPL survives"); else summary+=("device OOM: FAILED (see oom.log)"); fi
fi
if want sanitize; then
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  # --report-api-errors no: Primitives::kernel asks each embedded module in turn for a kernel,
  # and the misses are CUDA_ERROR_NOT_FOUND API results by design, not memory errors.
  cs="$cs --report-api-errors no"
  timeout 150 tools/gpu-run.sh $cs --tool memcheck --leak-check full --error-exitcode 9 $B/tests/unit_runtime_gpu -tce='*large*' > "$out/memcheck.log" 2>&1; summary+=("memcheck unit_runtime_gpu: exit $? $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)")
  # racecheck is slow: the shared-memory passes (scans, reductions, pack, combine), not the sorts.
  timeout ${NDP_RACECHECK_TIMEOUT:-150} tools/gpu-run.sh $cs --tool racecheck --error-exitcode 9 $B/tests/unit_runtime_gpu -tc='*scan*,*reduce*,*pack*,*combine*' -tce='*large*,*tile edges*' > "$out/racecheck.log" 2>&1; summary+=("racecheck: exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$out/racecheck.log" | tail -1)")
  # The scans' and reductions' tile edges (every tile shape) for one 4-byte type: the slowest
  # case under racecheck, on its own.
  timeout 300 tools/gpu-run.sh $cs --tool racecheck --error-exitcode 9 $B/tests/unit_runtime_gpu -tc='*tile edges<float>*' > "$out/racecheck_tiles.log" 2>&1; summary+=("racecheck tile edges: exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$out/racecheck_tiles.log" | tail -1)")
  # The kernels that find every element's segment a tile at a time (Note [Segments of a tile]).
  timeout ${NDP_RACECHECK_TIMEOUT:-150} tools/gpu-run.sh $cs --tool racecheck --error-exitcode 9 $B/tests/unit_runtime_gpu -tc='*dist*,*index match*,*segment_ids*,*reverse and rotate match*,*append match*' > "$out/racecheck_segments.log" 2>&1; summary+=("racecheck segments: exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$out/racecheck_segments.log" | tail -1)")
  # The one-sweep radix sort's shared-memory exchange and ranking (small shapes).
  timeout ${NDP_RACECHECK_TIMEOUT:-150} tools/gpu-run.sh $cs --tool racecheck --error-exitcode 9 $B/tests/unit_runtime_gpu -tc='*rank and sort match*' > "$out/racecheck_sort.log" 2>&1; summary+=("racecheck sort: exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$out/racecheck_sort.log" | tail -1)")
  # The consumer kernels: generated element functions linked into the scan, reduction and pack
  # passes, gathered inputs included (shared_index.ndp).
  timeout 150 tools/gpu-run.sh $cs --tool memcheck --error-exitcode 9 $B/cli/ndp test tests/programs/language/fused_consumers.ndp tests/programs/language/shared_index.ndp --backend=cuda > "$out/memcheck_consumers.log" 2>&1; summary+=("memcheck consumer kernels: exit $? $(grep -E 'ERROR SUMMARY' "$out/memcheck_consumers.log" | tail -1)")
  timeout 150 tools/gpu-run.sh $cs --tool memcheck --error-exitcode 9 $B/cli/ndp test examples --backend=cuda > "$out/memcheck_examples.log" 2>&1; summary+=("memcheck ndp test examples: exit $? $(grep -E 'ERROR SUMMARY' "$out/memcheck_examples.log" | tail -1)")
fi
if want primitives; then
  timeout 300 tools/gpu-run.sh python3 bench/run_gpu.py $B/bench/gpu_primitives_bench $B/bench/cub_bench $B/bench/thrust_bench --out "$out/gpu" > "$out/primitives.log" 2>&1
  summary+=("primitives vs CUB and Thrust: exit $? (table in gpu.md)")
fi
if want programs; then
  # Whole programs on the GPU (bench/run_gpu_programs.py): quicksort of 2^24 ints and the sparse
  # matrix-vector product with 2^20 rows in each of its row-length shapes and column widths, a
  # warm-up run and then timed ones, each next to its baseline in the same run (CUB's sort, and
  # cuSPARSE with indices of the same width, where `tools/gpu-build.sh bench/cub_bench
  # bench/cusparse_spmv` built them).
  timeout 800 tools/gpu-run.sh python3 bench/run_gpu_programs.py --ndp $B/cli/ndp --cub $B/bench/cub_bench \
    --cusparse $B/bench/cusparse_spmv --out "$out/gpu_programs" > "$out/programs.log" 2>&1
  summary+=("programs vs CUB and cuSPARSE: exit $? (table in gpu_programs.md)")
fi
if want profile; then
  mkdir -p /tmp/ndp-programs
  sed 's/^bench_size = .* \$/bench_size = 16777216 $/; s/^bench_runs = .* \$/bench_runs = 1 $/' bench/programs/qsort.ndp > /tmp/ndp-programs/qsort1.ndp
  sed 's/^bench_size = .* \$/bench_size = 1048576 $/; s/^bench_runs = .* \$/bench_runs = 20 $/' bench/programs/spmv.ndp > /tmp/ndp-programs/spmv1.ndp
  for p in qsort1 spmv1; do
    NDP_PROFILE=1 timeout 120 tools/gpu-run.sh $B/cli/ndp run /tmp/ndp-programs/$p.ndp --backend=cuda > "$out/profile_$p.log" 2>&1
    summary+=("profile $p: exit $? $(head -1 "$out/profile_$p.log")")
  done
fi
if [[ " ${parts[*]} " == *" shapes "* ]]; then
  timeout 300 tools/gpu-run.sh $B/bench/scan_shapes > "$out/scan_shapes.log" 2>&1
  summary+=("scan shapes: exit $? (scan_shapes.log)")
fi
if want bench; then
  run $B/bench/gpu_fusion_bandwidth 28 20 > "$out/fusion.log" 2>&1; summary+=("fusion: $(grep ratio "$out/fusion.log")")
  LD_LIBRARY_PATH=$PWD/$B/lib python3 bench/gpu/repl_latency.py $B/cli/ndp > "$out/repl_latency.log" 2>&1; summary+=("$(cat "$out/repl_latency.log")")
fi
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
