#include "codegen/nvptx.h"

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetOptions.h>

#include <mutex>
#include <optional>
#include <stdexcept>

namespace ndp::codegen {

namespace {

void init_nvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

}  // namespace

std::unique_ptr<llvm::TargetMachine> nvptx_machine() {
  init_nvptx();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kNvptxTriple, err);
  if (!target) throw std::runtime_error("NVPTX target: " + err);
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(kNvptxTriple, "sm_90", "+ptx78", llvm::TargetOptions(), std::nullopt));
  if (!tm) throw std::runtime_error("cannot create the NVPTX target machine");
  return tm;
}

Passes::Passes(llvm::TargetMachine* tm) : pb(tm) {
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
}

void optimize(llvm::Module& m, llvm::TargetMachine& tm) {
  Passes passes(&tm);
  passes.pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(m, passes.mam);
}

void annotate(llvm::Function* fn, const char* key, int value) {
  llvm::LLVMContext& ctx = fn->getContext();
  llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(fn), llvm::MDString::get(ctx, key),
                          llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), value))};
  fn->getParent()->getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, md));
}

void verify(llvm::Module& m) {
  std::string verr;
  llvm::raw_string_ostream vs(verr);
  if (llvm::verifyModule(m, &vs)) throw std::runtime_error("invalid kernel IR: " + verr);
}

std::string emit_ptx(llvm::Module& m, llvm::TargetMachine& tm) {
  verify(m);
  llvm::SmallString<4096> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw std::runtime_error("the NVPTX target cannot emit assembly");
  pm.run(m);
  return std::string(ptx.str());
}

}  // namespace ndp::codegen
