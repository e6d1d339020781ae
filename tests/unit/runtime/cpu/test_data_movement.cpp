// DIST, INDEX, EXTRACT, REPLACE, PACK, append, reverse and rotate against sequential references.
#include <doctest/doctest.h>

#include "tests/unit/runtime/shapes.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

namespace {

std::vector<Shape> all_shapes() {
  std::vector<Shape> v = small_shapes();
  for (Shape& s : large_shapes()) v.push_back(std::move(s));
  return v;
}

}  // namespace

TEST_CASE_TEMPLATE("dist replicates one value per segment", T, int64_t, double, bool, uint8_t, float) {
  for (const Shape& s : all_shapes()) {
    CAPTURE(s.name);
    Vec<T> x = random_values<T>(s.count(), 1, -100, 100);
    std::vector<T> want(s.total());
    for (int64_t k = 0; k < s.count(); ++k)
      for (int64_t p = s.offsets[k]; p < s.offsets[k + 1]; ++p) want[p] = x[k];
    for_each_tuning([&] {
      Vec<T> out(s.total());
      REQUIRE(ok(dist<T>(x, s.view(), out)));
      CHECK(first_diff<T>(out.cspan(), want) == -1);
    });
  }
}

TEST_CASE_TEMPLATE("index generates start + j * stride per segment", T, int64_t, int32_t, double) {
  for (const Shape& s : all_shapes()) {
    CAPTURE(s.name);
    Vec<T> start = random_values<T>(s.count(), 2, -1000, 1000), stride = random_values<T>(s.count(), 3, -5, 5);
    std::vector<T> want(s.total());
    for (int64_t k = 0; k < s.count(); ++k)
      for (int64_t j = 0; j < s.lengths[k]; ++j) want[s.offsets[k] + j] = T(start[k] + T(j) * stride[k]);
    for_each_tuning([&] {
      Vec<T> out(s.total());
      REQUIRE(ok(index<T>(start, stride, s.view(), out)));
      CHECK(first_diff<T>(out.cspan(), want) == -1);
    });
  }
}

TEST_CASE("index wraps and refuses non-numbers") {
  Vec<int64_t> start(std::vector<int64_t>{std::numeric_limits<int64_t>::max()}), stride(std::vector<int64_t>{1}), out(2);
  REQUIRE(ok(index<int64_t>(start, stride, SegView::flat(2), out)));
  CHECK(out[1] == std::numeric_limits<int64_t>::min());
  Vec<bool> b(1), bo(2);
  CHECK(index<bool>(b, b, SegView::flat(2), bo).code == NDP_UNSUPPORTED);
}

TEST_CASE_TEMPLATE("extract and replace one element per segment", T, int64_t, double, bool) {
  for (const Shape& s : all_shapes()) {
    CAPTURE(s.name);
    // Only nonempty segments can be indexed: use the shape's nonempty segments.
    std::vector<int64_t> lens;
    for (int64_t l : s.lengths)
      if (l > 0) lens.push_back(l);
    Shape ne = irregular(s.name + " (nonempty)", lens);
    Vec<T> v = random_values<T>(ne.total(), 4), x = random_values<T>(ne.count(), 5);
    Vec<int64_t> idx(ne.count());
    std::mt19937_64 rng(6);
    for (int64_t k = 0; k < ne.count(); ++k) idx[k] = static_cast<int64_t>(rng() % ne.lengths[k]);
    std::vector<T> want_ex(ne.count()), want_rep(v.p.get(), v.p.get() + v.n);
    for (int64_t k = 0; k < ne.count(); ++k) {
      want_ex[k] = v[ne.offsets[k] + idx[k]];
      want_rep[ne.offsets[k] + idx[k]] = x[k];
    }
    for_each_tuning([&] {
      Vec<T> ex(ne.count()), rep(ne.total());
      REQUIRE(ok(extract<T>(v, idx, ne.view(), ex)));
      CHECK(first_diff<T>(ex.cspan(), want_ex) == -1);
      REQUIRE(ok(replace<T>(v, idx, x, ne.view(), rep)));
      CHECK(first_diff<T>(rep.cspan(), want_rep) == -1);
    });
  }
}

