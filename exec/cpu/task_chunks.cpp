// Cutting a recursion level into tasks (task_chunks.h).
#include "exec/cpu/task_chunks.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <queue>

namespace ndp::exec::cpu {

std::optional<std::vector<int64_t>> task_chunks(std::span<const int64_t> weight, int threads) {
  const int64_t n = static_cast<int64_t>(weight.size());
  if (threads < 2 || n < 2 * int64_t{threads}) return std::nullopt;
  std::vector<int64_t> before(weight.size() + 1, 0);  // the weight of instances [0, i)
  for (size_t i = 0; i < weight.size(); ++i) before[i + 1] = before[i] + weight[i];
  const int64_t total = before.back();
  if (total < kTaskMinElements) return std::nullopt;
  const int64_t chunks = std::min<int64_t>(n, 4 * int64_t{threads});
  std::vector<int64_t> at{0};
  for (int64_t i = 0; i < n && static_cast<int64_t>(at.size()) < chunks; ++i)
    if (before[static_cast<size_t>(i) + 1] * chunks >= total * static_cast<int64_t>(at.size())) at.push_back(i + 1);
  if (at.back() != n) at.push_back(n);
  // The chunks go to the threads in order, each to the first thread free (OpenMP's dynamic
  // schedule): where that finishes more than an eighth later than an even split would, a chunk
  // holds the others up, and the level runs flattened instead.
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> free_at;
  for (int t = 0; t < threads; ++t) free_at.push(0);
  int64_t makespan = 0;
  for (size_t k = 0; k + 1 < at.size(); ++k) {
    const int64_t done = free_at.top() + before[static_cast<size_t>(at[k + 1])] - before[static_cast<size_t>(at[k])];
    free_at.pop();
    free_at.push(done);
    makespan = std::max(makespan, done);
  }
  if (makespan * 8 * threads > total * 9) return std::nullopt;
  return at;
}

// Note [Groups that fit a core's cache]
// A task runs the rest of a loop, every level, over its chunk of instances: a sixty-fourth of
// quicksort's 2^24 keys on 16 threads, 2 MiB of keys, and each level streams them several
// times (their flags, the partition's output, the recursing rows' pack), over the core's L2 and
// through the L3 that all sixteen share. So a task takes its instances a group at a time, each
// group of a few tens of thousands of elements run through all its levels before the next:
// each level's vectors then stay in the core's own cache. Measured on the GPU machine's 16
// cores (2 MiB of L2 each; bench/results/session40, three rounds, the median sort of each):
// quicksort of 2^24 keys 360-393 ms with groups of 2^16 elements against 402-407 ms without;
// groups of 2^14 cost more in statements than they saved (434-456 ms), 2^18 saved less
// (383-414 ms). Batcher (56-59 ms) and quickhull (108-120 ms) did not move.

std::vector<int64_t> task_groups(std::span<const int64_t> weight, int64_t most) {
  const int64_t n = static_cast<int64_t>(weight.size());
  std::vector<int64_t> at{0};
  int64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (i > at.back() && sum + weight[static_cast<size_t>(i)] > most) {
      at.push_back(i);
      sum = 0;
    }
    sum += weight[static_cast<size_t>(i)];
  }
  if (n > 0) at.push_back(n);
  return at;
}

int64_t task_group_elements() {
  static const int64_t elements = [] {
    if (const char* e = std::getenv("NDP_TASK_GROUP")) return std::max<int64_t>(0, std::atoll(e));
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? static_cast<int64_t>(l2) / 32 : int64_t{1} << 15;
  }();
  return elements;
}

}  // namespace ndp::exec::cpu
