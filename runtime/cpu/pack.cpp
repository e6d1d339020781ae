// PACK: the lengths of the packed segments, and the order-preserving compaction of the data.
#include <utility>
#include <vector>

#include "c_abi.h"
#include "ndp/runtime_cpu.h"
#include "parallel.h"
#include "primitives.h"
#include "reduce_impl.h"
#include "window_load.h"

namespace ndp::rt {

Status pack_lengths(std::span<const bool> flags, SegView s, std::span<int64_t> out_lengths, int64_t* total) {
  if (Status st = expect_size(flags.size(), s.total()); !ok(st)) return st;
  if (Status st = expect_size(out_lengths.size(), s.count()); !ok(st)) return st;
  // A segmented + reduction of the flags read as 0/1.
  return detail::guarded([&] {
    detail::with_segs(s, [&](const auto& segs) {
      detail::reduce_segs<OpFn<Op::plus, int64_t>>(segs, [&](int64_t p) { return int64_t{flags[p]}; },
                                                   out_lengths.data());
    });
    if (total) {
      int64_t sum = 0;
      seg_reduce<int64_t>(Op::plus, out_lengths, SegView::flat(s.count()), std::span<int64_t>(&sum, 1));
      *total = sum;
    }
    return ok_status();
  });
}

namespace {

/// PACK's data with the flags read through `flag(p)` (each chunk of each pass through its own
/// copy, p increasing: window_load.h); `allocate(count)` gives the output, or a failure.
template <class T, class Flag, class Allocate>
Status pack_with(std::span<const T> v, const Flag& flag_all, Allocate&& allocate) {
  int64_t n = static_cast<int64_t>(v.size());
  return detail::guarded([&] {
    int64_t nchunks = detail::chunk_count(n);
    std::vector<int64_t> start(nchunks + 1, 0);
    detail::parallel_chunks(nchunks, [&](int64_t c) {
      Flag flag = flag_all;
      int64_t count = 0;
      for (int64_t p = detail::split_point(n, c, nchunks), e = detail::split_point(n, c + 1, nchunks); p < e; ++p)
        count += flag(p);
      start[c + 1] = count;
    });
    for (int64_t c = 0; c < nchunks; ++c) start[c + 1] += start[c];
    auto [st, o] = allocate(start[nchunks]);
    if (!ok(st)) return st;
    detail::parallel_chunks(nchunks, [&](int64_t c) {
      // Branch-free: every element is written at the next free slot and the slot advances only
      // for a kept one (random flags make a branch mispredict half the time). The loop stops
      // once the chunk's slots are full, so no write reaches the next chunk's part of `out`.
      Flag flag = flag_all;
      int64_t w = start[c], w_end = start[c + 1];
      for (int64_t p = detail::split_point(n, c, nchunks), e = detail::split_point(n, c + 1, nchunks);
           p < e && w < w_end; ++p) {
        o[w] = v[p];
        w += flag(p);
      }
    });
    return ok_status();
  });
}

}  // namespace

template <class T>
Status pack(std::span<const T> v, std::span<const bool> flags, std::span<T> out) {
  if (Status st = expect_size(flags.size(), v.size()); !ok(st)) return st;
  const bool* f = flags.data();
  return pack_with(v, [f](int64_t p) { return f[p]; },
                   [&](int64_t count) { return std::pair<Status, T*>(expect_size(out.size(), count), out.data()); });
}

template <class T>
Status pack_generated(std::span<const T> v, const Generate<bool>& flags, const std::function<T*(int64_t)>& allocate) {
  return pack_with(v, detail::WindowLoad<bool>(flags, static_cast<int64_t>(v.size())),
                   [&](int64_t count) { return std::pair<Status, T*>(ok_status(), allocate(count)); });
}

#define NDP_RT_INSTANTIATE(T)                                                           \
  template Status pack<T>(std::span<const T>, std::span<const bool>, std::span<T>); \
  template Status pack_generated<T>(std::span<const T>, const Generate<bool>&, const std::function<T*(int64_t)>&);
NDP_RT_FOR_EACH_ELEMENT(NDP_RT_INSTANTIATE)
#undef NDP_RT_INSTANTIATE

}  // namespace ndp::rt

using namespace ndp::rt;

extern "C" {

ndp_status ndp_cpu_pack_lengths(const uint8_t* flags, ndp_segdes s, int64_t* out_lengths, int64_t* total) {
  if (!c_abi::shape_ok(s) || !c_abi::present(flags, s.total) || !c_abi::present(out_lengths, s.count))
    return c_abi::bad_shape();
  return c_abi::guard([&] {
    return pack_lengths(c_abi::in<bool>(flags, s.total), s, c_abi::out<int64_t>(out_lengths, s.count), total);
  });
}

ndp_status ndp_cpu_pack(ndp_elem_type type, const void* v, const uint8_t* flags, int64_t n, void* out,
                        int64_t out_count) {
  if (n < 0 || out_count < 0 || !c_abi::present(v, n) || !c_abi::present(flags, n) || !c_abi::present(out, out_count))
    return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return pack<T>(c_abi::in<T>(v, n), c_abi::in<bool>(flags, n), c_abi::out<T>(out, out_count));
  });
}

}  // extern "C"
