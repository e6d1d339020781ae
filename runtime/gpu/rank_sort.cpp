// RANK and SORT by stable LSD radix sort (device/sort.cu, Note [GPU radix sort]), and the radix
// sort of (key, position) pairs that combine.cpp uses too.
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/gpu/launch.h"

namespace ndp::runtime::gpu {

namespace detail {

namespace {

/// The tile of device/tile/onesweep.cuh (kSortTile) and its threads.
constexpr int64_t kSortTile = 256 * 16;
constexpr unsigned kSortThreads = 256;

/// The digit counts of every byte of the keys (one upsweep): hist on the host, digit starts on
/// the device; whether some value's key collapses (device/thread/sort_keys.cuh's key_collapses).
struct DigitCounts {
  std::vector<uint64_t> hist;  // hist[byte · 256 + digit]
  cuda::DeviceBuffer starts;   // int64 digit_start[byte · 256 + digit]
  bool collapsed = false;

  /// Whether byte b has more than one digit among the n keys (else its pass changes nothing).
  bool varies(int b, int64_t n) const {
    for (int d = 0; d < 256; ++d)
      if (hist[static_cast<size_t>(b) * 256 + d] == static_cast<uint64_t>(n)) return false;
    return true;
  }
};

/// Runs `upsweep(hist, collapsed)` (an ndp_radix_upsweep_* launch) on zeroed counts, then the
/// digit starts, and reads the counts back (synchronises).
template <class Upsweep>
Status count_digits(Primitives& p, int key_bytes, Upsweep upsweep, DigitCounts& dc) {
  const size_t entries = static_cast<size_t>(key_bytes) * 256;
  Result<cuda::DeviceBuffer> counts = p.pool().allocate((entries + 1) * sizeof(uint64_t));
  if (!counts.ok()) return counts.status();
  const CUdeviceptr hist = counts->pointer(), collapsed = hist + entries * sizeof(uint64_t);
  if (Status st = p.fill(hist, static_cast<int64_t>(entries) + 1, 8, 0); !st.ok()) return st;
  if (Status st = upsweep(hist, collapsed); !st.ok()) return st;
  Result<cuda::DeviceBuffer> starts = p.pool().allocate(entries * sizeof(int64_t));
  if (!starts.ok()) return starts.status();
  Result<cuda::Kernel> scan = p.kernel("ndp_radix_digit_starts");
  if (!scan.ok()) return scan.status();
  if (Status st = cuda::launch_with(p.device(), scan.value(), cuda::LaunchConfig{static_cast<unsigned>(key_bytes), 256, 0},
                                    hist, starts->pointer());
      !st.ok())
    return st;
  dc.hist.assign(entries + 1, 0);
  if (Status st = p.pool().copy_to_host(dc.hist.data(), counts.value(), (entries + 1) * sizeof(uint64_t)); !st.ok())
    return st;
  dc.collapsed = (dc.hist.back() & 1) != 0;
  dc.hist.pop_back();
  dc.starts = std::move(starts.value());
  return Status();
}

/// The look-back words and the ticket of one-sweep passes over n keys, zeroed by `reset` before
/// each pass.
struct LookBackSpace {
  cuda::DeviceBuffer buffer;
  int64_t tiles = 0;
  int64_t words8 = 0;  // the buffer's size in 8-byte words
  CUdeviceptr ticket() const { return buffer.pointer(); }
  CUdeviceptr words() const { return buffer.pointer() + 8; }

  static Result<LookBackSpace> make(Primitives& p, int64_t n, int word_bytes) {
    LookBackSpace s;
    s.tiles = (n + kSortTile - 1) / kSortTile;
    s.words8 = 1 + (s.tiles * 256 * word_bytes + 7) / 8;
    Result<cuda::DeviceBuffer> b = p.pool().allocate(static_cast<size_t>(s.words8) * 8);
    if (!b.ok()) return b.status();
    s.buffer = std::move(b.value());
    return s;
  }
  Status reset(Primitives& p) const { return p.fill(buffer.pointer(), words8, 8, 0); }
  cuda::LaunchConfig launch() const { return cuda::LaunchConfig{static_cast<unsigned>(tiles), kSortThreads, 0}; }
};

/// Look-back words of 32 bits hold counts below 2^30 (device/tile/onesweep.cuh, SortLookBack).
bool narrow_words(int64_t n) { return n < (int64_t{1} << 30); }

}  // namespace

Status radix_sort_pairs(Primitives& p, int key_bytes, const CUdeviceptr keys[2], const CUdeviceptr payload[2], int64_t n,
                        unsigned byte_mask, int* which) {
  *which = 0;
  if (n < 2 || byte_mask == 0) return Status();
  const std::string kname = key_bytes == 8 ? "u64" : "u32";
  DigitCounts dc;
  if (Status st = count_digits(p, key_bytes, [&](CUdeviceptr hist, CUdeviceptr collapsed) {
        return launch_named(p, "ndp_radix_upsweep_" + kname, n, keys[0], n, hist, collapsed);
      }, dc);
      !st.ok())
    return st;
  const bool narrow = narrow_words(n);
  Result<LookBackSpace> space = LookBackSpace::make(p, n, narrow ? 4 : 8);
  if (!space.ok()) return space.status();
  Result<cuda::Kernel> pass = p.kernel("ndp_onesweep_pairs_" + kname + (narrow ? "_w32" : "_w64"));
  if (!pass.ok()) return pass.status();
  int cur = 0;
  for (int byte = 0; byte < key_bytes; ++byte) {
    if (((byte_mask >> byte) & 1u) == 0 || !dc.varies(byte, n)) continue;
    if (Status st = space->reset(p); !st.ok()) return st;
    const CUdeviceptr starts = dc.starts.pointer() + static_cast<size_t>(byte) * 256 * sizeof(int64_t);
    if (Status st = cuda::launch_with(p.device(), pass.value(), space->launch(), keys[cur], payload[cur], keys[1 - cur],
                                      payload[1 - cur], n, 8 * byte, starts, space->words(), space->ticket());
        !st.ok())
      return st;
    cur = 1 - cur;
  }
  *which = cur;
  return Status();
}

}  // namespace detail

namespace {

/// The mask that reverses the order of the keys of t for a descending sort (0 ascending).
uint64_t sort_flip(ndp_elem_type t, ndp_order order) {
  if (order != NDP_DESCENDING) return 0;
  const int eb = elem_bytes(t);
  return eb == 8 ? ~uint64_t{0} : eb == 1 ? 0xFFu : 0xFFFFFFFFu;
}

/// launch(flip) with the flip as the kernels' key type: 8 bytes for 8-byte keys, else 4.
template <class Launch>
Status with_flip(int key_bytes, uint64_t flip, Launch launch) {
  return key_bytes == 8 ? launch(flip) : launch(static_cast<uint32_t>(flip));
}

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
  so.keys = std::move(keys.value());
  so.payload = std::move(payload.value());
  CUdeviceptr k[2] = {so.keys.pointer(), so.keys.pointer() + kw * static_cast<size_t>(n)};
  CUdeviceptr pl[2] = {so.payload.pointer(), so.payload.pointer() + sizeof(int64_t) * static_cast<size_t>(n)};

