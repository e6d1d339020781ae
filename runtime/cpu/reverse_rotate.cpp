// Per-segment reverse and rotate (library.md §6: rotate shifts right, negative amounts left).
#include <cstring>

#include "c_abi.h"
#include "ndp/runtime_cpu.h"
#include "parallel.h"
#include "primitives.h"

namespace ndp::runtime {

using detail::Range;

template <class T>
Status reverse(std::span<const T> v, SegView s, std::span<T> out) {
  if (Status st = expect_size(v.size(), s.total()); !ok(st)) return st;
  if (Status st = expect_size(out.size(), s.total()); !ok(st)) return st;
  detail::with_segs(s, [&](const auto& segs) {
    detail::parallel_pieces(segs, [&](const Range& r) {
      detail::for_each_piece(segs, r, [&](int64_t k, int64_t b, int64_t e) {
        // Element p of segment k goes to begin + end - 1 - p.
        int64_t mirror = segs.begin(k) + segs.end(k) - 1;
        for (int64_t p = b; p < e; ++p) out[mirror - p] = v[p];
      });
    });
  });
  return ok_status();
}

template <class T>
Status rotate(std::span<const T> v, std::span<const int64_t> shift, SegView s, std::span<T> out) {
  if (Status st = expect_size(v.size(), s.total()); !ok(st)) return st;
  if (Status st = expect_size(shift.size(), s.count()); !ok(st)) return st;
  if (Status st = expect_size(out.size(), s.total()); !ok(st)) return st;
  detail::with_segs(s, [&](const auto& segs) {
    detail::parallel_pieces(segs, [&](const Range& r) {
      detail::for_each_piece(segs, r, [&](int64_t k, int64_t b, int64_t e) {
        if (b == e) return;
        int64_t base = segs.begin(k), len = segs.length(k);
        // The piece [b, e) lands at target t onward, wrapping once at the segment's end.
        int64_t t = detail::floor_mod(b - base + detail::floor_mod(shift[k], len), len);
        int64_t first = std::min(e - b, len - t);
        std::memcpy(out.data() + base + t, v.data() + b, first * sizeof(T));
        std::memcpy(out.data() + base, v.data() + b + first, (e - b - first) * sizeof(T));
      });
    });
  });
  return ok_status();
}

#define NDP_RT_INSTANTIATE(T)                                            \
  template Status reverse<T>(std::span<const T>, SegView, std::span<T>); \
  template Status rotate<T>(std::span<const T>, std::span<const int64_t>, SegView, std::span<T>);
NDP_RT_FOR_EACH_ELEMENT(NDP_RT_INSTANTIATE)
#undef NDP_RT_INSTANTIATE

}  // namespace ndp::runtime

using namespace ndp::runtime;

extern "C" {

ndp_status ndp_cpu_reverse(ndp_elem_type type, const void* v, ndp_segdes s, void* out) {
  if (!c_abi::shape_ok(s) || !c_abi::present(v, s.total) || !c_abi::present(out, s.total)) return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return reverse<T>(c_abi::in<T>(v, s.total), s, c_abi::out<T>(out, s.total));
  });
}

ndp_status ndp_cpu_rotate(ndp_elem_type type, const void* v, const int64_t* shift, ndp_segdes s, void* out) {
  if (!c_abi::shape_ok(s) || !c_abi::present(v, s.total) || !c_abi::present(shift, s.count) ||
      !c_abi::present(out, s.total))
    return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return rotate<T>(c_abi::in<T>(v, s.total), c_abi::in<int64_t>(shift, s.count), s, c_abi::out<T>(out, s.total));
  });
}

}  // extern "C"
