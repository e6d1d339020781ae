// Private to codegen: a loop kernel's rows in its block's shared memory (Note [Staged rows]).
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "flatten/flat_ir.h"

namespace ndp::codegen {

// Note [Staged rows]
// A loop kernel's instance (Note [Loop kernels]) runs its whole loop on one GPU thread, and a
// row it reads or changes step after step (`ds[i]` of its block of keys, `rep(counts, c + 1,
// d)`: a counting loop) is a chain of dependent global-memory accesses, ~0.5 µs a step through
// L2, uncoalesced, since the thread's neighbours read rows kilobytes away.
// KernelBody::staged_seqs names the sequences each instance reads at one row that the loop
// never changes: its own row, or a shared sequence's row whose id it passes on. Their rows go
// to the block's dynamic shared memory for the loop:
//
//   A block runs instances [first, first + per_block) on its first per_block threads, where
//   per_block = ceil(n / blocks): the executor may launch more threads than instances, so
//   that a block of few long loops has many threads to copy with (Note [Staging launches] in
//   exec/cuda/kernels.cpp). A multiprefix loop (a warp an instance) runs them on its first
//   per_block warps, its rows staged alike: the keys a chunk reads and the counts it adds to
//   are then shared memory a few dozen cycles away, where from global memory a chunk waited
//   for a key's load, then for its count's (0.8 µs a chunk, bench/results/session47).
//   At the start, if the block's records fit the bytes the launch gave (%dynamic_smem_size),
//   each instance writes a record of its rows (where each starts, its length, and the bytes
//   of all of them) at the front; an exclusive scan of the bytes places the instances' rows one
//   after another (each component 8-byte aligned); if those fit too, every thread of the
//   block copies row after row, coalesced; a barrier. A multiprefix loop's warp copies its own
//   instance's rows instead, there and back: row after row by the whole block, every warp
//   had passed every row's setup, ~276 instructions a row, a third of a counting loop's
//   samples (Nsight Compute, H200, session 49).
//   Every instance then reads and writes its rows there, a few dozen cycles a step.
//   The kernel runs the loop in two versions, one for a block whose rows fit and one for a
//   block whose rows stay in global memory: in the first every access to a staged row is
//   ld.shared or st.shared. Through generic pointers (one version for both) each access
//   also moved its address's descriptor into uniform registers, ~34 instructions a step of a
//   counting loop, at a warp's latency of ~5 cycles each (Nsight Compute, H200).
//   At the end, a barrier, and the written sequences' rows go back to global memory.
//
// A block whose rows do not fit (irregular rows, or a launch without shared memory) uses the
// rows in global memory, as an unstaged kernel does: the answers are the same either way. Every
// thread of the block reaches every barrier, so no thread returns early.
//
// Note [Zeroed rows]
// A loop's written sequence often starts as zeros: a count's dist(0, 256) in every instance.
// The executor had filled a copy of it (a launch), and the kernel copied the zeros in: where
// the host knows the rows are zeros (Note [Known values] in exec/cuda/device_vec.cpp), the
// kernel zeroes its staged rows in shared memory instead, and a block whose rows do not fit
// zeroes its instances' rows in global memory before the loop, as a warp's loop does its
// own-slot rows, which it does not stage (`places`, dist(0, #d)); the executor only allocates
// them (RowForms::zeroed in flatten/kernel_abi.h).
//
// Note [Sourced rows]
// A written sequence that does not start as zeros (a placing loop's next free positions, its
// `starts` row) was copied by the host into a buffer of its own, which the kernel then changed:
// a copy on the device's stream, some 3.5 µs of the host's like a launch (the H200 machine's
// driver calls, bench/results/session49/start/launch_rate.txt). Instead, the kernel takes the
// sequence's arrays as sources beside its written buffers, which the executor only allocates,
// and copies each instance's rows from them where it would zero a zeroed row: into shared
// memory, or in global memory where a block's rows do not fit or a warp's loop does not stage
// them (RowForms::sourced).
class StagedRows {
 public:
  /// Emits, at the kernel's start, the records and the copy of the rows of the staged
  /// sequences `staged` (KernelBody::staged_seqs) into shared memory, and the barrier after.
  /// `n` is the instances' number, `seq_pointer(j)` the kernel's j-th sequence pointer (Note
  /// [Sequences in loop kernels]) and `input_at(j, i)` input j of instance i (an i64 row id).
  /// `lanes` threads run an instance: 1, or a warp's 32 for a multiprefix loop (Note
  /// [Multiprefix loops] in flatten/flat_ir.h), whose warp g of the block runs the block's
  /// instance g.
  /// Bit q of `zeroed` says that written sequence q starts as zeros (Note [Zeroed rows]);
  /// `source_of(j)`, where not null, is the array whose rows sequence pointer j (a written
  /// component) starts as (Note [Sourced rows]).
  StagedRows(llvm::IRBuilder<>& b, const flatten::KernelBody& k, std::vector<flatten::KernelBody::StagedSeq> staged,
             llvm::Value* n, std::function<llvm::Value*(uint32_t)> seq_pointer,
             std::function<llvm::Value*(uint32_t, llvm::Value*)> input_at, int lanes = 1, uint64_t zeroed = 0,
             std::function<llvm::Value*(uint32_t)> source_of = nullptr);

