// Status records for the C++ runtime API: the C ABI's ndp_status plus constructors.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ndp/runtime.h"

namespace ndp::runtime {

using Status = ndp_status;

inline Status ok_status() { return Status{NDP_OK, -1, -1, -1}; }
inline bool ok(const Status& s) { return s.code == NDP_OK; }

inline Status index_out_of_bounds(int64_t position, int64_t index, int64_t length) {
  return Status{NDP_INDEX_OUT_OF_BOUNDS, position, index, length};
}
inline Status length_mismatch(int64_t position, int64_t found, int64_t expected) {
  return Status{NDP_LENGTH_MISMATCH, position, found, expected};
}
inline Status not_a_permutation(int64_t position, int64_t target, int64_t length) {
  return Status{NDP_NOT_A_PERMUTATION, position, target, length};
}
inline Status negative_length(int64_t position, int64_t value) {
  return Status{NDP_NEGATIVE_LENGTH, position, value, -1};
}
inline Status status_of(ndp_status_code code) { return Status{code, -1, -1, -1}; }

/// A whole array of the wrong size (position -1).
inline Status expect_size(std::size_t found, int64_t expected) {
  if (static_cast<int64_t>(found) == expected) return ok_status();
  return length_mismatch(-1, static_cast<int64_t>(found), expected);
}

/// The failure with the lower position, so that parallel checks report deterministically.
inline Status first_failure(const Status& a, const Status& b) {
  if (ok(a)) return b;
  if (ok(b)) return a;
  return b.position < a.position ? b : a;
}

}  // namespace ndp::runtime
