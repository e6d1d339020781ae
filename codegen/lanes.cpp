// A fold's value combined across the threads of one instance (Note [Map kernels]).
#include "codegen/lanes.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include <stdexcept>

namespace ndp::codegen {

using lang::TypeKind;
using lang::core::PrimId;

namespace {

constexpr int kWarp = 32;
constexpr int kMostWarps = 32;  // 1024 threads, the largest block

/// The value's bits as an i64 (what shuffles and shared memory move), and back.
llvm::Value* to_bits(llvm::IRBuilder<>& b, llvm::Value* v) {
  llvm::Type* t = v->getType();
  if (t->isDoubleTy()) return b.CreateBitCast(v, b.getInt64Ty());
  if (t->isFloatTy()) return b.CreateZExt(b.CreateBitCast(v, b.getInt32Ty()), b.getInt64Ty());
  if (t->getIntegerBitWidth() == 64) return v;
  return b.CreateZExt(v, b.getInt64Ty());
}

llvm::Value* from_bits(llvm::IRBuilder<>& b, llvm::Value* bits, llvm::Type* t) {
  if (t->isDoubleTy()) return b.CreateBitCast(bits, t);
  if (t->isFloatTy()) return b.CreateBitCast(b.CreateTrunc(bits, b.getInt32Ty()), t);
  if (t->getIntegerBitWidth() == 64) return bits;
  return b.CreateTrunc(bits, t);
}

/// The value of lane (this lane xor `offset`) of the warp: two 32-bit shuffles for 64 bits.
llvm::Value* shuffle_xor(llvm::IRBuilder<>& b, llvm::Value* v, int offset) {
  llvm::Type* t = v->getType();
  const bool wide = t->isDoubleTy() || (t->isIntegerTy() && t->getIntegerBitWidth() == 64);
  auto shuffle = [&](llvm::Value* word) {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                             {b.getInt32(0xffffffffu), word, b.getInt32(offset), b.getInt32(0x1f)});
  };
  llvm::Value* bits = to_bits(b, v);
  llvm::Value* low = shuffle(b.CreateTrunc(bits, b.getInt32Ty()));
  llvm::Value* got = b.CreateZExt(low, b.getInt64Ty());
  if (wide) {
    llvm::Value* high = shuffle(b.CreateTrunc(b.CreateLShr(bits, 32), b.getInt32Ty()));
    got = b.CreateOr(got, b.CreateShl(b.CreateZExt(high, b.getInt64Ty()), 32));
  }
  return from_bits(b, got, t);
}

/// One i64 a warp of the block, in shared memory (address space 3).
llvm::GlobalVariable* warp_values(llvm::Module& m) {
  const char* name = "ndp_lane_partials";
  if (llvm::GlobalVariable* g = m.getGlobalVariable(name, true)) return g;
  auto* t = llvm::ArrayType::get(llvm::Type::getInt64Ty(m.getContext()), kMostWarps);
  return new llvm::GlobalVariable(m, t, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(t), name, nullptr,
                                  llvm::GlobalValue::NotThreadLocal, 3);
}

}  // namespace

llvm::Value* fold_combine(llvm::IRBuilder<>& b, PrimId fold, const lang::Type* t, llvm::Value* acc, llvm::Value* x) {
  const bool real = t->kind == TypeKind::Float || t->kind == TypeKind::F32;
  switch (lang::core::prim_operator(fold)) {
    case lang::core::PrimOperator::Plus: return real ? b.CreateFAdd(acc, x) : b.CreateAdd(acc, x);
    case lang::core::PrimOperator::Mult: return real ? b.CreateFMul(acc, x) : b.CreateMul(acc, x);
    case lang::core::PrimOperator::Max: return b.CreateSelect(compare(b, PrimId::Gt, t, x, acc), x, acc);
    case lang::core::PrimOperator::Min: return b.CreateSelect(compare(b, PrimId::Lt, t, x, acc), x, acc);
    case lang::core::PrimOperator::And: return b.CreateAnd(acc, x);
    case lang::core::PrimOperator::Or: return b.CreateOr(acc, x);
    case lang::core::PrimOperator::Xor: return b.CreateXor(acc, x);
    case lang::core::PrimOperator::None: break;
  }
  throw std::runtime_error("a fold without an operator to combine lanes by");
}

