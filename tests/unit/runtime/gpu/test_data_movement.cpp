// GPU EXTRACT, REPLACE, append (of two sequences and of a chain's parts), reverse and rotate,
// and the structural takes (nested takes, gather2, flatten's segments, merge's positions), against
// the CPU runtime or the host, at every shape.
#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <random>

#include "tests/unit/runtime/gpu/gpu_fixture.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

namespace {

std::vector<Shape> all_shapes() {
  std::vector<Shape> v = small_shapes();
  for (Shape& s : large_shapes()) v.push_back(std::move(s));
  return v;
}

/// One index per segment, in range where the segment is non-empty (0 for empty ones, which is
/// out of range there).
Vec<int64_t> per_segment_indices(const Shape& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Vec<int64_t> idx(s.count());
  for (int64_t k = 0; k < s.count(); ++k) idx[k] = s.lengths[k] > 0 ? static_cast<int64_t>(rng() % s.lengths[k]) : 0;
  return idx;
}

template <class T>
void check_extract_replace(gpu::Primitives& p, const Shape& s, const Vec<int64_t>& idx, uint64_t seed) {
  CAPTURE(s.name);
  constexpr ndp_elem_type et = elem_type_of<T>();
  Vec<T> v = random_values<T>(s.total(), seed);
  Vec<T> x = random_values<T>(s.count(), seed + 1);
  DShape ds(p, s);
  DArray<T> dv(p, v.cspan()), dx(p, x.cspan());
  DArray<int64_t> di(p, idx.cspan());
  {
    Vec<T> want(s.count());
    Status cpu = extract<T>(v, idx, s.view(), want);
    DArray<T> out(p, s.count());
    auto got = p.extract(et, dv.ptr(), di.ptr(), ds.segs, out.ptr());
    REQUIRE_MESSAGE(got.ok(), got.status().message());
    check_same_status(got.value(), cpu);
    if (ok(cpu)) CHECK(first_diff<T>(out.host(p).cspan(), want) == -1);
  }
  {
    Vec<T> want(s.total());
    Status cpu = replace<T>(v, idx, x, s.view(), want);
    DArray<T> out(p, s.total());
    auto got = p.replace(et, dv.ptr(), di.ptr(), dx.ptr(), ds.segs, out.ptr());
    REQUIRE_MESSAGE(got.ok(), got.status().message());
    check_same_status(got.value(), cpu);
    if (ok(cpu)) CHECK(first_diff<T>(out.host(p).cspan(), want) == -1);
    // In place: a failing call leaves v as it was.
    DArray<T> io(p, v.cspan());
    auto again = p.replace(et, io.ptr(), di.ptr(), dx.ptr(), ds.segs, io.ptr());
    REQUIRE_MESSAGE(again.ok(), again.status().message());
    check_same_status(again.value(), cpu);
    if (ok(cpu)) CHECK(first_diff<T>(io.host(p).cspan(), want) == -1);
    else CHECK(first_diff<T>(io.host(p).cspan(), v) == -1);
  }
}

template <class T>
void check_reverse_rotate(gpu::Primitives& p, const Shape& s, uint64_t seed) {
  CAPTURE(s.name);
  constexpr ndp_elem_type et = elem_type_of<T>();
  Vec<T> v = random_values<T>(s.total(), seed, -100, 100);
  DShape ds(p, s);
  DArray<T> dv(p, v.cspan());
  {
    Vec<T> want(s.total());
    REQUIRE(ok(reverse<T>(v, s.view(), want)));
    DArray<T> out(p, s.total());
    REQUIRE(p.reverse(et, dv.ptr(), ds.segs, out.ptr()).ok());
    CHECK(first_diff<T>(out.host(p).cspan(), want) == -1);
  }
  // Shifts of every size and sign, whole multiples of the length included.
  std::mt19937_64 rng(seed);
  Vec<int64_t> shift(s.count());
  for (int64_t k = 0; k < s.count(); ++k) {
    int64_t len = s.lengths[k];
    switch (rng() % 5) {
      case 0: shift[k] = static_cast<int64_t>(rng() % (len + 1)); break;
      case 1: shift[k] = -static_cast<int64_t>(rng() % (3 * len + 1)); break;
      case 2: shift[k] = 7 * len; break;
      case 3: shift[k] = static_cast<int64_t>(rng() >> 2); break;
      default: shift[k] = -static_cast<int64_t>(rng() >> 2); break;
    }
  }
  Vec<T> want(s.total());
  REQUIRE(ok(rotate<T>(v, shift, s.view(), want)));
  DArray<int64_t> dshift(p, shift.cspan());
  DArray<T> out(p, s.total());
  REQUIRE(p.rotate(et, dv.ptr(), dshift.ptr(), ds.segs, out.ptr()).ok());
  CHECK(first_diff<T>(out.host(p).cspan(), want) == -1);
}

template <class T>
void check_append(gpu::Primitives& p, const Shape& sa, const Shape& sb, uint64_t seed) {
  CAPTURE(sa.name);
  CAPTURE(sb.name);
  REQUIRE(sa.count() == sb.count());
  std::vector<int64_t> lengths(sa.count());
  REQUIRE(ok(append_lengths(sa.view(), sb.view(), lengths)));
  // The result shape: regular when both inputs are, as the CPU runtime would leave it.
  Shape so = sa.view().is_regular() && sb.view().is_regular()
                 ? regular("result", sa.count(), sa.view().regular_length() + sb.view().regular_length())
                 : irregular("result", lengths);
  Vec<T> a = random_values<T>(sa.total(), seed), b = random_values<T>(sb.total(), seed + 1);
  Vec<T> want(so.total());
  REQUIRE(ok(append<T>(a, sa.view(), b, sb.view(), so.view(), want)));
  DShape dsa(p, sa), dsb(p, sb), dso(p, so);
  DArray<T> da(p, a.cspan()), db(p, b.cspan()), out(p, so.total());
  REQUIRE(p.append(elem_type_of<T>(), da.ptr(), dsa.segs, db.ptr(), dsb.segs, dso.segs, out.ptr()).ok());
  CHECK(first_diff<T>(out.host(p).cspan(), want) == -1);
}

/// A shape with s's count and other lengths (k*7 mod 5, some zero).
Shape other_lengths(const Shape& s) {
  std::vector<int64_t> lengths(s.count());
  for (int64_t k = 0; k < s.count(); ++k) lengths[k] = (k * 7) % 5;
  return irregular("other lengths", lengths);
}

}  // namespace

