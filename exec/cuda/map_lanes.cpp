// The lanes of a map kernel's instances (Note [Map kernel dispatch]).
#include "exec/cuda/map_lanes.h"

#include <algorithm>
#include <array>

#include "exec/common/switches.h"
#include "flatten/tiled_folds.h"

namespace ndp::exec::cuda {

namespace {

constexpr int kWarp = 32;
constexpr int kBlock = 256;  // Device::one_thread_per_element's block: whole instances a block

int pow2_at_least(int64_t x) {
  int p = 1;
  while (p < x && p < kBlock) p *= 2;
  return p;
}

int64_t resident_threads(const runtime::cuda::DeviceProperties& device) {
  return int64_t{device.sm_count} * device.max_threads_per_sm;
}

/// The largest average row length among the vectors of sequences `rows` (at least 1).
template <class Rows>
int64_t longest_average(const Rows& rows) {
  int64_t longest = 1;
  for (const DVec* q : rows)
    if (q->size() > 0) longest = std::max<int64_t>(longest, (q->elems().size() + q->size() - 1) / q->size());
  return longest;
}

/// The sequences the body's folds run over, or nothing where some fold runs over a range.
std::optional<std::vector<const DVec*>> folded_rows(const flatten::KernelBody& k, std::span<const DVec> seqs) {
  std::vector<const DVec*> rows;
  for (const flatten::KernelNode& n : k.nodes) {
    if (n.kind != flatten::KernelNode::Kind::Fold) continue;
    const flatten::KernelNode& count = k.nodes[n.args[0]];
    if (count.kind != flatten::KernelNode::Kind::SeqLength || count.input >= seqs.size()) return std::nullopt;
    rows.push_back(&seqs[count.input]);
  }
  return rows;
}

}  // namespace

std::vector<int> map_kernel_lane_choices() { return {2, 4, 8, 16, kWarp, 2 * kWarp, 4 * kWarp, kBlock}; }

int map_kernel_lanes(const flatten::Stmt& s, int64_t n, std::span<const DVec> seqs,
                     const runtime::cuda::DeviceProperties& device, const Tuning& tuning) {
  using lang::ast::AtLevel;
  switch (s.level) {
    case AtLevel::Thread: return 1;
    case AtLevel::Subwarp: return std::clamp<int>(s.subwarp_width, 1, kWarp);
    case AtLevel::Warp: return kWarp;
    case AtLevel::Block: return kBlock;
    case AtLevel::Auto: case AtLevel::Grid: case AtLevel::Seq: break;
  }
  if (std::optional<int> forced = forced_map_lanes(); forced && *forced > 0) return *forced;
  std::optional<std::vector<const DVec*>> rows = folded_rows(*s.kernel, seqs);
  if (rows && !rows->empty())
    if (int lanes = own_row_lanes(tuning, n, longest_average(*rows), resident_threads(device)); lanes > 0) return lanes;
  int lanes = 1;
  while (lanes < kBlock && n * (2 * lanes) <= 2 * resident_threads(device)) lanes *= 2;
  if (rows && !rows->empty()) lanes = std::min(lanes, pow2_at_least(longest_average(*rows)));
  return lanes;
}

int loop_kernel_lanes(const flatten::Stmt& s, int64_t n, std::span<const DVec> seqs) {
  static const bool off = switched_off("NDP_MULTIPREFIX");
  const flatten::KernelBody& k = *s.kernel;
  if (off || s.level == lang::ast::AtLevel::Thread || !k.multiprefix() || n <= 0) return 1;
  // The rows the loop only reads, a row an instance: the iterations it likely makes.
  int64_t longest = -1;
  for (size_t q = 0; q < seqs.size() && q < k.seqs.size(); ++q)
    if (!k.seqs[q].written && seqs[q].size() == n) longest = std::max(longest, seqs[q].elems().size() / n);
  return longest >= 0 && longest < kShortLoopRows ? 1 : kWarp;
}

int64_t map_kernel_parts(const flatten::KernelBody& k, int lanes, int64_t n, std::span<const DVec> seqs,
                         const runtime::cuda::DeviceProperties& device) {
  const std::optional<uint32_t> f = k.split_fold();
  if (lanes != flatten::kSplitLanes || !f || n <= 0) return 1;
  const uint32_t rows_of = k.nodes.at(k.nodes.at(*f).args.at(0)).input;  // the sequence it folds a row of
  if (rows_of >= seqs.size()) return 1;
  const std::array<const DVec*, 1> rows{&seqs[rows_of]};
  return split_parts(n, longest_average(rows), resident_threads(device) / flatten::kSplitLanes);
}

int64_t tiled_columns(const flatten::Stmt& s, std::span<const DVec> ins, Gpu& g, GpuKernels& kernels) {
  if (s.op != flatten::Op::MapKernel || s.level != lang::ast::AtLevel::Auto || forced_map_lanes()) return 0;
  const int64_t n = ins.empty() ? 0 : ins[0].size();
  if (n < kTiledInstances) return 0;
  std::optional<flatten::TiledFold> shape = flatten::tiled_fold(*s.kernel);
  if (!shape || !kernels.form_available(*s.kernel, flatten::KernelForm::Tiled)) return 0;
  const int64_t m = g.check(g.prims().grid_columns(ins[shape->rows].data(), ins[shape->columns].data(), n));
  return m >= 16 && n / m >= 16 ? m : 0;
}

int own_row_form(int64_t n, std::span<const DVec* const> rows, const runtime::cuda::DeviceProperties& device,
                 const Tuning& tuning) {
  if (std::optional<int> forced = forced_map_lanes()) return *forced;
  return own_row_lanes(tuning, n, longest_average(rows), resident_threads(device));
}

}  // namespace ndp::exec::cuda
