// *_combine: the sequential left fold in ascending source order, bit for bit, with bounds checks.
#include <doctest/doctest.h>

#include <cstring>

#include "tests/unit/runtime/shapes.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

namespace {

template <class F>
std::vector<typename F::value_type> left_fold(const Vec<typename F::value_type>& dest, const Vec<int64_t>& idx,
                                              const Vec<typename F::value_type>& vals) {
  std::vector<typename F::value_type> out(dest.p.get(), dest.p.get() + dest.n);
  for (int64_t i = 0; i < idx.n; ++i) out[idx[i]] = F::apply(out[idx[i]], vals[i]);
  return out;
}

/// Values with messy mantissas, so any reassociation of a float sum would show.
template <class T>
Vec<T> messy_values(int64_t n, uint64_t seed) {
  if constexpr (std::is_floating_point_v<T>) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> d(-1000.0, 1000.0);
    Vec<T> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(d(rng) * (i % 7 == 0 ? 1e-7 : 1.0));
    return v;
  } else {
    return random_values<T>(n, seed, -1000, 1000);
  }
}

struct Case {
  const char* name;
  int64_t n_dest, n_vals;
  int hot;  // 0: uniform targets; 1: most go to one target
};

template <class T>
void check_combine(Op op, const Case& c, uint64_t seed) {
  CAPTURE(c.name);
  CAPTURE(static_cast<int>(op));
  Vec<T> dest = messy_values<T>(c.n_dest, seed), vals = messy_values<T>(c.n_vals, seed + 1);
  if (op == Op::mult && std::is_floating_point_v<T>)  // keep long products finite and nonzero
    for (int64_t i = 0; i < vals.n; ++i) vals[i] = static_cast<T>(1.0 + static_cast<double>(vals[i]) * 1e-6);
  Vec<int64_t> idx(c.n_vals);
  std::mt19937_64 rng(seed + 2);
  for (int64_t i = 0; i < c.n_vals; ++i)
    idx[i] = c.hot && rng() % 10 != 0 ? c.n_dest / 2 : static_cast<int64_t>(rng() % c.n_dest);
  with_op<T>(op, [&](auto f) {
    auto want = left_fold<decltype(f)>(dest, idx, vals);
    for_each_tuning([&] {
      Vec<T> out(c.n_dest);
      REQUIRE(ok(combine<T>(op, dest, idx, vals, out)));
      CHECK(first_diff<T>(out.cspan(), want) == -1);
    });
    return ok_status();
  });
}

constexpr Case cases[] = {
    {"no values", 5, 0, 0},
    {"one value", 1, 1, 0},
    {"few targets", 3, 10000, 0},
    {"many targets", 100000, 100000, 0},
    {"one hot target", 1000, 200000, 1},
    {"sparse targets", 400000, 1000, 0},
};

}  // namespace

TEST_CASE_TEMPLATE("combine equals the sequential left fold", T, int64_t, double, int32_t, float, bool, uint8_t) {
  uint64_t seed = 400;
  for (Op op : {Op::plus, Op::mult, Op::max, Op::min, Op::and_, Op::or_, Op::xor_}) {
    if (!ok(with_op<T>(op, [](auto) { return ok_status(); }))) continue;
    for (const Case& c : cases) check_combine<T>(op, c, seed++);
  }
}

TEST_CASE("float combine is bitwise deterministic across tunings and runs") {
  Case c{"hot", 100, 400000, 1};
  Vec<double> dest = messy_values<double>(c.n_dest, 1), vals = messy_values<double>(c.n_vals, 2);
  Vec<int64_t> idx(c.n_vals);
  std::mt19937_64 rng(3);
  for (int64_t i = 0; i < idx.n; ++i) idx[i] = static_cast<int64_t>(rng() % c.n_dest);
  Vec<double> first(c.n_dest);
  REQUIRE(ok(combine<double>(Op::plus, dest, idx, vals, first)));
  for (int run = 0; run < 3; ++run)
    for_each_tuning([&] {
      Vec<double> again(c.n_dest);
      REQUIRE(ok(combine<double>(Op::plus, dest, idx, vals, again)));
      CHECK(std::memcmp(first.p.get(), again.p.get(), sizeof(double) * c.n_dest) == 0);
    });
}

TEST_CASE("combine: histogram example and in-place use") {
  Vec<int64_t> dest(4, 0), idx(std::vector<int64_t>{1, 3, 1, 1, 0}), ones(5, 1);
  REQUIRE(ok(combine<int64_t>(Op::plus, dest.cspan(), idx, ones, dest.span())));
  CHECK(first_diff<int64_t>(dest.cspan(), std::vector<int64_t>{1, 3, 0, 1}) == -1);
}

TEST_CASE("combine reports the lowest out-of-range index, and length mismatches") {
  int64_t n = 200000;
  Vec<int64_t> dest(10), idx(n, 4), vals(n), out(10);
  idx[150000] = 10;
  idx[180000] = -1;
  idx[190000] = 99;
  for_each_tuning([&] {
    Status st = combine<int64_t>(Op::plus, dest, idx, vals, out);
    CHECK(st.code == NDP_INDEX_OUT_OF_BOUNDS);
    CHECK(st.position == 150000);
    CHECK(st.index == 10);
    CHECK(st.length == 10);
  });
  Vec<int64_t> short_vals(n - 1);
  CHECK(combine<int64_t>(Op::plus, dest, idx, short_vals, out).code == NDP_LENGTH_MISMATCH);
  Vec<int64_t> empty(0), none(0);
  Vec<int64_t> one(std::vector<int64_t>{0}), v1(1);
  Status st = combine<int64_t>(Op::plus, empty, one, v1, none);
  CHECK(st.code == NDP_INDEX_OUT_OF_BOUNDS);
  CHECK(st.length == 0);
  CHECK(combine<double>(Op::xor_, Vec<double>(1), Vec<int64_t>(0), Vec<double>(0), Vec<double>(1)).code ==
        NDP_UNSUPPORTED);
}
