// Index vectors that the host knows as a formula of the instance: (i / c)·a + (i % c)·b + k.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

namespace ndp::exec::cuda {

// Note [Affine indices]
// A nested apply-to-each over shared sequences indexes them by its instances: in
// {{starts[j] + within[j][b] : j in [0:256]} : b in [0:nb]}, instance i of the inner body is
// (b, j) = (i / 256, i % 256), so `within[j][b]` reads row i % 256 at place i / 256, and the
// flattened program says so through ranks (a lifted [0:n]'s elements), spreads (a value an
// outer instance, replicated over its segment), broadcasts and known values. Stored, those
// index vectors cost a launch or three each and IndexShared another with its check: 13
// launches for that one line of the radix benchmark's pass (bench/results/session47). Where
// every one of them is such a form over regular segments, the host composes the formula of the
// positions, row·L + place over rows of L, checks the bounds from the formula's least and
// greatest values, and the elements read become a view of stored elements, which a fused kernel
// reads in place and anything else gets in one launch (Note [Regular elt views] in
// device_vec.h: `within[j][b]` is a view of inner stride nb, a transpose), or else a gather
// through positions one launch computes (DVec::deferred_index): no check on the device, no
// read-back. Forms are composed only where
// the composition is exact; anything else takes the general path, which checks as before.

/// Instance i's value, for i in [0, n): (i / c)·a + (i % c)·b + k, with c ≥ 1. c = 1 makes it
/// linear, i·a + k (i % 1 is 0).
struct AffineIndex {
  int64_t c = 1, a = 0, b = 0, k = 0;
  bool operator==(const AffineIndex&) const = default;

  static AffineIndex constant(int64_t k) { return {1, 0, 0, k}; }
  static AffineIndex iota() { return {1, 1, 0, 0}; }
  /// Each instance's place in its segment of c (a rank over regular segments).
  static AffineIndex rank(int64_t c) { return {c, 0, 1, 0}; }
};

/// f over [0, n) as a linear form (c = 1), where it is one: f.c = 1, or n ≤ f.c (i / c is 0).
std::optional<AffineIndex> as_linear(AffineIndex f, int64_t n);
/// f over [0, n) with divisor c: itself, or a linear form rewritten (i = (i / c)·c + i % c).
std::optional<AffineIndex> with_divisor(AffineIndex f, int64_t n, int64_t c);
/// Instance i's value f(i / L) over count·L instances: f's value of each of count segments of L,
/// spread over its segment.
std::optional<AffineIndex> spread_over(AffineIndex f, int64_t count, int64_t L);
/// row·L + place, instance by instance over [0, n): the position of element place of row row in
/// rows of L laid one after another.
std::optional<AffineIndex> row_major(AffineIndex row, AffineIndex place, int64_t L, int64_t n);
/// Bounds of f's values over [0, n) (n > 0): least and greatest, or a wider pair (q = i / c and
/// i % c taken apart); nullopt where a value may not fit an int64.
std::optional<std::pair<int64_t, int64_t>> value_bounds(AffineIndex f, int64_t n);
/// Every value of f over [0, n) lies in [0, limit) (true for n = 0).
bool within(AffineIndex f, int64_t n, int64_t limit);

}  // namespace ndp::exec::cuda
