// GPU gather, scatter, PERMUTE, DPERMUTE and BPERMUTE against the CPU runtime: results at every
// shape and the same status records on bad input.
#include <random>

#include "tests/unit/runtime/gpu/gpu_fixture.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

namespace {

/// A shape with the count of `s` whose segment k is at least as long as s's (by k mod 3), so
/// indices drawn for `s`'s elements may aim anywhere in it.
Shape widened(const Shape& s) {
  std::vector<int64_t> lengths(s.lengths);
  for (size_t k = 0; k < lengths.size(); ++k) lengths[k] += static_cast<int64_t>(k % 3);
  return irregular(s.name + ", widened", lengths);
}

/// For every element of `from`, an index in [0, length of its segment in `to`).
std::vector<int64_t> indices_into(const Shape& from, const Shape& to, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> idx(from.total());
  for (int64_t k = 0; k < from.count(); ++k)
    for (int64_t p = from.offsets[k]; p < from.offsets[k + 1]; ++p) idx[p] = static_cast<int64_t>(rng() % to.lengths[k]);
  return idx;
}

std::vector<Shape> all_shapes() {
  std::vector<Shape> v = small_shapes();
  for (Shape& s : large_shapes()) v.push_back(std::move(s));
  return v;
}

template <class T>
void check_permute(gpu::Primitives& p, const Shape& s, const Vec<int64_t>& idx, uint64_t seed) {
  CAPTURE(s.name);
  Vec<T> v = random_values<T>(s.total(), seed, -100, 100);
  Vec<T> want(s.total());
  Status cpu = permute<T>(v, idx, s.view(), want);
  DShape ds(p, s);
  DArray<T> dv(p, v.cspan()), out(p, s.total());
  DArray<int64_t> di(p, idx.cspan());
  auto got = p.permute(elem_type_of<T>(), dv.ptr(), di.ptr(), ds.segs, out.ptr());
  REQUIRE_MESSAGE(got.ok(), got.status().message());
  check_same_status(got.value(), cpu);
  if (ok(cpu)) CHECK(first_diff<T>(out.host(p).cspan(), want) == -1);
  // Deferred (Note [Deferred permutes by hashes]): the word stays ~0 (-1) exactly where
  // the checked permute succeeds, and the moves are the same.
  Vec<int64_t> none(1, -1);
  DArray<int64_t> word(p, none.cspan());
  DArray<T> deferred_out(p, s.total());
  cuda::Status st = p.permute_deferred(elem_type_of<T>(), dv.ptr(), di.ptr(), ds.segs, deferred_out.ptr(), word.ptr());
  REQUIRE_MESSAGE(st.ok(), st.message());
  const int64_t lowered = word.host(p).cspan()[0];
  CHECK((lowered == -1) == ok(cpu));
  if (ok(cpu)) CHECK(first_diff<T>(deferred_out.host(p).cspan(), want) == -1);
}

template <class T>
void check_dpermute(gpu::Primitives& p, const Shape& sv, const Shape& sd, const Vec<int64_t>& idx, uint64_t seed) {
  CAPTURE(sv.name);
  CAPTURE(sd.name);
  Vec<T> v = random_values<T>(sv.total(), seed, -100, 100);
  Vec<T> defaults = random_values<T>(sd.total(), seed + 1, -100, 100);
  Vec<T> want(sd.total());
  Status cpu = dpermute<T>(v, idx, sv.view(), defaults, sd.view(), want);
  DShape dsv(p, sv), dsd(p, sd);
  DArray<T> dv(p, v.cspan()), dd(p, defaults.cspan()), out(p, sd.total());
  DArray<int64_t> di(p, idx.cspan());
  auto got = p.dpermute(elem_type_of<T>(), dv.ptr(), di.ptr(), dsv.segs, dd.ptr(), dsd.segs, out.ptr());
  REQUIRE_MESSAGE(got.ok(), got.status().message());
  check_same_status(got.value(), cpu);
  if (!ok(cpu)) return;
  CHECK(first_diff<T>(out.host(p).cspan(), want) == -1);
  // In place: out is the defaults array.
  auto again = p.dpermute(elem_type_of<T>(), dv.ptr(), di.ptr(), dsv.segs, dd.ptr(), dsd.segs, dd.ptr());
  REQUIRE_MESSAGE(again.ok(), again.status().message());
  CHECK(again.value().code == NDP_OK);
  CHECK(first_diff<T>(dd.host(p).cspan(), want) == -1);
}

template <class T>
void check_bpermute(gpu::Primitives& p, const Shape& sv, const Shape& si, const Vec<int64_t>& idx, uint64_t seed) {
  CAPTURE(sv.name);
  CAPTURE(si.name);
  Vec<T> v = random_values<T>(sv.total(), seed, -100, 100);
  Vec<T> want(si.total());
  Status cpu = bpermute<T>(v, sv.view(), idx, si.view(), want);
  DShape dsv(p, sv), dsi(p, si);
  DArray<T> dv(p, v.cspan()), out(p, si.total());
  DArray<int64_t> di(p, idx.cspan());
  auto got = p.bpermute(elem_type_of<T>(), dv.ptr(), dsv.segs, di.ptr(), dsi.segs, out.ptr());
  REQUIRE_MESSAGE(got.ok(), got.status().message());
  check_same_status(got.value(), cpu);
  if (ok(cpu)) CHECK(first_diff<T>(out.host(p).cspan(), want) == -1);
}

/// A segment of s at or after k with at least `min_len` elements, or -1.
int64_t segment_with(const Shape& s, int64_t k, int64_t min_len) {
  for (; k < s.count(); ++k)
    if (s.lengths[k] >= min_len) return k;
  return -1;
}

}  // namespace

