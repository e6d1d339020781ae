// DVec: the run-time value of a Flat IR vector variable on the cuda backend: the cpu backend's
// Vec (Note [Vec representation] in exec/host/vec.h) with its buffers in device memory.
//
// Note [DVec]
// * The shape is Vec's: scalars are one buffer of the storage type; a sequence has lengths,
//   offsets (n + 1 entries) and the elements back to back; pairs and datatypes are
//   structure of arrays. Function values are interned ids (int64), as on the cpu backend.
// * A sequence's element count (`total`) is known on the host (elems().size()), so every
//   allocation that depends on it needs no read-back.
// * Buffers are shared and never written after construction, so structural operations that
//   keep data (First, Elements, Retype) cost no device work.
//
// Note [Deferred vectors]
// A flat scalar DVec may be deferred: its size is known but its buffer is computed when first
// read (buffer(), data()), once for all its copies. Three statements make them:
// * Iota: a lifted function's instance ids (an SpMV called once: one id, never read).
// * Replicate: the instance ids and values that a lifted function spreads over its segments
//   are often read by nothing that needs them stored (an index_shared into a one-sequence
//   vector ignores its instance ids), and then never computed.
// * IndexShared: the gathered elements are `source[index[i]]`. A fused kernel or consumer
//   kernel that reads such an input reads source through index itself (Note [Fused gathers],
//   kernels.h), so the gathered vector is never stored: an SpMV's x[c] is read inside its row
//   sums.
// Anything else reads the buffer and gets the values computed.
//
// Note [Regular elt views]
// Batcher's merge takes both halves of every segment, elt(halves, 0) and elt(halves, 1) of an
// even partition, and reads them only in the kernels of min and max. Of a regular nested vector
// (Note [Known values] in device_vec.cpp) with a known index j, instance r's elements are the c
// at (r·k + j)·c of the inner elements: element i of the result is source[(i / c)·k·c + j·c +
// i % c]. So the elt is a deferred view of the source, which a fused kernel reads in place (the
// numbers are kernel parameters, GatheredInput::affine): no positions, no copy. Anything else
// reads its buffer and gets the elements gathered, in one launch. A view's places within a
// block of c may lie `inner` apart, not only next to each other: a formula's columns (Note
// [Affine indices] in affine_index.h), where positions stored had cost a launch more for the
// gather and another for each fused kernel (a counting sort's pass: two of its 15, session 50).
//
// Note [Narrow gather positions]
// An SpMV over i32 columns, {sum({v * x[i64(c)] : (c, v) in row}) : row in rows}, gathers x
// through i64(c): computed, the widened positions would cost a pass that reads 4 bytes and
// writes 8 a nonzero, and the gather would read 8 more where 4 hold the same values. So the
// conversion of a flat i32 vector to int is deferred (deferred_widening, CudaExecutor's Prim),
// and keeps its source: a kernel that gathers through it reads the i32 positions and widens
// them itself (GatheredInput::narrow, compile_element_ptx), and an SpMV moves the 12 bytes a
// nonzero that CSR with 32-bit indices does. Anything else that reads the widened vector,
// a bounds check included, gets it computed.
//
// Note [Checked gathers]
// A deferred gather of one sequence (IndexShared) may leave its bounds check to whoever reads
// it, which saves a pass over the indices and a read-back (an SpMV's columns: 8 bytes a nonzero):
// * a consumer kernel reads it guarded: a bad position reads element 0 and sets a flag word
//   (compile_element_ptx), which the host reads after the kernel and then reports the gather's
//   error (check_consumer_gathers, consumer_kernels.cpp);
// * anything else (a fused kernel, a materialisation) checks it first (check_gather: the
//   first_out_of_range pass and its read-back, as IndexShared did). Outside the library
//   (`defers_check`) the check waits for nothing: a pass copies the positions with a bad one
//   as 0, which the gather reads from then on, and lowers a deferred failure record (Note
//   [Deferred failure records] in gpu.h) that raises the gather's error at the next read-back.
// A gather that nobody reads is checked when its last copy goes: the check is queued on the
// Gpu (Gpu::defer_check) and runs after the statement (CudaExecutor), so the error still comes
// from the evaluation that made the gather.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "exec/cuda/affine_index.h"
#include "lang/types.h"
#include "runtime/gpu/primitives.h"

