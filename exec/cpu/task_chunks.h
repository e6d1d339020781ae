// Where the cpu backend cuts a recursion level's instances into tasks (Note [Small segments in
// one task] in exec/cpu/executor.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace ndp::exec::cpu {

/// Fewer elements than this in a level are not worth splitting into tasks.
inline constexpr int64_t kTaskMinElements = 4096;

/// The chunks of a level whose instance i holds weight[i] elements, for `threads` threads: the
/// first instance of each chunk and then the number of instances (chunk k is [at[k], at[k + 1])),
/// about four a thread of nearly equal elements; or nothing where tasks do not pay: fewer than
/// two instances a thread, fewer than kTaskMinElements elements, or one instance with more than
/// a quarter of a thread's share (its chunk would hold the others up).
std::optional<std::vector<int64_t>> task_chunks(std::span<const int64_t> weight, int threads);

}  // namespace ndp::exec::cpu
