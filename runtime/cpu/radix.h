// Private: stable parallel LSD radix sort of (unsigned key, int64 payload) pairs.
#pragma once

#include <cstdint>
#include <vector>

namespace ndp::runtime::detail {

/// The number of bytes needed to hold every key up to `max_key` (0 for max_key == 0).
int key_bytes_for(uint64_t max_key);

/// Stably sorts (keys[p], payload[p]) by the low `bytes` bytes of the keys, one byte per
/// pass from the least significant; a pass whose byte is the same for every key is skipped.
/// Each pass is a parallel counting sort: per-chunk histograms, a prefix over (digit, chunk),
/// and a scatter in which every chunk writes its elements in order. The two scratch vectors
/// are resized as needed; the result is left in keys and payload.
void radix_sort(std::vector<uint64_t>& keys, std::vector<int64_t>& payload, int bytes, std::vector<uint64_t>& key_buf,
                std::vector<int64_t>& payload_buf);

}  // namespace ndp::runtime::detail
