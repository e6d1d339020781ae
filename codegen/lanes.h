// Private to codegen: a fold's value combined across the GPU threads that run one instance
// (Lanes in kernel_ir.h, Note [Map kernels] in flatten/flat_ir.h).
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "codegen/kernel_ir.h"

namespace ndp::codegen {

/// `acc ⊕ x` for the reduction `fold` (sum, product, max_val, min_val, all, any, parity) at
/// flat scalar type `t`, as the fold's own step combines (an extreme replaces acc only when
/// strictly better).
llvm::Value* fold_combine(llvm::IRBuilder<>& b, lang::core::PrimId fold, const lang::Type* t, llvm::Value* acc, llvm::Value* x);

/// Every lane's `acc` (this lane's share of a fold, whose identity each lane started from)
/// combined by fold_combine over the `lanes`: a butterfly of warp shuffles, then, for lanes
/// past a warp, the warps' values through shared memory between two barriers. Every lane of
/// every instance must reach it. Each lane gets the value.
llvm::Value* combine_across_lanes(llvm::IRBuilder<>& b, lang::core::PrimId fold, const lang::Type* t, llvm::Value* acc,
                                  const Lanes& lanes);

// Note [Rows over several blocks]
// A map kernel at `block` gives an instance 256 threads; where the instances are fewer than the
// blocks the GPU holds at once (a sum of 16 rows of 2^20), most of the GPU would idle, and the
// flattened form pays several launches of its segmented primitives a call. So a body with one
// outer fold may spread each instance over `parts` blocks (a kernel form of its own, SplitRows;
// the dispatch's choice, map_kernel_parts in exec/cuda/map_lanes.h): block c of the instance
// folds chunk c of the fold's indices, [c·chunk, (c + 1)·chunk) with chunk = ceil(count / parts)
// rounded up to a multiple of the block, over its lanes as ever. Then its warp 0 goes on alone
// (the other warps are done): thread 0 stores the block's value in its slot of `partials` and
// counts the block in the instance's `arrivals` word with one atomic add that releases the
// value and acquires the other blocks' (atom.acq_rel.gpu). The block that counts last sets the
// counter back to 0 for the next launch, and its warp 0 combines the partials, each lane a
// strided share from the fold's identity, then across the warp by shuffles (a fixed order: the
// same value at every run with the same parts); only that warp's values are whole, so only it
// stores the outputs and reports failures of the nodes after the fold (a failure inside the
// fold counts in every block, as it does on every lane). The partials are read with volatile
// loads, past the SM's L1, which may hold an older launch's values.
// Lanes 1-31 learn of the count through a shuffle, which orders no memory, so the warp meets
// at __syncwarp (which does) before they read the partials. The counter is read and written
// by the atomic at a generic address: the kernel's pointers are global ones.
// This tail runs after the instance's last block, on the kernel's critical path. Nsight
// Compute on an H200, 2048 blocks of 8192 ints: 32.8-33.1 µs as 2048 rows, a block each; as
// 128 rows in 16 parts, 36.2 µs with a block-wide wait for the count and two fences
// (membar.gl), 35.2 µs in the form above (bench/results/session28).

/// The fold's value `block_value` (every lane's, after combine_across_lanes) combined over the
/// instance's blocks in `split`, starting from the fold's `identity`. Every thread of the block
/// must reach it. `whole` comes back true in warp 0 of the last block to arrive, which gets the
/// combined value; every other thread gets false and its own `block_value` back.
llvm::Value* combine_across_blocks(llvm::IRBuilder<>& b, lang::core::PrimId fold, const lang::Type* t, llvm::Value* block_value,
                                   llvm::Value* identity, const Lanes& lanes, llvm::Value*& whole);

}  // namespace ndp::codegen
