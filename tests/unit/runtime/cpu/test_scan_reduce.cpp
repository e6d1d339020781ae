// Segmented scans and reductions against a sequential reference, at every segment shape.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tests/unit/runtime/shapes.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

namespace {

template <class F>
std::vector<typename F::value_type> ref_scan(const Vec<typename F::value_type>& in, const Shape& s, ScanKind kind) {
  using T = typename F::value_type;
  std::vector<T> out(s.total());
  for (int64_t k = 0; k < s.count(); ++k) {
    T acc = F::identity();
    for (int64_t p = s.offsets[k]; p < s.offsets[k + 1]; ++p) {
      if (kind == ScanKind::inclusive) acc = F::apply(acc, in[p]);
      out[p] = acc;
      if (kind == ScanKind::exclusive) acc = F::apply(acc, in[p]);
    }
  }
  return out;
}

template <class F>
std::vector<typename F::value_type> ref_reduce(const Vec<typename F::value_type>& in, const Shape& s) {
  using T = typename F::value_type;
  std::vector<T> out(s.count());
  for (int64_t k = 0; k < s.count(); ++k) {
    T acc = F::identity();
    for (int64_t p = s.offsets[k]; p < s.offsets[k + 1]; ++p) acc = F::apply(acc, in[p]);
    out[k] = acc;
  }
  return out;
}

template <class T>
void check_op_on_shape(Op op, const Shape& s, uint64_t seed) {
  CAPTURE(s.name);
  CAPTURE(static_cast<int>(op));
  // Products of values in {-1, 0, 1} stay exact for floats.
  Vec<T> in = op == Op::mult ? random_values<T>(s.total(), seed, -1, 1) : random_values<T>(s.total(), seed);
  Status st = with_op<T>(op, [&](auto f) {
    using F = decltype(f);
    for_each_tuning([&] {
      for (ScanKind kind : {ScanKind::exclusive, ScanKind::inclusive}) {
        Vec<T> out(s.total());
        REQUIRE(ok(seg_scan<T>(op, kind, in, s.view(), out)));
        CHECK(first_diff<T>(out.cspan(), ref_scan<F>(in, s, kind)) == -1);
      }
      Vec<T> red(s.count());
      REQUIRE(ok(seg_reduce<T>(op, in, s.view(), red)));
      CHECK(first_diff<T>(red.cspan(), ref_reduce<F>(in, s)) == -1);
      // The same values computed on demand, a window at a time (a fused map).
      std::atomic<bool> bad{false};
      Generate<T> gen = generated(in, bad);
      Vec<T> gscan(s.total()), gred(s.count());
      REQUIRE(ok(seg_scan_generated<T>(op, ScanKind::exclusive, gen, s.view(), gscan)));
      CHECK(first_diff<T>(gscan.cspan(), ref_scan<F>(in, s, ScanKind::exclusive)) == -1);
      REQUIRE(ok(seg_reduce_generated<T>(op, gen, s.view(), gred)));
      CHECK(first_diff<T>(gred.cspan(), ref_reduce<F>(in, s)) == -1);
      CHECK_FALSE(bad.load());
    });
    return ok_status();
  });
  CHECK(st.code == NDP_OK);
}

constexpr Op all_ops[] = {Op::plus, Op::mult, Op::max, Op::min, Op::and_, Op::or_, Op::xor_};

template <class T>
bool admits(Op op) {
  return ok(with_op<T>(op, [](auto) { return ok_status(); }));
}

}  // namespace

TEST_CASE_TEMPLATE("scan and reduce match the sequential reference on small shapes", T, int64_t, double, int32_t,
                   float, bool, uint8_t) {
  uint64_t seed = 1;
  for (Op op : all_ops) {
    if (!admits<T>(op)) continue;
    for (const Shape& s : small_shapes()) check_op_on_shape<T>(op, s, seed++);
  }
}

TEST_CASE_TEMPLATE("scan and reduce at large shapes", T, int64_t, double) {
  for (const Shape& s : large_shapes())
    for (Op op : {Op::plus, Op::max}) check_op_on_shape<T>(op, s, 99);
}

