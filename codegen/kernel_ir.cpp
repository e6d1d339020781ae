// The scalar semantics of kernel nodes in LLVM IR: exactly those of the interpretive loop
// (exec/cpu/kernels.cpp) and the lifted primitives: wrapping integer arithmetic (plain
// add/sub/mul, no nsw), IEEE float operations without fast-math flags, ordered float
// comparisons except /= (true on NaN, as C++ !=), char compared unsigned, bool as i1 (F < T),
// the interpreter's checks (lang/eval/prims_scalar.cpp) as failure conditions.
#include "codegen/kernel_ir.h"

#include <llvm/IR/Module.h>

#include <algorithm>
#include <bit>
#include <optional>
#include <tuple>
#include <stdexcept>
#include <string>

#include "codegen/lanes.h"
#include "codegen/tiled_folds.h"
#include "codegen/warp_ops.h"
#include "flatten/kernel_abi.h"

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
}  // namespace

llvm::Value* special_register(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id) {
  return b.CreateZExt(b.CreateIntrinsic(id, {}, {}), b.getInt64Ty());
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

namespace {

/// The value type used while computing (bool: i1).
llvm::Type* value_type(llvm::LLVMContext& c, const lang::Type* t) {
  return t->kind == TypeKind::Bool ? llvm::Type::getInt1Ty(c) : storage_type(c, t);
}


/// Numeric conversion between int/i32/float/f32 that cannot fail (C++ static_cast semantics).
llvm::Value* convert(llvm::IRBuilder<>& b, llvm::Value* x, const lang::Type* from, const lang::Type* to) {
  llvm::Type* rt = value_type(b.getContext(), to);
  if (from->kind == to->kind) return x;
  if (is_int(from) && is_int(to)) return b.CreateSExtOrTrunc(x, rt);
  if (is_int(from) && is_float(to)) return b.CreateSIToFP(x, rt);
  if (is_float(from) && is_float(to)) return b.CreateFPCast(x, rt);
  throw std::runtime_error("kernel conversion that can fail");
}

/// Integer / and rem with the interpreter's results for every divisor but 0 (which fails):
/// min_int / -1 wraps to min_int and rem(x, -1) is 0, as in lang/eval/prims_scalar.cpp. The
/// divisor fed to sdiv/srem is never 0 or -1, so the IR has no undefined behaviour whatever the
/// inputs.
llvm::Value* int_div_rem(llvm::IRBuilder<>& b, PrimId p, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  llvm::Value* minus_one = b.CreateICmpEQ(y, llvm::ConstantInt::getSigned(t, -1));
  llvm::Value* zero = b.CreateICmpEQ(y, llvm::ConstantInt::get(t, 0));
  llvm::Value* safe = b.CreateSelect(b.CreateOr(minus_one, zero), llvm::ConstantInt::get(t, 1), y);
  if (p == PrimId::Div) return b.CreateSelect(minus_one, b.CreateSub(llvm::ConstantInt::get(t, 0), x), b.CreateSDiv(x, safe));
  return b.CreateSelect(minus_one, llvm::ConstantInt::get(t, 0), b.CreateSRem(x, safe));
}

/// A node's value and, for a node that can fail, the i1 that says it failed.
struct NodeValue {
  llvm::Value* value;
  llvm::Value* fails = nullptr;
};

/// A call of the math library's double -> double (or (double, double) -> double) function `name`.
llvm::Value* math_call(llvm::IRBuilder<>& b, MathLibrary lib, const char* name, std::vector<llvm::Value*> args) {
  llvm::Module* m = b.GetInsertBlock()->getModule();
  std::string full = lib == MathLibrary::Libdevice ? std::string("__nv_") + name : std::string(name);
  std::vector<llvm::Type*> params(args.size(), b.getDoubleTy());
  llvm::FunctionCallee f = m->getOrInsertFunction(full, llvm::FunctionType::get(b.getDoubleTy(), params, false));
  if (auto* fn = llvm::dyn_cast<llvm::Function>(f.getCallee())) fn->setDoesNotThrow();
  return b.CreateCall(f, args);
}

/// A float (already rounded to an integral value, as a double) as an integer of `to`; fails
/// outside [lo, hi] (NaN too), as the interpreter's to_int64 and to_int32; fptosi only sees
/// values in range.
NodeValue float_to_int(llvm::IRBuilder<>& b, llvm::Value* rounded, llvm::Type* to, double lo, double hi, bool hi_open) {
  llvm::Value* above = b.CreateFCmpOGE(rounded, llvm::ConstantFP::get(b.getDoubleTy(), lo));
  llvm::Value* below = hi_open ? b.CreateFCmpOLT(rounded, llvm::ConstantFP::get(b.getDoubleTy(), hi))
                               : b.CreateFCmpOLE(rounded, llvm::ConstantFP::get(b.getDoubleTy(), hi));
  llvm::Value* ok = b.CreateAnd(above, below);
  llvm::Value* safe = b.CreateSelect(ok, rounded, llvm::ConstantFP::get(b.getDoubleTy(), 0.0));
  return {b.CreateFPToSI(safe, to), b.CreateNot(ok)};
}

/// x ^ p by lang::eval::power's loop (square-and-multiply from the low bit), so float results
/// are those of the other backends bit for bit; a negative p fails (and computes x ^ 0).
NodeValue power(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* p, bool fl) {
  llvm::LLVMContext& c = b.getContext();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::Type* t = x->getType();
  llvm::Value* one = fl ? llvm::ConstantFP::get(t, 1.0) : llvm::ConstantInt::get(t, 1);
  llvm::Value* fails = b.CreateICmpSLT(p, b.getInt64(0));
  llvm::BasicBlock* before = b.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(c, "power", fn);
  auto* done = llvm::BasicBlock::Create(c, "power_done", fn);
  b.CreateCondBr(b.CreateICmpSGT(p, b.getInt64(0)), loop, done);
  b.SetInsertPoint(loop);
  llvm::PHINode* result = b.CreatePHI(t, 2);
  llvm::PHINode* base = b.CreatePHI(t, 2);
  llvm::PHINode* left = b.CreatePHI(b.getInt64Ty(), 2);
  auto mul = [&](llvm::Value* u, llvm::Value* v) { return fl ? b.CreateFMul(u, v) : b.CreateMul(u, v); };
  llvm::Value* odd = b.CreateTrunc(left, b.getInt1Ty());
  llvm::Value* result2 = b.CreateSelect(odd, mul(result, base), result);
  llvm::Value* left2 = b.CreateLShr(left, b.getInt64(1));
  llvm::Value* more = b.CreateICmpSGT(left2, b.getInt64(0));
  llvm::Value* base2 = b.CreateSelect(more, mul(base, base), base);
  result->addIncoming(one, before);
  result->addIncoming(result2, loop);
  base->addIncoming(x, before);
  base->addIncoming(base2, loop);
  left->addIncoming(p, before);
  left->addIncoming(left2, loop);
  b.CreateCondBr(more, loop, done);
  b.SetInsertPoint(done);
  llvm::PHINode* r = b.CreatePHI(t, 2);
  r->addIncoming(one, before);
  r->addIncoming(result2, loop);
  return {r, fails};
}

/// SplitMix64's finaliser (lang::eval::RandState::mix) of an i64.
llvm::Value* mix(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Value* z = b.CreateAdd(x, b.getInt64(0x9E3779B97F4A7C15ull));
  z = b.CreateMul(b.CreateXor(z, b.CreateLShr(z, 30)), b.getInt64(0xBF58476D1CE4E5B9ull));
  z = b.CreateMul(b.CreateXor(z, b.CreateLShr(z, 27)), b.getInt64(0x94D049BB133111EBull));
  return b.CreateXor(z, b.CreateLShr(z, 31));
}

/// hash(x, l) of a flat scalar x of type `t`, as lang/eval/prims_seq.cpp computes it: a
/// non-negative int is itself rem l; any other value is the mix of its bits, tagged by its kind
/// (zeros of either sign alike), rem l unsigned. A modulus below 1 fails.
NodeValue hash(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* l, const lang::Type* t) {
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Value* bits = nullptr;
  switch (t->kind) {
    case TypeKind::Int: bits = x; break;
    case TypeKind::I32: bits = b.CreateSExt(x, i64); break;
    case TypeKind::Bool: bits = b.CreateSelect(x, b.getInt64(0x11), b.getInt64(0x10)); break;
    case TypeKind::Char: bits = b.CreateAdd(b.CreateZExt(x, i64), b.getInt64(0x200)); break;
    case TypeKind::Float: case TypeKind::F32: {
      llvm::Value* zero = llvm::ConstantFP::get(x->getType(), 0.0);
      llvm::Value* same_zero = b.CreateSelect(b.CreateFCmpOEQ(x, zero), zero, x);
      llvm::Value* raw = b.CreateBitCast(same_zero, b.getIntNTy(x->getType()->getPrimitiveSizeInBits()));
      bits = b.CreateXor(b.CreateZExt(raw, i64), b.getInt64(t->kind == TypeKind::Float ? 0x1 : 0x3));
      break;
    }
    default: throw std::runtime_error("hash of a value that is not a flat scalar");
  }
  llvm::Value* fails = b.CreateICmpSLT(l, b.getInt64(1));
  llvm::Value* modulus = b.CreateSelect(fails, b.getInt64(1), l);
  llvm::Value* mixed = b.CreateURem(mix(b, bits), modulus);
  if (t->kind != TypeKind::Int) return {mixed, fails};
  return {b.CreateSelect(b.CreateICmpSGE(x, b.getInt64(0)), b.CreateURem(x, modulus), mixed), fails};
}

NodeValue node(llvm::IRBuilder<>& b, const KernelBody& k, const KernelNode& n, const std::vector<llvm::Value*>& v,
               MathLibrary lib) {
  auto arg = [&](size_t i) { return v.at(n.args.at(i)); };
  const lang::Type* t0 = k.nodes.at(n.args.at(0)).type;
  bool fl = is_float(t0);
  llvm::Type* dbl = b.getDoubleTy();
  auto zero = [&](llvm::Value* x) { return llvm::ConstantInt::get(x->getType(), 0); };
  auto fzero = llvm::ConstantFP::get(dbl, 0.0);
  auto intrinsic = [&](llvm::Intrinsic::ID id, llvm::Value* x) { return b.CreateUnaryIntrinsic(id, x); };
  switch (n.prim) {
    case PrimId::Not: return {b.CreateNot(arg(0))};
    case PrimId::Or: return {b.CreateOr(arg(0), arg(1))};
    case PrimId::And: return {b.CreateAnd(arg(0), arg(1))};
    case PrimId::Xor: return {b.CreateXor(arg(0), arg(1))};
    case PrimId::Nor: return {b.CreateNot(b.CreateOr(arg(0), arg(1)))};
    case PrimId::Nand: return {b.CreateNot(b.CreateAnd(arg(0), arg(1)))};
    case PrimId::Eq: case PrimId::Ne: case PrimId::Lt: case PrimId::Gt: case PrimId::Le: case PrimId::Ge:
      return {compare(b, n.prim, t0, arg(0), arg(1))};
    case PrimId::Eql: return {compare(b, PrimId::Eq, t0, arg(0), arg(1))};  // values_equal of flat scalars
    case PrimId::Hash: return hash(b, arg(0), arg(1), t0);
    case PrimId::Add: return {fl ? b.CreateFAdd(arg(0), arg(1)) : b.CreateAdd(arg(0), arg(1))};
    case PrimId::Sub: return {fl ? b.CreateFSub(arg(0), arg(1)) : b.CreateSub(arg(0), arg(1))};
    case PrimId::Mul: return {fl ? b.CreateFMul(arg(0), arg(1)) : b.CreateMul(arg(0), arg(1))};
    case PrimId::Div:
      if (fl) return {b.CreateFDiv(arg(0), arg(1))};
      return {int_div_rem(b, PrimId::Div, arg(0), arg(1)), b.CreateICmpEQ(arg(1), zero(arg(1)))};
    case PrimId::Rem: return {int_div_rem(b, PrimId::Rem, arg(0), arg(1)), b.CreateICmpEQ(arg(1), zero(arg(1)))};
    case PrimId::Lshift: case PrimId::Rshift: {
      // A count outside [0, 64) fails; the mask keeps the IR free of poison.
      llvm::Value* count = b.CreateAnd(arg(1), llvm::ConstantInt::get(arg(1)->getType(), 63));
      llvm::Value* fails = b.CreateICmpUGE(arg(1), llvm::ConstantInt::get(arg(1)->getType(), 64));
      return {n.prim == PrimId::Lshift ? b.CreateShl(arg(0), count) : b.CreateAShr(arg(0), count), fails};
    }
    case PrimId::Power: return power(b, arg(0), arg(1), fl);
    case PrimId::Negate: return {fl ? b.CreateFNeg(arg(0)) : b.CreateSub(zero(arg(0)), arg(0))};
    case PrimId::Select: return {b.CreateSelect(arg(0), arg(1), arg(2))};
    case PrimId::Btoi: case PrimId::CharCode: return {b.CreateZExt(arg(0), b.getInt64Ty())};
    case PrimId::CodeChar:
      return {b.CreateTrunc(arg(0), b.getInt8Ty()), b.CreateICmpUGT(arg(0), b.getInt64(255))};
    case PrimId::Sqrt: return {intrinsic(llvm::Intrinsic::sqrt, arg(0)), b.CreateFCmpOLT(arg(0), fzero)};
    case PrimId::Ln: return {math_call(b, lib, "log", {arg(0)}), b.CreateFCmpOLT(arg(0), fzero)};
    case PrimId::Expt: return {math_call(b, lib, "pow", {arg(0), arg(1)}), b.CreateFCmpOLT(arg(0), fzero)};
    case PrimId::Exp: return {math_call(b, lib, "exp", {arg(0)})};
    case PrimId::Sin: return {math_call(b, lib, "sin", {arg(0)})};
    case PrimId::Cos: return {math_call(b, lib, "cos", {arg(0)})};
    case PrimId::Tan: return {math_call(b, lib, "tan", {arg(0)})};
    case PrimId::Asin: return {math_call(b, lib, "asin", {arg(0)})};
    case PrimId::Acos: return {math_call(b, lib, "acos", {arg(0)})};
    case PrimId::Atan: return {math_call(b, lib, "atan", {arg(0)})};
    case PrimId::Sinh: return {math_call(b, lib, "sinh", {arg(0)})};
    case PrimId::Cosh: return {math_call(b, lib, "cosh", {arg(0)})};
    case PrimId::Tanh: return {math_call(b, lib, "tanh", {arg(0)})};
    case PrimId::Ceil: case PrimId::Floor: case PrimId::Trunc: case PrimId::Round: {
      llvm::Value* x = arg(0);
      llvm::Value* r = n.prim == PrimId::Ceil    ? intrinsic(llvm::Intrinsic::ceil, x)
                       : n.prim == PrimId::Trunc ? intrinsic(llvm::Intrinsic::trunc, x)
                       : n.prim == PrimId::Floor ? intrinsic(llvm::Intrinsic::floor, x)
                                                 : intrinsic(llvm::Intrinsic::floor, b.CreateFAdd(x, llvm::ConstantFP::get(dbl, 0.5)));
      return float_to_int(b, r, b.getInt64Ty(), -9223372036854775808.0, 9223372036854775808.0, true);
    }
    case PrimId::ToI64: case PrimId::ToI32:
      if (fl) {
        llvm::Value* t = intrinsic(llvm::Intrinsic::trunc, b.CreateFPExt(arg(0), dbl));
        if (n.prim == PrimId::ToI64) return float_to_int(b, t, b.getInt64Ty(), -9223372036854775808.0, 9223372036854775808.0, true);
        return float_to_int(b, t, b.getInt32Ty(), -2147483648.0, 2147483647.0, false);
      }
      return {convert(b, arg(0), t0, n.type)};
    case PrimId::ToFloat: case PrimId::ToF64: case PrimId::ToF32:
      return {convert(b, arg(0), t0, n.type)};
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

RowSpan row_span(llvm::IRBuilder<>& b, llvm::Value* offsets, llvm::Value* row) {
  llvm::Type* i64 = b.getInt64Ty();
  if (offsets->getType()->isIntegerTy()) return {b.CreateMul(row, offsets), offsets};  // regular rows
  llvm::Value* start = b.CreateLoad(i64, b.CreateGEP(i64, offsets, row));
  llvm::Value* end = b.CreateLoad(i64, b.CreateGEP(i64, offsets, b.CreateAdd(row, b.getInt64(1))));
  return {start, b.CreateSub(end, start)};
}

namespace {

/// A read of a sequence (Note [Sequences in loop kernels]): the length of row args[0], or
/// component n.component of its element args[1], which fails out of bounds (and then reads
/// nothing) where its guard args[2], if it has one, holds.
/// Where a Seq node's row (its args[0]) lies in its sequence's elements, and the pointer of
/// the node's component (Note [Sequences in loop kernels]).
struct Row {
  llvm::Value* start;
  llvm::Value* length;
  llvm::Value* component;
};

Row row_of(llvm::IRBuilder<>& b, const KernelBody& k, const KernelNode& n, const std::vector<llvm::Value*>& v,
           const std::function<llvm::Value*(uint32_t)>& seq_pointer) {
  const uint32_t first = static_cast<uint32_t>(k.seq_pointer(n.input));  // its rows' offsets
  const RowSpan span = row_span(b, seq_pointer(first), v.at(n.args.at(0)));
  llvm::Value* component = n.kind == KernelNode::Kind::SeqLength ? nullptr : seq_pointer(first + 1 + n.component);
  return {span.start, span.length, component};
}

// Note [Spread folds count their steps]
// A fold spread over L lanes runs lane l over the indices l, l + L, l + 2L ... below its count.
// Written as `index < count`, its trip count is unknown to LLVM, whose unroller then keeps an
// exit test between the copies of the body; a GPU issues in order, so each load waited for the
// add before it, and a lane had one load in flight. So the lane's steps are counted before the
// loop, ceil((count - l) / L) (L a power of two: a shift), and the loop runs on that count: the
// unrolled body has no exit inside, and ptxas issues its loads together. Measured on an H200,
// the segmented sum of 2^24 ints at `block` on rows of 2048 / 8192 / 32768: 3043 / 3154 / 2196
// -> 3565 / 3594 / 3354 GB/s (unrolled four times), 3709 / 3587 / 3318 (eight times); at `warp`
// on rows of 512 3108 -> 3617 (four) and 3625 (eight). Over 2 and 4 lanes unrolling still
// costs (SpMV at subwarp(2) 0.222 -> 0.259 ms), so those stay rolled.

NodeValue sequence_read(llvm::IRBuilder<>& b, const KernelBody& k, const KernelNode& n, const std::vector<llvm::Value*>& v,
                        const std::function<llvm::Value*(uint32_t)>& seq_pointer) {
  const Row row = row_of(b, k, n, v, seq_pointer);
  if (n.kind == KernelNode::Kind::SeqLength) return {row.length};
  llvm::Value* index = v.at(n.args.at(1));
  if (k.indexed_by_its_fold(n)) {  // no check, and a load the loop's optimisations may move
    llvm::Type* t = storage_type(b.getContext(), n.type);
    llvm::Value* x = b.CreateLoad(t, b.CreateGEP(t, row.component, b.CreateAdd(row.start, index)));
    return {n.type->kind == TypeKind::Bool ? b.CreateICmpNE(x, b.getInt8(0)) : x};
  }
  llvm::Value* outside = b.CreateICmpUGE(index, row.length);  // negative too
  llvm::Type* t = storage_type(b.getContext(), n.type);
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* before = b.GetInsertBlock();
  auto* read = llvm::BasicBlock::Create(b.getContext(), "seq_read", fn);
  auto* done = llvm::BasicBlock::Create(b.getContext(), "seq_read_done", fn);
  b.CreateCondBr(outside, done, read);
  b.SetInsertPoint(read);
  llvm::Value* x = b.CreateLoad(t, b.CreateGEP(t, row.component, b.CreateAdd(row.start, index)));
  b.CreateBr(done);
  b.SetInsertPoint(done);
  llvm::PHINode* r = b.CreatePHI(t, 2);
  r->addIncoming(llvm::Constant::getNullValue(t), before);
  r->addIncoming(x, read);
  llvm::Value* value = n.type->kind == TypeKind::Bool ? b.CreateICmpNE(r, b.getInt8(0)) : static_cast<llvm::Value*>(r);
  // A read in a branch that is not taken fails nowhere (its third operand, the guard).
  return {value, n.args.size() > 2 ? b.CreateAnd(outside, v.at(n.args[2])) : outside};
}

/// A store a SeqWrite node asks for, made at the end of an iteration that goes on (Note
/// [Sequence state in loop kernels]): `value` (as stored) at `at`, where `wanted`.
struct PendingWrite {
  llvm::Value* at;
  llvm::Value* value;
  llvm::Value* wanted;
};

/// A SeqWrite node: its index checked as elt does (failing where its guard holds), its store
/// kept for the end of the iteration. Its value is the value written.
NodeValue sequence_write(llvm::IRBuilder<>& b, const KernelBody& k, const KernelNode& n, const std::vector<llvm::Value*>& v,
                         const std::function<llvm::Value*(uint32_t)>& seq_pointer, std::vector<PendingWrite>& writes) {
  const Row row = row_of(b, k, n, v, seq_pointer);
  llvm::Value* index = v.at(n.args.at(1));
  llvm::Value* outside = b.CreateICmpUGE(index, row.length);
  llvm::Value* guard = n.args.size() > 3 ? v.at(n.args[3]) : b.getTrue();
  llvm::Value* x = v.at(n.args.at(2));
  llvm::Type* t = storage_type(b.getContext(), n.type);
  llvm::Value* stored = n.type->kind == TypeKind::Bool ? b.CreateZExt(x, t) : x;
  writes.push_back({b.CreateGEP(t, row.component, b.CreateAdd(row.start, index)), stored,
                    b.CreateAnd(b.CreateNot(outside), guard)});
  return {x, b.CreateAnd(outside, guard)};
}

/// A SeqAppend node's store (Note [Appended sequences in loop kernels]), made at the end of
/// the iteration, done or not.
struct PendingAppend {
  uint32_t seq;
  uint32_t component;
  llvm::Value* value;  // as stored
  llvm::Value* wanted;
};

/// The nodes of `k` in order, input j read as input(j) (an i1 for a bool); the i1 of each node
/// that can fail is added to `fails` as (node, failed), each SeqWrite's store to `writes` and
/// each SeqAppend's to `appends`. A fold's region is a loop (Note [Folds in kernels]).
class NodeEmitter {
 public:
  NodeEmitter(llvm::IRBuilder<>& b, const KernelBody& k, llvm::Value* instance, const std::function<llvm::Value*(uint32_t)>& input,
              const std::function<llvm::Value*(uint32_t)>& seq_pointer, MathLibrary math, Lanes lanes, FoldTiles* tiles)
      : b_(b), k_(k), instance_(instance), input_(input), seq_pointer_(seq_pointer), math_(math), lanes_(lanes),
        tiles_(tiles), v_(k.nodes.size(), nullptr) {}

  /// The nodes' values; `work` (an i64) counts the fold steps made so far (Note [Loops that give
  /// up] in flat_ir.h) and comes back with this instance's steps added. A fold stops early once
  /// the steps pass `budget` (the instance then gives up), if there is one.
  std::vector<llvm::Value*> emit(std::vector<std::pair<uint32_t, llvm::Value*>>& fails, std::vector<PendingWrite>& writes,
                                 std::vector<PendingAppend>& appends, llvm::Value*& work, std::optional<int64_t> budget) {
    writes_ = &writes;
    appends_ = &appends;
    work_ = work;
    budget_ = budget;
    range(0, static_cast<uint32_t>(k_.nodes.size()), fails);
    work = work_;
    // Past a split fold, a thread other than warp 0 of the last block computed from a block's
    // share alone (Note [Rows over several blocks]): its failures there do not count.
    for (size_t i = after_split_fold_; whole_ != nullptr && i < fails.size(); ++i)
      fails[i].second = b_.CreateAnd(fails[i].second, whole_);
    return v_;
  }

  /// After emit: an i1, whether this thread holds the instance's values (InstanceValues::whole
  /// in kernel_ir.h), or null where the fold is not split.
  llvm::Value* whole() const { return whole_; }

  /// Gives node j the value x, emitted elsewhere (a pipelined loop's values of its chunk, carried
  /// from the iteration before: emit_multiprefix_loop), for the nodes emitted after to read.
  void set_value(uint32_t j, llvm::Value* x) { v_[j] = x; }

  /// A node emitted another way: its value and failure, or nothing for the usual way. It is
  /// given the values of the nodes emitted so far.
  using Hook = std::function<std::optional<NodeValue>(uint32_t, const std::vector<llvm::Value*>&)>;

  /// The nodes of a body without folds in `order` (each node after its operands), those that
  /// `hook` takes its way; appends none. `fails` comes back in `order`.
  std::vector<llvm::Value*> emit_in_order(const std::vector<uint32_t>& order, const Hook& hook,
                                          std::vector<std::pair<uint32_t, llvm::Value*>>& fails,
                                          std::vector<PendingWrite>& writes) {
    std::vector<PendingAppend> no_appends;
    writes_ = &writes;
    appends_ = &no_appends;
    work_ = b_.getInt64(0);
    for (uint32_t j : order) {
      if (std::optional<NodeValue> r = hook(j, v_)) {
        if (r->fails != nullptr) fails.emplace_back(j, r->fails);
        v_[j] = r->value;
        continue;
      }
      if (k_.nodes[j].kind == KernelNode::Kind::FoldIndex) throw std::runtime_error("a fold in a body emitted in another order");
      range(j, j + 1, fails);
    }
    appends_ = nullptr;
    return v_;
  }

 private:
  llvm::IRBuilder<>& b_;
  const KernelBody& k_;
  llvm::Value* instance_;
  const std::function<llvm::Value*(uint32_t)>& input_;
  const std::function<llvm::Value*(uint32_t)>& seq_pointer_;
  MathLibrary math_;
  Lanes lanes_;
  FoldTiles* tiles_;
  llvm::Value* tile_index_ = nullptr;  // while a tiled fold's region reads its tiles: the index in the chunk
  int slot_ = 0;                       // and which of the thread's instances this is (FoldTiles)
  int fold_depth_ = 0;  // the folds being emitted around the current node
  std::vector<llvm::Value*> v_;
  std::vector<PendingWrite>* writes_ = nullptr;
  std::vector<PendingAppend>* appends_ = nullptr;
  llvm::Value* work_ = nullptr;
  std::optional<int64_t> budget_;
  llvm::Value* whole_ = nullptr;   // after a split fold: whether this thread has its combined value
  size_t after_split_fold_ = 0;    // and the first failure past it

  void range(uint32_t begin, uint32_t end, std::vector<std::pair<uint32_t, llvm::Value*>>& fails) {
    for (uint32_t j = begin; j < end; ++j) {
      const KernelNode& n = k_.nodes[j];
      switch (n.kind) {
        case KernelNode::Kind::Input: v_[j] = input_(n.input); break;
        case KernelNode::Kind::Instance: v_[j] = instance_; break;
        case KernelNode::Kind::Const: v_[j] = constant(b_, n); break;
        case KernelNode::Kind::SeqWrite: {
          NodeValue r = sequence_write(b_, k_, n, v_, seq_pointer_, *writes_);
          fails.emplace_back(j, r.fails);
          v_[j] = r.value;
          break;
        }
        case KernelNode::Kind::SeqLength: case KernelNode::Kind::SeqElt: {
          if (tile_index_ != nullptr) {  // a tiled fold's read of its row at the fold's index
            llvm::Value* x = tiles_->read(flatten::tile_of(k_, tiles_->shape(), n), tile_index_, slot_);
            v_[j] = n.type->kind == TypeKind::Bool ? b_.CreateICmpNE(x, b_.getInt8(0)) : x;
            break;
          }
          NodeValue r = sequence_read(b_, k_, n, v_, seq_pointer_);
          if (r.fails != nullptr) fails.emplace_back(j, r.fails);
          v_[j] = r.value;
          break;
        }
        case KernelNode::Kind::SeqAppend: {
          llvm::Value* x = v_.at(n.args.at(1));
          llvm::Type* t = storage_type(b_.getContext(), n.type);
          llvm::Value* stored = n.type->kind == TypeKind::Bool ? b_.CreateZExt(x, t) : x;
          appends_->push_back({n.input, n.component, stored, n.args.size() > 2 ? v_.at(n.args[2]) : b_.getTrue()});
          v_[j] = x;
          break;
        }
        case KernelNode::Kind::Fail: {
          fails.emplace_back(j, v_.at(n.args.at(0)));
          KernelNode zero = n;
          zero.value = flatten::identity_of_plain(n.type);
          v_[j] = constant(b_, zero);
          break;
        }
        case KernelNode::Kind::FoldIndex:
          fold(j, fails);
          j = n.input;  // on after the Fold
          break;
        case KernelNode::Kind::FoldAcc: break;  // set by its fold
        case KernelNode::Kind::Fold: throw std::runtime_error("a Fold outside its region");
        case KernelNode::Kind::Prim: {
          NodeValue r = node(b_, k_, n, v_, math_);
          if (r.fails != nullptr) fails.emplace_back(j, r.fails);
          v_[j] = r.value;
          break;
        }
      }
    }
  }

  /// The loop of the fold whose region starts at node `at`; a node of the region that fails at
  /// some index makes the Fold fail. An outermost fold of an instance that runs on several
  /// lanes is spread over them (Lanes in kernel_ir.h).
  /// Its Fold's failure (if its region can fail) goes last to `fails`.
  void fold(uint32_t at, std::vector<std::pair<uint32_t, llvm::Value*>>& fails) {
    const uint32_t f = k_.nodes[at].input;
    const KernelNode& fn = k_.nodes.at(f);
    llvm::Value* count = v_.at(fn.args.at(0));
    llvm::Value* init = v_.at(fn.args.at(1));
    const bool spread = lanes_.count > 1 && fold_depth_ == 0;
    llvm::Value* first = spread ? lanes_.lane : b_.getInt64(0);
    llvm::Value* end = count;  // past the indices of this thread's share
    const bool split = spread && lanes_.split.has_value();
    if (split) {  // the block's chunk (Note [Rows over several blocks] in codegen/lanes.h)
      const BlockSplit& s = *lanes_.split;
      llvm::Value* positive = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, count, b_.getInt64(0));
      llvm::Value* per_part = b_.CreateUDiv(b_.CreateAdd(positive, b_.CreateSub(s.parts, b_.getInt64(1))), s.parts);
      llvm::Value* chunk = b_.CreateAnd(b_.CreateAdd(per_part, b_.getInt64(lanes_.count - 1)), b_.getInt64(-int64_t{lanes_.count}));
      llvm::Value* low = b_.CreateMul(s.part, chunk);
      first = b_.CreateAdd(low, lanes_.lane);
      end = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, count, b_.CreateAdd(low, chunk));
    }
    llvm::Value* step = b_.getInt64(spread ? lanes_.count : 1);
    llvm::Function* func = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock* before = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(b_.getContext(), "fold", func);
    auto* body = llvm::BasicBlock::Create(b_.getContext(), "fold_body", func);
    auto* exit = llvm::BasicBlock::Create(b_.getContext(), "fold_exit", func);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* index = b_.CreatePHI(b_.getInt64Ty(), 2);
    llvm::PHINode* acc = b_.CreatePHI(init->getType(), 2);
    llvm::PHINode* failed = b_.CreatePHI(b_.getInt1Ty(), 2);
    llvm::PHINode* work = b_.CreatePHI(b_.getInt64Ty(), 2);
    index->addIncoming(first, before);
    acc->addIncoming(init, before);
    failed->addIncoming(b_.getFalse(), before);
    work->addIncoming(work_, before);
    // A lane's steps are counted before the loop (Note [Spread folds count their steps]).
    llvm::PHINode* trip = nullptr;
    llvm::Value* trips = nullptr;
    if (spread) {
      b_.SetInsertPoint(before->getTerminator());
      // A fold's count is in [0, kMostFoldSteps] (a row's length, or clamped where the fold is
      // made: flatten/loop_kernels.cpp), so left + L - 1 cannot overflow; raising it to the
      // lane first costs one instruction a fold and keeps any negative count from counting
      // 2^60 steps.
      llvm::Value* left = b_.CreateSub(b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, end, first), first);
      trips = b_.CreateLShr(b_.CreateAdd(left, b_.getInt64(lanes_.count - 1)),
                            b_.getInt64(std::countr_zero(static_cast<uint64_t>(lanes_.count))));
      b_.SetInsertPoint(header);
      trip = b_.CreatePHI(b_.getInt64Ty(), 2);
      trip->addIncoming(b_.getInt64(0), before);
    }
    llvm::Value* more = spread ? b_.CreateICmpULT(trip, trips) : b_.CreateICmpSLT(index, count);
    if (budget_) more = b_.CreateAnd(more, b_.CreateICmpSLE(work, b_.getInt64(*budget_)));
    b_.CreateCondBr(more, body, exit);
    b_.SetInsertPoint(body);
    v_[at] = index;
    work_ = b_.CreateAdd(work, b_.getInt64(1));
    for (uint32_t j = at + 1; j < f; ++j)
      if (k_.nodes[j].kind == KernelNode::Kind::FoldAcc && k_.nodes[j].input == f) v_[j] = acc;
    std::vector<std::pair<uint32_t, llvm::Value*>> inner;
    ++fold_depth_;
    range(at + 1, f, inner);
    --fold_depth_;
    llvm::Value* failed_next = failed;
    for (const auto& x : inner) failed_next = b_.CreateOr(failed_next, x.second);
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    index->addIncoming(b_.CreateAdd(index, step), latch);
    if (trip != nullptr) trip->addIncoming(b_.CreateAdd(trip, b_.getInt64(1)), latch);
    acc->addIncoming(v_.at(fn.args.at(2)), latch);
    failed->addIncoming(failed_next, latch);
    work->addIncoming(work_, latch);
    llvm::BranchInst* back = b_.CreateBr(header);
    // A fold spread over 8 lanes or more, on the GPU, unrolled (Note [Spread folds count their
    // steps]): four times over 8 and 16 lanes, eight over a warp or a block.
    if (math_ == MathLibrary::Libdevice && spread && lanes_.count >= 8) {
      llvm::LLVMContext& c = b_.getContext();
      const int times = lanes_.count >= 32 ? 8 : 4;
      llvm::Metadata* count[] = {llvm::MDString::get(c, "llvm.loop.unroll.count"), llvm::ConstantAsMetadata::get(b_.getInt32(times))};
      llvm::MDNode* loop = llvm::MDNode::getDistinct(c, {nullptr, llvm::MDNode::get(c, count)});
      loop->replaceOperandWith(0, loop);
      back->setMetadata(llvm::LLVMContext::MD_loop, loop);
    }
    b_.SetInsertPoint(exit);
    v_[f] = spread ? combine_across_lanes(b_, fn.prim, fn.type, acc, lanes_) : acc;
    if (split) v_[f] = combine_across_blocks(b_, fn.prim, fn.type, v_[f], init, lanes_, whole_);
    work_ = work;
    if (!inner.empty()) fails.emplace_back(f, failed);
    if (split) after_split_fold_ = fails.size();
  }

 public:
  llvm::Value* value(uint32_t node) const { return v_.at(node); }

  /// Several instances of a body with a tiled fold (Note [Tiled folds] in
  /// flatten/tiled_folds.h), an emitter each (instance `slot` r of the thread's, FoldTiles),
  /// whose folds run together: each one's nodes before the fold, then the folds, where the
  /// block decides so a chunk of the square's rows at a time from the tiles, each instance its
  /// own indices in order (an index past its own count changes nothing), else each the plain
  /// fold; then each one's nodes after. Every thread of the block comes here.
  static void emit_tiled(std::vector<NodeEmitter>& es, std::vector<std::vector<std::pair<uint32_t, llvm::Value*>>>& fails) {
    NodeEmitter& e0 = es.front();
    llvm::IRBuilder<>& b = e0.b_;
    const KernelBody& k = e0.k_;
    FoldTiles& tiles = *e0.tiles_;
    const uint32_t f = tiles.shape().fold, at = k.nodes[f].input;
    const KernelNode& fn = k.nodes.at(f);
    const size_t n = es.size();
    std::vector<llvm::Value*> count(n), init(n);
    llvm::Value* in_range = b.getTrue();  // every read of every region in range below its count
    llvm::Value* largest = nullptr;
    std::vector<PendingWrite> no_writes;  // a map kernel writes and appends nothing
    std::vector<PendingAppend> no_appends;
    for (size_t r = 0; r < n; ++r) {
      NodeEmitter& e = es[r];
      e.writes_ = &no_writes;
      e.appends_ = &no_appends;
      e.work_ = b.getInt64(0);  // and has no budget
      e.range(0, at, fails[r]);
      count[r] = e.v_.at(fn.args.at(0));
      init[r] = e.v_.at(fn.args.at(1));
      for (uint32_t j = at + 1; j < f; ++j)
        if (k.nodes[j].kind == KernelNode::Kind::SeqElt)
          in_range = b.CreateAnd(in_range, b.CreateICmpSGE(row_of(b, k, k.nodes[j], e.v_, e.seq_pointer_).length, count[r]));
      largest = largest ? b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, largest, count[r]) : count[r];
    }
    auto [tiled, most] = tiles.decide(largest, in_range);
    llvm::Function* func = b.GetInsertBlock()->getParent();
    llvm::Type* i64 = b.getInt64Ty();
    llvm::Type* acc_type = init[0]->getType();
    auto* from_tiles = llvm::BasicBlock::Create(b.getContext(), "tiled", func);
    auto* plain = llvm::BasicBlock::Create(b.getContext(), "untiled", func);
    auto* join = llvm::BasicBlock::Create(b.getContext(), "tiled_join", func);
    b.CreateCondBr(tiled, from_tiles, plain);

    b.SetInsertPoint(plain);
    std::vector<llvm::Value*> plain_acc(n), plain_failed(n);
    for (size_t r = 0; r < n; ++r) {
      std::vector<std::pair<uint32_t, llvm::Value*>> own;
      es[r].fold(at, own);
      plain_acc[r] = es[r].v_[f];
      plain_failed[r] = own.empty() ? b.getFalse() : own.back().second;
    }
    llvm::BasicBlock* plain_end = b.GetInsertBlock();
    b.CreateBr(join);

    // The chunks: k0 = 0, kChunk, ... below the block's largest count.
    b.SetInsertPoint(from_tiles);
    auto* chunk = llvm::BasicBlock::Create(b.getContext(), "tile_chunk", func);
    auto* chunk_body = llvm::BasicBlock::Create(b.getContext(), "tile_chunk_body", func);
    auto* chunks_done = llvm::BasicBlock::Create(b.getContext(), "tile_chunks_done", func);
    b.CreateBr(chunk);
    b.SetInsertPoint(chunk);
    llvm::PHINode* k0 = b.CreatePHI(i64, 2);
    k0->addIncoming(b.getInt64(0), from_tiles);
    std::vector<llvm::PHINode*> acc(n), failed(n);
    for (size_t r = 0; r < n; ++r) {
      acc[r] = b.CreatePHI(acc_type, 2);
      acc[r]->addIncoming(init[r], from_tiles);
      failed[r] = b.CreatePHI(b.getInt1Ty(), 2);
      failed[r]->addIncoming(b.getFalse(), from_tiles);
    }
    b.CreateCondBr(b.CreateICmpSLT(k0, most), chunk_body, chunks_done);
    b.SetInsertPoint(chunk_body);
    tiles.load(k0);
    // The chunk's indices; where the whole chunk is below every count, no index is checked (a
    // loop of constant trip count, which LLVM unrolls whole).
    llvm::Value* whole = b.getTrue();
    for (size_t r = 0; r < n; ++r)
      whole = b.CreateAnd(whole, b.CreateICmpSLE(b.CreateAdd(k0, b.getInt64(FoldTiles::kChunk)), count[r]));
    auto* full = llvm::BasicBlock::Create(b.getContext(), "tile_full", func);
    auto* part = llvm::BasicBlock::Create(b.getContext(), "tile_part", func);
    auto* chunk_end = llvm::BasicBlock::Create(b.getContext(), "tile_chunk_end", func);
    b.CreateCondBr(whole, full, part);
    struct Steps {
      std::vector<llvm::Value*> acc, failed;
      llvm::BasicBlock* end;
    };
    auto steps = [&](llvm::BasicBlock* start, bool checked) {
      b.SetInsertPoint(start);
      auto* step = llvm::BasicBlock::Create(b.getContext(), "tile_step", func);
      auto* steps_done = llvm::BasicBlock::Create(b.getContext(), "tile_steps_done", func);
      b.CreateBr(step);
      b.SetInsertPoint(step);
      llvm::PHINode* kk = b.CreatePHI(i64, 2);
      kk->addIncoming(b.getInt64(0), start);
      std::vector<llvm::PHINode*> step_acc(n), step_failed(n);
      for (size_t r = 0; r < n; ++r) {
        step_acc[r] = b.CreatePHI(acc_type, 2);
        step_acc[r]->addIncoming(acc[r], start);
        step_failed[r] = b.CreatePHI(b.getInt1Ty(), 2);
        step_failed[r]->addIncoming(failed[r], start);
      }
      llvm::Value* index = b.CreateAdd(k0, kk);
      Steps out{std::vector<llvm::Value*>(n), std::vector<llvm::Value*>(n), steps_done};
      for (size_t r = 0; r < n; ++r) {
        NodeEmitter& e = es[r];
        llvm::Value* active = checked ? b.CreateICmpSLT(index, count[r]) : b.getTrue();
        e.v_[at] = index;
        for (uint32_t j = at + 1; j < f; ++j)
          if (k.nodes[j].kind == KernelNode::Kind::FoldAcc && k.nodes[j].input == f) e.v_[j] = step_acc[r];
        std::vector<std::pair<uint32_t, llvm::Value*>> inner;
        e.tile_index_ = kk;
        e.slot_ = static_cast<int>(r);
        ++e.fold_depth_;
        e.range(at + 1, f, inner);
        --e.fold_depth_;
        e.tile_index_ = nullptr;
        out.failed[r] = step_failed[r];
        for (const auto& x : inner) out.failed[r] = b.CreateOr(out.failed[r], b.CreateAnd(active, x.second));
        out.acc[r] = b.CreateSelect(active, e.v_.at(fn.args.at(2)), step_acc[r]);
      }
      llvm::Value* kk_next = b.CreateAdd(kk, b.getInt64(1));
      llvm::BasicBlock* step_end = b.GetInsertBlock();
      kk->addIncoming(kk_next, step_end);
      for (size_t r = 0; r < n; ++r) {
        step_acc[r]->addIncoming(out.acc[r], step_end);
        step_failed[r]->addIncoming(out.failed[r], step_end);
      }
      llvm::BranchInst* back = b.CreateCondBr(b.CreateICmpSLT(kk_next, b.getInt64(FoldTiles::kChunk)), step, steps_done);
      if (!checked) {  // unrolled whole: the tiles' addresses become constant offsets
        llvm::LLVMContext& c = b.getContext();
        llvm::MDNode* full_unroll = llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.unroll.full")});
        llvm::MDNode* loop = llvm::MDNode::getDistinct(c, {nullptr, full_unroll});
        loop->replaceOperandWith(0, loop);
        back->setMetadata(llvm::LLVMContext::MD_loop, loop);
      }
      b.SetInsertPoint(steps_done);
      b.CreateBr(chunk_end);
      return out;
    };
    Steps unchecked = steps(full, false);
    Steps checked = steps(part, true);
    b.SetInsertPoint(chunk_end);
    for (size_t r = 0; r < n; ++r) {
      llvm::PHINode* a = b.CreatePHI(acc_type, 2);
      a->addIncoming(unchecked.acc[r], unchecked.end);
      a->addIncoming(checked.acc[r], checked.end);
      llvm::PHINode* x = b.CreatePHI(b.getInt1Ty(), 2);
      x->addIncoming(unchecked.failed[r], unchecked.end);
      x->addIncoming(checked.failed[r], checked.end);
      acc[r]->addIncoming(a, chunk_end);
      failed[r]->addIncoming(x, chunk_end);
    }
    k0->addIncoming(b.CreateAdd(k0, b.getInt64(FoldTiles::kChunk)), chunk_end);
    b.CreateBr(chunk);
    b.SetInsertPoint(chunks_done);
    b.CreateBr(join);

    b.SetInsertPoint(join);
    for (size_t r = 0; r < n; ++r) {
      llvm::PHINode* result = b.CreatePHI(acc_type, 2);
      result->addIncoming(acc[r], chunks_done);
      result->addIncoming(plain_acc[r], plain_end);
      llvm::PHINode* any_failed = b.CreatePHI(b.getInt1Ty(), 2);
      any_failed->addIncoming(failed[r], chunks_done);
      any_failed->addIncoming(plain_failed[r], plain_end);
      es[r].v_[f] = result;
      fails[r].emplace_back(f, any_failed);
    }
    for (size_t r = 0; r < n; ++r) es[r].range(f + 1, static_cast<uint32_t>(k.nodes.size()), fails[r]);
  }
};

std::vector<llvm::Value*> emit_nodes(llvm::IRBuilder<>& b, const KernelBody& k, llvm::Value* instance,
                                     const std::function<llvm::Value*(uint32_t)>& input,
                                     const std::function<llvm::Value*(uint32_t)>& seq_pointer, MathLibrary math,
                                     std::vector<std::pair<uint32_t, llvm::Value*>>& fails, std::vector<PendingWrite>& writes,
                                     std::vector<PendingAppend>& appends, llvm::Value*& work,
                                     std::optional<int64_t> budget) {
  return NodeEmitter(b, k, instance, input, seq_pointer, math, Lanes{}, nullptr).emit(fails, writes, appends, work, budget);
}

/// An appended sequence's slot for this instance (Note [Appended sequences in loop kernels]).
struct AppendSlot {
  uint32_t seq;
  llvm::Value* start;   // the slot's first element
  llvm::Value* cap;     // its length
  llvm::Value* count;   // the row's length so far (a phi in the loop)
};

/// Copies the instance's input row of appended sequence q into its slot (what fits).
AppendSlot open_slot(llvm::IRBuilder<>& b, const KernelBody& k, uint32_t q, llvm::Value* instance,
                     const std::function<llvm::Value*(uint32_t)>& seq_pointer) {
  llvm::Type* i64 = b.getInt64Ty();
  const uint32_t first = static_cast<uint32_t>(k.seq_pointer(q));
  const uint32_t ncomp = static_cast<uint32_t>(k.seqs[q].components.size());
  const RowSpan in = row_span(b, seq_pointer(first), instance);            // the input row
  const RowSpan slot_span = row_span(b, seq_pointer(first + 1 + ncomp), instance);  // its slot
  llvm::Value *in_start = in.start, *in_length = in.length, *slot = slot_span.start, *cap = slot_span.length;
  llvm::Value* copied = b.CreateSelect(b.CreateICmpSLT(in_length, cap), in_length, cap);
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* before = b.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(b.getContext(), "slot_copy", fn);
  auto* body = llvm::BasicBlock::Create(b.getContext(), "slot_copy_body", fn);
  auto* done = llvm::BasicBlock::Create(b.getContext(), "slot_copy_done", fn);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* j = b.CreatePHI(i64, 2);
  j->addIncoming(b.getInt64(0), before);
  b.CreateCondBr(b.CreateICmpSLT(j, copied), body, done);
  b.SetInsertPoint(body);
  for (uint32_t c = 0; c < ncomp; ++c) {
    llvm::Type* t = storage_type(b.getContext(), k.seqs[q].components[c]);
    llvm::Value* x = b.CreateLoad(t, b.CreateGEP(t, seq_pointer(first + 1 + c), b.CreateAdd(in_start, j)));
    b.CreateStore(x, b.CreateGEP(t, seq_pointer(first + 3 + ncomp + c), b.CreateAdd(slot, j)));
  }
  j->addIncoming(b.CreateAdd(j, b.getInt64(1)), b.GetInsertBlock());
  b.CreateBr(loop);
  b.SetInsertPoint(done);
  return {q, slot, cap, in_length};
}

/// The appends of one iteration, in node order: each element's components go at the row's
/// length where it fits the slot, and an element wanted lengthens the row.
void make_appends(llvm::IRBuilder<>& b, const KernelBody& k, const std::vector<PendingAppend>& appends,
                  std::vector<AppendSlot>& slots, const std::function<llvm::Value*(uint32_t)>& seq_pointer) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  for (const PendingAppend& a : appends) {
    AppendSlot& slot = *std::find_if(slots.begin(), slots.end(), [&](const AppendSlot& s) { return s.seq == a.seq; });
    const uint32_t ncomp = static_cast<uint32_t>(k.seqs[a.seq].components.size());
    auto* store = llvm::BasicBlock::Create(b.getContext(), "seq_append", fn);
    auto* after = llvm::BasicBlock::Create(b.getContext(), "seq_append_done", fn);
    b.CreateCondBr(b.CreateAnd(a.wanted, b.CreateICmpSLT(slot.count, slot.cap)), store, after);
    b.SetInsertPoint(store);
    llvm::Value* out = seq_pointer(static_cast<uint32_t>(k.seq_pointer(a.seq)) + 3 + ncomp + a.component);
    b.CreateStore(a.value, b.CreateGEP(a.value->getType(), out, b.CreateAdd(slot.start, slot.count)));
    b.CreateBr(after);
    b.SetInsertPoint(after);
    if (a.component + 1 == ncomp) slot.count = b.CreateAdd(slot.count, b.CreateZExt(a.wanted, b.getInt64Ty()));
  }
}

