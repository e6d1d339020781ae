#!/usr/bin/env bash
# Builds ndp and runs every test: doctest unit tests, the embedding examples (in and out of tree), a bounded random differential test of the
# backends (docs/difftest.md for longer campaigns), then all program tests, REPL transcripts,
# error tests and examples on every available backend, and ptxas over the PTX of every kernel
# those tests generate. The last line is `N passed, M failed`. The same GPU-free tests under
# AddressSanitizer and UndefinedBehaviorSanitizer: tools/sanitize.sh (docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build
meson test -C build --suite unit --suite embed --print-errorlogs
build/tests/difftest --rand --count 300 --seed 1
rm -rf build/ptx-check
NDP_PTX_CHECK_DIR=build/ptx-check build/cli/ndp test tests examples | tee build/program-tests.log
tools/check-ptx.sh build/ptx-check
tail -1 build/program-tests.log
