// Permutations: gather, scatter, PERMUTE, DPERMUTE, BPERMUTE (device/permute.cu).
#include "runtime/gpu/launch.h"

namespace ndp::rt::gpu {

namespace {

/// A checked primitive's failure record on the device: [0, 4) the status record the record
/// kernel writes (code, position, index, length as int64), [4, 6) the failure slots the
/// checking kernels lower (kNoFailure = all ones until then).
struct Record {
  cuda::DeviceBuffer buf;
  CUdeviceptr rec() const { return buf.pointer(); }
  CUdeviceptr slots() const { return buf.pointer() + 4 * sizeof(int64_t); }
};

Result<Record> make_record(Primitives& p) {
  Result<cuda::DeviceBuffer> b = p.pool().allocate(6 * sizeof(int64_t));
  if (!b.ok()) return b.status();
  Record r{std::move(b.value())};
  if (Status st = p.fill(r.slots(), 2, 8, ~uint64_t{0}); !st.ok()) return st;
  return r;
}

/// Reads the record back (synchronises).
Result<ndp_status> read_record(Primitives& p, const Record& r) {
  int64_t h[4];
  if (Status st = p.pool().copy_to_host(h, r.buf, sizeof h); !st.ok()) return st;
  return ndp_status{static_cast<ndp_status_code>(h[0]), h[1], h[2], h[3]};
}

/// Runs ndp_permute_record (positions in shape sp, lengths from sl) and reads the outcome.
Result<ndp_status> finish(Primitives& p, const Record& r, CUdeviceptr idx, DSegs sp, DSegs sl) {
  if (Status st = launch_named(p, "ndp_permute_record", 1, idx, sp, sl, r.slots(), r.rec()); !st.ok()) return st;
  return read_record(p, r);
}

std::string sized(const char* name, int bytes) { return name + std::to_string(bytes); }

}  // namespace

Status Primitives::gather(int bytes, CUdeviceptr v, CUdeviceptr idx, int64_t n, CUdeviceptr out) {
  return launch_named(*this, sized("ndp_gather_", bytes), n, v, idx, n, out);
}

Status Primitives::scatter(int bytes, CUdeviceptr v, CUdeviceptr idx, int64_t n, CUdeviceptr out) {
  return launch_named(*this, sized("ndp_scatter_", bytes), n, v, idx, n, out);
}

Result<ndp_status> Primitives::permute(ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, DSegs s, CUdeviceptr out) {
  if (s.total == 0) return data_ok();
  Result<Record> r = make_record(*this);
  if (!r.ok()) return r.status();
  Result<cuda::DeviceBuffer> claim = pool().allocate(static_cast<size_t>(s.total) * sizeof(uint64_t));
  if (!claim.ok()) return claim.status();
  CUdeviceptr c = claim->pointer();
  if (Status st = fill(c, s.total, 8, ~uint64_t{0}); !st.ok()) return st;
  if (Status st = launch_named(*this, "ndp_permute_claim", s.total, idx, s, c, r->slots()); !st.ok()) return st;
  if (Status st = launch_named(*this, sized("ndp_permute_place_", elem_bytes(t)), s.total, v, idx, s, c, out, r->slots());
      !st.ok())
    return st;
  return finish(*this, r.value(), idx, s, s);
}

Result<ndp_status> Primitives::dpermute(ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, DSegs sv, CUdeviceptr defaults,
                                        DSegs sd, CUdeviceptr out) {
  if (sv.count != sd.count) return ndp_status{NDP_LENGTH_MISMATCH, -1, sv.count, sd.count};
  int bytes = elem_bytes(t);
  if (sv.total == 0) {
    if (defaults == out) return data_ok();
    // Nothing to check: out is a copy of the defaults.
    Result<Record> r = make_record(*this);
    if (!r.ok()) return r.status();
    if (Status st = launch_named(*this, sized("ndp_dpermute_copy_", bytes), sd.total, defaults, sd.total, out, r->slots());
        !st.ok())
      return st;
    return data_ok();
  }
  Result<Record> r = make_record(*this);
  if (!r.ok()) return r.status();
  Result<cuda::DeviceBuffer> owner = pool().allocate(static_cast<size_t>(std::max<int64_t>(sd.total, 1)) * sizeof(int64_t));
  if (!owner.ok()) return owner.status();
  CUdeviceptr o = owner->pointer();
  if (Status st = fill(o, sd.total, 8, ~uint64_t{0}); !st.ok()) return st;  // -1: no owner
  if (Status st = launch_named(*this, "ndp_dpermute_own", sv.total, idx, sv, sd, o, r->slots()); !st.ok()) return st;
  if (defaults != out) {
    if (Status st = launch_named(*this, sized("ndp_dpermute_copy_", bytes), sd.total, defaults, sd.total, out, r->slots());
        !st.ok())
      return st;
  }
  if (Status st = launch_named(*this, sized("ndp_dpermute_place_", bytes), sv.total, v, idx, sv, sd, o, out, r->slots());
      !st.ok())
    return st;
  return finish(*this, r.value(), idx, sv, sd);
}

Result<ndp_status> Primitives::bpermute(ndp_elem_type t, CUdeviceptr v, DSegs sv, CUdeviceptr idx, DSegs si,
                                        CUdeviceptr out) {
  if (sv.count != si.count) return ndp_status{NDP_LENGTH_MISMATCH, -1, si.count, sv.count};
  if (si.total == 0) return data_ok();
  Result<Record> r = make_record(*this);
  if (!r.ok()) return r.status();
  if (Status st = launch_named(*this, sized("ndp_bpermute_", elem_bytes(t)), si.total, v, sv, idx, si, out, r->slots());
      !st.ok())
    return st;
  return finish(*this, r.value(), idx, si, sv);
}

}  // namespace ndp::rt::gpu
