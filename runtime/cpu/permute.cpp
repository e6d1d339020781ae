// PERMUTE (scatter), DPERMUTE (scatter into defaults, highest source wins) and BPERMUTE (gather).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "c_abi.h"
#include "ndp/runtime_cpu.h"
#include "parallel.h"
#include "primitives.h"

namespace ndp::runtime {
namespace {

using detail::Range;

Status check_target(int64_t p, int64_t t, int64_t length) {
  return t < 0 || t >= length ? index_out_of_bounds(p, t, length) : ok_status();
}

/// Parallel copy (a no-op when source and destination are one array).
template <class T>
void copy_all(const T* from, T* to, int64_t n) {
  if (from == to) return;
  detail::parallel_range(n, [&](int64_t b, int64_t e) { std::memcpy(to + b, from + b, (e - b) * sizeof(T)); });
}

// Note [Checking permutations]
// The fast path stores every source position at its target with plain relaxed stores and
// then checks that each target holds the position that aimed at it: with no duplicates every
// check passes, with a duplicate some loser fails. Which loser fails depends on the race, so
// only then a deterministic pass (atomic minimum per target) finds the lowest position whose
// target an earlier position took.
template <class T, class Segs>
Status permute_segs(const T* v, const int64_t* idx, const Segs& s, T* out) {
  std::vector<int64_t> claim(s.total());
  Status st = detail::parallel_pieces_checked(s, [&](int64_t k, int64_t b, int64_t e) {
    int64_t base = s.begin(k), len = s.length(k);
    for (int64_t p = b; p < e; ++p) {
      if (Status bad = check_target(p, idx[p], len); !ok(bad)) return bad;
      std::atomic_ref<int64_t>(claim[base + idx[p]]).store(p, std::memory_order_relaxed);
    }
    return ok_status();
  });
  if (!ok(st)) return st;
  st = detail::parallel_pieces_checked(s, [&](int64_t k, int64_t b, int64_t e) {
    int64_t base = s.begin(k);
    for (int64_t p = b; p < e; ++p) {
      int64_t g = base + idx[p];
      if (std::atomic_ref<int64_t>(claim[g]).load(std::memory_order_relaxed) != p) return status_of(NDP_NOT_A_PERMUTATION);
      out[g] = v[p];
    }
    return ok_status();
  });
  if (ok(st)) return st;
  detail::parallel_range(s.total(), [&](int64_t b, int64_t e) {
    std::fill(claim.begin() + b, claim.begin() + e, std::numeric_limits<int64_t>::max());
  });
  detail::parallel_pieces(s, [&](const Range& r) {
    detail::for_each_piece(s, r, [&](int64_t k, int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        std::atomic_ref<int64_t> slot(claim[s.begin(k) + idx[p]]);
        int64_t cur = slot.load(std::memory_order_relaxed);
        while (p < cur && !slot.compare_exchange_weak(cur, p, std::memory_order_relaxed)) {
        }
      }
    });
  });
  return detail::parallel_pieces_checked(s, [&](int64_t k, int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p)
      if (claim[s.begin(k) + idx[p]] != p) return not_a_permutation(p, idx[p], s.length(k));
    return ok_status();
  });
}

// Note [Scatter by target range]
// DPERMUTE's highest source wins (extensions.md §4). The cheap way to get that in parallel is
// to give each chunk a range of *targets* and let it walk, in order, the sources of every
// segment that reaches into its range, writing only the targets it owns: later sources
// overwrite earlier ones as in a sequential loop, with no atomics and no owner array. A
// segment that straddles two ranges is walked by both, so this pays when the walked sources
// add up to little more than the sources (many segments, or one segment on two threads, as
// the prime sieve's one big `<-` is); otherwise dpermute_owners runs. Each segment's indices
// are checked by the one chunk where the segment begins, so the failure reported is still
// the lowest failing position.

/// The segments chunk [lo, hi) of the targets walks: [first, last).
template <class SegsD>
std::pair<int64_t, int64_t> walked_segments(const SegsD& sd, int64_t lo, int64_t hi, bool last_chunk) {
  auto first_at = [&](auto&& pred) {  // the first segment k with pred(k); pred is monotone
    int64_t a = 0, b = sd.count();
    while (a < b) {
      int64_t mid = a + (b - a) / 2;
      if (pred(mid)) b = mid;
      else a = mid + 1;
    }
    return a;
  };
  int64_t first = first_at([&](int64_t k) { return sd.end(k) > lo || sd.begin(k) >= lo; });
  int64_t last = last_chunk ? sd.count() : first_at([&](int64_t k) { return sd.begin(k) >= hi; });
  return {first, std::max(first, last)};
}

