#include "exec/cuda/gpu.h"

#include "flatten/kernel_abi.h"

#include <algorithm>
#include <mutex>

#include "lang/diagnostics.h"
#include "lang/eval/prim_call.h"
#include "runtime/cuda/cuda_driver.h"

namespace ndp::exec::cuda {

using lang::TypeKind;

ndp_elem_type elem_type(const lang::Type* t) {
  switch (t->kind) {
    case TypeKind::Float: return NDP_F64;
    case TypeKind::Bool: return NDP_BOOL;
    case TypeKind::Char: return NDP_CHAR;
    case TypeKind::I32: return NDP_I32;
    case TypeKind::F32: return NDP_F32;
    default: return NDP_I64;  // Int, Stream, Fn (ids)
  }
}

namespace {

std::mutex device_mu;
int device_ordinal = 0;     // the device get() opens
bool device_opened = false;  // get() ran: the ordinal is fixed

}  // namespace

bool Gpu::select_device(int ordinal, std::string* why) {
  std::lock_guard<std::mutex> lock(device_mu);
  if (device_opened && ordinal != device_ordinal) {
    *why = "this process already uses GPU " + std::to_string(device_ordinal) + "; one process uses one GPU";
    return false;
  }
  device_ordinal = ordinal;
  return true;
}

Gpu* Gpu::get(std::string* why) {
  static std::once_flag once;
  // Never destroyed: the driver library's own static goes first at exit, and releasing device
  // memory after it would call into an unloaded library. The process's end frees everything.
  static Gpu* gpu = nullptr;
  static std::string reason;
  std::call_once(once, [] {
    runtime::cuda::Status s;
    const runtime::cuda::Driver* driver = runtime::cuda::Driver::system(&s);
    if (driver == nullptr) {
      reason = s.message();
      return;
    }
    auto g = std::make_unique<Gpu>();
    int ordinal;
    {
      std::lock_guard<std::mutex> lock(device_mu);
      device_opened = true;
      ordinal = device_ordinal;
    }
    auto d = runtime::cuda::Device::open(*driver, ordinal);
    if (!d.ok()) {
      reason = d.status().message();
      return;
    }
    g->device_ = std::move(d.value());
    auto p = runtime::cuda::MemoryPool::create(*g->device_);
    if (!p.ok()) {
      reason = p.status().message();
      return;
    }
    g->pool_ = std::move(p.value());
    Gpu* raw = g.get();  // (the Gpu owns the pool, so outlives its hook)
    g->pool_->set_read_back_hook([raw](std::vector<runtime::cuda::MemoryPool::ReadBack>& parts) { raw->add_record_read(parts); },
                                 [raw] { raw->finish_record_read(); });
    auto prims = runtime::gpu::Primitives::load(*g->device_, *g->pool_);
    if (!prims.ok()) {
      reason = prims.status().message();
      return;
    }
    g->prims_ = std::move(prims.value());
    gpu = g.release();
  });
  if (why != nullptr) *why = reason;
  return gpu;
}

void Gpu::check(const runtime::cuda::Status& s) {
  if (failed_raise_) raise_deferred_failure();  // read during the call (Note [Deferred failure records])
  if (s.ok()) return;
  if (s.code() == runtime::cuda::CUDA_ERROR_OUT_OF_MEMORY)
    throw lang::eval::EvalError{lang::message(lang::RuntimeErrorId::OutOfMemory), lang::Span{}};
  throw lang::eval::EvalError{s.message(), lang::Span{}};
}

DBuf Gpu::single_value(int bytes, uint64_t bits) {
  DBuf& b = single_values_[{bytes, bits}];
  if (!b) {
    if (single_values_.size() > 4096) {  // a program of many distinct constants: start again
      single_values_.clear();
      return single_value(bytes, bits);
    }
    b = alloc(bytes);
    check(prims().fill(b->pointer(), 1, bytes, bits));
  }
  return b;
}

DBuf Gpu::alloc(int64_t bytes) {
  // A size past any memory, or one that wrapped around computing it: "Out of memory."
  if (bytes < 0 || bytes > (int64_t{1} << 62))
    throw lang::eval::EvalError{lang::message(lang::RuntimeErrorId::OutOfMemory), lang::Span{}};
  auto b = pool_->allocate(static_cast<size_t>(bytes > 0 ? bytes : 1));
  if (!b.ok()) check(b.status());
  return std::make_shared<const runtime::cuda::DeviceBuffer>(std::move(b.value()));
}

void Gpu::run_deferred_checks() {
  while (!deferred_checks_.empty()) {
    std::vector<std::function<void()>> checks = std::move(deferred_checks_);
    deferred_checks_.clear();
    for (const std::function<void()>& c : checks) c();
  }
}

void Gpu::begin_evaluation() {
  deferred_checks_.clear();
  forget_deferred_records();  // any an evaluation that failed left unread
  if (gather_flags_given_) check(prims_->fill(gather_flags_->pointer(), kGatherFlags, 8, 0));
  gather_flags_given_ = false;
  if (kernel_record_given_) check(prims_->fill(kernel_record_->pointer(), 1, 8, flatten::kNoKernelFailure));
  kernel_record_given_ = false;
}

int64_t Gpu::read_int(CUdeviceptr base, int64_t i) {
  int64_t v = 0;
  check(pool_->download(&v, base + static_cast<CUdeviceptr>(i) * sizeof v, sizeof v));
  return v;
}

CUdeviceptr Gpu::gather_flags() {
  if (!gather_flags_) {
    gather_flags_ = alloc(kGatherFlags * 8);
    check(prims_->fill(gather_flags_->pointer(), kGatherFlags, 8, 0));
  }
  gather_flags_given_ = true;
  return gather_flags_->pointer();
}

std::array<uint64_t, Gpu::kGatherFlags> Gpu::take_gather_flags() {
  std::array<uint64_t, kGatherFlags> flags{};
  check(pool_->copy_to_host(flags.data(), *gather_flags_, sizeof flags));
  gather_flags_given_ = false;
  for (uint64_t f : flags)
    if (f != 0) {
      check(prims_->fill(gather_flags_->pointer(), kGatherFlags, 8, 0));
      break;
    }
  return flags;
}

CUdeviceptr Gpu::kernel_record() {
  if (!kernel_record_) {
    kernel_record_ = alloc(8);
    check(prims_->fill(kernel_record_->pointer(), 1, 8, flatten::kNoKernelFailure));
  }
  kernel_record_given_ = true;
  return kernel_record_->pointer();
}

std::pair<CUdeviceptr, CUdeviceptr> Gpu::split_scratch() {
  if (!split_arrivals_) {
    split_partials_ = alloc(flatten::kMostSplitBlocks * 8);
    split_arrivals_ = alloc(flatten::kMostSplitBlocks * 4);
    check(prims_->fill(split_arrivals_->pointer(), flatten::kMostSplitBlocks, 4, 0));
  }
  return {split_partials_->pointer(), split_arrivals_->pointer()};
}

CUdeviceptr Gpu::deferred_records() {
  if (!deferred_records_) {
    deferred_records_ = alloc(kDeferredRecords * 8);
    check(prims_->fill(deferred_records_->pointer(), kDeferredRecords, 8, flatten::kNoKernelFailure));
  }
  return deferred_records_->pointer();
}

CUdeviceptr Gpu::deferred_record(std::function<void(uint64_t)> raise, int64_t held_bytes) {
  if (static_cast<int>(deferred_raises_.size()) == kDeferredRecords || deferred_held_bytes_ + held_bytes > kDeferredHeldBytes)
    check_deferred_records();
  deferred_records();
  deferred_raises_.push_back(std::move(raise));
  deferred_held_bytes_ += held_bytes;
  deferred_records_used_ = true;
  return deferred_records_->pointer() + (deferred_raises_.size() - 1) * 8;
}

void Gpu::add_record_read(std::vector<runtime::cuda::MemoryPool::ReadBack>& parts) {
  if (deferred_raises_.empty()) return;
  // Taken first, so that the records in use are the new ones from here on.
  reading_raises_ = std::move(deferred_raises_);
  deferred_raises_.clear();
  deferred_held_bytes_ = 0;
  reading_records_.assign(reading_raises_.size(), flatten::kNoKernelFailure);
  parts.push_back({reading_records_.data(), deferred_records_->pointer(), reading_records_.size() * 8});
}

void Gpu::finish_record_read() {
  // Called inside runtime calls, which must return to reset their own check words: nothing
  // here throws. (A read-back that fails never gets here: its failure comes back from the
  // runtime call whose read-back it was.)
  std::vector<std::function<void(uint64_t)>> raises = std::move(reading_raises_);
  reading_raises_.clear();
  auto failed = std::find_if(reading_records_.begin(), reading_records_.end(),
                             [](uint64_t r) { return r != flatten::kNoKernelFailure; });
  if (failed == reading_records_.end()) {
    deferred_records_used_ = false;  // every slot still reads "no failure"
    return;
  }
  if (!failed_raise_) {  // (one read earlier and not yet raised comes first)
    failed_raise_ = std::move(raises[static_cast<size_t>(failed - reading_records_.begin())]);
    failed_record_ = *failed;
  }
  if (prims_->fill(deferred_records_->pointer(), kDeferredRecords, 8, flatten::kNoKernelFailure).ok())
    deferred_records_used_ = false;
}

void Gpu::read_deferred_records() {
  if (deferred_raises_.empty()) return;
  // A read-back of nothing of its own: the records alone, through the hook.
  (void)pool_->read_hooked();
}

void Gpu::raise_deferred_failure() {
  std::function<void(uint64_t)> raise = std::move(failed_raise_);
  failed_raise_ = nullptr;
  raise(failed_record_);  // throws the kernel's error
  throw lang::InternalError("internal error: a kernel's failure record raised no error");
}

void Gpu::check_deferred_records() {
  read_deferred_records();
  if (failed_raise_) raise_deferred_failure();
}

void Gpu::forget_deferred_records() {
  deferred_raises_.clear();
  reading_raises_.clear();  // (a read-back that failed before it was done)
  deferred_held_bytes_ = 0;
  failed_raise_ = nullptr;
  if (deferred_records_used_) check(prims_->fill(deferred_records_->pointer(), kDeferredRecords, 8, flatten::kNoKernelFailure));
  deferred_records_used_ = false;
}

uint64_t Gpu::take_kernel_record() {
  uint64_t record = flatten::kNoKernelFailure;
  check(pool_->copy_to_host(&record, *kernel_record_, sizeof record));
  kernel_record_given_ = false;
  if (record != flatten::kNoKernelFailure) check(prims_->fill(kernel_record_->pointer(), 1, 8, flatten::kNoKernelFailure));
  return record;
}

}  // namespace ndp::exec::cuda
