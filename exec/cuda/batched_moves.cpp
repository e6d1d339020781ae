// Moves of several flat components launched together (Note [Gathers launched together]).
#include "exec/cuda/batched_moves.h"

#include <algorithm>

#include "exec/cuda/device_vec_ops.h"

namespace ndp::exec::cuda {

void GatherBatch::add(int bytes, CUdeviceptr v, CUdeviceptr idx, int64_t n, CUdeviceptr out, DBuf keep) {
  auto it = std::find_if(groups_.begin(), groups_.end(), [&](const Group& gr) { return gr.idx == idx && gr.n == n; });
  if (it == groups_.end()) {
    groups_.push_back({idx, n, std::move(keep), {}});
    it = groups_.end() - 1;
  }
  it->parts.push_back({bytes, v, out});
}

void GatherBatch::send() {
  for (const Group& gr : groups_) g_.check(g_.prims().gather_many(gr.parts, gr.idx, gr.n));
  groups_.clear();
}

namespace {

/// Where the append reads v: a gather not yet made whose positions are in range is read through
/// its positions (`index`), so its values are not stored first (a launch saved, and a pass).
CUdeviceptr source_of(const DVec& v, CUdeviceptr& index) {
  if (v.pending() && v.gather_source() != nullptr && !v.gather_unchecked()) {
    index = v.gather_index()->data();
    return v.gather_source()->data();
  }
  return v.data();
}

}  // namespace

DVec AppendBatch::add(const DVec& a, const DVec& b) {
  const int bytes = elem_bytes(a.type());
  DBuf out = g_.alloc(so_.total * bytes);
  runtime::gpu::Primitives::AppendPart part{bytes, 0, 0, out->pointer()};
  part.a = source_of(a, part.a_index);
  part.b = source_of(b, part.b_index);
  parts_.push_back(part);
  return DVec::scalar(a.type(), so_.total, std::move(out));
}

void AppendBatch::send() {
  g_.check(g_.prims().append_many(parts_, sa_, sb_, so_));
  parts_.clear();
}

}  // namespace ndp::exec::cuda
