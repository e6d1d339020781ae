#!/usr/bin/env bash
# Builds the front-end fuzz target with clang 19 + libFuzzer (+ ASan/UBSan) and runs it.
#   tools/fuzz.sh [SECONDS]     (default 60); corpus: fuzz-out/corpus, seeded from tests/ and examples/
# A crash leaves its input in fuzz-out/ and makes the script fail.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
mkdir -p fuzz-out/corpus
srcs=(tests/fuzz/fuzz_frontend.cpp frontend/*.cpp lang/source.cpp lang/diagnostics.cpp lang/types.cpp
      lang/type_print.cpp lang/value.cpp lang/value_print.cpp lang/prims.cpp lang/core_dump.cpp)
clang++-19 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I. \
  "${srcs[@]}" -lfmt -o fuzz-out/fuzz_frontend
find tests examples stdlib -name '*.ndp' -exec cp -t fuzz-out/corpus {} + 2>/dev/null || true
cd fuzz-out
./fuzz_frontend -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
  -print_final_stats=1 corpus
