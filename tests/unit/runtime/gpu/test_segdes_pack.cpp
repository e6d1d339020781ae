// GPU descriptor functions (offsets_from_lengths, segment_ids, segment_ranks, lengths_of,
// partition_block) and selection (pack_lengths, true_positions, pack) against the CPU runtime, at
// every shape.
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

TEST_CASE("gpu valid_offsets writes the offsets of valid lengths in one launch") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  std::vector<std::vector<int64_t>> cases = {{}, {0}, {7}, {3, 0, 5}};
  for (const Shape& s : all_shapes()) cases.push_back(s.lengths);
  for (const std::vector<int64_t>& lengths : cases) {
    CAPTURE(lengths.size());
    const int64_t n = static_cast<int64_t>(lengths.size());
    Vec<int64_t> want(n + 1);
    REQUIRE(ok(offsets_from_lengths(std::span<const int64_t>(lengths), want)));
    DArray<int64_t> dl(*p, std::span<const int64_t>(lengths)), out(*p, n + 1);  // out poisoned, its first entry too
    REQUIRE(p->valid_offsets(dl.ptr(), n, out.ptr()).ok());
    CHECK(first_diff<int64_t>(out.host(*p).cspan(), want) == -1);
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

TEST_CASE("gpu segment_ranks counts 0, 1, ... in every segment") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (const Shape& s : all_shapes()) {
    CAPTURE(s.name);
    DShape ds(*p, s);
    Vec<int64_t> ids(s.total()), want(s.total());
    REQUIRE(ok(segment_ids(s.view(), ids)));
    for (int64_t i = 0; i < s.total(); ++i) want[i] = i > 0 && ids[i] == ids[i - 1] ? want[i - 1] + 1 : 0;
    DArray<int64_t> ranks(*p, s.total());
    REQUIRE(p->segment_ranks(ds.segs, ranks.ptr()).ok());
    CHECK(first_diff<int64_t>(ranks.host(*p).cspan(), want) == -1);
  }
}

