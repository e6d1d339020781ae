// The device the cuda backend runs on: driver, device, memory pool and primitive kernels,
// opened once per process, and the helpers every part of the backend uses to allocate and to
// turn a failed driver call into a runtime error.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "exec/common/tuning.h"
#include "exec/cuda/device_vec.h"
#include "flatten/kernel_abi.h"
#include "runtime/gpu/primitives.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/memory.h"

namespace ndp::exec::cuda {

// Note [Deferred failure records]
// A kernel that can fail (Note [Kernels that can fail]) lowers a failure record, which the
// host must read to raise the error. Read at once, every such launch waits for the GPU: a loop
// of SpMV products (x[c] is checked) ran a product, waited, and only then queued the next. So
// a plain or map kernel gets a record of its own from a small arena instead, read with the
// next read-back of any kind, which waits for the GPU anyway: the records' copy goes with the
// read-back's own, under its one wait (MemoryPool::set_read_back_hook). That happens inside
// runtime calls, which must return to reset their own check words, so the first failure (in
// launch order) is kept, and Gpu::check raises it when the call returns, as reading each
// record at once would have. An error the host raises
// meanwhile gives way to it, and output and the end of an evaluation read the records first
// (CudaExecutor::run_bound, the executor's Io primitives). Nothing computed from a failed
// kernel's outputs reaches the host before its error, since every way there is a read-back;
// and a map kernel whose fold counts a range (bounds a failed kernel may have computed: it
// could fold for ever) reads the records before it is launched; a loop that does not fold
// (whose bound could be such, and which has no budget) reads them on the device, and runs no
// instance where one is set (watches_failures in flatten/kernel_abi.h). Deferred are kernels outside the library (a library error names the user's call:
// FlatWalk::exec in exec/common/flat_walk.h), and neither loops that fold (which may give up
// and run flattened) nor loops that append (whose slots are read back); a loop's written rows
// are copies, so the rows its failure is raised from stay as they were (Note [Sequence state
// in loop kernels]). At most kDeferredRecords at a time, each
// holding its inputs alive until it is read, and at most kDeferredHeldBytes of them. The
// bounds check of an index_shared into several sequences is deferred the same way (the
// executor's IndexShared): a recursion level that reads one point of each row no longer waits.
// So are, outside the library, the bounds check of a gather that a kernel or a store needs
// (Note [Checked gathers] in device_vec.h: its positions copied with a bad one as 0), permute's
// check (a bad position moves nothing) and partition's (the pieces cut to stay inside the
// elements): what reads their results meanwhile stays in bounds.

class Gpu {
 public:
  /// The process's GPU, opened on first use; null with `why` set when there is none (no
  /// driver, no device, a build without the GPU primitives).
  static Gpu* get(std::string* why = nullptr);
  /// Chooses the device (its ordinal) that get() opens; false with `why` set once the process
  /// opened another one (the embedding API's Options::device).
  static bool select_device(int ordinal, std::string* why);

  runtime::cuda::Device& device() { return *device_; }
  runtime::cuda::MemoryPool& pool() { return *pool_; }
  runtime::gpu::Primitives& prims() { return *prims_; }
  /// This device's switch points (Note [Tuning]), read on first use.
  const Tuning& tuning() {
    if (!tuning_) tuning_ = load_tuning(device_->properties().name, Tuning::gpu_defaults());
    return *tuning_;
  }
  /// Replaces the tuning for what runs next (`ndp autotune` trying a switch point).
  void set_tuning(const Tuning& t) { tuning_ = t; }

  /// A device buffer of `bytes` (at least one byte, so every buffer has an address). Device
  /// out-of-memory is the runtime error "Out of memory."; other failures are check()'s.
  DBuf alloc(int64_t bytes);
  /// Throws the failure of a driver call as a runtime error ("cuda: CALL failed: ...").
  void check(const runtime::cuda::Status& s);
  template <class T>
  T check(runtime::cuda::Result<T> r) {
    if (!r.ok() || failed_raise_) check(r.status());
    return std::move(r.value());
  }
  /// Element i of an int64 device array, read back (waits): for the details of an error.
  int64_t read_int(CUdeviceptr base, int64_t i);
  /// Waits for every queued kernel; reports a fault as a runtime error.
  void synchronize() { check(device_->synchronize()); }