TEST_CASE("extract and replace report the lowest bad segment") {
  Shape s = irregular("s", {3, 0, 2, 4});
  Vec<int64_t> v(9, 5), idx(std::vector<int64_t>{2, 0, 2, -1}), out(4), x(4, 1), rep(9);
  Status st = extract<int64_t>(v, idx, s.view(), out);
  CHECK(st.code == NDP_INDEX_OUT_OF_BOUNDS);
  CHECK(st.position == 1);  // the empty segment
  CHECK(st.index == 0);
  CHECK(st.length == 0);
  idx[1] = 0;
  Shape t = irregular("t", {3, 1, 2, 3});
  st = replace<int64_t>(v, idx, x, t.view(), rep);
  CHECK(st.code == NDP_INDEX_OUT_OF_BOUNDS);
  CHECK(st.position == 2);
  CHECK(st.index == 2);
  // A failed in-place replace leaves its input untouched.
  st = replace<int64_t>(v.cspan(), idx, x, t.view(), v.span());
  CHECK(st.code == NDP_INDEX_OUT_OF_BOUNDS);
  CHECK(std::all_of(v.p.get(), v.p.get() + 9, [](int64_t e) { return e == 5; }));
}

TEST_CASE("count_true and pack_lengths count flags eight at a time, at every offset and length") {
  // Runs of true flags longer than 255 words (the byte lanes' limit) and ragged ends.
  int64_t n = 8 * 300 + 13;
  Vec<bool> flags(n);
  for (int64_t p = 0; p < n; ++p) flags[p] = p % 5 != 0 || p > 8 * 280;
  std::vector<int64_t> prefix(n + 1, 0);
  for (int64_t p = 0; p < n; ++p) prefix[p + 1] = prefix[p] + flags[p];
  for_each_tuning([&] {
    CHECK(count_true(flags.cspan()) == prefix[n]);
    for (int64_t b : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{9}}) {
      for (int64_t len : {int64_t{0}, int64_t{3}, int64_t{8}, int64_t{17}, n - b}) {
        Shape s = irregular("window", {b, len, n - b - len});
        Vec<int64_t> lens(3);
        REQUIRE(ok(pack_lengths(flags, s.view(), lens, nullptr)));
        CHECK(lens[0] == prefix[b]);
        CHECK(lens[1] == prefix[b + len] - prefix[b]);
        CHECK(lens[2] == prefix[n] - prefix[b + len]);
      }
    }
  });
}

TEST_CASE("pack_lengths_many counts several flag vectors per segment as pack_lengths counts each") {
  uint64_t seed = 75;
  for (const Shape& s : all_shapes()) {
    CAPTURE(s.name);
    // Dense, sparse, all true, none, and others: every count of flag vectors up to kMostCounts
    // (they are counted up to four a pass, each number of them by its own loop).
    std::vector<Vec<bool>> flags;
    flags.push_back(random_flags(s.total(), 0.5, seed++));
    flags.push_back(random_flags(s.total(), 0.05, seed++));
    flags.push_back(Vec<bool>(s.total(), true));
    flags.push_back(random_flags(s.total(), 0.9, seed++));
    flags.push_back(Vec<bool>(s.total(), false));
    flags.push_back(random_flags(s.total(), 0.3, seed++));
    flags.push_back(random_flags(s.total(), 0.7, seed++));
    flags.push_back(random_flags(s.total(), 0.01, seed++));
    REQUIRE(flags.size() == kMostCounts);
    for (size_t k = 1; k <= flags.size(); ++k) {
      CAPTURE(k);
      std::vector<std::span<const bool>> fs;
      for (size_t j = 0; j < k; ++j) fs.push_back(flags[j].cspan());
      for_each_tuning([&] {
        std::vector<Vec<int64_t>> got;
        std::vector<std::span<int64_t>> to;
        for (size_t j = 0; j < k; ++j) got.emplace_back(s.count());
        for (Vec<int64_t>& g : got) to.push_back(g.span());
        REQUIRE(ok(pack_lengths_many(fs, s.view(), to)));
        for (size_t j = 0; j < k; ++j) {
          CAPTURE(j);
          Vec<int64_t> want(s.count());
          REQUIRE(ok(pack_lengths(flags[j], s.view(), want, nullptr)));
          CHECK(first_diff<int64_t>(got[j].cspan(), std::vector<int64_t>(want.p.get(), want.p.get() + want.n)) == -1);
        }
      });
    }
  }
  // Too many, and counts of another length.
  Vec<bool> all(3, true);
  Vec<int64_t> one(1), two(2);
  std::vector<std::span<const bool>> many(kMostCounts + 1, all.cspan());
  std::vector<std::span<int64_t>> outs(kMostCounts + 1, one.span());
  CHECK(pack_lengths_many(many, SegView::flat(3), outs).code == NDP_LENGTH_MISMATCH);
  std::vector<std::span<const bool>> single(1, all.cspan());
  std::vector<std::span<int64_t>> wrong(1, two.span());
  CHECK(pack_lengths_many(single, SegView::flat(3), wrong).code == NDP_LENGTH_MISMATCH);
}

