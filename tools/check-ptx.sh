#!/usr/bin/env bash
# Assembles every .ptx file in a folder with `ptxas -arch=sm_90` (the PTX the test suite's
# kernels generate, saved by NDP_PTX_CHECK_DIR; see tools/test.sh). CI has no GPU, so this is
# where generated GPU code is checked there. Element functions of consumer kernels
# (<hash>.element-<type>.ptx) are assembled as relocatable code and linked with nvlink against
# the consumer image they will be linked with at run time (CUBIN_DIR/fused_<type>.cubin), as
# the driver's linker does on the GPU.
#   tools/check-ptx.sh PTX_DIR [CUBIN_DIR]
# Prints `PTX check: N kernels assembled, M element functions linked` or fails.
set -euo pipefail
dir=$1
cubins=${2:-}
ptxas=${NDP_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
if [ ! -x "$ptxas" ]; then echo "PTX check: SKIP (no ptxas)"; exit 0; fi
nvlink=$(dirname "$ptxas")/nvlink
n=0
linked=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shopt -s nullglob
for f in "$dir"/*.ptx; do
  case "$f" in
    *.element-*.ptx)
      type=${f##*.element-}
      type=${type%.ptx}
      # At most 64 registers: the segmented passes that call it run under that cap (fused.cpp).
      if ! "$ptxas" -arch=sm_90 -maxrregcount=64 -c "$f" -o "$tmp/e.o"; then echo "PTX check: ptxas rejected $f" >&2; exit 1; fi
      if [ -n "$cubins" ] && [ -f "$cubins/fused_$type.cubin" ] && [ -x "$nvlink" ]; then
        if ! "$nvlink" -arch=sm_90 "$cubins/fused_$type.cubin" "$tmp/e.o" -o "$tmp/linked.cubin"; then
          echo "PTX check: nvlink could not link $f with fused_$type.cubin" >&2
          exit 1
        fi
        linked=$((linked + 1))
      fi
      ;;
    *)
      if ! "$ptxas" -arch=sm_90 "$f" -o /dev/null; then echo "PTX check: ptxas rejected $f" >&2; exit 1; fi
      ;;
  esac
  n=$((n + 1))
done
(( n > 0 )) || { echo "PTX check: no kernels were saved in $dir" >&2; exit 1; }
echo "PTX check: $n kernels assembled by ptxas -arch=sm_90, $linked element functions linked with their consumer kernels"
