// Stable parallel LSD radix sort of (key, payload) pairs, used by rank, sort and combine.
#include "radix.h"

#include <array>
#include <utility>

#include "parallel.h"

namespace ndp::runtime::detail {

int key_bytes_for(uint64_t max_key) {
  int bytes = 0;
  for (; max_key != 0; max_key >>= 8) ++bytes;
  return bytes;
}

void radix_sort(std::vector<uint64_t>& keys, std::vector<int64_t>& payload, int bytes, std::vector<uint64_t>& key_buf,
                std::vector<int64_t>& payload_buf) {
  int64_t n = static_cast<int64_t>(keys.size());
  if (n < 2 || bytes == 0) return;
  key_buf.resize(n);
  payload_buf.resize(n);
  int64_t nchunks = chunk_count(n);
  std::vector<std::array<int64_t, 256>> hist(nchunks);
  for (int byte = 0; byte < bytes; ++byte) {
    int shift = 8 * byte;
    parallel_chunks(nchunks, [&](int64_t c) {
      std::array<int64_t, 256> local{};
      for (int64_t p = split_point(n, c, nchunks), e = split_point(n, c + 1, nchunks); p < e; ++p)
        ++local[(keys[p] >> shift) & 255];
      hist[c] = local;
    });
    // Exclusive prefix in (digit, chunk) order: chunk c's elements with digit d go after
    // every element with a smaller digit and after earlier chunks' elements with digit d,
    // which is what keeps the sort stable.
    int64_t run = 0;
    bool one_digit = false;
    for (int d = 0; d < 256; ++d) {
      int64_t before = run;
      for (int64_t c = 0; c < nchunks; ++c) {
        int64_t h = hist[c][d];
        hist[c][d] = run;
        run += h;
      }
      one_digit = one_digit || run - before == n;
    }
    if (one_digit) continue;
    parallel_chunks(nchunks, [&](int64_t c) {
      std::array<int64_t, 256> next = hist[c];
      for (int64_t p = split_point(n, c, nchunks), e = split_point(n, c + 1, nchunks); p < e; ++p) {
        int64_t q = next[(keys[p] >> shift) & 255]++;
        key_buf[q] = keys[p];
        payload_buf[q] = payload[p];
      }
    });
    std::swap(keys, key_buf);
    std::swap(payload, payload_buf);
  }
}

}  // namespace ndp::runtime::detail
