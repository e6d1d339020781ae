// Position vectors and length checks for the executor's structural operations
// (device/structure.cu).
#include "runtime/gpu/launch.h"

namespace ndp::rt::gpu {

namespace {

/// A failure record (one word, kNoFailure) on the device.
Result<cuda::DeviceBuffer> failure_record(Primitives& p) {
  Result<cuda::DeviceBuffer> b = p.pool().allocate(8);
  if (!b.ok()) return b;
  Status s = p.pool().fill_words(b.value(), 0xFFFFFFFFu, 2);
  if (!s.ok()) return s;
  return b;
}

/// The lowest failing position the record holds, or -1 (synchronises).
Result<int64_t> read_failure(Primitives& p, const cuda::DeviceBuffer& record) {
  uint64_t v = 0;
  Status s = p.pool().copy_to_host(&v, record, 8);
  if (!s.ok()) return s;
  return v == ~uint64_t{0} ? int64_t{-1} : static_cast<int64_t>(v);
}

}  // namespace

Status Primitives::nested_take_positions(CUdeviceptr src_offsets, CUdeviceptr idx, DSegs out_segs, CUdeviceptr out) {
  return launch_named(*this, "ndp_nested_take_positions", out_segs.total, src_offsets, idx, out_segs, out);
}

Result<int64_t> Primitives::index_shared_positions(CUdeviceptr seq_offsets, CUdeviceptr ids, CUdeviceptr idx, int64_t n,
                                                   CUdeviceptr out) {
  if (n <= 0) return int64_t{-1};
  Result<cuda::DeviceBuffer> rec = failure_record(*this);
  if (!rec.ok()) return rec.status();
  Status s = launch_named(*this, "ndp_index_shared_positions", n, seq_offsets, ids, idx, n, out, rec->pointer());
  if (!s.ok()) return s;
  return read_failure(*this, rec.value());
}

Status Primitives::merge_positions(CUdeviceptr flags, int64_t n, int64_t na, CUdeviceptr out) {
  if (n <= 0) return Status();
  Result<cuda::DeviceBuffer> wide = pool().allocate(static_cast<size_t>(n) * 8);
  if (!wide.ok()) return wide.status();
  Status s = launch_named(*this, "ndp_widen_flags", n, flags, n, wide->pointer());
  if (!s.ok()) return s;
  Result<ndp_status> scanned = seg_scan(NDP_OP_PLUS, false, NDP_I64, wide->pointer(), DSegs::flat(n), wide->pointer());
  if (!scanned.ok()) return scanned.status();
  return launch_named(*this, "ndp_merge_positions", n, flags, wide->pointer(), n, na, out);
}

Status Primitives::seq_lit_positions(int64_t n, int64_t k, CUdeviceptr out) {
  return launch_named(*this, "ndp_seq_lit_positions", n * k, n, k, out);
}

Result<int64_t> Primitives::first_difference(CUdeviceptr a, CUdeviceptr b, int64_t n) {
  if (n <= 0) return int64_t{-1};
  Result<cuda::DeviceBuffer> rec = failure_record(*this);
  if (!rec.ok()) return rec.status();
  Status s = launch_named(*this, "ndp_first_difference", n, a, b, n, rec->pointer());
  if (!s.ok()) return s;
  return read_failure(*this, rec.value());
}

Result<int64_t> Primitives::iseq_lengths(CUdeviceptr start, CUdeviceptr stride, CUdeviceptr end, int64_t n,
                                         CUdeviceptr out) {
  if (n <= 0) return int64_t{-1};
  Result<cuda::DeviceBuffer> rec = failure_record(*this);
  if (!rec.ok()) return rec.status();
  Status s = launch_named(*this, "ndp_iseq_lengths", n, start, stride, end, n, out, rec->pointer());
  if (!s.ok()) return s;
  return read_failure(*this, rec.value());
}

}  // namespace ndp::rt::gpu
