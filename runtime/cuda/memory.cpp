// The stream-ordered device memory pool and the copies between host and device.
#include "memory.h"
#include "trace.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

namespace ndp::runtime::cuda {

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)),
      pointer_(std::exchange(other.pointer_, 0)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (pool_ != nullptr) pool_->device().defer(release());
    pool_ = std::exchange(other.pool_, nullptr);
    pointer_ = std::exchange(other.pointer_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (pool_ != nullptr) pool_->device().defer(release());
}

Status DeviceBuffer::release() {
  Status s;
  if (pool_ != nullptr && pointer_ != 0) s = pool_->free(pointer_, bytes_);
  pool_ = nullptr;
  pointer_ = 0;
  bytes_ = 0;
  return s;
}

Result<std::unique_ptr<MemoryPool>> MemoryPool::create(Device& device) {
  std::unique_ptr<MemoryPool> pool(new MemoryPool());
  pool->device_ = &device;
  if (device.properties().memory_pools) {
    const Driver& d = device.driver();
    NDP_CU_TRY(NDP_CU(d, cuDeviceGetDefaultMemPool, &pool->pool_, device.handle()));
    uint64_t keep_everything = std::numeric_limits<uint64_t>::max();
    NDP_CU_TRY(NDP_CU(d, cuMemPoolSetAttribute, pool->pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                      &keep_everything));
  }
  return pool;
}

// Note [Large blocks kept for reuse]
// A loop of NESL (a recursion) makes vectors of the same size level after level: Black-Scholes
// timed eleven times allocates 80 MB of prices each time, while the last level's are still
// alive. The driver's pool does not hand the freed block back: measured on an H200, such an
// allocation took 115-345 µs (it maps memory anew), where a block it reuses takes 1-4 µs. So the
// pool keeps freed blocks of kCachedMinBytes or more itself, up to a quarter of the device's
// memory in all (kCachedLimitBytes at least), and gives one back to an allocation of its size
// class, or of up to kLargerClasses classes below it: eight classes an octave, so at most an
// eighth wasted by the class and a quarter or so by the larger block. (By exact size, a
// recursion whose vectors shrink unevenly, quicksort's, missed nearly always: 1200 allocations
// a sort of 2^24 keys at 7 µs each on an H200. By class alone, 867 in two sorts at 19.5 µs:
// each level's vectors are a little smaller than the last's, and a request one class below
// every kept block missed; with the larger classes, 653.) Reuse is safe on the one stream: the
// block is free in stream order, so whatever the new owner queues runs after its last use. An
// allocation that fails for want of memory returns the kept blocks to the driver and tries again.
//
// Note [Small blocks by size class]
// A flattened recursion level allocates some forty small vectors (flags, counts, offsets, a
// literal's copies), and the driver's pool is not cheap for them: measured on an H200 (NDP_PROFILE's
// driver table), cuMemAllocAsync took 2.9 µs and cuMemFreeAsync 0.8 µs a call, a third of what a
// level of Batcher's sort spent in the driver. So blocks under kCachedMinBytes are rounded up to
// a size class (kSmallMinBytes at least, then four classes an octave: at most a quarter wasted)
// and, freed, kept on their class's list, up to kSmallCachedLimitBytes in all, for the next
// allocation of the class: a vector's push and pop. Reuse is safe for the same reason as above.
namespace {
constexpr std::size_t kCachedMinBytes = std::size_t{1} << 20;
constexpr std::size_t kCachedLimitBytes = std::size_t{4} << 30;
constexpr std::size_t kSmallMinBytes = 256;
constexpr std::size_t kSmallCachedLimitBytes = std::size_t{256} << 20;
/// A kept block up to this many large classes above a request's serves it (Note [Large blocks
/// kept for reuse]).
constexpr int kLargerClasses = 2;

/// The size class of an allocation of `bytes` < kCachedMinBytes (Note [Small blocks by size class]).
std::size_t small_class(std::size_t bytes) {
  if (bytes <= kSmallMinBytes) return kSmallMinBytes;
  const int top = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes - 1));  // 2^top < bytes <= 2^(top+1)
  const std::size_t step = std::size_t{1} << (top - 2);
  return (bytes + step - 1) / step * step;
}
}  // namespace

