// Whether a map kernel's instances form a grid of rows and columns (Note [Tiled folds] in
// flatten/tiled_folds.h): instance t = i·m + j reads row rows[t], the same along each run of m
// instances, and column columns[t], the same every m instances.
#include "common.cuh"

using namespace ndp::runtime::gpu::device;

namespace {
// report_failure where no lower position has reported yet: ids that are no grid mismatch almost
// everywhere, and an atomic each on one word would take milliseconds.
__device__ void report_first(unsigned long long* first_failure, long long t) {
  if (*static_cast<volatile unsigned long long*>(first_failure) > static_cast<unsigned long long>(t))
    report_failure(first_failure, t);
}
}  // namespace

// The first instance past 0 whose row differs from instance 0's: the grid's columns. It is the
// first whose row differs from the one before, and only those report (an atomic each): every
// instance past the first run would make millions of atomics on one word.
extern "C" __global__ void ndp_grid_first_change(const long long* rows, long long n, unsigned long long* first_failure) {
  NDP_GRID_STRIDE(t, n) {
    if (t > 0 && rows[t] != rows[t - 1]) report_first(first_failure, t);
  }
}

// The first instance whose row is not its run's, or whose column is not the first run's.
extern "C" __global__ void ndp_grid_mismatch(const long long* rows, const long long* columns, long long n, long long m,
                                             unsigned long long* first_failure) {
  NDP_GRID_STRIDE(t, n) {
    const long long j = t % m;
    if (rows[t] != rows[t - j] || columns[t] != columns[j]) report_first(first_failure, t);
  }
}
