// EXTRACT and REPLACE (device/extract_replace.cu).
#include "runtime/gpu/launch.h"

namespace ndp::rt::gpu {

namespace {

/// A checked primitive's failure record on the device: [0, 4) the status record the record
/// kernel writes (code, position, index, length as int64), [4] the failure slot the checking
/// kernel lowers (all ones until then).
struct Record {
  cuda::DeviceBuffer buf;
  CUdeviceptr rec() const { return buf.pointer(); }
  CUdeviceptr slot() const { return buf.pointer() + 4 * sizeof(int64_t); }
};

Result<Record> make_record(Primitives& p) {
  Result<cuda::DeviceBuffer> b = p.pool().allocate(5 * sizeof(int64_t));
  if (!b.ok()) return b.status();
  Record r{std::move(b.value())};
  if (Status st = p.fill(r.slot(), 1, 8, ~uint64_t{0}); !st.ok()) return st;
  return r;
}

/// Runs ndp_extract_record and reads the outcome back (synchronises).
Result<ndp_status> finish(Primitives& p, const Record& r, CUdeviceptr idx, DSegs s) {
  if (Status st = launch_named(p, "ndp_extract_record", 1, idx, s, r.slot(), r.rec()); !st.ok()) return st;
  int64_t h[4];
  if (Status st = p.pool().copy_to_host(h, r.buf, sizeof h); !st.ok()) return st;
  return ndp_status{static_cast<ndp_status_code>(h[0]), h[1], h[2], h[3]};
}

std::string sized(const char* name, ndp_elem_type t) { return name + std::to_string(elem_bytes(t)); }

}  // namespace

Result<ndp_status> Primitives::extract(ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, DSegs s, CUdeviceptr out) {
  if (s.count == 0) return data_ok();
  Result<Record> r = make_record(*this);
  if (!r.ok()) return r.status();
  if (Status st = launch_named(*this, sized("ndp_extract_", t), s.count, v, idx, s, out, r->slot()); !st.ok()) return st;
  return finish(*this, r.value(), idx, s);
}

Result<ndp_status> Primitives::replace(ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, CUdeviceptr x, DSegs s,
                                       CUdeviceptr out) {
  if (s.count == 0) {
    // No segments, so no elements either: nothing to check or copy.
    return data_ok();
  }
  Result<Record> r = make_record(*this);
  if (!r.ok()) return r.status();
  if (Status st = launch_named(*this, "ndp_replace_check", s.count, idx, s, r->slot()); !st.ok()) return st;
  if (v != out) {
    if (Status st = launch_named(*this, sized("ndp_replace_copy_", t), s.total, v, s.total, out, r->slot()); !st.ok())
      return st;
  }
  if (Status st = launch_named(*this, sized("ndp_replace_place_", t), s.count, idx, x, s, out, r->slot()); !st.ok())
    return st;
  return finish(*this, r.value(), idx, s);
}

}  // namespace ndp::rt::gpu
