// EXTRACT (one element per segment) and REPLACE (a copy with one element per segment replaced).
#include <cstring>

#include "c_abi.h"
#include "ndp/runtime_cpu.h"
#include "parallel.h"
#include "primitives.h"

namespace ndp::runtime {

template <class T>
Status extract(std::span<const T> v, std::span<const int64_t> idx, SegView s, std::span<T> out) {
  if (Status st = expect_size(v.size(), s.total()); !ok(st)) return st;
  for (std::size_t size : {idx.size(), out.size()})
    if (Status st = expect_size(size, s.count()); !ok(st)) return st;
  return detail::guarded([&] {
    return detail::first_failing(s.count(), [&](int64_t k) {
      int64_t i = idx[k], len = s.length(k);
      if (i < 0 || i >= len) return index_out_of_bounds(k, i, len);
      out[k] = v[s.begin(k) + i];
      return ok_status();
    });
  });
}

template <class T>
Status replace(std::span<const T> v, std::span<const int64_t> idx, std::span<const T> x, SegView s,
               std::span<T> out) {
  for (std::size_t size : {v.size(), out.size()})
    if (Status st = expect_size(size, s.total()); !ok(st)) return st;
  for (std::size_t size : {idx.size(), x.size()})
    if (Status st = expect_size(size, s.count()); !ok(st)) return st;
  return detail::guarded([&] {
    // Check every index before copying, so that an in-place call that fails leaves v intact.
    Status st = detail::first_failing(s.count(), [&](int64_t k) {
      return idx[k] < 0 || idx[k] >= s.length(k) ? index_out_of_bounds(k, idx[k], s.length(k)) : ok_status();
    });
    if (!ok(st)) return st;
    if (v.data() != out.data())
      detail::parallel_range(s.total(), [&](int64_t b, int64_t e) {
        std::memcpy(out.data() + b, v.data() + b, (e - b) * sizeof(T));
      });
    detail::parallel_range(s.count(), [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) out[s.begin(k) + idx[k]] = x[k];
    });
    return ok_status();
  });
}

#define NDP_RT_INSTANTIATE(T)                                                                           \
  template Status extract<T>(std::span<const T>, std::span<const int64_t>, SegView, std::span<T>); \
  template Status replace<T>(std::span<const T>, std::span<const int64_t>, std::span<const T>, SegView, std::span<T>);
NDP_RT_FOR_EACH_ELEMENT(NDP_RT_INSTANTIATE)
#undef NDP_RT_INSTANTIATE

}  // namespace ndp::runtime

using namespace ndp::runtime;

extern "C" {

ndp_status ndp_cpu_extract(ndp_elem_type type, const void* v, const int64_t* idx, ndp_segdes s, void* out) {
  if (!c_abi::shape_ok(s) || !c_abi::present(v, s.total) || !c_abi::present(idx, s.count) || !c_abi::present(out, s.count))
    return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return extract<T>(c_abi::in<T>(v, s.total), c_abi::in<int64_t>(idx, s.count), s, c_abi::out<T>(out, s.count));
  });
}

ndp_status ndp_cpu_replace(ndp_elem_type type, const void* v, const int64_t* idx, const void* x, ndp_segdes s,
                           void* out) {
  if (!c_abi::shape_ok(s) || !c_abi::present(v, s.total) || !c_abi::present(idx, s.count) || !c_abi::present(x, s.count) ||
      !c_abi::present(out, s.total))
    return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return replace<T>(c_abi::in<T>(v, s.total), c_abi::in<int64_t>(idx, s.count), c_abi::in<T>(x, s.count), s,
                      c_abi::out<T>(out, s.total));
  });
}

}  // extern "C"