TEST_CASE_TEMPLATE("gpu gather and scatter move elements by index", T, int64_t, double, int32_t, float, bool, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (int64_t n : {0, 1, 5, 4097, 1'000'003}) {
    CAPTURE(n);
    Vec<T> v = random_values<T>(n, 21);
    Shape flat = irregular("flat", {n});
    Vec<int64_t> perm(random_indices(flat, 22, true));
    Vec<T> want_g(n), want_s(n);
    for (int64_t i = 0; i < n; ++i) {
      want_g[i] = v[perm[i]];
      want_s[perm[i]] = v[i];
    }
    DArray<T> dv(*p, v.cspan()), g(*p, n), sc(*p, n);
    DArray<int64_t> di(*p, perm.cspan());
    REQUIRE(p->gather(static_cast<int>(sizeof(T)), dv.ptr(), di.ptr(), n, g.ptr()).ok());
    REQUIRE(p->scatter(static_cast<int>(sizeof(T)), dv.ptr(), di.ptr(), n, sc.ptr()).ok());
    CHECK(first_diff<T>(g.host(*p).cspan(), want_g) == -1);
    CHECK(first_diff<T>(sc.host(*p).cspan(), want_s) == -1);
  }
}

TEST_CASE("gpu gather_many gathers parts of every size through one index vector") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (int64_t n : {0, 1, 33, 4097, 1'000'003}) {
    for (int parts : {1, 2, 8, 11}) {  // one launch of one part, of a few, of all eight; two launches
      CAPTURE(n);
      CAPTURE(parts);
      Shape flat = irregular("flat", {n});
      Vec<int64_t> idx(random_indices(flat, 40 + parts, false));
      DArray<int64_t> di(*p, idx.cspan());
      // Part k holds 8-, 4- and 1-byte elements in turn.
      std::vector<Vec<int64_t>> v8;
      std::vector<Vec<int32_t>> v4;
      std::vector<Vec<uint8_t>> v1;
      std::vector<DArray<int64_t>> d8, o8;
      std::vector<DArray<int32_t>> d4, o4;
      std::vector<DArray<uint8_t>> d1, o1;
      std::vector<gpu::Primitives::GatherPart> job;
      for (int k = 0; k < parts; ++k) {
        if (k % 3 == 0) {
          v8.push_back(random_values<int64_t>(n, 100 + k, -1000, 1000));
          d8.emplace_back(*p, v8.back().cspan());
          o8.emplace_back(*p, n);
          job.push_back({8, d8.back().ptr(), o8.back().ptr()});
        } else if (k % 3 == 1) {
          v4.push_back(random_values<int32_t>(n, 100 + k, -1000, 1000));
          d4.emplace_back(*p, v4.back().cspan());
          o4.emplace_back(*p, n);
          job.push_back({4, d4.back().ptr(), o4.back().ptr()});
        } else {
          v1.push_back(random_values<uint8_t>(n, 100 + k, 0, 200));
          d1.emplace_back(*p, v1.back().cspan());
          o1.emplace_back(*p, n);
          job.push_back({1, d1.back().ptr(), o1.back().ptr()});
        }
      }
      REQUIRE(p->gather_many(job, di.ptr(), n).ok());
      auto check = [&](const auto& values, const auto& outs) {
        for (size_t k = 0; k < values.size(); ++k) {
          using T = std::decay_t<decltype(values[k][0])>;
          Vec<T> want(n);
          for (int64_t i = 0; i < n; ++i) want[i] = values[k][idx[i]];
          CHECK(first_diff<T>(outs[k].host(*p).cspan(), want) == -1);
        }
      };
      check(v8, o8);
      check(v4, o4);
      check(v1, o1);
    }
  }
}

