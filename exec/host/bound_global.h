// A global variable's value handed to an executor as a vector, for one run.
//
// The embedding API (include/ndp/ndp.hpp) calls a function `f` by running the flattened body
// `f(ARG)`, where ARG is a global variable made for the function handle. The call's argument
// reaches the Global statement that reads ARG as a Vec of one instance, built straight from the
// caller's arrays, instead of going through an interpreter Value (a tree of one object per
// element, far too slow for arrays of millions).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "exec/host/vec.h"

namespace ndp::exec::host {

struct BoundGlobal {
  uint32_t global = 0;  // the id of a Variable global in the Core program
  Vec value;            // one instance of the global's type
  /// Or, on the cuda backend, the instance in device memory: an exec::cuda::DVec, which
  /// exec/host cannot name (the embedding API's ndp::Array, kept on the GPU between calls).
  std::shared_ptr<const void> device;
};

/// A value going into or coming out of an executor: `vec` on the host, or `device` as in
/// BoundGlobal.
struct ExecValue {
  Vec vec;
  std::shared_ptr<const void> device;
};

/// The binding of `global` in `bound`, or null.
inline const BoundGlobal* find_bound(std::span<const BoundGlobal> bound, uint32_t global) {
  for (const BoundGlobal& b : bound)
    if (b.global == global) return &b;
  return nullptr;
}

}  // namespace ndp::exec::host
