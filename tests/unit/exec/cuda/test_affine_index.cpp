// The formulas of index vectors (Note [Affine indices] in exec/cuda/affine_index.h): every
// composition checked against the values it stands for, instance by instance.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "exec/cuda/affine_index.h"

using namespace ndp::exec::cuda;

namespace {

int64_t at(AffineIndex f, int64_t i) { return (i / f.c) * f.a + (i % f.c) * f.b + f.k; }

std::vector<int64_t> values(AffineIndex f, int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(at(f, i));
  return v;
}

std::vector<int64_t> values(const std::function<int64_t(int64_t)>& g, int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(g(i));
  return v;
}

}  // namespace

TEST_CASE("as_linear and with_divisor keep the values") {
  CHECK(as_linear(AffineIndex::iota(), 10) == AffineIndex::iota());
  // A rank over segments longer than the instances counts them: an iota.
  CHECK(as_linear(AffineIndex::rank(8), 8) == AffineIndex::iota());
  CHECK(!as_linear(AffineIndex::rank(8), 9));
  const AffineIndex lin{1, 3, 0, 5};
  std::optional<AffineIndex> by4 = with_divisor(lin, 20, 4);
  REQUIRE(by4);
  CHECK(by4->c == 4);
  CHECK(values(*by4, 20) == values(lin, 20));
  CHECK(!with_divisor(AffineIndex::rank(3), 20, 4));  // a rank of 3 is no formula of i / 4
  CHECK(with_divisor(AffineIndex::rank(3), 20, 3) == AffineIndex::rank(3));
}

TEST_CASE("spread_over repeats a value of each segment over it") {
  // [0:5] spread over segments of 7: i / 7.
  std::optional<AffineIndex> s = spread_over(AffineIndex::iota(), 5, 7);
  REQUIRE(s);
  CHECK(values(*s, 35) == values([](int64_t i) { return i / 7; }, 35));
  // A rank of one segment of 256 (a lifted [0:256] called once) spread over segments of 1000.
  s = spread_over(AffineIndex::rank(256), 256, 1000);
  REQUIRE(s);
  CHECK(values(*s, 256000) == values([](int64_t i) { return i / 1000; }, 256000));
  // A known value stays one.
  s = spread_over(AffineIndex::constant(-4), 3, 2);
  REQUIRE(s);
  CHECK(values(*s, 6) == std::vector<int64_t>(6, -4));
  // Ranks of several segments spread: no formula of one divisor.
  CHECK(!spread_over(AffineIndex::rank(4), 8, 3));
}

TEST_CASE("row_major composes row times length plus place") {
  // within[j][b] of the radix benchmark: rows j = i % 256, places b = i / 256, rows of 1000.
  const int64_t n = 256 * 1000;
  std::optional<AffineIndex> b = spread_over(AffineIndex::iota(), 1000, 256);
  REQUIRE(b);
  std::optional<AffineIndex> pos = row_major(AffineIndex::rank(256), *b, 1000, n);
  REQUIRE(pos);
  CHECK(values(*pos, n) == values([](int64_t i) { return (i % 256) * 1000 + i / 256; }, n));
  // A row known, places a rank: a view of that row (b = 1).
  pos = row_major(AffineIndex::constant(3), AffineIndex::rank(5), 10, 20);
  REQUIRE(pos);
  CHECK(pos->b == 1);
  CHECK(values(*pos, 20) == values([](int64_t i) { return 30 + i % 5; }, 20));
  // Divisors that cannot meet.
  CHECK(!row_major(AffineIndex::rank(3), AffineIndex::rank(4), 10, 24));
  // Coefficients past an int64.
  CHECK(!row_major(AffineIndex{1, std::numeric_limits<int64_t>::max(), 0, 0}, AffineIndex::iota(), 2, 4));
}

TEST_CASE("value_bounds and within") {
  auto b = value_bounds(AffineIndex{256, 1, 1000, 0}, 256000);
  REQUIRE(b);
  CHECK(b->first == 0);
  CHECK(b->second == 255 * 1000 + 999);
  CHECK(within(AffineIndex{256, 1, 1000, 0}, 256000, 256000));
  CHECK(!within(AffineIndex{256, 1, 1000, 0}, 256000, 255999));
  CHECK(!within(AffineIndex::constant(-1), 3, 10));
  CHECK(within(AffineIndex::constant(-1), 0, 10));  // no instances, nothing read
  // A partial last block: the bounds may be wider than the values, never narrower.
  b = value_bounds(AffineIndex{4, 10, 1, 0}, 9);  // values up to 2·10 + 0
  REQUIRE(b);
  CHECK(b->second >= 20);
  CHECK(!value_bounds(AffineIndex{1, std::numeric_limits<int64_t>::max(), 0, 1}, 3));
}
