// Device memory: a stream-ordered pool of buffers and host<->device copies on the device stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "device.h"
#include "errors.h"
#include "mini_cuda.h"

namespace ndp::runtime::cuda {

class MemoryPool;

/// Bytes on the device, owned. Freed (stream-ordered, so after the kernels already queued that
/// use it) when destroyed or released; stays on the device between kernels until then.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  /// `bytes` at `pointer` inside a buffer that someone else owns and keeps alive (the parts of
  /// one allocation): never freed by this object.
  static DeviceBuffer view(CUdeviceptr pointer, std::size_t bytes) {
    DeviceBuffer b;
    b.pointer_ = pointer;
    b.bytes_ = bytes;
    return b;
  }

  CUdeviceptr pointer() const { return pointer_; }
  std::size_t bytes() const { return bytes_; }
  /// Frees now, reporting the driver's result; the destructor defers it to Device::synchronize.
  Status release();

 private:
  friend class MemoryPool;
  MemoryPool* pool_ = nullptr;
  CUdeviceptr pointer_ = 0;
  std::size_t bytes_ = 0;
};

/// Allocation on the device's stream. With memory pools (every GPU ndp targets) it uses the
/// device's default pool with its release threshold raised, so freed blocks are kept for the
/// next allocation instead of being returned to the driver at every synchronisation; without
/// them it falls back to cuMemAlloc/cuMemFree. Must outlive its buffers.
class MemoryPool {
 public:
  static Result<std::unique_ptr<MemoryPool>> create(Device& device);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  Device& device() const { return *device_; }
  bool stream_ordered() const { return pool_ != nullptr; }

  /// A buffer of at least `bytes` (its bytes() says how many: size_class(bytes)).
  Result<DeviceBuffer> allocate(std::size_t bytes);
  /// The bytes an allocation of `bytes` gets (Note [Small blocks by size class] in memory.cpp).
  static std::size_t size_class(std::size_t bytes);

  /// Copies host bytes to the start of `to`; `from` may be reused as soon as this returns.
  Status copy_to_device(DeviceBuffer& to, const void* from, std::size_t bytes);
  /// Copies the start of `from` to host memory and waits, so `to` is ready on return.
  Status copy_to_host(void* to, const DeviceBuffer& from, std::size_t bytes);
  /// Sets `count` 32-bit words of `buffer` to `word` (poisoning outputs before a test run).
  Status fill_words(DeviceBuffer& buffer, uint32_t word, std::size_t count);

  template <class T>
  Status copy_to_device(DeviceBuffer& to, std::span<const T> from) {
    return copy_to_device(to, from.data(), from.size_bytes());
  }
  template <class T>
  Status copy_to_host(std::span<T> to, const DeviceBuffer& from) {
    return copy_to_host(to.data(), from, to.size_bytes());
  }

  /// The same on raw device addresses (inside buffers of this pool), for copies at an offset.
  Status upload(CUdeviceptr to, const void* from, std::size_t bytes);
  Status download(void* to, CUdeviceptr from, std::size_t bytes);  ///< waits, as copy_to_host
  /// Several small read-backs with one wait: `to[i]` gets the 8 bytes at `from[i]`.
  Status download_words(std::span<uint64_t* const> to, std::span<const CUdeviceptr> from);
  /// A read-back of nothing of its own: waits for the queued work, making the hook's copies
  /// (set_read_back_hook).
  Status read_hooked() { return read_back({}); }
  /// Device-to-device copy, queued on the stream.
  Status copy(CUdeviceptr to, CUdeviceptr from, std::size_t bytes);

  /// Bytes the pool holds from the driver (in use or cached); 0 without memory pools.
  Result<uint64_t> reserved_bytes() const;

  /// `bytes` at device address `from`, for host memory `to`.
  struct ReadBack {
    void* to;
    CUdeviceptr from;
    std::size_t bytes;
  };
  /// Every read-back waits for the queued kernels anyway: the executor reads what it deferred
  /// to such a moment with it (Note [Deferred failure records] in exec/cuda/gpu.h). `add` may
  /// append copies of its own to the read-back's, made with them under the one wait; `done`
  /// runs after the wait where it did, with them in host memory. Neither is called again while
  /// they run. They should not throw: the runtime call whose read-back it is may be midway (its
  /// check words set); a throw goes through, and stops the read-back.
  void set_read_back_hook(std::function<void(std::vector<ReadBack>&)> add, std::function<void()> done) {
    hook_add_ = std::move(add);
    hook_done_ = std::move(done);
  }

 private:
  friend class DeviceBuffer;
  MemoryPool() = default;
  Status free(CUdeviceptr pointer, std::size_t bytes);
  /// Frees the blocks of cached_ (Note [Large blocks kept for reuse] in memory.cpp).
  Status release_cached();
  /// The copies of copy_to_host, download and download_words, all with one wait (Note [Small
  /// read-backs through pinned memory]).
  Status read_back(std::span<const ReadBack> parts);
  Device* device_ = nullptr;
  CUmemoryPool pool_ = nullptr;
  std::multimap<std::size_t, CUdeviceptr> cached_;  // freed large blocks by size
  std::size_t cached_bytes_ = 0;
  std::unordered_map<std::size_t, std::vector<CUdeviceptr>> small_free_;  // freed small blocks by size class
  std::size_t small_cached_bytes_ = 0;
  std::mutex staging_mutex_;
  void* staging_ = nullptr;  // page-locked, kStagingBytes; allocated at the first small read-back
  bool staging_failed_ = false;
  std::function<void(std::vector<ReadBack>&)> hook_add_;
  std::function<void()> hook_done_;
  bool in_hook_ = false;  // (the executor reads back from one thread at a time)
  void* upload_ring_ = nullptr;  // page-locked (Note [Small uploads through pinned memory] in memory.cpp)
  std::size_t upload_ring_used_ = 0;
  bool upload_ring_failed_ = false;
};

}  // namespace ndp::runtime::cuda
