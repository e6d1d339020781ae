// What aot_qsort and jit_qsort both measure, so that their lines compare row by row: the first
// call's time, then the best of 5 sorts of 2^20 and 2^24 random ints, each result checked.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace bench {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline std::vector<int64_t> random_keys(size_t n) {
  std::mt19937_64 rng(42);
  std::vector<int64_t> v(n);
  for (int64_t& x : v) x = static_cast<int64_t>(rng() >> 1);
  return v;
}

/// Prints `label size best_ms` rows; exits 1 on a wrong answer.
template <class Sort>
void time_sorts(const char* label, Sort sort) {
  for (size_t n : {size_t{1} << 20, size_t{1} << 24}) {
    std::vector<int64_t> keys = random_keys(n), want = keys;
    std::sort(want.begin(), want.end());
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      std::vector<int64_t> got = sort(keys);
      best = std::min(best, seconds_since(t0));
      if (got != want) {
        std::fprintf(stderr, "%s: wrong answer for %zu keys\n", label, n);
        std::exit(1);
      }
    }
    std::printf("%-10s sort 2^%d keys: %9.3f ms (best of 5, with the copies in and out)\n", label,
                n == (size_t{1} << 20) ? 20 : 24, best * 1e3);
  }
}

}  // namespace bench
