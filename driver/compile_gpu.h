// The GPU modules of a program compiled ahead of time (Note [Precompiled modules] in
// exec/cuda/kernels.h): each plain kernel and each consumer program of the exported functions,
// as PTX from LLVM, then a fatbinary (sm_90 SASS from the toolkit's ptxas, and the PTX for
// newer GPUs) made by the toolkit's fatbinary.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "flatten/compiled_image.h"

namespace ndp::driver {

struct GpuModule {
  std::string key;     // the cache key the executor looks it up by
  std::string ptx;
  std::string cubin;   // filled by assemble_gpu_modules
  std::string fatbin;  // filled by assemble_gpu_modules
};

/// The modules' PTX, each distinct key once (types: the program's, for the kernels the
/// executor makes at run time). Throws std::runtime_error when LLVM fails.
std::vector<GpuModule> gpu_modules(lang::TypeContext& types, std::span<const flatten::CompiledEntry* const> entries);

/// Runs ptxas and fatbinary (found in $CUDA_HOME/bin, /usr/local/cuda/bin or PATH) on each
/// module. Throws std::runtime_error naming the tool and its message when one is missing or fails.
void assemble_gpu_modules(std::vector<GpuModule>& modules);

}  // namespace ndp::driver