/// The size class of an allocation of `bytes` >= kCachedMinBytes (Note [Large blocks kept for
/// reuse]): eight classes an octave, at most an eighth wasted.
std::size_t large_class(std::size_t bytes) {
  const int top = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes - 1));  // 2^top < bytes <= 2^(top+1)
  const std::size_t step = std::size_t{1} << (top - 3);
  return (bytes + step - 1) / step * step;
}

namespace {
/// The large size class `steps` classes above class c.
std::size_t larger_class(std::size_t c, int steps) {
  for (int i = 0; i < steps; ++i) c = large_class(c + 1);
  return c;
}
}  // namespace

std::size_t MemoryPool::size_class(std::size_t bytes) { return bytes >= kCachedMinBytes ? large_class(bytes) : small_class(bytes); }

Result<DeviceBuffer> MemoryPool::allocate(std::size_t bytes) {
  DeviceBuffer b;
  if (bytes == 0) return b;  // the driver rejects empty allocations; an empty array needs none
  if (bytes < kCachedMinBytes) {
    bytes = small_class(bytes);
    if (auto it = small_free_.find(bytes); it != small_free_.end() && !it->second.empty()) {
      b.pointer_ = it->second.back();
      it->second.pop_back();
      small_cached_bytes_ -= bytes;
      b.pool_ = this;
      b.bytes_ = bytes;
      return b;
    }
  } else {
    bytes = large_class(bytes);
    // The smallest kept block of this class or up to kLargerClasses above it.
    if (auto it = cached_.lower_bound(bytes); it != cached_.end() && it->first <= larger_class(bytes, kLargerClasses)) {
      b.pointer_ = it->second;
      b.bytes_ = it->first;
      cached_bytes_ -= it->first;
      cached_.erase(it);
      b.pool_ = this;
      return b;
    }
  }
  const char* call = stream_ordered() ? "cuMemAllocAsync" : "cuMemAlloc";
  // More than the device has can never succeed, and the driver can take tens of seconds to say
  // so for hundreds of gigabytes (a range of 6·10^10 ints in a random program did): refuse at once.
  if (bytes > device_->properties().total_memory)
    return Status::driver_failure(call, CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory",
                                  "while allocating " + std::to_string(bytes) + " bytes, more than the device's " +
                                      std::to_string(device_->properties().total_memory));
  const Driver& d = device_->driver();
  auto driver_allocate = [&] {
    return stream_ordered() ? NDP_CU(d, cuMemAllocAsync, &b.pointer_, bytes, device_->stream())
                            : NDP_CU(d, cuMemAlloc, &b.pointer_, bytes);
  };
  Status s = driver_allocate();
  if (!s.ok() && s.code() == CUDA_ERROR_OUT_OF_MEMORY && (!cached_.empty() || small_cached_bytes_ > 0)) {
    NDP_CU_TRY(release_cached());
    s = driver_allocate();
  }
  if (!s.ok()) {
    return Status::driver_failure(s.call(), s.code(), s.name(), s.text(),
                                  "while allocating " + std::to_string(bytes) + " bytes");
  }
  if (tracing()) std::fprintf(stderr, "%10.1f   driver allocation of %zu bytes\n", trace_microseconds(), bytes);
  b.pool_ = this;
  b.bytes_ = bytes;
  return b;
}

Status MemoryPool::free(CUdeviceptr pointer, std::size_t bytes) {
  if (bytes < kCachedMinBytes && small_cached_bytes_ + bytes <= kSmallCachedLimitBytes) {
    small_free_[bytes].push_back(pointer);
    small_cached_bytes_ += bytes;
    return Status();
  }
  if (bytes >= kCachedMinBytes &&
      cached_bytes_ + bytes <= std::max(kCachedLimitBytes, device_->properties().total_memory / 4)) {
    cached_.emplace(bytes, pointer);
    cached_bytes_ += bytes;
    return Status();
  }
  const Driver& d = device_->driver();
  const CUstream stream = device_->stream();  // queued launches go first, before a plain free too
  return stream_ordered() ? NDP_CU(d, cuMemFreeAsync, pointer, stream) : NDP_CU(d, cuMemFree, pointer);
}

