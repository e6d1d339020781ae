#!/usr/bin/env bash
# The GPU-free test suite under AddressSanitizer + UndefinedBehaviorSanitizer (issue 23):
# builds build-san (tools/sanitizer-build.sh), then runs the unit tests, the random
# differential test and every program test, REPL transcript, error test and example on
# interp and cpu. Any sanitizer report stops the run with a failure. Takes about as long
# again as tools/test.sh after the first build (the build itself is slower).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/sanitizer-build.sh
# halt_on_error: a report fails the test it happens in. detect_leaks stays on.
# allocator_may_return_null: a request past any memory is std::bad_alloc ("Out of memory.",
# which the tests ask for), as without ASan, not an abort.
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The embedding tests build C++ programs against the sanitized libraries: with the sanitizers.
NDP_TEST_CXX="clang++-19 -fsanitize=address,undefined" \
  meson test -C build-san --suite unit --suite embed --print-errorlogs --timeout-multiplier 4
build-san/tests/difftest --rand --count 300 --seed 1
build-san/cli/ndp test tests examples | tee build-san/program-tests.log
tail -1 build-san/program-tests.log
