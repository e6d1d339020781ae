// GPU segmented scans, reductions and count_true against the CPU runtime, at every shape.
#include <cmath>
#include <limits>
#include <random>

#include "tests/unit/runtime/gpu/gpu_fixture.h"
#include "runtime/gpu/seg_scan_impl.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

namespace {

/// Every scan kind (out of place and in place) and the reduction of `in` over `s`, on the
/// device and on the CPU: the same statuses, and the same results bit for bit.
template <class T>
void check_scan_reduce(gpu::Primitives& p, Op op, const Shape& s, const Vec<T>& in) {
  CAPTURE(s.name);
  CAPTURE(static_cast<int>(op));
  constexpr ndp_elem_type et = elem_type_of<T>();
  DShape ds(p, s);
  DArray<T> din(p, in.cspan());
  for (ScanKind kind : {ScanKind::exclusive, ScanKind::inclusive}) {
    bool inclusive = kind == ScanKind::inclusive;
    CAPTURE(inclusive);
    Vec<T> want(s.total());
    Status cpu = seg_scan<T>(op, kind, in, s.view(), want);
    DArray<T> out(p, s.total());
    auto got = p.seg_scan(static_cast<ndp_op>(op), inclusive, et, din.ptr(), ds.segs, out.ptr());
    REQUIRE_MESSAGE(got.ok(), got.status().message());
    check_same_status(got.value(), cpu);
    if (!ok(cpu)) continue;
    CHECK(first_diff<T>(out.host(p).cspan(), want) == -1);
    DArray<T> io(p, in.cspan());  // in place
    auto got_io = p.seg_scan(static_cast<ndp_op>(op), inclusive, et, io.ptr(), ds.segs, io.ptr());
    REQUIRE_MESSAGE(got_io.ok(), got_io.status().message());
    CHECK(got_io.value().code == NDP_OK);
    CHECK(first_diff<T>(io.host(p).cspan(), want) == -1);
  }
  Vec<T> want(s.count());
  Status cpu = seg_reduce<T>(op, in, s.view(), want);
  DArray<T> out(p, s.count());
  auto got = p.seg_reduce(static_cast<ndp_op>(op), et, din.ptr(), ds.segs, out.ptr());
  REQUIRE_MESSAGE(got.ok(), got.status().message());
  check_same_status(got.value(), cpu);
  if (ok(cpu)) CHECK(first_diff<T>(out.host(p).cspan(), want) == -1);
}

template <class T>
Vec<T> values_for(Op op, int64_t n, uint64_t seed) {
  // Products of values in {-1, 0, 1} stay exact for floats; small integers keep sums exact.
  return op == Op::mult ? random_values<T>(n, seed, -1, 1) : random_values<T>(n, seed);
}

/// Shapes whose boundaries fall on, just before and just after the tiles (2048 elements of 8
/// bytes, 4096 of 4 or 1), with runs of empty segments at tile edges and long runs of empty
/// segments inside a tile.
std::vector<Shape> tile_edge_shapes() {
  std::vector<Shape> v;
  v.push_back(regular("regular 40 x 2048", 40, 2048));
  v.push_back(regular("regular 30 x 2047", 30, 2047));
  v.push_back(regular("regular 3000 x 1", 3000, 1));
  v.push_back(irregular("2047, 1, 2048, 2049, 1", {2047, 1, 2048, 2049, 1}));
  v.push_back(regular("regular 20 x 4096", 20, 4096));
  v.push_back(regular("regular 15 x 4095", 15, 4095));
  v.push_back(irregular("4095, 1, 4096, 4097, 1, 0, 8191", {4095, 1, 4096, 4097, 1, 0, 8191}));
  // The scans' tiles (ScanShape, Note [Scan tile shape]): 5120 elements of 8 bytes, 8192 of 4.
  v.push_back(regular("regular 7 x 5120", 7, 5120));
  v.push_back(irregular("5119, 1, 5120, 5121, 0, 10239", {5119, 1, 5120, 5121, 0, 10239}));
  v.push_back(regular("regular 5 x 8192", 5, 8192));
  v.push_back(regular("flat 2 x 5120", 1, 10240));
  v.push_back(regular("flat 3 x 8192 + 1", 1, 3 * 8192 + 1));
  v.push_back(regular("regular 4 x 8191", 4, 8191));
  v.push_back(irregular("8191, 1, 8192, 8193, 0, 16383", {8191, 1, 8192, 8193, 0, 16383}));
  std::vector<int64_t> l;
  for (int i = 0; i < 6; ++i) {
    l.push_back(2048);
    l.insert(l.end(), 5, 0);
  }
  v.push_back(irregular("tiles of 2048 with empty segments between", l));
  std::vector<int64_t> m(200'000, 0);
  m[3] = 5;
  m[100'000] = 4000;
  m[150'000] = 1;
  m[199'999] = 3;
  v.push_back(irregular("200000 segments, mostly empty", m));
  std::vector<int64_t> w;  // segments spanning several tiles, with empty ones at tile edges
  for (int i = 0; i < 5; ++i) {
    w.push_back(3 * 4096 + 1);
    w.insert(w.end(), 3, 0);
  }
  v.push_back(irregular("segments over several tiles with empty segments between", w));
  v.push_back(irregular("empty segments leading and trailing, several tiles", {0, 0, 0, 5000, 0, 0, 3000, 0}));
  // Short segments of many lengths around a warp's 32 elements with empty ones between, and
  // one long segment among short ones.
  std::vector<int64_t> q;
  for (int i = 0; i < 700; ++i)
    for (int64_t len : {31, 32, 33, 0, 1, 63, 64, 65, 5, 0, 0, 7, 511, 0}) q.push_back(len);
  q.push_back(2);
  v.push_back(irregular("short segments across the warps' windows", q));
  std::vector<int64_t> r(20'001);
  for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<int64_t>((i * 7919) % 21);
  r[12'345] = 300'000;
  v.push_back(irregular("one long segment among short ones", r));
  return v;
}

/// The scans and the reduction of `in` over `s` with the input and the outputs `shift` elements
/// past their allocations' (aligned) starts: the 16-byte words of whole tiles do not apply, and
/// the flat reduction has an unaligned head and tail.
template <class T>
void check_unaligned(gpu::Primitives& p, Op op, const Shape& s, const Vec<T>& in, int64_t shift) {
  CAPTURE(s.name);
  CAPTURE(shift);
  CAPTURE(static_cast<int>(op));
  constexpr ndp_elem_type et = elem_type_of<T>();
  const int64_t n = s.total();
  const cuda::CUdeviceptr offset = static_cast<cuda::CUdeviceptr>(shift) * sizeof(T);
  DShape ds(p, s);
  Vec<T> shifted(n + shift);
  for (int64_t i = 0; i < n; ++i) shifted[shift + i] = in[i];
  DArray<T> din(p, shifted.cspan());
  for (ScanKind kind : {ScanKind::exclusive, ScanKind::inclusive}) {
    bool inclusive = kind == ScanKind::inclusive;
    CAPTURE(inclusive);
    Vec<T> want(n);
    REQUIRE(ok(seg_scan<T>(op, kind, in, s.view(), want)));
    DArray<T> out(p, n + shift);
    auto got = p.seg_scan(static_cast<ndp_op>(op), inclusive, et, din.ptr() + offset, ds.segs, out.ptr() + offset);
    REQUIRE_MESSAGE(got.ok(), got.status().message());
    CHECK(got.value().code == NDP_OK);
    Vec<T> host = out.host(p);
    CHECK(first_diff<T>(host.cspan().subspan(static_cast<size_t>(shift)), want) == -1);
  }
  Vec<T> want(s.count());
  REQUIRE(ok(seg_reduce<T>(op, in, s.view(), want)));
  DArray<T> out(p, s.count() + shift);
  auto got = p.seg_reduce(static_cast<ndp_op>(op), et, din.ptr() + offset, ds.segs, out.ptr() + offset);
  REQUIRE_MESSAGE(got.ok(), got.status().message());
  CHECK(got.value().code == NDP_OK);
  Vec<T> host = out.host(p);
  CHECK(first_diff<T>(host.cspan().subspan(static_cast<size_t>(shift)), want) == -1);
}

}  // namespace

TEST_CASE_TEMPLATE("gpu seg_scan and seg_reduce at unaligned addresses", T, int64_t, float, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  const Op op = std::is_same_v<T, uint8_t> ? Op::max : Op::plus;
  std::vector<Shape> shapes;
  shapes.push_back(regular("flat 100003", 1, 100'003));
  shapes.push_back(regular("flat 13", 1, 13));
  shapes.push_back(irregular("random lengths, several tiles", random_lengths(3000, 20, 0.2, 21)));
  uint64_t seed = 300;
  for (const Shape& s : shapes)
    for (int64_t shift : {1, 3, 7}) check_unaligned<T>(*p, op, s, values_for<T>(op, s.total(), seed++), shift);
}

TEST_CASE_TEMPLATE("gpu seg_scan and seg_reduce match the cpu runtime on small shapes", T, int64_t, double, int32_t,
                   float, bool, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 1;
  for (Op op : all_ops)
    for (const Shape& s : small_shapes()) check_scan_reduce<T>(*p, op, s, values_for<T>(op, s.total(), seed++));
}

TEST_CASE_TEMPLATE("gpu seg_scan and seg_reduce at tile edges", T, int64_t, float, bool, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 100;
  for (Op op : all_ops)
    for (const Shape& s : tile_edge_shapes()) check_scan_reduce<T>(*p, op, s, values_for<T>(op, s.total(), seed++));
}

TEST_CASE_TEMPLATE("gpu seg_scan and seg_reduce at large shapes", T, int64_t, double, int32_t, float, bool, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  std::vector<Op> ops;
  if constexpr (std::is_same_v<T, bool>) ops = {Op::xor_, Op::and_};
  else if constexpr (std::is_same_v<T, uint8_t>) ops = {Op::max, Op::min};
  else if constexpr (std::is_integral_v<T>) ops = {Op::plus, Op::mult, Op::min, Op::or_};
  else ops = {Op::plus, Op::max};
  for (const Shape& s : large_shapes())
    for (Op op : ops) check_scan_reduce<T>(*p, op, s, values_for<T>(op, s.total(), 99));
}

// Scans keep one look-back scratch from call to call (Note [Look-back epochs]): a record left
// by an earlier call, of the same tiles with other values, must never be read as this call's.
// Calls over many tiles, then few, then many, alternating types with one-word records (i32,
// f32) and two-word ones (i64, f64), with selections (which share the scratch) in between.
TEST_CASE("gpu scans reuse the look-back scratch across calls") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 400;
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    for (int64_t n : {int64_t{1'000'003}, int64_t{9'000}, int64_t{3'000'001}}) {
      CAPTURE(n);
      const Shape flat = regular("flat", 1, n);
      const Shape rows = irregular("random lengths", random_lengths(n / 20, 40, 0.1, seed));
      check_scan_reduce<int32_t>(*p, Op::plus, flat, values_for<int32_t>(Op::plus, n, seed++));
      check_scan_reduce<double>(*p, Op::plus, flat, values_for<double>(Op::plus, n, seed++));
      check_scan_reduce<float>(*p, Op::max, rows, values_for<float>(Op::max, rows.total(), seed++));
      check_scan_reduce<int64_t>(*p, Op::plus, rows, values_for<int64_t>(Op::plus, rows.total(), seed++));
      // A selection between the scans.
      Vec<float> v = random_values<float>(n, seed++);
      Vec<bool> flags = random_flags(n, 0.5, seed++);
      DArray<float> dv(*p, v.cspan());
      DArray<bool> df(*p, flags.cspan());
      check_pack_counted<float>(*p, dv, df, n, packed(v, flags));
    }
  }
}

// The fix-up of a segmented reduction works in chunks of 2048 tiles (Note [Segmented reduction
// fix-up]): 20 million elements are 5 chunks of 2048-element tiles and 3 of 4096, so segments
// cross chunks, and one spans them all.
TEST_CASE_TEMPLATE("gpu seg_reduce fix-up across chunks of tiles (large)", T, int64_t, float) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  std::vector<Shape> shapes;
  shapes.push_back(irregular("1, 20000000, 2", {1, 20'000'000, 2}));
  shapes.push_back(irregular("random lengths up to 10000", random_lengths(4000, 10'000, 0.1, 21)));
  shapes.push_back(regular("regular 3 x 7000001", 3, 7'000'001));
  uint64_t seed = 300;
  for (const Shape& s : shapes)
    for (Op op : {Op::plus, Op::max}) check_scan_reduce<T>(*p, op, s, values_for<T>(op, s.total(), seed++));
}

// The near fix-up walks back up to 8 rounds of 32 tiles and leaves longer runs to the chunked
// scan (Note [Segmented reduction fix-up]): segments spanning about k tiles of 2048 and 4096
// elements, k on both sides of 1, 32, 64, 128 and 256, the first from element 0, with short and
// empty segments between, three times over so that the tiles make more than one chunk.
TEST_CASE_TEMPLATE("gpu seg_reduce near fix-up and the chunked scan in one call", T, int64_t, double, float) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  std::vector<int64_t> lengths;
  for (int round = 0; round < 3; ++round)
    for (int64_t k : {260, 1, 2, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 258, 0})
      for (int64_t len : {k * 2048 + 1, int64_t{3}, int64_t{0}, int64_t{5}}) lengths.push_back(len);
  const Shape s = irregular("runs of tiles on both sides of the near walk's reach", lengths);
  uint64_t seed = 500;
  for (Op op : {Op::plus, Op::max}) check_scan_reduce<T>(*p, op, s, values_for<T>(op, s.total(), seed++));
}

TEST_CASE_TEMPLATE("gpu scan and reduce max/min keep numbers over NaN and the leftmost of equals", T, double, float) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  constexpr T inf = std::numeric_limits<T>::infinity();
  const T specials[] = {std::numeric_limits<T>::quiet_NaN(), -std::numeric_limits<T>::quiet_NaN(), T(-0.0), T(0.0),
                        T(1), T(-1), inf, -inf, T(2)};
  std::vector<Shape> shapes = small_shapes();
  for (Shape& s : tile_edge_shapes()) shapes.push_back(std::move(s));
  shapes.push_back(irregular("one huge segment", {2'000'003}));
  std::mt19937_64 rng(5);
  for (const Shape& s : shapes) {
    Vec<T> in(s.total());
    for (int64_t i = 0; i < s.total(); ++i) in[i] = specials[rng() % std::size(specials)];
    for (Op op : {Op::max, Op::min}) check_scan_reduce<T>(*p, op, s, in);
    // only NaNs and zeros: the identity must survive NaNs, the first zero must win
    Vec<T> z(s.total());
    for (int64_t i = 0; i < s.total(); ++i) z[i] = specials[rng() % 4];
    for (Op op : {Op::max, Op::min}) check_scan_reduce<T>(*p, op, s, z);
  }
}

TEST_CASE("gpu scan and reduce refuse operators an element type does not admit") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  DArray<double> d(*p, 3);
  DArray<double> out(*p, 3);
  auto r = p->seg_scan(NDP_OP_AND, false, NDP_F64, d.ptr(), gpu::DSegs::flat(3), out.ptr());
  REQUIRE(r.ok());
  CHECK(r.value().code == NDP_UNSUPPORTED);
  r = p->seg_reduce(NDP_OP_PLUS, NDP_BOOL, d.ptr(), gpu::DSegs::flat(3), out.ptr());
  REQUIRE(r.ok());
  CHECK(r.value().code == NDP_UNSUPPORTED);
  r = p->seg_reduce(NDP_OP_XOR, NDP_CHAR, d.ptr(), gpu::DSegs::flat(3), out.ptr());
  REQUIRE(r.ok());
  CHECK(r.value().code == NDP_UNSUPPORTED);
  r = p->seg_scan(static_cast<ndp_op>(99), true, NDP_I64, d.ptr(), gpu::DSegs::flat(3), out.ptr());
  REQUIRE(r.ok());
  CHECK(r.value().code == NDP_INVALID_ARGUMENT);
}

TEST_CASE("gpu count_true counts the true flags") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  // Up to 4096 flags the host adds up a copy of them (Note [Few flags counted where they
  // arrive]); up to 2^16 one block counts them and stores its sum; past that the blocks add
  // theirs into a zeroed word. Without the small-input paths, the block counts small ones too.
  for (bool small_paths : {true, false}) {
    for (int64_t n : {0, 1, 2047, 2048, 2049, 4095, 4096, 4097, 65'535, 65'536, 65'537, 100'003, 3'000'001}) {
      for (double share : {0.0, 0.3, 1.0}) {
        SmallInputsInOneLaunch paths(*p, small_paths);
        CAPTURE(small_paths);
        CAPTURE(n);
        CAPTURE(share);
        std::mt19937_64 rng(n);
        std::bernoulli_distribution d(share);
        Vec<bool> flags(n);
        int64_t want = 0;
        for (int64_t i = 0; i < n; ++i) want += flags[i] = d(rng);
        DArray<bool> df(*p, flags.cspan());
        auto got = p->count_true(df.ptr(), n);
        REQUIRE_MESSAGE(got.ok(), got.status().message());
        CHECK(got.value() == want);
      }
    }
  }
}

// The tile-bounds table (Note [Guided tile-bounds search] in device/thread/boundaries.cuh), by
// search and by segment, against a host search at every tile: offsets that grow evenly (the
// guesses end the search), unevenly (power-law lengths), in jumps between long flat stretches
// (empty segments around a few huge ones, where a guess lands far off), and over more than 2^21
// segments (the search whatever the tile).
TEST_CASE("gpu tile-bounds table matches a host search over even and uneven offsets") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  std::mt19937_64 rng(77);
  std::vector<Shape> shapes;
  shapes.push_back(irregular("lengths of 32", std::vector<int64_t>(100'000, 32)));
  shapes.push_back(irregular("random lengths with zeros", random_lengths(150'000, 63, 0.2, 5)));
  std::vector<int64_t> power(200'000);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int64_t& l : power) l = std::min<int64_t>(static_cast<int64_t>(1.0 / (u(rng) + 1e-7)) - 1, 3'000'000);
  shapes.push_back(irregular("power-law lengths", power));
  std::vector<int64_t> jumps;
  for (int round = 0; round < 3; ++round) {
    jumps.insert(jumps.end(), 60'000, 0);
    jumps.push_back(1'500'000);
    jumps.insert(jumps.end(), 40'000, 1);
    jumps.push_back(700'001);
  }
  jumps.insert(jumps.end(), 50'000, 0);
  shapes.push_back(irregular("empty stretches around huge segments", jumps));
  shapes.push_back(irregular("more than 2^21 segments", random_lengths(2'300'000, 3, 0.3, 9)));
  shapes.push_back(irregular("six segments, two empty", {3, 0, 5, 1, 0, 7}));
  shapes.push_back(irregular("five equal segments", {2, 2, 2, 2, 2}));
  for (const Shape& s : shapes) {
    CAPTURE(s.name);
    DShape ds(*p, s);
    for (int64_t tile : {int64_t{1}, int64_t{7}, int64_t{2048}, int64_t{4096}, int64_t{100'003}}) {
      CAPTURE(tile);
      cuda::DeviceBuffer bounds;
      REQUIRE(gpu::detail::tile_bounds(*p, ds.segs, tile, bounds).ok());
      const int64_t ntiles = (s.total() + tile - 1) / tile;
      std::vector<int64_t> got(static_cast<size_t>(ntiles + 1));
      REQUIRE(p->pool().copy_to_host(got.data(), bounds, got.size() * sizeof(int64_t)).ok());
      int64_t wrong = -1;
      for (int64_t t = 0; t <= ntiles && wrong < 0; ++t) {
        const int64_t x = std::min(t * tile, s.total());
        const int64_t want = std::upper_bound(s.offsets.begin(), s.offsets.end(), x) - s.offsets.begin();
        if (got[static_cast<size_t>(t)] != want) wrong = t;
      }
      CHECK(wrong == -1);
    }
  }
}

namespace {

/// seg_index_of_extreme of `in` over `s` on the device and on the CPU: the same positions.
template <class T>
void check_index_of_extreme(gpu::Primitives& p, const Shape& s, const Vec<T>& in) {
  CAPTURE(s.name);
  DShape ds(p, s);
  DArray<T> din(p, in.cspan());
  for (Op op : {Op::max, Op::min}) {
    CAPTURE(static_cast<int>(op));
    Vec<int64_t> want(s.count());
    REQUIRE(ok(seg_index_of_extreme<T>(op, in, s.view(), want)));
    // Small inputs take a block a segment (Note [Small inputs in one launch]); both paths.
    for (bool one_launch : {true, false}) {
      CAPTURE(one_launch);
      SmallInputsInOneLaunch paths(p, one_launch);
      DArray<int64_t> out(p, s.count());
      auto got = p.seg_index_of_extreme(static_cast<ndp_op>(op), elem_type_of<T>(), din.ptr(), ds.segs, out.ptr());
      REQUIRE_MESSAGE(got.ok(), got.status().message());
      CHECK(got.value().code == NDP_OK);
      CHECK(first_diff<int64_t>(out.host(p).cspan(), want) == -1);
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE("gpu seg_index_of_extreme matches the cpu runtime", T, int64_t, double, int32_t, float, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  std::vector<Shape> shapes = small_shapes();
  for (Shape& s : tile_edge_shapes()) shapes.push_back(std::move(s));
  for (Shape& s : large_shapes()) shapes.push_back(std::move(s));
  // Either side of the one-launch path's bounds: 4096 elements a segment on average, 2^16 in all.
  shapes.push_back(irregular("one segment of 4096", {4096}));
  shapes.push_back(irregular("one segment of 4097", {4097}));
  shapes.push_back(irregular("16 segments of 4096", std::vector<int64_t>(16, 4096)));
  std::vector<int64_t> past(16, 4096);
  past.push_back(1);
  shapes.push_back(irregular("16 segments of 4096 and one of 1", past));
  uint64_t seed = 700;
  // Few distinct values (ties in every tile, and tiles inside a segment holding the extreme many
  // times), then many (the extreme once a segment).
  for (const Shape& s : shapes) {
    check_index_of_extreme<T>(*p, s, random_values<T>(s.total(), seed++, -2, 2));
    check_index_of_extreme<T>(*p, s, random_values<T>(s.total(), seed++, -100, 100));
  }
}

TEST_CASE_TEMPLATE("gpu seg_index_of_extreme with NaNs and signed zeros", T, double, float) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  const T specials[] = {std::numeric_limits<T>::quiet_NaN(), T(-0.0), T(0.0), T(1), T(-1),
                        std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity()};
  std::vector<Shape> shapes = small_shapes();
  for (Shape& s : tile_edge_shapes()) shapes.push_back(std::move(s));
  std::mt19937_64 rng(9);
  for (const Shape& s : shapes) {
    Vec<T> in(s.total()), z(s.total());
    for (int64_t i = 0; i < s.total(); ++i) in[i] = specials[rng() % std::size(specials)];
    for (int64_t i = 0; i < s.total(); ++i) z[i] = specials[rng() % 3];  // NaNs and zeros only
    check_index_of_extreme<T>(*p, s, in);
    check_index_of_extreme<T>(*p, s, z);
  }
}

TEST_CASE("gpu seg_index_of_extreme refuses bool and operators other than max and min") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  DArray<int64_t> d(*p, 3), out(*p, 1);
  auto r = p->seg_index_of_extreme(NDP_OP_MAX, NDP_BOOL, d.ptr(), gpu::DSegs::flat(3), out.ptr());
  REQUIRE(r.ok());
  CHECK(r.value().code == NDP_UNSUPPORTED);
  r = p->seg_index_of_extreme(NDP_OP_PLUS, NDP_I64, d.ptr(), gpu::DSegs::flat(3), out.ptr());
  REQUIRE(r.ok());
  CHECK(r.value().code == NDP_UNSUPPORTED);
}
