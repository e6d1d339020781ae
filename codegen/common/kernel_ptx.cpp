// compile_ptx: a kernel body as an NVPTX kernel for sm_90, kPtxInstancesPerThread instances a
// thread; compile_element_ptx: one output of a body as the element function of the consumer kernels.
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <memory>
#include <mutex>
#include <stdexcept>

#include "codegen/common/kernel_compiler.h"
#include "codegen/common/kernel_ir.h"

namespace ndp::codegen {

namespace {

constexpr const char* kTriple = "nvptx64-nvidia-cuda";

void init_nvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

std::unique_ptr<llvm::TargetMachine> nvptx_machine() {
  init_nvptx();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, err);
  if (!target) throw std::runtime_error("NVPTX target: " + err);
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(kTriple, "sm_90", "+ptx78", llvm::TargetOptions(), std::nullopt));
  if (!tm) throw std::runtime_error("cannot create the NVPTX target machine");
  return tm;
}

/// Verifies m and prints it as PTX.
std::string emit_ptx(llvm::Module& m, llvm::TargetMachine& tm) {
  std::string verr;
  llvm::raw_string_ostream vs(verr);
  if (llvm::verifyModule(m, &vs)) throw std::runtime_error("invalid kernel IR: " + verr);
  llvm::SmallString<4096> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw std::runtime_error("the NVPTX target cannot emit assembly");
  pm.run(m);
  return std::string(ptx.str());
}

}  // namespace

std::string compile_ptx(const flat::KernelBody& k) {
  std::unique_ptr<llvm::TargetMachine> tm = nvptx_machine();
  llvm::LLVMContext ctx;
  llvm::Module m("ndp_kernel", ctx);
  m.setTargetTriple(kTriple);
  m.setDataLayout(tm->createDataLayout());
  llvm::IRBuilder<> b(ctx);
  std::vector<llvm::Type*> params{b.getInt64Ty()};
  size_t ni = k.inputs.size(), no = k.outputs.size();
  for (size_t j = 0; j < ni + no; ++j) params.push_back(b.getPtrTy());
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), params, false);
  auto* fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "ndp_kernel", m);
  // Marks the function as a kernel entry (LLVM 19 reads nvvm.annotations).
  llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(fn), llvm::MDString::get(ctx, "kernel"),
                          llvm::ValueAsMetadata::get(b.getInt32(1))};
  m.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, md));

  // Distinct buffers: inputs are never written and never alias an output, so loads may use the
  // read-only path.
  for (size_t j = 0; j < ni + no; ++j) {
    fn->addParamAttr(static_cast<unsigned>(1 + j), llvm::Attribute::NoAlias);
    if (j < ni) fn->addParamAttr(static_cast<unsigned>(1 + j), llvm::Attribute::ReadOnly);
  }
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  b.SetInsertPoint(entry);
  auto sreg = [&](llvm::Intrinsic::ID id) { return b.CreateZExt(b.CreateIntrinsic(id, {}, {}), b.getInt64Ty()); };
  llvm::Value* ntid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  // Thread t of block c computes instances c·ntid·U + t + u·ntid for u < U: every step of u is
  // a fully coalesced row, and U independent loads are in flight per thread.
  llvm::Value* base = b.CreateAdd(b.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                              b.CreateMul(ntid, b.getInt64(kPtxInstancesPerThread))),
                                  sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x), "base");
  for (int u = 0; u < kPtxInstancesPerThread; ++u) {
    llvm::Value* i = b.CreateAdd(base, b.CreateMul(ntid, b.getInt64(u)), "i");
    auto* body = llvm::BasicBlock::Create(ctx, "body", fn);
    auto* next = llvm::BasicBlock::Create(ctx, "next", fn);
    b.CreateCondBr(b.CreateICmpSLT(i, fn->getArg(0)), body, next);
    b.SetInsertPoint(body);
    std::vector<llvm::Value*> outs = emit_instance(b, k, [&](uint32_t j) {
      llvm::Type* t = storage_type(ctx, k.inputs.at(j));
      return b.CreateLoad(t, b.CreateGEP(t, fn->getArg(1 + j), i));
    });
    for (size_t o = 0; o < no; ++o) {
      llvm::Type* t = outs[o]->getType();
      b.CreateStore(outs[o], b.CreateGEP(t, fn->getArg(static_cast<unsigned>(1 + ni + o)), i));
    }
    b.CreateBr(next);
    b.SetInsertPoint(next);
  }
  b.CreateRetVoid();

  return emit_ptx(m, *tm);
}

std::string compile_element_ptx(const flat::KernelBody& k) {
  if (k.outputs.size() != 1) throw std::runtime_error("an element function computes one output");
  std::unique_ptr<llvm::TargetMachine> tm = nvptx_machine();
  llvm::LLVMContext ctx;
  llvm::Module m("ndp_element", ctx);
  m.setTargetTriple(kTriple);
  m.setDataLayout(tm->createDataLayout());
  llvm::IRBuilder<> b(ctx);
  auto* fty = llvm::FunctionType::get(b.getInt64Ty(), {b.getInt64Ty(), b.getPtrTy()}, false);
  auto* fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "ndp_element", m);
  fn->addParamAttr(1, llvm::Attribute::ReadOnly);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value* i = fn->getArg(0);
  llvm::MDNode* invariant = llvm::MDNode::get(ctx, {});
  std::vector<llvm::Value*> outs = emit_instance(b, k, [&](uint32_t j) {
    // ins[j] (the caller's parameter space, through a generic pointer), then element i through
    // the read-only global path: inputs are never written while a kernel runs.
    auto* base = b.CreateLoad(b.getPtrTy(), b.CreateConstGEP1_64(b.getPtrTy(), fn->getArg(1), j));
    base->setMetadata(llvm::LLVMContext::MD_invariant_load, invariant);
    llvm::Value* global = b.CreateAddrSpaceCast(base, b.getPtrTy(1));
    llvm::Type* t = storage_type(ctx, k.inputs.at(j));
    auto* x = b.CreateLoad(t, b.CreateGEP(t, global, i));
    x->setMetadata(llvm::LLVMContext::MD_invariant_load, invariant);
    return x;
  });
  // The value's bits in the low bytes of the i64 result (fused.cu's from_bits).
  llvm::Value* v = outs.at(0);
  llvm::Type* vt = v->getType();
  if (vt->isFloatingPointTy()) v = b.CreateBitCast(v, b.getIntNTy(vt->getPrimitiveSizeInBits()));
  b.CreateRet(b.CreateZExtOrTrunc(v, b.getInt64Ty()));
  return emit_ptx(m, *tm);
}

}  // namespace ndp::codegen