TEST_CASE_TEMPLATE("gpu extract and replace match the cpu runtime", T, int64_t, double, int32_t, float, bool, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 60;
  for (const Shape& s : small_shapes()) {
    Vec<int64_t> idx = per_segment_indices(s, seed);
    check_extract_replace<T>(*p, s, idx, seed++);
  }
}

TEST_CASE("gpu extract and replace at large shapes and on bad indices") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (const Shape& s : large_shapes()) check_extract_replace<int64_t>(*p, s, per_segment_indices(s, 1), 2);
  for (const Shape& s : all_shapes()) {
    if (s.count() == 0) continue;
    // Empty segments already fail at index 0; spoil two more places in any case.
    Vec<int64_t> idx = per_segment_indices(s, 3);
    int64_t k1 = s.count() / 2, k2 = s.count() - 1;
    idx[k2] = -1;
    idx[k1] = s.lengths[k1];
    check_extract_replace<float>(*p, s, idx, 4);
    check_extract_replace<uint8_t>(*p, s, idx, 5);
  }
}

TEST_CASE_TEMPLATE("gpu reverse and rotate match the cpu runtime", T, int64_t, double, int32_t, float, bool, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 70;
  for (const Shape& s : small_shapes()) check_reverse_rotate<T>(*p, s, seed++);
}

TEST_CASE("gpu reverse and rotate at large shapes") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (const Shape& s : large_shapes()) {
    check_reverse_rotate<int64_t>(*p, s, 1);
    check_reverse_rotate<float>(*p, s, 2);
    check_reverse_rotate<uint8_t>(*p, s, 3);
  }
}

TEST_CASE_TEMPLATE("gpu append matches the cpu runtime", T, int64_t, double, int32_t, float, bool, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 80;
  for (const Shape& s : small_shapes()) {
    check_append<T>(*p, s, s, seed++);
    check_append<T>(*p, s, other_lengths(s), seed++);
    check_append<T>(*p, other_lengths(s), s, seed++);
  }
}

TEST_CASE("gpu append at large shapes") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (const Shape& s : large_shapes()) {
    check_append<int64_t>(*p, s, other_lengths(s), 1);
    check_append<bool>(*p, other_lengths(s), s, 2);
    check_append<int32_t>(*p, s, s, 3);
  }
}

