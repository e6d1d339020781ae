// GPU descriptor functions (offsets_from_lengths, segment_ids, lengths_of) and selection
// (pack_lengths, true_positions, pack) against the CPU runtime, at every shape.
#include <random>

#include "tests/unit/runtime/gpu/gpu_fixture.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

namespace {

std::vector<Shape> all_shapes() {
  std::vector<Shape> shapes = small_shapes();
  for (Shape& s : large_shapes()) shapes.push_back(std::move(s));
  shapes.push_back(regular("regular 40 x 2048", 40, 2048));
  shapes.push_back(irregular("2047, 1, 2048, 2049, 1", {2047, 1, 2048, 2049, 1}));
  std::vector<int64_t> m(200'000, 0);
  m[3] = 5;
  m[100'000] = 4000;
  m[199'999] = 3;
  shapes.push_back(irregular("200000 segments, mostly empty", m));
  return shapes;
}

void check_offsets(gpu::Primitives& p, std::span<const int64_t> lengths) {
  int64_t n = static_cast<int64_t>(lengths.size());
  Vec<int64_t> want(n + 1);
  Status cpu = offsets_from_lengths(lengths, want);
  DArray<int64_t> dl(p, lengths), out(p, n + 1);
  int64_t total = -12345;
  auto got = p.offsets_from_lengths(dl.ptr(), n, out.ptr(), &total);
  REQUIRE_MESSAGE(got.ok(), got.status().message());
  CHECK(got.value().code == cpu.code);
  CHECK(got.value().position == cpu.position);
  CHECK(got.value().index == cpu.index);
  CHECK(got.value().length == cpu.length);
  if (!ok(cpu)) return;
  CHECK(first_diff<int64_t>(out.host(p).cspan(), want) == -1);
  CHECK(total == want[n]);
}

}  // namespace

TEST_CASE("gpu offsets_from_lengths matches the cpu runtime") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (const Shape& s : all_shapes()) {
    CAPTURE(s.name);
    check_offsets(*p, s.lengths);
  }
  SUBCASE("negative lengths: the lowest position, with its value") {
    check_offsets(*p, std::vector<int64_t>{-1});
    check_offsets(*p, std::vector<int64_t>{3, -2, 5, -7});
    std::vector<int64_t> big = random_lengths(1'000'000, 30, 0.25, 3);
    big[900'001] = -4;
    big[700'000] = -9;
    big[999'999] = -1;
    check_offsets(*p, big);
    std::vector<int64_t> many(100'000, -3);
    for (int64_t i = 0; i < 4097; ++i) many[i] = i % 5;
    check_offsets(*p, many);
    // After a failure the failure word is armed again (Note [Armed failure words]): valid
    // lengths that follow report no failure.
    check_offsets(*p, std::vector<int64_t>{2, 0, 3});
  }
}

TEST_CASE("gpu segment_ids and lengths_of match the cpu runtime") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (const Shape& s : all_shapes()) {
    CAPTURE(s.name);
    DShape ds(*p, s);
    Vec<int64_t> want_ids(s.total()), want_lengths(s.count());
    REQUIRE(ok(segment_ids(s.view(), want_ids)));
    REQUIRE(ok(lengths_of(s.view(), want_lengths)));
    DArray<int64_t> ids(*p, s.total()), lengths(*p, s.count());
    REQUIRE(p->segment_ids(ds.segs, ids.ptr()).ok());
    REQUIRE(p->lengths_of(ds.segs, lengths.ptr()).ok());
    CHECK(first_diff<int64_t>(ids.host(*p).cspan(), want_ids) == -1);
    CHECK(first_diff<int64_t>(lengths.host(*p).cspan(), want_lengths) == -1);
  }
}

TEST_CASE("gpu pack_lengths and true_positions match the cpu runtime") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 1;
  for (const Shape& s : all_shapes()) {
    for (double share : {0.0, 0.02, 0.5, 1.0}) {
      CAPTURE(s.name);
      CAPTURE(share);
      Vec<bool> flags = random_flags(s.total(), share, seed++);
      Vec<int64_t> want(s.count());
      int64_t want_total = -1;
      REQUIRE(ok(pack_lengths(flags, s.view(), want, &want_total)));
      DShape ds(*p, s);
      DArray<bool> df(*p, flags.cspan());
      DArray<int64_t> lengths(*p, s.count());
      int64_t total = -12345;
      REQUIRE(p->pack_lengths(df.ptr(), ds.segs, lengths.ptr(), &total).ok());
      CHECK(total == want_total);
      CHECK(first_diff<int64_t>(lengths.host(*p).cspan(), want) == -1);
      DArray<int64_t> lengths_only(*p, s.count());  // fresh, poisoned: the call must write it
      REQUIRE(p->pack_lengths(df.ptr(), ds.segs, lengths_only.ptr(), nullptr).ok());
      CHECK(first_diff<int64_t>(lengths_only.host(*p).cspan(), want) == -1);

      std::vector<int64_t> want_pos;
      for (int64_t i = 0; i < s.total(); ++i)
        if (flags[i]) want_pos.push_back(i);
      REQUIRE(static_cast<int64_t>(want_pos.size()) == want_total);
      DArray<int64_t> pos(*p, want_total);
      REQUIRE(p->true_positions(df.ptr(), s.total(), pos.ptr()).ok());
      CHECK(first_diff<int64_t>(pos.host(*p).cspan(), want_pos) == -1);
    }
  }
}

TEST_CASE_TEMPLATE("gpu pack matches the cpu runtime", T, int64_t, double, int32_t, float, bool, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 7;
  // The select pass's tiles are 4096 elements.
  for (int64_t n : {0, 1, 5, 2047, 2048, 2049, 4095, 4096, 4097, 100'003, 2'000'003}) {
    for (double share : {0.0, 0.1, 0.5, 1.0}) {
      CAPTURE(n);
      CAPTURE(share);
      Vec<T> v = random_values<T>(n, seed++, -100, 100);
      Vec<bool> flags = random_flags(n, share, seed++);
      const Vec<T> want = packed(v, flags);
      DArray<T> dv(*p, v.cspan()), out(*p, want.n);
      DArray<bool> df(*p, flags.cspan());
      REQUIRE(p->pack(elem_type_of<T>(), dv.ptr(), df.ptr(), n, out.ptr()).ok());
      CHECK(first_diff<T>(out.host(*p).cspan(), want) == -1);
      // The same with the count unknown: room for n, and the pass reports how many it kept.
      check_pack_counted<T>(*p, dv, df, n, want);
    }
  }
}
