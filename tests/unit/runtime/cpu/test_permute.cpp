// PERMUTE, DPERMUTE and BPERMUTE: results, collisions (highest source wins), bounds, permutation checks.
#include <doctest/doctest.h>

#include "tests/unit/runtime/shapes.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

namespace {

template <class T>
void check_permute(const Shape& s, uint64_t seed) {
  CAPTURE(s.name);
  Vec<T> v = random_values<T>(s.total(), seed, -100, 100);
  Vec<int64_t> idx(random_indices(s, seed + 1, true));
  std::vector<T> want(s.total());
  for (int64_t k = 0; k < s.count(); ++k)
    for (int64_t p = s.offsets[k]; p < s.offsets[k + 1]; ++p) want[s.offsets[k] + idx[p]] = v[p];
  for_each_tuning([&] {
    Vec<T> out(s.total());
    Status st = permute<T>(v, idx, s.view(), out);
    REQUIRE(st.code == NDP_OK);
    CHECK(first_diff<T>(out.cspan(), want) == -1);
  });
}

}  // namespace

TEST_CASE_TEMPLATE("permute scatters within every segment", T, int64_t, double, int32_t, float, uint8_t) {
  uint64_t seed = 10;
  for (const Shape& s : small_shapes()) check_permute<T>(s, seed++);
}

TEST_CASE("permute at large shapes") {
  for (const Shape& s : large_shapes()) check_permute<int64_t>(s, 3);
}

TEST_CASE("permute of bool") {
  Vec<bool> v(std::vector<bool>{true, false, false, true, true}), out(5);
  Vec<int64_t> idx(std::vector<int64_t>{1, 0, 2, 0, 1});  // segments [3, 2]
  Shape s = irregular("two", {3, 2});
  REQUIRE(ok(permute<bool>(v, idx, s.view(), out)));
  CHECK(first_diff<bool>(out.cspan(), std::vector<bool>{false, true, false, true, true}) == -1);
}

TEST_CASE("permute reports the lowest out-of-range index") {
  Shape s = irregular("with errors", random_lengths(20000, 20, 0.2, 8));
  Vec<int64_t> idx(random_indices(s, 4, true));
  Vec<int64_t> v(s.total(), 1), out(s.total());
  // Spoil two positions in different segments; the lower one must be reported.
  int64_t k1 = 5000, k2 = 15000;
  while (s.lengths[k1] == 0) ++k1;
  while (s.lengths[k2] == 0) ++k2;
  int64_t p1 = s.offsets[k1], p2 = s.offsets[k2] + s.lengths[k2] - 1;
  idx[p2] = -3;
  idx[p1] = s.lengths[k1];
  for_each_tuning([&] {
    Status st = permute<int64_t>(v, idx, s.view(), out);
    CHECK(st.code == NDP_INDEX_OUT_OF_BOUNDS);
    CHECK(st.position == p1);
    CHECK(st.index == s.lengths[k1]);
    CHECK(st.length == s.lengths[k1]);
  });
}

TEST_CASE("permute with a repeated index is not a permutation") {
  Shape s = irregular("dups", random_lengths(20000, 20, 0.2, 9));
  Vec<int64_t> idx(random_indices(s, 5, true));
  Vec<int64_t> v(s.total(), 1), out(s.total());
  int64_t k = 7000;
  while (s.lengths[k] < 3) ++k;
  int64_t b = s.offsets[k];
  // Positions b and b+2 aim at one target: b+2 is the offender. A later segment has another.
  idx[b + 2] = idx[b];
  int64_t k2 = 17000;
  while (s.lengths[k2] < 2) ++k2;
  idx[s.offsets[k2] + 1] = idx[s.offsets[k2]];
  for_each_tuning([&] {
    Status st = permute<int64_t>(v, idx, s.view(), out);
    CHECK(st.code == NDP_NOT_A_PERMUTATION);
    CHECK(st.position == b + 2);
    CHECK(st.index == idx[b]);
    CHECK(st.length == s.lengths[k]);
  });
  // Even the earlier position of a pair is never reported: a flat [0, 0].
  Vec<int64_t> two(std::vector<int64_t>{0, 0}), vv(2), oo(2);
  Status st = permute<int64_t>(vv, two, SegView::flat(2), oo);
  CHECK(st.code == NDP_NOT_A_PERMUTATION);
  CHECK(st.position == 1);
}

