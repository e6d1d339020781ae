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
/// up to four a thread of nearly equal elements; or nothing where tasks do not pay: fewer than
/// two instances a thread, fewer than kTaskMinElements elements, or chunks that, taken in order
/// by the first thread free, would finish more than an eighth later than an even split (an
/// instance large enough to hold the others up). 32 equal instances on 16 threads split (an
/// even divide and conquer, two levels sooner than when no instance could exceed a quarter of
/// a thread's share: Batcher's sort of 2^20 keys on 16 cores 141-148 -> 80-84 ms); 32 of random
/// sizes wait for a level with more.
std::optional<std::vector<int64_t>> task_chunks(std::span<const int64_t> weight, int threads);

/// The groups a task runs its instances in, one group's levels after another's: the first
/// instance of each group and then the number of instances, consecutive instances of at most
/// `most` elements together (an instance heavier than that alone). Note [Groups that fit a
/// core's cache] in task_chunks.cpp.
std::vector<int64_t> task_groups(std::span<const int64_t> weight, int64_t most);

/// The elements of a task's group: a 32nd of a core's L2 cache (a level's working set is some
/// 32 bytes an element: the keys, their flags, a partition's output, a pack's copy); 2^15
/// where the cache's size is unknown. NDP_TASK_GROUP=n sets it (0: one group a task), for
/// measuring.
int64_t task_group_elements();

}  // namespace ndp::exec::cpu
