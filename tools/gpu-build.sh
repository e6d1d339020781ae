#!/usr/bin/env bash
# Builds what runs on the GPU machine (docs/gpu.md) into build-gpu/ — LLVM linked statically,
# since that machine has no LLVM — and stages it with ../shared/tools/stage-for-gpu into
# .device/. The few Debian shared libraries the binaries need beyond libc/libstdc++ (fmt,
# libedit, OpenMP) travel in build-gpu/lib; tools/gpu-run.sh points the loader at them.
#   tools/gpu-build.sh [TARGET...]    (default: what tools/gpu-test.sh runs: ndp, the GPU unit
#                                      tests and the GPU benchmarks)
# NDP_GPU_BUILD (default build-gpu) and NDP_GPU_STAGE (default .device) choose other folders,
# so that several people can stage at once.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${NDP_GPU_BUILD:-build-gpu}
S=${NDP_GPU_STAGE:-.device}
targets=("$@")
((${#targets[@]})) || targets=(cli/ndp tests/unit_runtime_gpu tests/unit_runtime_cuda tests/unit_exec_llvm_free bench/gpu_fusion_bandwidth
                                 bench/gpu_primitives_bench bench/cub_bench bench/thrust_bench
                                 tests/unit_embedding tests/jit_example tests/aot_example)
if [ ! -f $B/build.ninja ]; then
  meson setup $B --native-file tools/native-llvm19.ini -Dllvm_static=true -Dbuildtype=release \
    -Dcpp_link_args=-Wl,--as-needed
fi
ninja -C $B "${targets[@]}"
rm -rf $B/lib && mkdir -p $B/lib
for t in "${targets[@]}"; do
  ldd "$B/$t" | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;;
      # The toolkit's libraries (cuSPARSE, cuBLAS for bench/baselines) are too big to travel; the GPU
      # machine has the toolkit (run with its lib64 on LD_LIBRARY_PATH).
      libcusparse.so*|libnvJitLink.so*|libcublas.so*|libcublasLt.so*) ;;
      *) cp -L "$lib" $B/lib/ ;;
    esac
  done
done
files=()
for t in "${targets[@]}"; do files+=("$B/$t"); done
../shared/tools/stage-for-gpu -o "$S" "${files[@]}" $B/lib