TEST_CASE_TEMPLATE("dpermute: collisions take the highest source position", T, int64_t, double, bool, uint8_t) {
  std::vector<Shape> shapes = small_shapes();
  shapes.push_back(irregular("hot targets", random_lengths(50000, 40, 0.2, 12)));
  uint64_t seed = 30;
  for (const Shape& sd : shapes) {
    CAPTURE(sd.name);
    // Sources: per segment a random count (up to 3x the target segment), random targets.
    std::mt19937_64 rng(seed++);
    std::vector<int64_t> src_len(sd.count());
    for (int64_t k = 0; k < sd.count(); ++k)
      src_len[k] = sd.lengths[k] == 0 ? 0 : static_cast<int64_t>(rng() % (3 * sd.lengths[k] + 1));
    Shape sv = irregular("sources", src_len);
    Vec<T> v = random_values<T>(sv.total(), seed, -50, 50);
    Vec<T> defaults = random_values<T>(sd.total(), seed + 1, -50, 50);
    Vec<int64_t> idx(sv.total());
    for (int64_t k = 0; k < sv.count(); ++k)
      for (int64_t p = sv.offsets[k]; p < sv.offsets[k + 1]; ++p) idx[p] = static_cast<int64_t>(rng() % sd.lengths[k]);
    std::vector<T> want(defaults.p.get(), defaults.p.get() + defaults.n);
    for (int64_t k = 0; k < sv.count(); ++k)  // the sequential reading: later writes win
      for (int64_t p = sv.offsets[k]; p < sv.offsets[k + 1]; ++p) want[sd.offsets[k] + idx[p]] = v[p];
    for_each_tuning([&] {
      Vec<T> out(sd.total());
      REQUIRE(ok(dpermute<T>(v, idx, sv.view(), defaults, sd.view(), out)));
      CHECK(first_diff<T>(out.cspan(), want) == -1);
    });
  }
}

TEST_CASE("dpermute: every source hitting one target") {
  int64_t n = 1'000'000;
  Vec<int64_t> v(n), idx(n, 2), defaults(std::vector<int64_t>{7, 8, 9, 10}), out(4);
  for (int64_t i = 0; i < n; ++i) v[i] = i * 3;
  for_each_tuning([&] {
    REQUIRE(ok(dpermute<int64_t>(v, idx, SegView::flat(n), defaults, SegView::flat(4), out)));
    CHECK(first_diff<int64_t>(out.cspan(), std::vector<int64_t>{7, 8, (n - 1) * 3, 10}) == -1);
  });
  // In place over the defaults.
  REQUIRE(ok(dpermute<int64_t>(v, idx, SegView::flat(n), defaults.cspan(), SegView::flat(4), defaults.span())));
  CHECK(defaults[2] == (n - 1) * 3);
}

TEST_CASE("dpermute by target range: segments that straddle chunks, empty targets, the first error") {
  // Few chunks over few segments: the scatter by target range (Note [Scatter by target range]),
  // where a segment crossing a chunk boundary is walked by both chunks.
  Tuning saved = tuning();
  for (int chunks : {2, 3}) {
    CAPTURE(chunks);
    tuning() = Tuning{1, chunks};
    int64_t n = 10'007;
    Shape sd = irregular("d", {n, 0, 5});
    Shape sv = irregular("v", {3 * n, 0, 4});
    Vec<int64_t> v(sv.total()), idx(sv.total()), defaults(sd.total()), out(sd.total());
    std::vector<int64_t> want(sd.total());
    for (int64_t q = 0; q < sd.total(); ++q) want[q] = defaults[q] = -q;
    for (int64_t p = 0; p < sv.total(); ++p) {
      int64_t k = p < 3 * n ? 0 : 2;
      v[p] = p;
      idx[p] = (p * 7919) % sd.lengths[k];
      want[sd.offsets[k] + idx[p]] = p;  // later sources win
    }
    REQUIRE(ok(dpermute<int64_t>(v, idx, sv.view(), defaults, sd.view(), out)));
    CHECK(first_diff<int64_t>(out.cspan(), want) == -1);
    // Two bad indices: the lower position is reported, wherever the chunks fall.
    idx[2 * n] = n;
    idx[3 * n + 1] = -1;
    Status st = dpermute<int64_t>(v, idx, sv.view(), defaults, sd.view(), out);
    CHECK(st.code == NDP_INDEX_OUT_OF_BOUNDS);
    CHECK(st.position == 2 * n);
    // A source aimed at an empty target segment is out of range.
    Shape sv2 = irregular("v2", {0, 1, 0});
    Vec<int64_t> one(std::vector<int64_t>{0});
    st = dpermute<int64_t>(one, one, sv2.view(), defaults, sd.view(), out);
    CHECK(st.code == NDP_INDEX_OUT_OF_BOUNDS);
    CHECK(st.position == 0);
  }
  tuning() = saved;
}

