// The primitive kernels' fatbinaries and the consumer kernels' PTX, embedded by
// tools/embed_binaries.py (runtime/meson.build).
#pragma once

#include <cstddef>

namespace ndp::runtime::gpu {

struct EmbeddedImage {
  const char* name;  ///< the source file's fatbinary, e.g. "generate.fatbin"
  const unsigned char* data;
  size_t size;
  size_t unpacked_size;  ///< 0: `data` is the file; else zlib-compressed, this many bytes unpacked
};

/// Empty (count 0) when the build had no CUDA toolkit.
extern const EmbeddedImage kEmbeddedImages[];
extern const size_t kEmbeddedImageCount;

/// The consumer kernels of device/fused.cu as PTX (nvcc -rdc -ptx, declaring ndp_elements), one
/// text per element type, named "fused_<type>.ptx" (i64 f64 i32 f32 bool char), zlib-compressed
/// (consumer_ptx unpacks them); empty without the CUDA toolkit (Note [Consumer programs]).
extern const EmbeddedImage kFusedPtx[];
extern const size_t kFusedPtxCount;

}  // namespace ndp::runtime::gpu