namespace ndp::exec::cuda {

class Gpu;
using runtime::cuda::CUdeviceptr;
using DBuf = std::shared_ptr<const runtime::cuda::DeviceBuffer>;

/// The runtime's element type of a flat scalar type (streams and function ids: int64).
ndp_elem_type elem_type(const lang::Type* t);
inline int elem_bytes(const lang::Type* t) { return runtime::gpu::elem_bytes(elem_type(t)); }

/// Raises an unchecked gather's error (throws), given the first index out of range and the
/// length it was checked against.
using GatherFailure = std::function<void(int64_t index, int64_t length)>;

class DVec {
 public:
  using Buffer = DBuf;

  DVec() = default;

  const lang::Type* type() const { return type_; }
  int64_t size() const { return n_; }
  lang::TypeKind kind() const { return type_->kind; }

  // ---- scalars ----
  CUdeviceptr data() const {
    const DBuf& b = buffer();
    return b ? b->pointer() : 0;
  }
  /// The buffer, computed now if the vector is deferred.
  const DBuf& buffer() const {
    if (!buf_ && deferred_) buf_ = deferred_->get();
    return buf_;
  }
  /// A deferred vector's values are not computed yet (Note [Deferred vectors]).
  bool pending() const { return !buf_ && deferred_ && !deferred_->made; }
  /// Deferred gathers: element i is gather_source()[gather_index()[i]] (both flat scalar
  /// vectors, the indices int64); null otherwise.
  const DVec* gather_source() const { return deferred_ ? deferred_->source.get() : nullptr; }
  const DVec* gather_index() const { return deferred_ ? deferred_->index.get() : nullptr; }
  /// A deferred widening i64(v) of an i32 vector v (Note [Narrow gather positions]): v, kept
  /// after the widened values are made; null otherwise.
  const DVec* narrow_source() const { return deferred_ ? deferred_->narrow.get() : nullptr; }
  /// A deferred gather whose indices are not yet known to be in range (Note [Checked gathers]).
  bool gather_unchecked() const { return deferred_ && deferred_->fail; }
  /// An unchecked gather whose check reads its failure later (Note [Checked gathers]): checking
  /// it replaces its positions, so another gather through the same ones is no checked one.
  bool gather_defers_check() const { return gather_unchecked() && deferred_->defers_check; }
  /// Checks an unchecked gather's indices now (one pass and a read-back); throws its error.
  void check_gather() const;
  /// A guarded reader found every index in range / found one out of range (throws the error).
  void gather_checked() const;
  [[noreturn]] void gather_failed() const;

  /// The one value every instance holds, where the host knows it (Note [Known values]).
  std::optional<uint64_t> known_bits() const {
    return deferred_ && kind() != lang::TypeKind::Seq ? deferred_->known : std::nullopt;
  }

  // ---- sequences ----
  CUdeviceptr lengths() const { return data(); }
  CUdeviceptr offsets() const {
    const DBuf& o = offsets_buffer();
    return o ? o->pointer() : 0;
  }
  /// The offsets, computed now for a regular sequence that has not needed them yet.
  const DBuf& offsets_buffer() const {
    if (!off_ && lazy_offsets_) off_ = lazy_offsets_->get();
    return off_;
  }
  int64_t total() const { return a_->size(); }
  /// The length of every sequence, where the host knows that they are all one length.
  std::optional<int64_t> regular_length() const {
    if (!deferred_ || kind() != lang::TypeKind::Seq || !deferred_->known) return std::nullopt;
    return static_cast<int64_t>(*deferred_->known);
  }
  runtime::gpu::DSegs segs() const {
    if (std::optional<int64_t> c = regular_length()) return runtime::gpu::DSegs{n_, total(), 0, *c};
    return runtime::gpu::DSegs::irregular(n_, total(), offsets());
  }
  const DVec& elems() const { return *a_; }

  // ---- pairs and datatypes ----
  const DVec& first() const { return *a_; }
  const DVec& second() const { return *b_; }
  const DVec& fields() const { return *a_; }

