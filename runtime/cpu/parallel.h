// Private: chunked parallel traversal of segmented vectors (merge-path partition, OpenMP).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "ndp/interrupt.h"
#include "segdes.h"
#include "status.h"
#include "tuning.h"

namespace ndp::runtime::detail {

// Note [Merge-path chunks]
// A segmented vector of m segments and n elements is one merged list of m + n items: every
// element, and an "end of segment k" marker after the last element of segment k (empty
// segments contribute only their marker). Cutting that list into equal pieces balances the
// work whatever the shape: one segment of 10^8 elements, 10^8 one-element segments, or
// 10^8 empty ones. A chunk is then a range of segment markers [seg_begin, seg_end) (the
// segments that END in it) and a range of elements [elem_begin, elem_end). Its first
// segment may have begun in an earlier chunk and its elements may run on into segment
// seg_end, which a later chunk ends. Kernels compute a per-chunk partial for that carried
// segment, fix the carries up sequentially over the (few) chunks, and finish in parallel:
// a segmented scan is a scan over (head flag, value) pairs. (Merrill & Garland, "Merge-based
// parallel sparse matrix-vector multiplication", SC'16.)

/// Segment accessors: kernels are templates over these so the regular form needs no arrays
/// and no per-element branch.
struct IrregularSegs {
  const int64_t* off;
  int64_t m, n;
  int64_t count() const { return m; }
  int64_t total() const { return n; }
  int64_t begin(int64_t k) const { return off[k]; }
  int64_t end(int64_t k) const { return off[k + 1]; }
  int64_t length(int64_t k) const { return off[k + 1] - off[k]; }
};

struct RegularSegs {
  int64_t m, len;
  int64_t count() const { return m; }
  int64_t total() const { return m * len; }
  int64_t begin(int64_t k) const { return k * len; }
  int64_t end(int64_t k) const { return (k + 1) * len; }
  int64_t length(int64_t) const { return len; }
};

template <class Fn>
decltype(auto) with_segs(SegView s, Fn&& fn) {
  if (s.is_regular()) return fn(RegularSegs{s.count(), s.regular_length()});
  return fn(IrregularSegs{s.offsets(), s.count(), s.total()});
}

/// A heap array for per-chunk partials and scratch. Unlike std::vector<bool> it stores bool
/// as bytes, so chunks may write neighbouring entries concurrently.
template <class T>
class Buffer {
 public:
  explicit Buffer(int64_t n) : data_(new T[n]) {}  // uninitialised
  Buffer(int64_t n, T init) : data_(new T[n]) { std::fill_n(data_.get(), n, init); }
  T& operator[](int64_t i) { return data_[i]; }
  const T& operator[](int64_t i) const { return data_[i]; }
  T* data() { return data_.get(); }

 private:
  std::unique_ptr<T[]> data_;
};

struct Range {
  int64_t seg_begin, seg_end, elem_begin, elem_end;
};

/// How many chunks `work` items are cut into (see Tuning).
inline int64_t chunk_count(int64_t work) {
  const Tuning& t = tuning();
  int64_t by_grain = t.grain > 0 ? work / t.grain : work;
  if (t.chunks > 0) return std::clamp<int64_t>(by_grain, 1, t.chunks);
  // A chunk per thread, and more for large inputs: a chunk is where a loop polls for an
  // interrupt (Note [Cancellation] in ndp/interrupt.h).
  int64_t most = std::max<int64_t>({omp_get_max_threads(), work / kInterruptBlock, 1});
  return std::clamp<int64_t>(by_grain, 1, most);
}

/// The point where merge-path diagonal d crosses the path: `seg` markers and `elem` elements
/// lie before it (seg + elem = d). Markers go before elements at ties, so a segment's end
/// marker directly follows its last element.
template <class Segs>
void path_point(const Segs& s, int64_t d, int64_t& seg, int64_t& elem) {
  // The largest i with end(i - 1) + i <= d; end(i - 1) + i strictly increases with i.
  int64_t lo = std::max<int64_t>(0, d - s.total()), hi = std::min(d, s.count());
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (s.end(mid - 1) + mid <= d) lo = mid;
    else hi = mid - 1;
  }
  seg = lo;
  elem = d - lo;
}

template <class Segs>
Range chunk_range(const Segs& s, int64_t c, int64_t nchunks) {
  int64_t work = s.count() + s.total();
  // 128-bit product: work * c may exceed 2^63 for very large inputs and many chunks.
  auto diag = [&](int64_t k) { return static_cast<int64_t>(static_cast<__int128>(work) * k / nchunks); };
  Range r{};
  path_point(s, diag(c), r.seg_begin, r.elem_begin);
  path_point(s, diag(c + 1), r.seg_end, r.elem_end);
  return r;
}

/// Visits the pieces of segments that chunk r covers, in order, as fn(segment, begin, end)
/// with [begin, end) a range of element positions: first every segment that ends in the
/// chunk (empty ones included; the first may have begun earlier), then, if elements remain,
/// the start of segment r.seg_end, which a later chunk ends.
template <class Segs, class Fn>
void for_each_piece(const Segs& s, const Range& r, Fn&& fn) {
  int64_t j = r.elem_begin;
  for (int64_t k = r.seg_begin; k < r.seg_end; ++k) {
    int64_t e = s.end(k);
    fn(k, j, e);
    j = e;
  }
  if (j < r.elem_end) fn(r.seg_end, j, r.elem_end);
}

