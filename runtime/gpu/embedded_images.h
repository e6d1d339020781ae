// The primitive kernels' fatbinaries, embedded by tools/embed_binaries.py (runtime/meson.build).
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

}  // namespace ndp::rt::gpu
