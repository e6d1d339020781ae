#!/usr/bin/env bash
# NDP_PROFILE=1 on the cpu backend: the table's header and rows, and kernel compilation as a
# row of its own, not inside the statement that compiled (Note [Compile time apart] in
# exec/common/profile.h).
# NDP_PROFILE=trace: each statement with the microseconds since the first, which
# bench/tools/trace_levels.py reads a recursion level at a time.
#   tests/cli/profile.sh NDP TRACE_LEVELS_PY
set -uo pipefail
ndp=$1
trace_levels=$2
failures=0
check() {  # check NAME WANTED_REGEX GOT_TEXT
  if [[ $3 =~ $2 ]]; then echo "ok   $1"; else echo "FAIL $1: wanted /$2/ in: $3"; failures=$((failures + 1)); fi
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Large enough for the host JIT (jit_min), fresh kernel cache so that it compiles here.
printf 'function scaled(x) = sqrt(float(x) * 2.5 + 1.0) $\nsum({scaled(i) : i in [0:100000]}) > 0.0 $\n' > "$dir/p.ndp"
got=$(NDP_CACHE_DIR="$dir/cache" NDP_PROFILE=1 "$ndp" run --backend=cpu "$dir/p.ndp" 2>&1)
check "answer" "it = T : bool" "$got"
check "header" "NDP_PROFILE: [0-9.]+ s in data statements, [0-9.]+ s of it compiling kernels" "$got"
check "a statement row" "[0-9.]+ +[0-9.]+ +1 +[0-9.]+ +100000  main: " "$got"
check "compilation's own row" "\(compiling kernels: the host JIT" "$got"
# A recursion laid out before its calls (Note [Results laid out before the calls] in
# flatten/flat_ir.h): its placing is the loop's own row, and its ascent (the append chain and
# the merge) never runs; one whose results are shorter than its arguments falls back to them.
qs='function qs(a) = if #a < 2 then a else let p = a[#a/2]; r = {qs(v) : v in [{e in a | e < p}, {e in a | e > p}]}'
printf '%s in r[0] ++ {e in a | e == p} ++ r[1] $\n#qs({rem(i * 37, 101) : i in [0:5000]}) $\n' "$qs" > "$dir/laid.ndp"
printf '%s in r[0] ++ [p] ++ r[1] $\n#qs({rem(i * 37, 101) : i in [0:5000]}) $\n' "$qs" > "$dir/shorter.ndp"
got=$(NDP_CACHE_DIR="$dir/cache" NDP_PROFILE=1 "$ndp" run --backend=cpu "$dir/laid.ndp" 2>&1)
check "laid out: answer" "it = 5000 : int" "$got"
check "laid out: the loop's row" "qs<int>: result_[0-9]+ = while\\(" "$got"
if [[ $got == *append_chain* || $got == *"= merge("* ]]; then echo "FAIL laid out: the ascent ran: $got"; failures=$((failures + 1)); else echo "ok   laid out: no ascent"; fi
got=$(NDP_CACHE_DIR="$dir/cache" NDP_PROFILE=1 "$ndp" run --backend=cpu "$dir/shorter.ndp" 2>&1)
check "shorter: answer" "it = 101 : int" "$got"
check "shorter: the ascent ran" "qs<int>: p_[0-9]+ = append_chain\\(" "$got"
# NDP_PROFILE=trace: a line a statement, after the microseconds since the first; the levels of
# the recursion read off it, the first holding the whole input.
NDP_PROFILE=trace "$ndp" run --backend=cpu "$dir/shorter.ndp" > /dev/null 2> "$dir/trace"
check "trace: a statement with its time" "[0-9]+\.[0-9] ndp trace: qs<int>: [^[]+ \[5000 instances\]" "$(cat "$dir/trace")"
got=$(python3 "$trace_levels" "$dir/trace" "qs<int>" 2>&1)
check "trace levels: the run" "qs<int>: 1 runs; run 1" "$got"
check "trace levels: the first level" "
 +1 +1 +[0-9]+ +0 +0 +0 +[0-9.]+
" "$got"
# Without NDP_PROFILE, no table.
got=$("$ndp" run --backend=cpu "$dir/p.ndp" 2>&1)
if [[ $got == *NDP_PROFILE* ]]; then echo "FAIL no table without NDP_PROFILE"; failures=$((failures + 1)); else echo "ok   no table without NDP_PROFILE"; fi
exit $((failures > 0))
