#include "exec/cuda/affine_index.h"

#include <algorithm>
#include <limits>

namespace ndp::exec::cuda {

namespace {

using Wide = __int128;

bool fits(Wide x) {
  return x >= std::numeric_limits<int64_t>::min() && x <= std::numeric_limits<int64_t>::max();
}

/// {c, a, b, k} where every coefficient fits an int64.
std::optional<AffineIndex> form(int64_t c, Wide a, Wide b, Wide k) {
  if (c < 1 || !fits(a) || !fits(b) || !fits(k)) return std::nullopt;
  return AffineIndex{c, static_cast<int64_t>(a), static_cast<int64_t>(b), static_cast<int64_t>(k)};
}

}  // namespace

std::optional<AffineIndex> as_linear(AffineIndex f, int64_t n) {
  if (f.c == 1) return AffineIndex{1, f.a, 0, f.k};
  if (n <= f.c) return AffineIndex{1, f.b, 0, f.k};  // i / c = 0 and i % c = i
  return std::nullopt;
}

std::optional<AffineIndex> with_divisor(AffineIndex f, int64_t n, int64_t c) {
  if (c < 1) return std::nullopt;
  if (f.c == c) return f;
  std::optional<AffineIndex> l = as_linear(f, n);
  if (!l) return std::nullopt;
  return form(c, Wide{l->a} * c, l->a, l->k);
}

std::optional<AffineIndex> spread_over(AffineIndex f, int64_t count, int64_t L) {
  if (count <= 0 || L <= 0) return AffineIndex::constant(0);  // no instances: any form holds
  std::optional<AffineIndex> l = as_linear(f, count);
  if (!l) return std::nullopt;
  return form(L, l->a, 0, l->k);  // f(i / L) = (i / L)·a + k
}

std::optional<AffineIndex> row_major(AffineIndex row, AffineIndex place, int64_t L, int64_t n) {
  std::optional<AffineIndex> r = row, p = with_divisor(place, n, row.c);
  if (!p) {
    r = with_divisor(row, n, place.c);
    p = place;
  }
  if (!r || !p) return std::nullopt;
  return form(r->c, Wide{r->a} * L + p->a, Wide{r->b} * L + p->b, Wide{r->k} * L + p->k);
}

std::optional<std::pair<int64_t, int64_t>> value_bounds(AffineIndex f, int64_t n) {
  if (n <= 0 || f.c < 1) return std::nullopt;
  const Wide q = (n - 1) / f.c, r = std::min<int64_t>(f.c, n) - 1;
  const Wide qa = q * f.a, rb = r * f.b;
  const Wide least = std::min<Wide>(0, qa) + std::min<Wide>(0, rb) + f.k;
  const Wide greatest = std::max<Wide>(0, qa) + std::max<Wide>(0, rb) + f.k;
  if (!fits(least) || !fits(greatest)) return std::nullopt;
  return std::pair{static_cast<int64_t>(least), static_cast<int64_t>(greatest)};
}

bool within(AffineIndex f, int64_t n, int64_t limit) {
  if (n <= 0) return true;
  std::optional<std::pair<int64_t, int64_t>> b = value_bounds(f, n);
  return b && b->first >= 0 && b->second < limit;
}

}  // namespace ndp::exec::cuda
