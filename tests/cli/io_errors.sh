#!/usr/bin/env bash
# ndp's exit status and message for input it cannot read and output it cannot write (issue 23,
# defects 6 and 7): a folder given as a program, a missing file, and a full disk.
#   tests/cli/io_errors.sh NDP EXAMPLE.ndp
set -uo pipefail
ndp=$1 example=$2
failures=0
expect() {  # expect NAME WANTED_STATUS TEXT_IN_STDERR -- COMMAND...
  local name=$1 want=$2 text=$3; shift 4
  local err status
  err=$("$@" 2>&1 >/dev/null)
  status=$?
  if [[ $status != "$want" || $err != *"$text"* ]]; then
    echo "FAIL $name: exit $status (wanted $want), stderr: $err"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
expect "run a folder" 2 "is a folder, not a file" -- "$ndp" run --backend=interp "$dir"
expect "check a folder" 2 "is a folder, not a file" -- "$ndp" check "$dir"
expect "run a missing file" 2 "No such file or directory" -- "$ndp" run --backend=interp "$dir/none.ndp"
expect "run a program" 0 "" -- "$ndp" run --backend=interp "$example"
if [[ -w /dev/full ]]; then
  err=$("$ndp" run --backend=interp "$example" 2>&1 >/dev/full)
  status=$?
  if [[ $status == 0 || $err != *"cannot write the output"* ]]; then
    echo "FAIL output to a full disk: exit $status, stderr: $err"
    failures=$((failures + 1))
  else
    echo "ok   output to a full disk"
  fi
fi
echo "$failures failed"
exit $((failures > 0))
