#!/usr/bin/env bash
# Assembles every .ptx file in a folder with `ptxas -arch=sm_90` (the PTX the test suite's
# kernels generate, saved by NDP_PTX_CHECK_DIR; see tools/test.sh). CI has no GPU, so this is
# where generated GPU code is checked there. Consumer programs (<hash>.consumer.ptx: the
# consumer kernels with an element function put in, as the driver compiles them on the GPU,
# Note [Consumer programs] in runtime/gpu/consumer_program.h) must also compile with no call
# through the stack: the element function with no frame, and no kernel with a frame that could
# hold its 64-byte result.
#   tools/check-ptx.sh PTX_DIR
# Prints `PTX check: N kernels assembled, M consumer programs ...` or fails.
set -euo pipefail
dir=$1
ptxas=${NDP_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
if [ ! -x "$ptxas" ]; then echo "PTX check: SKIP (no ptxas)"; exit 0; fi
n=0
programs=0
shopt -s nullglob
for f in "$dir"/*.ptx; do
  if ! info=$("$ptxas" -arch=sm_90 -v "$f" -o /dev/null 2>&1); then
    echo "$info" >&2
    echo "PTX check: ptxas rejected $f" >&2
    exit 1
  fi
  case "$f" in
    *.consumer.ptx)
      # "Function properties for NAME" lines, each followed by "B bytes stack frame, ...".
      if ! awk '/Function properties for/ { fn = $NF } /bytes stack frame/ {
                  if ($1 >= 64 || (fn == "ndp_elements" && $1 > 0)) { print fn ": " $0; bad = 1 } }
                END { exit bad }' <<<"$info" >&2; then
        echo "PTX check: the consumer program $f passes the element function's result through the stack" >&2
        exit 1
      fi
      programs=$((programs + 1))
      ;;
  esac
  n=$((n + 1))
done
(( n > 0 )) || { echo "PTX check: no kernels were saved in $dir" >&2; exit 1; }
echo "PTX check: $n kernels assembled by ptxas -arch=sm_90, $programs consumer programs with no call through the stack"
