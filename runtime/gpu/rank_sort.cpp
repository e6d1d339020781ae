// RANK and SORT by stable LSD radix sort (device/sort.cu, Note [GPU radix sort]), and the radix
// sort of (key, position) pairs that combine.cpp uses too.
#include <algorithm>

#include "runtime/gpu/launch.h"

namespace ndp::rt::gpu {

namespace detail {

/// Stably sorts n (key, int64 payload) pairs by the key bytes whose bits are set in byte_mask
/// (bit b: byte b), least significant byte first. key_bytes is 4 or 8. The pairs start in
/// keys[0] / payload[0]; the other two arrays are scratch; *which receives the index of the
/// arrays holding the result.
Status radix_sort_pairs(Primitives& p, int key_bytes, const CUdeviceptr keys[2], const CUdeviceptr payload[2], int64_t n,
                        unsigned byte_mask, int* which) {
  constexpr int64_t kTile = 256 * 8;  // kTile in device/sort.cu
  constexpr unsigned kThreads = 256;
  *which = 0;
  if (n < 2 || byte_mask == 0) return Status();
  int64_t tiles = (n + kTile - 1) / kTile;
  Result<cuda::DeviceBuffer> counts = p.pool().allocate(static_cast<size_t>(256 * tiles) * sizeof(int32_t));
  if (!counts.ok()) return counts.status();
  Result<cuda::DeviceBuffer> prefix = p.pool().allocate(static_cast<size_t>(256 * tiles) * sizeof(int64_t));
  if (!prefix.ok()) return prefix.status();
  Result<cuda::DeviceBuffer> totals = p.pool().allocate(256 * sizeof(int64_t));
  if (!totals.ok()) return totals.status();
  const char* kname = key_bytes == 8 ? "u64" : "u32";
  Result<cuda::Kernel> hist = p.kernel(std::string("ndp_radix_hist_") + kname);
  if (!hist.ok()) return hist.status();
  Result<cuda::Kernel> rowscan = p.kernel("ndp_radix_rowscan");
  if (!rowscan.ok()) return rowscan.status();
  Result<cuda::Kernel> scatter = p.kernel(std::string("ndp_radix_scatter_") + kname);
  if (!scatter.ok()) return scatter.status();
  const cuda::LaunchConfig per_tile{static_cast<unsigned>(tiles), kThreads, 0};
  const cuda::LaunchConfig per_digit{256, kThreads, 0};
  CUdeviceptr c = counts->pointer(), pre = prefix->pointer(), tot = totals->pointer();
  int cur = 0;
  for (int byte = 0; byte < key_bytes; ++byte) {
    if (((byte_mask >> byte) & 1u) == 0) continue;
    int shift = 8 * byte;
    if (Status st = cuda::launch_with(p.device(), hist.value(), per_tile, keys[cur], n, shift, c, tiles); !st.ok())
      return st;
    if (Status st = cuda::launch_with(p.device(), rowscan.value(), per_digit, c, tiles, pre, tot); !st.ok()) return st;
    if (Status st = cuda::launch_with(p.device(), scatter.value(), per_tile, keys[cur], payload[cur], n, shift, c, pre,
                                      tot, tiles, keys[1 - cur], payload[1 - cur]);
        !st.ok())
      return st;
    cur = 1 - cur;
  }
  *which = cur;
  return Status();
}

}  // namespace detail

namespace {

/// The sorted order of v, segment by segment (runtime/cpu/rank_sort.cpp's sorted_order): on
/// success `from` points at n int64 entries, from[q] = the original position of the element at
/// sorted position q. Reads back which key digits vary (synchronises).
struct SortedOrder {
  cuda::DeviceBuffer keys, payload;
  CUdeviceptr from = 0;
};

Status sorted_order(Primitives& p, ndp_elem_type t, CUdeviceptr v, DSegs s, ndp_order order, SortedOrder& so) {
  const int64_t n = s.total;
  const int eb = elem_bytes(t);
  const int kb = eb == 8 ? 8 : 4;  // the value keys' width
  const int seg_bytes = s.count > 1 ? key_bytes_for(static_cast<uint64_t>(s.count - 1)) : 0;
  const int skb = seg_bytes > 4 ? 8 : 4;  // the segment keys' width
  const size_t kw = static_cast<size_t>(std::max(kb, skb));
  Result<cuda::DeviceBuffer> keys = p.pool().allocate(2 * kw * static_cast<size_t>(n));
  if (!keys.ok()) return keys.status();
  Result<cuda::DeviceBuffer> payload = p.pool().allocate(2 * sizeof(int64_t) * static_cast<size_t>(n));
  if (!payload.ok()) return payload.status();
  Result<cuda::DeviceBuffer> stats = p.pool().allocate(2 * sizeof(uint64_t));
  if (!stats.ok()) return stats.status();
  so.keys = std::move(keys.value());
  so.payload = std::move(payload.value());
  CUdeviceptr k[2] = {so.keys.pointer(), so.keys.pointer() + kw * static_cast<size_t>(n)};
  CUdeviceptr pl[2] = {so.payload.pointer(), so.payload.pointer() + sizeof(int64_t) * static_cast<size_t>(n)};

  // Keys, with the AND and the OR of all of them.
  CUdeviceptr st_ptr = stats->pointer();
  if (Status st = p.fill(st_ptr, 1, 8, ~uint64_t{0}); !st.ok()) return st;
  if (Status st = p.fill(st_ptr + 8, 1, 8, 0); !st.ok()) return st;
  const bool desc = order == NDP_DESCENDING;
  std::string keygen = std::string("ndp_sort_keys_") + elem_suffix(t);
  Status launched = kb == 8 ? launch_named(p, keygen, n, v, n, desc ? ~uint64_t{0} : uint64_t{0}, k[0], pl[0], st_ptr)
                            : launch_named(p, keygen, n, v, n, desc ? (eb == 1 ? 0xFFu : ~0u) : 0u, k[0], pl[0], st_ptr);
  if (!launched.ok()) return launched;
  uint64_t and_or[2];
  if (Status st = p.pool().copy_to_host(and_or, stats.value(), sizeof and_or); !st.ok()) return st;
  uint64_t varying = and_or[0] ^ and_or[1];
  unsigned mask = 0;
  for (int b = 0; b < kb; ++b)
    if ((varying >> (8 * b)) & 0xFF) mask |= 1u << b;
  int cur = 0;
  if (Status st = detail::radix_sort_pairs(p, kb, k, pl, n, mask, &cur); !st.ok()) return st;

  if (seg_bytes > 0 && n > 1) {
    // Segmented: a further stable sort by segment makes the segment the major key.
    CUdeviceptr k2[2] = {k[cur], k[1 - cur]}, pl2[2] = {pl[cur], pl[1 - cur]};
    if (Status st = launch_named(p, std::string("ndp_sort_segment_keys_") + (skb == 8 ? "u64" : "u32"), n, pl2[0], n, s,
                                 k2[0]);
        !st.ok())
      return st;
    int cur2 = 0;
    if (Status st = detail::radix_sort_pairs(p, skb, k2, pl2, n, (1u << seg_bytes) - 1, &cur2); !st.ok()) return st;
    so.from = pl2[cur2];
  } else {
    so.from = pl[cur];
  }
  return Status();
}

bool sortable(ndp_elem_type t) { return t != NDP_BOOL; }

}  // namespace

Result<ndp_status> Primitives::rank(ndp_elem_type t, CUdeviceptr v, DSegs s, ndp_order order, CUdeviceptr out) {
  if (!sortable(t)) return ndp_status{NDP_UNSUPPORTED, -1, -1, -1};
  if (s.total == 0) return data_ok();
  SortedOrder so;
  if (Status st = sorted_order(*this, t, v, s, order, so); !st.ok()) return st;
  if (Status st = launch_named(*this, "ndp_rank_positions", s.total, so.from, s, out); !st.ok()) return st;
  return data_ok();
}

Result<ndp_status> Primitives::sort(ndp_elem_type t, CUdeviceptr v, DSegs s, ndp_order order, CUdeviceptr out) {
  if (!sortable(t)) return ndp_status{NDP_UNSUPPORTED, -1, -1, -1};
  if (s.total == 0) return data_ok();
  SortedOrder so;
  if (Status st = sorted_order(*this, t, v, s, order, so); !st.ok()) return st;
  if (Status st = gather(elem_bytes(t), v, so.from, s.total, out); !st.ok()) return st;
  return data_ok();
}

}  // namespace ndp::rt::gpu
