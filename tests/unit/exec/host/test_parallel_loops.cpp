// The parallel loops over host buffers: every element of every run visited once.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "exec/host/parallel_loops.h"

using namespace ndp::exec::host;

TEST_CASE("parallel_regular_runs covers every element of every run once") {
  for (auto [m, c] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 5}, {5, 0}, {1, 1}, {100000, 1}, {1, 200000}, {3, 70001}, {40000, 3}, {7, 2}}) {
    CAPTURE(m);
    CAPTURE(c);
    std::vector<std::atomic<int>> hits(static_cast<size_t>(m * c));
    std::atomic<int64_t> bad{0};
    parallel_regular_runs(m, c, [&](int64_t q, int64_t from, int64_t to) {
      if (q < 0 || q >= m || from < 0 || to > c || from >= to) ++bad;
      else
        for (int64_t x = from; x < to; ++x) hits[static_cast<size_t>(q * c + x)]++;
    });
    CHECK(bad == 0);
    int64_t wrong = 0;
    for (auto& h : hits) wrong += h != 1;
    CHECK(wrong == 0);
  }
}