  /// This thread's instance (an i64), and whether it has one (an i1): the same in every lane
  /// of an instance.
  llvm::Value* instance() const { return instance_; }
  llvm::Value* runs() const { return runs_; }

  /// Whether this block's rows are in shared memory (an i1, the same in every thread).
  llvm::Value* fits();
  /// Where fits() holds, the j-th sequence pointer as the body reads it: a staged component's
  /// elements in the shared address space, indexed by the row's global offsets, so that the
  /// body's loads and stores of it are ld.shared and st.shared; else the kernel's pointer.
  llvm::Value* shared_pointer(uint32_t j);

  /// Emits the barrier and the copy of the written sequences' rows back to global memory.
  void write_back();

 private:
  struct Component {
    uint32_t slot;      // staged_[slot]
    uint32_t pointer;   // its sequence pointer's number
    llvm::Type* type;   // its elements' storage type
    llvm::AllocaInst* base;  // an i64: where its row's element 0 would be, from the window's start
    bool zeroed;             // its row starts as zeros (Note [Zeroed rows])
    llvm::Value* source;     // else the array its row starts as (Note [Sourced rows]), or null
  };
  llvm::IRBuilder<>& b_;
  const flatten::KernelBody& k_;
  std::vector<flatten::KernelBody::StagedSeq> staged_;
  std::function<llvm::Value*(uint32_t)> global_;
  llvm::Value* thread_ = nullptr;     // %tid.x
  llvm::Value* threads_ = nullptr;    // %ntid.x
  llvm::Value* per_block_ = nullptr;  // instances a block
  llvm::Value* instance_ = nullptr;
  llvm::Value* runs_ = nullptr;
  llvm::Value* slot_ = nullptr;          // this thread's instance's record
  llvm::Value* has_instance_ = nullptr;  // slot_ < per_block_
  llvm::Value* lane_ = nullptr;          // this thread's lane in its instance's group (0 where lanes_ is 1)
  int lanes_ = 1;
  llvm::Value* shared_ = nullptr;     // the dynamic shared memory, as a generic pointer
  llvm::Value* data_at_ = nullptr;    // where the rows start in it, after the records
  llvm::AllocaInst* fits_ = nullptr;  // an i1, the same in every thread of the block
  std::vector<Component> components_;

  /// The array a staged component's row starts as: its source (Note [Sourced rows]), else its
  /// own sequence pointer.
  llvm::Value* starts_as(const Component& c);
  /// Field f of instance r's record (an i64 in shared memory).
  llvm::Value* field(llvm::Value* r, uint32_t f);
  /// body(component, the bytes of its row in shared memory, the row's first element in global
  /// memory, its length), for each staged component of a record.
  using RowBody = std::function<void(const Component&, llvm::Value*, llvm::Value*, llvm::Value*)>;
  /// The body for each staged component of record r.
  void rows_of(llvm::Value* r, const RowBody& body);
  /// The body for every record r < per_block.
  void each_row(const RowBody& body);
  /// The body for this thread's instance's record (where has_instance_).
  void own_rows(const RowBody& body);
  /// `count` elements of type t from[from_start..] to to[to_start..], every thread a share.
  void copy(llvm::Type* t, llvm::Value* from, llvm::Value* from_start, llvm::Value* to, llvm::Value* to_start,
            llvm::Value* count);
  /// Emits body() where `cond` (an i1) holds, then a join.
  void when(llvm::Value* cond, const std::function<void()>& body);
  void barrier();
};

}  // namespace ndp::codegen
