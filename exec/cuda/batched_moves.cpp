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

DVec AppendBatch::add(const DVec& a, const DVec& b) {
  const int bytes = elem_bytes(a.type());
  DBuf out = g_.alloc(so_.total * bytes);
  parts_.push_back({bytes, a.data(), b.data(), out->pointer()});
  return DVec::scalar(a.type(), so_.total, std::move(out));
}

void AppendBatch::send() {
  g_.check(g_.prims().append_many(parts_, sa_, sb_, so_));
  parts_.clear();
}

}  // namespace ndp::exec::cuda
