// Private to codegen/cpu: OpenMP loops over instances and elements, and the deterministic
// "first failing position" search that error reporting needs.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace ndp::codegen::cpu {

/// Below this many iterations a loop runs on one thread: starting a team costs more.
inline constexpr int64_t kParallelGrain = int64_t{1} << 15;

/// fn(i) for every i in [0, n); fn must not throw (exceptions cannot leave an OpenMP region).
template <class Fn>
void parallel_for(int64_t n, Fn&& fn) {
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) fn(i);
}

/// The lowest i in [0, n) with bad(i), or -1. The answer does not depend on the thread count,
/// so the instance an error names is always the first failing one in order.
template <class Bad>
int64_t first_failing(int64_t n, Bad&& bad) {
  int64_t first = n;
#pragma omp parallel for schedule(static) reduction(min : first) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    if (i < first && bad(i)) first = i;
  return first == n ? -1 : first;
}

}  // namespace ndp::codegen::cpu