TEST_CASE("operators an element type does not admit are refused") {
  Vec<double> d(3, 1.0), dout(3);
  CHECK(seg_scan<double>(Op::and_, ScanKind::exclusive, d, SegView::flat(3), dout).code == NDP_UNSUPPORTED);
  Vec<bool> b(3, true), bout(1);
  CHECK(seg_reduce<bool>(Op::plus, b, SegView::flat(3), bout).code == NDP_UNSUPPORTED);
  Vec<uint8_t> c(3, 'a'), cout(1);
  CHECK(seg_reduce<uint8_t>(Op::xor_, c, SegView::flat(3), cout).code == NDP_UNSUPPORTED);
  CHECK(ok(seg_reduce<uint8_t>(Op::max, c, SegView::flat(3), cout)));
}

TEST_CASE("library.md §5 examples") {
  auto scan = [](Op op, std::vector<int64_t> v) {
    Vec<int64_t> in(v), out(in.n);
    REQUIRE(ok(seg_scan<int64_t>(op, ScanKind::exclusive, in, SegView::flat(in.n), out)));
    return std::vector<int64_t>(out.p.get(), out.p.get() + out.n);
  };
  constexpr int64_t min_int = std::numeric_limits<int64_t>::min();
  CHECK(scan(Op::plus, {1, 3, 5, 7}) == std::vector<int64_t>{0, 1, 4, 9});
  CHECK(scan(Op::mult, {2, 3, 4}) == std::vector<int64_t>{1, 2, 6});
  CHECK(scan(Op::max, {3, 2, 1, 6, 5, 4, 8}) == std::vector<int64_t>{min_int, 3, 3, 3, 6, 6, 6});
  CHECK(scan(Op::and_, {7, 3, 1}) == std::vector<int64_t>{-1, 7, 3});

  Vec<bool> flags(std::vector<bool>{false, false, true, false}), fout(4);
  REQUIRE(ok(seg_scan<bool>(Op::or_, ScanKind::exclusive, flags, SegView::flat(4), fout)));
  CHECK(first_diff<bool>(fout.cspan(), std::vector<bool>{false, false, false, true}) == -1);
  Vec<bool> x(std::vector<bool>{true, true, false, true});
  REQUIRE(ok(seg_scan<bool>(Op::xor_, ScanKind::exclusive, x, SegView::flat(4), fout)));
  CHECK(first_diff<bool>(fout.cspan(), std::vector<bool>{false, true, false, false}) == -1);

  // {plus_scan(x) : x in [[1,2,3],[] int,[4,5]]} and {max_val(x) : ...}
  Shape s = irregular("nested", {3, 0, 2});
  Vec<int64_t> in(std::vector<int64_t>{1, 2, 3, 4, 5}), out(5), red(3);
  REQUIRE(ok(seg_scan<int64_t>(Op::plus, ScanKind::exclusive, in, s.view(), out)));
  CHECK(first_diff<int64_t>(out.cspan(), std::vector<int64_t>{0, 1, 3, 0, 4}) == -1);
  REQUIRE(ok(seg_reduce<int64_t>(Op::max, in, s.view(), red)));
  CHECK(first_diff<int64_t>(red.cspan(), std::vector<int64_t>{3, min_int, 5}) == -1);
  REQUIRE(ok(seg_reduce<int64_t>(Op::plus, in, SegView::flat(5), std::span<int64_t>(red.span().first(1)))));
  CHECK(red[0] == 15);
}

