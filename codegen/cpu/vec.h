// Vec: the run-time value of a Flat IR vector variable on the cpu backend (n instances of one
// closed element type, stored flat), and the structural operations every other part builds on.
//
// Note [Vec representation]
// * Scalars (int, float, bool, char, i32, f32, stream) are one buffer of `size()` elements of
//   their storage type (see `with_scalar`); bool is one byte holding 0 or 1, as the runtime
//   (runtime/cpu) expects.
// * A sequence type holds an int64 lengths buffer (one per instance), the offsets computed
//   from it (size() + 1 entries) and the Vec of all elements back to back.
// * Pairs are two Vecs (structure of arrays); a datatype value is the Vec of its fields (type
//   `subst(def->fields, args)`).
// * Buffers and children are shared and never written after construction, so First, Second,
//   Elements and Lengths are O(1) and a Vec is copied by copying a few pointers.
// * Function values are stored like streams: one int64 per instance, an id into a process-wide
//   table of interned function objects (`function_id`, `function_of`). The table holds one
//   entry per distinct function value (target and type arguments), so it stays tiny, and every
//   structural operation moves function values as plain integers.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "codegen/cpu/buffer_pool.h"
#include "lang/types.h"
#include "lang/value.h"
#include "runtime/cpu/segdes.h"

namespace ndp::codegen::cpu {

/// The message for a function value the cpu backend would have to store.
inline constexpr const char* kNoFunctionValues = "functions as values are not supported by the cpu backend";

/// Raises the runtime error of kNoFunctionValues (its span is filled in by the executor).
[[noreturn]] void fail_function_value();

/// True for the types stored as one flat buffer: the scalars, streams and function values.
inline bool is_flat_scalar(const lang::Type* t) {
  return t->kind <= lang::TypeKind::Stream || t->kind == lang::TypeKind::Fn;
}

/// The id of a function value in the process-wide table (equal values share an id).
int64_t function_id(const lang::FnObj& f);
/// The function value of an id made by function_id.
std::shared_ptr<const lang::FnObj> function_of(int64_t id);

template <class T>
struct Tag {
  using type = T;
};

/// Calls f(Tag<T>{}) with the storage type of a flat scalar kind: int and stream int64_t,
/// float double, bool bool, char uint8_t, i32 int32_t, f32 float.
template <class F>
decltype(auto) with_scalar(lang::TypeKind k, F&& f) {
  switch (k) {
    case lang::TypeKind::Float: return f(Tag<double>{});
    case lang::TypeKind::Bool: return f(Tag<bool>{});
    case lang::TypeKind::Char: return f(Tag<uint8_t>{});
    case lang::TypeKind::I32: return f(Tag<int32_t>{});
    case lang::TypeKind::F32: return f(Tag<float>{});
    default: return f(Tag<int64_t>{});  // Int, Stream, Fn (ids)
  }
}

/// A buffer being filled: owned until `share()` hands it to a Vec. Its memory comes from the
/// buffer pool (Note [Buffer pool]) and goes back there when the last Vec sharing it is gone.
template <class T>
class Buf {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>,
                "Buf holds scalar elements in raw memory");

 public:
  Buf() : Buf(0) {}
  explicit Buf(int64_t n)  // uninitialised
      : n_(n), p_(static_cast<T*>(pooled_alloc(bytes_for(n))), [n](T* q) { pooled_free(q, bytes_for(n)); }) {}
  T* data() { return p_.get(); }
  T& operator[](int64_t i) { return p_[i]; }
  int64_t size() const { return n_; }
  std::shared_ptr<const void> share() { return std::shared_ptr<const T[]>(std::move(p_)); }

 private:
  static size_t bytes_for(int64_t n) { return static_cast<size_t>(n > 0 ? n : 1) * sizeof(T); }
  int64_t n_;
  std::shared_ptr<T[]> p_;
};

class Vec {
 public:
  Vec() = default;

  const lang::Type* type() const { return type_; }
  int64_t size() const { return n_; }
  lang::TypeKind kind() const { return type_->kind; }

  // ---- scalars (is_flat_scalar(type())) ----
  template <class T>
  const T* data() const {
    return static_cast<const T*>(buf_.get());
  }
  template <class T>
  std::span<const T> values() const {
    return {data<T>(), static_cast<size_t>(n_)};
  }
  const std::shared_ptr<const void>& buffer() const { return buf_; }

  // ---- sequences ----
  const int64_t* lengths() const { return static_cast<const int64_t*>(buf_.get()); }
  const int64_t* offsets() const { return off_.get(); }
  const std::shared_ptr<const int64_t[]>& offsets_buffer() const { return off_; }
  int64_t total() const { return off_[n_]; }
  int64_t length(int64_t i) const { return lengths()[i]; }
  rt::SegView segs() const { return rt::SegView(ndp_segdes_irregular(n_, lengths(), off_.get())); }
  const Vec& elems() const { return *a_; }

  // ---- pairs and datatypes ----
  const Vec& first() const { return *a_; }
  const Vec& second() const { return *b_; }
  const Vec& fields() const { return *a_; }