TEST_CASE_TEMPLATE("gpu permute matches the cpu runtime", T, int64_t, double, int32_t, float, bool, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 30;
  for (const Shape& s : small_shapes()) {
    check_permute<T>(*p, s, Vec<int64_t>(random_indices(s, seed, true)), seed + 1);
    seed += 2;
  }
}

TEST_CASE("gpu permute at large shapes") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (const Shape& s : large_shapes()) {
    check_permute<int64_t>(*p, s, Vec<int64_t>(random_indices(s, 3, true)), 4);
    check_permute<float>(*p, s, Vec<int64_t>(random_indices(s, 5, true)), 6);
  }
}

TEST_CASE("gpu deferred permutes see the non-permutations whose index sums are right") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  // Note [Deferred permutes by hashes]: each is a permutation or not, every call a new key.
  auto passes = [&](const std::vector<int64_t>& idx, const std::vector<int64_t>& lengths) {
    Shape s = irregular("case", lengths);
    Vec<int64_t> vi(static_cast<int64_t>(idx.size())), values(s.total());
    for (size_t i = 0; i < idx.size(); ++i) vi[static_cast<int64_t>(i)] = idx[i], values[static_cast<int64_t>(i)] = 3 * static_cast<int64_t>(i);
    DShape ds(*p, s);
    DArray<int64_t> dv(*p, values.cspan()), di(*p, vi.cspan()), out(*p, s.total());
    Vec<int64_t> none(1, -1);
    DArray<int64_t> word(*p, none.cspan());
    cuda::Status st = p->permute_deferred(NDP_I64, dv.ptr(), di.ptr(), ds.segs, out.ptr(), word.ptr());
    REQUIRE_MESSAGE(st.ok(), st.message());
    return word.host(*p).cspan()[0] == -1;
  };
  for (int round = 0; round < 20; ++round) {
    CHECK(passes({3, 2, 1, 0}, {4}));
    CHECK_FALSE(passes({0, 0, 3, 3}, {4}));  // the sum of the targets is the positions' (6)
    CHECK_FALSE(passes({1, 1, 2, 2}, {4}));
    CHECK_FALSE(passes({0, 2, 2, 3}, {4}));  // one duplicate
    // Out of bounds in both segments, yet the global targets are 0..3 each once.
    CHECK_FALSE(passes({1, 2, -2, 1}, {2, 2}));
    CHECK(passes({1, 0, 1, 0}, {2, 2}));
  }
  // A large permutation passes, and one duplicate in it does not.
  const int64_t n = 1 << 20;
  std::vector<int64_t> reversed(n);
  for (int64_t i = 0; i < n; ++i) reversed[i] = n - 1 - i;
  CHECK(passes(reversed, {n}));
  reversed[n / 2] = reversed[7];
  CHECK_FALSE(passes(reversed, {n}));
}

