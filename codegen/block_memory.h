// Private to codegen: a block's dynamic shared memory, and the loops its threads copy with
// (Notes [Staged rows] in codegen/staged_rows.h and [Block rows] in codegen/block_rows.h).
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace ndp::codegen {

/// The block's dynamic shared memory (`extern __shared__`), one per module.
llvm::GlobalVariable* dynamic_shared(llvm::Module& m);

/// %dynamic_smem_size, the shared bytes this launch gave each block, as an i64.
llvm::Value* dynamic_shared_bytes(llvm::IRBuilder<>& b);

/// `bytes` (an i64) rounded up to a multiple of `to`, a power of two.
llvm::Value* align_up(llvm::IRBuilder<>& b, llvm::Value* bytes, uint64_t to);

/// A loop over i = from, from + step, ... below `to` (i64s), body(i) inside; returns the i it
/// ended at (the first not below `to`).
llvm::Value* counted_loop(llvm::IRBuilder<>& b, llvm::Value* from, llvm::Value* to, llvm::Value* step,
                          const std::function<void(llvm::Value*)>& body);

/// Emits body() where `cond` (an i1) holds, then a join.
void emit_when(llvm::IRBuilder<>& b, llvm::Value* cond, const std::function<void()>& body);

/// Zeros of type t into to[0, count), thread `thread` of `threads` (i64s) storing its share.
void zero_range_by_block(llvm::IRBuilder<>& b, llvm::Type* t, llvm::Value* to, llvm::Value* count, llvm::Value* thread,
                         llvm::Value* threads);

/// Elements [from_start, from_start + count) of each array froms[c] (of type types[c]) to
/// tos[c][0, count), thread `thread` of `threads` (i64s) copying its share: each round a thread
/// loads kRoundLoads elements of every array before it stores any, so their latencies overlap
/// (an element past the end loads the last one again and is not stored).
void copy_range_by_block(llvm::IRBuilder<>& b, const std::vector<llvm::Type*>& types, const std::vector<llvm::Value*>& froms,
                         llvm::Value* from_start, const std::vector<llvm::Value*>& tos, llvm::Value* count,
                         llvm::Value* thread, llvm::Value* threads);

/// bar.sync 0: every thread of the block waits for the others.
void block_barrier(llvm::IRBuilder<>& b);

}  // namespace ndp::codegen
