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

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/common/vector.h"
#include "exec/host/buffer_pool.h"
#include "flatten/flat_ir.h"
#include "lang/types.h"
#include "lang/value.h"
#include "runtime/cpu/segdes.h"

namespace ndp::exec::host {

/// The message for a function value the cpu backend would have to store.
inline constexpr const char* kNoFunctionValues = "functions as values are not supported by the cpu backend";

/// Raises the runtime error of kNoFunctionValues (its span is filled in by the executor).
[[noreturn]] void fail_function_value();

/// True for the types stored as one flat buffer: the scalars, streams and function values (the
/// Flat IR's rule, which its passes also decide by).
using flatten::is_flat_scalar;

/// The id of a function value in the process-wide table (equal values share an id).
int64_t function_id(const lang::FnObj& f);
/// The function value of an id made by function_id.
std::shared_ptr<const lang::FnObj> function_of(int64_t id);
/// For every id function_id has handed out so far, the position in `candidates` (function
/// values) of the first with the same target and id, or -1: Flat IR fn_tag as a table that
/// the executors index by the ids of a vector.
std::vector<int64_t> function_tags(const std::vector<lang::Value>& candidates);

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

/// sizeof the storage type of a flat scalar kind.
inline size_t storage_width(lang::TypeKind k) {
  return with_scalar(k, [](auto tag) { return sizeof(typename decltype(tag)::type); });
}

/// A buffer being filled: owned until `share()` hands it to a Vec. Its memory comes from the
/// buffer pool (Note [Buffer pool]) and goes back there when the last Vec sharing it is gone.
/// More elements than any machine's memory holds (2^56): a vector that would have more is
/// "Out of memory." before its size is computed in bytes, where it could wrap around (a
/// program asking for [0:2^62] in each of four instances).
inline constexpr int64_t kMaxElements = int64_t{1} << 56;

template <class T>
class Buf {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>,
                "Buf holds scalar elements in raw memory");

 public:
  Buf() : Buf(0) {}
  explicit Buf(int64_t n)  // uninitialised
      : n_(n), p_(static_cast<T*>(pooled_alloc(bytes_for(n))), [n](T* q) { pooled_free(q, bytes_for(n)); }) {}
  T* data() { return p_.get(); }
  const T* data() const { return p_.get(); }
  T& operator[](int64_t i) { return p_[i]; }
  int64_t size() const { return n_; }
  std::shared_ptr<const void> share() { return std::shared_ptr<const T[]>(std::move(p_)); }

 private:
  static size_t bytes_for(int64_t n) {
    if (n > kMaxElements) throw std::bad_alloc();  // more than any memory: "Out of memory."
    return static_cast<size_t>(n > 0 ? n : 1) * sizeof(T);
  }
  int64_t n_;
  std::shared_ptr<T[]> p_;
};

/// Positions or segment ids, one an element: a Buf of int64 that reads like the std::vector it
/// replaces. std::vector zeroes every entry before it is written, and its large blocks come
/// from fresh mmaps whose pages fault in at that zeroing (Note [Buffer pool]); an index vector
/// over all the elements of a level is written once and read once, so that was most of its
/// cost (quickhull's replicate of its lines over 2·10^7 points).
class Indices {
 public:
  explicit Indices(size_t n) : buf_(static_cast<int64_t>(n)) {}
  int64_t* data() { return buf_.data(); }
  const int64_t* data() const { return buf_.data(); }
  size_t size() const { return static_cast<size_t>(buf_.size()); }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  operator std::span<const int64_t>() const { return {data(), size()}; }

 private:
  Buf<int64_t> buf_;
};