  // Keys and positions; the sort skips the key bytes that do not vary (its digit counts).
  std::string keygen = std::string("ndp_sort_keys_") + elem_suffix(t);
  if (Status st = with_flip(kb, sort_flip(t, order),
                            [&](auto flip) { return launch_named(p, keygen, n, v, n, flip, k[0], pl[0]); });
      !st.ok())
    return st;
  int cur = 0;
  if (Status st = detail::radix_sort_pairs(p, kb, k, pl, n, (1u << kb) - 1, &cur); !st.ok()) return st;

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

/// SORT of one segment of n values by their keys alone (Note [GPU radix sort]): the first pass
/// reads the values, the last writes them, and no position travels with them. *done is false,
/// and nothing is written, where a key collapses (NaN, -0.0: their order needs the positions) or
/// n is too large for 32-bit look-back words.
Status sort_flat_keys(Primitives& p, ndp_elem_type t, CUdeviceptr v, int64_t n, ndp_order order, CUdeviceptr out,
                      bool* done) {
  *done = false;
  if (!detail::narrow_words(n)) return Status();
  const int eb = elem_bytes(t);
  const int kb = eb == 8 ? 8 : 4;
  const uint64_t flip = sort_flip(t, order);
  const std::string suffix = elem_suffix(t);
  detail::DigitCounts dc;
  Result<cuda::Kernel> upsweep = p.kernel("ndp_radix_upsweep_" + suffix);
  if (!upsweep.ok()) return upsweep.status();
  if (Status st = detail::count_digits(p, kb, [&](CUdeviceptr hist, CUdeviceptr collapsed) {
        return with_flip(kb, flip, [&](auto f) {
          return cuda::launch_with(p.device(), upsweep.value(), p.device().grid_stride(n), v, n, f, hist, collapsed);
        });
      }, dc);
      !st.ok())
    return st;
  if (dc.collapsed) return Status();
  std::vector<int> bytes;
  for (int b = 0; b < kb; ++b)
    if (dc.varies(b, n)) bytes.push_back(b);
  *done = true;
  if (bytes.empty()) return p.pool().copy(out, v, static_cast<size_t>(n) * eb);  // all keys equal
  Result<detail::LookBackSpace> space = detail::LookBackSpace::make(p, n, 4);
  if (!space.ok()) return space.status();
  // Keys between passes, in two buffers taken in turn (one where there are two passes).
  const size_t key_array = static_cast<size_t>(n) * kb;
  Result<cuda::DeviceBuffer> keys = p.pool().allocate(bytes.size() > 2 ? 2 * key_array : key_array);
  if (!keys.ok()) return keys.status();
  const CUdeviceptr key_buf[2] = {keys->pointer(), keys->pointer() + (bytes.size() > 2 ? key_array : 0)};
  for (size_t i = 0; i < bytes.size(); ++i) {
    const bool first = i == 0, last = i + 1 == bytes.size();
    Result<cuda::Kernel> pass = p.kernel("ndp_onesweep_" + suffix + "_" + (first ? "v" : "k") + (last ? "v" : "k"));
    if (!pass.ok()) return pass.status();
    if (Status st = space->reset(p); !st.ok()) return st;
    const CUdeviceptr from = first ? v : key_buf[(i - 1) % 2], to = last ? out : key_buf[i % 2];
    const CUdeviceptr starts = dc.starts.pointer() + static_cast<size_t>(bytes[i]) * 256 * sizeof(int64_t);
    if (Status st = with_flip(kb, flip, [&](auto f) {
          return cuda::launch_with(p.device(), pass.value(), space->launch(), from, to, n, 8 * bytes[i], f, starts,
                                   space->words(), space->ticket());
        });
        !st.ok())
      return st;
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
  if (s.count == 1 && s.total > 1) {
    bool done = false;
    if (Status st = sort_flat_keys(*this, t, v, s.total, order, out, &done); !st.ok()) return st;
    if (done) return data_ok();
  }
  SortedOrder so;
  if (Status st = sorted_order(*this, t, v, s, order, so); !st.ok()) return st;
  if (Status st = gather(elem_bytes(t), v, so.from, s.total, out); !st.ok()) return st;
  return data_ok();
}

}  // namespace ndp::runtime::gpu
