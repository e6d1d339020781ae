#!/usr/bin/env bash
# `ndp autotune` (Note [Tuning] in exec/common/tuning.h): its help, its option errors, a short
# real run of the cpu backend's tuning that writes its file, and where there is no GPU, a clear
# refusal of cuda's that writes nothing (where there is one, a short real run). The
# measurements themselves are bench/'s business.
#   tests/cli/autotune.sh NDP
set -uo pipefail
ndp=$1
source "$(dirname "$0")/checks.sh"
dir=$(mktemp -d)
export NDP_CACHE_DIR="$dir/cache"
trap 'rm -rf "$dir"' EXIT

out=$("$ndp" autotune --help 2>&1); rc=$?
check "help exits 0" "rc=0" "rc=$rc"
check "help says what it tunes" "an apply-to-each that folds each instance's own row" "$out"
check "help names the file" "tuning/<device name>.txt" "$out"
check "ndp --help lists autotune" "ndp autotune [...]" "$("$ndp" --help)"
out=$("$ndp" autotune --runs=0 2>&1); rc=$?
check "a bad count exits 2" "rc=2" "rc=$rc"
check "a bad count is named" "--runs needs a whole number from 1 to 50, not '0'" "$out"
out=$("$ndp" autotune --colour 2>&1); rc=$?
check "an unknown option exits 2" "rc=2" "rc=$rc"
check "an unknown option is named" "unknown option '--colour'" "$out"
out=$("$ndp" autotune --backend=interp 2>&1); rc=$?
check "the interpreter has nothing to tune" "rc=2" "rc=$rc"
check "the interpreter is refused by name" "--backend is cuda or cpu, not 'interp'" "$out"
# The cpu backend's table, on any machine: a short real run, then the file it wrote.
out=$("$ndp" autotune --backend=cpu --elements=1048576 --runs=1 2>&1); rc=$?
check "a cpu run exits 0" "rc=0" "rc=$rc"
check "a cpu run times both forms" "flattened  map kernel" "$out"
check "a cpu run writes the processor's file" "wrote $NDP_CACHE_DIR/tuning/" "$out"
check "the cpu file holds the table" "own_row_lanes" "$(cat "$NDP_CACHE_DIR"/tuning/*threads*.txt)"
rm -rf "$NDP_CACHE_DIR/tuning"
if "$ndp" run --backend=cuda /dev/null >/dev/null 2>&1; then
  out=$("$ndp" autotune --elements=1048576 --runs=1 2>&1); rc=$?
  check "a run on the GPU exits 0" "rc=0" "rc=$rc"
  check "it writes the device's file" "wrote $NDP_CACHE_DIR/tuning/" "$out"
  check "the file holds the table" "own_row_lanes" "$(cat "$NDP_CACHE_DIR"/tuning/*.txt)"
else
  out=$("$ndp" autotune --backend=cuda 2>&1); rc=$?
  check "without a GPU, cuda's tuning exits 2" "rc=2" "rc=$rc"
  check "without a GPU it says so" "ndp autotune: no GPU to tune:" "$out"
  check "without a GPU it writes nothing" "none" "$(ls "$NDP_CACHE_DIR/tuning" 2>/dev/null || echo none)"
  out=$("$ndp" autotune --no-write --elements=1048576 --runs=1 2>&1); rc=$?
  check "without a GPU, plain autotune tunes the cpu" "no GPU here: tuning the cpu backend" "$out"
  check "--no-write writes nothing" "none" "$(ls "$NDP_CACHE_DIR/tuning" 2>/dev/null || echo none)"
fi
exit $((failures > 0))
