#!/usr/bin/env bash
# Runs a libFuzzer target of build-san (ASan + UBSan + coverage; tools/sanitizer-build.sh):
#   tools/fuzz.sh [SECONDS] [frontend|pipeline]      (defaults: 60, frontend)
#   frontend: any bytes through the lexer, parser and type checker (tests/fuzz/fuzz_frontend.cpp)
#   pipeline: well-typed generated programs through interp and flattening + cpu, answers
#             compared (tests/fuzz/fuzz_pipeline.cpp)
# Corpus: fuzz-out/TARGET/corpus (the frontend's seeded from tests/ and examples/). A finding
# leaves its input in fuzz-out/TARGET/ and makes the script fail.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
target=${2:-frontend}
tools/sanitizer-build.sh
out=fuzz-out/$target
mkdir -p "$out/corpus"
if [ "$target" = frontend ]; then
  find tests examples stdlib -name '*.ndp' -exec cp -t "$out/corpus" {} + 2>/dev/null || true
fi
cd "$out"
# The pipeline target starts a session (and the standard library) for every input: slower,
# and LLVM's JIT keeps caches for the process's life, which are not leaks.
extra=()
[ "$target" = pipeline ] && extra=(-detect_leaks=0 -max_len=512)
"../../build-san/tests/fuzz_$target" -max_total_time="$seconds" -max_len=4096 -timeout=30 -rss_limit_mb=8192 \
  -print_final_stats=1 "${extra[@]}" corpus
