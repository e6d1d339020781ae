#!/usr/bin/env bash
# Source files with bytes editors leave in them (issue 23, defect 11): a UTF-8 byte-order mark
# before the first form is skipped, and a diagnostic quoting a line with a NUL byte keeps the
# rest of the line, its line break and the caret.
#   tests/cli/binary_input.sh NDP
set -uo pipefail
ndp=$1
failures=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '\xef\xbb\xbf1 + 2 $\n' > "$dir/bom.ndp"
got=$("$ndp" run --backend=interp "$dir/bom.ndp" 2>&1)
if [[ $got == "it = 3 : int" ]]; then echo "ok   byte-order mark"; else echo "FAIL byte-order mark: $got"; failures=$((failures + 1)); fi
printf 'x = "a\x00b" + 1 $\n' > "$dir/nul.ndp"
# The quoted line (with its NUL shown as @) and the caret line under it.
got=$("$ndp" run --backend=interp "$dir/nul.ndp" 2>&1 | tr '\0' '@')
want=$'  x = "a@b" + 1 $\n      ^~~~~~~~~'
if [[ $got == *"$want"* ]]; then echo "ok   NUL byte in a quoted line"; else echo "FAIL NUL byte in a quoted line: $got"; failures=$((failures + 1)); fi
echo "$failures failed"
exit $((failures > 0))