/// Scatter by target range; false (and nothing written) when that would walk too many sources.
template <class T, class SegsV, class SegsD>
bool dpermute_by_target(const T* v, const int64_t* idx, const SegsV& sv, const T* defaults, const SegsD& sd, T* out,
                        Status& result) {
  const int64_t total = sd.total();
  const int64_t nchunks = detail::chunk_count(sv.total() + total);
  std::vector<std::pair<int64_t, int64_t>> segs(nchunks);
  int64_t walked = 0;
  for (int64_t c = 0; c < nchunks; ++c) {
    segs[c] = walked_segments(sd, detail::split_point(total, c, nchunks), detail::split_point(total, c + 1, nchunks),
                              c == nchunks - 1);
    if (segs[c].first < segs[c].second) walked += sv.end(segs[c].second - 1) - sv.begin(segs[c].first);
  }
  if (nchunks > 1 && walked > 2 * sv.total()) return false;
  std::vector<Status> found(nchunks, ok_status());
  detail::parallel_chunks(nchunks, [&](int64_t c) {
    int64_t lo = detail::split_point(total, c, nchunks), hi = detail::split_point(total, c + 1, nchunks);
    if (out != defaults) std::copy(defaults + lo, defaults + hi, out + lo);
    for (int64_t k = segs[c].first; k < segs[c].second; ++k) {
      int64_t base = sd.begin(k), len = sd.length(k);
      bool checks = base >= lo;  // the segment begins here (Note [Scatter by target range])
      for (int64_t p = sv.begin(k), e = sv.end(k); p < e; ++p) {
        int64_t t = idx[p];
        if (t < 0 || t >= len) {
          if (checks) {
            found[c] = index_out_of_bounds(p, t, len);
            return;
          }
          continue;
        }
        if (base + t >= lo && base + t < hi) out[base + t] = v[p];
      }
    }
  });
  result = detail::first_of(found);
  return true;
}

// Collisions: every source raises its target's owner to its own position (atomic maximum),
// then exactly the owners write, so the highest source position wins (extensions.md §4)
// whatever the thread interleaving.
template <class T, class SegsV, class SegsD>
Status dpermute_owners(const T* v, const int64_t* idx, const SegsV& sv, const T* defaults, const SegsD& sd, T* out) {
  std::vector<int64_t> owner(sd.total());
  detail::parallel_range(sd.total(), [&](int64_t b, int64_t e) { std::fill(owner.begin() + b, owner.begin() + e, -1); });
  Status st = detail::parallel_pieces_checked(sv, [&](int64_t k, int64_t b, int64_t e) {
    int64_t base = sd.begin(k), len = sd.length(k);
    for (int64_t p = b; p < e; ++p) {
      if (Status bad = check_target(p, idx[p], len); !ok(bad)) return bad;
      std::atomic_ref<int64_t> slot(owner[base + idx[p]]);
      int64_t cur = slot.load(std::memory_order_relaxed);
      while (cur < p && !slot.compare_exchange_weak(cur, p, std::memory_order_relaxed)) {
      }
    }
    return ok_status();
  });
  if (!ok(st)) return st;
  copy_all(defaults, out, sd.total());
  detail::parallel_pieces(sv, [&](const Range& r) {
    detail::for_each_piece(sv, r, [&](int64_t k, int64_t b, int64_t e) {
      int64_t base = sd.begin(k);
      for (int64_t p = b; p < e; ++p)
        if (owner[base + idx[p]] == p) out[base + idx[p]] = v[p];
    });
  });
  return ok_status();
}

template <class T, class SegsV, class SegsD>
Status dpermute_segs(const T* v, const int64_t* idx, const SegsV& sv, const T* defaults, const SegsD& sd, T* out) {
  Status st = ok_status();
  if (dpermute_by_target(v, idx, sv, defaults, sd, out, st)) return st;
  return dpermute_owners(v, idx, sv, defaults, sd, out);
}

template <class T, class SegsV, class SegsI>
Status bpermute_segs(const T* v, const SegsV& sv, const int64_t* idx, const SegsI& si, T* out) {
  return detail::parallel_pieces_checked(si, [&](int64_t k, int64_t b, int64_t e) {
    int64_t base = sv.begin(k), len = sv.length(k);
    for (int64_t p = b; p < e; ++p) {
      if (Status bad = check_target(p, idx[p], len); !ok(bad)) return bad;
      out[p] = v[base + idx[p]];
    }
    return ok_status();
  });
}

}  // namespace

