// The lanes of a map kernel's instances (Note [Map kernel dispatch]).
#include "exec/cuda/map_lanes.h"

#include <algorithm>

namespace ndp::exec::cuda {

namespace {

constexpr int kWarp = 32;
constexpr int kBlock = 256;  // Device::one_thread_per_element's block: whole instances a block

int pow2_at_least(int64_t x) {
  int p = 1;
  while (p < x && p < kBlock) p *= 2;
  return p;
}

/// Whether every fold of the body runs over a sequence it reads (its count is a row's length).
bool folds_only_rows(const flatten::KernelBody& k) {
  for (const flatten::KernelNode& n : k.nodes)
    if (n.kind == flatten::KernelNode::Kind::Fold && k.nodes[n.args[0]].kind != flatten::KernelNode::Kind::SeqLength)
      return false;
  return true;
}

}  // namespace

std::vector<int> map_kernel_lane_choices() { return {2, 4, 8, 16, kWarp, 2 * kWarp, 4 * kWarp, kBlock}; }

int map_kernel_lanes(const flatten::Stmt& s, int64_t n, std::span<const DVec> seqs,
                     const runtime::cuda::DeviceProperties& device) {
  using lang::ast::AtLevel;
  switch (s.level) {
    case AtLevel::Thread: return 1;
    case AtLevel::Subwarp: return std::clamp<int>(s.subwarp_width, 1, kWarp);
    case AtLevel::Warp: return kWarp;
    case AtLevel::Block: return kBlock;
    case AtLevel::Auto: case AtLevel::Grid: case AtLevel::Seq: break;
  }
  const int64_t resident = int64_t{device.sm_count} * device.max_threads_per_sm;
  int lanes = 1;
  while (lanes < kBlock && n * (2 * lanes) <= 2 * resident) lanes *= 2;
  if (!seqs.empty() && folds_only_rows(*s.kernel)) {
    int64_t longest = 1;  // the largest average row length
    for (const DVec& q : seqs)
      if (q.size() > 0) longest = std::max<int64_t>(longest, (q.elems().size() + q.size() - 1) / q.size());
    lanes = std::min(lanes, pow2_at_least(longest));
  }
  return lanes;
}

}  // namespace ndp::exec::cuda