/// append_many of parts of 8, 4 and 1 bytes in turn (`parts` of them: more than eight takes
/// two launches) against the cpu runtime's append of each.
void check_append_many(gpu::Primitives& p, const Shape& sa, const Shape& sb, int parts, uint64_t seed) {
  CAPTURE(sa.name);
  CAPTURE(sb.name);
  CAPTURE(parts);
  std::vector<int64_t> lengths(sa.count());
  REQUIRE(ok(append_lengths(sa.view(), sb.view(), lengths)));
  Shape so = irregular("result", lengths);
  DShape dsa(p, sa), dsb(p, sb), dso(p, so);
  std::vector<gpu::Primitives::AppendPart> job;
  std::vector<std::function<void()>> checks;
  std::vector<std::shared_ptr<void>> keep;
  auto add = [&]<class T>(T, uint64_t s) {
    auto a = std::make_shared<Vec<T>>(random_values<T>(sa.total(), s)), b = std::make_shared<Vec<T>>(random_values<T>(sb.total(), s + 1));
    auto want = std::make_shared<Vec<T>>(so.total());
    REQUIRE(ok(append<T>(*a, sa.view(), *b, sb.view(), so.view(), *want)));
    auto da = std::make_shared<DArray<T>>(p, a->cspan()), db = std::make_shared<DArray<T>>(p, b->cspan());
    auto out = std::make_shared<DArray<T>>(p, so.total());
    job.push_back({static_cast<int>(sizeof(T)), da->ptr(), db->ptr(), out->ptr()});
    keep.insert(keep.end(), {a, b, da, db});
    // Every second part reads a through positions, every fourth b too: the source reversed,
    // and each position the reversed one's.
    auto through = [&](const Vec<T>& v, cuda::CUdeviceptr& source, cuda::CUdeviceptr& index) {
      const int64_t n = v.size();
      auto reversed = std::make_shared<Vec<T>>(n);
      auto positions = std::make_shared<Vec<int64_t>>(n);
      for (int64_t i = 0; i < n; ++i) (*reversed)[n - 1 - i] = v[i], (*positions)[i] = n - 1 - i;
      auto dr = std::make_shared<DArray<T>>(p, reversed->cspan());
      auto dp = std::make_shared<DArray<int64_t>>(p, positions->cspan());
      source = dr->ptr();
      index = dp->ptr();
      keep.insert(keep.end(), {reversed, positions, dr, dp});
    };
    if (job.size() % 2 == 0) through(*a, job.back().a, job.back().a_index);
    if (job.size() % 4 == 0) through(*b, job.back().b, job.back().b_index);
    checks.push_back([&p, out, want] { CHECK(first_diff<T>(out->host(p).cspan(), *want) == -1); });
  };
  for (int k = 0; k < parts; ++k) {
    if (k % 3 == 0) add(int64_t{}, seed + 2 * k);
    else if (k % 3 == 1) add(int32_t{}, seed + 2 * k);
    else add(uint8_t{}, seed + 2 * k);
  }
  REQUIRE(p.append_many(job, dsa.segs, dsb.segs, dso.segs).ok());
  for (auto& c : checks) c();
}

TEST_CASE("gpu append_many appends parts of every size over the same segments") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 300;
  for (const Shape& s : small_shapes())
    for (int parts : {1, 3, 8, 10}) {
      check_append_many(*p, s, other_lengths(s), parts, seed++);
      check_append_many(*p, other_lengths(s), s, parts, seed++);
    }
  for (const Shape& s : large_shapes()) check_append_many(*p, s, other_lengths(s), 4, seed++);
}