llvm::Value* combine_across_lanes(llvm::IRBuilder<>& b, PrimId fold, const lang::Type* t, llvm::Value* acc,
                                  const Lanes& lanes) {
  for (int offset = std::min(lanes.count, kWarp) / 2; offset >= 1; offset /= 2)
    acc = fold_combine(b, fold, t, acc, shuffle_xor(b, acc, offset));
  if (lanes.count <= kWarp) return acc;
  if (lanes.count % kWarp != 0 || lanes.count / kWarp > kMostWarps) throw std::runtime_error("lanes that are not whole warps of a block");
  // Warp w of the block leaves its value at [w]; the instance's warps are count/32 in a row.
  llvm::Module& m = *b.GetInsertBlock()->getModule();
  llvm::GlobalVariable* shared = warp_values(m);
  llvm::Type* words = shared->getValueType();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::Value* warp = b.CreateUDiv(lanes.thread, b.getInt64(kWarp));
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});  // the last combine has read them
  auto* store = llvm::BasicBlock::Create(b.getContext(), "lanes_store", fn);
  auto* stored = llvm::BasicBlock::Create(b.getContext(), "lanes_stored", fn);
  b.CreateCondBr(b.CreateICmpEQ(b.CreateURem(lanes.thread, b.getInt64(kWarp)), b.getInt64(0)), store, stored);
  b.SetInsertPoint(store);
  b.CreateStore(to_bits(b, acc), b.CreateInBoundsGEP(words, shared, {b.getInt64(0), warp}));
  b.CreateBr(stored);
  b.SetInsertPoint(stored);
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
  const int warps = lanes.count / kWarp;
  llvm::Value* first = b.CreateMul(b.CreateUDiv(warp, b.getInt64(warps)), b.getInt64(warps));
  llvm::Value* total = nullptr;
  for (int w = 0; w < warps; ++w) {  // in the warps' order: every lane combines alike
    llvm::Value* at = b.CreateInBoundsGEP(words, shared, {b.getInt64(0), b.CreateAdd(first, b.getInt64(w))});
    llvm::Value* x = from_bits(b, b.CreateLoad(b.getInt64Ty(), at), acc->getType());
    total = total ? fold_combine(b, fold, t, total, x) : x;
  }
  return total;
}

