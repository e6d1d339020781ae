// GPU RANK and SORT against the CPU runtime (Note [Sort order]): every sortable type, both
// orders, every shape; ties (stability), NaNs, signed zeros and keys that vary in every byte.
#include <bit>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>
#include <random>

#include "tests/unit/runtime/gpu/gpu_fixture.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

namespace {

/// Values whose every bit is random (floats: NaNs with any payload, infinities, both zeros),
/// with some small repeated values mixed in, so that ties occur and every key byte varies.
template <class T>
Vec<T> wide_values(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Vec<T> v(n);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = rng();
    if (r % 4 == 0) {
      v[i] = static_cast<T>(static_cast<int>((r >> 8) % 7) - 3);
      continue;
    }
    if constexpr (std::is_same_v<T, double>) v[i] = std::bit_cast<double>(r);
    else if constexpr (std::is_same_v<T, float>) v[i] = std::bit_cast<float>(static_cast<uint32_t>(r >> 16));
    else v[i] = static_cast<T>(r >> 8);
  }
  return v;
}

/// Special float values: NaNs (both signs), infinities, signed zeros, mixed with small numbers.
template <class T>
Vec<T> special_values(int64_t n, uint64_t seed) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const T pool[] = {nan, -nan, inf, -inf, T(0), -T(0), T(1), T(-1), T(2.5), T(-2.5), std::numeric_limits<T>::min(),
                    -std::numeric_limits<T>::denorm_min()};
  std::mt19937_64 rng(seed);
  Vec<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = pool[rng() % std::size(pool)];
  return v;
}

/// Finite values of both signs with some repeats, none -0.0: flat sorts of these go by keys
/// alone, without positions (device/thread/sort_keys.cuh).
template <class T>
Vec<T> finite_values(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<T> wide(T(-1e6), T(1e6));
  Vec<T> v(n);
  for (int64_t i = 0; i < n; ++i) {
    v[i] = rng() % 8 == 0 ? static_cast<T>(static_cast<int>(rng() % 5) - 2) : wide(rng);
    if (v[i] == T(0)) v[i] = T(0);  // never -0.0
  }
  return v;
}

template <class T>
void check_rank_sort(gpu::Primitives& p, const Shape& s, const Vec<T>& v) {
  CAPTURE(s.name);
  constexpr ndp_elem_type et = elem_type_of<T>();
  DShape ds(p, s);
  DArray<T> dv(p, v.cspan());
  for (Order order : {Order::ascending, Order::descending}) {
    CAPTURE(static_cast<int>(order));
    ndp_order o = static_cast<ndp_order>(order);
    Vec<int64_t> want_rank(s.total());
    REQUIRE(ok(rank<T>(v, s.view(), order, want_rank)));
    DArray<int64_t> r(p, s.total());
    auto got = p.rank(et, dv.ptr(), ds.segs, o, r.ptr());
    REQUIRE_MESSAGE(got.ok(), got.status().message());
    CHECK(got.value().code == NDP_OK);
    CHECK(first_diff<int64_t>(r.host(p).cspan(), want_rank) == -1);
    Vec<T> want(s.total());
    REQUIRE(ok(sort<T>(v, s.view(), order, want)));
    DArray<T> out(p, s.total());
    auto got_s = p.sort(et, dv.ptr(), ds.segs, o, out.ptr());
    REQUIRE_MESSAGE(got_s.ok(), got_s.status().message());
    CHECK(got_s.value().code == NDP_OK);
    CHECK(first_diff<T>(out.host(p).cspan(), want) == -1);  // bit for bit: stable on ties
  }
}

}  // namespace

TEST_CASE_TEMPLATE("gpu rank and sort match the cpu runtime", T, int64_t, double, int32_t, float, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 90;
  for (const Shape& s : small_shapes()) {
    check_rank_sort<T>(*p, s, random_values<T>(s.total(), seed++));  // many ties
    check_rank_sort<T>(*p, s, wide_values<T>(s.total(), seed++));
  }
}

TEST_CASE_TEMPLATE("gpu rank and sort order NaNs, infinities and signed zeros", T, double, float) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 100;
  for (const Shape& s : small_shapes()) check_rank_sort<T>(*p, s, special_values<T>(s.total(), seed++));
}