TEST_CASE("gpu first_out_of_range finds the lowest index outside [0, bound)") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  auto first_bad = [&](const std::vector<int64_t>& idx, int64_t bound) {
    DArray<int64_t> d(*p, std::span<const int64_t>(idx));
    auto r = p->first_out_of_range(d.ptr(), static_cast<int64_t>(idx.size()), bound);
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    return r.value();
  };
  CHECK(first_bad({}, 0) == -1);
  CHECK(first_bad({0}, 0) == 0);
  CHECK(first_bad({0}, 1) == -1);
  CHECK(first_bad({2, 0, 1}, 3) == -1);
  CHECK(first_bad({2, 0, 3}, 3) == 2);
  CHECK(first_bad({2, -1, 3}, 3) == 1);
  // Millions of indices with failures late and early: the lowest position wins whichever
  // thread reports first.
  const int64_t n = 5'000'011;
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = (i * 7919) % 1000;
  CHECK(first_bad(idx, 1000) == -1);
  idx[static_cast<size_t>(n - 1)] = 1000;
  CHECK(first_bad(idx, 1000) == n - 1);
  idx[4'000'000] = std::numeric_limits<int64_t>::min();
  idx[123'457] = -5;
  CHECK(first_bad(idx, 1000) == 123'457);
}

// A take of nested sequences (the executor's take of a sequence DVec): new segment k is old
// segment idx[k]. nested_take moves flat elements in one pass; nested_take_positions gives
// their positions; both against the host at every shape, with segments taken in a random
// order, repeated and left out.
template <class T>
void check_nested_take(gpu::Primitives& p, const Shape& src, uint64_t seed) {
  CAPTURE(src.name);
  if (src.count() == 0) return;
  std::mt19937_64 rng(seed);
  const int64_t m = src.count();
  std::vector<int64_t> idx(static_cast<size_t>(m)), out_lengths;
  for (int64_t& i : idx) i = static_cast<int64_t>(rng() % static_cast<uint64_t>(m));
  for (int64_t i : idx) out_lengths.push_back(src.lengths[static_cast<size_t>(i)]);
  Shape out = irregular("taken", out_lengths);
  Vec<T> v = random_values<T>(src.total(), seed + 1);
  Vec<T> want(out.total());
  Vec<int64_t> want_pos(out.total());
  for (int64_t k = 0, q = 0; k < m; ++k)
    for (int64_t j = 0; j < out_lengths[static_cast<size_t>(k)]; ++j, ++q) {
      want_pos[q] = src.offsets[static_cast<size_t>(idx[static_cast<size_t>(k)])] + j;
      want[q] = v[want_pos[q]];
    }
  DArray<T> dv(p, v.cspan());
  DArray<int64_t> soff(p, std::span<const int64_t>(src.offsets)), di(p, std::span<const int64_t>(idx));
  DShape dout(p, out);
  DArray<T> got(p, out.total());
  DArray<int64_t> pos(p, out.total());
  REQUIRE(p.nested_take(static_cast<int>(sizeof(T)), dv.ptr(), soff.ptr(), di.ptr(), dout.segs, got.ptr()).ok());
  REQUIRE(p.nested_take_positions(soff.ptr(), di.ptr(), dout.segs, pos.ptr()).ok());
  Vec<T> g = got.host(p);
  Vec<int64_t> gp = pos.host(p);
  CHECK(std::equal(g.cspan().begin(), g.cspan().end(), want.cspan().begin()));
  CHECK(std::equal(gp.cspan().begin(), gp.cspan().end(), want_pos.cspan().begin()));
  // nested_take2: the same sequences as two vectors, a the first half and b the rest.
  const int64_t na = m / 2, b0 = src.offsets[static_cast<size_t>(na)];
  std::vector<int64_t> b_offsets;
  for (int64_t i = na; i <= m; ++i) b_offsets.push_back(src.offsets[static_cast<size_t>(i)] - b0);
  DArray<int64_t> boff(p, std::span<const int64_t>(b_offsets));
  DArray<T> got2(p, out.total());
  REQUIRE(p.nested_take2(static_cast<int>(sizeof(T)), dv.ptr(), soff.ptr(), na,
                         dv.ptr() + static_cast<cuda::CUdeviceptr>(b0) * sizeof(T), boff.ptr(), di.ptr(), dout.segs,
                         got2.ptr())
              .ok());
  Vec<T> g2 = got2.host(p);
  CHECK(std::equal(g2.cspan().begin(), g2.cspan().end(), want.cspan().begin()));
}

// An append chain's parts (the executor's Note [Append chains on the GPU]): instance k holds
// some of the inner sequences of `inner` (1 to 3, in order); the result of instance k is its
// sequence i[k], then segment k of `mid`, then its sequence j[k]. elt_segments finds the chosen
// sequences and checks their indices; append_parts_lengths and append_parts build the result.
template <class T>
void check_append_parts(gpu::Primitives& p, const Shape& inner, uint64_t seed) {
  CAPTURE(inner.name);
  std::mt19937_64 rng(seed);
  std::vector<int64_t> outer_off{0};  // instance k holds inner sequences [outer_off[k], outer_off[k+1])
  while (outer_off.back() < inner.count())
    outer_off.push_back(std::min<int64_t>(inner.count(), outer_off.back() + 1 + static_cast<int64_t>(rng() % 3)));
  const int64_t n = static_cast<int64_t>(outer_off.size()) - 1;
  std::vector<int64_t> i(n), j(n), mid_lengths(n);
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t held = static_cast<uint64_t>(outer_off[k + 1] - outer_off[k]);
    i[k] = static_cast<int64_t>(rng() % held);
    j[k] = static_cast<int64_t>(rng() % held);
    mid_lengths[k] = static_cast<int64_t>(rng() % 3);
  }
  Shape mid = irregular("mid", mid_lengths);
  Vec<T> v = random_values<T>(inner.total(), seed + 1), w = random_values<T>(mid.total(), seed + 2);
  // The host's answer.
  std::vector<int64_t> want_lengths(n);
  std::vector<T> want;
  for (int64_t k = 0; k < n; ++k) {
    auto copy = [&](const Vec<T>& from, int64_t b, int64_t e) {
      for (int64_t q = b; q < e; ++q) want.push_back(from[q]);
      want_lengths[k] += e - b;
    };
    const int64_t a = outer_off[k] + i[k], c = outer_off[k] + j[k];
    copy(v, inner.offsets[a], inner.offsets[a + 1]);
    copy(w, mid.offsets[k], mid.offsets[k + 1]);
    copy(v, inner.offsets[c], inner.offsets[c + 1]);
  }
  DArray<int64_t> douter(p, std::span<const int64_t>(outer_off)), dinner(p, std::span<const int64_t>(inner.offsets));
  DArray<int64_t> di(p, std::span<const int64_t>(i)), dj(p, std::span<const int64_t>(j));
  DArray<int64_t> si(p, n), li(p, n), sj(p, n), lj(p, n);
  auto first_bad_i = p.elt_segments(douter.ptr(), di.ptr(), dinner.ptr(), n, si.ptr(), li.ptr());
  auto first_bad_j = p.elt_segments(douter.ptr(), dj.ptr(), dinner.ptr(), n, sj.ptr(), lj.ptr());
  REQUIRE(first_bad_i.ok());
  REQUIRE(first_bad_j.ok());
  CHECK(first_bad_i.value() == -1);
  CHECK(first_bad_j.value() == -1);
  DArray<T> dv(p, v.cspan()), dw(p, w.cspan());
  DArray<int64_t> dmid_len(p, std::span<const int64_t>(mid.lengths)), dmid_off(p, std::span<const int64_t>(mid.offsets));
  gpu::Primitives::AppendParts parts;
  parts.count = 3;
  const cuda::CUdeviceptr data[3] = {dv.ptr(), dw.ptr(), dv.ptr()}, start[3] = {si.ptr(), dmid_off.ptr(), sj.ptr()},
                          length[3] = {li.ptr(), dmid_len.ptr(), lj.ptr()};
  for (int q = 0; q < 3; ++q) {
    parts.data[q] = data[q];
    parts.start[q] = start[q];
    parts.length[q] = length[q];
  }
  DArray<int64_t> lengths(p, n);
  REQUIRE(p.append_parts_lengths(parts, n, lengths.ptr()).ok());
  Vec<int64_t> got_lengths = lengths.host(p);
  CHECK(std::equal(got_lengths.cspan().begin(), got_lengths.cspan().end(), want_lengths.begin()));
  Shape out = irregular("result", want_lengths);
  DShape dout(p, out);
  DArray<T> got(p, out.total());
  REQUIRE(p.append_parts(elem_type_of<T>(), parts, dout.segs, got.ptr()).ok());
  Vec<T> g = got.host(p);
  CHECK(std::equal(g.cspan().begin(), g.cspan().end(), want.begin()));
}

