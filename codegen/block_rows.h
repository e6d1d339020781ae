// Private to codegen: a map kernel block's rows in its shared memory (Note [Block rows]).
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "flatten/flat_ir.h"

namespace ndp::codegen {

// Note [Block rows]
// A map kernel on a few lanes an instance (`thread`, `subwarp(N)`) reads its own rows in steps
// of its lanes: at subwarp(4), a warp's load takes 4 elements from each of 8 rows, pieces of
// 32 bytes that rarely start a sector, and the next step takes the next piece of each. SpMV
// over rows of 8-24 nonzeros so asked L2 for more sectors than it moved (Nsight Compute on an
// H200: L2 94.5% busy at 187.8 µs, where cuSPARSE, loading a block's nonzeros whole into shared
// memory, took 145.4 µs; bench/results/session29).
// The instances of a block are consecutive, [first, last), and so are their own rows: the
// sequence's elements [offsets[first], offsets[last]) (KernelBody::block_rows: the sequences
// each instance reads at one row, and whole). So at the start every thread of the block copies
// that range of each component to the block's dynamic shared memory, coalesced, one component
// after another (each 8-byte aligned); a barrier; and the body reads its rows there, through a
// base that the rows' global offsets index (as Note [Staged rows] does).
// A row given by an id input (a shared argument's rows, Note [Shared arguments]: SpMV called in
// a loop of products) is the same where the block's ids are consecutive, row(first) + j for
// instance first + j, as they are where the instances map over the sequence's own rows. The
// block checks that first (each thread an instance, then a barrier that ands their answers),
// and a block whose ids are not reads global memory.
// Only a body that also gathers from another sequence copies: there the gathers take the L1
// that would have served a row's partly read sectors again. A body that reads only its rows
// (a segmented sum) lost by the copy and its barrier: on an H200, 2^24 ints summed in rows of
// 1 / 4 / 16 / 32, 3244 / 3729 / 3536 / 3567 GB/s at the best level without, 2254 / 3453 /
// 3053 / 3205 with.
// The copy loads a round of 4 elements of every component a thread before it stores any: a
// block's rows are a few elements a thread, and a copy that loaded one element at a time paid
// a memory latency for each. Measured under Nsight Compute on an H200, SpMV at subwarp(4) over
// 2^20 rows of 8-24 nonzeros: 187.6 µs (L2 94.7% busy) without block rows, 181 µs copying an
// element at a time, 157.0 µs (L2 89.7%) in rounds, where cuSPARSE takes 145.4 µs
// (bench/results/session30). Neither unrolling the fold over 2 or 4 lanes nor holding the
// kernel to 32 registers (every thread resident, and 165.6 µs) gained.
// The launch gives the shared memory (Note [Block rows launches] in exec/cuda/kernels.cpp); a
// block whose rows do not fit it (a long row, or a launch without any) reads global memory, as
// the kernel without block rows would: the answers are the same. Every thread reaches the one
// barrier, before any instance's work.
class BlockRows {
 public:
  /// Emits the copy of the block's rows of the sequences `rows` (KernelBody::block_rows) and
  /// the barrier after. `n` is the instances' number, `lanes` the threads an instance,
  /// `seq_pointer(j)` the kernel's j-th sequence pointer (Note [Sequences in loop kernels]) and
  /// `input_at(j, i)` input j of instance i (an i64 row id).
  BlockRows(llvm::IRBuilder<>& b, const flatten::KernelBody& k, const std::vector<flatten::KernelBody::StagedSeq>& rows,
            llvm::Value* n, int lanes, const std::function<llvm::Value*(uint32_t)>& seq_pointer,
            const std::function<llvm::Value*(uint32_t, llvm::Value*)>& input_at);

  /// The j-th sequence pointer as the body reads it: a staged component's elements in shared
  /// memory (as a generic pointer that the rows' global offsets index), else the kernel's.
  llvm::Value* pointer(uint32_t j);

 private:
  struct Component {
    uint32_t pointer;        // its sequence pointer's number
    llvm::AllocaInst* base;  // what pointer() gives
  };
  llvm::IRBuilder<>& b_;
  std::function<llvm::Value*(uint32_t)> global_;
  std::vector<Component> components_;
};

}  // namespace ndp::codegen