// Note [Uniform buffers]
// Many vectors hold one value n times: a literal in n instances, the lengths of a seqlit (k
// each), the lengths of the halves of a split of equal-length segments, and everything computed
// elementwise from such vectors (`#v`, `(#v + 1) / 2`, `#v < 2`). Deep in a divide-and-conquer
// recursion n is large (bitonic sort: 2^19 segments of two elements), and writing, scanning and
// checking these vectors is most of the work. So a buffer may be *uniform*: made by
// uniform_buffer(value, n), it holds the value and the count instead of memory. Its shared_ptr
// points at a UniformBuffer and is recognised by its deleter (as_uniform), so that an alias of
// it (Vec::buffer(), whose get() is the filled memory) is recognised too. Operations that know
// about uniform buffers use the value, O(1) instead of a pass over n entries; any other reader
// calls data() and gets memory, filled on first use (once, thread-safely) and kept with the
// buffer, so every existing code path stays correct.
// A sequence Vec whose lengths buffer is uniform is *regular* (architecture.md's regular segment
// descriptor): its offsets are i·length, made only when something asks for them, and segs() is
// a regular descriptor, which the runtime handles without arrays.
class UniformBuffer {
 public:
  UniformBuffer(uint64_t bits, size_t width, int64_t n) : bits_(bits), width_(width), n_(n) {}
  ~UniformBuffer();
  UniformBuffer(const UniformBuffer&) = delete;
  UniformBuffer& operator=(const UniformBuffer&) = delete;

  /// The value, as the storage type T it was made with.
  template <class T>
  T value() const {
    static_assert(sizeof(T) <= sizeof(uint64_t));
    T x;
    std::memcpy(&x, &bits_, sizeof(T));
    return x;
  }
  uint64_t bits() const { return bits_; }
  int64_t size() const { return n_; }
  /// The n values in memory (made on the first call).
  const void* data() const;
  /// For a lengths buffer (int64): the n + 1 offsets i·value (made on the first call).
  const int64_t* offsets() const;

 private:
  uint64_t bits_;  // the value's bytes, zero-extended
  size_t width_;   // sizeof the storage type
  int64_t n_;
  mutable std::once_flag data_once_, offsets_once_;
  mutable void* data_ = nullptr;
  mutable int64_t* offsets_ = nullptr;
};

// Note [Generated buffers]
// Some vectors are read once, by one kernel, right after they are made. Stored, each costs a
// pass that writes it and the kernel's read of it back, from memory where it outgrows the
// caches. So such a buffer may be *generated*: it holds how to compute its values instead of
// memory, and is recognised by its deleter (as_generated), as a uniform buffer is. Two kinds:
// * A *view* (generated_view) says where each of its elements lies in another vector, a run
//   at a time: elt's rows of a regular nested vector (Batcher's halves, elt_regular) and an
//   interleave of regular rows of at least kLeastGeneratedRun (Batcher's [lows, highs]). A
//   kernel reads a view in place: it runs a run of instances at a time with its input pointer
//   moved over the run's source (a view of a view too), so Batcher's merge level reads the last
//   level's lows and highs where they are and writes the new ones, and nothing else moves.
//   Rows shorter than kLeastGeneratedRun would cost a kernel call for a few instances: elt's
//   view is *strided* (Strided: element p at (p / c)·stride + offset + p % c of a vector in
//   memory), and the compiled kernel takes it as a strided input, whose position it carries
//   through its loop (HostKernelFn in flatten/kernel_abi.h); an interpreted one fills it.
// * A *filled* buffer (generated_buffer) has a function that writes any range of its values
//   (fill(begin, end, out): values [begin, end) to out[0, end - begin)): the values a lifted
//   function spreads over its segments (quickhull's line ends over every point, quicksort's
//   pivot over its segment: Replicate). A kernel fills it a slice of kFillSlice instances at
//   a time into scratch that stays in the core's caches, just before the slice runs. Filling
//   costs what storing does where the vector fits the caches anyway, so these are made only
//   for vectors larger than the cores' caches (generated_worthwhile).
// A kernel statement (run_kernel and kernel_generator in exec/cpu/kernels.cpp) reads both
// kinds so. Any other reader calls data() and gets memory, filled on first use (once, in
// parallel) and kept with the buffer. A Vec over a generated buffer is never updated in place.
class Vec;
using FillRange = std::function<void(int64_t begin, int64_t end, void* out)>;
/// Where element p of a view lies: its elements [p, end) are elements [pos, pos + end - p) of
/// *source (a flat scalar Vec of the same type, which the view keeps alive).
struct Located {
  const Vec* source;
  int64_t pos;
  int64_t end;
};
using Locate = std::function<Located(int64_t p)>;
/// A view whose element p is source[(p / c)·stride + offset + p % c]: elt's rows of a regular
/// nested vector. A compiled kernel reads it so, whatever its rows' length (HostKernelFn's
/// strided inputs), and it fills without a call a row.
struct Strided {
  const Vec* source;  // kept alive by the view
  int64_t c, stride, offset;
};

