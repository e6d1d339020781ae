// Generators: DIST (replicate one value per segment) and INDEX (an arithmetic sequence per segment).
#include <type_traits>

#include "c_abi.h"
#include "ndp/runtime_cpu.h"
#include "parallel.h"
#include "primitives.h"

namespace ndp::runtime {

using detail::Range;

template <class T>
Status dist(std::span<const T> x, SegView s, std::span<T> out) {
  if (Status st = expect_size(x.size(), s.count()); !ok(st)) return st;
  if (Status st = expect_size(out.size(), s.total()); !ok(st)) return st;
  detail::with_segs(s, [&](const auto& segs) {
    detail::parallel_pieces(segs, [&](const Range& r) {
      detail::for_each_piece(segs, r, [&](int64_t k, int64_t b, int64_t e) {
        T value = x[k];
        for (int64_t p = b; p < e; ++p) out[p] = value;
      });
    });
  });
  return ok_status();
}

template <class T>
Status index(std::span<const T> start, std::span<const T> stride, SegView s, std::span<T> out) {
  if constexpr (!is_signed_int_v<T> && !std::is_floating_point_v<T>) {
    return status_of(NDP_UNSUPPORTED);
  } else {
    for (std::size_t size : {start.size(), stride.size()})
      if (Status st = expect_size(size, s.count()); !ok(st)) return st;
    if (Status st = expect_size(out.size(), s.total()); !ok(st)) return st;
    detail::with_segs(s, [&](const auto& segs) {
      detail::parallel_pieces(segs, [&](const Range& r) {
        detail::for_each_piece(segs, r, [&](int64_t k, int64_t b, int64_t e) {
          int64_t first = b - segs.begin(k);
          if constexpr (is_signed_int_v<T>) {
            // start + j·stride in unsigned arithmetic: wraps like the language's ints.
            using U = std::make_unsigned_t<T>;
            U s0 = U(start[k]), d = U(stride[k]);
            for (int64_t p = b; p < e; ++p) out[p] = T(s0 + U(first + (p - b)) * d);
          } else {
            for (int64_t p = b; p < e; ++p) out[p] = start[k] + T(first + (p - b)) * stride[k];
          }
        });
      });
    });
    return ok_status();
  }
}

#define NDP_RT_INSTANTIATE(T)                                                  \
  template Status dist<T>(std::span<const T>, SegView, std::span<T>); \
  template Status index<T>(std::span<const T>, std::span<const T>, SegView, std::span<T>);
NDP_RT_FOR_EACH_ELEMENT(NDP_RT_INSTANTIATE)
#undef NDP_RT_INSTANTIATE

}  // namespace ndp::runtime

using namespace ndp::runtime;

extern "C" {

ndp_status ndp_cpu_dist(ndp_elem_type type, const void* x, ndp_segdes s, void* out) {
  if (!c_abi::shape_ok(s) || !c_abi::present(x, s.count) || !c_abi::present(out, s.total)) return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return dist<T>(c_abi::in<T>(x, s.count), s, c_abi::out<T>(out, s.total));
  });
}

ndp_status ndp_cpu_index(ndp_elem_type type, const void* start, const void* stride, ndp_segdes s, void* out) {
  if (!c_abi::shape_ok(s) || !c_abi::present(start, s.count) || !c_abi::present(stride, s.count) ||
      !c_abi::present(out, s.total))
    return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return index<T>(c_abi::in<T>(start, s.count), c_abi::in<T>(stride, s.count), s, c_abi::out<T>(out, s.total));
  });
}

}  // extern "C"
