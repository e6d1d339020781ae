# The checks of the tests/cli scripts, sourced by them: each prints `ok NAME` or `FAIL NAME: ...`
# and counts the failures in `failures`, which the script turns into its exit status.
failures=0
check() {  # check NAME WANTED_TEXT GOT_TEXT
  if [[ $3 == *"$2"* ]]; then echo "ok   $1"; else echo "FAIL $1: wanted '$2' in: $3"; failures=$((failures + 1)); fi
}
check_not() {  # check_not NAME UNWANTED_TEXT GOT_TEXT
  if [[ $3 != *"$2"* ]]; then echo "ok   $1"; else echo "FAIL $1: did not want '$2' in: $3"; failures=$((failures + 1)); fi
}
