// The structural interface every executor's vector type implements: what FlatWalk
// (exec/common/flat_walk.h) needs to run the statements that only restructure vectors, checked
// by the compiler instead of kept in step by hand.
#pragma once

#include <concepts>
#include <cstdint>

#include "lang/types.h"

namespace ndp::exec {

/// A vector of n instances of one element type, stored as architecture.md's "Values" says:
/// host::Vec (host memory) and cuda::DVec (device memory) are the two models.
template <class V>
concept FlatVector = std::default_initializable<V> && std::copy_constructible<V> &&
    requires(const V v, const lang::Type* t, int64_t n, lang::TypeContext& types) {
      typename V::Buffer;  // the storage handle of one buffer (a shared pointer)
      { v.type() } -> std::same_as<const lang::Type*>;
      { v.size() } -> std::same_as<int64_t>;
      { v.buffer() } -> std::convertible_to<typename V::Buffer>;  // a scalar's or a sequence's lengths
      { v.elems() } -> std::convertible_to<const V&>;               // a sequence's elements
      { v.lengths_vec(t) } -> std::same_as<V>;                       // a sequence's lengths, as ints
      { v.first() } -> std::convertible_to<const V&>;               // a pair's components
      { v.second() } -> std::convertible_to<const V&>;
      { V::pair(t, v, v) } -> std::same_as<V>;
      { V::scalar(t, n, v.buffer()) } -> std::same_as<V>;
      { retype(types, v, t) } -> std::same_as<V>;  // the same buffers at type t (found by ADL)
    };

}  // namespace ndp::exec