TEST_CASE_TEMPLATE("pack keeps the flagged elements and counts them per segment", T, int64_t, double, bool, uint8_t) {
  uint64_t seed = 70;
  for (const Shape& s : all_shapes()) {
    CAPTURE(s.name);
    Vec<T> v = random_values<T>(s.total(), seed++);
    Vec<bool> flags = random_values<bool>(s.total(), seed++);
    std::vector<int64_t> want_len(s.count(), 0);
    std::vector<T> want;
    for (int64_t k = 0; k < s.count(); ++k)
      for (int64_t p = s.offsets[k]; p < s.offsets[k + 1]; ++p)
        if (flags[p]) {
          ++want_len[k];
          want.push_back(v[p]);
        }
    for_each_tuning([&] {
      Vec<int64_t> lens(s.count());
      int64_t total = -1;
      REQUIRE(ok(pack_lengths(flags, s.view(), lens, &total)));
      CHECK(first_diff<int64_t>(lens.cspan(), want_len) == -1);
      REQUIRE(total == static_cast<int64_t>(want.size()));
      Vec<T> out(total);
      REQUIRE(ok(pack<T>(v, flags, out)));
      CHECK(first_diff<T>(out.cspan(), want) == -1);
      Vec<T> wrong(total + 1);
      CHECK(pack<T>(v, flags, wrong).code == NDP_LENGTH_MISMATCH);
      // The flags computed on demand (a fused filter): the output comes from `allocate`.
      std::atomic<bool> bad{false};
      Vec<T> gout;
      REQUIRE(ok(pack_generated<T>(v, generated(flags, bad), [&](int64_t n) {
        gout = Vec<T>(n);
        return gout.p.get();
      })));
      CHECK(gout.n == total);
      CHECK(first_diff<T>(gout.cspan(), want) == -1);
      CHECK_FALSE(bad.load());
    });
  }
}

TEST_CASE_TEMPLATE("partition packs one vector by several flags in one pass", T, int64_t, double, bool, uint8_t) {
  uint64_t seed = 90;
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{2047}, int64_t{2049}, int64_t{100'003}}) {
    CAPTURE(n);
    Vec<T> v = random_values<T>(n, seed++);
    // Overlapping predicates, one dense, one sparse (the skipping path), one keeping all and one
    // keeping nothing.
    std::vector<Vec<bool>> flags;
    flags.push_back(random_flags(n, 0.5, seed++));
    flags.push_back(random_flags(n, 0.01, seed++));
    flags.push_back(Vec<bool>(n, true));
    flags.push_back(Vec<bool>(n, false));
    std::vector<std::span<const bool>> fs;
    for (const Vec<bool>& f : flags) fs.push_back(f.cspan());
    for_each_tuning([&] {
      std::vector<Vec<T>> outs(flags.size());
      std::vector<int64_t> asked(flags.size(), -1);
      REQUIRE(ok(partition<T>(v, fs, [&](std::span<const int64_t> counts, std::span<T*> room) {
        REQUIRE(counts.size() == flags.size());
        REQUIRE(room.size() == flags.size());
        for (size_t j = 0; j < counts.size(); ++j) {
          asked[j] = counts[j];
          if (j == 2) continue;  // not written (the caller keeps v itself)
          outs[j] = Vec<T>(counts[j]);
          room[j] = outs[j].p.get();
        }
      })));
      for (size_t j = 0; j < flags.size(); ++j) {
        CAPTURE(j);
        Vec<T> want(count_true(flags[j].cspan()));
        REQUIRE(ok(pack<T>(v, flags[j], want)));
        CHECK(asked[j] == want.n);
        if (j != 2) CHECK(first_diff<T>(outs[j].cspan(), std::vector<T>(want.p.get(), want.p.get() + want.n)) == -1);
      }
    });
  }
  Vec<T> v(3);
  Vec<bool> all(3, true);
  std::vector<std::span<const bool>> fs(kMostPartitions + 1, all.cspan());
  CHECK(partition<T>(v, fs, [](std::span<const int64_t>, std::span<T*>) {}).code == NDP_LENGTH_MISMATCH);
}

