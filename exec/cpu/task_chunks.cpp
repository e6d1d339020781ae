// Cutting a recursion level into tasks (task_chunks.h).
#include "exec/cpu/task_chunks.h"

#include <algorithm>

namespace ndp::exec::cpu {

std::optional<std::vector<int64_t>> task_chunks(std::span<const int64_t> weight, int threads) {
  const int64_t n = static_cast<int64_t>(weight.size());
  if (threads < 2 || n < 2 * int64_t{threads}) return std::nullopt;
  int64_t total = 0, largest = 0;
  for (int64_t w : weight) {
    total += w;
    largest = std::max(largest, w);
  }
  if (total < kTaskMinElements || largest * 4 * threads > total) return std::nullopt;
  const int64_t chunks = std::min<int64_t>(n, 4 * int64_t{threads});
  std::vector<int64_t> at{0};
  int64_t sum = 0;
  for (int64_t i = 0; i < n && static_cast<int64_t>(at.size()) < chunks; ++i) {
    sum += weight[static_cast<size_t>(i)];
    if (sum * chunks >= total * static_cast<int64_t>(at.size())) at.push_back(i + 1);
  }
  if (at.back() != n) at.push_back(n);
  return at;
}

}  // namespace ndp::exec::cpu
