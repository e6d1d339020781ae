// Private: the segmented-reduction core, shared by seg_reduce, pack_lengths(_many) and combine.
#pragma once

#include <vector>

#include "parallel.h"

namespace ndp::runtime::detail {

// Each chunk writes the results of the segments that end in it, except the first one, which
// may have begun in an earlier chunk: its partial ("head") waits for the carry from the chunks
// before (Note [Merge-path chunks]). The carries and heads are fixed up sequentially.
// `load(p)` gives element p, so callers can reduce flags as counts or gathered values
// without materialising them. Every chunk reads through its own copy of `load`, with
// increasing p (window_load.h relies on both).
//
// reduce_ranges takes `reduce_range(b, e)`, the reduction of elements [b, e) (a faster loop
// than element by element where one exists, counting flags say); reduce_segs takes `load`.
// reduce_ranges_into hands each segment's result to `store(k, result)` instead of writing
// out[k] (several counts a segment, each to its own array: pack_lengths_many).
template <class F, class Segs, class ReduceRange, class Store>
void reduce_ranges_into(const Segs& s, const ReduceRange& reduce_range_all, const Store& store) {
  using T = typename F::value_type;
  int64_t nchunks = chunk_count(s.count() + s.total());
  Buffer<T> head(nchunks, F::identity()), tail(nchunks, F::identity());
  std::vector<Range> ranges(nchunks);
  parallel_chunks(nchunks, [&](int64_t c) {
    Range r = chunk_range(s, c, nchunks);
    ranges[c] = r;
    ReduceRange reduce_range = reduce_range_all;
    for_each_piece(s, r, [&](int64_t k, int64_t b, int64_t e) {
      T acc = reduce_range(b, e);
      if (k == r.seg_end) tail[c] = acc;
      else if (k == r.seg_begin) head[c] = acc;
      else store(k, acc);
    });
  });
  T carry = F::identity();
  for (int64_t c = 0; c < nchunks; ++c) {
    const Range& r = ranges[c];
    if (r.seg_end > r.seg_begin) {
      store(r.seg_begin, F::apply(carry, head[c]));
      carry = tail[c];
    } else {
      carry = F::apply(carry, tail[c]);
    }
  }
}

template <class F, class Segs, class ReduceRange>
void reduce_ranges(const Segs& s, const ReduceRange& reduce_range_all, typename F::value_type* out) {
  reduce_ranges_into<F>(s, reduce_range_all, [out](int64_t k, const typename F::value_type& acc) { out[k] = acc; });
}

template <class F, class Segs, class Load>
void reduce_segs(const Segs& s, const Load& load_all, typename F::value_type* out) {
  using T = typename F::value_type;
  struct ByElement {
    Load load;  // each chunk's own copy (window_load.h)
    T operator()(int64_t b, int64_t e) {
      T acc = F::identity();
      for (int64_t p = b; p < e; ++p) acc = F::apply(acc, load(p));
      return acc;
    }
  };
  reduce_ranges<F>(s, ByElement{load_all}, out);
}

}  // namespace ndp::runtime::detail
