// Segmented reductions (+ * max min and or xor) over merge-path chunks.
#include "c_abi.h"
#include "ndp/runtime_cpu.h"
#include "primitives.h"
#include "reduce_impl.h"
#include "window_load.h"

namespace ndp::runtime {

template <class T>
Status seg_reduce(Op op, std::span<const T> in, SegView s, std::span<T> out) {
  if (Status st = expect_size(in.size(), s.total()); !ok(st)) return st;
  if (Status st = expect_size(out.size(), s.count()); !ok(st)) return st;
  return with_op<T>(op, [&](auto f) {
    using F = decltype(f);
    return detail::guarded([&] {
      detail::with_segs(s, [&](const auto& segs) {
        detail::reduce_segs<F>(segs, [&](int64_t p) { return in[p]; }, out.data());
      });
      return ok_status();
    });
  });
}

template <class T>
Status seg_reduce_generated(Op op, const Generate<T>& in, SegView s, std::span<T> out) {
  if (Status st = expect_size(out.size(), s.count()); !ok(st)) return st;
  return with_op<T>(op, [&](auto f) {
    using F = decltype(f);
    return detail::guarded([&] {
      detail::with_segs(s, [&](const auto& segs) {
        detail::reduce_segs<F>(segs, detail::WindowLoad<T>(in, s.total()), out.data());
      });
      return ok_status();
    });
  });
}

#define NDP_RT_INSTANTIATE(T)                                                      \
  template Status seg_reduce<T>(Op, std::span<const T>, SegView, std::span<T>);   \
  template Status seg_reduce_generated<T>(Op, const Generate<T>&, SegView, std::span<T>);
NDP_RT_FOR_EACH_ELEMENT(NDP_RT_INSTANTIATE)
#undef NDP_RT_INSTANTIATE

}  // namespace ndp::runtime

using namespace ndp::runtime;

extern "C" ndp_status ndp_cpu_seg_reduce(ndp_elem_type type, ndp_op op, const void* in, ndp_segdes s, void* out) {
  if (!c_abi::shape_ok(s) || !c_abi::present(in, s.total) || !c_abi::present(out, s.count)) return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return seg_reduce<T>(c_abi::op_of(op), c_abi::in<T>(in, s.total), s, c_abi::out<T>(out, s.count));
  });
}