class GeneratedBuffer {
 public:
  GeneratedBuffer(size_t width, int64_t n, FillRange fill) : width_(width), n_(n), fill_(std::move(fill)) {}
  GeneratedBuffer(size_t width, int64_t n, Locate locate, std::optional<Strided> strided = std::nullopt)
      : width_(width), n_(n), locate_(std::move(locate)), strided_(strided) {}
  ~GeneratedBuffer();
  GeneratedBuffer(const GeneratedBuffer&) = delete;
  GeneratedBuffer& operator=(const GeneratedBuffer&) = delete;

  size_t width() const { return width_; }
  int64_t size() const { return n_; }
  /// Writes values [begin, end) to out[0, end - begin).
  void fill(int64_t begin, int64_t end, void* out) const;
  /// Element p where it already is in memory, with `end` set to the end of the run that follows
  /// it there (a view over stored vectors, or any buffer once stored); else null.
  const void* in_place(int64_t p, int64_t& end) const;
  /// Whether data() has made the memory already (then reading it is cheaper than filling).
  bool filled() const { return filled_.load(std::memory_order_acquire); }
  /// Its stride, where it is a strided view of a vector in memory.
  std::optional<Strided> strided() const;
  /// The n values in memory (made on the first call).
  const void* data() const;

 private:
  size_t width_;
  int64_t n_;
  FillRange fill_;  // one of these two
  Locate locate_;
  std::optional<Strided> strided_;
  mutable std::once_flag data_once_;
  mutable std::atomic<bool> filled_ = false;
  mutable void* data_ = nullptr;
};

/// A buffer of n values of `width` bytes that `fill` writes when they are read.
std::shared_ptr<const void> generated_buffer(size_t width, int64_t n, FillRange fill);
/// A view of n values of `width` bytes, each where `locate` says (a strided one: `strided` too).
std::shared_ptr<const void> generated_view(size_t width, int64_t n, Locate locate,
                                           std::optional<Strided> strided = std::nullopt);
/// The GeneratedBuffer a buffer is, or null for any other buffer.
const GeneratedBuffer* as_generated(const std::shared_ptr<const void>& buf);
/// Below this many values a view costs more than it saves: they are stored.
inline constexpr int64_t kLeastGenerated = int64_t{1} << 12;
/// A view's runs are at least this long: a kernel call each.
inline constexpr int64_t kLeastGeneratedRun = 16;
/// Whether views may be made (NDP_GENERATED=0 stores every vector: for measuring what they
/// gain, and for telling a wrong answer's cause).
bool generated_allowed();
/// Whether a filled buffer of `bytes` saves more than it costs: larger than the caches of the
/// cores that run it. NDP_GENERATED=1 makes it any of kLeastGenerated values or more (the tests
/// of small vectors), NDP_GENERATED=0 none.
bool generated_worthwhile(int64_t bytes, int64_t n);

/// A buffer of n copies of `value` (T a storage type of with_scalar), without its memory.
std::shared_ptr<const void> uniform_buffer_bits(uint64_t bits, size_t width, int64_t n);
template <class T>
std::shared_ptr<const void> uniform_buffer(T value, int64_t n) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(uint64_t));
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return uniform_buffer_bits(bits, sizeof(T), n);
}
/// The UniformBuffer a buffer is, or null for an ordinary buffer.
const UniformBuffer* as_uniform(const std::shared_ptr<const void>& buf);

class Vec {
 public:
  using Buffer = std::shared_ptr<const void>;

  Vec() = default;

