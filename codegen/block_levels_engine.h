// The engine of Note [Levels in a block] as LLVM bitcode (codegen/block_levels_engine.cu, compiled
// by clang at build time and embedded by tools/embed_binaries.py): Note [Compiled block levels]
// in codegen/block_levels_ptx.h. Empty (count 0) in a build without clang.
#pragma once

#include <cstddef>

#include "codegen/libdevice.h"  // EmbeddedImage

namespace ndp::codegen {

extern const EmbeddedImage kBlockLevelsEngine[];
extern const size_t kBlockLevelsEngineCount;

}  // namespace ndp::codegen