llvm::Value* combine_across_blocks(llvm::IRBuilder<>& b, PrimId fold, const lang::Type* t, llvm::Value* block_value,
                                   llvm::Value* identity, const Lanes& lanes, llvm::Value*& whole) {
  const BlockSplit& split = lanes.split.value();
  llvm::LLVMContext& c = b.getContext();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* i32 = b.getInt32Ty();
  // Warp 0 alone goes on; the block's other warps are done with the fold.
  llvm::BasicBlock* others = b.GetInsertBlock();
  auto* warp0 = llvm::BasicBlock::Create(c, "blocks_warp0", fn);
  auto* publish = llvm::BasicBlock::Create(c, "blocks_publish", fn);
  auto* published = llvm::BasicBlock::Create(c, "blocks_published", fn);
  auto* gather = llvm::BasicBlock::Create(c, "blocks_gather", fn);
  auto* loop = llvm::BasicBlock::Create(c, "blocks_loop", fn);
  auto* step = llvm::BasicBlock::Create(c, "blocks_step", fn);
  auto* gathered = llvm::BasicBlock::Create(c, "blocks_gathered", fn);
  auto* done = llvm::BasicBlock::Create(c, "blocks_done", fn);
  b.CreateCondBr(b.CreateICmpULT(lanes.thread, b.getInt64(kWarp)), warp0, done);
  // Thread 0 publishes the block's value and counts the block in: one atomic that releases the
  // value and, in the last block, acquires the others'.
  b.SetInsertPoint(warp0);
  b.CreateCondBr(b.CreateICmpEQ(lanes.thread, b.getInt64(0)), publish, published);
  b.SetInsertPoint(publish);
  b.CreateStore(to_bits(b, block_value), b.CreateGEP(i64, split.partials, b.CreateAdd(split.first_partial, split.part)));
  auto* count_in = llvm::InlineAsm::get(llvm::FunctionType::get(i32, {b.getPtrTy()}, false),
                                        "atom.acq_rel.gpu.add.u32 $0, [$1], 1;", "=r,l,~{memory}", true);
  llvm::Value* before = b.CreateCall(count_in, {split.arrival});
  llvm::Value* last_here = b.CreateICmpEQ(b.CreateZExt(before, i64), b.CreateSub(split.parts, b.getInt64(1)));
  llvm::Value* told_here = b.CreateZExt(last_here, i32);
  // The last block sets the counter back for the next launch (which sees it: a kernel boundary).
  auto* reset = llvm::BasicBlock::Create(c, "blocks_reset", fn);
  b.CreateCondBr(last_here, reset, published);
  b.SetInsertPoint(reset);
  b.CreateStore(b.getInt32(0), split.arrival)->setVolatile(true);
  b.CreateBr(published);
  b.SetInsertPoint(published);
  llvm::PHINode* told = b.CreatePHI(i32, 3);
  told->addIncoming(b.getInt32(0), warp0);
  told->addIncoming(told_here, publish);
  told->addIncoming(told_here, reset);
  llvm::Value* last = b.CreateICmpNE(b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {},
                                                       {b.getInt32(0xffffffffu), told, b.getInt32(0), b.getInt32(0x1f)}),
                                     b.getInt32(0));
  b.CreateCondBr(last, gather, done);
  // The last block's warp 0: lane l folds partials l, l + 32, ... in order, then the lanes combine.
  b.SetInsertPoint(gather);
  // The warp's lanes read after thread 0's acquire: __syncwarp orders them after it.
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_bar_warp_sync, {}, {b.getInt32(0xffffffffu)});
  llvm::Value* lane = b.CreateAnd(lanes.thread, b.getInt64(kWarp - 1));
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* j = b.CreatePHI(i64, 2);
  llvm::PHINode* acc = b.CreatePHI(block_value->getType(), 2);
  j->addIncoming(lane, gather);
  acc->addIncoming(identity, gather);
  b.CreateCondBr(b.CreateICmpSLT(j, split.parts), step, gathered);
  b.SetInsertPoint(step);
  llvm::LoadInst* bits = b.CreateLoad(i64, b.CreateGEP(i64, split.partials, b.CreateAdd(split.first_partial, j)));
  bits->setVolatile(true);
  j->addIncoming(b.CreateAdd(j, b.getInt64(kWarp)), step);
  acc->addIncoming(fold_combine(b, fold, t, acc, from_bits(b, bits, block_value->getType())), step);
  b.CreateBr(loop);
  b.SetInsertPoint(gathered);
  llvm::Value* total = combine_across_lanes(b, fold, t, acc, Lanes{kWarp, lane, lanes.thread, std::nullopt});
  llvm::BasicBlock* total_end = b.GetInsertBlock();
  b.CreateBr(done);
  b.SetInsertPoint(done);
  llvm::PHINode* value = b.CreatePHI(block_value->getType(), 3);
  value->addIncoming(block_value, others);
  value->addIncoming(block_value, published);
  value->addIncoming(total, total_end);
  llvm::PHINode* is_whole = b.CreatePHI(b.getInt1Ty(), 3);
  is_whole->addIncoming(b.getFalse(), others);
  is_whole->addIncoming(b.getFalse(), published);
  is_whole->addIncoming(b.getTrue(), total_end);
  whole = is_whole;
  return value;
}

}  // namespace ndp::codegen