  const lang::Type* type() const { return type_; }
  int64_t size() const { return n_; }
  lang::TypeKind kind() const { return type_->kind; }

  // ---- scalars (is_flat_scalar(type())) ----
  template <class T>
  const T* data() const {
    return static_cast<const T*>(raw_data());
  }
  /// The buffer's memory (a uniform buffer's is made on first use; see buffer() for the handle).
  const void* raw_data() const { return uni_ ? uni_->data() : gen_ ? gen_->data() : buf_.get(); }
  /// The generated buffer of a scalar Vec (Note [Generated buffers]), or null.
  const GeneratedBuffer* generated() const { return gen_; }
  /// All instances hold one value: a scalar Vec over a uniform buffer, or of one instance.
  bool is_uniform() const { return is_flat_scalar(type_) && (uni_ != nullptr || n_ == 1); }
  /// That value (is_uniform()), as its storage type T.
  template <class T>
  T uniform_value() const {
    return uni_ ? uni_->value<T>() : data<T>()[0];
  }
  /// The bytes of that value (is_uniform()) or of the one length (is_regular()): equal bits,
  /// equal values.
  uint64_t uniform_bits() const {
    if (uni_) return uni_->bits();
    uint64_t bits = 0;
    std::memcpy(&bits, raw_data(), storage_width(kind()));
    return bits;
  }
  template <class T>
  std::span<const T> values() const {
    return {data<T>(), static_cast<size_t>(n_)};
  }
  /// The buffer with its memory: a uniform buffer is filled first. For code outside the cpu
  /// backend (and FlatWalk's Lengths), which may read buffer().get(); it stays uniform.
  std::shared_ptr<const void> buffer() const {
    return uni_ || gen_ ? std::shared_ptr<const void>(buf_, raw_data()) : buf_;
  }
  /// The buffer to share with another Vec as it is: a uniform or generated buffer stays
  /// unfilled (its get() is not the data: read through data() or raw_data()).
  const std::shared_ptr<const void>& shared_buffer() const { return buf_; }
  /// A sequence whose element vector (a flat scalar one, in memory) no other Vec shares: this
  /// Vec alone holds its element buffer (Note [Updates in place] in lifted_prims.h).
  bool elements_unshared() const {
    return a_ != nullptr && a_.use_count() == 1 && a_->uni_ == nullptr && a_->gen_ == nullptr && a_->buf_ != nullptr &&
           a_->buf_.use_count() == 1 && as_uniform(a_->buf_) == nullptr;
  }

