// Per-segment append (segment k of the result is segment k of a followed by segment k of b).
#include <cstring>

#include "c_abi.h"
#include "ndp/runtime_cpu.h"
#include "parallel.h"
#include "primitives.h"

namespace ndp::runtime {

using detail::Range;

namespace {

/// Moves every segment of `from` (shape sf) to `shift(k)` elements into segment k of `to`.
template <class T, class Segs, class SegsTo, class Shift>
void move_segments(const T* from, const Segs& sf, T* to, const SegsTo& st, Shift&& shift) {
  detail::parallel_pieces(sf, [&](const Range& r) {
    detail::for_each_piece(sf, r, [&](int64_t k, int64_t b, int64_t e) {
      if (b < e) std::memcpy(to + st.begin(k) + shift(k) + (b - sf.begin(k)), from + b, (e - b) * sizeof(T));
    });
  });
}

}  // namespace

template <class T>
Status append(std::span<const T> a, SegView sa, std::span<const T> b, SegView sb, SegView so, std::span<T> out) {
  if (Status st = expect_size(a.size(), sa.total()); !ok(st)) return st;
  if (Status st = expect_size(b.size(), sb.total()); !ok(st)) return st;
  if (Status st = expect_size(out.size(), so.total()); !ok(st)) return st;
  if (sb.count() != sa.count()) return length_mismatch(-1, sb.count(), sa.count());
  if (so.count() != sa.count()) return length_mismatch(-1, so.count(), sa.count());
  Status shape = detail::first_failing(so.count(), [&](int64_t k) {
    int64_t want = sa.length(k) + sb.length(k);
    return so.length(k) != want ? length_mismatch(k, so.length(k), want) : ok_status();
  });
  if (!ok(shape)) return shape;
  detail::with_segs(so, [&](const auto& o) {
    detail::with_segs(sa, [&](const auto& x) { move_segments(a.data(), x, out.data(), o, [](int64_t) { return 0; }); });
    detail::with_segs(sb, [&](const auto& y) {
      move_segments(b.data(), y, out.data(), o, [&](int64_t k) { return sa.length(k); });
    });
  });
  return ok_status();
}

#define NDP_RT_INSTANTIATE(T) \
  template Status append<T>(std::span<const T>, SegView, std::span<const T>, SegView, SegView, std::span<T>);
NDP_RT_FOR_EACH_ELEMENT(NDP_RT_INSTANTIATE)
#undef NDP_RT_INSTANTIATE

}  // namespace ndp::runtime

using namespace ndp::runtime;

extern "C" ndp_status ndp_cpu_append(ndp_elem_type type, const void* a, ndp_segdes sa, const void* b, ndp_segdes sb,
                                     ndp_segdes so, void* out) {
  if (!c_abi::shape_ok(sa) || !c_abi::shape_ok(sb) || !c_abi::shape_ok(so) || !c_abi::present(a, sa.total) ||
      !c_abi::present(b, sb.total) || !c_abi::present(out, so.total))
    return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return append<T>(c_abi::in<T>(a, sa.total), sa, c_abi::in<T>(b, sb.total), sb, so, c_abi::out<T>(out, so.total));
  });
}
