// Where a recursion loop laid out before its calls puts its results (Note [Results laid out
// before the calls] in flatten/flat_ir.h): one vector of elements, each instance's result row
// written at the place its level gave it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "lang/types.h"

namespace ndp::exec {

/// The elements of a laid-out loop's results. V is the backend's vector; a backend that lays
/// out results makes one with `placed_rows(result type, elements)` (exec/common/flat_walk.h).
template <class V>
class PlacedRows {
 public:
  virtual ~PlacedRows() = default;
  /// Row i of `rows` (a vector of sequences of the result's element type) becomes the
  /// elements [at[i], at[i] + its length). Rows placed by different threads do not overlap.
  virtual void put(const V& rows, std::span<const int64_t> at) = 0;
  /// Row which[k] of `rows` becomes the elements [at[k], at[k] + its length): some rows of a
  /// vector, placed without packing them first (Note [Base rows from the argument] in
  /// flatten/passes/lay_out_results.h).
  virtual void put_rows_of(const V& rows, std::span<const int64_t> which, std::span<const int64_t> at) = 0;
  /// The loop's result, `t`: the placed elements cut into rows of `lengths`.
  virtual V rows(const lang::Type* t, const std::vector<int64_t>& lengths) = 0;
};

}  // namespace ndp::exec