/// The failure record of the first failing node: selects from the last node back to the first.
llvm::Value* failure_record(llvm::IRBuilder<>& b, const std::vector<std::pair<uint32_t, llvm::Value*>>& fails,
                            llvm::Value* instance) {
  llvm::Value* record = b.getInt64(flatten::kNoKernelFailure);
  for (auto it = fails.rbegin(); it != fails.rend(); ++it)
    record = b.CreateSelect(it->second, b.CreateOr(b.getInt64(flatten::kernel_failure_record(it->first, 0)), instance), record);
  return record;
}

// Note [Multiprefix chunks a chunk ahead]
// A chunk of a multiprefix loop is a chain of latencies: its keys' loads (`ds[i]`), the match
// of the lanes with one index (match.any), the histogram's load, its store. On an H200 a
// counting loop's warp spent 20 cycles an instruction there, 70% of the kernel's samples
// waiting on the keys' load and the match (Nsight Compute, session 49), with a warp an instance
// and few instances a multiprocessor to hide them. The pure nodes (those that read no
// histogram: the keys, the indices, the end test) of chunk c + 1 depend on nothing chunk c
// computes, so each iteration emits them for the next chunk, carried to it in phi nodes: their
// loads' latencies pass while chunk c reads and writes its histograms. (Past the loop's end the
// chunk ahead is computed for nothing: pure nodes store nothing, and their failures there are
// dropped with the chunk.) The own-slot writes, though pure, stay with their chunk: they store.
// The lanes of one index are found by ballots (Note [Peers by ballots] in codegen/warp_ops.cpp):
// a match carried a chunk ahead had its result copied into its phi's register at once, and
// waited there as long.