TEST_CASE("identities of empty segments (library.md §5 with ndp's fixes)") {
  SegView empty = SegView::flat(0);
  auto id = [&](auto zero, Op op) {
    using T = decltype(zero);
    Vec<T> in(0), out(1);
    REQUIRE(ok(seg_reduce<T>(op, in, empty, out)));
    return out[0];
  };
  CHECK(id(int64_t{}, Op::plus) == 0);
  CHECK(id(int64_t{}, Op::mult) == 1);
  CHECK(id(int64_t{}, Op::and_) == -1);
  CHECK(id(int32_t{}, Op::and_) == -1);
  CHECK(id(int64_t{}, Op::max) == std::numeric_limits<int64_t>::min());
  CHECK(id(int32_t{}, Op::min) == std::numeric_limits<int32_t>::max());
  CHECK(id(double{}, Op::max) == -std::numeric_limits<double>::infinity());
  CHECK(id(double{}, Op::min) == std::numeric_limits<double>::infinity());
  CHECK(id(float{}, Op::max) == -std::numeric_limits<float>::infinity());
  CHECK(id(double{}, Op::mult) == 1.0);
  CHECK(id(uint8_t{}, Op::max) == 0);
  CHECK(id(uint8_t{}, Op::min) == 255);
  CHECK(id(bool{}, Op::and_) == true);
  CHECK(id(bool{}, Op::or_) == false);
  CHECK(id(bool{}, Op::xor_) == false);
}

TEST_CASE("integer arithmetic wraps") {
  constexpr int64_t big = std::numeric_limits<int64_t>::max();
  Vec<int64_t> in(std::vector<int64_t>{big, 1, big}), out(3);
  REQUIRE(ok(seg_scan<int64_t>(Op::plus, ScanKind::inclusive, in, SegView::flat(3), out)));
  CHECK(out[1] == std::numeric_limits<int64_t>::min());
  CHECK(out[2] == -1);  // min_int + max_int
  Vec<int32_t> m(std::vector<int32_t>{1 << 20, 1 << 20}), mout(1);
  REQUIRE(ok(seg_reduce<int32_t>(Op::mult, m, SegView::flat(2), mout)));
  CHECK(mout[0] == 0);
  // Full-range random values: + and * wrap identically in every association.
  Shape s = irregular("random", random_lengths(2000, 200, 0.2, 5));
  std::mt19937_64 rng(3);
  Vec<int64_t> r(s.total()), red(s.count());
  for (int64_t i = 0; i < r.n; ++i) r[i] = static_cast<int64_t>(rng());
  for (Op op : {Op::plus, Op::mult, Op::xor_}) {
    for_each_tuning([&] {
      REQUIRE(ok(seg_reduce<int64_t>(op, r, s.view(), red)));
      with_op<int64_t>(op, [&](auto f) {
        CHECK(first_diff<int64_t>(red.cspan(), ref_reduce<decltype(f)>(r, s)) == -1);
        return ok_status();
      });
    });
  }
}

TEST_CASE("float max and min: NaN never displaces a number, the leftmost of equals wins") {
  double nan = std::nan("");
  Vec<double> in(std::vector<double>{nan, 2.0, nan, -0.0, 0.0, 5.0, nan}), out(7), red(1);
  REQUIRE(ok(seg_scan<double>(Op::max, ScanKind::inclusive, in, SegView::flat(7), out)));
  double inf = std::numeric_limits<double>::infinity();
  CHECK(first_diff<double>(out.cspan(), std::vector<double>{-inf, 2, 2, 2, 2, 5, 5}) == -1);
  Vec<double> zeros(std::vector<double>{-0.0, 0.0}), zout(2);
  REQUIRE(ok(seg_reduce<double>(Op::min, zeros, SegView::flat(2), zout.span().first(1))));
  CHECK(std::signbit(zout[0]));
  Vec<double> all_nan(3, nan);
  REQUIRE(ok(seg_reduce<double>(Op::min, all_nan, SegView::flat(3), red)));
  CHECK(red[0] == inf);
}

TEST_CASE("scans may run in place") {
  Shape s = irregular("in place", random_lengths(5000, 30, 0.3, 21));
  Vec<int64_t> v = random_values<int64_t>(s.total(), 4);
  auto want = ref_scan<OpFn<Op::plus, int64_t>>(v, s, ScanKind::exclusive);
  for_each_tuning([&] {
    Vec<int64_t> w(s.total());
    std::copy(v.p.get(), v.p.get() + v.n, w.p.get());
    REQUIRE(ok(seg_scan<int64_t>(Op::plus, ScanKind::exclusive, w.cspan(), s.view(), w.span())));
    CHECK(first_diff<int64_t>(w.cspan(), want) == -1);
  });
}