  // ---- construction ----
  static DVec scalar(const lang::Type* t, int64_t n, DBuf buf);
  /// A sequence from its lengths and offsets buffers (offsets[0] == 0 and offsets[n] ==
  /// elems.size(): the rows cover the elements, in order).
  static DVec seq(const lang::Type* t, int64_t n, DBuf lengths, DBuf offsets, DVec elems);
  static DVec pair(const lang::Type* t, DVec a, DVec b);
  static DVec data(const lang::Type* t, DVec fields);
  static DVec open_type(const lang::Type* t, int64_t n);
  /// A flat scalar vector of n elements whose buffer `make` computes when first read.
  static DVec deferred(const lang::Type* t, int64_t n, std::function<DBuf()> make);
  /// n copies of the one value of `one`, deferred as `make` computes them; a fused kernel may
  /// read `one` instead (Note [Broadcast inputs] in kernels.h).
  static DVec deferred_broadcast(const lang::Type* t, int64_t n, DVec one, std::function<DBuf()> make);
  /// The one value a pending deferred_broadcast repeats, or null.
  const DVec* broadcast_source() const { return pending() ? deferred_->broadcast.get() : nullptr; }
  /// Instance k of `values` over segment k of `segs` (more than one, whose offsets `offsets`
  /// holds where irregular), deferred as `make` computes them; a fused kernel may read the
  /// values at each element's segment instead (Note [Spread inputs] in kernels.h).
  static DVec deferred_spread(const lang::Type* t, DVec values, runtime::gpu::DSegs segs, DBuf offsets,
                              std::function<DBuf()> make);
  /// Each element's place in its segment of `segs` (0, 1, ... in every segment: a lifted
  /// index), deferred as `make` computes them; a fused kernel may compute them instead.
  static DVec deferred_rank(const lang::Type* t, runtime::gpu::DSegs segs, DBuf offsets, std::function<DBuf()> make);
  /// deferred_rank of `segs`, stored in one launch (ndp_segment_ranks) when first read.
  static DVec ranks(Gpu& g, const lang::Type* t, runtime::gpu::DSegs segs, DBuf offsets);
  /// A pending deferred_rank.
  bool pending_rank() const { return pending() && deferred_->rank; }
  /// The values a pending deferred_spread repeats, or null; and their (or a rank's) segments.
  const DVec* spread_source() const { return pending() ? deferred_->spread.get() : nullptr; }
  runtime::gpu::DSegs spread_segments() const { return deferred_->segs; }
  /// 0, 1, ..., n - 1 (int), deferred: a fused kernel takes instance i's value as i (Note [Iota
  /// inputs] in kernels.h); anything else gets it stored.
  static DVec deferred_iota(Gpu& g, const lang::Type* t, int64_t n);
  /// A pending deferred_iota.
  bool pending_iota() const { return pending() && deferred_->iota; }
  /// n ints known as a formula of the instance (Note [Affine indices] in affine_index.h),
  /// computed in one launch when first read.
  static DVec deferred_index(Gpu& g, const lang::Type* t, int64_t n, AffineIndex f);
  /// The formula of this int vector's values, where the host knows one: a known value, an
  /// iota, a rank or a spread over regular segments, a broadcast, a deferred_index.
  std::optional<AffineIndex> index_form() const;
  /// result[i] = source[index[i]] (flat scalars; index int64), deferred. With `fail`, the
  /// indices are unchecked and `fail` reports the first one out of [0, source.size()); else
  /// every one is in range.
  static DVec deferred_gather(Gpu& g, DVec source, DVec index, GatherFailure fail = nullptr, bool defers_check = false);
  /// The int vector i64(narrow) of an i32 vector, deferred; `make` computes its buffer.
  static DVec deferred_widening(const lang::Type* int_type, DVec narrow, std::function<DBuf()> make);
  /// Blocks of c elements of a and of b in turn (the elements of [x, y] over two regular
  /// sequences of c elements each, Note [Interleaved blocks] in kernels.h), deferred as `make`
  /// computes them; a fused kernel may read the two in place.
  static DVec deferred_interleave(const lang::Type* t, DVec a, DVec b, int64_t c, std::function<DBuf()> make);
  /// A pending deferred_interleave's two sources (else null), and its block.
  const DVec* interleave_source(int which) const { return pending() ? deferred_->interleaved[which].get() : nullptr; }
  int64_t interleave_block() const { return deferred_->block; }
  /// The shape of a regular elt view (Note [Regular elt views]).
  struct Affine {
    int64_t c = 0, stride = 0, offset = 0, inner = 1;
    bool operator==(const Affine&) const = default;
  };
  /// A pending regular elt view's elements' source; null otherwise.
  const DVec* view_source() const { return pending() ? deferred_->view.get() : nullptr; }
  /// Its shape: element i is view_source()[(i / c)·stride + (i % c)·inner + offset].
  Affine view_shape() const { return deferred_->affine; }
  /// That view of `source` (flat scalars), n elements, deferred: a fused kernel reads it in
  /// place; anything else gets it gathered.
  static DVec deferred_view(Gpu& g, DVec source, int64_t n, Affine shape);
  /// n copies of `bits`, a value the host knows (Note [Known values]): a deferred broadcast
  /// whose buffers are filled when first read.
  static DVec known(Gpu& g, const lang::Type* t, int64_t n, uint64_t bits);
  /// n sequences of c elements each over `elems` (n·c of them): regular (Note [Known values]),
  /// its lengths and offsets made only when something reads them.
  static DVec regular(Gpu& g, const lang::Type* t, int64_t n, int64_t c, DVec elems);
  /// A sequence's lengths as an int vector (t), known where the sequence is regular.
  DVec lengths_vec(const lang::Type* t) const;
  /// These lengths (an int vector) holding alive the offsets a scan of them made: the segment
  /// cache (Note [Segment descriptor cache] in device_vec.cpp) keeps them by weak reference, so
  /// a sequence later made of these lengths (a filter group's counts, then nested) finds them
  /// there instead of scanning again.
  DVec with_scanned_offsets(DBuf offsets) const {
    DVec v = *this;
    v.off_ = std::move(offsets);
    return v;
  }
  /// A sequence of type t with this one's lengths and offsets (regular stays regular) over
  /// `elems`, as many as this one's.
  DVec with_elems(const lang::Type* t, DVec elems) const;