template <class T>
Status permute(std::span<const T> v, std::span<const int64_t> idx, SegView s, std::span<T> out) {
  for (std::size_t size : {v.size(), idx.size(), out.size()})
    if (Status st = expect_size(size, s.total()); !ok(st)) return st;
  return detail::guarded([&] {
    return detail::with_segs(s, [&](const auto& segs) { return permute_segs(v.data(), idx.data(), segs, out.data()); });
  });
}

template <class T>
Status dpermute(std::span<const T> v, std::span<const int64_t> idx, SegView sv, std::span<const T> defaults,
                SegView sd, std::span<T> out) {
  for (std::size_t size : {v.size(), idx.size()})
    if (Status st = expect_size(size, sv.total()); !ok(st)) return st;
  for (std::size_t size : {defaults.size(), out.size()})
    if (Status st = expect_size(size, sd.total()); !ok(st)) return st;
  if (sv.count() != sd.count()) return length_mismatch(-1, sv.count(), sd.count());
  return detail::guarded([&] {
    return detail::with_segs(sv, [&](const auto& a) {
      return detail::with_segs(sd, [&](const auto& b) {
        return dpermute_segs(v.data(), idx.data(), a, defaults.data(), b, out.data());
      });
    });
  });
}

template <class T>
Status bpermute(std::span<const T> v, SegView sv, std::span<const int64_t> idx, SegView si, std::span<T> out) {
  if (Status st = expect_size(v.size(), sv.total()); !ok(st)) return st;
  for (std::size_t size : {idx.size(), out.size()})
    if (Status st = expect_size(size, si.total()); !ok(st)) return st;
  if (sv.count() != si.count()) return length_mismatch(-1, si.count(), sv.count());
  return detail::guarded([&] {
    return detail::with_segs(sv, [&](const auto& a) {
      return detail::with_segs(si, [&](const auto& b) { return bpermute_segs(v.data(), a, idx.data(), b, out.data()); });
    });
  });
}

#define NDP_RT_INSTANTIATE(T)                                                                                        \
  template Status permute<T>(std::span<const T>, std::span<const int64_t>, SegView, std::span<T>);                  \
  template Status dpermute<T>(std::span<const T>, std::span<const int64_t>, SegView, std::span<const T>, SegView, \
                              std::span<T>);                                                                        \
  template Status bpermute<T>(std::span<const T>, SegView, std::span<const int64_t>, SegView, std::span<T>);
NDP_RT_FOR_EACH_ELEMENT(NDP_RT_INSTANTIATE)
#undef NDP_RT_INSTANTIATE

}  // namespace ndp::runtime

using namespace ndp::runtime;

extern "C" {

ndp_status ndp_cpu_permute(ndp_elem_type type, const void* v, const int64_t* idx, ndp_segdes s, void* out) {
  if (!c_abi::shape_ok(s) || !c_abi::present(v, s.total) || !c_abi::present(idx, s.total) || !c_abi::present(out, s.total))
    return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return permute<T>(c_abi::in<T>(v, s.total), c_abi::in<int64_t>(idx, s.total), s, c_abi::out<T>(out, s.total));
  });
}

ndp_status ndp_cpu_dpermute(ndp_elem_type type, const void* v, const int64_t* idx, ndp_segdes sv, const void* defaults,
                            ndp_segdes sd, void* out) {
  if (!c_abi::shape_ok(sv) || !c_abi::shape_ok(sd) || !c_abi::present(v, sv.total) || !c_abi::present(idx, sv.total) ||
      !c_abi::present(defaults, sd.total) || !c_abi::present(out, sd.total))
    return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return dpermute<T>(c_abi::in<T>(v, sv.total), c_abi::in<int64_t>(idx, sv.total), sv, c_abi::in<T>(defaults, sd.total),
                       sd, c_abi::out<T>(out, sd.total));
  });
}

ndp_status ndp_cpu_bpermute(ndp_elem_type type, const void* v, ndp_segdes sv, const int64_t* idx, ndp_segdes si,
                            void* out) {
  if (!c_abi::shape_ok(sv) || !c_abi::shape_ok(si) || !c_abi::present(v, sv.total) || !c_abi::present(idx, si.total) ||
      !c_abi::present(out, si.total))
    return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return bpermute<T>(c_abi::in<T>(v, sv.total), sv, c_abi::in<int64_t>(idx, si.total), si, c_abi::out<T>(out, si.total));
  });
}

}  // extern "C"
