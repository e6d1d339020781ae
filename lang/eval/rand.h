// Counter-based random numbers for `rand`/`rand_seed` (extensions.md §4); see Note [rand].
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lang/source.h"

namespace ndp::lang::eval {

// Note [rand]
// `rand` must give the same stream on every backend (interp, cpu, cuda), so a draw is a pure
// function of (seed, call site, element position, per-position draw count), never of the
// order in which elements happen to be evaluated. Every backend computes exactly this (the
// cuda backend on the device: Note [Draw counts on the device] in runtime/gpu/rand.h):
//
//   mix(x)   = SplitMix64's finaliser: z = x + 0x9E3779B97F4A7C15;
//              z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
//              z ^ (z >> 31)                                  (all arithmetic mod 2^64)
//   site     = span.begin of the `rand` Prim node: its byte offset in its source buffer. Not the
//              buffer's id, so a form typed again, or a file loaded after other files, draws the
//              same numbers (NESL: a top-level form is reproducible). Two call sites at the same
//              offset of different buffers share a site and so its counts: still distinct draws.
//   path     = the indices i_1 .. i_d of the enclosing apply-to-each elements, outermost first,
//              dynamically (a function called inside an apply-to-each inherits its path). The
//              index is the element's position in the generators, before any filter.
//   p_0      = 0;  p_k = mix(p_{k-1} ^ i_k)                  (the path hash; no seed in it, so
//              a flattened program can carry it as one integer per instance)
//   c        = how many earlier draws this top-level form made at the same site with the same
//              path hash since the last rand_seed (0 for the first)
//   r        = mix(mix(mix(seed) ^ p_d ^ site) ^ c)
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
  /// Flattened programs know each instance's path hash instead of a stack of indices: draws
  /// use `path_hash` until `clear_path`.
  void set_path(uint64_t path_hash);
  void clear_path();
  /// Whether the current path is inside an apply-to-each (rand_seed is serial only): the
  /// top level's path hash is p_0 = 0.
  bool in_apply_to_each() const { return override_ ? *override_ != 0 : prefix_.size() > 1; }
  /// The raw 64-bit draw r for a call site at the current path.
  uint64_t draw(Span site);

  static uint64_t mix(uint64_t x);
  /// p_k from p_{k-1} and the element index i_k.
  static uint64_t step(uint64_t parent, uint64_t index) { return mix(parent ^ index); }

 private:
  struct KeyHash {
    size_t operator()(const std::pair<uint64_t, uint64_t>& k) const { return mix(k.first ^ mix(k.second)); }
  };
  uint64_t seed_mix_ = 0;                  // mix(seed)
  std::vector<uint64_t> prefix_;           // prefix_[k] = p_k of the current path
  std::optional<uint64_t> override_;       // set_path
  std::unordered_map<std::pair<uint64_t, uint64_t>, uint64_t, KeyHash> counts_;  // (site, p) -> c
};

}  // namespace ndp::lang::eval
