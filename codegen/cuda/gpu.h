// The device the cuda backend runs on: driver, device, memory pool and primitive kernels,
// opened once per process, and the helpers every part of the backend uses to allocate and to
// turn a failed driver call into a runtime error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "codegen/cuda/dvec.h"
#include "runtime/gpu/primitives.h"
#include "runtime/host/device.h"
#include "runtime/host/memory.h"

namespace ndp::codegen::cuda {

class Gpu {
 public:
  /// The process's GPU, opened on first use; null with `why` set when there is none (no
  /// driver, no device, a build without the GPU primitives).
  static Gpu* get(std::string* why = nullptr);

  rt::cuda::Device& device() { return *device_; }
  rt::cuda::MemoryPool& pool() { return *pool_; }
  rt::gpu::Primitives& prims() { return *prims_; }

  /// A device buffer of `bytes` (at least one byte, so every buffer has an address). Device
  /// out-of-memory is the runtime error "Out of memory."; other failures are check()'s.
  DBuf alloc(int64_t bytes);
  /// Throws the failure of a driver call as a runtime error ("cuda: CALL failed: ...").
  void check(const rt::cuda::Status& s);
  template <class T>
  T check(rt::cuda::Result<T> r) {
    if (!r.ok()) check(r.status());
    return std::move(r.value());
  }
  /// Waits for every queued kernel; reports a fault as a runtime error.
  void synchronize() { check(device_->synchronize()); }

 private:
  std::unique_ptr<rt::cuda::Device> device_;
  std::unique_ptr<rt::cuda::MemoryPool> pool_;
  std::unique_ptr<rt::gpu::Primitives> prims_;
};

}  // namespace ndp::codegen::cuda
