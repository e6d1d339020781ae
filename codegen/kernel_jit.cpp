// HostKernelCompiler: a kernel body as a loop `for i in [begin, end): out_k[i] = f(in_0[i], ...)`
// compiled by ORC LLJIT for the host CPU after the O2 pipeline (which vectorises the loop).
#include "codegen/kernel_jit.h"
#include "codegen/host_loop.h"

// LLVM's ORC headers trip -Wredundant-move; they are not ours to fix.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wredundant-move"
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#pragma GCC diagnostic pop

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "codegen/kernel_ir.h"
#include "flatten/kernel_abi.h"

namespace ndp::codegen {

using flatten::HostKernelFn;

namespace {

template <class T>
T take(llvm::Expected<T> e, const char* what) {
  if (!e) throw std::runtime_error(std::string(what) + ": " + llvm::toString(e.takeError()));
  return std::move(*e);
}

void init_native() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

}  // namespace

/// void name(i64 begin, i64 end, ptr ins, ptr outs); a kernel that can fail finds its failure
/// record after the outputs (flatten/kernel_abi.h), lowered once after the loop.
void emit_loop(llvm::Module& m, const flatten::KernelBody& k, const std::string& name, uint64_t strided) {
  llvm::LLVMContext& ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* ptr = b.getPtrTy();
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {i64, i64, ptr, ptr}, false);
  auto* fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, m);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  auto* exit = llvm::BasicBlock::Create(ctx, "exit", fn);
  b.SetInsertPoint(entry);
  llvm::Value *begin = fn->getArg(0), *end = fn->getArg(1);
  std::vector<llvm::Value*> in_base, out_base;
  for (size_t j = 0; j < k.inputs.size(); ++j)
    in_base.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, fn->getArg(2), j), "in"));
  for (size_t o = 0; o < k.outputs.size(); ++o)
    out_base.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, fn->getArg(3), o), "out"));
  std::vector<llvm::Value*> seq_base;  // after the inputs (Note [Sequences in loop kernels])
  for (size_t j = 0; j < k.seq_pointers(); ++j)
    seq_base.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, fn->getArg(2), k.inputs.size() + j), "seq"));
  // A strided input's three numbers follow the sequences' pointers; its position is carried
  // through the loop as a row's start and a column (no division an instance).
  struct Strided {
    uint32_t input;
    llvm::Value *c, *stride, *row0, *column0;
    llvm::PHINode *row = nullptr, *column = nullptr;
  };
  std::vector<Strided> strides;
  for (uint32_t j = 0; j < k.inputs.size() && j < 64; ++j) {
    if (!(strided >> j & 1)) continue;
    const size_t at = k.inputs.size() + k.seq_pointers() + 3 * strides.size();
    auto number = [&](size_t x) { return b.CreateLoad(i64, b.CreateConstGEP1_64(ptr, fn->getArg(2), at + x)); };
    llvm::Value *c = number(0), *stride = number(1), *offset = number(2);
    llvm::Value* q = b.CreateUDiv(begin, c);
    strides.push_back({j, c, stride, b.CreateAdd(b.CreateMul(q, stride), offset), b.CreateSub(begin, b.CreateMul(q, c))});
  }
  const bool can_fail = k.can_fail();
  llvm::Value* none = b.getInt64(flatten::kNoKernelFailure);
  b.CreateCondBr(b.CreateICmpSLT(begin, end), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(i64, 2, "i");
  i->addIncoming(begin, entry);
  for (Strided& s : strides) {
    s.row = b.CreatePHI(i64, 2, "row");
    s.column = b.CreatePHI(i64, 2, "column");
    s.row->addIncoming(s.row0, entry);
    s.column->addIncoming(s.column0, entry);
  }
  auto strided_of = [&](uint32_t j) -> const Strided* {
    for (const Strided& s : strides)
      if (s.input == j) return &s;
    return nullptr;
  };
  llvm::PHINode* lowest = can_fail ? b.CreatePHI(i64, 2, "lowest") : nullptr;  // the lowest record so far
  InstanceValues inst = emit_instance(
      b, k, i,
      [&](uint32_t j) {
        llvm::Type* t = storage_type(ctx, k.inputs.at(j));
        const Strided* s = strided_of(j);
        return b.CreateLoad(t, b.CreateGEP(t, in_base[j], s ? b.CreateAdd(s->row, s->column) : static_cast<llvm::Value*>(i)));
      },
      MathLibrary::Host, [&](uint32_t j) { return seq_base.at(j); });
  for (size_t o = 0; o < inst.outputs.size(); ++o)
    b.CreateStore(inst.outputs[o], b.CreateGEP(inst.outputs[o]->getType(), out_base[o], i));
  llvm::Value* lowest_next = nullptr;
  if (can_fail) lowest_next = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, lowest, inst.failure);
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1));
  for (Strided& s : strides) {  // the next column, or the next row's first
    llvm::Value* column = b.CreateAdd(s.column, b.getInt64(1));
    llvm::Value* wrap = b.CreateICmpEQ(column, s.c);
    s.column->addIncoming(b.CreateSelect(wrap, b.getInt64(0), column), b.GetInsertBlock());
    s.row->addIncoming(b.CreateSelect(wrap, b.CreateAdd(s.row, s.stride), s.row), b.GetInsertBlock());
  }
  llvm::BasicBlock* loop_end = b.GetInsertBlock();  // a node may have added blocks (^)
  i->addIncoming(next, loop_end);
  if (can_fail) {
    lowest->addIncoming(none, entry);
    lowest->addIncoming(lowest_next, loop_end);
  }
  b.CreateCondBr(b.CreateICmpSLT(next, end), loop, exit);
  b.SetInsertPoint(exit);
  if (can_fail) {
    llvm::PHINode* found = b.CreatePHI(i64, 2, "found");
    found->addIncoming(none, entry);
    found->addIncoming(lowest_next, loop_end);
    auto* report = llvm::BasicBlock::Create(ctx, "report", fn);
    auto* done = llvm::BasicBlock::Create(ctx, "done", fn);
    b.CreateCondBr(b.CreateICmpNE(found, none), report, done);
    b.SetInsertPoint(report);
    llvm::Value* record = b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, fn->getArg(3), k.outputs.size()), "record");
    b.CreateAtomicRMW(llvm::AtomicRMWInst::UMin, record, found, llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic);
    b.CreateBr(done);
    b.SetInsertPoint(done);
  }
  b.CreateRetVoid();
}

