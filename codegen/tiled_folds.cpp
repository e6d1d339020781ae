// A block's tiles of the rows its tiled fold reads (Note [Tiled folds] in flatten/tiled_folds.h).
#include "codegen/tiled_folds.h"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <string>

#include "codegen/kernel_ir.h"

namespace ndp::codegen {

namespace {

/// A tile's row in elements: the chunk and 16 bytes more. Rows stay 16-byte aligned, so that the
/// unrolled fold reads 16 bytes of its row at once (LLVM's load-store vectoriser makes
/// ld.shared.v4 of four floats), and the rows of one column start 16 bytes apart in the banks,
/// so that the 16 threads reading 16 rows at the same index hit different banks.
int64_t stride_of(llvm::Type* t) { return FoldTiles::kChunk + 16 / static_cast<int64_t>(t->getPrimitiveSizeInBits() / 8); }

llvm::GlobalVariable* shared_array(llvm::Module& m, llvm::Type* t, uint64_t count, const std::string& name) {
  auto* at = llvm::ArrayType::get(t, count);
  auto* g = new llvm::GlobalVariable(m, at, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(at), name,
                                     nullptr, llvm::GlobalValue::NotThreadLocal, 3);
  g->setAlignment(llvm::Align(16));
  return g;
}

}  // namespace

FoldTiles::FoldTiles(llvm::IRBuilder<>& b, const flatten::KernelBody& k, flatten::TiledFold shape, llvm::Value* n,
                     llvm::Value* columns, const std::function<llvm::Value*(uint32_t, llvm::Value*)>& input_at,
                     std::function<llvm::Value*(uint32_t)> seq_pointer)
    : b_(b), k_(k), shape_(std::move(shape)), seq_pointer_(std::move(seq_pointer)) {
  llvm::Module& m = *b.GetInsertBlock()->getModule();
  llvm::Type* i64 = b.getInt64Ty();
  thread_ = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  // The square: its first row i0 and column j0; thread (y, x)'s instances.
  llvm::Value* rows = b.CreateUDiv(n, columns);
  llvm::Value* across = b.CreateUDiv(b.CreateAdd(columns, b.getInt64(kSquare - 1)), b.getInt64(kSquare));
  llvm::Value* square = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  llvm::Value* i0 = b.CreateMul(b.CreateUDiv(square, across), b.getInt64(kSquare));
  llvm::Value* j0 = b.CreateMul(b.CreateURem(square, across), b.getInt64(kSquare));
  auto clamp = [&](llvm::Value* x, llvm::Value* bound) {
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, x, b.CreateSub(bound, b.getInt64(1)));
  };
  auto instance_at = [&](llvm::Value* row, llvm::Value* column) {
    return b.CreateAdd(b.CreateMul(clamp(row, rows), columns), clamp(column, columns));
  };
  for (int a = 0; a < kMicro; ++a)
    for (int c = 0; c < kMicro; ++c) {
      llvm::Value* i = b.CreateAdd(i0, b.CreateAdd(b.CreateUDiv(thread_, b.getInt64(kSide)), b.getInt64(kSide * a)));
      llvm::Value* j = b.CreateAdd(j0, b.CreateAdd(b.CreateURem(thread_, b.getInt64(kSide)), b.getInt64(kSide * c)));
      in_grid_.push_back(b.CreateAnd(b.CreateICmpULT(i, rows), b.CreateICmpULT(j, columns)));
      instances_.push_back(instance_at(i, j));
    }
  // Row r of the square is read by the instance in its first column, column r by the one in
  // its first row: the grid's rows are constant along a row, its columns down a column.
  auto row_id = [&](bool by_columns, llvm::Value* r) {
    return by_columns ? input_at(shape_.columns, instance_at(i0, b.CreateAdd(j0, r)))
                      : input_at(shape_.rows, instance_at(b.CreateAdd(i0, r), j0));
  };
  for (size_t t = 0; t < shape_.tiles.size(); ++t) {
    const flatten::TiledFold::Tile& tile = shape_.tiles[t];
    llvm::Type* type = storage_type(b.getContext(), k.seqs.at(tile.seq).components.at(tile.component));
    tiles_.push_back(shared_array(m, type, static_cast<uint64_t>(kSquare * stride_of(type)), "ndp_tile_" + std::to_string(t)));
    const bool seen = std::any_of(rows_.begin(), rows_.end(), [&](const Rows& r) { return r.seq == tile.seq && r.columns == tile.columns; });
    if (!seen) {
      const std::string name = "ndp_tile_rows_" + std::to_string(rows_.size());
      rows_.push_back({tile.seq, tile.columns, shared_array(m, i64, kSquare, name + "_starts"),
                       shared_array(m, i64, kSquare, name + "_lengths")});
    }
  }
  most_ = shared_array(m, i64, 1, "ndp_tile_most");
  // Thread p·kSquare + r finds where row (or column) r of the square lies in sequence p's rows.
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  for (size_t p = 0; p < rows_.size(); ++p) {
    auto* mine = llvm::BasicBlock::Create(b.getContext(), "tile_rows", fn);
    auto* next = llvm::BasicBlock::Create(b.getContext(), "tile_rows_done", fn);
    llvm::Value* r = b.CreateSub(thread_, b.getInt64(p * kSquare));
    b.CreateCondBr(b.CreateICmpULT(r, b.getInt64(kSquare)), mine, next);
    b.SetInsertPoint(mine);
    llvm::Value* id = row_id(rows_[p].columns, r);
    const RowSpan span = row_span(b, seq_pointer_(static_cast<uint32_t>(k.seq_pointer(rows_[p].seq))), id);
    b.CreateStore(span.start, at(rows_[p].starts, r));
    b.CreateStore(span.length, at(rows_[p].lengths, r));
    b.CreateBr(next);
    b.SetInsertPoint(next);
  }
  barrier();
}

