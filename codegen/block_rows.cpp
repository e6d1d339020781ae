// A map kernel block's rows in its shared memory (Note [Block rows]).
#include "codegen/block_rows.h"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include "codegen/block_memory.h"
#include "codegen/kernel_ir.h"

namespace ndp::codegen {

BlockRows::BlockRows(llvm::IRBuilder<>& b, const flatten::KernelBody& k, const std::vector<flatten::KernelBody::StagedSeq>& rows,
                     llvm::Value* n, int lanes, const std::function<llvm::Value*(uint32_t)>& seq_pointer,
                     const std::function<llvm::Value*(uint32_t, llvm::Value*)>& input_at)
    : b_(b), global_(seq_pointer) {
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());
  llvm::Value* thread = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  llvm::Value* threads = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  llvm::Value* per_block = b.CreateUDiv(threads, b.getInt64(static_cast<uint64_t>(lanes)));
  // The block's instances [first, last); the grid has no block past n, but a first past it
  // would read past the offsets, so it is held at n - 1.
  llvm::Value* last_instance = b.CreateSub(n, b.getInt64(1));
  llvm::Value* first = b.CreateMul(special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), per_block);
  first = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, first, last_instance);
  llvm::Value* last = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b.CreateAdd(first, per_block), n);
  auto row_of = [&](const flatten::KernelBody::StagedSeq& s, llvm::Value* i) {
    const flatten::KernelNode& row = k.nodes[s.row];
    return row.kind == flatten::KernelNode::Kind::Instance ? i : input_at(row.input, i);
  };
  // Rows given by ids: this thread's instance, first + thread, has row(first) + thread.
  llvm::Value* consecutive = b.getTrue();
  llvm::Value* mine = b.CreateAdd(first, thread);
  llvm::Value* checks = b.CreateICmpULT(mine, last);
  for (const flatten::KernelBody::StagedSeq& s : rows) {
    if (k.nodes[s.row].kind == flatten::KernelNode::Kind::Instance) continue;
    llvm::AllocaInst* holds = entry.CreateAlloca(b.getInt1Ty());
    b.CreateStore(b.getTrue(), holds);
    emit_when(b, checks, [&] {
      b.CreateStore(b.CreateICmpEQ(row_of(s, mine), b.CreateAdd(row_of(s, first), thread)), holds);
    });
    consecutive = b.CreateAnd(consecutive, b.CreateLoad(b.getInt1Ty(), holds));
  }
  if (consecutive != b.getTrue()) {
    llvm::Value* all = b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0_and, {}, {b.CreateZExt(consecutive, b.getInt32Ty())});
    consecutive = b.CreateICmpNE(all, b.getInt32(0));
  }
  struct Range {
    llvm::Value* start;
    llvm::Value* count;
  };
  std::vector<Range> ranges;  // by component
  llvm::Value* bytes = b.getInt64(0);
  for (const flatten::KernelBody::StagedSeq& s : rows) {
    const uint32_t offsets = static_cast<uint32_t>(k.seq_pointer(s.seq));
    const RowSpan head = row_span(b, global_(offsets), row_of(s, first));
    const RowSpan tail = row_span(b, global_(offsets), row_of(s, b.CreateSub(last, b.getInt64(1))));
    llvm::Value* count = b.CreateSub(b.CreateAdd(tail.start, tail.length), head.start);
    for (uint32_t c = 0; c < k.seqs[s.seq].components.size(); ++c) {
      llvm::Type* t = storage_type(b.getContext(), k.seqs[s.seq].components[c]);
      components_.push_back({offsets + 1 + c, entry.CreateAlloca(b.getPtrTy())});
      b.CreateStore(global_(offsets + 1 + c), components_.back().base);
      ranges.push_back({head.start, count});
      bytes = b.CreateAdd(bytes, align_up(b, b.CreateMul(count, b.getInt64(t->getPrimitiveSizeInBits() / 8)), 8));
    }
  }
  // The same in every thread of the block: all copy, or none.
  llvm::Value* shared = b.CreateAddrSpaceCast(dynamic_shared(*fn->getParent()), b.getPtrTy());
  emit_when(b, b.CreateAnd(consecutive, b.CreateICmpULE(bytes, dynamic_shared_bytes(b))), [&] {
    llvm::Value* at = b.getInt64(0);
    size_t r = 0;
    for (const flatten::KernelBody::StagedSeq& s : rows) {
      // The components of one sequence share their range: one copy, all their loads at once.
      std::vector<llvm::Type*> types;
      std::vector<llvm::Value*> froms, tos;
      const Range& range = ranges[r];
      for (const lang::Type* component : k.seqs[s.seq].components) {
        llvm::Type* t = storage_type(b.getContext(), component);
        Component& c = components_[r++];
        types.push_back(t);
        froms.push_back(global_(c.pointer));
        tos.push_back(b.CreateGEP(b.getInt8Ty(), shared, at));
        // Element e of the range is at at + (e - start)·size: a base that global offsets index,
        // made as an integer, since it lies outside the shared window (Note [Staged rows]).
        const uint64_t size = t->getPrimitiveSizeInBits() / 8;
        llvm::Value* moved = b.CreateSub(at, b.CreateMul(range.start, b.getInt64(size)));
        b.CreateStore(b.CreateIntToPtr(b.CreateAdd(b.CreatePtrToInt(shared, i64), moved), b.getPtrTy()), c.base);
        at = b.CreateAdd(at, align_up(b, b.CreateMul(range.count, b.getInt64(size)), 8));
      }
      copy_range_by_block(b, types, froms, range.start, tos, range.count, thread, threads);
    }
  });
  block_barrier(b);
}

llvm::Value* BlockRows::pointer(uint32_t j) {
  for (const Component& c : components_)
    if (c.pointer == j) return b_.CreateLoad(b_.getPtrTy(), c.base);
  return global_(j);
}

}  // namespace ndp::codegen
