// EXTRACT and REPLACE (device/extract_replace.cu).
#include "runtime/gpu/launch.h"

namespace ndp::runtime::gpu {

namespace {

/// Runs ndp_extract_record and reads the outcome back (synchronises).
Result<ndp_status> finish(Primitives& p, const StatusRecord& r, CUdeviceptr idx, DSegs s) {
  if (Status st = launch_named(p, "ndp_extract_record", 1, idx, s, r.slots(), r.status()); !st.ok()) return st;
  return r.read_status(p);
}

}  // namespace

Result<ndp_status> Primitives::extract(ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, DSegs s, CUdeviceptr out) {
  if (s.count == 0) return data_ok();
  Result<StatusRecord> r = StatusRecord::make(*this);
  if (!r.ok()) return r.status();
  if (Status st = launch_named(*this, sized_name("ndp_extract_", t), s.count, v, idx, s, out, r->slots()); !st.ok()) return st;
  return finish(*this, r.value(), idx, s);
}

Result<ndp_status> Primitives::replace(ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, CUdeviceptr x, DSegs s,
                                       CUdeviceptr out) {
  if (s.count == 0) {
    // No segments, so no elements either: nothing to check or copy.
    return data_ok();
  }
  Result<StatusRecord> r = StatusRecord::make(*this);
  if (!r.ok()) return r.status();
  if (Status st = launch_named(*this, "ndp_replace_check", s.count, idx, s, r->slots()); !st.ok()) return st;
  if (v != out)  // on a failure out is unspecified (primitives.h), so the copy need not wait
    if (Status st = pool().copy(out, v, static_cast<size_t>(s.total) * elem_bytes(t)); !st.ok()) return st;
  if (Status st = launch_named(*this, sized_name("ndp_replace_place_", t), s.count, idx, x, s, out, r->slots()); !st.ok())
    return st;
  return finish(*this, r.value(), idx, s);
}

}  // namespace ndp::runtime::gpu
