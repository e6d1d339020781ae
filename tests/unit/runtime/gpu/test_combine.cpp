// GPU *_combine against the CPU runtime: every (operator, type) pair, hot and sparse targets,
// NaNs and signed zeros under max/min, bad indices and unsupported operators.
#include <iterator>
#include <limits>
#include <random>

#include "tests/unit/runtime/gpu/gpu_fixture.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

namespace {

/// Values for operator op: small integers keep float sums exact in any order; float products
/// use only ±1, so that they are exact in any order too.
template <class T>
Vec<T> values_for(Op op, int64_t n, uint64_t seed) {
  if constexpr (std::is_floating_point_v<T>) {
    if (op == Op::mult) {
      Vec<T> v = random_values<T>(n, seed, 0, 1);
      for (int64_t i = 0; i < n; ++i) v[i] = v[i] == T(0) ? T(-1) : T(1);
      return v;
    }
  }
  return random_values<T>(n, seed, -9, 9);
}

/// Indices into [0, ndest): uniform, or (hot) most of them on a few targets.
Vec<int64_t> targets(int64_t n, int64_t ndest, bool hot, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Vec<int64_t> idx(n);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = rng();
    idx[i] = hot && r % 8 != 0 ? static_cast<int64_t>((r >> 8) % 3 % ndest) : static_cast<int64_t>((r >> 8) % ndest);
  }
  return idx;
}

template <class T>
void check_combine(gpu::Primitives& p, Op op, const Vec<T>& dest, const Vec<int64_t>& idx, const Vec<T>& vals) {
  CAPTURE(static_cast<int>(op));
  CAPTURE(dest.n);
  CAPTURE(idx.n);
  Vec<T> want(dest.n);
  Status cpu = combine<T>(op, dest, idx, vals, want);
  DArray<T> dd(p, dest.cspan()), dv(p, vals.cspan()), out(p, dest.n);
  DArray<int64_t> di(p, idx.cspan());
  auto got = p.combine(static_cast<ndp_op>(op), elem_type_of<T>(), dd.ptr(), dest.n, di.ptr(), dv.ptr(), idx.n, out.ptr());
  REQUIRE_MESSAGE(got.ok(), got.status().message());
  check_same_status(got.value(), cpu);
  if (!ok(cpu)) return;
  CHECK(first_diff<T>(out.host(p).cspan(), want) == -1);
  // In place: out is dest.
  auto again = p.combine(static_cast<ndp_op>(op), elem_type_of<T>(), dd.ptr(), dest.n, di.ptr(), dv.ptr(), idx.n, dd.ptr());
  REQUIRE_MESSAGE(again.ok(), again.status().message());
  CHECK(again.value().code == NDP_OK);
  CHECK(first_diff<T>(dd.host(p).cspan(), want) == -1);
}

template <class T>
void check_sizes(gpu::Primitives& p, Op op, int64_t ndest, int64_t n, bool hot, uint64_t seed) {
  Vec<T> dest = values_for<T>(op, ndest, seed), vals = values_for<T>(op, n, seed + 1);
  check_combine<T>(p, op, dest, targets(n, ndest, hot, seed + 2), vals);
}

}  // namespace

TEST_CASE_TEMPLATE("gpu combine matches the cpu runtime", T, int64_t, double, int32_t, float, bool, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  constexpr ndp_elem_type et = elem_type_of<T>();
  uint64_t seed = 120;
  for (Op op : all_ops) {
    bool defined = with_op<T>(op, [](auto) { return ok_status(); }).code == NDP_OK;
    if (!defined) {
      // The same refusal as the cpu runtime.
      DArray<T> d(*p, 1), v(*p, 1), out(*p, 1);
      DArray<int64_t> i(*p, 1);
      auto got = p->combine(static_cast<ndp_op>(op), et, d.ptr(), 1, i.ptr(), v.ptr(), 1, out.ptr());
      REQUIRE(got.ok());
      CHECK(got.value().code == NDP_UNSUPPORTED);
      continue;
    }
    check_sizes<T>(*p, op, 0, 0, false, seed++);
    check_sizes<T>(*p, op, 5, 0, false, seed++);
    check_sizes<T>(*p, op, 1, 1, false, seed++);
    check_sizes<T>(*p, op, 1, 5000, false, seed++);   // one hot target over several tiles
    check_sizes<T>(*p, op, 7, 3000, true, seed++);
    check_sizes<T>(*p, op, 1000, 100, false, seed++);  // most targets untouched
    check_sizes<T>(*p, op, 300, 20000, false, seed++);
    check_sizes<T>(*p, op, 70000, 100000, true, seed++);
  }
}

