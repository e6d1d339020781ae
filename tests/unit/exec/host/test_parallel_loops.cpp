// The parallel loops over host buffers: every element of every run visited once.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include <omp.h>

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

TEST_CASE("parallel_run_pieces: every element of every run once, long runs split over threads") {
  auto cover = [](const std::vector<int64_t>& lengths) {
    std::vector<int64_t> off(lengths.size() + 1, 0);
    for (size_t q = 0; q < lengths.size(); ++q) off[q + 1] = off[q] + lengths[q];
    std::vector<std::atomic<int>> seen(static_cast<size_t>(off.back()));
    std::atomic<int64_t> pieces{0}, bad{0};  // (doctest's checks are not for OpenMP threads)
    parallel_run_pieces(static_cast<int64_t>(lengths.size()), off.data(), [&](int64_t q, int64_t from, int64_t to) {
      if (from < 0 || from >= to || to > lengths[static_cast<size_t>(q)]) bad++;
      else
        for (int64_t x = from; x < to; ++x) seen[static_cast<size_t>(off[static_cast<size_t>(q)] + x)]++;
      pieces++;
    });
    CHECK(bad.load() == 0);
    int64_t wrong = 0;
    for (const std::atomic<int>& s : seen) wrong += s.load() != 1;
    CHECK(wrong == 0);
    return pieces.load();
  };
  cover({});
  cover({0, 0, 0});
  cover({5, 0, 3});
  // Two runs of 10^6 (the top of a recursion): more pieces than runs, where there are threads.
  const int64_t two = cover({1000000, 1000000});
  if (omp_get_max_threads() > 2) CHECK(two > 2);
  std::vector<int64_t> many(100000, 3);
  for (size_t q = 0; q < many.size(); q += 7) many[q] = 0;
  cover(many);
  // Many empty runs between a few elements (a recursion's finished segments): the share of
  // work counts runs too, so the chunks cut inside the empty runs, and still cover all.
  std::vector<int64_t> bunched(300000, 0);
  bunched.front() = 3;
  bunched[150000] = 1;
  bunched.back() = 2;
  CHECK(cover(bunched) == 3);
}