 private:
  struct Deferred {
    std::function<DBuf()> make;  // cleared once made, releasing what it holds
    DBuf made;
    std::shared_ptr<const DVec> source, index;  // deferred gathers
    std::shared_ptr<const DVec> narrow;         // deferred widenings (kept once made)
    std::shared_ptr<const DVec> broadcast;      // deferred_broadcast: the one value
    std::shared_ptr<const DVec> spread;         // deferred_spread: the values, their segments
    runtime::gpu::DSegs segs;
    DBuf segs_offsets;
    Gpu* gpu = nullptr;
    GatherFailure fail;  // an unchecked gather's error (cleared once checked)
    bool defers_check = false;  // its check may be read later (Note [Checked gathers])
    std::optional<uint64_t> known;  // every instance's value, known to the host
    std::shared_ptr<const DVec> view;  // a regular elt view's source, and its shape
    Affine affine;
    bool iota = false;  // deferred_iota
    bool rank = false;  // deferred_rank
    std::optional<AffineIndex> formula;  // deferred_index
    std::shared_ptr<const DVec> interleaved[2];  // deferred_interleave: its sources and block
    int64_t block = 0;
    const DBuf& get();
    /// An unchecked gather's bounds check, now (throws its error); then it is checked.
    void check();
    /// The bounds check as a closure that holds what it reads.
    std::function<void()> bounds_check() const;
    ~Deferred();
  };
  const lang::Type* type_ = nullptr;
  int64_t n_ = 0;
  mutable DBuf buf_;
  std::shared_ptr<Deferred> deferred_;
  mutable DBuf off_;  // a sequence's offsets (a lengths vector's: with_scanned_offsets)
  std::shared_ptr<Deferred> lazy_offsets_;  // a regular sequence's offsets, until read
  std::shared_ptr<const DVec> a_, b_;
};

}  // namespace ndp::exec::cuda
