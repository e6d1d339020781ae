// Private to exec/host and exec/cpu: OpenMP loops over instances and elements, and the deterministic
// "first failing position" search that error reporting needs.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ndp/interrupt.h"

namespace ndp::exec::host {

/// Below this many iterations a loop runs on one thread: starting a team costs more.
inline constexpr int64_t kParallelGrain = int64_t{1} << 15;

/// Blocks to split n elements into for a parallel loop: one per kParallelGrain elements, at
/// most four per thread, and at least one per kInterruptBlock elements, where the loop polls
/// for an interrupt (Note [Cancellation] in ndp/interrupt.h).
inline int64_t parallel_blocks(int64_t n) {
  int64_t by_threads = std::min<int64_t>(n / kParallelGrain, 4 * omp_get_max_threads());
  return std::max<int64_t>({1, by_threads, n / kInterruptBlock});
}

/// fn(b) for every block b in [0, blocks), in parallel when there are several, polling for an
/// interrupt before each; after a loop that stopped early it throws ndp::Interrupted (never
/// inside the parallel region, which no exception may leave). A loop nested in another
/// parallel region (fn of an outer loop) does not poll: it could not throw, and its caller
/// must not read unfinished output. fn must not throw.
//
// Note [Teams as large as the work]
// A parallel loop's team is no larger than its blocks. A flat program runs hundreds of
// parallel statements a second, many of a few blocks, and each thread of a team sleeps between
// them and is woken for the next. Measured on the 16-core GPU host, Delaunay of 10^4 points
// (six runs a process): 8000-8300 voluntary context switches and 32-52 ms a run with teams of
// 16 threads; 4950 and 28-31 ms with teams as large as the blocks.
template <class Fn>
void parallel_blocks_for(int64_t blocks, Fn&& fn) {
  const bool may_stop = omp_get_level() == 0;
  bool stopped = false;
  const int team = static_cast<int>(std::min<int64_t>(blocks, omp_get_max_threads()));
#pragma omp parallel for schedule(static, 1) if (blocks > 1) num_threads(team)
  for (int64_t b = 0; b < blocks; ++b) {
    if (may_stop && interrupt_pending()) {
#pragma omp atomic write
      stopped = true;
      continue;
    }
    fn(b);
  }
  if (stopped) throw Interrupted{};
}

/// The start of block b when [0, n) is cut into `blocks` equal ranges.
inline int64_t block_start(int64_t n, int64_t b, int64_t blocks) {
  return static_cast<int64_t>(static_cast<__int128>(n) * b / blocks);
}

/// fn(i) for every i in [0, n); fn must not throw (exceptions cannot leave an OpenMP region).
template <class Fn>
void parallel_for(int64_t n, Fn&& fn) {
  if (n < kParallelGrain) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  int64_t blocks = parallel_blocks(n);
  parallel_blocks_for(blocks, [&](int64_t b) {
    for (int64_t i = block_start(n, b, blocks), e = block_start(n, b + 1, blocks); i < e; ++i) fn(i);
  });
}

/// fn(q, from, to) over pieces of the m runs of a segmented copy, run q writing the elements
/// [off[q], off[q + 1]) of its output: every element once, as the piece [from, to) of its run,
/// runs in order within a thread. Each thread gets an equal share of runs plus elements (run q's
/// element e at q + off[q] + e), so a few long runs (the top of a recursion: 10^7 elements in one
/// or two runs) are copied by every thread, not one a run, and many empty runs are spread too.
template <class Fn>
void parallel_run_pieces(int64_t m, const int64_t* off, Fn&& fn) {
  if (m <= 0 || off[m] <= 0) return;
  const int64_t work = m + off[m];
  const int64_t chunks = parallel_blocks(work);
  // The run and the element within it at position p of the work: the last run q with
  // q + off[q] <= p, and p's element of it, at most its end.
  auto at = [&](int64_t p) {
    int64_t lo = 0, hi = m - 1;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (mid + off[mid] <= p) lo = mid;
      else hi = mid - 1;
    }
    return std::pair<int64_t, int64_t>{lo, std::min(p - lo - off[lo], off[lo + 1] - off[lo])};
  };
  parallel_blocks_for(chunks, [&](int64_t c) {
    const auto [q0, e0] = at(static_cast<int64_t>(static_cast<__int128>(work) * c / chunks));
    const auto [q1, e1] = at(static_cast<int64_t>(static_cast<__int128>(work) * (c + 1) / chunks));
    for (int64_t q = q0; q <= q1; ++q) {
      const int64_t from = q == q0 ? e0 : 0, to = q == q1 ? e1 : off[q + 1] - off[q];
      if (from < to) fn(q, from, to);
    }
  });
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
  parallel_blocks_for(chunks, [&](int64_t ch) {
    int64_t p = block_start(total, ch, chunks), end = block_start(total, ch + 1, chunks);
    if (c == 1) {  // runs of one element (the leaves of a recursion): fn inlines to one move
      for (; p < end; ++p) fn(p, int64_t{0}, int64_t{1});
      return;
    }
    int64_t q = p / c, x = p % c;
    while (p < end) {
      int64_t len = std::min(c - x, end - p);
      fn(q, x, x + len);
      p += len;
      ++q;
      x = 0;
    }
  });
}

/// The lowest i in [0, n) with bad(i), or -1. The answer does not depend on the thread count,
/// so the instance an error names is always the first failing one in order.
template <class Bad>
int64_t first_failing(int64_t n, Bad&& bad) {
  if (n < kParallelGrain) {
    for (int64_t i = 0; i < n; ++i)
      if (bad(i)) return i;
    return -1;
  }
  int64_t blocks = parallel_blocks(n);
  std::vector<int64_t> first(static_cast<size_t>(blocks), -1);  // per block: its lowest failure
  parallel_blocks_for(blocks, [&](int64_t b) {
    for (int64_t i = block_start(n, b, blocks), e = block_start(n, b + 1, blocks); i < e; ++i)
      if (bad(i)) {
        first[static_cast<size_t>(b)] = i;
        return;
      }
  });
  for (int64_t f : first)
    if (f >= 0) return f;
  return -1;
}

}  // namespace ndp::exec::host
