// Private to exec/host and exec/cpu: OpenMP loops over instances and elements, and the deterministic
// "first failing position" search that error reporting needs.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace ndp::exec::host {

/// Below this many iterations a loop runs on one thread: starting a team costs more.
inline constexpr int64_t kParallelGrain = int64_t{1} << 15;

/// fn(i) for every i in [0, n); fn must not throw (exceptions cannot leave an OpenMP region).
template <class Fn>
void parallel_for(int64_t n, Fn&& fn) {
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) fn(i);
}

/// fn(begin, end) over ranges of q covering [0, m), where q is one run of a segmented copy
/// writing the elements [off[q], off[q + 1]) of its output. The parallel split gives each
/// thread an equal share of runs plus elements: deciding by the run count alone would copy the
/// few long runs at the top of a recursion (a million elements in two runs) on one thread.
template <class Fn>
void parallel_runs(int64_t m, const int64_t* off, Fn&& fn) {
  int64_t work = m + off[m];
  int threads = omp_get_max_threads();
  int64_t chunks = std::min<int64_t>(work / kParallelGrain, 4 * static_cast<int64_t>(threads));
  if (chunks < 2 || m < 2) {
    fn(int64_t{0}, m);
    return;
  }
  auto bound = [&](int64_t c) {  // the first run whose work (runs + elements before it) reaches c's share
    int64_t target = static_cast<int64_t>(static_cast<__int128>(work) * c / chunks);
    int64_t lo = 0, hi = m;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (mid + off[mid] < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
#pragma omp parallel for schedule(static, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t b = bound(c), e = bound(c + 1);
    if (b < e) fn(b, e);
  }
}

/// Blocks to split n elements into for a parallel loop: one per kParallelGrain elements, at
/// most four per thread, at least one.
inline int64_t parallel_blocks(int64_t n) {
  return std::max<int64_t>(1, std::min<int64_t>(n / kParallelGrain, 4 * omp_get_max_threads()));
}

/// fn(q, from, to) over pieces of m runs of c elements each (run q's elements [from, to)),
/// covering every element once: the segmented copy of regular segments (Note [Uniform
/// buffers] in vec.h), which needs no offsets. The elements are split evenly over the threads,
/// so many short runs and a few long ones (the top of a recursion) are both parallel.
template <class Fn>
void parallel_regular_runs(int64_t m, int64_t c, Fn&& fn) {
  int64_t total = m * c;
  if (total <= 0) return;
  int64_t chunks = parallel_blocks(total);
#pragma omp parallel for schedule(static, 1) if (chunks > 1)
  for (int64_t ch = 0; ch < chunks; ++ch) {
    int64_t p = static_cast<int64_t>(static_cast<__int128>(total) * ch / chunks);
    int64_t end = static_cast<int64_t>(static_cast<__int128>(total) * (ch + 1) / chunks);
    if (c == 1) {  // runs of one element (the leaves of a recursion): fn inlines to one move
      for (; p < end; ++p) fn(p, int64_t{0}, int64_t{1});
      continue;
    }
    int64_t q = p / c, x = p % c;
    while (p < end) {
      int64_t len = std::min(c - x, end - p);
      fn(q, x, x + len);
      p += len;
      ++q;
      x = 0;
    }
  }
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

}  // namespace ndp::exec::host