TEST_CASE_TEMPLATE("gpu elt_segments and append_parts build an append chain", T, int64_t, float, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 90;
  for (const Shape& s : all_shapes()) check_append_parts<T>(*p, s, seed++);
  // Index checks: out of range high and negative; the lowest failing instance is reported.
  std::vector<int64_t> outer{0, 2, 3, 5}, inner{0, 1, 1, 4, 6, 9}, idx{1, 1, -1};
  DArray<int64_t> douter(*p, std::span<const int64_t>(outer)), dinner(*p, std::span<const int64_t>(inner));
  DArray<int64_t> di(*p, std::span<const int64_t>(idx)), start(*p, 3), length(*p, 3);
  auto bad = p->elt_segments(douter.ptr(), di.ptr(), dinner.ptr(), 3, start.ptr(), length.ptr());
  REQUIRE(bad.ok());
  CHECK(bad.value() == 1);
  idx = {1, 0, 1};
  DArray<int64_t> dgood(*p, std::span<const int64_t>(idx));
  bad = p->elt_segments(douter.ptr(), dgood.ptr(), dinner.ptr(), 3, start.ptr(), length.ptr());
  REQUIRE(bad.ok());
  CHECK(bad.value() == -1);
  Vec<int64_t> s = start.host(*p), l = length.host(*p);
  CHECK((std::vector<int64_t>(s.cspan().begin(), s.cspan().end()) == std::vector<int64_t>{1, 1, 6}));
  CHECK((std::vector<int64_t>(l.cspan().begin(), l.cspan().end()) == std::vector<int64_t>{0, 3, 3}));
  // A chain's kernels take 1 to kMaxAppendParts parts.
  gpu::Primitives::AppendParts none;
  CHECK(!p->append_parts_lengths(none, 3, length.ptr()).ok());
  none.count = gpu::Primitives::kMaxAppendParts + 1;
  const cuda::Status too_many = p->append_parts_lengths(none, 3, length.ptr());
  CHECK(!too_many.ok());
  CHECK(too_many.message().find(std::to_string(none.count) + " parts") != std::string::npos);
  CHECK(!p->append_parts(elem_type_of<T>(), none, gpu::DSegs::flat(0), 0).ok());
}