// Note [Counted histograms]
// A counting loop's histogram (`rep(counts, counts[d] + 1, d)`) is read only to add to it: no
// lane needs h[k] as it finds it, only the sum in the end. Its chunk then needs neither the lanes
// of one index (the ballots of Note [Peers by ballots], ~70 of the chunk's ~108 instructions) nor
// their sums: each lane that goes on adds its addend with one atomic add, to shared memory where
// the row is staged (Note [Staged rows]). Integer sums in any order are the same, so the answer
// is the loop's. A histogram whose read value anything else uses (a placing loop's `next[d]`,
// stored as the key's place) keeps the multiprefix.

/// Whether histogram `h` of `k` is only added to (Note [Counted histograms]): its read is used by
/// its write's value alone, and that value by the write alone.
bool only_added_to(const KernelBody& k, const flatten::MultiprefixLoop::Histogram& h) {
  const uint32_t sum = k.nodes.at(h.write).args.at(2);
  auto used_by_others = [&](uint32_t x, uint32_t only_user) {
    for (uint32_t j = 0; j < k.nodes.size(); ++j)
      if (j != only_user && std::find(k.nodes[j].args.begin(), k.nodes[j].args.end(), x) != k.nodes[j].args.end()) return true;
    return std::find(k.outputs.begin(), k.outputs.end(), x) != k.outputs.end() ||
           std::find(k.loop_next.begin(), k.loop_next.end(), x) != k.loop_next.end() || k.loop_done == x;
  };
  return sum != h.read && !used_by_others(h.read, sum) && !used_by_others(sum, h.write);
}

