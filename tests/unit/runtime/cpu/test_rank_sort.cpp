// rank, rank_down and sort, flat and segmented, against std::stable_sort with the interpreter's order.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "tests/unit/runtime/shapes.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

namespace {

/// The reference order (lang/eval's stable_order): numeric, -0.0 == 0.0, NaN above everything.
template <class T>
bool less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <class T>
void reference(const Vec<T>& v, const Shape& s, Order order, std::vector<int64_t>& rank_out, std::vector<T>& sorted) {
  rank_out.assign(s.total(), -1);
  sorted.assign(s.total(), T{});
  for (int64_t k = 0; k < s.count(); ++k) {
    int64_t b = s.offsets[k];
    std::vector<int64_t> ord(s.lengths[k]);
    std::iota(ord.begin(), ord.end(), b);
    if (order == Order::ascending)
      std::stable_sort(ord.begin(), ord.end(), [&](int64_t i, int64_t j) { return less(v[i], v[j]); });
    else
      std::stable_sort(ord.begin(), ord.end(), [&](int64_t i, int64_t j) { return less(v[j], v[i]); });
    for (int64_t q = 0; q < s.lengths[k]; ++q) {
      rank_out[ord[q]] = q;
      sorted[b + q] = v[ord[q]];
    }
  }
}

template <class T>
Vec<T> sort_test_values(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Vec<T> v(n);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = rng();
    if constexpr (std::is_floating_point_v<T>) {
      switch (r % 16) {
        case 0: v[i] = std::numeric_limits<T>::quiet_NaN(); break;
        case 1: v[i] = -std::numeric_limits<T>::quiet_NaN(); break;
        case 2: v[i] = -0.0; break;
        case 3: v[i] = 0.0; break;
        case 4: v[i] = std::numeric_limits<T>::infinity(); break;
        case 5: v[i] = -std::numeric_limits<T>::infinity(); break;
        case 6: v[i] = std::numeric_limits<T>::denorm_min(); break;
        default: v[i] = static_cast<T>(static_cast<int64_t>(r >> 40) - (int64_t{1} << 23)) / T(64);
      }
    } else if constexpr (std::is_same_v<T, uint8_t>) {
      v[i] = static_cast<uint8_t>(r);
    } else {
      // Many ties (a small range) and the extremes.
      if (r % 50 == 0) v[i] = std::numeric_limits<T>::min();
      else if (r % 50 == 1) v[i] = std::numeric_limits<T>::max();
      else if (r % 2) v[i] = static_cast<T>(static_cast<int64_t>(r >> 33) % 20 - 10);
      else v[i] = static_cast<T>(r >> 3);
    }
  }
  return v;
}

/// Large shapes run under the default tuning only: the awkward chunkings are covered by the
/// small shapes, and each radix sort is many parallel passes.
template <class T>
void check_rank_sort(const Shape& s, uint64_t seed, bool all_tunings) {
  CAPTURE(s.name);
  Vec<T> v = sort_test_values<T>(s.total(), seed);
  for (Order order : {Order::ascending, Order::descending}) {
    CAPTURE(static_cast<int>(order));
    std::vector<int64_t> want_rank;
    std::vector<T> want_sorted;
    reference(v, s, order, want_rank, want_sorted);
    auto check = [&] {
      Vec<int64_t> r(s.total());
      Vec<T> sorted(s.total());
      REQUIRE(ok(rank<T>(v, s.view(), order, r)));
      CHECK(first_diff<int64_t>(r.cspan(), want_rank) == -1);
      REQUIRE(ok(sort<T>(v, s.view(), order, sorted)));
      CHECK(first_diff<T>(sorted.cspan(), want_sorted) == -1);
    };
    if (all_tunings) for_each_tuning(check);
    else check();
  }
}

}  // namespace

TEST_CASE_TEMPLATE("rank and sort match a stable sort, every shape", T, int64_t, double, int32_t, float, uint8_t) {
  uint64_t seed = 200;
  for (const Shape& s : small_shapes()) check_rank_sort<T>(s, seed++, true);
}

TEST_CASE_TEMPLATE("rank and sort at large shapes", T, int64_t, double) {
  uint64_t seed = 300;
  for (const Shape& s : large_shapes()) check_rank_sort<T>(s, seed++, false);
}

TEST_CASE("library.md §14 float rank and sort examples") {
  Vec<double> v(std::vector<double>{10.0, -5.0, 0.0, 10.0, -10.0, 100.0, 10.0});
  Vec<int64_t> r(7);
  REQUIRE(ok(rank<double>(v, SegView::flat(7), Order::ascending, r)));
  CHECK(first_diff<int64_t>(r.cspan(), std::vector<int64_t>{3, 1, 2, 4, 0, 6, 5}) == -1);
  Vec<double> w(std::vector<double>{7.0, -2.0, 1.0, -3.0, 6.0}), sorted(5);
  REQUIRE(ok(sort<double>(w, SegView::flat(5), Order::ascending, sorted)));
  CHECK(first_diff<double>(sorted.cspan(), std::vector<double>{-3.0, -2.0, 1.0, 6.0, 7.0}) == -1);
}

TEST_CASE("-0.0 ties with 0.0 and NaNs rank above +inf") {
  double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  Vec<double> v(std::vector<double>{0.0, nan, -0.0, inf, -nan, -1.0});
  Vec<int64_t> up(6), down(6);
  REQUIRE(ok(rank<double>(v, SegView::flat(6), Order::ascending, up)));
  CHECK(first_diff<int64_t>(up.cspan(), std::vector<int64_t>{1, 4, 2, 3, 5, 0}) == -1);
  REQUIRE(ok(rank<double>(v, SegView::flat(6), Order::descending, down)));
  CHECK(first_diff<int64_t>(down.cspan(), std::vector<int64_t>{3, 0, 4, 2, 1, 5}) == -1);
}

TEST_CASE("rank of bool is refused") {
  Vec<bool> v(3);
  Vec<int64_t> r(3);
  CHECK(rank<bool>(v, SegView::flat(3), Order::ascending, r).code == NDP_UNSUPPORTED);
}
