// The object file `ndp compile` writes (Note [Compiled images] in flatten/compiled_image.h): the
// program's image, its fused kernels compiled for the host, and its GPU kernels' fatbinary, as
// data and code that a C++ program links next to the generated header.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "flatten/flat_ir.h"

namespace ndp::codegen {

struct ObjectContents {
  /// The program's name in the symbols: ndp_image_NAME and ndp_image_NAME_size (the image's
  /// bytes), ndp_kernels_NAME and ndp_kernels_NAME_count (an array of {stable hash of the key,
  /// function}: include/ndp/ndp.hpp's CompiledKernel), ndp_gpu_modules_NAME and
  /// ndp_gpu_modules_NAME_count (an array of {key, fatbinary}: its CompiledModule).
  std::string symbol;
  std::string_view image;
  std::vector<const flatten::KernelBody*> host_kernels;
  std::vector<std::pair<std::string, std::string_view>> gpu_modules;  // key, fatbinary
  /// The CPU the host kernels are compiled for: an LLVM CPU name ("x86-64-v3"), or "native" for
  /// this machine's.
  std::string cpu = "x86-64-v3";
};

/// The ELF object for the host (position-independent). Throws std::runtime_error when LLVM fails
/// (an unknown CPU name, say).
std::string compile_object(const ObjectContents& c);

/// The optimised LLVM IR of compile_object's module, for `--emit=llvm` of a cpu compile.
std::string object_ir(const ObjectContents& c);

}  // namespace ndp::codegen
