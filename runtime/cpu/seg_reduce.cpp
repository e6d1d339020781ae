// Segmented reductions (+ * max min and or xor) over merge-path chunks.
#include <limits>
#include <vector>

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

namespace {

/// max_index / min_index as one fold of (value, position) pairs: a value strictly better than the
/// fold's replaces it (as OpFn's max and min do, so a NaN never does), and an equal one at an
/// earlier position. That is the least position holding the extreme by `==` (the leftmost of
/// -0.0 and 0.0), as the definition in stdlib/sequence.ndp gives; nothing equal (only NaNs)
/// leaves the identity's position, max_int.
template <class F>
struct ExtremeAt {
  using T = typename F::value_type;
  struct value_type {
    T v;
    int64_t at;
  };
  static constexpr value_type identity() { return {F::identity(), std::numeric_limits<int64_t>::max()}; }
  static constexpr value_type apply(value_type acc, value_type x) {
    if (F::apply(acc.v, x.v) != acc.v || (x.v == acc.v && x.at < acc.at)) return x;
    return acc;
  }
};

}  // namespace

template <class T>
Status seg_index_of_extreme(Op op, std::span<const T> in, SegView s, std::span<int64_t> out) {
  if (Status st = expect_size(in.size(), s.total()); !ok(st)) return st;
  if (Status st = expect_size(out.size(), s.count()); !ok(st)) return st;
  if (op != Op::max && op != Op::min) return status_of(NDP_UNSUPPORTED);
  return with_op<T>(op, [&](auto f) {
    using E = ExtremeAt<decltype(f)>;
    using V = typename E::value_type;
    return detail::guarded([&] {
      std::vector<V> best(static_cast<size_t>(s.count()));
      detail::with_segs(s, [&](const auto& segs) {
        detail::reduce_segs<E>(segs, [&](int64_t p) { return V{in[p], p}; }, best.data());
        // Positions within each segment.
        detail::parallel_range(s.count(), [&](int64_t b, int64_t e) {
          for (int64_t k = b; k < e; ++k)
            out[k] = best[k].at == std::numeric_limits<int64_t>::max() ? best[k].at : best[k].at - segs.begin(k);
        });
      });
      return ok_status();
    });
  });
}

#define NDP_RT_INSTANTIATE(T)                                                      \
  template Status seg_reduce<T>(Op, std::span<const T>, SegView, std::span<T>);   \
  template Status seg_index_of_extreme<T>(Op, std::span<const T>, SegView, std::span<int64_t>); \
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