  // ---- sequences ----
  const int64_t* lengths() const { return static_cast<const int64_t*>(raw_data()); }
  /// The lengths as an int vector (t); a regular sequence's stay uniform, and unfilled (buffer()
  /// would fill them: a memset of every length at each level of Batcher's merge).
  Vec lengths_vec(const lang::Type* t) const { return scalar(t, n_, uni_ ? buf_ : buffer()); }
  /// n + 1 offsets (a regular Vec's are made on first use).
  const int64_t* offsets() const { return uni_ ? uni_->offsets() : off_.get(); }
  /// The offsets when they are stored apart from the lengths; null for a regular Vec.
  const std::shared_ptr<const int64_t[]>& offsets_buffer() const { return off_; }
  /// Every sequence has the same length (the lengths buffer is uniform).
  bool is_regular() const { return uni_ != nullptr && type_->kind == lang::TypeKind::Seq; }
  /// That length (is_regular()).
  int64_t regular_length() const { return uni_->value<int64_t>(); }
  int64_t total() const { return uni_ ? n_ * regular_length() : off_[n_]; }
  int64_t length(int64_t i) const { return uni_ ? regular_length() : lengths()[i]; }
  runtime::SegView segs() const {
    return uni_ ? runtime::SegView::regular(n_, regular_length()) : runtime::SegView(ndp_segdes_irregular(n_, lengths(), off_.get()));
  }
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
  /// The same when the offsets are known already (n + 1 entries; null or ignored when the
  /// lengths buffer is uniform).
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
  const UniformBuffer* uni_ = nullptr;       // buf_ as a uniform buffer, or null
  const GeneratedBuffer* gen_ = nullptr;     // buf_ as a generated buffer (scalars only), or null
  std::shared_ptr<const int64_t[]> off_;     // sequence offsets (null when regular)
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
/// offsets_of for a shared lengths buffer, reusing the offsets computed for that buffer before
/// when they are still known (Note [Offsets cache] in vec.cpp); a uniform buffer's own offsets.
std::shared_ptr<const int64_t[]> offsets_for(const std::shared_ptr<const void>& lengths, int64_t n);

// ---- structural operations (any element type) ----

/// result[i] = v[idx[i]]; every index must be in [0, v.size()).
Vec take(const Vec& v, std::span<const int64_t> idx);
/// first, first + 1, ..., first + n - 1 (filled in parallel).
Indices iota_indices(int64_t n, int64_t first = 0);
/// Instances [begin, begin + count) of v: v itself where that is all of them, else a take.
Vec slice(const Vec& v, int64_t begin, int64_t count);
/// get(part) for every part, in order: the children of the parts of a concat or interleave
/// (of Vecs here, of the cuda backend's DVecs there).
template <class Parts, class Get>
auto map_parts(const Parts& parts, Get get) {
  std::vector<std::decay_t<decltype(*std::begin(parts))>> out;
  out.reserve(std::size(parts));
  for (const auto& p : parts) out.push_back(get(p));
  return out;
}

/// The instances of all parts, one part after another (all of one type).
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
/// The number of true instances of a bool Vec (O(1) when uniform).
int64_t count_true(const Vec& flags);
/// pack(v, flags) for a bool Vec of flags: v itself when they are all true (known at once when
/// uniform), no instances when all false.
Vec pack(const Vec& v, const Vec& flags);
/// The segments a lengths vector (int) describes, with their offsets kept alive: a regular
/// descriptor (and no offsets) when the lengths are uniform.
struct LengthSegs {
  std::shared_ptr<const int64_t[]> offsets;
  runtime::SegView view;
};
LengthSegs segments_of(const Vec& lengths);
/// The first instance i where a and b (sequence Vecs of one size) differ in length, or -1;
/// O(1) when both are regular.
int64_t first_length_difference(const Vec& a, const Vec& b);
/// Every part is uniform (scalars) or regular (sequences), all with one value or length: then
/// concat, interleave and merge of them are uniform or regular again.
bool same_uniform(std::span<const Vec> parts);
/// n instances, each the value of instance 0 of `v` (a flat scalar Vec with an instance, or a
/// uniform one): uniform, no memory.
Vec broadcast_first(const Vec& v, int64_t n);
/// Every Vec is uniform: an elementwise computation over them needs one instance computed
/// (first_instances) and its result broadcast.
bool all_uniform(std::span<const Vec> vs);
/// broadcast_first(v, 1) of each.
std::vector<Vec> first_instances(std::span<const Vec> vs);
/// v viewed at type t, where t and v's type differ only in datatypes against the tuples of
/// their fields (Flat IR Retype): the same buffers, other type tags.
Vec retype(lang::TypeContext& types, const Vec& v, const lang::Type* t);
/// n copies of the single instance of `one`.
Vec replicate_one(const Vec& one, int64_t n);
/// Instance k of v repeated segs.length(k) times, in order (segs.count() == v.size()).
Vec replicate_each(const Vec& v, runtime::SegView segs);
/// The same over segments whose offsets `segs` keeps alive: flat scalar values are generated,
/// not stored, where generated_worthwhile (Note [Generated buffers]).
Vec replicate_each(const Vec& v, const LengthSegs& segs);
/// replicate_each of flat scalar values as a filled buffer, whatever its size.
Vec generated_replicate(const Vec& v, const LengthSegs& segs);
/// The positions i with flags[i] true, in order.
Indices true_positions(const bool* flags, int64_t n);
/// For each element of a segmented vector, the segment it belongs to (segs.total() entries).
Indices segment_ids(runtime::SegView segs);

static_assert(FlatVector<Vec>);

}  // namespace ndp::exec::host
