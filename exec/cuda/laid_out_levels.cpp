// Note [Results laid out on the GPU] (laid_out_levels.h): the launches.
#include "exec/cuda/laid_out_levels.h"

#include <algorithm>
#include <string>

#include "lang/diagnostics.h"
#include "runtime/gpu/laid_out.h"
#include "runtime/gpu/launch.h"

namespace ndp::exec::cuda {

DVec flags_not(Gpu& g, const DVec& flags) {
  const int64_t n = flags.size();
  DBuf out = g.alloc(n);
  g.check(runtime::gpu::launch_named(g.prims(), "ndp_laid_out_not", n, flags.data(), n, out->pointer()));
  return DVec::scalar(flags.type(), n, std::move(out));
}

void place_rows(Gpu& g, const DVec& rows, CUdeviceptr places, CUdeviceptr out) {
  const int64_t total = rows.total();
  if (total == 0) return;
  const std::string name = runtime::gpu::sized_name("ndp_laid_out_place_", elem_bytes(rows.type()->a));
  g.check(runtime::gpu::launch_named(g.prims(), name, total, rows.offsets(), rows.size(), total, rows.elems().data(), places, out));
}

void check_lengths(Gpu& g, const DVec& lens, const DVec& rows, CUdeviceptr failed) {
  const int64_t n = rows.size();
  g.check(runtime::gpu::launch_named(g.prims(), "ndp_laid_out_same_lengths", n, lens.data(), rows.offsets(), n, failed));
}

DBuf place_parts(Gpu& g, const std::vector<LaidOutPart>& parts, int64_t rec, CUdeviceptr rec_at, CUdeviceptr rec_len,
                 const DVec& counts, int64_t k, bool child_major, const DVec& next, std::vector<DBuf>& rows_at,
                 CUdeviceptr failed) {
  NDP_ASSERT(parts.size() <= static_cast<size_t>(runtime::gpu::LaidOutPieces::kMost), "too many parts of a laid-out instance");
  runtime::gpu::LaidOutPieces p;
  p.count = static_cast<int>(parts.size());
  p.child_major = child_major;
  for (size_t q = 0; q < parts.size(); ++q) {
    p.child[q] = parts[q].child;
    if (parts[q].child >= 0) continue;
    rows_at.push_back(g.alloc(rec * 8));
    p.off[q] = reinterpret_cast<const int64_t*>(parts[q].rows->offsets());
    p.at[q] = reinterpret_cast<int64_t*>(rows_at.back()->pointer());
  }
  DBuf next_at = g.alloc(next.size() * 8);
  g.check(runtime::gpu::launch_named(g.prims(), "ndp_laid_out_pieces", rec, p, rec, rec_at, rec_len, counts.data(), k,
                                     next.offsets(), next_at->pointer(), failed));
  return next_at;
}

}  // namespace ndp::exec::cuda
