// Descriptors (device/segdes.cu): offsets from lengths, segment ids, LENGTHS.
#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::runtime::gpu {

Result<ndp_status> Primitives::offsets_from_lengths(CUdeviceptr lengths, int64_t n, CUdeviceptr offsets,
                                                    int64_t* total) {
  if (n < 0) return ndp_status{NDP_INVALID_ARGUMENT, -1, -1, -1};
  // rec: {lowest position of a negative length, its value, offsets[n]}: the failure words,
  // whose first is armed (Note [Armed failure words] in primitives.cpp). The record kernel
  // also writes offsets[0].
  Result<CUdeviceptr> rec = failure_words();
  if (!rec.ok()) return rec.status();
  CUdeviceptr rec_ptr = rec.value();
  if (Status st = launch_named(*this, "ndp_offsets_check", n, lengths, n, rec_ptr); !st.ok()) return st;
  if (n > 0) {
    Result<ndp_status> scan = seg_scan(NDP_OP_PLUS, true, NDP_I64, lengths, DSegs::flat(n), offsets + sizeof(int64_t));
    if (!scan.ok()) return scan.status();
  }
  if (Status st = launch_named(*this, "ndp_offsets_record", 1, lengths, offsets, n, rec_ptr); !st.ok()) return st;
  uint64_t host[3] = {0, 0, 0};
  if (Status st = pool().download(host, rec_ptr, sizeof host); !st.ok()) return st;
  if (total) *total = static_cast<int64_t>(host[2]);
  if (host[0] != ~uint64_t{0}) {
    if (Status st = rearm_failure_words(); !st.ok()) return st;
    return ndp_status{NDP_NEGATIVE_LENGTH, static_cast<int64_t>(host[0]), static_cast<int64_t>(host[1]), -1};
  }
  return data_ok();
}

Status Primitives::segment_ids(DSegs s, CUdeviceptr out) {
  return detail::launch_per_element_segment(*this, "ndp_segment_ids", s, s, out);
}

Status Primitives::segment_ranks(DSegs s, CUdeviceptr out) {
  return detail::launch_per_element_segment(*this, "ndp_segment_ranks", s, s, out);
}

Status Primitives::lengths_of(DSegs s, CUdeviceptr out) {
  return launch_named(*this, "ndp_lengths_of", s.count, s, out);
}

}  // namespace ndp::runtime::gpu