TEST_CASE("gpu combine at large sizes") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  check_sizes<int64_t>(*p, Op::plus, 1, 2'000'003, false, 1);
  check_sizes<double>(*p, Op::plus, 100'000, 2'000'003, true, 2);
  check_sizes<float>(*p, Op::max, 1'000'000, 1'000'000, false, 3);
  check_sizes<int32_t>(*p, Op::mult, 3, 1'000'000, false, 4);
  check_sizes<bool>(*p, Op::xor_, 17'000'000, 500'000, false, 5);  // four key bytes
  check_sizes<double>(*p, Op::min, 17, 2'000'003, true, 6);
  check_sizes<uint8_t>(*p, Op::max, 1000, 1'000'000, true, 7);
}

TEST_CASE_TEMPLATE("gpu combine max/min keep dest NaNs, skip value NaNs and the leftmost of equals", T, double, float) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const T pool[] = {nan, -nan, inf, -inf, T(0), -T(0), T(1), T(-1), T(3)};
  uint64_t seed = 130;
  for (int64_t ndest : {1, 9, 400}) {
    for (int64_t n : {10, 3000, 50000}) {
      std::mt19937_64 rng(seed++);
      Vec<T> dest(ndest), vals(n);
      for (int64_t k = 0; k < ndest; ++k) dest[k] = pool[rng() % std::size(pool)];
      for (int64_t i = 0; i < n; ++i) vals[i] = pool[rng() % std::size(pool)];
      Vec<int64_t> idx = targets(n, ndest, false, seed++);
      check_combine<T>(*p, Op::max, dest, idx, vals);
      check_combine<T>(*p, Op::min, dest, idx, vals);
    }
  }
}

// extensions.md §3: the left fold in ascending index, exactly: (-1e16 + 1e16) + 1 = 1, where a
// tree would give -1e16 + (1e16 + 1) = 0.
TEST_CASE_TEMPLATE("gpu combine of float + and * is the exact left fold", T, double, float) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  const T big = std::is_same_v<T, double> ? T(1e16) : T(1e8);
  Vec<T> dest(std::vector<T>{-big, T(3)});
  Vec<int64_t> idx(std::vector<int64_t>{0, 0, 1, 1, 1});
  Vec<T> vals(std::vector<T>{big, T(1), T(1e-3), T(big), T(-big)});
  check_combine<T>(*p, Op::plus, dest, idx, vals);
  check_combine<T>(*p, Op::mult, dest, idx, vals);
  // Random bins of every size, the sum checked bit for bit against the CPU's sequential fold.
  std::mt19937_64 rng(77);
  for (int64_t ndest : {1, 50, 5000}) {
    Vec<T> d(ndest), v(20000);
    for (int64_t k = 0; k < ndest; ++k) d[k] = static_cast<T>(static_cast<double>(rng() % 1000) / 7.0);
    for (int64_t i = 0; i < 20000; ++i) v[i] = static_cast<T>(static_cast<double>(rng() % 100000) / 3.0 - 1e4);
    check_combine<T>(*p, Op::plus, d, targets(20000, ndest, false, 78), v);
  }
}

TEST_CASE("gpu combine reports the lowest out-of-range index") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (int64_t n : {1, 100, 1'000'000}) {
    Vec<int64_t> idx = targets(n, 50, false, 9);
    idx[n - 1] = 50;
    if (n > 2) idx[n / 2] = -1;
    check_combine<int64_t>(*p, Op::plus, values_for<int64_t>(Op::plus, 50, 1), idx, values_for<int64_t>(Op::plus, n, 2));
    check_combine<double>(*p, Op::max, values_for<double>(Op::max, 50, 1), idx, values_for<double>(Op::max, n, 2));
  }
  // No targets at all: every index is out of range.
  Vec<int64_t> idx(std::vector<int64_t>{0, 1});
  check_combine<float>(*p, Op::plus, Vec<float>(0), idx, values_for<float>(Op::plus, 2, 3));
}
