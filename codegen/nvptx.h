// The NVPTX target as every GPU code generator here uses it: the machine (sm_90, PTX 7.8), the
// optimiser's pipeline and the PTX printer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>

namespace ndp::codegen {

/// The target triple of every GPU module.
inline constexpr const char* kNvptxTriple = "nvptx64-nvidia-cuda";

/// A target machine for sm_90; throws where LLVM has no NVPTX target.
std::unique_ptr<llvm::TargetMachine> nvptx_machine();

/// A PassBuilder with its four analysis managers registered and cross-linked, for the target
/// `tm` (null: none), ready to run a pass manager built from `pb` over a module with `mam`.
struct Passes {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb;
  explicit Passes(llvm::TargetMachine* tm = nullptr);
};

/// LLVM's O2 pipeline over m, with the target's cost model.
void optimize(llvm::Module& m, llvm::TargetMachine& tm);

/// Throws where m is not valid IR: before the optimiser, which may crash on it.
void verify(llvm::Module& m);

/// Adds `fn`'s annotation `key` = `value` to its module's nvvm.annotations, which LLVM 19 reads:
/// ("kernel", 1) makes fn a kernel entry; ("maxntidx", N) and ("minctasm", N) bound its launches.
void annotate(llvm::Function* fn, const char* key, int value);

/// Links the libdevice functions `m` calls into it (Note [Math functions on the GPU] in
/// kernel_ptx.cpp) and inlines them into `entry`; throws where this build has no libdevice.
void link_libdevice(llvm::Module& m, const std::string& entry);
/// The same for a module of several kernels, `entries`.
void link_libdevice(llvm::Module& m, const std::vector<std::string>& entries);

/// Verifies m and prints it as PTX.
std::string emit_ptx(llvm::Module& m, llvm::TargetMachine& tm);

}  // namespace ndp::codegen
