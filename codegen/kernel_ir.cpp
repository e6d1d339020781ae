// The scalar semantics of kernel nodes in LLVM IR: exactly those of the interpretive loop
// (exec/cpu/kernels.cpp) and the lifted primitives: wrapping integer arithmetic (plain
// add/sub/mul, no nsw), IEEE float operations without fast-math flags, ordered float
// comparisons except /= (true on NaN, as C++ !=), char compared unsigned, bool as i1 (F < T).
#include "codegen/kernel_ir.h"

#include <stdexcept>

namespace ndp::codegen {

using flatten::KernelBody;
using flatten::KernelNode;
using lang::TypeKind;
using lang::core::PrimId;

llvm::Type* storage_type(llvm::LLVMContext& c, const lang::Type* t) {
  switch (t->kind) {
    case TypeKind::Int: return llvm::Type::getInt64Ty(c);
    case TypeKind::Float: return llvm::Type::getDoubleTy(c);
    case TypeKind::Bool: return llvm::Type::getInt8Ty(c);
    case TypeKind::Char: return llvm::Type::getInt8Ty(c);
    case TypeKind::I32: return llvm::Type::getInt32Ty(c);
    case TypeKind::F32: return llvm::Type::getFloatTy(c);
    default: throw std::runtime_error("kernel element type is not a flat scalar");
  }
}

namespace {

bool is_float(const lang::Type* t) { return t->kind == TypeKind::Float || t->kind == TypeKind::F32; }
bool is_int(const lang::Type* t) { return t->kind == TypeKind::Int || t->kind == TypeKind::I32; }

/// The value type used while computing (bool: i1).
llvm::Type* value_type(llvm::LLVMContext& c, const lang::Type* t) {
  return t->kind == TypeKind::Bool ? llvm::Type::getInt1Ty(c) : storage_type(c, t);
}

llvm::Value* compare(llvm::IRBuilder<>& b, PrimId p, const lang::Type* t, llvm::Value* x, llvm::Value* y) {
  using P = llvm::CmpInst::Predicate;
  if (is_float(t)) {
    switch (p) {
      case PrimId::Eq: return b.CreateFCmp(P::FCMP_OEQ, x, y);
      case PrimId::Ne: return b.CreateFCmp(P::FCMP_UNE, x, y);
      case PrimId::Lt: return b.CreateFCmp(P::FCMP_OLT, x, y);
      case PrimId::Gt: return b.CreateFCmp(P::FCMP_OGT, x, y);
      case PrimId::Le: return b.CreateFCmp(P::FCMP_OLE, x, y);
      default: return b.CreateFCmp(P::FCMP_OGE, x, y);
    }
  }
  bool sign = is_int(t);
  switch (p) {
    case PrimId::Eq: return b.CreateICmp(P::ICMP_EQ, x, y);
    case PrimId::Ne: return b.CreateICmp(P::ICMP_NE, x, y);
    case PrimId::Lt: return b.CreateICmp(sign ? P::ICMP_SLT : P::ICMP_ULT, x, y);
    case PrimId::Gt: return b.CreateICmp(sign ? P::ICMP_SGT : P::ICMP_UGT, x, y);
    case PrimId::Le: return b.CreateICmp(sign ? P::ICMP_SLE : P::ICMP_ULE, x, y);
    default: return b.CreateICmp(sign ? P::ICMP_SGE : P::ICMP_UGE, x, y);
  }
}

/// Numeric conversion between int/i32/float/f32 (C++ static_cast semantics for the cases a
/// kernel may hold: no float -> int).
llvm::Value* convert(llvm::IRBuilder<>& b, llvm::Value* x, const lang::Type* from, const lang::Type* to) {
  llvm::Type* rt = value_type(b.getContext(), to);
  if (from->kind == to->kind) return x;
  if (is_int(from) && is_int(to)) return b.CreateSExtOrTrunc(x, rt);
  if (is_int(from) && is_float(to)) return b.CreateSIToFP(x, rt);
  if (is_float(from) && is_float(to)) return b.CreateFPCast(x, rt);
  throw std::runtime_error("kernel conversion that can fail");
}

/// Integer / and rem with the interpreter's results for every divisor the caller's check lets
/// through (kernel_prim_checked_ok: no zero divisor): min_int / -1 wraps to min_int and
/// rem(x, -1) is 0, as in lang/eval/prims_scalar.cpp. The divisor fed to sdiv/srem is never 0
/// or -1, so the IR has no undefined behaviour whatever the inputs.
llvm::Value* int_div_rem(llvm::IRBuilder<>& b, PrimId p, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  llvm::Value* minus_one = b.CreateICmpEQ(y, llvm::ConstantInt::getSigned(t, -1));
  llvm::Value* zero = b.CreateICmpEQ(y, llvm::ConstantInt::get(t, 0));
  llvm::Value* safe = b.CreateSelect(b.CreateOr(minus_one, zero), llvm::ConstantInt::get(t, 1), y);
  if (p == PrimId::Div) return b.CreateSelect(minus_one, b.CreateSub(llvm::ConstantInt::get(t, 0), x), b.CreateSDiv(x, safe));
  return b.CreateSelect(minus_one, llvm::ConstantInt::get(t, 0), b.CreateSRem(x, safe));
}

llvm::Value* node(llvm::IRBuilder<>& b, const KernelBody& k, const KernelNode& n, const std::vector<llvm::Value*>& v) {
  auto arg = [&](size_t i) { return v.at(n.args.at(i)); };
  const lang::Type* t0 = k.nodes.at(n.args.at(0)).type;
  bool fl = is_float(t0);
  switch (n.prim) {
    case PrimId::Not: return b.CreateNot(arg(0));
    case PrimId::Or: return b.CreateOr(arg(0), arg(1));
    case PrimId::And: return b.CreateAnd(arg(0), arg(1));
    case PrimId::Xor: return b.CreateXor(arg(0), arg(1));
    case PrimId::Nor: return b.CreateNot(b.CreateOr(arg(0), arg(1)));
    case PrimId::Nand: return b.CreateNot(b.CreateAnd(arg(0), arg(1)));
    case PrimId::Eq: case PrimId::Ne: case PrimId::Lt: case PrimId::Gt: case PrimId::Le: case PrimId::Ge:
      return compare(b, n.prim, t0, arg(0), arg(1));
    case PrimId::Add: return fl ? b.CreateFAdd(arg(0), arg(1)) : b.CreateAdd(arg(0), arg(1));
    case PrimId::Sub: return fl ? b.CreateFSub(arg(0), arg(1)) : b.CreateSub(arg(0), arg(1));
    case PrimId::Mul: return fl ? b.CreateFMul(arg(0), arg(1)) : b.CreateMul(arg(0), arg(1));
    case PrimId::Div:
      if (!fl) return int_div_rem(b, PrimId::Div, arg(0), arg(1));
      return b.CreateFDiv(arg(0), arg(1));
    case PrimId::Rem: return int_div_rem(b, PrimId::Rem, arg(0), arg(1));
    case PrimId::Lshift: case PrimId::Rshift: {
      // The caller has checked 0 <= count < width (kernel_prim_checked_ok); the mask only keeps
      // the IR free of poison.
      llvm::Value* count = b.CreateAnd(arg(1), llvm::ConstantInt::get(arg(1)->getType(), 63));
      return n.prim == PrimId::Lshift ? b.CreateShl(arg(0), count) : b.CreateAShr(arg(0), count);
    }
    case PrimId::Negate: return fl ? b.CreateFNeg(arg(0)) : b.CreateSub(llvm::ConstantInt::get(arg(0)->getType(), 0), arg(0));
    case PrimId::Select: return b.CreateSelect(arg(0), arg(1), arg(2));
    case PrimId::Btoi: case PrimId::CharCode: return b.CreateZExt(arg(0), b.getInt64Ty());
    case PrimId::ToFloat: case PrimId::ToF64: case PrimId::ToF32: case PrimId::ToI64: case PrimId::ToI32:
      return convert(b, arg(0), t0, n.type);
    default: throw std::runtime_error("kernel node with a primitive the code generator does not know");
  }
}

llvm::Value* constant(llvm::IRBuilder<>& b, const KernelNode& n) {
  const lang::Value& x = n.value;
  switch (n.type->kind) {
    case TypeKind::Int: return b.getInt64(static_cast<uint64_t>(x.as_int()));
    case TypeKind::I32: return b.getInt32(static_cast<uint32_t>(x.as_i32()));
    case TypeKind::Bool: return b.getInt1(x.as_bool());
    case TypeKind::Char: return b.getInt8(x.as_char());
    case TypeKind::Float: return llvm::ConstantFP::get(b.getDoubleTy(), x.as_float());
    case TypeKind::F32: return llvm::ConstantFP::get(b.getFloatTy(), static_cast<double>(x.as_f32()));
    default: throw std::runtime_error("kernel constant of a non-scalar type");
  }
}

}  // namespace

std::vector<llvm::Value*> emit_instance(llvm::IRBuilder<>& b, const KernelBody& k,
                                        const std::function<llvm::Value*(uint32_t)>& load) {
  std::vector<llvm::Value*> v;
  v.reserve(k.nodes.size());
  for (const KernelNode& n : k.nodes) {
    if (n.kind == KernelNode::Kind::Input) {
      llvm::Value* x = load(n.input);
      if (n.type->kind == TypeKind::Bool) x = b.CreateICmpNE(x, b.getInt8(0));
      v.push_back(x);
    } else if (n.kind == KernelNode::Kind::Const) {
      v.push_back(constant(b, n));
    } else {
      v.push_back(node(b, k, n, v));
    }
  }
  std::vector<llvm::Value*> out;
  for (uint32_t o : k.outputs) {
    llvm::Value* x = v.at(o);
    if (k.nodes.at(o).type->kind == TypeKind::Bool) x = b.CreateZExt(x, b.getInt8Ty());
    out.push_back(x);
  }
  return out;
}

}  // namespace ndp::codegen
