/* Requests for more memory than the machine has (RAM and swap together) fail at once with
 * std::bad_alloc, the "Out of memory." runtime error, instead of reaching the allocator:
 * overcommit would accept a request of hundreds of gigabytes and the program would die later
 * touching it, and AddressSanitizer's allocator aborts instead of throwing. Used where a
 * program's values decide a size: host buffers (exec/host) and the interpreter's sequences. */
#pragma once

#include <sys/sysinfo.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace ndp {

/// The machine's RAM plus swap, in bytes (read once).
inline uint64_t machine_memory_bytes() {
  static const uint64_t bytes = [] {
    struct sysinfo si {};
    if (sysinfo(&si) != 0) return ~uint64_t{0};
    return (static_cast<uint64_t>(si.totalram) + si.totalswap) * si.mem_unit;
  }();
  return bytes;
}

/// Throws std::bad_alloc for `count` objects of `size` bytes that cannot fit (or whose product
/// wraps around).
inline void require_memory(uint64_t count, uint64_t size) {
  if (size != 0 && count > machine_memory_bytes() / size) throw std::bad_alloc();
}

}  // namespace ndp
