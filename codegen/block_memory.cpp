// A block's dynamic shared memory and the loops its threads copy with.
#include "codegen/block_memory.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

namespace ndp::codegen {

llvm::GlobalVariable* dynamic_shared(llvm::Module& m) {
  const char* name = "ndp_staged_rows";
  if (llvm::GlobalVariable* g = m.getGlobalVariable(name, true)) return g;
  auto* t = llvm::ArrayType::get(llvm::Type::getInt8Ty(m.getContext()), 0);
  auto* g = new llvm::GlobalVariable(m, t, false, llvm::GlobalValue::ExternalLinkage, nullptr, name, nullptr,
                                     llvm::GlobalValue::NotThreadLocal, 3);
  g->setAlignment(llvm::Align(16));
  return g;
}

llvm::Value* dynamic_shared_bytes(llvm::IRBuilder<>& b) {
  auto* fty = llvm::FunctionType::get(b.getInt32Ty(), false);
  llvm::InlineAsm* read = llvm::InlineAsm::get(fty, "mov.u32 $0, %dynamic_smem_size;", "=r", /*hasSideEffects=*/false);
  return b.CreateZExt(b.CreateCall(fty, read), b.getInt64Ty());
}

llvm::Value* align_up(llvm::IRBuilder<>& b, llvm::Value* bytes, uint64_t to) {
  return b.CreateAnd(b.CreateAdd(bytes, b.getInt64(to - 1)), b.getInt64(~(to - 1)));
}

llvm::Value* counted_loop(llvm::IRBuilder<>& b, llvm::Value* from, llvm::Value* to, llvm::Value* step,
                          const std::function<void(llvm::Value*)>& body) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* before = b.GetInsertBlock();
  auto* head = llvm::BasicBlock::Create(b.getContext(), "stage_loop", fn);
  auto* inside = llvm::BasicBlock::Create(b.getContext(), "stage_loop_body", fn);
  auto* done = llvm::BasicBlock::Create(b.getContext(), "stage_loop_done", fn);
  b.CreateBr(head);
  b.SetInsertPoint(head);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(from, before);
  b.CreateCondBr(b.CreateICmpSLT(i, to), inside, done);
  b.SetInsertPoint(inside);
  body(i);
  i->addIncoming(b.CreateAdd(i, step), b.GetInsertBlock());
  b.CreateBr(head);
  b.SetInsertPoint(done);
  return i;
}

void emit_when(llvm::IRBuilder<>& b, llvm::Value* cond, const std::function<void()>& body) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  auto* yes = llvm::BasicBlock::Create(b.getContext(), "stage_if", fn);
  auto* join = llvm::BasicBlock::Create(b.getContext(), "stage_join", fn);
  b.CreateCondBr(cond, yes, join);
  b.SetInsertPoint(yes);
  body();
  b.CreateBr(join);
  b.SetInsertPoint(join);
}

void copy_range_by_block(llvm::IRBuilder<>& b, const std::vector<llvm::Type*>& types, const std::vector<llvm::Value*>& froms,
                         llvm::Value* from_start, const std::vector<llvm::Value*>& tos, llvm::Value* count,
                         llvm::Value* thread, llvm::Value* threads) {
  // A block's rows are a few elements a thread (SpMV at subwarp(4): 64 rows of ~16 nonzeros,
  // 4 a thread a component; a counting loop's row of 1000 keys, 8 a thread), so a round or two
  // covers them, every load of a round in flight at once.
  constexpr int kRoundLoads = 4;
  llvm::Value* last = b.CreateSub(count, b.getInt64(1));
  llvm::Value* round = b.CreateMul(threads, b.getInt64(kRoundLoads));
  counted_loop(b, thread, count, round, [&](llvm::Value* e) {
    std::vector<llvm::Value*> at, xs;
    for (int u = 0; u < kRoundLoads; ++u) at.push_back(b.CreateAdd(e, b.CreateMul(threads, b.getInt64(u))));
    for (size_t c = 0; c < types.size(); ++c)
      for (int u = 0; u < kRoundLoads; ++u) {
        llvm::Value* clamped = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, at[u], last);
        xs.push_back(b.CreateLoad(types[c], b.CreateGEP(types[c], froms[c], b.CreateAdd(from_start, clamped))));
      }
    // The first element of a round is below count (the loop's test): stored unguarded, so that
    // its loads stay with the others rather than sink into a branch of their own.
    for (int u = 0; u < kRoundLoads; ++u) {
      auto store = [&] {
        for (size_t c = 0; c < types.size(); ++c)
          b.CreateStore(xs[c * kRoundLoads + static_cast<size_t>(u)], b.CreateGEP(types[c], tos[c], at[u]));
      };
      if (u == 0)
        store();
      else
        emit_when(b, b.CreateICmpULT(at[u], count), store);
    }
  });
}

void zero_range_by_block(llvm::IRBuilder<>& b, llvm::Type* t, llvm::Value* to, llvm::Value* count, llvm::Value* thread,
                         llvm::Value* threads) {
  counted_loop(b, thread, count, threads,
               [&](llvm::Value* e) { b.CreateStore(llvm::Constant::getNullValue(t), b.CreateGEP(t, to, e)); });
}

void block_barrier(llvm::IRBuilder<>& b) { b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

}  // namespace ndp::codegen