TEST_CASE_TEMPLATE("append joins segment k of a and of b", T, int64_t, float, bool) {
  uint64_t seed = 90;
  for (const Shape& a : all_shapes()) {
    CAPTURE(a.name);
    Shape b = irregular("b", random_lengths(a.count(), 7, 0.4, seed++));
    std::vector<int64_t> out_len(a.count());
    REQUIRE(ok(append_lengths(a.view(), b.view(), out_len)));
    Shape o = irregular("out", out_len);
    Vec<T> va = random_values<T>(a.total(), seed++), vb = random_values<T>(b.total(), seed++);
    std::vector<T> want;
    for (int64_t k = 0; k < a.count(); ++k) {
      for (int64_t p = a.offsets[k]; p < a.offsets[k + 1]; ++p) want.push_back(va[p]);
      for (int64_t p = b.offsets[k]; p < b.offsets[k + 1]; ++p) want.push_back(vb[p]);
    }
    for_each_tuning([&] {
      Vec<T> out(o.total());
      REQUIRE(ok(append<T>(va, a.view(), vb, b.view(), o.view(), out)));
      CHECK(first_diff<T>(out.cspan(), want) == -1);
    });
  }
  // A result descriptor of the wrong shape is refused.
  Shape a = irregular("a", {1, 2}), b = irregular("b", {2, 1}), bad = irregular("bad", {2, 2});
  Vec<T> va(3), vb(3), out(4);
  Status st = append<T>(va, a.view(), vb, b.view(), bad.view(), out);
  CHECK(st.code == NDP_LENGTH_MISMATCH);
}

TEST_CASE_TEMPLATE("reverse and rotate per segment", T, int64_t, double, uint8_t) {
  uint64_t seed = 110;
  for (const Shape& s : all_shapes()) {
    CAPTURE(s.name);
    Vec<T> v = random_values<T>(s.total(), seed++, 0, 120);
    Vec<int64_t> shift(s.count());
    std::mt19937_64 rng(seed++);
    for (int64_t k = 0; k < s.count(); ++k) shift[k] = static_cast<int64_t>(rng() % 2001) - 1000;
    std::vector<T> want_rev(s.total()), want_rot(s.total());
    for (int64_t k = 0; k < s.count(); ++k) {
      int64_t b = s.offsets[k], len = s.lengths[k];
      for (int64_t j = 0; j < len; ++j) {
        want_rev[b + len - 1 - j] = v[b + j];
        want_rot[b + ((j + shift[k]) % len + len) % len] = v[b + j];
      }
    }
    for_each_tuning([&] {
      Vec<T> rev(s.total()), rot(s.total());
      REQUIRE(ok(reverse<T>(v, s.view(), rev)));
      CHECK(first_diff<T>(rev.cspan(), want_rev) == -1);
      REQUIRE(ok(rotate<T>(v, shift, s.view(), rot)));
      CHECK(first_diff<T>(rot.cspan(), want_rot) == -1);
    });
  }
}

TEST_CASE("rotate: library.md §6 examples") {
  Vec<int64_t> v(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}), out(8);
  Vec<int64_t> right(std::vector<int64_t>{3}), left(std::vector<int64_t>{-3});
  REQUIRE(ok(rotate<int64_t>(v, right, SegView::flat(8), out)));
  CHECK(first_diff<int64_t>(out.cspan(), std::vector<int64_t>{5, 6, 7, 0, 1, 2, 3, 4}) == -1);
  REQUIRE(ok(rotate<int64_t>(v, left, SegView::flat(8), out)));
  CHECK(first_diff<int64_t>(out.cspan(), std::vector<int64_t>{3, 4, 5, 6, 7, 0, 1, 2}) == -1);
}
