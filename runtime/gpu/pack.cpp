// Selection (device/pack.cu): PACK's lengths, the positions of the true flags, PACK's data.
#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::runtime::gpu {

namespace {

/// Elements per tile of device/tile/select.cuh's select_pass (kSelectTile).
constexpr int64_t kSelectTile = 4096;

/// Compaction in one pass (device/tile/select.cuh, select_pass): kernel `name` + "_c32" or
/// "_c64" (by the look-back's count type) with (v..., flags, n, scratch, out); with `kept`, *kept
/// receives the number of true flags, which the kernel leaves in the scratch (a read-back:
/// synchronises). With `kept_word`, *kept_word is where on the device that number is until the
/// next look-back pass (n > 0).
template <class... V>
Status compact(Primitives& p, const std::string& name, CUdeviceptr flags, int64_t n, CUdeviceptr out, int64_t* kept,
               CUdeviceptr* kept_word, V... v) {
  if (kept) *kept = 0;
  if (n <= 0) return Status();
  const int64_t ntiles = (n + kSelectTile - 1) / kSelectTile;
  Result<CUdeviceptr> scratch = p.lookback_scratch(ntiles);
  if (!scratch.ok()) return scratch.status();
  Result<cuda::Kernel> k = p.kernel(name + (n < (int64_t{1} << 31) ? "_c32" : "_c64"));
  if (!k.ok()) return k.status();
  if (Status st = cuda::launch_with(p.device(), k.value(), detail::pass_launch(p, ntiles), v..., flags, n,
                                    scratch.value(), out);
      !st.ok())
    return st;
  if (kept_word) *kept_word = scratch.value() + 8;
  if (!kept) return Status();
  uint64_t total = 0;
  if (Status st = p.pool().download(&total, scratch.value() + 8, sizeof total); !st.ok()) return st;
  *kept = static_cast<int64_t>(total);
  return Status();
}

}  // namespace

Status Primitives::pack_lengths(CUdeviceptr flags, DSegs s, CUdeviceptr out_lengths, int64_t* total) {
  if (s.count > 0 && s.total <= 0) {
    if (Status st = fill(out_lengths, s.count, 8, 0); !st.ok()) return st;
  } else if (s.count > 0) {
    // A segmented + reduction of the flags read as 0/1 (device/tile/reduce_segments.cuh), over
    // tiles of its int64 counts.
    if (Status st = detail::reduce_segments(*this, "ndp_packlen_tiles", "plus_i64", flags, s,
                                            detail::pass_shape(8), out_lengths);
        !st.ok())
      return st;
  }
  if (total) {
    Result<int64_t> n = count_true(flags, s.total);
    if (!n.ok()) return n.status();
    *total = n.value();
  }
  return Status();
}

Status Primitives::true_positions(CUdeviceptr flags, int64_t n, CUdeviceptr out) {
  return compact(*this, "ndp_select_positions", flags, n, out, nullptr, nullptr);
}

// Note [Counts from the kept positions]
// A filter inside an apply-to-each (`{p in points | c > 0}` for each instance) needs how many
// each instance keeps, and its pack's positions where the values move by positions (points
// gathered through positions not yet made, sequences). The counts were a segmented reduction of
// the flags (four launches and most of a pass over the flags: 93 µs of quickhull's first level
// of 2·10^7 points, Nsight Compute, H200), then a scan for their offsets, before the positions.
// The positions alone say it all: they ascend, so the kept before segment k are the lower bound
// of its first position among them, and its count the next bound less that. One thread a
// segment searches, in a launch after the look-back pass, which leaves the number kept on the
// device; the offsets' last entry is that number, for the caller's one read-back. The positions
// need room for every flag, as the number kept is not known before the pass, and where every
// flag is true they are made and not used: the counts' pass over the flags was made either way.
Status Primitives::true_positions_counted(CUdeviceptr flags, DSegs s, CUdeviceptr positions, CUdeviceptr counts,
                                          CUdeviceptr offsets) {
  if (s.total <= 0) {
    if (Status st = fill(offsets, s.count + 1, 8, 0); !st.ok()) return st;
    return s.count > 0 ? fill(counts, s.count, 8, 0) : Status();
  }
  CUdeviceptr kept_word = 0;
  if (Status st = compact(*this, "ndp_select_positions", flags, s.total, positions, nullptr, &kept_word); !st.ok())
    return st;
  return launch_named(*this, "ndp_counts_from_positions", s.count + 1, positions, kept_word, s, counts, offsets);
}

Status Primitives::pack(ndp_elem_type t, CUdeviceptr v, CUdeviceptr flags, int64_t n, CUdeviceptr out) {
  return compact(*this, "ndp_select_" + std::to_string(elem_bytes(t)), flags, n, out, nullptr, nullptr, v);
}

Result<int64_t> Primitives::pack_counted(ndp_elem_type t, CUdeviceptr v, CUdeviceptr flags, int64_t n,
                                         CUdeviceptr out) {
  int64_t kept = 0;
  if (Status st = compact(*this, "ndp_select_" + std::to_string(elem_bytes(t)), flags, n, out, &kept, nullptr, v);
      !st.ok())
    return st;
  return kept;
}

}  // namespace ndp::runtime::gpu
