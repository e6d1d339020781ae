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
/// runs in order within a thread. The elements are split evenly over the threads, so a few long
/// runs (the top of a recursion: 10^7 elements in one or two runs) are copied by every thread,
/// not one a run. Empty runs are skipped.
template <class Fn>
void parallel_run_pieces(int64_t m, const int64_t* off, Fn&& fn) {
  const int64_t total = off[m];
  if (total <= 0) return;
  const int64_t chunks = parallel_blocks(m + total);
  parallel_blocks_for(chunks, [&](int64_t c) {
    const int64_t p0 = static_cast<int64_t>(static_cast<__int128>(total) * c / chunks);
    const int64_t p1 = static_cast<int64_t>(static_cast<__int128>(total) * (c + 1) / chunks);
    if (p0 >= p1) return;
    // The last run starting at or before p0.
    int64_t q = static_cast<int64_t>(std::upper_bound(off, off + m + 1, p0) - off) - 1;
    for (; q < m && off[q] < p1; ++q) {
      const int64_t from = std::max(p0, off[q]) - off[q], to = std::min(p1, off[q + 1]) - off[q];
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
