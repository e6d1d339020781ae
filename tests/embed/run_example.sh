#!/usr/bin/env bash
# Runs an embedding example on a backend and compares its answers with the expected ones.
#   tests/embed/run_example.sh BINARY BACKEND EXPECTED
set -euo pipefail
"$1" "$2" | grep -v '^backend ' | diff -u "$3" -
