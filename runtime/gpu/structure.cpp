// Position vectors and length checks for the executor's structural operations
// (device/structure.cu).
#include "runtime/gpu/launch.h"
#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::runtime::gpu {

Status Primitives::nested_take_positions(CUdeviceptr src_offsets, CUdeviceptr idx, DSegs out_segs, CUdeviceptr out) {
  return detail::launch_per_element_segment(*this, "ndp_nested_take_positions", out_segs, src_offsets, idx, out_segs, out);
}

Status Primitives::nested_take(int bytes, CUdeviceptr src, CUdeviceptr src_offsets, CUdeviceptr idx, DSegs out_segs,
                               CUdeviceptr out) {
  return detail::launch_per_element_segment(*this, sized_name("ndp_nested_take_", bytes), out_segs, src, src_offsets,
                                            idx, out_segs, out);
}

Status Primitives::nested_take2(int bytes, CUdeviceptr a, CUdeviceptr a_offsets, int64_t na, CUdeviceptr b,
                                CUdeviceptr b_offsets, CUdeviceptr idx, DSegs out_segs, CUdeviceptr out) {
  return detail::launch_per_element_segment(*this, sized_name("ndp_nested_take2_", bytes), out_segs, a, a_offsets,
                                            static_cast<long long>(na), b, b_offsets, idx, out_segs, out);
}

Result<int64_t> Primitives::index_shared_positions(CUdeviceptr seq_offsets, CUdeviceptr ids, CUdeviceptr idx, int64_t n,
                                                   CUdeviceptr out) {
  return first_failure(*this, "ndp_index_shared_positions", n, seq_offsets, ids, idx, n, out);
}

Status Primitives::index_shared_positions_into(CUdeviceptr seq_offsets, CUdeviceptr ids, CUdeviceptr idx, int64_t n,
                                               CUdeviceptr out, CUdeviceptr failure) {
  return launch_named(*this, "ndp_index_shared_positions", n, seq_offsets, ids, idx, n, out, failure);
}

Result<int64_t> Primitives::first_out_of_range(CUdeviceptr idx, int64_t n, int64_t bound) {
  return first_failure(*this, "ndp_first_out_of_range", n, idx, n, bound);
}

Status Primitives::clamped_positions(CUdeviceptr idx, int64_t n, int64_t bound, CUdeviceptr out, CUdeviceptr failure) {
  return launch_named(*this, "ndp_clamped_positions", n, idx, n, bound, out, failure);
}

namespace {
/// Launches kernel `name` as one block of kScanBlock threads, which its block scan is sized for
/// (Note [Small inputs in one launch] in primitives.cpp).
template <class... Args>
Status launch_one_block(Primitives& p, const char* name, Args... args) {
  Result<cuda::Kernel> k = p.kernel(name);
  if (!k.ok()) return k.status();
  cuda::LaunchConfig c = p.device().grid_stride(1);
  c.grid_x = 1;
  c.block_x = detail::kScanBlock;
  return cuda::launch_with(p.device(), k.value(), c, args...);
}
}  // namespace

/// The most pieces partition_block cuts in one block (Note [Small inputs in one launch]).
constexpr int64_t kPartitionOneBlock = 4096;

bool Primitives::partition_fits_one_block(int64_t m) const {
  return m > 0 && m <= kPartitionOneBlock && small_inputs_in_one_launch();
}

Status Primitives::partition_block(CUdeviceptr len, int64_t m, int64_t total, CUdeviceptr out_off, CUdeviceptr out_len,
                                   CUdeviceptr failure) {
  if (!partition_fits_one_block(m)) return Status::failure("partition_block", "more pieces than one block cuts");
  return launch_one_block(*this, "ndp_partition_block", len, m, total, out_off, out_len, failure);
}

/// The most flags merge_positions scans in one block (Note [Small inputs in one launch]).
constexpr int64_t kMergeOneBlock = 4096;

Status Primitives::merge_positions(CUdeviceptr flags, int64_t n, int64_t na, CUdeviceptr out) {
  if (n <= 0) return Status();
  if (n <= kMergeOneBlock && small_inputs_in_one_launch())
    return launch_one_block(*this, "ndp_merge_positions_block", flags, n, na, out);
  Result<cuda::DeviceBuffer> wide = pool().allocate(static_cast<size_t>(n) * 8);
  if (!wide.ok()) return wide.status();
  Status s = launch_named(*this, "ndp_widen_flags", n, flags, n, wide->pointer());
  if (!s.ok()) return s;
  Result<ndp_status> scanned = seg_scan(NDP_OP_PLUS, false, NDP_I64, wide->pointer(), DSegs::flat(n), wide->pointer());
  if (!scanned.ok()) return scanned.status();
  return launch_named(*this, "ndp_merge_positions", n, flags, wide->pointer(), n, na, out);
}

