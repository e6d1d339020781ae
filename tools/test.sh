#!/usr/bin/env bash
# Builds ndp and runs every test: doctest unit tests, the embedding examples (in and out of tree), a bounded random differential test of the
# backends (docs/difftest.md for longer campaigns), then all program tests, REPL transcripts,
# error tests and examples on every available backend, and ptxas over the PTX of every kernel
# those tests generate. The last line is `N passed, M failed`. The same GPU-free tests under
# AddressSanitizer and UndefinedBehaviorSanitizer: tools/sanitize.sh (docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build
meson test -C build --suite unit --suite embed --print-errorlogs
build/tests/difftest --rand --count 300 --seed 1
# Both forms of a fold over each instance's own rows (Note [Map kernels]), pinned by NDP_MAP_LANES.
for lanes in 0 8; do
  NDP_JIT_FALLBACK=error NDP_MAP_LANES=$lanes build/cli/ndp test tests/programs/language/map_kernels.ndp
done
# Generated buffers (Note [Generated buffers] in exec/host/vec.h) at every size from 4096 values,
# read by interpreted and by compiled kernels (the test's sizes are below both thresholds).
NDP_JIT_FALLBACK=error NDP_GENERATED=1 build/cli/ndp test tests/programs/language/generated_views.ndp
NDP_JIT_FALLBACK=error NDP_GENERATED=1 NDP_JIT_MIN=0 build/cli/ndp test tests/programs/language/generated_views.ndp
# A task's instances a few elements a group (Note [Groups that fit a core's cache] in
# exec/cpu/task_chunks.cpp), on two threads so that the recursions' levels are cut into tasks.
OMP_NUM_THREADS=2 NDP_TASK_GROUP=64 NDP_JIT_FALLBACK=error build/cli/ndp test --backend=cpu \
  tests/programs/language/laid_out_recursion.ndp tests/programs/language/recursion_shapes.ndp tests/programs/language/deep_recursion.ndp
rm -rf build/ptx-check
# NDP_JIT_FALLBACK=error: a kernel the compiler fails on is a failure, not a slower interpretation.
NDP_JIT_FALLBACK=error NDP_PTX_CHECK_DIR=build/ptx-check build/cli/ndp test tests examples | tee build/program-tests.log
tools/check-ptx.sh build/ptx-check
tail -1 build/program-tests.log
