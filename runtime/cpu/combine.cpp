// *_combine (extensions.md §3): irregular reduction by index, deterministic, floats included.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "c_abi.h"
#include "ndp/runtime_cpu.h"
#include "parallel.h"
#include "primitives.h"
#include "radix.h"
#include "reduce_impl.h"

namespace ndp::runtime {

namespace {

// Note [Deterministic combine]
// A stable radix sort of the source positions by target index groups the contributions to
// each target in ascending source order ("bins", described by offsets like segments). Then:
// - exactly associative operators (every integer, bool and char operator, wrapping) reduce
//   the bins with the merge-path segmented reduction, parallel even for one hot bin, and
//   combine the result with dest[k]: reassociation cannot change an exact result;
// - float operators fold each bin from dest[k] in ascending source order, one bin per task,
//   giving bit for bit the sequential left fold. A bin holding most of the input then runs
//   sequentially: that is what an exact left fold costs.
template <class F>
void combine_sorted(const typename F::value_type* dest, int64_t nd, const typename F::value_type* vals,
                    const std::vector<uint64_t>& keys, const std::vector<int64_t>& from, typename F::value_type* out) {
  using T = typename F::value_type;
  int64_t n = static_cast<int64_t>(keys.size());
  // Bin k holds sorted positions [off[k], off[k+1]): off[k] is the first key >= k. Each
  // chunk of bins binary-searches from where its previous bin ended.
  std::vector<int64_t> off(nd + 1);
  detail::parallel_range(nd + 1, [&](int64_t b, int64_t e) {
    auto q = keys.begin();
    for (int64_t k = b; k < e; ++k) {
      q = std::lower_bound(q, keys.end(), static_cast<uint64_t>(k));
      off[k] = q - keys.begin();
    }
  });
  detail::IrregularSegs bins{off.data(), nd, n};
  if constexpr (!std::is_floating_point_v<T>) {
    detail::Buffer<T> reduced(nd);
    detail::reduce_segs<F>(bins, [&](int64_t q) { return vals[from[q]]; }, reduced.data());
    detail::parallel_range(nd, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) out[k] = F::apply(dest[k], reduced[k]);
    });
  } else {
    auto fold = [&](int64_t k) {
      T acc = dest[k];
      for (int64_t q = bins.begin(k); q < bins.end(k); ++q) acc = F::apply(acc, vals[from[q]]);
      out[k] = acc;
    };
    if (detail::chunk_count(nd + n) == 1) {
      for (int64_t k = 0; k < nd; ++k) fold(k);
    } else {
#pragma omp parallel for schedule(dynamic, 256)
      for (int64_t k = 0; k < nd; ++k) fold(k);
    }
  }
}

}  // namespace

template <class T>
Status combine(Op op, std::span<const T> dest, std::span<const int64_t> idx, std::span<const T> vals,
               std::span<T> out) {
  int64_t nd = static_cast<int64_t>(dest.size()), n = static_cast<int64_t>(idx.size());
  if (Status st = expect_size(vals.size(), n); !ok(st)) return st;
  if (Status st = expect_size(out.size(), nd); !ok(st)) return st;
  return with_op<T>(op, [&](auto f) {
    using F = decltype(f);
    return detail::guarded([&] {
      Status st = detail::first_failing(n, [&](int64_t p) {
        return idx[p] < 0 || idx[p] >= nd ? index_out_of_bounds(p, idx[p], nd) : ok_status();
      });
      if (!ok(st)) return st;
      std::vector<uint64_t> keys(n), key_buf;
      std::vector<int64_t> from(n), from_buf;
      detail::parallel_range(n, [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          keys[p] = static_cast<uint64_t>(idx[p]);
          from[p] = p;
        }
      });
      detail::radix_sort(keys, from, detail::key_bytes_for(nd > 0 ? static_cast<uint64_t>(nd - 1) : 0), key_buf,
                         from_buf);
      combine_sorted<F>(dest.data(), nd, vals.data(), keys, from, out.data());
      return ok_status();
    });
  });
}

#define NDP_RT_INSTANTIATE(T) \
  template Status combine<T>(Op, std::span<const T>, std::span<const int64_t>, std::span<const T>, std::span<T>);
NDP_RT_FOR_EACH_ELEMENT(NDP_RT_INSTANTIATE)
#undef NDP_RT_INSTANTIATE

}  // namespace ndp::runtime

using namespace ndp::runtime;

extern "C" ndp_status ndp_cpu_combine(ndp_elem_type type, ndp_op op, const void* dest, int64_t n_dest,
                                      const int64_t* idx, const void* vals, int64_t n_vals, void* out) {
  if (n_dest < 0 || n_vals < 0 || !c_abi::present(dest, n_dest) || !c_abi::present(idx, n_vals) ||
      !c_abi::present(vals, n_vals) || !c_abi::present(out, n_dest))
    return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return combine<T>(c_abi::op_of(op), c_abi::in<T>(dest, n_dest), c_abi::in<int64_t>(idx, n_vals),
                      c_abi::in<T>(vals, n_vals), c_abi::out<T>(out, n_dest));
  });
}
