#!/usr/bin/env bash
# `at LEVEL` (extensions.md §2): where the flattener cannot honour it, a warning with the
# apply-to-each's file:line:col and caret, once a session; where it can, none; the answers never
# change (Note [Map kernels] in flatten/flat_ir.h).
#   tests/cli/level_warnings.sh NDP
set -uo pipefail
ndp=$1
source "$(dirname "$0")/checks.sh"
dir=$(mktemp -d)
export NDP_CACHE_DIR="$dir/cache"
trap 'rm -rf "$dir"' EXIT

cat > "$dir/levels.ndp" <<'NDP'
function fact(n) = if n <= 1 then 1 else n * fact(n - 1) $
{fact(n) : n in [1, 2, 3]} at warp $
{sum(r) : r in [[1, 2], [3]]} at warp $
{sum({x : x in [1, 2, 3] | x > y}) : y in [0, 1]} at subwarp(4) $
{x + 1 : x in [1, 2]} at thread $
{x + 1 : x in [1, 2]} at seq $
let xs = [1, 2, 3] in {sum({x * y : x in xs}) : y in xs} at block $
let xs = [1, 2, 3] in {sum({x * y : x in xs}) : y in xs} at grid $
{fact(n) : n in [4]} at warp $
{sum(r) : r in [[1, 2], [3]] | #r > 1} at thread $
NDP
got=$("$ndp" run --backend=cpu "$dir/levels.ndp" 2>&1)
check "a recursive body at warp" "levels.ndp:2:1: warning: \`at warp\` is not honoured here" "$got"
check "its caret line" "  {fact(n) : n in [1, 2, 3]} at warp \$" "$got"
check "the answer unchanged" "it = [1, 2, 6] : [int]" "$got"
check_not "a fold over each row at warp: a map kernel" "levels.ndp:3:1: warning" "$got"
check "a filter at subwarp(4)" "levels.ndp:4:1: warning: \`at subwarp(4)\` is not honoured here" "$got"
check "its answer" "it = [6, 5] : [int]" "$got"
check_not "an elementwise body at thread" "levels.ndp:5:1: warning" "$got"
check "at seq outside a unit" "levels.ndp:6:1: warning: \`at seq\` is not honoured here" "$got"
check_not "all pairs at block: a map kernel" "levels.ndp:7:" "$got"
check_not "all pairs at grid: flattened" "levels.ndp:8:" "$got"
check "all pairs at grid: its answer" "it = [6, 12, 18] : [int]" "$got"
check "a second apply-to-each warned of at its own place" "levels.ndp:9:1: warning" "$got"
check "a reduction of each row, filtered, at thread: the segmented sum runs it" "levels.ndp:10:1: warning: \`at thread\` is not honoured here" "$got"
check "its answer" "it = [3] : [int]" "$got"
# The interpreter has no levels: no warning.
got=$("$ndp" run --backend=interp "$dir/levels.ndp" 2>&1)
check_not "interp: no warning" "warning" "$got"
echo "$failures failed"
exit $((failures > 0))
