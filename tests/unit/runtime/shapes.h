// Shared test fixtures for the runtime tests: segment shapes, tunings, random data.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "runtime/cpu/primitives.h"
#include "runtime/cpu/tuning.h"

namespace ndp::runtime::testing {

/// A descriptor with its lengths spelled out, for the reference implementations.
struct Shape {
  std::string name;
  Segments segs;
  std::vector<int64_t> lengths, offsets;  // always materialised, regular shapes too

  SegView view() const { return segs.view(); }
  int64_t count() const { return static_cast<int64_t>(lengths.size()); }
  int64_t total() const { return offsets.back(); }
};

inline Shape irregular(std::string name, std::vector<int64_t> lengths) {
  Shape s;
  s.name = std::move(name);
  REQUIRE(ok(make_segments(lengths, s.segs)));
  s.offsets.assign(1, 0);
  for (int64_t l : lengths) s.offsets.push_back(s.offsets.back() + l);
  s.lengths = std::move(lengths);
  return s;
}

inline Shape regular(std::string name, int64_t count, int64_t length) {
  Shape s = irregular(name, std::vector<int64_t>(count, length));
  s.segs = Segments::regular(count, length);
  return s;
}

inline std::vector<int64_t> random_lengths(int64_t count, int64_t max_len, double zero_share, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> len(1, max_len);
  std::bernoulli_distribution zero(zero_share);
  std::vector<int64_t> out(count);
  for (auto& l : out) l = zero(rng) ? 0 : len(rng);
  return out;
}

/// Small shapes, cheap enough for every element type and operator.
inline std::vector<Shape> small_shapes() {
  std::vector<Shape> v;
  v.push_back(irregular("no segments", {}));
  v.push_back(irregular("one empty segment", {0}));
  v.push_back(irregular("one element", {1}));
  v.push_back(irregular("empty segments leading, trailing, consecutive", {0, 0, 3, 0, 0, 5, 1, 0, 0}));
  v.push_back(irregular("random lengths with zeros", random_lengths(3000, 40, 0.3, 7)));
  v.push_back(irregular("few long segments", random_lengths(7, 20000, 0.2, 11)));
  v.push_back(regular("regular 500 x 37", 500, 37));
  v.push_back(regular("regular 0 x 5", 0, 5));
  v.push_back(regular("regular 9 x 0", 9, 0));
  v.push_back(regular("flat 100000", 1, 100000));
  return v;
}

/// The large shapes the runtime must handle in parallel.
inline std::vector<Shape> large_shapes() {
  std::vector<Shape> v;
  v.push_back(irregular("one huge segment", {2'000'003}));
  // Segments of whole GPU tiles (2048 elements), ending on and just off tile edges, with empty
  // segments between: tiles that one segment holds, and tiles that one boundary splits.
  v.push_back(irregular("long segments on tile edges", {2048, 0, 4096, 0, 0, 2047, 1, 2050, 6142, 0, 3, 8192, 0}));
  v.push_back(irregular("10^6 one-element segments", std::vector<int64_t>(1'000'000, 1)));
  v.push_back(irregular("random lengths, large", random_lengths(100'000, 30, 0.25, 13)));
  return v;
}

/// Runs body under the default tuning and under one that cuts even tiny inputs into 13
/// chunks, so chunk boundaries fall inside segments, on empty segments and on segment ends.
template <class Body>
void for_each_tuning(Body&& body) {
  Tuning saved = tuning();
  for (int variant = 0; variant < 2; ++variant) {
    tuning() = saved;
    if (variant == 1) tuning() = Tuning{1, 13};
    CAPTURE(variant);
    body();
  }
  tuning() = saved;
}

/// A plain vector, avoiding std::vector<bool>'s packed bits (the runtime takes bool spans).
template <class T>
struct Vec {
  std::unique_ptr<T[]> p;
  int64_t n = 0;
  Vec() = default;
  explicit Vec(int64_t size, T init = T{}) : p(new T[size > 0 ? size : 1]), n(size) { std::fill_n(p.get(), size, init); }
  Vec(const std::vector<T>& v) : Vec(static_cast<int64_t>(v.size())) { std::copy(v.begin(), v.end(), p.get()); }
  T& operator[](int64_t i) { return p[i]; }
  const T& operator[](int64_t i) const { return p[i]; }
  std::size_t size() const { return static_cast<std::size_t>(n); }
  std::span<T> span() { return {p.get(), static_cast<std::size_t>(n)}; }
  std::span<const T> cspan() const { return {p.get(), static_cast<std::size_t>(n)}; }
  operator std::span<T>() { return span(); }
  operator std::span<const T>() const { return cspan(); }
};

/// The values of `in` as a vector computed on demand (Generate), for the consumers of fused
/// maps; `bad` is set when a call asks for more than a window of 2048, outside the vector or an
/// empty range (no assertions from the runtime's threads).
template <class T>
Generate<T> generated(const Vec<T>& in, std::atomic<bool>& bad) {
  return [&in, &bad](int64_t begin, int64_t end, T* out) {
    if (begin < 0 || end > in.n || end <= begin || end - begin > 2048) {
      bad = true;
      return;
    }
    std::copy(in.p.get() + begin, in.p.get() + end, out);
  };
}

/// Random test values: small integers keep float sums exact, so parallel and sequential
/// results compare exactly.
template <class T>
Vec<T> random_values(int64_t n, uint64_t seed, int lo = -9, int hi = 9) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  Vec<T> v(n);
  for (int64_t i = 0; i < n; ++i) {
    T& x = v[i];
    int r = d(rng);
    if constexpr (std::is_same_v<T, bool>) x = r > 0;
    else if constexpr (std::is_same_v<T, uint8_t>) x = static_cast<uint8_t>(r & 255);
    else x = static_cast<T>(r);
  }
  return v;
}

/// n flags, each true with probability `share`.
inline Vec<bool> random_flags(int64_t n, double share, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution d(share);
  Vec<bool> flags(n);
  for (int64_t i = 0; i < n; ++i) flags[i] = d(rng);
  return flags;
}

/// Random in-segment indices (a permutation of each segment when perm is true).
inline std::vector<int64_t> random_indices(const Shape& s, uint64_t seed, bool perm) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> idx(s.total());
  for (int64_t k = 0; k < s.count(); ++k) {
    int64_t b = s.offsets[k], len = s.lengths[k];
    for (int64_t j = 0; j < len; ++j) idx[b + j] = perm ? j : static_cast<int64_t>(rng() % len);
    if (perm) std::shuffle(idx.begin() + b, idx.begin() + b + len, rng);
  }
  return idx;
}

/// Equality that tells -0.0 from 0.0 and treats NaNs as equal: results must match bit for bit.
template <class T>
bool same(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return std::signbit(a) == std::signbit(b) && a == b;
  } else {
    return a == b;
  }
}

/// The first position where got and want differ, or -1 (also -1 only if the sizes agree).
template <class T, class Want>
int64_t first_diff(std::span<const T> got, const Want& want) {
  if (got.size() != want.size()) return -2;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!same<T>(got[i], static_cast<T>(want[i]))) return static_cast<int64_t>(i);
  return -1;
}

}  // namespace ndp::runtime::testing
