// Counter-based random numbers for `rand`/`rand_seed` (extensions.md §4); see Note [rand].
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "lang/source.h"

namespace ndp::lang::eval {

// Note [rand]
// `rand` must give the same stream on every backend (interp, cpu, cuda), so a draw is a pure
// function of (seed, call site, element position, per-position draw count), never of the
// order in which elements happen to be evaluated. Every backend computes exactly this:
//
//   mix(x)   = SplitMix64's finaliser: z = x + 0x9E3779B97F4A7C15;
//              z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
//              z ^ (z >> 31)                                  (all arithmetic mod 2^64)
//   site     = (uint64(span.file) << 32) | span.begin         of the `rand` Prim node
//   path     = the indices i_1 .. i_d of the enclosing apply-to-each elements, outermost first,
//              dynamically (a function called inside an apply-to-each inherits its path). The
//              index is the element's position in the generators, before any filter.
//   p_0      = mix(seed);  p_k = mix(p_{k-1} ^ i_k)
//   c        = how many earlier draws this top-level form made at the same site with the same
//              path (0 for the first; serial recursion or loops at one path count up)
//   r        = mix(mix(p_d ^ site) ^ c)
//
// Results, for n > 0 (else `Rand only works with positive numbers.`):
//   int, i32 : (uint128(r) * n) >> 64                      in [0, n)
//   float    : (r >> 11) * 2^-53 * n, or the largest double below n if that rounds up to n
//   f32      : (r >> 40) * 2^-24 * n in float, likewise kept below n
//
// Every top-level form starts with seed 0 and all counts at zero (NESL reseeds whenever control
// returns to the top level, so a form is reproducible). `rand_seed(s)` sets the seed to s and
// restarts every count, so the same seed reproduces the same subsequent draws.
class RandState {
 public:
  RandState() { begin_form(); }
  /// The start of a top-level form: seed 0, no enclosing apply-to-each, no draws yet.
  void begin_form();
  /// rand_seed: a new seed and fresh counts, keeping the current path.
  void reset(uint64_t seed);
  /// Entering / leaving element `index` of an apply-to-each.
  void push_element(uint64_t index);
  void pop_element();
  /// The raw 64-bit draw r for a call site at the current path.
  uint64_t draw(Span site);

  static uint64_t mix(uint64_t x);

 private:
  uint64_t seed_ = 0;
  std::vector<uint64_t> indices_;  // the current path
  std::vector<uint64_t> prefix_;   // prefix_[k] = p_k
  // counts_[k]: (site, c) for the element whose path has length k; cleared when it starts.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> counts_;
};

}  // namespace ndp::lang::eval