/// Note [Multiprefix loops] in flatten/flat_ir.h: the loop of `k` for `instance`, 32
/// consecutive iterations at a time, one a lane. Every lane of the warp comes here; each
/// evaluates the nodes in `m.order` at counter base + lane, a histogram's read seeing h[k] as
/// the chunk found it plus the addends of the lanes below with the same index. The lanes below
/// the first that is done or fails (all 32, if none is) make their stores; the first one holds
/// the outputs (`whole`) and the failure record. The pure nodes are emitted a chunk ahead
/// (Note [Multiprefix chunks a chunk ahead]).
InstanceValues emit_multiprefix_loop(llvm::IRBuilder<>& b, const KernelBody& k, const flatten::MultiprefixLoop& m,
                                     llvm::Value* instance, const std::function<llvm::Value*(uint32_t)>& load, MathLibrary math,
                                     const std::function<llvm::Value*(uint32_t)>& seq_pointer) {
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  std::vector<llvm::Value*> in(k.inputs.size());
  for (uint32_t j = 0; j < k.inputs.size(); ++j) {
    llvm::Value* x = load(j);
    in[j] = k.inputs[j]->kind == TypeKind::Bool ? b.CreateICmpNE(x, b.getInt8(0)) : x;
  }
  llvm::Value* lane = warp_lane(b);
  llvm::Value* below = lanes_below(b);
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  // The nodes a chunk ahead (pure, but the writes), and the others in their order.
  std::vector<uint32_t> ahead, rest;
  for (size_t i = 0; i < m.order.size(); ++i) {
    const uint32_t j = m.order[i];
    (i < m.pure_count && k.nodes[j].kind != KernelNode::Kind::SeqWrite ? ahead : rest).push_back(j);
  }
  struct Ahead {
    std::vector<llvm::Value*> v;
    std::vector<std::pair<uint32_t, llvm::Value*>> fails;
  };
  // The pure nodes of the chunk at `chunk_base`.
  auto emit_ahead = [&](llvm::Value* chunk_base) {
    llvm::Value* at = b.CreateAdd(chunk_base, b.CreateZExt(lane, i64));
    const std::function<llvm::Value*(uint32_t)> input = [&](uint32_t j) { return j == m.counter ? at : in.at(j); };
    const NodeEmitter::Hook none = [](uint32_t, const std::vector<llvm::Value*>&) -> std::optional<NodeValue> { return std::nullopt; };
    std::vector<PendingWrite> no_writes;
    Ahead a;
    a.v = NodeEmitter(b, k, instance, input, seq_pointer, math, Lanes{}, nullptr).emit_in_order(ahead, none, a.fails, no_writes);
    return a;
  };
  Ahead opening = emit_ahead(in[m.counter]);
  llvm::BasicBlock* before = b.GetInsertBlock();
  auto* chunk = llvm::BasicBlock::Create(b.getContext(), "chunk", fn);
  auto* exit = llvm::BasicBlock::Create(b.getContext(), "chunks_done", fn);
  b.CreateBr(chunk);
  b.SetInsertPoint(chunk);
  llvm::PHINode* base = b.CreatePHI(i64, 2, "chunk_base");
  base->addIncoming(in[m.counter], before);
  // This chunk's pure values and failures, from the iteration before.
  std::vector<llvm::PHINode*> carried(k.nodes.size(), nullptr);
  for (uint32_t j : ahead)
    if (llvm::Value* x = opening.v.at(j); x != nullptr && !x->getType()->isVoidTy()) {
      carried[j] = b.CreatePHI(x->getType(), 2);
      carried[j]->addIncoming(x, before);
    }
  std::vector<llvm::PHINode*> carried_fails;
  for (const auto& [node, failed] : opening.fails) {
    carried_fails.push_back(b.CreatePHI(b.getInt1Ty(), 2));
    carried_fails.back()->addIncoming(failed, before);
  }
  Ahead next = emit_ahead(b.CreateAdd(base, b.getInt64(32)));
  llvm::Value* counter = b.CreateAdd(base, b.CreateZExt(lane, i64));
  // A histogram's lanes: h[k] as this lane sees it plus its own addend (what the highest lane
  // of an index stores), where, and which lanes share the index.
  struct HistogramLane {
    bool counted = false;           // only added to: one atomic add a lane (Note [Counted histograms])
    llvm::Value* addend = nullptr;  // c where the write goes on, else 0
    llvm::Value* stored = nullptr;
    llvm::Value* at = nullptr;
    llvm::Value* inside = nullptr;  // the index is in bounds
    llvm::Value* peers = nullptr;
  };
  std::vector<HistogramLane> hl(m.histograms.size());
  auto histogram_read = [&](size_t h, const std::vector<llvm::Value*>& v) -> NodeValue {
    const flatten::MultiprefixLoop::Histogram& hist = m.histograms[h];
    const KernelNode& r = k.nodes[hist.read];
    const KernelNode& w = k.nodes[hist.write];
    NodeValue start = sequence_read(b, k, r, v, seq_pointer);  // h[k] as the chunk found it
    llvm::Value* goes_on = w.args.size() > 3 ? v.at(w.args[3]) : b.getTrue();
    llvm::Value* c = v.at(hist.addend);
    HistogramLane& l = hl[h];
    l.addend = b.CreateSelect(goes_on, c, b.getInt64(0));
    if (only_added_to(k, hist)) {  // the value read goes nowhere: its load is dropped, its bounds test kept
      l.counted = true;
      return start;
    }
    llvm::Value* length = row_of(b, k, r, v, seq_pointer).length;
    llvm::Value* index = v.at(r.args.at(1));
    l.peers = warp_peers(b, index, b.CreateICmpULT(index, length), length);
    llvm::Value* lower_peers = b.CreateAnd(l.peers, below);
    llvm::Value* before_me = nullptr;
    if (const KernelNode& cn = k.nodes[hist.addend]; cn.kind == KernelNode::Kind::Const) {
      // A constant addend: count the peers below whose write goes on.
      llvm::Value* adding = b.CreateAnd(lower_peers, warp_ballot(b, goes_on));
      before_me = b.CreateMul(b.CreateZExt(b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, adding), i64), c);
    } else {  // every lane's addend in turn, taken from the peers below
      llvm::BasicBlock* from = b.GetInsertBlock();
      auto* step = llvm::BasicBlock::Create(b.getContext(), "peer_sum", fn);
      auto* summed = llvm::BasicBlock::Create(b.getContext(), "peer_sum_done", fn);
      b.CreateBr(step);
      b.SetInsertPoint(step);
      llvm::PHINode* src = b.CreatePHI(i32, 2);
      llvm::PHINode* acc = b.CreatePHI(i64, 2);
      src->addIncoming(b.getInt32(0), from);
      acc->addIncoming(b.getInt64(0), from);
      llvm::Value* x = warp_read_lane(b, l.addend, src);
      llvm::Value* take = b.CreateICmpNE(b.CreateAnd(b.CreateLShr(lower_peers, src), b.getInt32(1)), b.getInt32(0));
      llvm::Value* acc2 = b.CreateAdd(acc, b.CreateSelect(take, x, b.getInt64(0)));
      llvm::Value* src2 = b.CreateAdd(src, b.getInt32(1));
      src->addIncoming(src2, step);
      acc->addIncoming(acc2, step);
      b.CreateCondBr(b.CreateICmpULT(src2, b.getInt32(32)), step, summed);
      b.SetInsertPoint(summed);
      before_me = acc2;
    }
    llvm::Value* seen = b.CreateAdd(start.value, before_me);
    l.stored = b.CreateAdd(seen, l.addend);
    return {seen, start.fails};
  };
  auto histogram_write = [&](size_t h, const std::vector<llvm::Value*>& v) -> NodeValue {
    const KernelNode& w = k.nodes[m.histograms[h].write];
    const Row row = row_of(b, k, w, v, seq_pointer);
    llvm::Value* index = v.at(w.args.at(1));
    llvm::Value* outside = b.CreateICmpUGE(index, row.length);
    hl[h].inside = b.CreateNot(outside);
    hl[h].at = b.CreateGEP(i64, row.component, b.CreateAdd(row.start, index));
    llvm::Value* goes_on = w.args.size() > 3 ? v.at(w.args[3]) : b.getTrue();
    return {v.at(w.args.at(2)), b.CreateAnd(outside, goes_on)};
  };
  NodeEmitter::Hook hook = [&](uint32_t j, const std::vector<llvm::Value*>& v) -> std::optional<NodeValue> {
    for (size_t h = 0; h < m.histograms.size(); ++h) {
      if (j == m.histograms[h].read) return histogram_read(h, v);
      if (j == m.histograms[h].write) return histogram_write(h, v);
    }
    return std::nullopt;
  };
  std::vector<std::pair<uint32_t, llvm::Value*>> fails;
  for (size_t f = 0; f < opening.fails.size(); ++f) fails.emplace_back(opening.fails[f].first, carried_fails[f]);
  std::vector<PendingWrite> writes;  // the own-slot sequences'
  const std::function<llvm::Value*(uint32_t)> input = [&](uint32_t j) { return j == m.counter ? counter : in.at(j); };
  NodeEmitter rest_of_chunk(b, k, instance, input, seq_pointer, math, Lanes{}, nullptr);
  for (uint32_t j : ahead)
    if (carried[j] != nullptr) rest_of_chunk.set_value(j, carried[j]);
  std::vector<llvm::Value*> v = rest_of_chunk.emit_in_order(rest, hook, fails, writes);
  std::sort(fails.begin(), fails.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  // The first lane that is done or fails ends the instance; the lanes below it go on.
  llvm::Value* stop = v.at(k.loop_done);
  for (const auto& [node, failed] : fails) stop = b.CreateOr(stop, failed);
  llvm::Value* stops = warp_ballot(b, stop);
  llvm::Value* goes_on_mask = b.CreateSelect(b.CreateICmpEQ(stops, b.getInt32(0)), b.getInt32(0xffffffffu),
                                             b.CreateSub(b.CreateAnd(stops, b.CreateNeg(stops)), b.getInt32(1)));
  llvm::Value* goes_on = b.CreateICmpNE(b.CreateAnd(goes_on_mask, b.CreateShl(b.getInt32(1), lane)), b.getInt32(0));
  warp_sync(b);  // every lane has read h[k] before any stores it
  auto store_if = [&](llvm::Value* when, llvm::Value* value, llvm::Value* at) {
    auto* store = llvm::BasicBlock::Create(b.getContext(), "chunk_store", fn);
    auto* after = llvm::BasicBlock::Create(b.getContext(), "chunk_stored", fn);
    b.CreateCondBr(when, store, after);
    b.SetInsertPoint(store);
    b.CreateStore(value, at);
    b.CreateBr(after);
    b.SetInsertPoint(after);
  };
  for (const PendingWrite& w : writes) store_if(b.CreateAnd(goes_on, w.wanted), w.value, w.at);
  for (const HistogramLane& l : hl) {  // the highest lane of each index that goes on
    if (l.counted) {  // every lane that goes on adds its own
      auto* add = llvm::BasicBlock::Create(b.getContext(), "chunk_count", fn);
      auto* after = llvm::BasicBlock::Create(b.getContext(), "chunk_counted", fn);
      b.CreateCondBr(b.CreateAnd(goes_on, l.inside), add, after);
      b.SetInsertPoint(add);
      // In two 32-bit halves: the low half's add returns what it found, so its carry is known,
      // and the high half is added to only where the addend's high half or a carry asks (a count's
      // never, as a rule). A 64-bit atomic add on shared memory made the counting loop slower than
      // the multiprefix (17.2 µs against 14.5, H200, session 52).
      llvm::Type* i32 = b.getInt32Ty();
      llvm::Value* low = b.CreateTrunc(l.addend, i32);
      llvm::Value* found = b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, l.at, low, llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic);
      llvm::Value* carry = b.CreateZExt(b.CreateICmpULT(b.CreateAdd(found, low), found), i32);
      llvm::Value* high = b.CreateAdd(b.CreateTrunc(b.CreateLShr(l.addend, 32), i32), carry);
      auto* add_high = llvm::BasicBlock::Create(b.getContext(), "chunk_count_high", fn);
      b.CreateCondBr(b.CreateICmpNE(high, b.getInt32(0)), add_high, after);
      b.SetInsertPoint(add_high);
      b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, b.CreateConstGEP1_64(b.getInt8Ty(), l.at, 4), high, llvm::MaybeAlign(4),
                        llvm::AtomicOrdering::Monotonic);
      b.CreateBr(after);
      b.SetInsertPoint(after);
      continue;
    }
    llvm::Value* group = b.CreateAnd(l.peers, goes_on_mask);
    llvm::Value* highest = b.CreateSub(b.getInt32(31), b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, group, b.getFalse()));
    store_if(b.CreateAnd(b.CreateAnd(goes_on, l.inside), b.CreateICmpEQ(lane, highest)), l.stored, l.at);
  }
  warp_sync(b);  // the stores happen before the next chunk's reads
  llvm::BasicBlock* latch = b.GetInsertBlock();
  base->addIncoming(b.CreateAdd(base, b.getInt64(32)), latch);
  for (uint32_t j : ahead)
    if (carried[j] != nullptr) carried[j]->addIncoming(next.v.at(j), latch);
  if (next.fails.size() != carried_fails.size()) throw std::runtime_error("a chunk ahead with other failures than the first");
  for (size_t f = 0; f < carried_fails.size(); ++f) carried_fails[f]->addIncoming(next.fails[f].second, latch);
  b.CreateCondBr(b.CreateICmpEQ(stops, b.getInt32(0)), chunk, exit);
  b.SetInsertPoint(exit);  // its one predecessor is the latch, so every node's value reaches it
  llvm::Value* first = b.CreateICmpEQ(lane, b.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, stops, b.getTrue()));
  InstanceValues out;
  for (uint32_t o : k.outputs) {
    llvm::Value* x = v.at(o);
    if (k.nodes.at(o).type->kind == TypeKind::Bool) x = b.CreateZExt(x, b.getInt8Ty());
    out.outputs.push_back(x);
  }
  out.failure = fails.empty() ? b.getInt64(flatten::kNoKernelFailure)
                              : b.CreateSelect(first, failure_record(b, fails, instance), b.getInt64(flatten::kNoKernelFailure));
  out.whole = first;
  return out;
}

}  // namespace

