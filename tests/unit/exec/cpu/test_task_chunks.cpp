// task_chunks: where a recursion level's instances are cut into tasks (Note [Small segments in
// one task] in exec/cpu/executor.cpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "exec/cpu/task_chunks.h"

using ndp::exec::cpu::kTaskMinElements;
using ndp::exec::cpu::task_chunks;
using ndp::exec::cpu::task_groups;

namespace {

/// The elements of each chunk that `at` cuts `w` into.
std::vector<int64_t> chunk_elements(const std::vector<int64_t>& w, const std::vector<int64_t>& at) {
  std::vector<int64_t> out;
  for (size_t k = 0; k + 1 < at.size(); ++k)
    out.push_back(std::accumulate(w.begin() + at[k], w.begin() + at[k + 1], int64_t{0}));
  return out;
}

}  // namespace

TEST_CASE("task chunks: about four a thread of equal elements, covering every instance in order") {
  std::vector<int64_t> w(1000, 100);  // 100 000 elements in 1000 instances
  auto at = task_chunks(w, 4);
  REQUIRE(at);
  CHECK(at->front() == 0);
  CHECK(at->back() == 1000);
  CHECK(at->size() == 17);  // 16 chunks
  for (size_t k = 1; k < at->size(); ++k) CHECK((*at)[k - 1] < (*at)[k]);
  int64_t sum = 0;
  for (int64_t e : chunk_elements(w, *at)) {
    CHECK(e >= 6250 - 100);  // a sixteenth of the elements, give or take an instance
    CHECK(e <= 6250 + 100);
    sum += e;
  }
  CHECK(sum == 100000);
}

TEST_CASE("task chunks: uneven instances still give chunks of nearly equal elements") {
  std::vector<int64_t> w;
  for (int64_t i = 0; i < 4000; ++i) w.push_back(1 + (i * 7919) % 97);
  const int64_t total = std::accumulate(w.begin(), w.end(), int64_t{0});
  auto at = task_chunks(w, 8);
  REQUIRE(at);
  CHECK(at->size() == 33);
  for (int64_t e : chunk_elements(w, *at)) {
    CHECK(e * 32 >= total - 32 * 97);
    CHECK(e * 32 <= total + 32 * 97);
  }
}

TEST_CASE("task chunks: none where tasks do not pay") {
  CHECK(!task_chunks(std::vector<int64_t>(1000, 100), 1));          // one thread
  CHECK(!task_chunks(std::vector<int64_t>(7, 10000), 4));           // fewer than two instances a thread
  CHECK(!task_chunks(std::vector<int64_t>(100, 10), 4));            // too few elements
  CHECK(task_chunks(std::vector<int64_t>(100, kTaskMinElements / 100 + 1), 4));
  std::vector<int64_t> one_large(1000, 100);
  one_large[500] = 100000;  // half the elements: its chunk would hold up the rest
  CHECK(!task_chunks(one_large, 4));
  one_large[500] = 100000 / 64;  // small enough that the chunks finish within an eighth of an even split
  CHECK(task_chunks(one_large, 4));
}

TEST_CASE("task chunks: equal instances split as soon as there are two a thread") {
  // An even divide and conquer (Batcher's merge): 32 equal halves on 16 threads, two each.
  auto at = task_chunks(std::vector<int64_t>(32, 32768), 16);
  REQUIRE(at);
  CHECK(at->size() == 33);
  CHECK(task_chunks(std::vector<int64_t>(64, 16384), 16));
  CHECK(!task_chunks(std::vector<int64_t>(16, 65536), 16));  // fewer than two a thread
  CHECK(!task_chunks(std::vector<int64_t>(40, 30000), 16));  // 40 on 16: some thread takes three
  // Random sizes (a quicksort level): 32 of them do not balance on 16 threads.
  std::vector<int64_t> uneven;
  for (int64_t i = 0; i < 32; ++i) uneven.push_back(20000 + (i * 7919) % 60000);
  CHECK(!task_chunks(uneven, 16));
}

TEST_CASE("task groups: consecutive instances of at most so many elements, a heavier one alone") {
  using V = std::vector<int64_t>;
  CHECK(task_groups(V{}, 10) == V{0});
  CHECK(task_groups(V{3, 3, 3, 3}, 10) == V{0, 3, 4});
  CHECK(task_groups(V{3, 3, 3, 3}, 100) == V{0, 4});
  CHECK(task_groups(V{25, 1, 1, 30, 2}, 10) == V{0, 1, 3, 4, 5});  // 25 and 30 each alone
  CHECK(task_groups(V{0, 0, 0}, 1) == V{0, 3});
  // Every instance in exactly one group, in order, none over the bound but a lone heavy one.
  V w;
  for (int64_t i = 0; i < 1000; ++i) w.push_back((i * 7919) % 97);
  const V at = task_groups(w, 500);
  REQUIRE(at.front() == 0);
  REQUIRE(at.back() == 1000);
  for (size_t g = 0; g + 1 < at.size(); ++g) {
    CHECK(at[g] < at[g + 1]);
    int64_t sum = 0;
    for (int64_t i = at[g]; i < at[g + 1]; ++i) sum += w[static_cast<size_t>(i)];
    CHECK((sum <= 500 || at[g + 1] - at[g] == 1));
    if (g + 2 < at.size()) CHECK(sum + w[static_cast<size_t>(at[g + 1])] > 500);  // no group could take one more
  }
}
