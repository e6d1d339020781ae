// RANK_UP / RANK_DOWN and stable sort, flat and segmented, by LSD radix sort (Note [Sort order]).
#include <bit>
#include <cmath>
#include <type_traits>
#include <vector>

#include "c_abi.h"
#include "ndp/runtime_cpu.h"
#include "parallel.h"
#include "primitives.h"
#include "radix.h"

namespace ndp::runtime {

using detail::Range;

namespace {

template <class T>
inline constexpr bool sortable_v = is_element_v<T> && !std::is_same_v<T, bool>;

/// An unsigned key whose order is the element order of Note [Sort order].
template <class T>
uint64_t sort_key(T x) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return x;
  } else if constexpr (is_signed_int_v<T>) {
    using U = std::make_unsigned_t<T>;
    return U(x) ^ (U(1) << (8 * sizeof(T) - 1));  // flip the sign bit: two's complement -> offset binary
  } else {
    using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    constexpr U sign = U(1) << (8 * sizeof(T) - 1);
    if (std::isnan(x)) return U(~U(0));  // every NaN above +inf, all NaNs equal
    if (x == 0) x = 0;                   // -0.0 ties with 0.0
    U bits = std::bit_cast<U>(x);
    // Negative floats order backwards in their bits: flip them all; positives: set the sign bit.
    return (bits & sign) ? U(~bits) : U(bits | sign);
  }
}

/// The element order of every position, segment by segment: on return payload[q] is the
/// original position of the element at sorted position q, and the sorted positions of
/// segment k are [begin(k), end(k)), as in the input.
template <class T>
std::vector<int64_t> sorted_order(std::span<const T> v, SegView s, Order order) {
  int64_t n = s.total();
  constexpr int bytes = sizeof(T);
  const uint64_t mask = bytes == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * bytes)) - 1;
  const uint64_t flip = order == Order::descending ? mask : 0;  // reversed keys: ties stay in order
  std::vector<uint64_t> keys(n), key_buf;
  std::vector<int64_t> payload(n), payload_buf;
  detail::parallel_range(n, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      keys[p] = sort_key(v[p]) ^ flip;
      payload[p] = p;
    }
  });
  detail::radix_sort(keys, payload, bytes, key_buf, payload_buf);
  if (s.count() > 1 && n > 1) {
    // Segmented: a further stable sort by segment id makes the segment the major key.
    std::vector<int64_t> ids(n);
    segment_ids(s, ids);
    detail::parallel_range(n, [&](int64_t b, int64_t e) {
      for (int64_t q = b; q < e; ++q) keys[q] = static_cast<uint64_t>(ids[payload[q]]);
    });
    detail::radix_sort(keys, payload, detail::key_bytes_for(static_cast<uint64_t>(s.count() - 1)), key_buf,
                       payload_buf);
  }
  return payload;
}

}  // namespace

template <class T>
Status rank(std::span<const T> v, SegView s, Order order, std::span<int64_t> out) {
  if constexpr (!sortable_v<T>) {
    return status_of(NDP_UNSUPPORTED);
  } else {
    if (Status st = expect_size(v.size(), s.total()); !ok(st)) return st;
    if (Status st = expect_size(out.size(), s.total()); !ok(st)) return st;
    return detail::guarded([&] {
      std::vector<int64_t> from = sorted_order(v, s, order);
      detail::with_segs(s, [&](const auto& segs) {
        detail::parallel_pieces(segs, [&](const Range& r) {
          detail::for_each_piece(segs, r, [&](int64_t k, int64_t b, int64_t e) {
            for (int64_t q = b; q < e; ++q) out[from[q]] = q - segs.begin(k);
          });
        });
      });
      return ok_status();
    });
  }
}

template <class T>
Status sort(std::span<const T> v, SegView s, Order order, std::span<T> out) {
  if constexpr (!sortable_v<T>) {
    return status_of(NDP_UNSUPPORTED);
  } else {
    if (Status st = expect_size(v.size(), s.total()); !ok(st)) return st;
    if (Status st = expect_size(out.size(), s.total()); !ok(st)) return st;
    return detail::guarded([&] {
      std::vector<int64_t> from = sorted_order(v, s, order);
      detail::parallel_range(s.total(), [&](int64_t b, int64_t e) {
        for (int64_t q = b; q < e; ++q) out[q] = v[from[q]];
      });
      return ok_status();
    });
  }
}

#define NDP_RT_INSTANTIATE(T)                                                          \
  template Status rank<T>(std::span<const T>, SegView, Order, std::span<int64_t>); \
  template Status sort<T>(std::span<const T>, SegView, Order, std::span<T>);
NDP_RT_FOR_EACH_ELEMENT(NDP_RT_INSTANTIATE)
#undef NDP_RT_INSTANTIATE

}  // namespace ndp::runtime

using namespace ndp::runtime;

extern "C" {

ndp_status ndp_cpu_rank(ndp_elem_type type, const void* v, ndp_segdes s, ndp_order order, int64_t* out) {
  if (!c_abi::shape_ok(s) || !c_abi::present(v, s.total) || !c_abi::present(out, s.total)) return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return rank<T>(c_abi::in<T>(v, s.total), s, static_cast<Order>(order), c_abi::out<int64_t>(out, s.total));
  });
}

ndp_status ndp_cpu_sort(ndp_elem_type type, const void* v, ndp_segdes s, ndp_order order, void* out) {
  if (!c_abi::shape_ok(s) || !c_abi::present(v, s.total) || !c_abi::present(out, s.total)) return c_abi::bad_shape();
  return c_abi::dispatch(type, [&](auto t) {
    using T = decltype(t);
    return sort<T>(c_abi::in<T>(v, s.total), s, static_cast<Order>(order), c_abi::out<T>(out, s.total));
  });
}

}  // extern "C"