std::pair<llvm::Value*, llvm::Value*> FoldTiles::decide(llvm::Value* count, llvm::Value* in_range) {
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  auto* first = llvm::BasicBlock::Create(b_.getContext(), "tile_most", fn);
  auto* next = llvm::BasicBlock::Create(b_.getContext(), "tile_most_done", fn);
  b_.CreateCondBr(b_.CreateICmpEQ(thread_, b_.getInt64(0)), first, next);
  b_.SetInsertPoint(first);
  b_.CreateStore(b_.getInt64(0), at(most_, b_.getInt64(0)));
  b_.CreateBr(next);
  b_.SetInsertPoint(next);
  barrier();
  b_.CreateAtomicRMW(llvm::AtomicRMWInst::Max, at(most_, b_.getInt64(0)), count, llvm::MaybeAlign(8),
                     llvm::AtomicOrdering::Monotonic);
  // bar.red.and: a barrier (after which the maximum is whole) that also ands every thread's word.
  llvm::Value* all = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0_and, {}, {b_.CreateZExt(in_range, b_.getInt32Ty())});
  llvm::Value* most = b_.CreateLoad(b_.getInt64Ty(), at(most_, b_.getInt64(0)));
  return {b_.CreateICmpNE(all, b_.getInt32(0)), most};
}

void FoldTiles::load(llvm::Value* k0) {
  llvm::Type* i64 = b_.getInt64Ty();
  barrier();  // every thread is done with the last chunk
  // Element c of row r of the chunk, for idx = r·kChunk + c from this thread by the block's
  // size: a warp reads a row's chunk, coalesced. Every load is made before any store, so that
  // they are in flight together; an index past its row reads element 0 of the sequence (which
  // has one: some row is longer than the chunk's start) and stores 0.
  std::vector<std::pair<llvm::Value*, llvm::Value*>> stores;  // (where, what)
  for (size_t t = 0; t < tiles_.size(); ++t) {
    const flatten::TiledFold::Tile& tile = shape_.tiles[t];
    const Rows& rows = rows_of(tile);
    llvm::Type* type = tiles_[t]->getValueType()->getArrayElementType();
    const uint32_t component = static_cast<uint32_t>(k_.seq_pointer(tile.seq)) + 1 + tile.component;
    for (int u = 0; u < kSquare * kChunk / (kSide * kSide); ++u) {
      llvm::Value* idx = b_.CreateAdd(thread_, b_.getInt64(static_cast<uint64_t>(u * kSide * kSide)));
      llvm::Value* r = b_.CreateUDiv(idx, b_.getInt64(kChunk));
      llvm::Value* c = b_.CreateURem(idx, b_.getInt64(kChunk));
      llvm::Value* index = b_.CreateAdd(k0, c);
      llvm::Value* inside = b_.CreateICmpSLT(index, b_.CreateLoad(i64, at(rows.lengths, r)));
      llvm::Value* from = b_.CreateSelect(inside, b_.CreateAdd(b_.CreateLoad(i64, at(rows.starts, r)), index), b_.getInt64(0));
      llvm::Value* x = b_.CreateLoad(type, b_.CreateGEP(type, seq_pointer_(component), from));
      stores.emplace_back(at(tiles_[t], b_.CreateAdd(b_.CreateMul(r, b_.getInt64(stride_of(type))), c)),
                          b_.CreateSelect(inside, x, llvm::Constant::getNullValue(type)));
    }
  }
  for (const auto& [where, what] : stores) b_.CreateStore(what, where);
  barrier();  // the chunk is whole
}

llvm::Value* FoldTiles::read(size_t t, llvm::Value* kk, int slot) {
  const bool columns = shape_.tiles.at(t).columns;
  llvm::Value* mine = columns ? b_.CreateURem(thread_, b_.getInt64(kSide)) : b_.CreateUDiv(thread_, b_.getInt64(kSide));
  mine = b_.CreateAdd(mine, b_.getInt64(static_cast<uint64_t>(kSide * (columns ? slot % kMicro : slot / kMicro))));
  llvm::Type* type = tiles_[t]->getValueType()->getArrayElementType();
  return b_.CreateLoad(type, at(tiles_[t], b_.CreateAdd(b_.CreateMul(mine, b_.getInt64(stride_of(type))), kk)));
}

const FoldTiles::Rows& FoldTiles::rows_of(const flatten::TiledFold::Tile& t) const {
  for (const Rows& r : rows_)
    if (r.seq == t.seq && r.columns == t.columns) return r;
  return rows_.front();  // every tile has its rows (the constructor)
}

llvm::Value* FoldTiles::at(llvm::GlobalVariable* array, llvm::Value* i) {
  return b_.CreateInBoundsGEP(array->getValueType(), array, {b_.getInt64(0), i});
}

void FoldTiles::barrier() { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

}  // namespace ndp::codegen