TEST_CASE("dpermute bounds and shape errors") {
  Shape sv = irregular("v", {2, 0, 3});
  Shape sd = irregular("d", {1, 4, 2});
  Vec<int64_t> v(5), d(7), out(7);
  Vec<int64_t> idx(std::vector<int64_t>{0, 0, 1, 2, 0});  // segment 2 has length 2: 2 is out of range
  Status st = dpermute<int64_t>(v, idx, sv.view(), d, sd.view(), out);
  CHECK(st.code == NDP_INDEX_OUT_OF_BOUNDS);
  CHECK(st.position == 3);
  CHECK(st.index == 2);
  CHECK(st.length == 2);
  Shape two = irregular("two", {1, 6});
  CHECK(dpermute<int64_t>(v, idx, sv.view(), d, two.view(), out).code == NDP_LENGTH_MISMATCH);
}

TEST_CASE_TEMPLATE("bpermute gathers within every segment", T, int64_t, double, int32_t, bool) {
  std::vector<Shape> shapes = small_shapes();
  for (Shape& s : large_shapes()) shapes.push_back(std::move(s));
  uint64_t seed = 50;
  for (const Shape& si : shapes) {
    CAPTURE(si.name);
    // Source segments: nonempty wherever an index segment is nonempty.
    std::mt19937_64 rng(seed++);
    std::vector<int64_t> src_len(si.count());
    for (int64_t k = 0; k < si.count(); ++k) src_len[k] = si.lengths[k] == 0 ? int64_t(rng() % 3) : 1 + int64_t(rng() % 50);
    Shape sv = irregular("sources", src_len);
    Vec<T> v = random_values<T>(sv.total(), seed);
    Vec<int64_t> idx(si.total());
    std::vector<T> want(si.total());
    for (int64_t k = 0; k < si.count(); ++k)
      for (int64_t p = si.offsets[k]; p < si.offsets[k + 1]; ++p) {
        idx[p] = static_cast<int64_t>(rng() % sv.lengths[k]);
        want[p] = v[sv.offsets[k] + idx[p]];
      }
    for_each_tuning([&] {
      Vec<T> out(si.total());
      REQUIRE(ok(bpermute<T>(v, sv.view(), idx, si.view(), out)));
      CHECK(first_diff<T>(out.cspan(), want) == -1);
    });
  }
}

TEST_CASE("bpermute reports the lowest out-of-range index, flat and segmented") {
  int64_t n = 300000;
  Vec<int64_t> v(10), idx(n, 3), out(n);
  idx[200000] = 10;
  idx[250000] = -1;
  for_each_tuning([&] {
    Status st = bpermute<int64_t>(v, SegView::flat(10), idx, SegView::flat(n), out);
    CHECK(st.code == NDP_INDEX_OUT_OF_BOUNDS);
    CHECK(st.position == 200000);
    CHECK(st.index == 10);
    CHECK(st.length == 10);
  });
  // Gathering from an empty source segment is always out of range.
  Shape sv = irregular("v", {2, 0});
  Shape si = irregular("i", {1, 1});
  Vec<int64_t> v2(2), i2(std::vector<int64_t>{1, 0}), o2(2);
  Status st = bpermute<int64_t>(v2, sv.view(), i2, si.view(), o2);
  CHECK(st.code == NDP_INDEX_OUT_OF_BOUNDS);
  CHECK(st.position == 1);
  CHECK(st.length == 0);
}