namespace {
/// The most flags pack_rows_block scans in one block (Note [Small inputs in one launch]).
constexpr int64_t kPackRowsOneBlock = 4096;
/// The parameters of ndp_pack_rows_block (device/structure.cu), by value.
struct PackRowsParts {
  CUdeviceptr lengths[Primitives::kPackRowsParts] = {}, out_lengths[Primitives::kPackRowsParts] = {},
              out_offsets[Primitives::kPackRowsParts] = {};
  int32_t count = 0;
};
}  // namespace

bool Primitives::packs_rows_in_one_block(int64_t n, size_t parts) const {
  return n > 0 && n <= kPackRowsOneBlock && parts >= 1 && parts <= static_cast<size_t>(kPackRowsParts) &&
         small_inputs_in_one_launch();
}

Status Primitives::pack_rows_block(CUdeviceptr flags, int64_t n, std::span<const PackedRows> rows,
                                   CUdeviceptr positions) {
  PackRowsParts arg;
  for (size_t j = 0; j < rows.size(); ++j) {
    arg.lengths[j] = rows[j].lengths;
    arg.out_lengths[j] = rows[j].out_lengths;
    arg.out_offsets[j] = rows[j].out_offsets;
  }
  arg.count = static_cast<int32_t>(rows.size());
  return launch_one_block(*this, "ndp_pack_rows_block", flags, n, arg, positions);
}

Status Primitives::gather2(int bytes, CUdeviceptr a, int64_t na, CUdeviceptr b, CUdeviceptr idx, int64_t n,
                           CUdeviceptr out) {
  return launch_named(*this, sized_name("ndp_gather2_", bytes), n, a, na, b, idx, n, out);
}

Status Primitives::affine_positions(CUdeviceptr idx, int64_t n, int64_t c, int64_t stride, int64_t offset,
                                    int64_t inner, CUdeviceptr out) {
  return launch_named(*this, "ndp_affine_positions", n, idx, n, c, stride, offset, inner, out);
}

Status Primitives::affine_gather(int bytes, CUdeviceptr src, int64_t n, int64_t c, int64_t stride, int64_t offset,
                                 int64_t inner, CUdeviceptr out) {
  return launch_named(*this, sized_name("ndp_affine_gather_", bytes), n, src, n, c, stride, offset, inner, out);
}

Status Primitives::formula_positions(int64_t n, int64_t c, int64_t a, int64_t b, int64_t k, CUdeviceptr out) {
  if (c < 1) return Status::failure("formula_positions", "a divisor under 1");
  return launch_named(*this, "ndp_formula_positions", n, n, c, a, b, k, out);
}

Status Primitives::flatten_segments(CUdeviceptr inner_offsets, DSegs outer, CUdeviceptr out_offsets,
                                    CUdeviceptr out_lengths) {
  return launch_named(*this, "ndp_flatten_segments", outer.count + 1, inner_offsets, outer, out_offsets, out_lengths);
}

Status Primitives::seq_lit_positions(int64_t n, int64_t k, CUdeviceptr out) {
  return launch_named(*this, "ndp_seq_lit_positions", n * k, n, k, out);
}

Result<int64_t> Primitives::first_difference(CUdeviceptr a, CUdeviceptr b, int64_t n) {
  return first_failure(*this, "ndp_first_difference", n, a, b, n);
}

Status Primitives::first_difference_into(CUdeviceptr a, CUdeviceptr b, int64_t n, CUdeviceptr failure) {
  return launch_named(*this, "ndp_first_difference", n, a, b, n, failure);
}

Status Primitives::clamped_lengths(CUdeviceptr len, int64_t n, int64_t most, CUdeviceptr out, CUdeviceptr failure) {
  return launch_named(*this, "ndp_clamped_lengths", n, len, n, most, out, failure);
}

Status Primitives::rows_within(CUdeviceptr off, int64_t n, int64_t total, CUdeviceptr out_off, CUdeviceptr out_len) {
  return launch_named(*this, "ndp_rows_within", n + 1, off, n, total, out_off, out_len);
}

Result<int64_t> Primitives::iseq_lengths(CUdeviceptr start, CUdeviceptr stride, CUdeviceptr end, int64_t n,
                                         CUdeviceptr out, int64_t* longest) {
  *longest = 0;
  if (n <= 0) return int64_t{-1};
  Result<CUdeviceptr> words = failure_words();
  if (!words.ok()) return words.status();
  if (Status st = fill(words.value() + 8, 1, 8, 0); !st.ok()) return st;
  if (Status st = launch_named(*this, "ndp_iseq_lengths", n, start, stride, end, n, out, words.value()); !st.ok())
    return st;
  uint64_t w[2];
  if (Status st = pool().download(w, words.value(), sizeof w); !st.ok()) return st;
  *longest = static_cast<int64_t>(w[1]);
  if (w[0] == ~uint64_t{0}) return int64_t{-1};
  if (Status st = rearm_failure_words(); !st.ok()) return st;
  return static_cast<int64_t>(w[0]);
}

}  // namespace ndp::runtime::gpu
