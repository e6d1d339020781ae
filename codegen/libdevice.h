// libdevice, the CUDA toolkit's math library as LLVM bitcode (nvvm/libdevice/libdevice.10.bc),
// embedded at build time by tools/embed_binaries.py (codegen/meson.build), so that ndp needs no
// toolkit to compile GPU kernels that call math functions (Note [Math functions on the GPU] in
// kernel_ptx.cpp). Empty (count 0) in a build without the CUDA toolkit.
#pragma once

#include <cstddef>

namespace ndp::codegen {

struct EmbeddedImage {
  const char* name;
  const unsigned char* data;
  size_t size;
  size_t unpacked_size;  ///< always 0: stored as it is
};

extern const EmbeddedImage kLibdevice[];
extern const size_t kLibdeviceCount;

}  // namespace ndp::codegen