/// Runs fn(c) for every chunk c in [0, nchunks), in parallel when there is more than one.
/// Polls for an interrupt before each chunk; if one came, the chunks after it are skipped and
/// ndp::Interrupted is thrown once the loop is over, so no caller reads unfinished output. Not
/// inside another parallel region (a call from an outer loop's body), which it could not leave
/// by an exception: there it runs every chunk.
template <class Fn>
void parallel_chunks(int64_t nchunks, Fn&& fn) {
  if (nchunks == 1) {
    fn(int64_t{0});
    return;
  }
  const bool may_stop = omp_get_level() == 0;
  bool stopped = false;
  // A team no larger than the chunks: a thread with nothing to do is not woken (Note [Teams
  // as large as the work] in exec/host/parallel_loops.h).
  const int team = static_cast<int>(std::min<int64_t>(nchunks, omp_get_max_threads()));
#pragma omp parallel for schedule(static, 1) num_threads(team)
  for (int64_t c = 0; c < nchunks; ++c) {
    if (may_stop && interrupt_pending()) {
#pragma omp atomic write
      stopped = true;
      continue;
    }
    fn(c);
  }
  if (stopped) throw Interrupted{};
}

/// The start of chunk c when [0, n) is cut into nchunks equal ranges.
inline int64_t split_point(int64_t n, int64_t c, int64_t nchunks) {
  return static_cast<int64_t>(static_cast<__int128>(n) * c / nchunks);
}

/// Runs fn(begin, end) over [0, n) cut into equal element ranges, in parallel.
template <class Fn>
void parallel_range(int64_t n, Fn&& fn) {
  int64_t nchunks = chunk_count(n);
  parallel_chunks(nchunks, [&](int64_t c) {
    int64_t b = split_point(n, c, nchunks), e = split_point(n, c + 1, nchunks);
    if (b < e) fn(b, e);
  });
}

/// The failure check(p) reports for the lowest p in [0, n) (check returns ok_status() for
/// good positions), or OK. Parallel, and the same answer for every chunking.
template <class Check>
Status first_failing(int64_t n, Check&& check) {
  int64_t nchunks = chunk_count(n);
  std::vector<Status> found(nchunks, ok_status());
  parallel_chunks(nchunks, [&](int64_t c) {
    for (int64_t p = split_point(n, c, nchunks), e = split_point(n, c + 1, nchunks); p < e; ++p) {
      Status s = check(p);
      if (!ok(s)) {
        found[c] = s;
        return;
      }
    }
  });
  for (const Status& s : found)
    if (!ok(s)) return s;
  return ok_status();
}

/// Runs fn(segs, range) for every merge-path chunk of a descriptor.
template <class Segs, class Fn>
void parallel_pieces(const Segs& s, Fn&& fn) {
  int64_t nchunks = chunk_count(s.count() + s.total());
  parallel_chunks(nchunks, [&](int64_t c) { fn(chunk_range(s, c, nchunks)); });
}

/// Runs fn(k, begin, end) -> Status over every piece of every merge-path chunk in parallel;
/// a chunk stops at its first failure. Returns the failure of the earliest chunk, which (as
/// chunks are in position order, and a piece reports its lowest failing position) is the
/// failure with the lowest position.
template <class Segs, class Fn>
Status parallel_pieces_checked(const Segs& s, Fn&& fn) {
  int64_t nchunks = chunk_count(s.count() + s.total());
  std::vector<Status> found(nchunks, ok_status());
  parallel_chunks(nchunks, [&](int64_t c) {
    Range r = chunk_range(s, c, nchunks);
    bool failed = false;
    for_each_piece(s, r, [&](int64_t k, int64_t b, int64_t e) {
      if (failed) return;
      Status st = fn(k, b, e);
      if (!ok(st)) {
        found[c] = st;
        failed = true;
      }
    });
  });
  for (const Status& st : found)
    if (!ok(st)) return st;
  return ok_status();
}

/// Floor modulus for rotations: the result lies in [0, n) for n > 0.
inline int64_t floor_mod(int64_t a, int64_t n) {
  int64_t r = a % n;
  return r < 0 ? r + n : r;
}

}  // namespace ndp::runtime::detail

namespace ndp::runtime::detail {

/// Runs fn() and turns a failed scratch allocation into NDP_OUT_OF_MEMORY. Allocations happen
/// outside parallel regions, so no exception ever crosses an OpenMP region.
template <class Fn>
Status guarded(Fn&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return status_of(NDP_OUT_OF_MEMORY);
  }
}

/// The lowest-position failure among per-chunk results.
inline Status first_of(const std::vector<Status>& per_chunk) {
  Status s = ok_status();
  for (const Status& c : per_chunk) s = first_failure(s, c);
  return s;
}

}  // namespace ndp::runtime::detail