  /// Bounds checks of gathers that nobody read (Note [Checked gathers] in device_vec.h): queued when
  /// the gather goes, run (and emptied) by run_deferred_checks, which throws the first failure.
  void defer_check(std::function<void()> check) { deferred_checks_.push_back(std::move(check)); }
  void run_deferred_checks();
  /// At the start of an evaluation: drops the checks, and clears the flags if a kernel was
  /// given them since they were last read (an evaluation that failed in between).
  void begin_evaluation();
  /// The failure flags of guarded gathers (kGatherFlags 8-byte words, zero between kernels),
  /// for a kernel's arguments.
  static constexpr int kGatherFlags = 8;
  CUdeviceptr gather_flags();
  /// Reads the flags after a kernel (waits for it), and zeroes them again if any is set.
  std::array<uint64_t, kGatherFlags> take_gather_flags();
  /// The failure record of fused kernels that can fail (Note [Kernels that can fail] in
  /// flatten/flat_ir.h), kNoKernelFailure between kernels, for a kernel's arguments.
  CUdeviceptr kernel_record();
  /// Reads the record after a kernel (waits for it), and resets it if it is set.
  uint64_t take_kernel_record();
  /// A failure record of its own for one launch whose failure is read later (Note [Deferred
  /// failure records]); `raise` raises the error of the record it then holds, and keeps about
  /// `held_bytes` of device memory alive until then.
  CUdeviceptr deferred_record(std::function<void(uint64_t)> raise, int64_t held_bytes);
  /// The kDeferredRecordWords records, which a loop kernel watches (flatten/kernel_abi.h).
  CUdeviceptr deferred_records();
  /// How many of them are taken now: the words a kernel launched now may watch (later ones
  /// are nobody's yet, or read and not set back).
  int64_t deferred_records_taken() const { return static_cast<int64_t>(deferred_raises_.size()); }
  /// Reads the deferred records (one wait) and raises the first failure, in launch order.
  void check_deferred_records();
  /// Drops the deferred records unread, clearing any that a kernel set: at the start of an
  /// evaluation, those that one which failed left.
  void forget_deferred_records();
  /// A buffer holding one value of `bytes` bytes, `bits`, shared by every known value that is
  /// read stored (Note [Known values] in device_vec.cpp): filled once, not at each read. Buffers
  /// are never written (Note [DVec]), so sharing is safe.
  DBuf single_value(int bytes, uint64_t bits);
  /// The scratch of split map kernels (Note [Rows over several blocks] in codegen/lanes.h), for
  /// at most kMostSplitBlocks blocks: their values (8 bytes a block) and their instances'
  /// counters (4 bytes an instance, zero between kernels, as each kernel leaves them). One
  /// scratch for every split launch: sound because launches go one after another on the one
  /// stream (a second stream, or launches captured in a graph, would need a scratch each).
  std::pair<CUdeviceptr, CUdeviceptr> split_scratch();

 private:
  std::map<std::pair<int, uint64_t>, DBuf> single_values_;
  /// The records read now, with a read-back of their own; the first failure is kept for
  /// check() to raise, as the hook's read keeps it.
  void read_deferred_records();
  /// The pool's read-back hook: the records in use, copied with the read-back (into
  /// reading_records_), and read when it is done: the first failure is kept for check() to
  /// raise once the runtime call returns, as throwing inside it would skip the reset of the
  /// runtime's own check words.
  void add_record_read(std::vector<runtime::cuda::MemoryPool::ReadBack>& parts);
  void finish_record_read();
  std::vector<std::function<void(uint64_t)>> reading_raises_;
  std::vector<uint64_t> reading_records_;
  [[noreturn]] void raise_deferred_failure();
  static constexpr int kDeferredRecords = flatten::kDeferredRecordWords;
  static constexpr int64_t kDeferredHeldBytes = int64_t{2} << 30;  // their inputs, kept alive
  DBuf deferred_records_;  // kDeferredRecords words, kNoKernelFailure where no kernel failed
  bool deferred_records_used_ = false;  // given to a kernel since last filled
  std::vector<std::function<void(uint64_t)>> deferred_raises_;  // of the records in use, in order
  int64_t deferred_held_bytes_ = 0;
  std::function<void(uint64_t)> failed_raise_;  // the first failure read, not yet raised
  uint64_t failed_record_ = 0;
  std::vector<std::function<void()>> deferred_checks_;
  DBuf gather_flags_;
  bool gather_flags_given_ = false;  // to a kernel since take_gather_flags
  DBuf split_partials_, split_arrivals_;
  DBuf kernel_record_;
  bool kernel_record_given_ = false;  // to a kernel since take_kernel_record
  std::unique_ptr<runtime::cuda::Device> device_;
  std::unique_ptr<runtime::cuda::MemoryPool> pool_;
  std::unique_ptr<runtime::gpu::Primitives> prims_;
  std::optional<Tuning> tuning_;
};

}  // namespace ndp::exec::cuda
