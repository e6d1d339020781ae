// Segment descriptors: make/lengths/offsets, flatten, partition, append lengths, ids, head flags.
#include <doctest/doctest.h>

#include "tests/unit/runtime/shapes.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

TEST_CASE("make_segments computes offsets and keeps lengths") {
  for (const Shape& s : small_shapes()) {
    CAPTURE(s.name);
    Segments made;
    REQUIRE(ok(make_segments(s.lengths, made)));
    SegView v = made.view();
    CHECK(v.count() == s.count());
    CHECK(v.total() == s.total());
    CHECK(!v.is_regular());
    CHECK(made.offsets() == s.offsets);
    std::vector<int64_t> lens(s.count());
    REQUIRE(ok(lengths_of(s.view(), lens)));  // the regular shapes too
    CHECK(lens == s.lengths);
    std::vector<int64_t> offs(s.count() + 1);
    REQUIRE(ok(offsets_from_lengths(s.lengths, offs)));
    CHECK(offs == s.offsets);
    CHECK(ok(validate(s.view())));
  }
}

TEST_CASE("negative lengths are refused with the lowest position") {
  std::vector<int64_t> lens(100000, 2);
  lens[60000] = -1;
  lens[90000] = -5;
  for_each_tuning([&] {
    Segments s;
    Status st = make_segments(lens, s);
    CHECK(st.code == NDP_NEGATIVE_LENGTH);
    CHECK(st.position == 60000);
    CHECK(st.index == -1);
    std::vector<int64_t> offs(lens.size() + 1);
    CHECK(offsets_from_lengths(lens, offs).position == 60000);
  });
}

TEST_CASE("regular descriptors stay regular") {
  Segments r = Segments::regular(4, 3);
  SegView v = r.view();
  CHECK(v.is_regular());
  CHECK(v.total() == 12);
  CHECK(v.begin(2) == 6);
  CHECK(v.end(3) == 12);
  CHECK(v.length(1) == 3);
  CHECK(ok(validate(v)));
  ndp_segdes bad = ndp_segdes_regular(4, 3);
  bad.total = 11;
  CHECK(validate(bad).code == NDP_INVALID_ARGUMENT);
}

TEST_CASE("flatten_lengths sums the inner lengths of each outer segment") {
  // [[[1,2],[3]], [], [[],[4,5,6]]]: inner lengths 2 1 0 3, outer lengths 2 0 2.
  Shape inner = irregular("inner", {2, 1, 0, 3});
  Shape outer = irregular("outer", {2, 0, 2});
  std::vector<int64_t> out(3);
  REQUIRE(ok(flatten_lengths(outer.view(), inner.view(), out)));
  CHECK(out == std::vector<int64_t>{3, 0, 3});
  Shape wrong = irregular("wrong", {2, 1});
  CHECK(flatten_lengths(wrong.view(), inner.view(), std::span<int64_t>(out).first(2)).code == NDP_LENGTH_MISMATCH);
  // Large: 10^6 one-element inner segments in 1000 outer segments of 1000.
  Shape big_inner = regular("inner", 1'000'000, 1);
  std::vector<int64_t> big(1000);
  for_each_tuning([&] {
    REQUIRE(ok(flatten_lengths(SegView::regular(1000, 1000), big_inner.view(), big)));
    CHECK(std::all_of(big.begin(), big.end(), [](int64_t l) { return l == 1000; }));
  });
}

TEST_CASE("partition_segments checks the counts against the data") {
  // Data segments of lengths 5 and 0 and 3; counts per segment [2,3], [], [0,3,0].
  Shape data = irregular("data", {5, 0, 3});
  Shape count_segs = irregular("counts", {2, 0, 3});
  std::vector<int64_t> counts{2, 3, 0, 3, 0};
  Segments inner;
  REQUIRE(ok(partition_segments(data.view(), counts, count_segs.view(), inner)));
  CHECK(inner.lengths() == counts);
  CHECK(inner.offsets() == std::vector<int64_t>{0, 2, 5, 5, 8, 8});
  counts[3] = 2;
  Status st = partition_segments(data.view(), counts, count_segs.view(), inner);
  CHECK(st.code == NDP_LENGTH_MISMATCH);
  CHECK(st.position == 2);
  CHECK(st.index == 2);
  CHECK(st.length == 3);
  counts[3] = 3;
  counts[4] = -1;
  counts[2] = 1;
  st = partition_segments(data.view(), counts, count_segs.view(), inner);
  CHECK(st.code == NDP_NEGATIVE_LENGTH);
  CHECK(st.position == 4);
}

TEST_CASE("segment ids and head flags") {
  std::vector<Shape> shapes = small_shapes();
  for (Shape& s : large_shapes()) shapes.push_back(std::move(s));
  for (const Shape& s : shapes) {
    CAPTURE(s.name);
    std::vector<int64_t> want_ids(s.total());
    std::vector<bool> want_heads(s.total(), false);
    for (int64_t k = 0; k < s.count(); ++k) {
      for (int64_t p = s.offsets[k]; p < s.offsets[k + 1]; ++p) want_ids[p] = k;
      if (s.lengths[k] > 0) want_heads[s.offsets[k]] = true;
    }
    for_each_tuning([&] {
      Vec<int64_t> ids(s.total());
      Vec<bool> heads(s.total());
      REQUIRE(ok(segment_ids(s.view(), ids)));
      CHECK(first_diff<int64_t>(ids.cspan(), want_ids) == -1);
      REQUIRE(ok(head_flags(s.view(), heads)));
      CHECK(first_diff<bool>(heads.cspan(), want_heads) == -1);
    });
  }
}

TEST_CASE("validate finds inconsistent irregular descriptors") {
  std::vector<int64_t> lens{1, 2, 3}, offs{0, 1, 4, 6};
  ndp_segdes d = ndp_segdes_irregular(3, lens.data(), offs.data());
  Status st = validate(d);
  CHECK(st.code == NDP_INVALID_ARGUMENT);
  CHECK(st.position == 1);
  offs[2] = 3;
  CHECK(ok(validate(d)));
}
