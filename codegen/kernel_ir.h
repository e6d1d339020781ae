// Private to codegen: the LLVM IR of one instance of a kernel body, shared by the host and
// NVPTX code generators so both targets compute exactly the same thing.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "flatten/flat_ir.h"

namespace ndp::codegen {

/// The LLVM type that holds an element of a flat scalar kind in memory (bool: i8).
llvm::Type* storage_type(llvm::LLVMContext& c, const lang::Type* t);

/// An NVPTX special register (%tid.x, %ntid.x, %ctaid.x, %nctaid.x: `id` its read intrinsic) as an i64.
llvm::Value* special_register(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id);

/// The comparison `p` (Eq, Ne, Lt, Gt, Le, Ge) of two values of flat scalar type `t`, as the
/// kernels compute it (an i1): ordered for floats, unsigned for chars and bools.
llvm::Value* compare(llvm::IRBuilder<>& b, lang::core::PrimId p, const lang::Type* t, llvm::Value* x, llvm::Value* y);

/// Where calls to the math library go: the C library's functions on the host (exp, log, ...),
/// libdevice's on NVPTX (__nv_exp, __nv_log, ...: Note [Math functions on the GPU] in
/// kernel_ptx.cpp). Either computes the function within the tolerance extensions.md allows.
enum class MathLibrary { Host, Libdevice };

/// One instance's values of a kernel body.
struct InstanceValues {
  std::vector<llvm::Value*> outputs;  ///< each output, ready to store (bool as i8 0/1)
  /// For a body that can fail: an i64, kernel_failure_record(node, instance) of the first node
  /// that failed at this instance, or kNoKernelFailure (flatten/kernel_abi.h); else null.
  llvm::Value* failure = nullptr;
  /// An i1: whether this thread holds the instance's values where its one outer fold is split
  /// over blocks (BlockSplit): true in warp 0 of the last block to arrive, false elsewhere (a
  /// block's share of the fold only); null where the fold is not split (every thread does).
  llvm::Value* whole = nullptr;
};

/// Emits the nodes of `k` for instance `instance` (an i64); `load(j)` returns input j's loaded
/// value as stored in memory, and `seq_pointer(j)` the j-th pointer of the sequences a loop
/// reads (Note [Sequences in loop kernels]; never called for a body without them). A node that
/// fails yields a value without undefined behaviour.
/// The GPU threads that run one instance together (Note [Map kernels] in flatten/flat_ir.h):
/// `count` of them (1; 2 ... 32, a sub-warp or a warp; 64 ... 1024, warps of one block), this
/// thread's number `lane` (an i64) among them, and `thread` its %tid.x (lanes within a block are
/// consecutive threads, from a multiple of count). An outermost fold is spread over the lanes,
/// each folding every count-th index, and its value is combined across them; every other node
/// is computed by every lane alike.
/// An instance over several blocks (Note [Rows over several blocks] in codegen/lanes.h): its one
/// outer fold is cut into `parts` chunks, one a block, and the blocks' values are combined
/// through `partials` (an i64 of bits a block, this instance's from `first_partial` on) and
/// `arrivals` (an i32 an instance: its blocks done so far, 0 between launches).
struct BlockSplit {
  llvm::Value* parts = nullptr;          // i64
  llvm::Value* part = nullptr;           // i64: this block's chunk
  llvm::Value* first_partial = nullptr;  // i64: instance · parts
  llvm::Value* partials = nullptr;       // ptr
  llvm::Value* arrival = nullptr;        // ptr: this instance's counter
};

struct Lanes {
  int count = 1;
  llvm::Value* lane = nullptr;
  llvm::Value* thread = nullptr;
  std::optional<BlockSplit> split;  // count is then the block's threads
};

InstanceValues emit_instance(llvm::IRBuilder<>& b, const flatten::KernelBody& k, llvm::Value* instance,
                             const std::function<llvm::Value*(uint32_t)>& load, MathLibrary math,
                             const std::function<llvm::Value*(uint32_t)>& seq_pointer = nullptr, Lanes lanes = {});

/// Where a row of a sequence lies in its elements: [start, start + length).
struct RowSpan {
  llvm::Value* start;
  llvm::Value* length;
};

/// The span of row `row` (an i64) of a sequence whose offsets parameter is `offsets`: a pointer
/// to its n + 1 offsets, or, for regular rows, the one length of every row as an i64, row r
/// then starting at r·length (Note [Regular rows in kernels] in codegen/kernel_ptx.cpp).
RowSpan row_span(llvm::IRBuilder<>& b, llvm::Value* offsets, llvm::Value* row);

class FoldTiles;

/// The instances `instances` of this thread (FoldTiles' slots, in order) of a body with a tiled
/// fold (Note [Tiled folds] in flatten/tiled_folds.h), on the GPU, their folds run together
/// through the block's `tiles`: `load(r, j)` is input j of instance r. Every thread of the
/// block must come here.
std::vector<InstanceValues> emit_tiled_instances(llvm::IRBuilder<>& b, const flatten::KernelBody& k,
                                                 std::span<llvm::Value* const> instances,
                                                 const std::function<llvm::Value*(size_t, uint32_t)>& load,
                                                 const std::function<llvm::Value*(uint32_t)>& seq_pointer, FoldTiles& tiles);

}  // namespace ndp::codegen