namespace {

Status too_large(const char* call, std::size_t bytes, std::size_t capacity) {
  return Status::failure(call, "copy of " + std::to_string(bytes) + " bytes into a buffer of " +
                                   std::to_string(capacity));
}

}  // namespace

Status MemoryPool::copy_to_device(DeviceBuffer& to, const void* from, std::size_t bytes) {
  if (bytes > to.bytes()) return too_large("cuMemcpyHtoDAsync", bytes, to.bytes());
  if (bytes == 0) return Status();
  return NDP_CU(device_->driver(), cuMemcpyHtoDAsync, to.pointer(), from, bytes,
                device_->stream());
}

// Note [Small read-backs through pinned memory]
// The host reads small results back often (counts, totals, failure flags: a dozen a level of a
// flattened quicksort, one an SpMV), each waiting for the GPU. A copy into pageable memory goes
// through the driver's own staging; one into page-locked memory is a plain DMA. So copies of up
// to kStagingBytes land in a page-locked buffer of the pool's and are copied on from there;
// larger ones (whole results) go straight to the caller's memory. If the page-locked buffer
// cannot be had, every copy goes straight. Several small ones (download_words: a filter
// group's totals) are queued together and share one wait.
constexpr std::size_t kStagingBytes = 4096;

// Note [Small uploads through pinned memory]
// A copy from pageable memory makes the driver stage it first, and a call through the embedding
// API makes several small ones (an argument's lengths, offsets and elements). So uploads of up to
// kUploadRingBytes / 16 go through a page-locked ring of the pool's: copied into the ring, then
// queued as a plain DMA that does not hold the host up. A part of the ring is used again only
// after the stream was synchronized (every copy queued before then is done): by a read-back,
// which resets the ring, or here when it is full.
constexpr std::size_t kUploadRingBytes = std::size_t{1} << 20;

Status MemoryPool::release_cached() {
  const Driver& d = device_->driver();
  const CUstream stream = device_->stream();  // queued launches go first, before a plain free too
  Status first;
  for (const auto& [bytes, pointer] : cached_) {
    Status s = stream_ordered() ? NDP_CU(d, cuMemFreeAsync, pointer, stream) : NDP_CU(d, cuMemFree, pointer);
    if (first.ok() && !s.ok()) first = s;
  }
  cached_.clear();
  cached_bytes_ = 0;
  for (const auto& [bytes, pointers] : small_free_)
    for (CUdeviceptr pointer : pointers) {
      Status s = stream_ordered() ? NDP_CU(d, cuMemFreeAsync, pointer, stream) : NDP_CU(d, cuMemFree, pointer);
      if (first.ok() && !s.ok()) first = s;
    }
  small_free_.clear();
  small_cached_bytes_ = 0;
  return first;
}

MemoryPool::~MemoryPool() {
  (void)release_cached();
  if (staging_ != nullptr) (void)NDP_CU(device_->driver(), cuMemFreeHost, staging_);
  if (upload_ring_ != nullptr) (void)NDP_CU(device_->driver(), cuMemFreeHost, upload_ring_);
}

Status MemoryPool::read_back(std::span<const ReadBack> asked) {
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  };
  // The hook's copies go with the read-back's, under its one wait.
  std::vector<ReadBack> parts(asked.begin(), asked.end());
  bool hooked = false;
  if (hook_add_ && !in_hook_) {
    in_hook_ = true;
    Reset reset{in_hook_};
    hook_add_(parts);
    hooked = parts.size() > asked.size();
  }
  const Driver& d = device_->driver();
  if (tracing()) std::fprintf(stderr, "%10.1f   read-back of %zu parts\n", trace_microseconds(), parts.size());
  std::size_t staged = 0;  // each part at an 8-byte boundary of the staging buffer
  for (const ReadBack& p : parts) staged += (p.bytes + 7) & ~std::size_t{7};
  std::unique_lock<std::mutex> lock(staging_mutex_);
  if (staged <= kStagingBytes && staging_ == nullptr && !staging_failed_)
    staging_failed_ = !NDP_CU(d, cuMemAllocHost, &staging_, kStagingBytes).ok();
  const bool via_staging = staged <= kStagingBytes && staging_ != nullptr;
  std::size_t at = 0;
  for (const ReadBack& p : parts) {
    NDP_CU_TRY(NDP_CU(d, cuMemcpyDtoHAsync, via_staging ? static_cast<char*>(staging_) + at : p.to, p.from, p.bytes,
                      device_->stream()));
    at += (p.bytes + 7) & ~std::size_t{7};
  }
  NDP_CU_TRY(NDP_CU(d, cuStreamSynchronize, device_->stream()));
  NDP_CU_TRY(device_->waited());  // a failed batch of launches would leave these values unwritten
  upload_ring_used_ = 0;  // every queued upload is done (Note [Small uploads through pinned memory])
  at = 0;
  for (const ReadBack& p : parts) {
    if (via_staging) std::memcpy(p.to, static_cast<char*>(staging_) + at, p.bytes);
    at += (p.bytes + 7) & ~std::size_t{7};
  }
  lock.unlock();
  if (hooked && hook_done_) {
    in_hook_ = true;
    Reset reset{in_hook_};
    hook_done_();
  }
  return Status();
}

