// Private to codegen: a block's tiles of the rows its tiled fold reads (Note [Tiled folds] in
// flatten/tiled_folds.h).
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "flatten/tiled_folds.h"

namespace ndp::codegen {

/// A block of kSide × kSide threads runs the instances of a kSquare × kSquare square of the
/// grid, kMicro × kMicro of them a thread: thread (y, x) = (%tid.x / kSide, %tid.x % kSide)
/// runs the instances of grid rows i0 + y + kSide·a and columns j0 + x + kSide·c for a, c <
/// kMicro, its slot a·kMicro + c, all of whose folds go step by step together, so that each
/// value read from a tile serves kMicro of them. The tiles hold, for a chunk of kChunk fold
/// indices, that chunk of the square's rows (by y) or columns (by x) of each tile's sequence
/// component.
class FoldTiles {
 public:
  static constexpr int kSide = 16;
  static constexpr int kMicro = 2;
  static constexpr int kSquare = kSide * kMicro;
  static constexpr int kChunk = 32;

  /// Emits, at the kernel's start, this block's square of the grid of `n` instances in
  /// `columns` columns (i64s; block %ctaid.x is square %ctaid.x in row-major order) and where
  /// each of its rows and columns lies: `input_at(j, i)` is input j of instance i, and
  /// `seq_pointer(j)` the kernel's j-th sequence pointer (Note [Sequences in loop kernels]).
  FoldTiles(llvm::IRBuilder<>& b, const flatten::KernelBody& k, flatten::TiledFold shape, llvm::Value* n,
            llvm::Value* columns, const std::function<llvm::Value*(uint32_t, llvm::Value*)>& input_at,
            std::function<llvm::Value*(uint32_t)> seq_pointer);

  const flatten::TiledFold& shape() const { return shape_; }
  /// This thread's instances, in slot order, clamped to the grid where the square passes its
  /// edge; and whether each lies inside the grid (only those store and fail, but every thread
  /// reaches the barriers).
  const std::vector<llvm::Value*>& instances() const { return instances_; }
  const std::vector<llvm::Value*>& in_grid() const { return in_grid_; }

  /// Whether the block folds from the tiles (an i1, the same in every thread): every thread's
  /// rows reach its folds' counts (`in_range`); and the block's largest count (`count` the
  /// thread's largest), up to which its chunks run. A barrier.
  std::pair<llvm::Value*, llvm::Value*> decide(llvm::Value* count, llvm::Value* in_range);

  /// Emits the copy of fold indices [k0, k0 + kChunk) of the square's rows into the tiles,
  /// between two barriers (an index past a row's end reads as 0).
  void load(llvm::Value* k0);

  /// Element kk (an i64 below kChunk) of tile t for this thread's instance `slot`, as stored.
  llvm::Value* read(size_t t, llvm::Value* kk, int slot);

 private:
  llvm::IRBuilder<>& b_;
  const flatten::KernelBody& k_;
  flatten::TiledFold shape_;
  std::function<llvm::Value*(uint32_t)> seq_pointer_;
  llvm::Value* thread_ = nullptr;
  std::vector<llvm::Value*> instances_, in_grid_;
  std::vector<llvm::GlobalVariable*> tiles_;  // [kSide][kChunk + 1] of the component's storage type
  /// Per (sequence, side) the tiles read: the square's rows' first elements and lengths.
  struct Rows {
    uint32_t seq;
    bool columns;
    llvm::GlobalVariable* starts;  // [kSquare] i64 in shared memory
    llvm::GlobalVariable* lengths;
  };
  std::vector<Rows> rows_;
  llvm::GlobalVariable* most_ = nullptr;  // the block's largest count
  const Rows& rows_of(const flatten::TiledFold::Tile& t) const;
  llvm::Value* at(llvm::GlobalVariable* array, llvm::Value* i);
  void barrier();
};

}  // namespace ndp::codegen
