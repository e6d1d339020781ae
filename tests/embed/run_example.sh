#!/usr/bin/env bash
# Runs an embedding example on a backend and compares its answers with the expected ones (the
# line naming the backend left out, and a source file's folder: a build may name it by its path).
#   tests/embed/run_example.sh BINARY BACKEND EXPECTED
set -euo pipefail
"$1" "$2" | grep -v '^backend ' | sed 's#[^ ]*/\([^/ ]*\.ndp\)#\1#' | diff -u "$3" -
