// The engine's bitcode with one plan's parts defined, optimised and printed as PTX (Note
// [Partition levels on the GPU] in partition_levels_ptx.h).
#include "codegen/partition_levels_ptx.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "codegen/kernel_ir.h"
#include "codegen/nvptx.h"
#include "codegen/partition_engine.h"
#include "flatten/kernel_abi.h"

namespace ndp::codegen {

namespace {

using Plan = flatten::PartitionLevels;
using Scalar = Plan::Scalar;

const std::vector<std::string> kKernels = {"ndp_pl_seed", "ndp_pl_count", "ndp_pl_plan", "ndp_pl_scatter", "ndp_pl_block"};

/// Gives the external constant `name` of m the value v.
void define_int(llvm::Module& m, const char* name, int32_t v) {
  llvm::GlobalVariable* decl = m.getGlobalVariable(name);
  if (!decl) throw std::runtime_error(std::string("the partition engine's bitcode declares no ") + name);
  decl->setInitializer(llvm::ConstantInt::get(llvm::Type::getInt32Ty(m.getContext()), static_cast<uint64_t>(v), true));
  decl->setConstant(true);
  decl->setLinkage(llvm::GlobalValue::InternalLinkage);
}

/// The body of the engine's declaration `name`, its builder at its entry.
llvm::Function* define_function(llvm::Module& m, const char* name, llvm::IRBuilder<>& b) {
  llvm::Function* f = m.getFunction(name);
  if (!f || !f->isDeclaration()) throw std::runtime_error(std::string("the partition engine's bitcode lacks ") + name);
  f->setLinkage(llvm::GlobalValue::InternalLinkage);
  b.SetInsertPoint(llvm::BasicBlock::Create(m.getContext(), "entry", f));
  return f;
}

/// A value of flat scalar type t (as stored: bool and char an i8) as a 64-bit word, and back.
llvm::Value* to_word(llvm::IRBuilder<>& b, llvm::Value* v) {
  if (v->getType()->isDoubleTy()) return b.CreateBitCast(v, b.getInt64Ty());
  return v->getType()->isIntegerTy(64) ? v : b.CreateZExt(v, b.getInt64Ty());
}
llvm::Value* from_word(llvm::IRBuilder<>& b, llvm::Value* w, const lang::Type* t) {
  llvm::Type* st = storage_type(b.getContext(), t);
  if (st->isDoubleTy()) return b.CreateBitCast(w, st);
  return st->isIntegerTy(64) ? w : b.CreateTrunc(w, st);
}

/// Where an instance's elements are: element i at base[first + i] (64-bit words;
/// ndp_pl_scalars' parameters).
struct Elements {
  llvm::Value* base = nullptr;
  llvm::Value* first = nullptr;
};

/// The scalars of plan p up to (and with) `last`, for an instance of length `len` whose
/// elements are `seg` (base null: none may be read). `fail` is an i1 alloca, set where a scalar
/// fails (a kernel's failure, an index out of range).
std::vector<llvm::Value*> emit_scalars(llvm::IRBuilder<>& b, const Plan& p, size_t last, llvm::Value* len, const Elements& seg,
                                       llvm::Value* fail) {
  std::vector<llvm::Value*> v;
  auto failed_where = [&](llvm::Value* f) { b.CreateStore(b.CreateOr(b.CreateLoad(b.getInt1Ty(), fail), f), fail); };
  for (size_t i = 0; i <= last; ++i) {
    const Scalar& s = p.scalars[i];
    switch (s.kind) {
      case Scalar::Kind::Length: v.push_back(len); break;
      case Scalar::Kind::Const: v.push_back(b.getInt64(static_cast<uint64_t>(s.value))); break;
      case Scalar::Kind::Kernel: {
        if (!s.kernel || s.args.size() != s.kernel->inputs.size()) throw std::runtime_error("a partition scalar's kernel does not match its inputs");
        InstanceValues r = emit_instance(b, *s.kernel, b.getInt64(0), [&](uint32_t j) { return v.at(s.args.at(j)); },
                                         MathLibrary::Libdevice);
        if (r.failure != nullptr) failed_where(b.CreateICmpNE(r.failure, b.getInt64(flatten::kNoKernelFailure)));
        v.push_back(r.outputs.at(s.output));
        break;
      }
      case Scalar::Kind::Element: {
        if (seg.base == nullptr) throw std::runtime_error("a partition level's recursion reads an element");
        llvm::Value* at = v.at(s.args.at(0));
        llvm::Value* out = b.CreateOr(b.CreateICmpSLT(at, b.getInt64(0)), b.CreateICmpSGE(at, len));
        failed_where(out);
        llvm::Value* q = b.CreateAdd(seg.first, b.CreateSelect(out, b.getInt64(0), at));
        // (An empty instance has no element 0 either: the load is guarded.)
        llvm::Value* word = b.CreateLoad(b.getInt64Ty(), b.CreateGEP(b.getInt64Ty(), seg.base, q));
        llvm::Value* guarded = b.CreateSelect(out, b.getInt64(0), word);
        v.push_back(from_word(b, guarded, s.type));
        break;
      }
    }
  }
  return v;
}

/// ndp_pl_recurse(len): the recurse scalar as an i32 0/1.
void define_recurse(llvm::Module& m, const Plan& p) {
  llvm::IRBuilder<> b(m.getContext());
  llvm::Function* f = define_function(m, "ndp_pl_recurse", b);
  llvm::Value* fail = b.CreateAlloca(b.getInt1Ty());
  b.CreateStore(b.getInt1(false), fail);
  std::vector<llvm::Value*> v = emit_scalars(b, p, p.recurse, f->getArg(0), Elements{}, fail);
  llvm::Value* r = b.CreateICmpNE(v.at(p.recurse), llvm::ConstantInt::get(v.at(p.recurse)->getType(), 0));
  b.CreateRet(b.CreateZExt(r, b.getInt32Ty()));
}

/// ndp_pl_scalars(base, first, len, s): the predicates' scalars to s[q], 1 where none failed.
void define_scalars(llvm::Module& m, const Plan& p) {
  llvm::IRBuilder<> b(m.getContext());
  llvm::Function* f = define_function(m, "ndp_pl_scalars", b);
  llvm::Value* fail = b.CreateAlloca(b.getInt1Ty());
  b.CreateStore(b.getInt1(false), fail);
  std::vector<llvm::Value*> v =
      emit_scalars(b, p, p.scalars.size() - 1, f->getArg(2), Elements{f->getArg(0), f->getArg(1)}, fail);
  for (size_t q = 0; q < p.predicate_scalars.size(); ++q)
    b.CreateStore(to_word(b, v.at(p.predicate_scalars[q])), b.CreateGEP(b.getInt64Ty(), f->getArg(3), b.getInt64(q)));
  b.CreateRet(b.CreateZExt(b.CreateNot(b.CreateLoad(b.getInt1Ty(), fail)), b.getInt32Ty()));
}

/// ndp_pl_part(e, s): the index of the one part whose flag holds, -1 where not exactly one.
void define_part(llvm::Module& m, const Plan& p, const lang::Type* elem) {
  llvm::IRBuilder<> b(m.getContext());
  llvm::Function* f = define_function(m, "ndp_pl_part", b);
  const flatten::KernelBody& k = *p.predicates;
  InstanceValues r = emit_instance(
      b, k, b.getInt64(0),
      [&](uint32_t j) -> llvm::Value* {
        if (j == 0) return from_word(b, f->getArg(0), elem);
        llvm::Value* w = b.CreateLoad(b.getInt64Ty(), b.CreateGEP(b.getInt64Ty(), f->getArg(1), b.getInt64(j - 1)));
        return from_word(b, w, p.scalars.at(p.predicate_scalars.at(j - 1)).type);
      },
      MathLibrary::Libdevice);
  llvm::Value* holding = b.getInt32(0);
  llvm::Value* which = b.getInt32(0);
  for (size_t j = 0; j < p.parts.size(); ++j) {
    llvm::Value* flag = b.CreateICmpNE(r.outputs.at(p.parts[j].output), b.getInt8(0));
    holding = b.CreateAdd(holding, b.CreateZExt(flag, b.getInt32Ty()));
    which = b.CreateSelect(flag, b.getInt32(static_cast<uint32_t>(j)), which);
  }
  b.CreateRet(b.CreateSelect(b.CreateICmpEQ(holding, b.getInt32(1)), which, b.getInt32(-1)));
}

/// The plan's checks: what the engine holds, and kernels it can inline.
void check(const Plan& p, const lang::Type* elem) {
  if (elem == nullptr || (elem->kind != lang::TypeKind::Int && elem->kind != lang::TypeKind::Float))
    throw std::runtime_error("partition levels of elements that are not ints or floats");
  if (p.parts.empty() || p.parts.size() > kPartitionMaxParts || p.predicate_scalars.size() > kPartitionMaxScalars ||
      p.scalars.empty() || p.recurse >= p.scalars.size())
    throw std::runtime_error("partition levels past the engine's parts or scalars");
  if (!p.predicates || p.predicates->instance_at_a_time() || p.predicates->can_fail() ||
      p.predicates->inputs.size() != p.predicate_scalars.size() + 1)
    throw std::runtime_error("partition levels whose predicates loop, can fail, or do not match their scalars");
  for (const Plan::Part& part : p.parts)
    if (part.output >= p.predicates->outputs.size()) throw std::runtime_error("a partition part past the predicates' outputs");
  for (uint32_t q : p.predicate_scalars)
    if (q >= p.scalars.size()) throw std::runtime_error("a partition predicate's scalar past the scalars");
  for (const Scalar& s : p.scalars)
    if (s.kind == Scalar::Kind::Kernel && (!s.kernel || s.kernel->instance_at_a_time()))
      throw std::runtime_error("a partition scalar's kernel loops");
}

}  // namespace

bool has_partition_engine() { return kPartitionEngineCount > 0; }

std::string compile_partition_levels_ptx(const flatten::PartitionLevels& plan, const lang::Type* elem) {
  if (!has_partition_engine()) throw std::runtime_error("this ndp was built without the partition engine's bitcode");
  check(plan, elem);
  llvm::LLVMContext ctx;
  llvm::StringRef bitcode(reinterpret_cast<const char*>(kPartitionEngine[0].data), kPartitionEngine[0].size);
  llvm::Expected<std::unique_ptr<llvm::Module>> parsed =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "partition_engine.bc"), ctx);
  if (!parsed) throw std::runtime_error("reading the partition engine: " + llvm::toString(parsed.takeError()));
  llvm::Module& m = **parsed;
  std::unique_ptr<llvm::TargetMachine> tm = nvptx_machine();
  m.setDataLayout(tm->createDataLayout());

  int32_t child_mask = 0;
  for (size_t j = 0; j < plan.parts.size(); ++j)
    if (plan.parts[j].child) child_mask |= 1 << j;
  define_int(m, "ndp_pl_parts", static_cast<int32_t>(plan.parts.size()));
  define_int(m, "ndp_pl_child_mask", child_mask);
  define_recurse(m, plan);
  define_scalars(m, plan);
  define_part(m, plan, elem);

  // Everything but the kernels inlines into them.
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    if (std::find(kKernels.begin(), kKernels.end(), f.getName().str()) != kKernels.end()) continue;
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
    f.removeFnAttr(llvm::Attribute::NoInline);
    f.removeFnAttr(llvm::Attribute::OptimizeNone);
    f.addFnAttr(llvm::Attribute::AlwaysInline);
  }
  if (llvm::GlobalVariable* used = m.getGlobalVariable("llvm.compiler.used")) used->eraseFromParent();
  verify(m);
  link_libdevice(m, kKernels);
  optimize(m, *tm);
  return emit_ptx(m, *tm);
}

}  // namespace ndp::codegen
