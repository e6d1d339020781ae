// Private: counting true flags (bool bytes holding 0 or 1) eight at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace ndp::runtime::detail {

/// The number of true flags in [b, e). Flags are bytes of 0 or 1, so eight of them loaded as
/// one word add up bytewise without carries for up to 255 words; this runs several times
/// faster than a byte loop, which the compiler does not vectorise at -O2 (counting flags is a
/// pass of its own in every pack and filter).
inline int64_t count_flags(const bool* f, int64_t b, int64_t e) {
  int64_t count = 0;
  int64_t p = b;
  while (e - p >= 8) {
    int64_t words = std::min<int64_t>((e - p) / 8, 255);
    uint64_t acc = 0;
    for (int64_t w = 0; w < words; ++w, p += 8) {
      uint64_t x;
      std::memcpy(&x, f + p, 8);
      acc += x;
    }
    // Sum the eight byte lanes.
    acc = (acc & 0x00ff00ff00ff00ffULL) + ((acc >> 8) & 0x00ff00ff00ff00ffULL);
    acc = (acc & 0x0000ffff0000ffffULL) + ((acc >> 16) & 0x0000ffff0000ffffULL);
    acc = (acc & 0x00000000ffffffffULL) + (acc >> 32);
    count += static_cast<int64_t>(acc);
  }
  for (; p < e; ++p) count += f[p];
  return count;
}

}  // namespace ndp::runtime::detail
