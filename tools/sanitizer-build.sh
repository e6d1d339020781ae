#!/usr/bin/env bash
# Configures and builds build-san: everything compiled by clang 19 with AddressSanitizer and
# UndefinedBehaviorSanitizer, plus the libFuzzer targets (-Dfuzz=true). Installs clang 19 and
# its OpenMP runtime if missing. Used by tools/sanitize.sh and tools/fuzz.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(clang-19 libclang-rt-19-dev libomp-19-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -f build-san/build.ninja ]; then
  # No nvcc kernels: they are device code, which the sanitizers do not see.
  CC=clang-19 CXX=clang++-19 meson setup build-san --native-file tools/native-llvm19.ini \
    -Db_sanitize=address,undefined -Db_lundef=false -Dgpu_primitives=disabled -Dfuzz=true
fi
ninja -C build-san
