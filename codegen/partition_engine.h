// The partition levels' engine as LLVM bitcode (codegen/partition_engine.cu, compiled by clang
// at build time and embedded by tools/embed_binaries.py): Note [Partition levels on the GPU] in
// codegen/partition_levels_ptx.h. Empty (count 0) in a build without clang.
#pragma once

#include <cstddef>

#include "codegen/libdevice.h"  // EmbeddedImage

namespace ndp::codegen {

extern const EmbeddedImage kPartitionEngine[];
extern const size_t kPartitionEngineCount;

}  // namespace ndp::codegen
