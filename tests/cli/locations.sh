#!/usr/bin/env bash
# Diagnostics name the line of the whole input, not of the form or test case they are in
# (issue 23, defects 3 and 8): forms read from standard input one at a time, and `%test` cases.
# A file's parse errors come between the answers of the forms around them (defect 10). Out of
# memory names the expression that asked for the memory (defect 9).
#   tests/cli/locations.sh NDP
set -uo pipefail
ndp=$1
source "$(dirname "$0")/checks.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# The fourth line of standard input, its fifth column; blank lines and a two-line form before it.
got=$(printf 'a = 1 $\nb = 2 $\n\nc = (3,\n 4) $\nd = e $\n' | "$ndp" --backend=interp 2>&1 >/dev/null)
check "stdin: line of the whole input" "<stdin>:6:5: error: e is undefined." "$got"
got=$(printf 'a = 1 $ b = 2 $\n\n   x = y $\n' | "$ndp" --backend=interp 2>&1 >/dev/null)
check "stdin: a form after another on its line" "<stdin>:3:8: error: y is undefined." "$got"

# A %test case's compile error: FILE:LINE:COL of the expression in the file.
printf '%% a comment %%\n%%test\n  1 + 2 ==> 3\n    1 + "a" ==> 3\n%%\n' > "$dir/t1.ndp"
got=$("$ndp" test --backend=interp "$dir/t1.ndp" 2>&1)
check "ndp test: file:line:col of a case" "t1.ndp:4:5: error: for function +" "$got"
# `ndp run FILE`: an error in line 2 comes after the answer of line 1 and before that of line 3.
printf 'a = 1 $\nb = ) $\nc = 3 $\nd = ( $\n' > "$dir/order.ndp"
got=$("$ndp" run --backend=interp "$dir/order.ndp" 2>&1 | tr '\n' '|')
check "ndp run: errors in order" "a = 1 : int|$dir/order.ndp:2:5: error: Unexpected )|  b = ) \$|      ^|c = 3 : int|$dir/order.ndp:4:7: error: Unexpected \$" "$got"
# Out of memory: at the range that asked for 6·10^10 elements, on the interpreter and on cpu.
for backend in interp cpu; do
  got=$(printf 'x = 1 $\n#[0 - 60000000000:1] $\n' | "$ndp" --backend=$backend 2>&1 >/dev/null)
  check "out of memory located ($backend)" "<stdin>:2:2: note: raised here" "$got"
done
echo "$failures failed"
exit $((failures > 0))
