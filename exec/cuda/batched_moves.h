// Moves of several flat components launched together: the gathers of a take, the appends of
// the components of a tuple (Note [Gathers launched together]).
#pragma once

#include <cstdint>
#include <vector>

#include "exec/cuda/device_vec.h"
#include "exec/cuda/gpu.h"

namespace ndp::exec::cuda {

// Note [Gathers launched together]
// A take gathers every flat component of its vector through the same positions: a pair of
// floats is two gathers, a filter group's members five or six, each a launch of its own at the
// deep levels of a recursion, where a launch (some 4 µs of the host's time on an H200) is all
// a gather of a few elements costs. So take's gathers wait in a GatherBatch and go when the
// take is done, all those through one position vector in one launch (Primitives::gather_many).
// Nothing reads a gathered component before then: the batch is sent before take returns the
// vector that holds it. The batch keeps the positions it gathers through alive until then.
// The appends of a tuple's components over the same segments (`[p1] ++ packed` of points, a
// literal [a, b] of pairs) go together in the same way (AppendBatch, Primitives::append_many).
class GatherBatch {
 public:
  explicit GatherBatch(Gpu& g) : g_(g) {}
  /// out[i] = v[idx[i]] for i < n, of `bytes` an element; `keep` owns idx where the caller does not.
  void add(int bytes, CUdeviceptr v, CUdeviceptr idx, int64_t n, CUdeviceptr out, DBuf keep = nullptr);
  /// Launches the gathers queued, a launch per position vector (up to eight parts each).
  void send();

 private:
  struct Group {
    CUdeviceptr idx;
    int64_t n;
    DBuf keep;
    std::vector<runtime::gpu::Primitives::GatherPart> parts;
  };
  Gpu& g_;
  std::vector<Group> groups_;
};

/// Appends of flat components over the same descriptors, launched together when sent.
class AppendBatch {
 public:
  AppendBatch(Gpu& g, runtime::gpu::DSegs sa, runtime::gpu::DSegs sb, runtime::gpu::DSegs so)
      : g_(g), sa_(sa), sb_(sb), so_(so) {}
  /// a's segments each followed by b's (flat scalars of one type): its buffer written when sent.
  /// A gather of a or b not yet made is read through its positions. The caller keeps a and b
  /// until the batch is sent.
  DVec add(const DVec& a, const DVec& b);
  void send();

 private:
  Gpu& g_;
  runtime::gpu::DSegs sa_, sb_, so_;
  std::vector<runtime::gpu::Primitives::AppendPart> parts_;
};

}  // namespace ndp::exec::cuda