TEST_CASE("gpu rank and sort at large shapes") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 110;
  for (const Shape& s : large_shapes()) {
    check_rank_sort<int64_t>(*p, s, wide_values<int64_t>(s.total(), seed++));
    check_rank_sort<float>(*p, s, wide_values<float>(s.total(), seed++));
    check_rank_sort<int32_t>(*p, s, random_values<int32_t>(s.total(), seed++, 0, 1000));
    check_rank_sort<uint8_t>(*p, s, random_values<uint8_t>(s.total(), seed++, 0, 255));
  }
  // Already sorted, reversed, and all equal: passes with one digit value are skipped.
  Shape flat = irregular("flat 300000", {300'000});
  Vec<int64_t> up(300'000), down(300'000), equal(300'000, 42);
  for (int64_t i = 0; i < 300'000; ++i) {
    up[i] = i;
    down[i] = 300'000 - i;
  }
  check_rank_sort<int64_t>(*p, flat, up);
  check_rank_sort<int64_t>(*p, flat, down);
  check_rank_sort<int64_t>(*p, flat, equal);
  for (int64_t n : {int64_t{4096}, int64_t{4097}, int64_t{300'000}, int64_t{1'000'003}}) {
    Shape one = irregular("one segment", {n});
    check_rank_sort<float>(*p, one, finite_values<float>(n, seed++));
    check_rank_sort<double>(*p, one, finite_values<double>(n, seed++));
  }
  Shape huge = irregular("huge", {2'000'003});
  check_rank_sort<double>(*p, huge, special_values<double>(huge.total(), 7));
}

TEST_CASE("gpu rank and sort refuse bool") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  Shape s = irregular("two", {2, 1});
  DShape ds(*p, s);
  DArray<bool> v(*p, 3), out(*p, 3);
  DArray<int64_t> r(*p, 3);
  auto a = p->rank(NDP_BOOL, v.ptr(), ds.segs, NDP_ASCENDING, r.ptr());
  auto b = p->sort(NDP_BOOL, v.ptr(), ds.segs, NDP_DESCENDING, out.ptr());
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a.value().code == NDP_UNSUPPORTED);
  CHECK(b.value().code == NDP_UNSUPPORTED);
}

// Not run by default (doctest --no-skip runs it): device times of sort and combine at sizes
// where the GPU matters, as messages.
TEST_CASE("gpu sort and combine timing" * doctest::skip()) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  auto time_ms = [&](auto&& body) {
    body();  // warm-up: module loading, pool growth
    REQUIRE(p->device().synchronize().ok());
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 3; ++i) body();
    REQUIRE(p->device().synchronize().ok());
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 3;
  };
  const int64_t n = 16'000'000;
  Vec<int64_t> wide = wide_values<int64_t>(n, 1);
  Vec<float> wf = wide_values<float>(n, 2);
  DArray<int64_t> dw(*p, wide.cspan()), out(*p, n);
  DArray<float> df(*p, wf.cspan()), outf(*p, n);
  Shape flat = irregular("flat", {n});
  Shape segs = regular("1M x 16", 1'000'000, 16);
  DShape dflat(*p, flat), dsegs(*p, segs);
  double a = time_ms([&] { REQUIRE(p->sort(NDP_I64, dw.ptr(), dflat.segs, NDP_ASCENDING, out.ptr()).ok()); });
  double b = time_ms([&] { REQUIRE(p->sort(NDP_F32, df.ptr(), dsegs.segs, NDP_ASCENDING, outf.ptr()).ok()); });
  double c = time_ms([&] { REQUIRE(p->rank(NDP_F32, df.ptr(), dflat.segs, NDP_DESCENDING, out.ptr()).ok()); });
  Vec<int64_t> idx(n);
  std::mt19937_64 rng(3);
  for (int64_t i = 0; i < n; ++i) idx[i] = static_cast<int64_t>(rng() % 1'000'000);
  DArray<int64_t> di(*p, idx.cspan());
  DArray<double> dv(*p, n), dest(*p, 1'000'000), outd(*p, 1'000'000);
  REQUIRE(p->fill(dv.ptr(), n, 8, 0).ok());
  REQUIRE(p->fill(dest.ptr(), 1'000'000, 8, 0).ok());
  double d = time_ms([&] {
    REQUIRE(p->combine(NDP_OP_PLUS, NDP_F64, dest.ptr(), 1'000'000, di.ptr(), dv.ptr(), n, outd.ptr()).ok());
  });
  DArray<int64_t> hot(*p, n);
  REQUIRE(p->fill(hot.ptr(), n, 8, 0).ok());
  double e = time_ms([&] {
    REQUIRE(p->combine(NDP_OP_MAX, NDP_F64, dest.ptr(), 1, hot.ptr(), dv.ptr(), n, outd.ptr()).ok());
  });
  MESSAGE("16M elements, ms: sort i64 flat (8 digit passes) " << a << ", sort f32 in 1M segments of 16 " << b
                                                             << ", rank f32 flat descending " << c
                                                             << ", combine f64 + into 1M targets " << d
                                                             << ", combine f64 max into 1 target " << e);
}
