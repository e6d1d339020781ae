// Note [Buffer pool] in buffer_pool.h.
#include "exec/host/buffer_pool.h"

#include <malloc.h>

#include <algorithm>
#include <bit>
#include <mutex>
#include <new>
#include <vector>

#include "include/ndp/memory_limit.h"

namespace ndp::exec::host {

namespace {

constexpr std::align_val_t kAlign{64};

struct Pool {
  std::mutex mu;
  std::vector<void*> free_lists[64];  // by log2 of the class size
  size_t cached = 0;
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: buffers may be freed during exit
  return *p;
}

/// The class of a pooled size: the next power of two.
size_t class_bytes(size_t bytes) { return std::bit_ceil(bytes); }

#ifdef __GLIBC__
/// Note [Buffer pool]: free heap stays with the process, up to kHeapKeptBytes.
[[maybe_unused]] const bool heap_kept = [] {
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(kHeapKeptBytes));
  mallopt(M_TOP_PAD, static_cast<int>(kPooledMinBytes));
  // Setting those fixes the mmap threshold at 128 KiB (glibc raises it as blocks are freed
  // otherwise, up to 32 MiB): it is set to that most at once, so blocks up to it come from the
  // heap and stay.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  return true;
}();
#endif

}  // namespace

size_t pooled_max_cached_bytes() {
  static const size_t cap = static_cast<size_t>(
      std::clamp<uint64_t>(machine_memory_bytes() / 8, uint64_t{1} << 30, uint64_t{16} << 30));
  return cap;
}

void* pooled_alloc(size_t bytes) {
  require_memory(bytes, 1);  // include/ndp/memory_limit.h (also: no size class that big)
  if (bytes < kPooledMinBytes) return ::operator new(bytes > 0 ? bytes : 1, kAlign);
  size_t cls = class_bytes(bytes);
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mu);
    std::vector<void*>& list = p.free_lists[std::countr_zero(cls)];
    if (!list.empty()) {
      void* block = list.back();
      list.pop_back();
      p.cached -= cls;
      return block;
    }
  }
  return ::operator new(cls, kAlign);
}

void pooled_free(void* block, size_t bytes) noexcept {
  if (block == nullptr) return;
  if (bytes < kPooledMinBytes) {
    ::operator delete(block, kAlign);
    return;
  }
  size_t cls = class_bytes(bytes);
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mu);
    if (p.cached + cls <= pooled_max_cached_bytes()) {
      p.free_lists[std::countr_zero(cls)].push_back(block);
      p.cached += cls;
      return;
    }
  }
  ::operator delete(block, kAlign);
}

size_t pooled_cached_bytes() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  return p.cached;
}

}  // namespace ndp::exec::host
