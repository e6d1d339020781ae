// PACK: the lengths of the packed segments, and the order-preserving compaction of the data.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "c_abi.h"
#include "count_flags.h"
#include "ndp/runtime_cpu.h"
#include "parallel.h"
#include "primitives.h"
#include "reduce_impl.h"
#include "window_load.h"

namespace ndp::runtime {

Status pack_lengths(std::span<const bool> flags, SegView s, std::span<int64_t> out_lengths, int64_t* total) {
  if (Status st = expect_size(flags.size(), s.total()); !ok(st)) return st;
  if (Status st = expect_size(out_lengths.size(), s.count()); !ok(st)) return st;
  // A segmented + reduction of the flags read as 0/1.
  return detail::guarded([&] {
    const bool* f = flags.data();
    detail::with_segs(s, [&](const auto& segs) {
      detail::reduce_ranges<OpFn<Op::plus, int64_t>>(
          segs, [f](int64_t b, int64_t e) { return detail::count_flags(f, b, e); }, out_lengths.data());
    });
    if (total) {
      int64_t sum = 0;
      seg_reduce<int64_t>(Op::plus, out_lengths, SegView::flat(s.count()), std::span<int64_t>(&sum, 1));
      *total = sum;
    }
    return ok_status();
  });
}

namespace {

/// pack_lengths_many for exactly K counts: the counts of a piece are K numbers that stay in
/// registers, where a run-time k over room for kMostCounts made each of the many short
/// segments of a recursion's deep levels zero, copy and add eight.
template <size_t K>
void pack_lengths_k(std::span<const std::span<const bool>> flags, SegView s, std::span<const std::span<int64_t>> out) {
  struct Counts {
    int64_t n[K];
  };
  struct CountsPlus {
    using value_type = Counts;
    static Counts identity() { return Counts{}; }
    static Counts apply(Counts a, const Counts& b) {
      for (size_t j = 0; j < K; ++j) a.n[j] += b.n[j];
      return a;
    }
  };
  const bool* f[K];
  int64_t* o[K];
  for (size_t j = 0; j < K; ++j) f[j] = flags[j].data(), o[j] = out[j].data();
  detail::with_segs(s, [&](const auto& segs) {
    auto count_range = [&](int64_t b, int64_t e) {
      Counts sum{};
      for (size_t j = 0; j < K; ++j) {
        if (e - b < 16) {
          // A short segment (the deep levels of a recursion): a plain loop.
          int64_t c = 0;
          for (int64_t p = b; p < e; ++p) c += f[j][p];
          sum.n[j] = c;
        } else {
          sum.n[j] = detail::count_flags(f[j], b, e);
        }
      }
      return sum;
    };
    detail::reduce_ranges_into<CountsPlus>(segs, count_range, [&](int64_t seg, const Counts& c) {
      for (size_t j = 0; j < K; ++j) o[j][seg] = c.n[j];
    });
  });
}

}  // namespace

Status pack_lengths_many(std::span<const std::span<const bool>> flags, SegView s, std::span<const std::span<int64_t>> out) {
  const size_t k = flags.size();
  if (k > kMostCounts) return expect_size(k, kMostCounts);
  if (Status st = expect_size(out.size(), k); !ok(st)) return st;
  for (size_t j = 0; j < k; ++j) {
    if (Status st = expect_size(flags[j].size(), s.total()); !ok(st)) return st;
    if (Status st = expect_size(out[j].size(), s.count()); !ok(st)) return st;
  }
  // A segmented sum of several counts at once: each piece's counts, summed as one value.
  return detail::guarded([&] {
    // Up to four counts a pass (quicksort's three in one).
    for (size_t j = 0; j < k; j += 4) {
      const size_t m = std::min<size_t>(4, k - j);
      const auto fl = flags.subspan(j, m);
      const auto ou = out.subspan(j, m);
      switch (m) {
        case 1: pack_lengths_k<1>(fl, s, ou); break;
        case 2: pack_lengths_k<2>(fl, s, ou); break;
        case 3: pack_lengths_k<3>(fl, s, ou); break;
        default: pack_lengths_k<4>(fl, s, ou); break;
      }
    }
    return ok_status();
  });
}

int64_t count_true(std::span<const bool> flags) {
  const bool* f = flags.data();
  int64_t n = static_cast<int64_t>(flags.size());
  int64_t nchunks = detail::chunk_count(n);
  std::vector<int64_t> part(nchunks);  // per chunk, summed in order below
  detail::parallel_chunks(nchunks, [&](int64_t c) {
    part[c] = detail::count_flags(f, detail::split_point(n, c, nchunks), detail::split_point(n, c + 1, nchunks));
  });
  int64_t total = 0;
  for (int64_t x : part) total += x;
  return total;
}

namespace {

/// The kept elements of v[p, e) written from o[w] on, for flags that keep few of them: eight
/// zero flags skipped at a time, and done once the slots up to w_end are full. Returns the next
/// free slot.
template <class T>
int64_t copy_kept_sparse(const T* v, const bool* f, int64_t p, int64_t e, T* o, int64_t w, int64_t w_end) {
  while (p < e && w < w_end) {
    uint64_t word = 1;
    if (e - p >= 8) std::memcpy(&word, f + p, 8);
    if (word == 0) {
      p += 8;
      continue;
    }
    if (f[p]) o[w++] = v[p];
    ++p;
  }
  return w;
}

/// The kept elements of v[p, e) written from o[w] on, branch-free: every element is written at
/// the next free slot and the slot advances only for a kept one (random flags make a branch
/// mispredict half the time). It stops once the slots up to w_end are full, so no write reaches
/// past them (another chunk's part of o). Returns the next free slot.
template <class T, class Flag>
int64_t copy_kept(const T* v, Flag& flag, int64_t p, int64_t e, T* o, int64_t w, int64_t w_end) {
  for (; p < e && w < w_end; ++p) {
    o[w] = v[p];
    w += flag(p);
  }
  return w;
}

/// PACK's data with the flags read through `flag(p)` (each chunk of each pass through its own
/// copy, p increasing: window_load.h); `allocate(count)` gives the output, or a failure.
/// `count(b, e)` counts the flags in [b, e) (through a copy of `flag_all` where it reads them so).
/// `raw`, when the flags are an array, lets a chunk that keeps few elements skip eight zero
/// flags at a time (the `==` of a three-way partition, the finished instances of a level).
template <class T, class Flag, class Count, class Allocate>
Status pack_with(std::span<const T> v, const Flag& flag_all, const Count& count, Allocate&& allocate,
                 const bool* raw = nullptr) {
  int64_t n = static_cast<int64_t>(v.size());
  return detail::guarded([&] {
    int64_t nchunks = detail::chunk_count(n);
    std::vector<int64_t> start(nchunks + 1, 0);
    detail::parallel_chunks(nchunks, [&](int64_t c) {
      start[c + 1] = count(detail::split_point(n, c, nchunks), detail::split_point(n, c + 1, nchunks));
    });
    for (int64_t c = 0; c < nchunks; ++c) start[c + 1] += start[c];
    auto [st, o] = allocate(start[nchunks]);
    if (!ok(st)) return st;
    detail::parallel_chunks(nchunks, [&](int64_t c) {
      Flag flag = flag_all;
      const int64_t w = start[c], w_end = start[c + 1];
      const int64_t p = detail::split_point(n, c, nchunks), e = detail::split_point(n, c + 1, nchunks);
      if (raw != nullptr && (w_end - w) * 16 < e - p) copy_kept_sparse(v.data(), raw, p, e, o, w, w_end);
      else copy_kept(v.data(), flag, p, e, o, w, w_end);
    });
    return ok_status();
  });
}

}  // namespace

template <class T>
Status pack(std::span<const T> v, std::span<const bool> flags, std::span<T> out) {
  if (Status st = expect_size(flags.size(), v.size()); !ok(st)) return st;
  const bool* f = flags.data();
  return pack_with(
      v, [f](int64_t p) { return f[p]; }, [f](int64_t b, int64_t e) { return detail::count_flags(f, b, e); },
      [&](int64_t count) { return std::pair<Status, T*>(expect_size(out.size(), count), out.data()); }, f);
}

template <class T>
Status pack_generated(std::span<const T> v, const Generate<bool>& flags, const std::function<T*(int64_t)>& allocate) {
  detail::WindowLoad<bool> load(flags, static_cast<int64_t>(v.size()));
  auto count = [&load](int64_t b, int64_t e) {
    detail::WindowLoad<bool> flag = load;
    int64_t c = 0;
    for (int64_t p = b; p < e; ++p) c += flag(p);
    return c;
  };
  return pack_with(v, load, count,
                   [&](int64_t count) { return std::pair<Status, T*>(ok_status(), allocate(count)); });
}

// Note [One pass for a filter group's packs]
// A filter group often packs one vector by several predicates: quicksort's three-way partition
// packs its elements by `<`, `==` and `>` the pivot. As separate packs, each counted the flags
// twice (the total, then per chunk) and read every element once per predicate. Here one pass
// counts every predicate's flags per chunk and one pass reads each element once, writing it to
// every output whose flag is set (the predicates need not exclude each other).
template <class T>
Status partition(std::span<const T> v, std::span<const std::span<const bool>> flags, const PartitionAllocate<T>& allocate) {
  const size_t k = flags.size();
  if (k > kMostPartitions) return expect_size(k, kMostPartitions);
  for (const std::span<const bool>& f : flags)
    if (Status st = expect_size(f.size(), v.size()); !ok(st)) return st;
  const int64_t n = static_cast<int64_t>(v.size());
  return detail::guarded([&] {
    const int64_t nchunks = detail::chunk_count(n);
    // start[c * k + j]: where chunk c's part of output j begins; the totals after the last chunk.
    std::vector<int64_t> start((nchunks + 1) * k, 0);
    detail::parallel_chunks(nchunks, [&](int64_t c) {
      const int64_t b = detail::split_point(n, c, nchunks), e = detail::split_point(n, c + 1, nchunks);
      for (size_t j = 0; j < k; ++j) start[(c + 1) * k + j] = detail::count_flags(flags[j].data(), b, e);
    });
    for (int64_t c = 0; c < nchunks; ++c)
      for (size_t j = 0; j < k; ++j) start[(c + 1) * k + j] += start[c * k + j];
    T* outs[kMostPartitions] = {};
    allocate(std::span<const int64_t>(start.data() + nchunks * k, k), std::span<T*>(outs, k));
    detail::parallel_chunks(nchunks, [&](int64_t c) {
      const int64_t b = detail::split_point(n, c, nchunks), e = detail::split_point(n, c + 1, nchunks);
      int64_t w[kMostPartitions];
      bool sparse[kMostPartitions];
      for (size_t j = 0; j < k; ++j) {
        w[j] = start[c * k + j];
        sparse[j] = (start[(c + 1) * k + j] - w[j]) * 16 < e - b;
      }
      // A block of values at a time, written to each output in turn while it is in L1: branch-free,
      // or, for an output that keeps few of the chunk's elements (quicksort's `==`), skipping
      // eight zero flags at a time.
      constexpr int64_t kBlock = 2048;
      for (int64_t bb = b; bb < e; bb += kBlock) {
        const int64_t be = std::min(e, bb + kBlock);
        for (size_t j = 0; j < k; ++j) {
          if (outs[j] == nullptr) continue;
          const bool* const f = flags[j].data();
          auto flag = [f](int64_t p) { return f[p]; };
          const int64_t w_end = start[(c + 1) * k + j];
          w[j] = sparse[j] ? copy_kept_sparse(v.data(), f, bb, be, outs[j], w[j], w_end)
                           : copy_kept(v.data(), flag, bb, be, outs[j], w[j], w_end);
        }
      }
    });
    return ok_status();
  });
}

#define NDP_RT_INSTANTIATE(T)                                                           \
  template Status pack<T>(std::span<const T>, std::span<const bool>, std::span<T>); \
  template Status partition<T>(std::span<const T>, std::span<const std::span<const bool>>,         \
                               const PartitionAllocate<T>&);                                      \
  template Status pack_generated<T>(std::span<const T>, const Generate<bool>&, const std::function<T*(int64_t)>&);
NDP_RT_FOR_EACH_ELEMENT(NDP_RT_INSTANTIATE)
#undef NDP_RT_INSTANTIATE

}  // namespace ndp::runtime

using namespace ndp::runtime;

extern "C" {

ndp_status ndp_cpu_pack_lengths(const uint8_t* flags, ndp_segdes s, int64_t* out_lengths, int64_t* total) {
  if (!c_abi::shape_ok(s) || !c_abi::present(flags, s.total) || !c_abi::present(out_lengths, s.count))
    return c_abi::bad_shape();
  return c_abi::guard([&] {
    return pack_lengths(c_abi::in<bool>(flags, s.total), s, c_abi::out<int64_t>(out_lengths, s.count), total);
  });
}

ndp_status ndp_cpu_pack(ndp_elem_type type, const void* v, const uint8_t* flags, int64_t n, void* out,
                        int64_t out_count) {
  if (n < 0 || out_count < 0 || !c_abi::present(v, n) || !c_abi::present(flags, n) || !c_abi::present(out, out_count))
    return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return pack<T>(c_abi::in<T>(v, n), c_abi::in<bool>(flags, n), c_abi::out<T>(out, out_count));
  });
}

}  // extern "C"
