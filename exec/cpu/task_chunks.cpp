// Cutting a recursion level into tasks (task_chunks.h).
#include "exec/cpu/task_chunks.h"

#include <algorithm>
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

}  // namespace ndp::exec::cpu
