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
