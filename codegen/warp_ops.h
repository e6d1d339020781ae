// Private to codegen: operations of the 32 lanes of a warp that run one thing together (Note
// [Multiprefix loops] in flatten/flat_ir.h). Every lane of the warp must reach each of them.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace ndp::codegen {

/// This thread's lane in its warp (%laneid), an i32.
llvm::Value* warp_lane(llvm::IRBuilder<>& b);
/// The lanes below this one (%lanemask_lt), an i32 mask.
llvm::Value* lanes_below(llvm::IRBuilder<>& b);
/// The lanes whose `pred` (an i1) holds, an i32 mask.
llvm::Value* warp_ballot(llvm::IRBuilder<>& b, llvm::Value* pred);
/// The lanes whose `value` (an i64) equals this lane's, an i32 mask (match.any).
llvm::Value* warp_match(llvm::IRBuilder<>& b, llvm::Value* value);
/// The lanes whose `index` (an i64) equals this lane's, among those whose `inside` (an i1:
/// index < length) holds, an i32 mask, for a lane whose index is inside; `length` (an i64) is
/// the same in every lane. By ballots of the index's bits where length - 1 has few, else
/// match.any (Note [Peers by ballots]).
llvm::Value* warp_peers(llvm::IRBuilder<>& b, llvm::Value* index, llvm::Value* inside, llvm::Value* length);
/// `value` (an i64) of lane `lane` (an i32).
llvm::Value* warp_read_lane(llvm::IRBuilder<>& b, llvm::Value* value, llvm::Value* lane);
/// __syncwarp(): the lanes meet, and their memory accesses before it happen before those after.
void warp_sync(llvm::IRBuilder<>& b);

}  // namespace ndp::codegen