TEST_CASE_TEMPLATE("gpu nested_take and nested_take2 match the host", T, int64_t, float, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 7;
  for (const Shape& s : all_shapes()) check_nested_take<T>(*p, s, seed++);
}

namespace {

/// gather2 of every element of a ++ b, in a shuffled order with repeats, against the host.
template <class T>
void check_gather2(gpu::Primitives& p, int64_t na, int64_t nb, uint64_t seed) {
  CAPTURE(na);
  CAPTURE(nb);
  std::mt19937_64 rng(seed);
  Vec<T> a = random_values<T>(na, seed + 1), b = random_values<T>(nb, seed + 2);
  const int64_t n = na + nb;
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = rng() % 4 == 0 ? static_cast<int64_t>(rng() % n) : i;
  std::shuffle(idx.begin(), idx.end(), rng);
  DArray<T> da(p, a.cspan()), db(p, b.cspan()), out(p, n);
  DArray<int64_t> di(p, std::span<const int64_t>(idx));
  REQUIRE(p.gather2(static_cast<int>(sizeof(T)), da.ptr(), na, db.ptr(), di.ptr(), n, out.ptr()).ok());
  Vec<T> got = out.host(p);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = idx[static_cast<size_t>(i)];
    REQUIRE(got[i] == (j < na ? a[j] : b[j - na]));
  }
}

/// flatten_segments where the segments of `inner` are grouped into outer segments of 0 to 3
/// (irregular) or of `regular` each (where it is not 0), against the host.
void check_flatten_segments(gpu::Primitives& p, const Shape& inner, int64_t regular, uint64_t seed) {
  CAPTURE(inner.name);
  CAPTURE(regular);
  std::mt19937_64 rng(seed);
  std::vector<int64_t> outer_off{0};
  while (outer_off.back() < inner.count())
    outer_off.push_back(std::min<int64_t>(inner.count(), outer_off.back() + (regular ? regular : rng() % 4)));
  const int64_t n = static_cast<int64_t>(outer_off.size()) - 1;
  DArray<int64_t> inner_off(p, std::span<const int64_t>(inner.offsets)), ooff(p, std::span<const int64_t>(outer_off));
  const gpu::DSegs outer = regular ? gpu::DSegs{n, n * regular, 0, regular}
                                   : gpu::DSegs::irregular(n, inner.count(), ooff.ptr());
  DArray<int64_t> off(p, n + 1), len(p, std::max<int64_t>(n, 1));
  REQUIRE(p.flatten_segments(inner_off.ptr(), outer, off.ptr(), len.ptr()).ok());
  Vec<int64_t> got_off = off.host(p), got_len = len.host(p);
  for (int64_t i = 0; i <= n; ++i) {
    const int64_t first = inner.offsets[static_cast<size_t>(outer_off[static_cast<size_t>(i)])];
    REQUIRE(got_off[i] == first);
    if (i < n) REQUIRE(got_len[i] == inner.offsets[static_cast<size_t>(outer_off[static_cast<size_t>(i + 1)])] - first);
  }
}