Status MemoryPool::copy_to_host(void* to, const DeviceBuffer& from, std::size_t bytes) {
  if (bytes > from.bytes()) return too_large("cuMemcpyDtoHAsync", bytes, from.bytes());
  if (bytes == 0) return Status();
  const ReadBack part{to, from.pointer(), bytes};
  return read_back({&part, 1});
}

Status MemoryPool::fill_words(DeviceBuffer& buffer, uint32_t word, std::size_t count) {
  if (count * 4 > buffer.bytes()) return too_large("cuMemsetD32Async", count * 4, buffer.bytes());
  if (count == 0) return Status();
  return NDP_CU(device_->driver(), cuMemsetD32Async, buffer.pointer(), word, count,
                device_->stream());
}

Status MemoryPool::upload(CUdeviceptr to, const void* from, std::size_t bytes) {
  if (bytes == 0) return Status();
  const Driver& d = device_->driver();
  if (bytes <= kUploadRingBytes / 16) {  // Note [Small uploads through pinned memory]
    std::lock_guard<std::mutex> lock(staging_mutex_);
    if (upload_ring_ == nullptr && !upload_ring_failed_)
      upload_ring_failed_ = !NDP_CU(d, cuMemAllocHost, &upload_ring_, kUploadRingBytes).ok();
    if (upload_ring_ != nullptr) {
      const std::size_t room = (bytes + 63) & ~std::size_t{63};
      if (upload_ring_used_ + room > kUploadRingBytes) {
        NDP_CU_TRY(NDP_CU(d, cuStreamSynchronize, device_->stream()));
        NDP_CU_TRY(device_->waited());
        upload_ring_used_ = 0;
      }
      char* slot = static_cast<char*>(upload_ring_) + upload_ring_used_;
      std::memcpy(slot, from, bytes);
      upload_ring_used_ += room;
      return NDP_CU(d, cuMemcpyHtoDAsync, to, slot, bytes, device_->stream());
    }
  }
  return NDP_CU(d, cuMemcpyHtoDAsync, to, from, bytes, device_->stream());
}

Status MemoryPool::download_words(std::span<uint64_t* const> to, std::span<const CUdeviceptr> from) {
  if (from.size() != to.size()) return Status::failure("cuMemcpyDtoHAsync", "download_words: as many places as words");
  if (from.empty()) return Status();
  std::vector<ReadBack> parts;
  for (size_t i = 0; i < from.size(); ++i) parts.push_back(ReadBack{to[i], from[i], 8});
  return read_back(parts);
}

Status MemoryPool::download(void* to, CUdeviceptr from, std::size_t bytes) {
  if (bytes == 0) return Status();
  const ReadBack part{to, from, bytes};
  return read_back({&part, 1});
}

Status MemoryPool::copy(CUdeviceptr to, CUdeviceptr from, std::size_t bytes) {
  if (bytes == 0) return Status();
  return NDP_CU(device_->driver(), cuMemcpyDtoDAsync, to, from, bytes, device_->stream());
}

Result<uint64_t> MemoryPool::reserved_bytes() const {
  uint64_t bytes = 0;
  if (!stream_ordered()) return bytes;
  NDP_CU_TRY(NDP_CU(device_->driver(), cuMemPoolGetAttribute, pool_,
                    CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &bytes));
  return bytes;
}

}  // namespace ndp::runtime::cuda
