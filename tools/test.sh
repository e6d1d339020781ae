#!/usr/bin/env bash
# Builds ndp and runs every test: doctest unit tests, then all program tests, REPL transcripts,
# error tests and examples on every available backend. The last line is `N passed, M failed`.
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build
meson test -C build --suite unit --print-errorlogs
build/cli/ndp test tests examples
