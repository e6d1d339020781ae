#!/usr/bin/env bash
# On the GPU machine, after `bash .device/unpack.sh`: runs a command with the staged shared
# libraries on the loader path (NDP_GPU_BUILD as for tools/gpu-build.sh).   tools/gpu-run.sh build-gpu/cli/ndp test tests --backend=cuda
set -euo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH="$PWD/${NDP_GPU_BUILD:-build-gpu}/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NDP_REQUIRE_GPU=1
exec "$@"