InstanceValues emit_instance(llvm::IRBuilder<>& b, const KernelBody& k, llvm::Value* instance,
                             const std::function<llvm::Value*(uint32_t)>& load, MathLibrary math,
                             const std::function<llvm::Value*(uint32_t)>& seq_pointer, Lanes lanes) {
  if (lanes.count > 1 && k.loop) {
    if (lanes.count != 32 || !k.multiprefix()) throw std::runtime_error("a loop kernel on several lanes, not a multiprefix loop on a warp");
    return emit_multiprefix_loop(b, k, *k.multiprefix(), instance, load, math, seq_pointer);
  }
  if (lanes.split && !k.split_fold()) throw std::runtime_error("an instance split over blocks without one outer fold over a row");
  // Inputs as values (bool: i1), each loaded once.
  std::vector<llvm::Value*> in(k.inputs.size(), nullptr);
  auto loaded = [&](uint32_t j) {
    if (!in.at(j)) {
      llvm::Value* x = load(j);
      in[j] = k.inputs[j]->kind == TypeKind::Bool ? b.CreateICmpNE(x, b.getInt8(0)) : x;
    }
    return in[j];
  };
  std::vector<std::pair<uint32_t, llvm::Value*>> fails;  // (node, i1) in node order
  std::vector<llvm::Value*> v;
  llvm::Value* record = nullptr;
  llvm::Value* whole = nullptr;
  if (!k.loop) {
    std::vector<PendingWrite> writes;  // none: only loops write and append
    std::vector<PendingAppend> appends;
    llvm::Value* work = b.getInt64(0);  // no budget outside loops
    const std::function<llvm::Value*(uint32_t)> input = loaded;  // outlives the emitter, which refers to it
    NodeEmitter e(b, k, instance, input, seq_pointer, math, lanes, nullptr);
    v = e.emit(fails, writes, appends, work, std::nullopt);
    whole = e.whole();
    if (!fails.empty()) record = failure_record(b, fails, instance);
  } else {
    // Note [Loop kernels]: the invariant inputs are loaded before the loop, the state is a phi
    // per input, and an iteration that is done or fails leaves it.
    const size_t nstate = k.loop_next.size();
    for (uint32_t j = 0; j < k.inputs.size(); ++j) loaded(j);
    std::vector<AppendSlot> slots;  // Note [Appended sequences in loop kernels]
    for (uint32_t q = 0; q < k.seqs.size(); ++q)
      if (k.seqs[q].appended) slots.push_back(open_slot(b, k, q, instance, seq_pointer));
    llvm::Function* fn = b.GetInsertBlock()->getParent();
    llvm::BasicBlock* before = b.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(b.getContext(), "loop", fn);
    auto* exit = llvm::BasicBlock::Create(b.getContext(), "loop_exit", fn);
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    std::vector<llvm::PHINode*> state;
    for (size_t j = 0; j < nstate; ++j) {
      state.push_back(b.CreatePHI(in[j]->getType(), 2));
      state.back()->addIncoming(in[j], before);
    }
    std::vector<llvm::PHINode*> counts;
    for (AppendSlot& slot : slots) {
      counts.push_back(b.CreatePHI(b.getInt64Ty(), 2));
      counts.back()->addIncoming(slot.count, before);
      slot.count = counts.back();
    }
    llvm::PHINode* spent = b.CreatePHI(b.getInt64Ty(), 2);  // fold steps so far (Note [Loops that give up])
    spent->addIncoming(b.getInt64(0), before);
    llvm::Value* work = spent;
    const int64_t budget = math == MathLibrary::Libdevice ? flatten::kFoldBudgetGpu : flatten::kFoldBudget;
    std::vector<PendingWrite> writes;
    std::vector<PendingAppend> appends;
    v = emit_nodes(b, k, instance, [&](uint32_t j) { return j < nstate ? state[j] : in.at(j); }, seq_pointer, math,
                   fails, writes, appends, work, budget);
    if (work != spent)  // the body folds: past the budget, the instance gives up
      fails.emplace_back(static_cast<uint32_t>(k.nodes.size()), b.CreateICmpSGT(work, b.getInt64(budget)));
    // An iteration stops where it is done or some node fails; which node failed first is asked
    // only once the loop has stopped (the record's selects, one per node that can fail, would
    // otherwise be a dependent chain in every iteration of a loop of a few instructions).
    llvm::Value* stop = v.at(k.loop_done);
    for (const auto& [node, failed] : fails) stop = b.CreateOr(stop, failed);
    // The iteration's stores, in node order, if it goes on.
    for (const PendingWrite& w : writes) {
      auto* store = llvm::BasicBlock::Create(b.getContext(), "seq_write", fn);
      auto* after = llvm::BasicBlock::Create(b.getContext(), "seq_write_done", fn);
      b.CreateCondBr(b.CreateAnd(b.CreateNot(stop), w.wanted), store, after);
      b.SetInsertPoint(store);
      b.CreateStore(w.value, w.at);
      b.CreateBr(after);
      b.SetInsertPoint(after);
    }
    make_appends(b, k, appends, slots, seq_pointer);
    llvm::BasicBlock* latch = b.GetInsertBlock();
    for (size_t j = 0; j < nstate; ++j) state[j]->addIncoming(v.at(k.loop_next[j]), latch);
    for (size_t s = 0; s < slots.size(); ++s) counts[s]->addIncoming(slots[s].count, latch);
    spent->addIncoming(work, latch);
    b.CreateCondBr(stop, exit, loop);
    b.SetInsertPoint(exit);  // its one predecessor is the latch, so every node's value reaches it
    if (!fails.empty()) record = failure_record(b, fails, instance);
    for (const AppendSlot& slot : slots) {  // the row's length, which may pass its slot's
      const uint32_t first = static_cast<uint32_t>(k.seq_pointer(slot.seq));
      llvm::Value* lengths = seq_pointer(first + 2 + static_cast<uint32_t>(k.seqs[slot.seq].components.size()));
      b.CreateStore(slot.count, b.CreateGEP(b.getInt64Ty(), lengths, instance));
    }
  }
  InstanceValues out;
  for (uint32_t o : k.outputs) {
    llvm::Value* x = v.at(o);
    if (k.nodes.at(o).type->kind == TypeKind::Bool) x = b.CreateZExt(x, b.getInt8Ty());
    out.outputs.push_back(x);
  }
  out.failure = record != nullptr ? record : b.getInt64(flatten::kNoKernelFailure);
  out.whole = whole;
  return out;
}