/// merge_positions of n random flags (a fraction `trues` of them true) against the host.
void check_merge_positions(gpu::Primitives& p, int64_t n, double trues, uint64_t seed) {
  CAPTURE(n);
  CAPTURE(trues);
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> flags(static_cast<size_t>(n));
  for (uint8_t& f : flags) f = std::uniform_real_distribution<double>(0, 1)(rng) < trues;
  const int64_t na = std::count(flags.begin(), flags.end(), uint8_t{1});
  DArray<uint8_t> df(p, std::span<const uint8_t>(flags));
  DArray<int64_t> out(p, n);
  REQUIRE(p.merge_positions(df.ptr(), n, na, out.ptr()).ok());
  Vec<int64_t> got = out.host(p);
  for (int64_t i = 0, t = 0; i < n; ++i) {
    REQUIRE(got[i] == (flags[static_cast<size_t>(i)] ? t : na + (i - t)));
    t += flags[static_cast<size_t>(i)];
  }
}

}  // namespace

TEST_CASE_TEMPLATE("gpu gather2 reads a ++ b where they are", T, int64_t, float, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 40;
  for (auto [na, nb] : {std::pair<int64_t, int64_t>{1, 0}, {0, 1}, {3, 5}, {1000, 24}, {4097, 5000}, {300000, 700001}})
    check_gather2<T>(*p, na, nb, seed += 3);
}

TEST_CASE("gpu flatten_segments: each outer segment's inner sequences lie together") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 50;
  for (const Shape& s : all_shapes())
    for (int64_t regular : {0, 1, 2, 3})
      if (regular == 0 || s.count() % regular == 0) check_flatten_segments(*p, s, regular, seed++);
}

TEST_CASE("gpu merge_positions, in one block and in the general path, matches the host") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 60;
  for (bool one_launch : {true, false}) {
    CAPTURE(one_launch);
    SmallInputsInOneLaunch paths(*p, one_launch);
    for (int64_t n : {1, 2, 255, 256, 257, 1000, 4095, 4096, 4097, 100000})
      for (double trues : {0.0, 1.0, 0.5, 0.05}) check_merge_positions(*p, n, trues, seed++);
  }
}

namespace {

/// pack_rows_block of n random flags (a fraction `trues` true) and k random lengths vectors
/// against the host: the positions of the trues, each vector's kept lengths and their offsets.
void check_pack_rows_block(gpu::Primitives& p, int64_t n, int k, double trues, uint64_t seed) {
  CAPTURE(n);
  CAPTURE(k);
  CAPTURE(trues);
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> flags(static_cast<size_t>(n));
  for (uint8_t& f : flags) f = std::uniform_real_distribution<double>(0, 1)(rng) < trues;
  std::vector<int64_t> want_pos;
  for (int64_t i = 0; i < n; ++i)
    if (flags[static_cast<size_t>(i)]) want_pos.push_back(i);
  const int64_t kept = static_cast<int64_t>(want_pos.size());
  DArray<uint8_t> df(p, std::span<const uint8_t>(flags));
  std::vector<std::vector<int64_t>> lengths(static_cast<size_t>(k));
  std::vector<DArray<int64_t>> dl, out_len, out_off;
  std::vector<gpu::Primitives::PackedRows> parts;
  for (int j = 0; j < k; ++j) {
    for (int64_t i = 0; i < n; ++i) lengths[static_cast<size_t>(j)].push_back(static_cast<int64_t>(rng() % (j == 0 ? 3 : 1000)));
    dl.emplace_back(p, std::span<const int64_t>(lengths[static_cast<size_t>(j)]));
    out_len.emplace_back(p, kept);
    out_off.emplace_back(p, kept + 1);
  }
  for (int j = 0; j < k; ++j) parts.push_back({dl[static_cast<size_t>(j)].ptr(), out_len[static_cast<size_t>(j)].ptr(), out_off[static_cast<size_t>(j)].ptr()});
  DArray<int64_t> pos(p, kept);
  REQUIRE(p.packs_rows_in_one_block(n, parts.size()));
  REQUIRE(p.pack_rows_block(df.ptr(), n, parts, pos.ptr()).ok());
  CHECK(first_diff<int64_t>(pos.host(p).cspan(), want_pos) == -1);
  for (int j = 0; j < k; ++j) {
    std::vector<int64_t> want_len, want_off{0};
    for (int64_t i : want_pos) {
      want_len.push_back(lengths[static_cast<size_t>(j)][static_cast<size_t>(i)]);
      want_off.push_back(want_off.back() + want_len.back());
    }
    CHECK(first_diff<int64_t>(out_len[static_cast<size_t>(j)].host(p).cspan(), want_len) == -1);
    CHECK(first_diff<int64_t>(out_off[static_cast<size_t>(j)].host(p).cspan(), want_off) == -1);
  }
}

}  // namespace

