// The primitive kernels' fatbinaries and the consumer kernels' relocatable cubins, embedded by
// tools/embed_binaries.py (runtime/meson.build).
#pragma once

#include <cstddef>

namespace ndp::rt::gpu {

struct EmbeddedImage {
  const char* name;  ///< the source file's fatbinary, e.g. "generate.fatbin"
  const unsigned char* data;
  size_t size;
};

/// Empty (count 0) when the build had no CUDA toolkit.
extern const EmbeddedImage kEmbeddedImages[];
extern const size_t kEmbeddedImageCount;

/// The consumer kernels of device/fused.cu, one relocatable sm_90 cubin per element type, named
/// "fused_<type>.cubin" (i64 f64 i32 f32 bool char); empty without the CUDA toolkit.
extern const EmbeddedImage kFusedImages[];
extern const size_t kFusedImagesCount;

}  // namespace ndp::rt::gpu