TEST_CASE("gpu partition_block cuts one sequence into pieces and records bad lengths") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  struct Case {
    std::vector<int64_t> lengths;
    int64_t total;
    int64_t failure;  // the lowest position recorded, or -1
  };
  std::vector<int64_t> many(3000);
  for (int64_t i = 0; i < 3000; ++i) many[i] = i % 7;
  int64_t many_total = 0;
  for (int64_t l : many) many_total += l;
  std::vector<int64_t> many_bad = many;
  many_bad[2500] = -1;
  const std::vector<Case> cases = {
      {{3, 0, 2}, 5, -1}, {{0}, 0, -1}, {{4}, 4, -1}, {many, many_total, -1},
      {{3, 0, 1}, 5, 3},     // the sum short of the elements: recorded at m
      {{3, 4}, 5, 2},        // past them
      {{3, -1, 3}, 5, 1},    // a negative length, whatever the sum
      {{9, 0}, 5, 0},        // a piece longer than the sequence
      {many_bad, many_total, 2500},
  };
  for (const Case& c : cases) {
    CAPTURE(c.lengths.size());
    CAPTURE(c.total);
    const int64_t m = static_cast<int64_t>(c.lengths.size());
    REQUIRE(p->partition_fits_one_block(m));
    std::vector<int64_t> no_failure = {-1};
    DArray<int64_t> dl(*p, std::span<const int64_t>(c.lengths)), off(*p, m + 1), len(*p, m),
        word(*p, std::span<const int64_t>(no_failure));
    REQUIRE(p->partition_block(dl.ptr(), m, c.total, off.ptr(), len.ptr(), word.ptr()).ok());
    CHECK(word.host(*p)[0] == c.failure);
    // The pieces stay inside the elements, and are the lengths' where those are valid.
    Vec<int64_t> o = off.host(*p), l = len.host(*p);
    int64_t at = 0;
    CHECK(o[0] == 0);
    for (int64_t j = 0; j < m; ++j) {
      CHECK(o[j] + l[j] == o[j + 1]);
      CHECK((l[j] >= 0 && o[j + 1] <= c.total));
      if (c.failure < 0) CHECK((o[j] == at && l[j] == c.lengths[j]));
      at += c.lengths[j];
    }
  }
  CHECK(!p->partition_fits_one_block(0));
  CHECK(!p->partition_fits_one_block(100'000));
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

      // The positions and counts from one pass and the positions' bounds (Note [Counts from the
      // kept positions]), with the offsets of the counts; every output fresh, poisoned. The
      // pass before counted other flags, so a count left over from it would show.
      Vec<bool> others = random_flags(s.total(), 0.3, seed + 1000);
      DArray<bool> dothers(*p, others.cspan());
      DArray<int64_t> other_pos(*p, std::max<int64_t>(s.total(), 1));
      if (s.total() > 0) REQUIRE(p->pack_counted(NDP_BOOL, dothers.ptr(), dothers.ptr(), s.total(), other_pos.ptr()).ok());
      std::vector<int64_t> want_off(static_cast<size_t>(s.count()) + 1, 0);
      for (int64_t k = 0; k < s.count(); ++k) want_off[static_cast<size_t>(k + 1)] = want_off[static_cast<size_t>(k)] + want[k];
      DArray<int64_t> counted_pos(*p, std::max<int64_t>(s.total(), 1)), counts(*p, s.count()), offsets(*p, s.count() + 1);
      REQUIRE(p->true_positions_counted(df.ptr(), ds.segs, counted_pos.ptr(), counts.ptr(), offsets.ptr()).ok());
      CHECK(first_diff<int64_t>(counts.host(*p).cspan(), want) == -1);
      CHECK(first_diff<int64_t>(offsets.host(*p).cspan(), want_off) == -1);
      Vec<int64_t> got_pos = counted_pos.host(*p);
      CHECK(first_diff<int64_t>(got_pos.cspan().first(static_cast<size_t>(want_total)), want_pos) == -1);

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

// Note [Partitions]: three predicates (one of them also a pack's of 4-byte and 1-byte
// columns), every column's pack and every predicate's offsets and counts per segment, at every
// shape; the tiles are 4096 elements and the chunks 32.
TEST_CASE("gpu partition packs and counts several predicates in one pass") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 91;
  for (const Shape& s : all_shapes()) {
    for (double share : {0.0, 0.3, 1.0}) {
      CAPTURE(s.name);
      CAPTURE(share);
      const int64_t n = s.total();
      constexpr int kPreds = 3;
      Vec<bool> flags[kPreds] = {random_flags(n, share, seed++), random_flags(n, 0.5, seed++),
                                 random_flags(n, 1.0 - share, seed++)};
      Vec<int64_t> v64 = random_values<int64_t>(n, seed++, -1000, 1000);
      Vec<float> v32 = random_values<float>(n, seed++, -1000, 1000);
      Vec<uint8_t> v8 = random_values<uint8_t>(n, seed++, 0, 200);
      std::vector<DArray<bool>> df;
      gpu::PartitionFlags pf;
      pf.count = kPreds;
      for (int k = 0; k < kPreds; ++k) {
        df.emplace_back(*p, flags[k].cspan());
        pf.of[k] = reinterpret_cast<const unsigned char*>(df.back().ptr());
      }
      DArray<int64_t> bases(*p, gpu::partition_bases_words(n, kPreds));
      int64_t totals[gpu::PartitionFlags::kMost] = {-1, -1, -1, -1};
      REQUIRE(p->partition_totals(pf, n, bases.ptr(), totals).ok());
      for (int k = 0; k < kPreds; ++k) {
        int64_t want = 0;
        for (int64_t i = 0; i < n; ++i) want += flags[k][i];
        CHECK(totals[k] == want);
      }
      // Without the read-back (counts known to the caller): the same bases.
      DArray<int64_t> unread(*p, gpu::partition_bases_words(n, kPreds));
      REQUIRE(p->partition_totals(pf, n, unread.ptr(), nullptr).ok());
      if (n > 0) CHECK(first_diff<int64_t>(unread.host(*p).cspan(), bases.host(*p)) == -1);
      // Columns: v64 by predicates 0, 1 and 2; v32 and v8 by predicate 2.
      DArray<int64_t> d64(*p, v64.cspan());
      DArray<float> d32(*p, v32.cspan());
      DArray<uint8_t> d8(*p, v8.cspan());
      std::vector<DArray<int64_t>> out64;
      for (int k = 0; k < kPreds; ++k) out64.emplace_back(*p, totals[k]);
      DArray<float> out32(*p, totals[2]);
      DArray<uint8_t> out8(*p, totals[2]);
      gpu::PartitionColumns pc;
      auto column = [&](int k, int bytes, cuda::CUdeviceptr src, cuda::CUdeviceptr dst) {
        pc.predicate[pc.count] = k;
        pc.bytes[pc.count] = bytes;
        pc.src[pc.count] = reinterpret_cast<const void*>(src);
        pc.dst[pc.count] = reinterpret_cast<void*>(dst);
        ++pc.count;
      };
      for (int k = 0; k < kPreds; ++k) column(k, 8, d64.ptr(), out64[k].ptr());
      column(2, 4, d32.ptr(), out32.ptr());
      column(2, 1, d8.ptr(), out8.ptr());
      DShape ds(*p, s);
      std::vector<DArray<int64_t>> offsets, counts;
      gpu::PartitionSegments ps;
      for (int k = 0; k < kPreds; ++k) {
        offsets.emplace_back(*p, s.count() + 1);
        counts.emplace_back(*p, s.count());
      }
      for (int k = 0; k < kPreds; ++k) {
        ps.offsets[k] = reinterpret_cast<int64_t*>(offsets[k].ptr());
        ps.counts[k] = k == 1 ? nullptr : reinterpret_cast<int64_t*>(counts[k].ptr());  // not wanted: not written
      }
      REQUIRE(p->partition_scatter(pf, pc, n, bases.ptr(), ds.segs, ps).ok());
      for (int k = 0; k < kPreds; ++k) {
        CAPTURE(k);
        CHECK(first_diff<int64_t>(out64[k].host(*p).cspan(), packed(v64, flags[k])) == -1);
        Vec<int64_t> want_counts(s.count()), want_offsets(s.count() + 1);
        int64_t total = 0;
        REQUIRE(ok(pack_lengths(flags[k], s.view(), want_counts, &total)));
        want_offsets[0] = 0;
        for (int64_t i = 0; i < s.count(); ++i) want_offsets[i + 1] = want_offsets[i] + want_counts[i];
        CHECK(first_diff<int64_t>(offsets[k].host(*p).cspan(), want_offsets) == -1);
        if (k != 1) CHECK(first_diff<int64_t>(counts[k].host(*p).cspan(), want_counts) == -1);
      }
      CHECK(first_diff<float>(out32.host(*p).cspan(), packed(v32, flags[2])) == -1);
      CHECK(first_diff<uint8_t>(out8.host(*p).cspan(), packed(v8, flags[2])) == -1);
    }
  }
}
