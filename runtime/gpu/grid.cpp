// Whether a map kernel's instances form a grid (device/grid.cu; Note [Tiled folds] in
// flatten/tiled_folds.h).
#include "runtime/gpu/launch.h"

namespace ndp::runtime::gpu {

Result<int64_t> Primitives::grid_columns(CUdeviceptr rows, CUdeviceptr columns, int64_t n) {
  if (n <= 0) return int64_t{-1};
  Result<int64_t> change = first_failure(*this, "ndp_grid_first_change", n, rows, n);
  if (!change.ok()) return change.status();
  const int64_t m = change.value() < 0 ? n : change.value();
  if (n % m != 0) return int64_t{-1};
  Result<int64_t> mismatch = first_failure(*this, "ndp_grid_mismatch", n, rows, columns, n, m);
  if (!mismatch.ok()) return mismatch.status();
  return mismatch.value() < 0 ? m : int64_t{-1};
}

}  // namespace ndp::runtime::gpu