  // ---- construction ----
  /// A scalar Vec over a filled buffer of n elements of the type's storage type.
  static Vec scalar(const lang::Type* t, int64_t n, std::shared_ptr<const void> buf);
  /// A sequence Vec: lengths (n entries, non-negative, summing to elems.size()).
  static Vec seq(const lang::Type* t, int64_t n, std::shared_ptr<const void> lengths, Vec elems);
  /// The same when the offsets are known already (n + 1 entries).
  static Vec seq(const lang::Type* t, int64_t n, std::shared_ptr<const void> lengths,
                 std::shared_ptr<const int64_t[]> offsets, Vec elems);
  static Vec pair(const lang::Type* t, Vec a, Vec b);
  static Vec data(const lang::Type* t, Vec fields);
  /// A Vec of an open type (a type variable): only with no instances.
  static Vec open_type(const lang::Type* t, int64_t n);

 private:
  const lang::Type* type_ = nullptr;
  int64_t n_ = 0;
  std::shared_ptr<const void> buf_;          // scalar data, or sequence lengths
  std::shared_ptr<const int64_t[]> off_;     // sequence offsets
  std::shared_ptr<const Vec> a_, b_;         // elements / first / fields, and second
};

/// Copies a run of `len` elements; short runs (the leaves of a recursion, where most segments
/// hold one or two elements) skip memcpy's call.
template <class T>
inline void copy_run(T* dst, const T* src, int64_t len) {
  if (len <= 4) {
    for (int64_t x = 0; x < len; ++x) dst[x] = src[x];
  } else {
    std::memcpy(dst, src, static_cast<size_t>(len) * sizeof(T));
  }
}

/// offsets[0] = 0, offsets[i+1] = offsets[i] + lengths[i] (n + 1 entries).
std::shared_ptr<const int64_t[]> offsets_of(const int64_t* lengths, int64_t n);
/// Room for n + 1 offsets, uninitialised, from the buffer pool like the vectors themselves:
/// offsets are made as often as vectors.
std::shared_ptr<int64_t[]> new_offsets(int64_t n);
/// The offsets of n segments of `length` elements each (i·length, no scan).
std::shared_ptr<const int64_t[]> regular_offsets(int64_t n, int64_t length);
/// offsets_of for a shared lengths buffer, reusing the offsets computed for that buffer before
/// when they are still known (Note [Offsets cache] in vec.cpp).
std::shared_ptr<const int64_t[]> offsets_for(const std::shared_ptr<const void>& lengths, int64_t n);

// ---- structural operations (any element type) ----

/// result[i] = v[idx[i]]; every index must be in [0, v.size()).
Vec take(const Vec& v, std::span<const int64_t> idx);
/// The instances of all parts, one part after another (all of one type).
/// get(part) for every part, in order: the children of the parts of a concat or interleave.
template <class Get>
std::vector<Vec> map_parts(std::span<const Vec> parts, Get get) {
  std::vector<Vec> out;
  out.reserve(parts.size());
  for (const Vec& p : parts) out.push_back(get(p));
  return out;
}

Vec concat(std::span<const Vec> parts);
inline Vec append(const Vec& a, const Vec& b) {
  Vec parts[2] = {a, b};
  return concat(parts);
}
/// Instance i·k + j of the result is instance i of parts[j] (k parts of n instances each, all
/// of one type): the per-instance sequences of a SeqLit, flattened.
Vec interleave(std::span<const Vec> parts);

/// A bool vector cut into blocks, with the number of true flags before each block: what
/// merge_flags needs, computed once for every component of a structured merge.
class FlagSplit {
 public:
  FlagSplit(const bool* flags, int64_t n);
  const bool* flags() const { return flags_; }
  int64_t size() const { return n_; }
  int64_t blocks() const { return blocks_; }
  int64_t begin(int64_t b) const { return static_cast<int64_t>(static_cast<__int128>(n_) * b / blocks_); }
  /// The true flags before block b.
  int64_t a_start(int64_t b) const { return a_start_[static_cast<size_t>(b)]; }
  int64_t a_count() const { return a_start_.back(); }

 private:
  const bool* flags_;
  int64_t n_;
  int64_t blocks_;
  std::vector<int64_t> a_start_;
};

/// Instance i of the result is a[#true flags before i] where flags[i] is true, else
/// b[#false flags before i] (Flat IR Merge); a and b of one type.
Vec merge_flags(const FlagSplit& flags, const Vec& a, const Vec& b);

/// The instances whose flag is true, in order (v itself when every flag is true).
Vec pack(const Vec& v, const bool* flags);
/// The number of true flags among n.
int64_t count_true(const bool* flags, int64_t n);
/// v viewed at type t, where t and v's type differ only in datatypes against the tuples of
/// their fields (Flat IR Retype): the same buffers, other type tags.
Vec retype(lang::TypeContext& types, const Vec& v, const lang::Type* t);
/// n copies of the single instance of `one`.
Vec replicate_one(const Vec& one, int64_t n);
/// Instance k of v repeated segs.length(k) times, in order (segs.count() == v.size()).
Vec replicate_each(const Vec& v, rt::SegView segs);
/// The positions i with flags[i] true, in order.
std::vector<int64_t> true_positions(const bool* flags, int64_t n);
/// For each element of a segmented vector, the segment it belongs to (segs.total() entries).
std::vector<int64_t> segment_ids(rt::SegView segs);

}  // namespace ndp::codegen::cpu
