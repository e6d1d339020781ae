// Warp-wide operations (codegen/warp_ops.h).
#include "codegen/warp_ops.h"

#include <llvm/IR/IntrinsicsNVPTX.h>

namespace ndp::codegen {

namespace {
constexpr uint32_t kWholeWarp = 0xffffffffu;
}  // namespace

llvm::Value* warp_lane(llvm::IRBuilder<>& b) { return b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_laneid, {}, {}); }

llvm::Value* lanes_below(llvm::IRBuilder<>& b) {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_lanemask_lt, {}, {});
}

llvm::Value* warp_ballot(llvm::IRBuilder<>& b, llvm::Value* pred) {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_vote_ballot_sync, {}, {b.getInt32(kWholeWarp), pred});
}

llvm::Value* warp_match(llvm::IRBuilder<>& b, llvm::Value* value) {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_match_any_sync_i64, {}, {b.getInt32(kWholeWarp), value});
}

// Note [Peers by ballots]
// match.any finds a multiprefix chunk's lanes of one index, but on an H200 it took ~700 cycles a
// chunk of 32 lanes with as many indices (a counting loop's keys over 256 buckets: half of the
// loop's samples, Nsight Compute, session 49). An index below a length of B bits is the same as
// another exactly where all B bits are: B ballots, a bit each, and'd (the way CUB's warp
// ranking matches radix digits). Only lanes whose index is inside take part: an index out of
// bounds shares the low bits of one inside (its lane fails, or does not read or write).
constexpr int kMostBallotBits = 12;

namespace {

/// `same` and'd with the lanes whose bits [from, to) of `index` (an i32) are this lane's.
llvm::Value* and_bit_ballots(llvm::IRBuilder<>& b, llvm::Value* same, llvm::Value* index, int from, int to) {
  for (int bit = from; bit < to; ++bit) {
    llvm::Value* set = b.CreateICmpNE(b.CreateAnd(index, b.getInt32(1u << bit)), b.getInt32(0));
    llvm::Value* lanes_set = warp_ballot(b, set);
    same = b.CreateAnd(same, b.CreateSelect(set, lanes_set, b.CreateNot(lanes_set)));
  }
  return same;
}

}  // namespace

llvm::Value* warp_peers(llvm::IRBuilder<>& b, llvm::Value* index, llvm::Value* inside, llvm::Value* length) {
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::Value* valid = warp_ballot(b, inside);
  // The index's bits that can differ: those of length - 1. Straight-line ballots of the low 8,
  // and of 4 more where needed: a bit past them is 0 in every index inside, so a ballot of it
  // changes nothing, and a loop over exactly the bits spent more on its branches than on them.
  llvm::Value* most = b.CreateSub(length, b.getInt64(1));
  auto* ballots = llvm::BasicBlock::Create(b.getContext(), "peer_ballots", fn);
  auto* more = llvm::BasicBlock::Create(b.getContext(), "peer_ballots_more", fn);
  auto* matched = llvm::BasicBlock::Create(b.getContext(), "peer_match", fn);
  auto* done = llvm::BasicBlock::Create(b.getContext(), "peers", fn);
  b.CreateCondBr(b.CreateICmpULT(most, b.getInt64(uint64_t{1} << kMostBallotBits)), ballots, matched);
  b.SetInsertPoint(ballots);
  llvm::Value* low = b.CreateTrunc(index, i32);
  llvm::Value* same8 = and_bit_ballots(b, valid, low, 0, 8);
  llvm::BasicBlock* after8 = b.GetInsertBlock();
  b.CreateCondBr(b.CreateICmpULT(most, b.getInt64(uint64_t{1} << 8)), done, more);
  b.SetInsertPoint(more);
  llvm::Value* same12 = and_bit_ballots(b, same8, low, 8, kMostBallotBits);
  llvm::BasicBlock* after12 = b.GetInsertBlock();
  b.CreateBr(done);
  b.SetInsertPoint(matched);
  llvm::Value* by_match = warp_match(b, index);
  b.CreateBr(done);
  b.SetInsertPoint(done);
  llvm::PHINode* peers = b.CreatePHI(i32, 3);
  peers->addIncoming(same8, after8);
  peers->addIncoming(same12, after12);
  peers->addIncoming(by_match, matched);
  return peers;
}

llvm::Value* warp_read_lane(llvm::IRBuilder<>& b, llvm::Value* value, llvm::Value* lane) {
  auto shuffle = [&](llvm::Value* word) {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {}, {b.getInt32(kWholeWarp), word, lane, b.getInt32(0x1f)});
  };
  llvm::Value* low = shuffle(b.CreateTrunc(value, b.getInt32Ty()));
  llvm::Value* high = shuffle(b.CreateTrunc(b.CreateLShr(value, 32), b.getInt32Ty()));
  return b.CreateOr(b.CreateZExt(low, b.getInt64Ty()), b.CreateShl(b.CreateZExt(high, b.getInt64Ty()), 32));
}

void warp_sync(llvm::IRBuilder<>& b) { b.CreateIntrinsic(llvm::Intrinsic::nvvm_bar_warp_sync, {}, {b.getInt32(kWholeWarp)}); }

}  // namespace ndp::codegen
