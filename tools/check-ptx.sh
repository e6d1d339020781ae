#!/usr/bin/env bash
# Assembles every .ptx file in a folder with `ptxas -arch=sm_90` (the PTX the test suite's
# kernels generate, saved by NDP_PTX_CHECK_DIR; see tools/test.sh). CI has no GPU, so this is
# where generated GPU code is checked there. Prints `PTX check: N kernels assembled` or fails.
set -euo pipefail
dir=$1
ptxas=${NDP_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
if [ ! -x "$ptxas" ]; then echo "PTX check: SKIP (no ptxas)"; exit 0; fi
n=0
shopt -s nullglob
for f in "$dir"/*.ptx; do
  if ! "$ptxas" -arch=sm_90 "$f" -o /dev/null; then echo "PTX check: ptxas rejected $f" >&2; exit 1; fi
  n=$((n + 1))
done
(( n > 0 )) || { echo "PTX check: no kernels were saved in $dir" >&2; exit 1; }
echo "PTX check: $n kernels assembled by ptxas -arch=sm_90"