void optimise(llvm::Module& m, llvm::TargetMachine* tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  mpm.run(m, mam);
}


struct HostKernelCompiler::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> tm;  // for the optimiser's cost model
};

HostKernelCompiler::HostKernelCompiler() : impl_(std::make_unique<Impl>()) {}
HostKernelCompiler::~HostKernelCompiler() = default;

HostKernelFn HostKernelCompiler::compile(const flatten::KernelBody& k, uint64_t strided) {
  std::string key = k.key() + (strided != 0 ? "|strided " + std::to_string(strided) : "");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  if (!impl_->jit) {
    init_native();
    auto jtmb = take(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
    jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
    impl_->tm = take(jtmb.createTargetMachine(), "creating the host target machine");
    impl_->jit = take(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create(), "creating LLJIT");
  }
  std::string name = "ndp_kernel_" + std::to_string(compiled_);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = std::make_unique<llvm::Module>("ndp_kernels", *ctx);
  m->setDataLayout(impl_->jit->getDataLayout());
  m->setTargetTriple(impl_->jit->getTargetTriple().str());
  emit_loop(*m, k, name, strided);
  std::string verr;
  llvm::raw_string_ostream vs(verr);
  if (llvm::verifyModule(*m, &vs)) throw std::runtime_error("invalid kernel IR: " + verr);
  optimise(*m, impl_->tm.get());
  if (auto e = impl_->jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))))
    throw std::runtime_error("adding the kernel: " + llvm::toString(std::move(e)));
  auto addr = take(impl_->jit->lookup(name), "looking up the kernel");
  auto fn = addr.toPtr<HostKernelFn>();
  ++compiled_;
  cache_.emplace(std::move(key), fn);
  return fn;
}

std::string host_kernel_ir(const flatten::KernelBody& k) {
  init_native();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) throw std::runtime_error("detecting the host: " + llvm::toString(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
  auto tm = jtmb->createTargetMachine();
  if (!tm) throw std::runtime_error("creating the host target machine: " + llvm::toString(tm.takeError()));
  llvm::LLVMContext ctx;
  llvm::Module m("ndp_kernel", ctx);
  m.setDataLayout((*tm)->createDataLayout());
  m.setTargetTriple((*tm)->getTargetTriple().str());
  emit_loop(m, k, "ndp_kernel");
  std::string verr;
  llvm::raw_string_ostream vs(verr);
  if (llvm::verifyModule(m, &vs)) throw std::runtime_error("invalid kernel IR: " + verr);
  optimise(m, tm->get());
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  return text;
}

}  // namespace ndp::codegen