TEST_CASE("wrong array sizes are a length mismatch") {
  Vec<int64_t> in(5), out(4);
  Status st = seg_scan<int64_t>(Op::plus, ScanKind::exclusive, in, SegView::flat(5), out);
  CHECK(st.code == NDP_LENGTH_MISMATCH);
  CHECK(st.index == 4);
  CHECK(st.length == 5);
}

namespace {

/// max_index / min_index of every segment as stdlib/sequence.ndp defined them: the segment's
/// seg_reduce, then the least position holding it by ==, max_int where none does.
template <class T>
std::vector<int64_t> ref_index_of_extreme(Op op, const Vec<T>& in, const Shape& s) {
  Vec<T> m(s.count());
  REQUIRE(ok(seg_reduce<T>(op, in, s.view(), m)));
  std::vector<int64_t> out(static_cast<size_t>(s.count()), std::numeric_limits<int64_t>::max());
  for (int64_t k = 0; k < s.count(); ++k)
    for (int64_t p = s.view().begin(k); p < s.view().end(k); ++p)
      if (in[p] == m[k]) {
        out[static_cast<size_t>(k)] = p - s.view().begin(k);
        break;
      }
  return out;
}

template <class T>
void check_index_of_extreme(const Shape& s, const Vec<T>& in) {
  CAPTURE(s.name);
  for (Op op : {Op::max, Op::min}) {
    CAPTURE(static_cast<int>(op));
    const std::vector<int64_t> want = ref_index_of_extreme<T>(op, in, s);
    for_each_tuning([&] {
      Vec<int64_t> got(s.count());
      REQUIRE(ok(seg_index_of_extreme<T>(op, in, s.view(), got)));
      CHECK(first_diff<int64_t>(got.cspan(), want) == -1);
    });
  }
}

}  // namespace

TEST_CASE_TEMPLATE("seg_index_of_extreme is the least position of the segment's max or min", T, int64_t, double,
                   int32_t, float, uint8_t) {
  uint64_t seed = 500;
  // Values in a small range: many ties, so the least position is what is tested.
  for (const Shape& s : small_shapes()) check_index_of_extreme<T>(s, random_values<T>(s.total(), seed++, -3, 3));
  if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>)
    for (const Shape& s : large_shapes()) check_index_of_extreme<T>(s, random_values<T>(s.total(), seed++, -1000, 1000));
}

TEST_CASE("seg_index_of_extreme: NaNs never hold the extreme, -0.0 equals 0.0, none gives max_int") {
  const double nan = std::nan("");
  Vec<double> in(std::vector<double>{nan, 2.0, 2.0, /**/ nan, nan, /**/ 0.0, -0.0, /**/ -0.0, 0.0, 1.0});
  Shape s = irregular("nan, zeros", {3, 2, 2, 3});
  Vec<int64_t> mx(4), mn(4);
  REQUIRE(ok(seg_index_of_extreme<double>(Op::max, in, s.view(), mx)));
  REQUIRE(ok(seg_index_of_extreme<double>(Op::min, in, s.view(), mn)));
  const int64_t big = std::numeric_limits<int64_t>::max();
  CHECK(first_diff<int64_t>(mx.cspan(), std::vector<int64_t>{1, big, 0, 2}) == -1);
  CHECK(first_diff<int64_t>(mn.cspan(), std::vector<int64_t>{1, big, 0, 0}) == -1);
  Vec<bool> b(2, true);
  Vec<int64_t> bout(1);
  CHECK(seg_index_of_extreme<bool>(Op::max, b, SegView::flat(2), bout).code == NDP_UNSUPPORTED);
  Vec<int64_t> i(3, 1), iout(1);
  CHECK(seg_index_of_extreme<int64_t>(Op::plus, i, SegView::flat(3), iout).code == NDP_UNSUPPORTED);
}