TEST_CASE("gpu pack_rows_block: the kept positions, lengths and offsets of few instances") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 70;
  // The block scans 256 flags at a time: chunk edges, and the most it takes.
  for (int64_t n : {1, 2, 255, 256, 257, 1000, 4095, 4096})
    for (int k : {1, 2, 4})
      for (double trues : {0.0, 1.0, 0.5, 0.05}) check_pack_rows_block(*p, n, k, trues, seed++);
  CHECK_FALSE(p->packs_rows_in_one_block(4097, 1));
  CHECK_FALSE(p->packs_rows_in_one_block(100, 5));
  CHECK_FALSE(p->packs_rows_in_one_block(100, 0));
}

TEST_CASE("gpu affine_positions and affine_gather follow a view's shape") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  // Element i of the view is source[(i / c)·stride + (i % c)·inner + offset]: stride 0 (one
  // row repeated), a stride past the row (a regular elt view), c not a power of two, and an
  // inner stride (a column of rows: a transpose).
  struct Shape4 {
    int64_t c, stride, offset, inner;
  };
  std::mt19937_64 rng(80);
  for (Shape4 sh : {Shape4{3, 0, 0, 1}, Shape4{3, 0, 5, 1}, Shape4{4, 10, 2, 1}, Shape4{1000, 0, 1, 1}, Shape4{7, 7, 0, 1},
                    Shape4{6, 1, 0, 5}, Shape4{5, 2, 3, 13}}) {
    CAPTURE(sh.c);
    CAPTURE(sh.stride);
    CAPTURE(sh.offset);
    CAPTURE(sh.inner);
    const int64_t n = 5 * sh.c + 2;  // whole blocks of c and part of one more
    auto at = [&](int64_t i) { return (i / sh.c) * sh.stride + (i % sh.c) * sh.inner + sh.offset; };
    std::vector<int64_t> idx;
    for (int64_t k = 0; k < 2 * n; ++k) idx.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(n)));
    DArray<int64_t> didx(*p, std::span<const int64_t>(idx)), out(*p, static_cast<int64_t>(idx.size()));
    REQUIRE(p->affine_positions(didx.ptr(), static_cast<int64_t>(idx.size()), sh.c, sh.stride, sh.offset, sh.inner, out.ptr()).ok());
    Vec<int64_t> got = out.host(*p);
    for (size_t k = 0; k < idx.size(); ++k) REQUIRE(got[static_cast<int64_t>(k)] == at(idx[k]));
    int64_t span = 0;  // past every position the view reads
    for (int64_t i = 0; i < n; ++i) span = std::max(span, at(i) + 1);
    std::vector<int64_t> src8(static_cast<size_t>(span));
    std::vector<int32_t> src4(static_cast<size_t>(span));
    std::vector<uint8_t> src1(static_cast<size_t>(span));
    for (int64_t i = 0; i < span; ++i) {
      src8[static_cast<size_t>(i)] = static_cast<int64_t>(rng());
      src4[static_cast<size_t>(i)] = static_cast<int32_t>(rng());
      src1[static_cast<size_t>(i)] = static_cast<uint8_t>(rng());
    }
    DArray<int64_t> d8(*p, std::span<const int64_t>(src8)), o8(*p, n);
    DArray<int32_t> d4(*p, std::span<const int32_t>(src4)), o4(*p, n);
    DArray<uint8_t> d1(*p, std::span<const uint8_t>(src1)), o1(*p, n);
    REQUIRE(p->affine_gather(8, d8.ptr(), n, sh.c, sh.stride, sh.offset, sh.inner, o8.ptr()).ok());
    REQUIRE(p->affine_gather(4, d4.ptr(), n, sh.c, sh.stride, sh.offset, sh.inner, o4.ptr()).ok());
    REQUIRE(p->affine_gather(1, d1.ptr(), n, sh.c, sh.stride, sh.offset, sh.inner, o1.ptr()).ok());
    Vec<int64_t> g8 = o8.host(*p);
    Vec<int32_t> g4 = o4.host(*p);
    Vec<uint8_t> g1 = o1.host(*p);
    for (int64_t i = 0; i < n; ++i) {
      REQUIRE(g8[i] == src8[static_cast<size_t>(at(i))]);
      REQUIRE(g4[i] == src4[static_cast<size_t>(at(i))]);
      REQUIRE(g1[i] == src1[static_cast<size_t>(at(i))]);
    }
  }
}
