// Queries the linked LLVM's version and registered targets.
#include "codegen/llvm_info.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>

namespace ndp::codegen {

std::string llvm_version() { return LLVM_VERSION_STRING; }

bool has_target(const std::string& name) {
  llvm::InitializeAllTargetInfos();
  for (const llvm::Target& t : llvm::TargetRegistry::targets())
    if (name == t.getName()) return true;
  return false;
}

}  // namespace ndp::codegen
