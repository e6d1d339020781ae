// Private: helpers for the extern "C" entry points (type dispatch, spans over raw pointers).
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <span>

#include "ndp/interrupt.h"
#include "ndp/runtime.h"
#include "ops.h"
#include "segdes.h"
#include "status.h"

namespace ndp::runtime::c_abi {

/// An enum argument's bits as an int. A C caller may pass any int where the enum is declared;
/// reading it as the C++ enum type would be undefined behaviour outside its values.
template <class Enum>
int raw_value(const Enum& e) {
  static_assert(sizeof(Enum) == sizeof(int));
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

/// Calls fn(T{}) with T the storage type of `type`; no exception escapes.
template <class Fn>
ndp_status dispatch(const ndp_elem_type& type, Fn&& fn) noexcept {
  try {
    switch (raw_value(type)) {
      case NDP_I64: return fn(int64_t{});
      case NDP_F64: return fn(double{});
      case NDP_I32: return fn(int32_t{});
      case NDP_F32: return fn(float{});
      case NDP_BOOL: return fn(bool{});
      case NDP_CHAR: return fn(uint8_t{});
    }
    return status_of(NDP_INVALID_ARGUMENT);
  } catch (const std::bad_alloc&) {
    return status_of(NDP_OUT_OF_MEMORY);
  } catch (const ndp::Interrupted&) {
    return status_of(NDP_INTERRUPTED);
  } catch (...) {
    return status_of(NDP_INTERNAL_ERROR);
  }
}

/// Runs a type-independent entry point; no exception escapes.
template <class Fn>
ndp_status guard(Fn&& fn) noexcept {
  return dispatch(NDP_I64, [&](auto) { return fn(); });
}

/// The O(1) sanity checks every entry point makes on a descriptor (validate() does the O(m) ones).
inline bool shape_ok(const ndp_segdes& s) {
  if (s.count < 0 || s.total < 0) return false;
  if (s.offsets == nullptr) return s.lengths == nullptr && s.regular_length >= 0 && s.total == s.count * s.regular_length;
  return s.lengths != nullptr || s.count == 0;
}

/// A data array is present when it is non-null or empty.
inline bool present(const void* p, int64_t n) { return p != nullptr || n == 0; }

template <class T>
std::span<const T> in(const void* p, int64_t n) {
  return {static_cast<const T*>(p), static_cast<std::size_t>(n)};
}
template <class T>
std::span<T> out(void* p, int64_t n) {
  return {static_cast<T*>(p), static_cast<std::size_t>(n)};
}

inline Op op_of(const ndp_op& op) { return static_cast<Op>(raw_value(op)); }

inline Status bad_shape() { return status_of(NDP_INVALID_ARGUMENT); }

}  // namespace ndp::runtime::c_abi
