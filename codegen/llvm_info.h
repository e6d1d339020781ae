// What the LLVM that ndp was built with offers (no LLVM type leaks out of codegen/).
#pragma once

#include <string>

namespace ndp::codegen {

/// "19.1.7" etc.
std::string llvm_version();
/// True when the linked LLVM has the NVPTX and host (x86) targets.
bool has_target(const std::string& name);

}  // namespace ndp::codegen