std::vector<InstanceValues> emit_tiled_instances(llvm::IRBuilder<>& b, const KernelBody& k,
                                                 std::span<llvm::Value* const> instances,
                                                 const std::function<llvm::Value*(size_t, uint32_t)>& load,
                                                 const std::function<llvm::Value*(uint32_t)>& seq_pointer, FoldTiles& tiles) {
  const size_t n = instances.size();
  // Each instance's inputs, loaded once, as values (bool: i1).
  std::vector<std::vector<llvm::Value*>> in(n, std::vector<llvm::Value*>(k.inputs.size(), nullptr));
  std::vector<std::function<llvm::Value*(uint32_t)>> inputs;  // outlive the emitters, which refer to them
  inputs.reserve(n);
  for (size_t r = 0; r < n; ++r)
    inputs.push_back([&, r](uint32_t j) {
      if (!in[r].at(j)) {
        llvm::Value* x = load(r, j);
        in[r][j] = k.inputs[j]->kind == TypeKind::Bool ? b.CreateICmpNE(x, b.getInt8(0)) : x;
      }
      return in[r][j];
    });
  std::vector<NodeEmitter> emitters;
  emitters.reserve(n);
  for (size_t r = 0; r < n; ++r)
    emitters.emplace_back(b, k, instances[r], inputs[r], seq_pointer, MathLibrary::Libdevice, Lanes{}, &tiles);
  std::vector<std::vector<std::pair<uint32_t, llvm::Value*>>> fails(n);
  NodeEmitter::emit_tiled(emitters, fails);
  std::vector<InstanceValues> out(n);
  for (size_t r = 0; r < n; ++r) {
    for (uint32_t o : k.outputs) {
      llvm::Value* x = emitters[r].value(o);
      if (k.nodes.at(o).type->kind == TypeKind::Bool) x = b.CreateZExt(x, b.getInt8Ty());
      out[r].outputs.push_back(x);
    }
    out[r].failure = fails[r].empty() ? b.getInt64(flatten::kNoKernelFailure) : failure_record(b, fails[r], instances[r]);
  }
  return out;
}

}  // namespace ndp::codegen
