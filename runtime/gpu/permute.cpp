// Permutations: gather, scatter, PERMUTE, DPERMUTE, BPERMUTE (device/permute.cu).
#include <algorithm>

#include "runtime/gpu/launch.h"

namespace ndp::runtime::gpu {

namespace {

/// Runs ndp_permute_record (positions in shape sp, lengths from sl) and reads the outcome.
Result<ndp_status> finish(Primitives& p, const StatusRecord& r, CUdeviceptr idx, DSegs sp, DSegs sl) {
  if (Status st = launch_named(p, "ndp_permute_record", 1, idx, sp, sl, r.slots(), r.status()); !st.ok()) return st;
  return r.read_status(p);
}

// The parameters of ndp_gather_many (device/permute.cu), by value.
struct GatherManyParts {
  CUdeviceptr v[Primitives::kGatherParts] = {}, out[Primitives::kGatherParts] = {};
  int32_t bytes[Primitives::kGatherParts] = {};
  int32_t count = 0;
};

}  // namespace

Status Primitives::gather(int bytes, CUdeviceptr v, CUdeviceptr idx, int64_t n, CUdeviceptr out) {
  return launch_named(*this, sized_name("ndp_gather_", bytes), n, v, idx, n, out);
}

Status Primitives::gather_many(std::span<const GatherPart> parts, CUdeviceptr idx, int64_t n) {
  if (n <= 0) return Status();
  for (size_t first = 0; first < parts.size(); first += kGatherParts) {
    const size_t count = std::min<size_t>(kGatherParts, parts.size() - first);
    if (count == 1) {
      const GatherPart& g = parts[first];
      if (Status st = gather(g.bytes, g.v, idx, n, g.out); !st.ok()) return st;
      continue;
    }
    GatherManyParts arg;
    for (size_t c = 0; c < count; ++c) {
      arg.v[c] = parts[first + c].v;
      arg.out[c] = parts[first + c].out;
      arg.bytes[c] = parts[first + c].bytes;
    }
    arg.count = static_cast<int32_t>(count);
    if (Status st = launch_named(*this, "ndp_gather_many", n, arg, idx, n); !st.ok()) return st;
  }
  return Status();
}

Status Primitives::scatter(int bytes, CUdeviceptr v, CUdeviceptr idx, int64_t n, CUdeviceptr out) {
  return launch_named(*this, sized_name("ndp_scatter_", bytes), n, v, idx, n, out);
}

namespace {
/// PERMUTE's moves: each target claimed by its lowest source, the values placed, the failures
/// in the record's slots (device/permute.cu).
Status permute_moves(Primitives& p, ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, DSegs s, CUdeviceptr out,
                     const StatusRecord& r) {
  Result<cuda::DeviceBuffer> claim = p.pool().allocate(static_cast<size_t>(s.total) * sizeof(uint64_t));
  if (!claim.ok()) return claim.status();
  CUdeviceptr c = claim->pointer();
  if (Status st = p.fill(c, s.total, 8, ~uint64_t{0}); !st.ok()) return st;
  if (Status st = launch_named(p, "ndp_permute_claim", s.total, idx, s, c, r.slots()); !st.ok()) return st;
  return launch_named(p, sized_name("ndp_permute_place_", elem_bytes(t)), s.total, v, idx, s, c, out, r.slots());
}
}  // namespace

Result<ndp_status> Primitives::permute(ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, DSegs s, CUdeviceptr out) {
  if (s.total == 0) return data_ok();
  Result<StatusRecord> r = StatusRecord::make(*this);
  if (!r.ok()) return r.status();
  if (Status st = permute_moves(*this, t, v, idx, s, out, r.value()); !st.ok()) return st;
  return finish(*this, r.value(), idx, s, s);
}

// Note [Deferred permutes by hashes]
// A permute whose check is read later needs no lowest failing position, only whether one
// failed (the host runs the checked permute again to raise the error). So it skips the
// checked one's claims (8 bytes a target, filled, then an atomic minimum and a read at random
// places) and writes nothing a target but the element. Source p of n, in bounds, adds
// h(target) - h(p) to one 64-bit word, a block's sum at a time; one out of bounds adds 1. The
// targets of sources all in bounds are the positions 0..n-1 each once exactly when they are a
// permutation, and then the word's sum is 0. Otherwise some position is nobody's target, and
// the sum is a sum of h over positions with integer weights, one of them -1: with h a random
// function it is 0 with probability 2^-64. h is splitmix64's finalizer of the position xor a key
// (a bijection: one duplicate, h(t) - h(u) with t != u, is never 0) and each call takes a new
// key, so no input is bad for every key. With sources out of bounds the sum is their count
// (nonzero) plus that of the rest, 0 or a random-like word. So a failing permute is missed with
// probability about 2^-64, far below the device's own error rates, and a correct one never
// fails. Against the stamps of session 50 (a 32-bit exchange a target, 26-28 µs of a counting
// sort's pass of 10^6 keys on an H200) this is the bare scatter's cost (17-18 µs,
// bench/results/session50/permute_micro) and a block sum.
Status Primitives::permute_deferred(ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, DSegs s, CUdeviceptr out,
                                    CUdeviceptr word) {
  if (s.total == 0) return Status();
  return launch_named(*this, sized_name("ndp_permute_hashed_place_", elem_bytes(t)), s.total, v, idx, s,
                      next_permute_key(), out, word);
}

Result<ndp_status> Primitives::dpermute(ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, DSegs sv, CUdeviceptr defaults,
                                        DSegs sd, CUdeviceptr out) {
  if (sv.count != sd.count) return ndp_status{NDP_LENGTH_MISMATCH, -1, sv.count, sd.count};
  int bytes = elem_bytes(t);
  if (sv.total == 0) {  // nothing to check: out is a copy of the defaults
    if (defaults == out) return data_ok();
    if (Status st = pool().copy(out, defaults, static_cast<size_t>(sd.total) * bytes); !st.ok()) return st;
    return data_ok();
  }
  Result<StatusRecord> r = StatusRecord::make(*this);
  if (!r.ok()) return r.status();
  Result<cuda::DeviceBuffer> owner = pool().allocate(static_cast<size_t>(std::max<int64_t>(sd.total, 1)) * sizeof(int64_t));
  if (!owner.ok()) return owner.status();
  CUdeviceptr o = owner->pointer();
  if (Status st = fill(o, sd.total, 8, ~uint64_t{0}); !st.ok()) return st;  // -1: no owner
  if (Status st = launch_named(*this, "ndp_dpermute_own", sv.total, idx, sv, sd, o, r->slots()); !st.ok()) return st;
  if (defaults != out)  // on a failure out is unspecified (primitives.h), so the copy need not wait
    if (Status st = pool().copy(out, defaults, static_cast<size_t>(sd.total) * bytes); !st.ok()) return st;
  if (Status st = launch_named(*this, sized_name("ndp_dpermute_place_", bytes), sv.total, v, idx, sv, sd, o, out, r->slots());
      !st.ok())
    return st;
  return finish(*this, r.value(), idx, sv, sd);
}

Result<ndp_status> Primitives::bpermute(ndp_elem_type t, CUdeviceptr v, DSegs sv, CUdeviceptr idx, DSegs si,
                                        CUdeviceptr out) {
  if (sv.count != si.count) return ndp_status{NDP_LENGTH_MISMATCH, -1, si.count, sv.count};
  if (si.total == 0) return data_ok();
  Result<StatusRecord> r = StatusRecord::make(*this);
  if (!r.ok()) return r.status();
  if (Status st = launch_named(*this, sized_name("ndp_bpermute_", elem_bytes(t)), si.total, v, sv, idx, si, out, r->slots());
      !st.ok())
    return st;
  return finish(*this, r.value(), idx, si, sv);
}

}  // namespace ndp::runtime::gpu