TEST_CASE("gpu permute reports bad indices as the cpu runtime does") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (const Shape& s : all_shapes()) {
    if (s.total() < 3) continue;
    int64_t k1 = segment_with(s, s.count() / 3, 3), k2 = segment_with(s, (2 * s.count()) / 3, 3);
    if (k1 < 0) k1 = segment_with(s, 0, 3);
    if (k2 < 0) k2 = k1;
    if (k1 < 0) continue;
    int64_t b1 = s.offsets[k1], b2 = s.offsets[k2];
    std::vector<int64_t> base = random_indices(s, 7, true);
    {
      INFO("out of bounds, two places");
      Vec<int64_t> idx(base);
      idx[b2 + 2] = -1;
      idx[b1 + 1] = s.lengths[k1];
      check_permute<int64_t>(*p, s, idx, 8);
    }
    {
      INFO("duplicates, two places");
      Vec<int64_t> idx(base);
      idx[b1 + 2] = idx[b1];
      idx[b2 + 1] = idx[b2 + 2];
      check_permute<int32_t>(*p, s, idx, 9);
    }
    {
      INFO("a duplicate before an out-of-bounds index: bounds are checked first");
      Vec<int64_t> idx(base);
      idx[b1 + 1] = idx[b1];
      idx[s.total() - 1] = 1'000'000'000'000;
      check_permute<uint8_t>(*p, s, idx, 10);
    }
  }
}

TEST_CASE_TEMPLATE("gpu dpermute matches the cpu runtime", T, int64_t, double, int32_t, float, bool, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 40;
  for (const Shape& s : small_shapes()) {
    // Collisions within the same shape (highest source wins), and into wider segments.
    check_dpermute<T>(*p, s, s, Vec<int64_t>(random_indices(s, seed, false)), seed + 1);
    seed += 2;
    Shape w = widened(s);
    check_dpermute<T>(*p, s, w, Vec<int64_t>(indices_into(s, w, seed)), seed + 1);
    seed += 2;
  }
}

TEST_CASE("gpu dpermute at large shapes and on bad input") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (const Shape& s : large_shapes()) {
    Shape w = widened(s);
    check_dpermute<int64_t>(*p, s, w, Vec<int64_t>(indices_into(s, w, 1)), 2);
    check_dpermute<double>(*p, s, s, Vec<int64_t>(random_indices(s, 3, false)), 4);
    Vec<int64_t> bad(indices_into(s, w, 5));
    bad[s.total() - 1] = -5;
    bad[s.total() / 2] = 1'000'000'000;
    check_dpermute<int32_t>(*p, s, w, bad, 6);
  }
  Shape a = irregular("three", {1, 2, 3}), b = irregular("two", {3, 3});
  DShape da(*p, a), db(*p, b);
  DArray<int64_t> v(*p, 6), idx(*p, 6), out(*p, 6);
  auto got = p->dpermute(NDP_I64, v.ptr(), idx.ptr(), da.segs, out.ptr(), db.segs, out.ptr());
  REQUIRE(got.ok());
  check_same_status(got.value(), ndp_status{NDP_LENGTH_MISMATCH, -1, 3, 2});
}

TEST_CASE_TEMPLATE("gpu bpermute matches the cpu runtime", T, int64_t, double, int32_t, float, bool, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  uint64_t seed = 50;
  for (const Shape& s : small_shapes()) {
    check_bpermute<T>(*p, s, s, Vec<int64_t>(random_indices(s, seed, false)), seed + 1);
    seed += 2;
    Shape w = widened(s);
    check_bpermute<T>(*p, w, s, Vec<int64_t>(indices_into(s, w, seed)), seed + 1);
    seed += 2;
  }
}

TEST_CASE("gpu bpermute at large shapes and on bad input") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (const Shape& s : large_shapes()) {
    Shape w = widened(s);
    check_bpermute<int64_t>(*p, w, s, Vec<int64_t>(indices_into(s, w, 1)), 2);
    check_bpermute<uint8_t>(*p, s, s, Vec<int64_t>(random_indices(s, 3, false)), 4);
    Vec<int64_t> bad(indices_into(s, w, 5));
    bad[s.total() - 1] = w.lengths[s.count() - 1];
    bad[s.total() / 3] = -1;
    check_bpermute<float>(*p, w, s, bad, 6);
  }
  Shape a = irregular("three", {1, 2, 3}), b = irregular("two", {3, 3});
  DShape da(*p, a), db(*p, b);
  DArray<int64_t> v(*p, 6), idx(*p, 6), out(*p, 6);
  auto got = p->bpermute(NDP_I64, v.ptr(), da.segs, idx.ptr(), db.segs, out.ptr());
  REQUIRE(got.ok());
  check_same_status(got.value(), ndp_status{NDP_LENGTH_MISMATCH, -1, 2, 3});
}
