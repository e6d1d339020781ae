#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages), configures and builds ndp into build/.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(meson ninja-build pkg-config g++ python3 llvm-19-dev libfmt-dev doctest-dev libedit-dev
          zlib1g-dev libzstd-dev clang-19 libclang-rt-19-dev libjemalloc-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -f build/build.ninja ]; then
  # Meson 1.0 would pick Debian's default llvm-config (14); the native file selects LLVM 19.
  meson setup build --native-file tools/native-llvm19.ini
fi
ninja -C build
