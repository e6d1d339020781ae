// Segmented scans (+ * max min and or xor, exclusive and inclusive) over merge-path chunks.
#include <vector>

#include "c_abi.h"
#include "ndp/runtime_cpu.h"
#include "parallel.h"
#include "primitives.h"
#include "window_load.h"

namespace ndp::runtime {
namespace {

using detail::Range;

// Reduce-then-scan (Note [Merge-path chunks]): phase 1 folds, per chunk, only the elements of
// the segment the chunk leaves unfinished; a sequential pass over the chunks turns those into
// the carry each chunk starts with; phase 2 scans every chunk, starting its first segment
// from the carry and every later one from the identity.
// `in(p)` gives element p; every chunk of each phase reads through its own copy of `in`, with
// increasing p (window_load.h relies on both).
template <class F, class Segs, class Load>
void scan_segs(ScanKind kind, const Load& load_all, const Segs& s, typename F::value_type* out) {
  using T = typename F::value_type;
  int64_t nchunks = detail::chunk_count(s.count() + s.total());
  detail::Buffer<T> carry(nchunks, F::identity());
  if (nchunks > 1) {
    detail::Buffer<T> tail(nchunks, F::identity());
    std::vector<char> ends(nchunks, 0);
    detail::parallel_chunks(nchunks, [&](int64_t c) {
      Range r = detail::chunk_range(s, c, nchunks);
      ends[c] = r.seg_end > r.seg_begin;
      Load in = load_all;
      int64_t b = ends[c] ? s.end(r.seg_end - 1) : r.elem_begin;
      T acc = F::identity();
      for (int64_t p = b; p < r.elem_end; ++p) acc = F::apply(acc, in(p));
      tail[c] = acc;
    });
    T run = F::identity();
    for (int64_t c = 0; c < nchunks; ++c) {
      carry[c] = run;
      run = ends[c] ? tail[c] : F::apply(run, tail[c]);
    }
  }
  detail::parallel_chunks(nchunks, [&](int64_t c) {
    Range r = detail::chunk_range(s, c, nchunks);
    T start = carry[c];
    Load in = load_all;
    detail::for_each_piece(s, r, [&](int64_t, int64_t b, int64_t e) {
      T acc = start;
      start = F::identity();
      if (kind == ScanKind::exclusive) {
        for (int64_t p = b; p < e; ++p) {
          T x = in(p);  // read before writing: out may be in
          out[p] = acc;
          acc = F::apply(acc, x);
        }
      } else {
        for (int64_t p = b; p < e; ++p) {
          acc = F::apply(acc, in(p));
          out[p] = acc;
        }
      }
    });
  });
}

}  // namespace

template <class T>
Status seg_scan(Op op, ScanKind kind, std::span<const T> in, SegView s, std::span<T> out) {
  if (Status st = expect_size(in.size(), s.total()); !ok(st)) return st;
  if (Status st = expect_size(out.size(), s.total()); !ok(st)) return st;
  return with_op<T>(op, [&](auto f) {
    using F = decltype(f);
    return detail::guarded([&] {
      detail::with_segs(s, [&](const auto& segs) {
        const T* data = in.data();
        scan_segs<F>(kind, [data](int64_t p) { return data[p]; }, segs, out.data());
      });
      return ok_status();
    });
  });
}

template <class T>
Status seg_scan_generated(Op op, ScanKind kind, const Generate<T>& in, SegView s, std::span<T> out) {
  if (Status st = expect_size(out.size(), s.total()); !ok(st)) return st;
  return with_op<T>(op, [&](auto f) {
    using F = decltype(f);
    return detail::guarded([&] {
      detail::with_segs(s, [&](const auto& segs) {
        scan_segs<F>(kind, detail::WindowLoad<T>(in, s.total()), segs, out.data());
      });
      return ok_status();
    });
  });
}

#define NDP_RT_INSTANTIATE(T)                                                                 \
  template Status seg_scan<T>(Op, ScanKind, std::span<const T>, SegView, std::span<T>);      \
  template Status seg_scan_generated<T>(Op, ScanKind, const Generate<T>&, SegView, std::span<T>);
NDP_RT_FOR_EACH_ELEMENT(NDP_RT_INSTANTIATE)
#undef NDP_RT_INSTANTIATE

}  // namespace ndp::runtime

using namespace ndp::runtime;

extern "C" ndp_status ndp_cpu_seg_scan(ndp_elem_type type, ndp_op op, int inclusive, const void* in, ndp_segdes s,
                                       void* out) {
  if (!c_abi::shape_ok(s) || !c_abi::present(in, s.total) || !c_abi::present(out, s.total)) return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return seg_scan<T>(c_abi::op_of(op), inclusive ? ScanKind::inclusive : ScanKind::exclusive,
                       c_abi::in<T>(in, s.total), s, c_abi::out<T>(out, s.total));
  });
}
