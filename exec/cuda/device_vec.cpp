// DVec construction, the structural operations and host transfers.
#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include "exec/cuda/device_vec_ops.h"
#include "exec/cuda/batched_moves.h"
#include "exec/common/switches.h"
#include "exec/host/vec.h"
#include "lang/eval/prim_call.h"
#include "lang/diagnostics.h"

namespace ndp::exec::cuda {

using lang::Type;
using lang::TypeKind;

namespace {

// Note [Segment descriptor cache]
// The lengths of a sequence come back again and again as a statement's segments: `nest(lens,
// x)` after `lens = lengths(s)`, a replicate over `lengths(s)`, every consumer kernel over the
// same segments. Their offsets and element count are known from the sequence, and computing
// them again costs a scan, and for a replicate's size a read-back (a synchronisation). Buffers
// are immutable while alive, so every sequence made records its lengths buffer's offsets and
// total here, both by weak reference: a freed buffer never matches (even when a new one takes
// its address) and the cache keeps no memory alive.
struct SegmentCache {
  struct Entry {
    std::weak_ptr<const runtime::cuda::DeviceBuffer> lengths, offsets;
    int64_t n = 0, total = 0;
  };
  std::unordered_map<const void*, Entry> entries;
  size_t sweep_at = 4096;  // entries of freed buffers are dropped when the map reaches this size

  void add(const DBuf& lengths, const DBuf& offsets, int64_t n, int64_t total) {
    if (!lengths || !offsets || n == 0) return;
    entries[lengths.get()] = Entry{lengths, offsets, n, total};
    if (entries.size() >= sweep_at) {
      std::erase_if(entries, [](const auto& e) { return e.second.offsets.expired(); });
      // Twice the live entries: a program holding many sequences alive does not sweep on
      // every new one (amortised O(1) per add).
      sweep_at = std::max<size_t>(4096, 2 * entries.size());
    }
  }
  std::optional<KnownSegments> find(const DBuf& lengths, int64_t n) {
    auto it = entries.find(lengths.get());
    if (it == entries.end() || it->second.n != n || it->second.lengths.lock() != lengths) return std::nullopt;
    DBuf off = it->second.offsets.lock();
    if (!off) return std::nullopt;
    return KnownSegments{std::move(off), it->second.total};
  }
};

SegmentCache& segment_cache() {
  thread_local SegmentCache cache;  // the executor's thread; no locking
  return cache;
}

// The true flags of the last few flag buffers counted: a flattened `if` counts its flags (the
// host needs the branch sizes) and then packs with the same flags, which would count them again
// (a pass and a read-back). By weak reference, as above.
struct FlagCounts {
  static constexpr size_t kEntries = 8;
  struct Entry {
    std::weak_ptr<const runtime::cuda::DeviceBuffer> flags;
    const void* raw = nullptr;
    int64_t n = -1, count = 0;
  };
  Entry entries[kEntries];
  size_t next = 0;
};

FlagCounts& flag_counts() {
  thread_local FlagCounts counts;
  return counts;
}

// Note [Complementary flags]
// A flattened `if` computes its condition's flags and their negation in one kernel and counts
// both (the sizes of its two branches): two reductions and two read-backs a level of every
// recursion. The second count is n minus the first, so the kernel's executor records which of
// its bool outputs negates which (remember_complement), and count_true answers from the other's
// count where it knows it. By weak reference, as above.
struct FlagComplements {
  static constexpr size_t kEntries = 8;
  struct Entry {
    std::weak_ptr<const runtime::cuda::DeviceBuffer> flags, of;
    const void* raw = nullptr;
  };
  Entry entries[kEntries];
  size_t next = 0;
};

FlagComplements& flag_complements() {
  thread_local FlagComplements complements;
  return complements;
}

}  // namespace

std::optional<KnownSegments> known_segments(const DBuf& lengths, int64_t n) {
  return lengths ? segment_cache().find(lengths, n) : std::nullopt;
}

DVec DVec::scalar(const Type* t, int64_t n, DBuf buf) {
  NDP_ASSERT(host::is_flat_scalar(t), "DVec::scalar of a structured type");
  DVec v;
  v.type_ = t;
  v.n_ = n;
  v.buf_ = std::move(buf);
  return v;
}

DVec DVec::seq(const Type* t, int64_t n, DBuf lengths, DBuf offsets, DVec elems) {
  NDP_ASSERT(t->kind == TypeKind::Seq, "DVec::seq of a non-sequence type");
  DVec v;
  v.type_ = t;
  v.n_ = n;
  v.buf_ = std::move(lengths);
  v.off_ = std::move(offsets);
  v.a_ = std::make_shared<const DVec>(std::move(elems));
  segment_cache().add(v.buf_, v.off_, n, v.a_->size());
  if (n == 1 && v.buf_) {  // one sequence is regular whatever its length (Note [Known values])
    v.deferred_ = std::make_shared<Deferred>();
    v.deferred_->known = static_cast<uint64_t>(v.a_->size());
  }
  return v;
}

DVec DVec::pair(const Type* t, DVec a, DVec b) {
  NDP_ASSERT(t->kind == TypeKind::Pair && a.size() == b.size(), "DVec::pair of mismatched parts");
  DVec v;
  v.type_ = t;
  v.n_ = a.size();
  v.a_ = std::make_shared<const DVec>(std::move(a));
  v.b_ = std::make_shared<const DVec>(std::move(b));
  return v;
}

DVec DVec::data(const Type* t, DVec fields) {
  NDP_ASSERT(t->kind == TypeKind::Data, "DVec::data of a non-datatype");
  DVec v;
  v.type_ = t;
  v.n_ = fields.size();
  v.a_ = std::make_shared<const DVec>(std::move(fields));
  return v;
}

DVec DVec::deferred(const Type* t, int64_t n, std::function<DBuf()> make) {
  NDP_ASSERT(host::is_flat_scalar(t), "a deferred vector of a structured type");
  DVec v;
  v.type_ = t;
  v.n_ = n;
  v.deferred_ = std::make_shared<Deferred>();
  v.deferred_->make = std::move(make);
  return v;
}

DVec DVec::deferred_iota(Gpu& g, const Type* t, int64_t n) {
  Gpu* gpu = &g;
  DVec v = deferred(t, n, [gpu, n] {
    DBuf buf = gpu->alloc(n * 8);
    gpu->check(gpu->prims().iota(buf->pointer(), n));
    return buf;
  });
  v.deferred_->iota = true;
  return v;
}

DVec DVec::deferred_index(Gpu& g, const Type* t, int64_t n, AffineIndex f) {
  NDP_ASSERT(t->kind == TypeKind::Int && f.c >= 1, "a formula of other than ints");
  Gpu* gpu = &g;
  // The forms a fused kernel computes itself (Notes [Iota inputs] and [Spread inputs] in
  // kernels.h), where the formula is one.
  if (f.a == 0 && (f.c == 1 || f.b == 0)) return known(g, t, n, static_cast<uint64_t>(f.k));
  if (f == AffineIndex::iota() || (n <= f.c && f == AffineIndex::rank(f.c))) return deferred_iota(g, t, n);
  if (f == AffineIndex::rank(f.c) && n % f.c == 0) return ranks(g, t, runtime::gpu::DSegs{n / f.c, n, 0, f.c}, nullptr);
  DVec v = deferred(t, n, [gpu, n, f] {
    DBuf buf = gpu->alloc(n * 8);
    if (n > 0) gpu->check(gpu->prims().formula_positions(n, f.c, f.a, f.b, f.k, buf->pointer()));
    return buf;
  });
  v.deferred_->formula = f;
  return v;
}

std::optional<AffineIndex> DVec::index_form() const {
  if (type_ == nullptr || type_->kind != TypeKind::Int) return std::nullopt;
  if (std::optional<uint64_t> bits = known_bits()) return AffineIndex::constant(static_cast<int64_t>(*bits));
  if (!pending()) return std::nullopt;
  if (deferred_->formula) return deferred_->formula;
  if (deferred_->iota) return AffineIndex::iota();
  // (a rank's or a spread's segments: regular ones only, where the segment is i / L)
  const runtime::gpu::DSegs& s = deferred_->segs;
  const bool regular = s.offsets == 0 && s.regular_length > 0;
  if (deferred_->rank) return regular ? std::optional(AffineIndex::rank(s.regular_length)) : std::nullopt;
  if (const DVec* one = broadcast_source()) {
    std::optional<AffineIndex> f = one->index_form();
    if (f) return AffineIndex::constant(f->k);  // its value at 0
    return std::nullopt;
  }
  if (const DVec* values = spread_source(); values && regular) {
    if (std::optional<AffineIndex> f = values->index_form()) return spread_over(*f, s.count, s.regular_length);
  }
  return std::nullopt;
}

DVec DVec::deferred_broadcast(const Type* t, int64_t n, DVec one, std::function<DBuf()> make) {
  NDP_ASSERT(one.size() == 1 && one.type() == t, "a broadcast of other than one value of its type");
  DVec v = deferred(t, n, std::move(make));
  v.deferred_->broadcast = std::make_shared<const DVec>(std::move(one));
  return v;
}

DVec DVec::deferred_spread(const Type* t, DVec values, runtime::gpu::DSegs segs, DBuf offsets, std::function<DBuf()> make) {
  NDP_ASSERT(values.size() == segs.count && values.type() == t && (segs.offsets == 0 || offsets),
             "a spread of other than a value a segment, or without its offsets");
  DVec v = deferred(t, segs.total, std::move(make));
  v.deferred_->spread = std::make_shared<const DVec>(std::move(values));
  v.deferred_->segs = segs;
  v.deferred_->segs_offsets = std::move(offsets);
  return v;
}

DVec DVec::deferred_interleave(const Type* t, DVec a, DVec b, int64_t c, std::function<DBuf()> make) {
  NDP_ASSERT(host::is_flat_scalar(t) && a.type() == t && b.type() == t && c > 0 && a.size() == b.size() && a.size() % c == 0,
             "an interleave of other than two flat vectors of whole blocks");
  DVec v = deferred(t, 2 * a.size(), std::move(make));
  v.deferred_->interleaved[0] = std::make_shared<const DVec>(std::move(a));
  v.deferred_->interleaved[1] = std::make_shared<const DVec>(std::move(b));
  v.deferred_->block = c;
  return v;
}

DVec DVec::deferred_rank(const Type* t, runtime::gpu::DSegs segs, DBuf offsets, std::function<DBuf()> make) {
  NDP_ASSERT(t->kind == TypeKind::Int && (segs.offsets == 0 || offsets), "a rank that is no int, or without its offsets");
  DVec v = deferred(t, segs.total, std::move(make));
  v.deferred_->rank = true;
  v.deferred_->segs = segs;
  v.deferred_->segs_offsets = std::move(offsets);
  return v;
}

DVec DVec::ranks(Gpu& g, const Type* t, runtime::gpu::DSegs segs, DBuf offsets) {
  Gpu* gpu = &g;
  return deferred_rank(t, segs, offsets, [gpu, segs, offsets] {
    DBuf out = gpu->alloc(segs.total * 8);
    gpu->check(gpu->prims().segment_ranks(segs, out->pointer()));
    return out;
  });
}

DVec DVec::deferred_gather(Gpu& g, DVec source, DVec index, GatherFailure fail, bool defers_check) {
  NDP_ASSERT(host::is_flat_scalar(source.type()) && index.type()->kind == TypeKind::Int,
             "a gather of structured values");
  const int64_t n = index.size();
  DVec v = deferred(source.type(), n, [&g, source, index, n] { return take(g, source, index.data(), n).buffer(); });
  v.deferred_->source = std::make_shared<const DVec>(std::move(source));
  v.deferred_->index = std::make_shared<const DVec>(std::move(index));
  v.deferred_->gpu = &g;
  if (n > 0) v.deferred_->fail = std::move(fail);
  v.deferred_->defers_check = defers_check;
  return v;
}

DVec DVec::deferred_widening(const Type* int_type, DVec narrow, std::function<DBuf()> make) {
  NDP_ASSERT(int_type->kind == TypeKind::Int && narrow.type()->kind == TypeKind::I32, "a widening not from i32 to int");
  DVec v = deferred(int_type, narrow.size(), std::move(make));
  v.deferred_->narrow = std::make_shared<const DVec>(std::move(narrow));
  return v;
}

// Note [Known values]
// The cpu backend's uniform buffers (Note [Uniform buffers] in exec/host/vec.h) on the device:
// a flat scalar vector may carry the one value all its instances hold, known to the host (a
// literal's copies, `#a` of sequences all of one length, and what a kernel computes from such
// values alone), and a sequence vector whose lengths are such a value is *regular*. A flattened
// divide and conquer that splits evenly (Batcher's sort: every segment of a level has 2^k
// elements) then runs its control on the host: `#a < 2` and its count, the halves' lengths,
// partition's checks, check_lengths, flatten and nest cost no launch and no wait, and a regular
// sequence's lengths and offsets are filled only when a kernel reads them. Everything else reads
// the buffers as before, so every path stays correct.
namespace {

/// A buffer of m values of `bytes` bytes, each `bits`, made when called.
std::function<DBuf()> filled_later(Gpu& g, int64_t m, int bytes, uint64_t bits) {
  if (m == 1) return [gpu = &g, bytes, bits] { return gpu->single_value(bytes, bits); };
  return [gpu = &g, m, bytes, bits] {
    DBuf b = gpu->alloc(m * bytes);
    gpu->check(gpu->prims().fill(b->pointer(), m, bytes, bits));
    return b;
  };
}

}  // namespace

DVec DVec::known(Gpu& g, const Type* t, int64_t n, uint64_t bits) {
  const int bytes = elem_bytes(t);
  DVec single = deferred(t, 1, filled_later(g, 1, bytes, bits));
  single.deferred_->known = bits;
  if (n == 1) return single;
  DVec v = deferred_broadcast(t, n, std::move(single), filled_later(g, n, bytes, bits));
  v.deferred_->known = bits;
  return v;
}

DVec DVec::regular(Gpu& g, const Type* t, int64_t n, int64_t c, DVec elems) {
  NDP_ASSERT(t->kind == TypeKind::Seq && c >= 0 && n * c == elems.size(), "a regular sequence that does not cover its elements");
  Gpu* gpu = &g;
  DVec v;
  v.type_ = t;
  v.n_ = n;
  v.deferred_ = std::make_shared<Deferred>();
  v.deferred_->make = filled_later(g, n, 8, static_cast<uint64_t>(c));
  v.deferred_->known = static_cast<uint64_t>(c);
  v.lazy_offsets_ = std::make_shared<Deferred>();
  v.lazy_offsets_->make = [gpu, n, c] {
    DBuf b = gpu->alloc((n + 1) * 8);
    gpu->check(gpu->prims().iota(b->pointer(), n + 1, 0, c));
    return b;
  };
  v.a_ = std::make_shared<const DVec>(std::move(elems));
  return v;
}

DVec DVec::deferred_view(Gpu& g, DVec source, int64_t n, Affine shape) {
  NDP_ASSERT(host::is_flat_scalar(source.type()) && (n == 0 || shape.c > 0), "a view of structured values");
  Gpu* gpu = &g;
  DVec v = deferred(source.type(), n, [gpu, source, n, shape] {
    const int bytes = elem_bytes(source.type());
    DBuf out = gpu->alloc(n * bytes);
    if (n > 0) gpu->check(gpu->prims().affine_gather(bytes, source.data(), n, shape.c, shape.stride, shape.offset, shape.inner,
                                                         out->pointer()));
    return out;
  });
  v.deferred_->view = std::make_shared<const DVec>(std::move(source));
  v.deferred_->affine = shape;
  return v;
}

DVec DVec::lengths_vec(const Type* t) const {
  NDP_ASSERT(kind() == TypeKind::Seq && t->kind == TypeKind::Int, "the lengths of a non-sequence");
  DVec v;
  v.type_ = t;
  v.n_ = n_;
  v.buf_ = buf_;
  v.deferred_ = deferred_;  // a regular sequence's: its fill, and the length it knows
  return v;
}

DVec DVec::with_elems(const Type* t, DVec elems) const {
  NDP_ASSERT(kind() == TypeKind::Seq && t->kind == TypeKind::Seq && elems.size() == total(),
             "a sequence shape over other elements");
  DVec v = *this;
  v.type_ = t;
  v.a_ = std::make_shared<const DVec>(std::move(elems));
  return v;
}

const DBuf& DVec::Deferred::get() {
  if (!made) {
    check();
    made = make();
    make = nullptr;
    source.reset();
    index.reset();
    view.reset();
    spread.reset();
    segs_offsets.reset();
    interleaved[0].reset();
    interleaved[1].reset();
  }
  return made;
}

void DVec::Deferred::check() {
  if (!fail) return;
  if (defers_check && source->size() > 0) {  // Note [Checked gathers]: read at the next read-back
    const int64_t n = index->size(), bound = source->size();
    // The positions first: making them may read back, which must not find the record taken
    // before its kernel is queued (it would read it empty and free it).
    const CUdeviceptr at = index->data();
    DBuf clamped = gpu->alloc(n * 8);
    CUdeviceptr record = gpu->deferred_record(
        [g = gpu, index = index, bound, fail = fail](uint64_t j) {
          fail(g->read_int(index->data(), static_cast<int64_t>(j)), bound);
        },
        8 * n);
    gpu->check(gpu->prims().clamped_positions(at, n, bound, clamped->pointer(), record));
    index = std::make_shared<const DVec>(DVec::scalar(index->type(), n, std::move(clamped)));
    make = [g = gpu, source = source, index = index, n] { return take(*g, *source, index->data(), n).buffer(); };
    fail = nullptr;
    return;
  }
  bounds_check()();
  fail = nullptr;
}

std::function<void()> DVec::Deferred::bounds_check() const {
  return [g = gpu, index = index, bound = source->size(), fail = fail] {
    int64_t p = g->check(g->prims().first_out_of_range(index->data(), index->size(), bound));
    if (p >= 0) fail(g->read_int(index->data(), p), bound);
  };
}

DVec::Deferred::~Deferred() {
  if (fail) gpu->defer_check(bounds_check());
}

void DVec::check_gather() const {
  if (deferred_) deferred_->check();
}

void DVec::gather_checked() const {
  if (deferred_) deferred_->fail = nullptr;
}

void DVec::gather_failed() const {
  NDP_ASSERT(gather_unchecked(), "a checked gather failed");
  // The flag says that some index failed; the check finds the first and names it.
  std::function<void()> check = deferred_->bounds_check();
  deferred_->fail = nullptr;
  check();
  throw lang::InternalError("internal error: cuda backend: a gather's error did not throw");
}

DVec DVec::open_type(const Type* t, int64_t n) {
  if (n != 0) host::fail_function_value();
  DVec v;
  v.type_ = t;
  return v;
}

DBuf offsets_from_valid_lengths(Gpu& g, int64_t n, const DBuf& lengths) {
  if (std::optional<KnownSegments> known = known_segments(lengths, n)) return std::move(known->offsets);
  // The lengths are known to be valid, so the offsets are a plain scan: no check and no
  // read-back (offsets_from_lengths would synchronise).
  DBuf off = g.alloc((n + 1) * 8);
  g.check(g.prims().valid_offsets(lengths->pointer(), n, off->pointer()));
  return off;
}

KnownSegments segments_of_valid_lengths(Gpu& g, int64_t n, const DBuf& lengths) {
  return std::move(segments_of_valid_lengths(g, n, std::span<const DBuf>(&lengths, 1)).front());
}

std::vector<KnownSegments> segments_of_valid_lengths(Gpu& g, int64_t n, std::span<const DBuf> lengths) {
  std::vector<KnownSegments> out(lengths.size());
  // The scans of those not known yet, queued first, then their totals read back with one wait.
  std::vector<size_t> scanned;
  std::vector<DBuf> offsets;
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (std::optional<KnownSegments> known = known_segments(lengths[i], n)) {
      out[i] = std::move(*known);
      continue;
    }
    out[i] = KnownSegments{offsets_from_valid_lengths(g, n, lengths[i]), 0};
    scanned.push_back(i);
    offsets.push_back(out[i].offsets);
  }
  const std::vector<int64_t> totals = read_totals(g, offsets, n);
  for (size_t j = 0; j < scanned.size(); ++j) {
    KnownSegments& k = out[scanned[j]];
    k.total = totals[j];
    remember_segments(lengths[scanned[j]], k.offsets, n, k.total);
  }
  return out;
}

void remember_segments(const DBuf& lengths, const DBuf& offsets, int64_t n, int64_t total) {
  // More elements than any memory holds (host::kMaxElements), or a sum that wrapped negative.
  if (total < 0 || total > host::kMaxElements)
    throw lang::eval::EvalError{lang::message(lang::RuntimeErrorId::OutOfMemory), lang::Span{}};
  segment_cache().add(lengths, offsets, n, total);
}

std::vector<int64_t> read_totals(Gpu& g, std::span<const DBuf> offsets, int64_t n) {
  std::vector<int64_t> totals(offsets.size(), 0);
  if (n <= 0) return totals;  // (no offsets but the first, 0)
  std::vector<uint64_t*> to;
  std::vector<CUdeviceptr> from;
  for (size_t i = 0; i < offsets.size(); ++i) {
    to.push_back(reinterpret_cast<uint64_t*>(&totals[i]));
    from.push_back(offsets[i]->pointer() + static_cast<CUdeviceptr>(n) * 8);
  }
  g.check(g.pool().download_words(to, from));
  return totals;
}

KnownSegments segments_of_valid_lengths(Gpu& g, int64_t n, const DBuf& lengths, int64_t total) {
  if (std::optional<KnownSegments> known = known_segments(lengths, n)) return std::move(*known);
  KnownSegments s{offsets_from_valid_lengths(g, n, lengths), total};
  segment_cache().add(lengths, s.offsets, n, s.total);
  return s;
}

DVec seq_from_lengths(Gpu& g, const Type* t, int64_t n, DBuf lengths, DVec elems) {
  DBuf off = offsets_from_valid_lengths(g, n, lengths);
  return DVec::seq(t, n, std::move(lengths), std::move(off), std::move(elems));
}

DVec seq_from_lengths(Gpu& g, const Type* t, const DVec& lengths, DVec elems) {
  if (std::optional<uint64_t> c = lengths.known_bits())
    return DVec::regular(g, t, lengths.size(), static_cast<int64_t>(*c), std::move(elems));
  return seq_from_lengths(g, t, lengths.size(), lengths.buffer(), std::move(elems));
}

runtime::gpu::DSegs segments_of_lengths(Gpu& g, const DVec& lengths, int64_t total, DBuf& keep) {
  const int64_t n = lengths.size();
  if (std::optional<uint64_t> c = lengths.known_bits()) return runtime::gpu::DSegs{n, total, 0, static_cast<int64_t>(*c)};
  keep = offsets_from_valid_lengths(g, n, lengths.buffer());
  return runtime::gpu::DSegs::irregular(n, total, keep->pointer());
}

DVec append_flat(Gpu& g, const DVec& a, runtime::gpu::DSegs sa, const DVec& b, runtime::gpu::DSegs sb, runtime::gpu::DSegs so) {
  DBuf out = g.alloc(so.total * elem_bytes(a.type()));
  g.check(g.prims().append(elem_type(a.type()), a.data(), sa, b.data(), sb, so, out->pointer()));
  return DVec::scalar(a.type(), so.total, std::move(out));
}

DVec empty_of(Gpu& g, lang::TypeContext& types, const Type* t) {
  // An empty vector's buffers are the shared zero word (Gpu::single_value): its one offset, and
  // elements that nothing reads. Levels of a recursion make empty branches at every step.
  switch (t->kind) {
    case TypeKind::Seq: return DVec::seq(t, 0, g.single_value(8, 0), g.single_value(8, 0), empty_of(g, types, t->a));
    case TypeKind::Pair: return DVec::pair(t, empty_of(g, types, t->a), empty_of(g, types, t->b));
    case TypeKind::Data: return DVec::data(t, empty_of(g, types, types.subst(t->data->fields, t->args)));
    case TypeKind::Var: return DVec::open_type(t, 0);
    default: return DVec::scalar(t, 0, g.single_value(8, 0));
  }
}

DBuf segment_ids(Gpu& g, const DVec& seq) {
  DBuf ids = g.alloc(seq.total() * 8);
  g.check(g.prims().segment_ids(seq.segs(), ids->pointer()));
  return ids;
}

namespace {

// Note [Rows taken by positions]
// A take of rows whose elements are points or other tuples of flat scalars (a shared
// argument's rows gathered for each instance, a pack of the recursing instances' rows) finds
// each element's position first (nested_take_positions) and then gathered every component
// through them: quickhull moved its 2 × 10^7 points that way at every level, twice (the rows,
// then the points that stay), 2 × 124 µs and 2 × 76 µs at its first level (Nsight Compute,
// H200). The components are instead deferred gathers through those positions (Note [Deferred
// vectors] in device_vec.h): a fused kernel reads them in place (Note [Fused gathers]), and a
// take of a pending gather composes the positions, gathering 8 bytes an element once for all
// the components that share them, where each component took its own gather. Only a gather whose
// positions are known to be in range composes (an unchecked one must still fail on a position
// the take drops); anything else that reads a component gets it gathered from the source, as
// before.

/// The int type of positions made here (a DVec's type only says what its buffer holds).
const Type* position_type() {
  static lang::TypeContext types;
  return types.int_();
}

/// What one take composed: the positions `index` taken at `idx` (or, for a view of repeated rows,
/// its shape's positions of idx), for the components that share them.
struct Composed {
  CUdeviceptr index = 0, idx = 0;
  DVec positions;
  bool affine = false;  // then `shape`'s positions, not index's
  DVec::Affine shape{};
};

/// The lengths of irregular rows taken, with their offsets and element count, where the caller
/// made them (pack_all: the rows of several members, counted with one wait).
struct TakenRows {
  DBuf lengths;
  KnownSegments segments;
};

/// take's work; `positions`, where given, owns idx, and flat components then become gathers
/// through it instead of moving (Note [Rows taken by positions]). Flat components moved
/// through idx are queued on `batch` (Note [Gathers launched together] in batched_moves.h).
DVec take_parts(Gpu& g, const DVec& v, CUdeviceptr idx, int64_t m, const DBuf& positions, std::vector<Composed>& composed,
                GatherBatch& batch, TakenRows* rows = nullptr);

/// NDP_ROWS_BY_POSITIONS=0 gathers every component at once (for measuring).
bool by_positions() {
  static const bool on = !switched_off("NDP_ROWS_BY_POSITIONS");
  return on;
}

/// A view of stride 0 (every block of c elements the same c, as replicate_one makes them) of a
/// stored source.
bool repeated_rows(const DVec& v) {
  const DVec* source = v.view_source();
  return source != nullptr && v.view_shape().stride == 0 && !source->pending();
}

/// A pending gather whose positions are in range, or a view of repeated rows: composed with idx
/// instead of read.
bool composes(const DVec& v) {
  return by_positions() && v.pending() && ((v.gather_source() != nullptr && !v.gather_unchecked()) || repeated_rows(v));
}

DVec take_composed(Gpu& g, const DVec& v, CUdeviceptr idx, int64_t m, std::vector<Composed>& composed) {
  // A view's positions are arithmetic, the same for every component of that shape; a gather's
  // are its positions taken at idx, the same for every component gathered through them.
  const bool affine = repeated_rows(v);
  const DVec::Affine a = affine ? v.view_shape() : DVec::Affine{};
  const CUdeviceptr from = affine ? 0 : v.gather_index()->data();
  auto it = std::find_if(composed.begin(), composed.end(), [&](const Composed& c) {
    return c.idx == idx && c.affine == affine && (affine ? c.shape == a : c.index == from);
  });
  if (it == composed.end()) {
    DBuf out = g.alloc(m * 8);
    if (affine) g.check(g.prims().affine_positions(idx, m, a.c, a.stride, a.offset, a.inner, out->pointer()));
    else g.check(g.prims().gather(8, from, idx, m, out->pointer()));
    composed.push_back({from, idx, DVec::scalar(position_type(), m, std::move(out)), affine, a});
    it = composed.end() - 1;
  }
  return DVec::deferred_gather(g, affine ? *v.view_source() : *v.gather_source(), it->positions);
}

/// Note [Rows of gathered elements]
/// Rows whose elements are all gathers not yet made through one vector of positions (points
/// packed at the level before: both coordinates through the kept positions) are taken by
/// taking those positions in one pass (nested_take of the positions themselves), where the
/// rows' element positions were written first and the gather's positions then gathered through
/// them: 103 + 123 µs and 2 × 160 MB more at quickhull's second level of 2·10^7 points (Nsight
/// Compute, H200). The positions `from`'s flat components all gather through, or 0.
CUdeviceptr shared_gather_index(const DVec& from) {
  CUdeviceptr index = 0;
  const bool all = zip_components(from, from, [&](const DVec& x, const DVec&) -> std::optional<DVec> {
    if (!host::is_flat_scalar(x.type()) || !composes(x) || x.gather_source() == nullptr) return std::nullopt;
    const CUdeviceptr mine = x.gather_index()->data();
    if (index != 0 && mine != index) return std::nullopt;
    index = mine;
    return x;
  }).has_value();
  return all ? index : 0;
}

/// `from` (whose flat components all gather through one vector of positions) gathered through
/// `positions` instead.
DVec regathered(Gpu& g, const DVec& from, const DVec& positions) {
  return *zip_components(from, from, [&](const DVec& x, const DVec&) -> std::optional<DVec> {
    return DVec::deferred_gather(g, *x.gather_source(), positions);
  });
}

/// The elements of rows taken (v's at idx, out_segs): Note [Rows of gathered elements] where it
/// applies, else the rows' element positions and each component taken through them.
DVec taken_elements(Gpu& g, const DVec& v, CUdeviceptr idx, const runtime::gpu::DSegs& out_segs,
                    std::vector<Composed>& inner, GatherBatch& batch) {
  const DVec& from = v.elems();
  if (const CUdeviceptr index = shared_gather_index(from); index != 0) {
    DBuf pos = g.alloc(out_segs.total * 8);
    g.check(g.prims().nested_take(8, index, v.offsets(), idx, out_segs, pos->pointer()));
    return regathered(g, from, DVec::scalar(position_type(), out_segs.total, std::move(pos)));
  }
  DBuf eidx = g.alloc(out_segs.total * 8);
  g.check(g.prims().nested_take_positions(v.offsets(), idx, out_segs, eidx->pointer()));
  return take_parts(g, from, eidx->pointer(), out_segs.total, eidx, inner, batch);
}

/// Whether a sequence's flat elements move in one pass without positions (nested_take), rather
/// than composed (Note [Rows taken by positions]).
bool moved_whole(const DVec& from) { return host::is_flat_scalar(from.type()) && !composes(from); }

DVec take_parts(Gpu& g, const DVec& v, CUdeviceptr idx, int64_t m, const DBuf& positions, std::vector<Composed>& composed,
                GatherBatch& batch, TakenRows* rows) {
  const Type* t = v.type();
  switch (t->kind) {
    case TypeKind::Seq: {
      std::vector<Composed> inner;  // positions of the elements, not of these rows
      if (std::optional<int64_t> c = v.regular_length()) {
        // Regular: so is the result, of m·c elements (no lengths gathered, no total read back).
        const runtime::gpu::DSegs out_segs{m, m * *c, 0, *c};
        const DVec& from = v.elems();
        // Rows that are all one row (Note [Rows repeated as views]): any m of them are m views.
        if (std::optional<DVec> same = zip_components(from, from, [&](const DVec& x, const DVec&) -> std::optional<DVec> {
              if (!host::is_flat_scalar(x.type()) || !repeated_rows(x) || x.view_shape().c != *c) return std::nullopt;
              return DVec::deferred_view(g, *x.view_source(), out_segs.total, x.view_shape());
            }))
          return DVec::regular(g, t, m, *c, std::move(*same));
        if (moved_whole(from)) {
          const int bytes = elem_bytes(from.type());
          DBuf out = g.alloc(out_segs.total * bytes);
          g.check(g.prims().nested_take(bytes, from.data(), v.offsets(), idx, out_segs, out->pointer()));
          return DVec::regular(g, t, m, *c, DVec::scalar(from.type(), out_segs.total, std::move(out)));
        }
        return DVec::regular(g, t, m, *c, taken_elements(g, v, idx, out_segs, inner, batch));
      }
      DBuf len, off;
      int64_t total = 0;
      if (rows) {
        len = std::move(rows->lengths);
        off = std::move(rows->segments.offsets);
        total = rows->segments.total;
      } else {
        len = g.alloc(m * 8);
        g.check(g.prims().gather(8, v.lengths(), idx, m, len->pointer()));
        // Lengths of v's rows are valid: a plain scan (no check), and its total read back.
        off = offsets_from_valid_lengths(g, m, len);
        g.check(g.pool().download(&total, off->pointer() + static_cast<CUdeviceptr>(m) * 8, sizeof total));
      }
      const runtime::gpu::DSegs out_segs = runtime::gpu::DSegs::irregular(m, total, off->pointer());
      const DVec& from = v.elems();
      if (moved_whole(from)) {  // the elements in one pass, without positions
        const int bytes = elem_bytes(from.type());
        DBuf out = g.alloc(total * bytes);
        g.check(g.prims().nested_take(bytes, from.data(), v.offsets(), idx, out_segs, out->pointer()));
        return DVec::seq(t, m, std::move(len), std::move(off), DVec::scalar(from.type(), total, std::move(out)));
      }
      return DVec::seq(t, m, std::move(len), std::move(off), taken_elements(g, v, idx, out_segs, inner, batch));
    }
    case TypeKind::Pair:
      return DVec::pair(t, take_parts(g, v.first(), idx, m, positions, composed, batch),
                        take_parts(g, v.second(), idx, m, positions, composed, batch));
    case TypeKind::Data: return DVec::data(t, take_parts(g, v.fields(), idx, m, positions, composed, batch));
    case TypeKind::Var: return DVec::open_type(t, m);
    default: {
      if (composes(v)) return take_composed(g, v, idx, m, composed);
      if (positions && by_positions()) return DVec::deferred_gather(g, v, DVec::scalar(position_type(), m, positions));
      int bytes = elem_bytes(t);
      DBuf out = g.alloc(m * bytes);
      batch.add(bytes, v.data(), idx, m, out->pointer(), positions);
      return DVec::scalar(t, m, std::move(out));
    }
  }
}

}  // namespace

DVec take(Gpu& g, const DVec& v, CUdeviceptr idx, int64_t m, std::optional<int64_t> rows_total) {
  std::vector<Composed> composed;
  GatherBatch batch(g);
  std::optional<TakenRows> rows;
  if (rows_total && v.kind() == TypeKind::Seq && !v.regular_length()) {
    // The caller knows the taken rows' total: their offsets need no read-back.
    DBuf len = g.alloc(m * 8);
    g.check(g.prims().gather(8, v.lengths(), idx, m, len->pointer()));
    KnownSegments segments = segments_of_valid_lengths(g, m, len, *rows_total);
    rows = TakenRows{std::move(len), std::move(segments)};
  }
  DVec out = take_parts(g, v, idx, m, nullptr, composed, batch, rows ? &*rows : nullptr);
  batch.send();
  return out;
}

namespace {

/// The buffers of all parts back to back (`bytes` per instance).
DBuf concat_buffers(Gpu& g, std::span<const DVec> parts, int bytes, CUdeviceptr (DVec::*buffer)() const) {
  int64_t n = 0;
  for (const DVec& p : parts) n += p.size();
  DBuf out = g.alloc(n * bytes);
  int64_t o = 0;
  for (const DVec& p : parts) {
    g.check(g.pool().copy(out->pointer() + static_cast<CUdeviceptr>(o * bytes), (p.*buffer)(),
                          static_cast<size_t>(p.size() * bytes)));
    o += p.size();
  }
  return out;
}

}  // namespace

DVec take_appended(Gpu& g, const DVec& a, const DVec& b, CUdeviceptr idx, int64_t m) {
  NDP_ASSERT(a.size() + b.size() == m, "take_appended of a non-permutation");
  const Type* t = a.type();
  switch (t->kind) {
    case TypeKind::Seq: {
      if (a.elems().kind() == TypeKind::Var) break;
      if (std::optional<int64_t> c = a.regular_length(); c && b.regular_length() == c) {
        // Both regular, of one length: so is the result (Note [Known values]).
        const runtime::gpu::DSegs segs{m, m * *c, 0, *c};
        if (host::is_flat_scalar(a.elems().type())) {
          const int bytes = elem_bytes(a.elems().type());
          DBuf out = g.alloc(segs.total * bytes);
          g.check(g.prims().nested_take2(bytes, a.elems().data(), a.offsets(), a.size(), b.elems().data(), b.offsets(),
                                         idx, segs, out->pointer()));
          return DVec::regular(g, t, m, *c, DVec::scalar(a.elems().type(), segs.total, std::move(out)));
        }
      }
      DBuf len = g.alloc(m * 8);
      g.check(g.prims().gather2(8, a.lengths(), a.size(), b.lengths(), idx, m, len->pointer()));
      DBuf off = offsets_from_valid_lengths(g, m, len);  // a permutation: the total is known
      const int64_t ta = a.total(), total = ta + b.total();
      const runtime::gpu::DSegs segs = runtime::gpu::DSegs::irregular(m, total, off->pointer());
      // Elements whose components are all flat scalars: each component's in one pass (checked
      // first, so that no component moves where another cannot).
      auto flat = [](const DVec& u, const DVec&) { return host::is_flat_scalar(u.type()) ? std::optional(u) : std::nullopt; };
      auto move = [&](const DVec& u, const DVec& w) -> std::optional<DVec> {
        const int bytes = elem_bytes(u.type());
        DBuf out = g.alloc(total * bytes);
        g.check(g.prims().nested_take2(bytes, u.data(), a.offsets(), a.size(), w.data(), b.offsets(), idx, segs,
                                       out->pointer()));
        return DVec::scalar(u.type(), total, std::move(out));
      };
      if (zip_components(a.elems(), b.elems(), flat))
        return DVec::seq(t, m, std::move(len), std::move(off), *zip_components(a.elems(), b.elems(), move));
      // The elements' positions in a's elements followed by b's are a permutation too.
      DBuf from_a = g.alloc(ta * 8), from_b = g.alloc(b.total() * 8), pos = g.alloc(total * 8);
      g.check(g.prims().iota(from_a->pointer(), ta));
      g.check(g.prims().iota(from_b->pointer(), b.total(), ta));
      g.check(g.prims().nested_take2(8, from_a->pointer(), a.offsets(), a.size(), from_b->pointer(), b.offsets(), idx, segs,
                                     pos->pointer()));
      DVec elems = take_appended(g, a.elems(), b.elems(), pos->pointer(), total);
      return DVec::seq(t, m, std::move(len), std::move(off), std::move(elems));
    }
    case TypeKind::Pair:
      return DVec::pair(t, take_appended(g, a.first(), b.first(), idx, m),
                        take_appended(g, a.second(), b.second(), idx, m));
    case TypeKind::Data: return DVec::data(t, take_appended(g, a.fields(), b.fields(), idx, m));
    default:
      if (host::is_flat_scalar(t)) {  // read from a and b where they are, not from a ++ b built first
        const int bytes = elem_bytes(t);
        DBuf out = g.alloc(m * bytes);
        g.check(g.prims().gather2(bytes, a.data(), a.size(), b.data(), idx, m, out->pointer()));
        return DVec::scalar(t, m, std::move(out));
      }
      break;
  }
  return take(g, append(g, a, b), idx, m);
}

DVec concat(Gpu& g, std::span<const DVec> parts) {
  NDP_ASSERT(!parts.empty(), "concat of no parts");
  if (parts.size() == 1) return parts[0];
  const Type* t = parts[0].type();
  int64_t n = 0;
  for (const DVec& p : parts) n += p.size();
  switch (t->kind) {
    case TypeKind::Seq: {
      DBuf len = concat_buffers(g, parts, 8, &DVec::lengths);
      DVec e = concat(g, host::map_parts(parts, [](const DVec& p) { return p.elems(); }));
      return seq_from_lengths(g, t, n, std::move(len), std::move(e));
    }
    case TypeKind::Pair:
      return DVec::pair(t, concat(g, host::map_parts(parts, [](const DVec& p) { return p.first(); })),
                        concat(g, host::map_parts(parts, [](const DVec& p) { return p.second(); })));
    case TypeKind::Data:
      return DVec::data(t, concat(g, host::map_parts(parts, [](const DVec& p) { return p.fields(); })));
    case TypeKind::Var: return DVec::open_type(t, n);
    default: return DVec::scalar(t, n, concat_buffers(g, parts, elem_bytes(t), &DVec::data));
  }
}

namespace {

const FlagCounts::Entry* find_count(const DVec& flags) {
  const DBuf& buf = flags.buffer();
  for (const FlagCounts::Entry& e : flag_counts().entries)
    if (e.raw == buf.get() && e.n == flags.size() && e.flags.lock() == buf) return &e;
  return nullptr;
}

}  // namespace

void remember_count_true(const DVec& flags, int64_t count) {
  const DBuf& buf = flags.buffer();
  if (!buf) return;
  FlagCounts& c = flag_counts();
  c.entries[c.next] = FlagCounts::Entry{buf, buf.get(), flags.size(), count};
  c.next = (c.next + 1) % FlagCounts::kEntries;
}

bool known_count_true(const DVec& flags) { return find_count(flags) != nullptr; }

void remember_complement(const DVec& flags, const DVec& of) {
  const DBuf& buf = flags.buffer();
  const DBuf& other = of.buffer();
  if (!buf || !other || flags.size() != of.size()) return;
  FlagComplements& c = flag_complements();
  c.entries[c.next] = FlagComplements::Entry{buf, other, buf.get()};
  c.next = (c.next + 1) % FlagComplements::kEntries;
}

int64_t count_true(Gpu& g, const DVec& flags) {
  if (std::optional<uint64_t> b = flags.known_bits()) return (*b & 1) != 0 ? flags.size() : 0;  // Note [Known values]
  if (const FlagCounts::Entry* e = find_count(flags)) return e->count;
  // The negation of flags counted before (Note [Complementary flags]).
  const DBuf& buf = flags.buffer();
  for (const FlagComplements::Entry& e : flag_complements().entries) {
    DBuf of;  // the other of the pair, either way round
    if (e.raw == buf.get() && e.flags.lock() == buf) of = e.of.lock();
    else if (buf && e.of.lock() == buf) of = e.flags.lock();
    if (!of) continue;
    for (const FlagCounts::Entry& c : flag_counts().entries)
      if (c.raw == of.get() && c.n == flags.size() && c.flags.lock() == of) {
        remember_count_true(flags, flags.size() - c.count);
        return flags.size() - c.count;
      }
  }
  int64_t count = g.check(g.prims().count_true(flags.data(), flags.size()));
  remember_count_true(flags, count);
  return count;
}

bool packs_positions(const DVec& v) { return composes(v); }

bool moves_by_positions(const DVec& v) { return !host::is_flat_scalar(v.type()) || composes(v); }

std::vector<DVec> pack_all(Gpu& g, std::span<const DVec* const> vs, const DVec& flag_vec, DBuf made) {
  std::vector<DVec> out(vs.size());
  if (vs.empty()) return out;
  const int64_t n = flag_vec.size(), kept = count_true(g, flag_vec);
  // The positions of the trues, once for all the vectors that move through them: those with
  // sequences or tuples in them (a pending gather: its positions packed), and then the flat ones too.
  bool positions = made != nullptr && kept != n;
  for (const DVec* v : vs) {
    NDP_ASSERT(v->size() == n, "pack with flags of another length");
    positions = positions || (kept != n && moves_by_positions(*v));
  }
  std::vector<TakenRows> rows(vs.size());
  std::vector<size_t> irregular;  // the members with irregular rows
  for (size_t k = 0; positions && k < vs.size(); ++k)
    if (vs[k]->kind() == TypeKind::Seq && !vs[k]->regular_length() && vs[k]->elems().kind() != TypeKind::Var)
      irregular.push_back(k);
  DBuf pos;
  if (positions && made) {
    pos = std::move(made);
  } else if (positions && g.prims().packs_rows_in_one_block(n, irregular.size())) {
    // Few instances: the positions and every irregular member's kept lengths and offsets in one
    // launch (Note [Small inputs in one launch] in runtime/gpu/primitives.cpp), their totals
    // read back with one wait.
    pos = g.alloc(kept * 8);
    std::vector<runtime::gpu::Primitives::PackedRows> parts;
    for (size_t k : irregular) {
      rows[k] = TakenRows{g.alloc(kept * 8), KnownSegments{g.alloc((kept + 1) * 8), 0}};
      parts.push_back({vs[k]->lengths(), rows[k].lengths->pointer(), rows[k].segments.offsets->pointer()});
    }
    g.check(g.prims().pack_rows_block(flag_vec.data(), n, parts, pos->pointer()));
    std::vector<DBuf> offsets;
    for (size_t k : irregular) offsets.push_back(rows[k].segments.offsets);
    const std::vector<int64_t> totals = read_totals(g, offsets, kept);
    for (size_t j = 0; j < irregular.size(); ++j) {
      TakenRows& r = rows[irregular[j]];
      r.segments.total = totals[j];
      remember_segments(r.lengths, r.segments.offsets, kept, r.segments.total);
    }
    irregular.clear();  // made: not gathered again below
  } else if (positions) {
    pos = g.alloc(kept * 8);
    g.check(g.prims().true_positions(flag_vec.data(), n, pos->pointer()));
  }
  std::vector<Composed> composed;
  GatherBatch batch(g);
  // The irregular rows' lengths, all gathered in one launch, and their element counts read
  // back with one wait, where each member's take read its own.
  if (irregular.size() > 1) {  // (one member's take gathers and counts its rows as ever)
    std::vector<DBuf> lengths;
    for (size_t k : irregular) {
      lengths.push_back(g.alloc(kept * 8));
      batch.add(8, vs[k]->lengths(), pos->pointer(), kept, lengths.back()->pointer());
    }
    batch.send();
    std::vector<KnownSegments> segments = segments_of_valid_lengths(g, kept, lengths);
    for (size_t i = 0; i < irregular.size(); ++i) rows[irregular[i]] = {std::move(lengths[i]), std::move(segments[i])};
  }
  for (size_t k = 0; k < vs.size(); ++k) {
    const DVec& v = *vs[k];
    if (kept == n) out[k] = v;  // buffers are never written (Note [DVec]): no copy needed
    else if (kept == 0 && host::is_flat_scalar(v.type())) out[k] = DVec::scalar(v.type(), 0, g.alloc(0));
    else if (pos) out[k] = take_parts(g, v, pos->pointer(), kept, nullptr, composed, batch, rows[k].lengths ? &rows[k] : nullptr);
    else {
      DBuf packed = g.alloc(kept * elem_bytes(v.type()));
      g.check(g.prims().pack(elem_type(v.type()), v.data(), flag_vec.data(), n, packed->pointer()));
      out[k] = DVec::scalar(v.type(), kept, std::move(packed));
    }
  }
  batch.send();
  return out;
}

DVec pack(Gpu& g, const DVec& v, const DVec& flag_vec) {
  const DVec* one = &v;
  return std::move(pack_all(g, std::span<const DVec* const>(&one, 1), flag_vec).front());
}

DVec retype(lang::TypeContext& types, const DVec& v, const Type* t) {
  const Type* from = v.type();
  if (from == t) return v;
  if (from->kind == TypeKind::Data) return retype(types, v.fields(), t);
  if (t->kind == TypeKind::Data) return DVec::data(t, retype(types, v, types.subst(t->data->fields, t->args)));
  NDP_ASSERT(from->kind == t->kind, "retype between unrelated types");
  switch (t->kind) {
    case TypeKind::Seq: return v.with_elems(t, retype(types, v.elems(), t->a));
    case TypeKind::Pair: return DVec::pair(t, retype(types, v.first(), t->a), retype(types, v.second(), t->b));
    case TypeKind::Var: return DVec::open_type(t, v.size());
    default: return DVec::scalar(t, v.size(), v.buffer());
  }
}

namespace {

/// Note [Rows repeated as views]
/// A shared sequence passed to each of n instances (quickhull's points to its two halves) is its
/// one row n times. Taken by positions, that wrote n·L positions and every reader read them:
/// 61 µs and 160 MB more for quickhull's first level of 2·10^7 points (Nsight Compute, H200).
/// Where the row's elements are stored flat scalars or tuples of them, each component is
/// instead a view of stride 0 (element i is the row's i % L, Note [Regular elt views]): a fused
/// kernel computes the place, a pack or take of the elements composes positions from the shape
/// (take_composed), writing only the positions kept, and rows of them taken are views again
/// (take_parts), with no launch. The row's elements are its own whole elements vector (a
/// sequence's offsets start at 0).
std::optional<DVec> repeated_view(Gpu& g, const DVec& elems, int64_t row, int64_t n) {
  return zip_components(elems, elems, [&](const DVec& x, const DVec&) -> std::optional<DVec> {
    // A row 0, 1, ... (a row of instance ids) repeated is each element's place in its block.
    if (x.index_form() == AffineIndex::iota()) return DVec::deferred_index(g, x.type(), n * row, AffineIndex::rank(row));
    if (!host::is_flat_scalar(x.type()) || x.pending()) return std::nullopt;
    return DVec::deferred_view(g, x, n * row, DVec::Affine{row, 0, 0});
  });
}

}  // namespace

DVec replicate_one(Gpu& g, const DVec& one, int64_t n) {
  NDP_ASSERT(one.size() == 1, "replicate_one of a DVec without exactly one instance");
  if (n == 1) return one;
  if (one.kind() == TypeKind::Seq && by_positions()) {
    const int64_t row = one.total();
    if (row > 0)
      if (std::optional<DVec> view = repeated_view(g, one.elems(), row, n))
        return DVec::regular(g, one.type(), n, row, std::move(*view));
  }
  auto copies = [&g, n](const DVec& v) {
    DBuf zeros = g.alloc(n * 8);
    g.check(g.prims().fill(zeros->pointer(), n, 8, 0));
    return take(g, v, zeros->pointer(), n);
  };
  if (host::is_flat_scalar(one.type()) && !one.gather_unchecked()) {
    // A flat value n times is a broadcast, which a kernel reads in place (Note [Broadcast
    // inputs] in kernels.h); stored only where something else reads it. (An unchecked gather
    // is taken now, so that its check keeps its place among the errors.)
    if (std::optional<uint64_t> bits = one.known_bits()) return DVec::known(g, one.type(), n, *bits);
    return DVec::deferred_broadcast(one.type(), n, one, [copies, one] { return copies(one).buffer(); });
  }
  return copies(one);
}

// ---- transfers ----

namespace {

/// Note [Small sequences in one copy]
/// A sequence of flat scalars of a few KiB (an argument of a call through the embedding API,
/// a literal) is three buffers: lengths, offsets and elements. Sent as one allocation and one
/// copy (the parts laid out one after the other in host memory first), it costs one
/// allocation and one queued copy where three of each cost about 8 µs more per upload on an
/// H100. The parts are views of the one buffer (runtime::cuda::DeviceBuffer::view), which
/// each part's DBuf keeps alive.
constexpr size_t kOneCopyBytes = size_t{16} << 10;

std::optional<DVec> upload_small_seq(Gpu& g, const host::Vec& v) {
  const host::Vec& e = v.elems();
  if (!host::is_flat_scalar(e.type()) || host::as_uniform(e.shared_buffer()) != nullptr) return std::nullopt;
  const size_t n = static_cast<size_t>(v.size()), m = static_cast<size_t>(e.size());
  const size_t ebytes = static_cast<size_t>(elem_bytes(e.type()));
  const size_t len_at = 0, off_at = n * 8, elems_at = off_at + (n + 1) * 8, total = elems_at + m * ebytes;
  if (total > kOneCopyBytes) return std::nullopt;
  std::vector<unsigned char> staged(total);
  std::memcpy(staged.data() + len_at, v.lengths(), n * 8);
  std::memcpy(staged.data() + off_at, v.offsets(), (n + 1) * 8);
  if (m > 0) std::memcpy(staged.data() + elems_at, e.buffer().get(), m * ebytes);
  struct Parts {
    DBuf whole;
    runtime::cuda::DeviceBuffer len, off, elems;
  };
  auto parts = std::make_shared<Parts>();
  parts->whole = g.alloc(static_cast<int64_t>(total));
  const CUdeviceptr base = parts->whole->pointer();
  g.check(g.pool().upload(base, staged.data(), total));
  parts->len = runtime::cuda::DeviceBuffer::view(base + len_at, n * 8);
  parts->off = runtime::cuda::DeviceBuffer::view(base + off_at, (n + 1) * 8);
  parts->elems = runtime::cuda::DeviceBuffer::view(base + elems_at, m * ebytes);
  DBuf len(parts, &parts->len), off(parts, &parts->off), elems(parts, &parts->elems);
  return DVec::seq(v.type(), v.size(), std::move(len), std::move(off),
                   DVec::scalar(e.type(), e.size(), std::move(elems)));
}

}  // namespace

DVec upload(Gpu& g, const host::Vec& v) {
  const Type* t = v.type();
  int64_t n = v.size();
  switch (t->kind) {
    case TypeKind::Seq: {
      if (std::optional<DVec> small = upload_small_seq(g, v)) return std::move(*small);
      DBuf len = g.alloc(n * 8), off = g.alloc((n + 1) * 8);
      g.check(g.pool().upload(len->pointer(), v.lengths(), static_cast<size_t>(n) * 8));
      g.check(g.pool().upload(off->pointer(), v.offsets(), static_cast<size_t>(n + 1) * 8));
      return DVec::seq(t, n, std::move(len), std::move(off), upload(g, v.elems()));
    }
    case TypeKind::Pair: return DVec::pair(t, upload(g, v.first()), upload(g, v.second()));
    case TypeKind::Data: return DVec::data(t, upload(g, v.fields()));
    case TypeKind::Var: return DVec::open_type(t, n);
    default: {
      int bytes = elem_bytes(t);
      DBuf buf = g.alloc(n * bytes);
      // A uniform buffer (a literal in n instances, Note [Uniform buffers]): a fill kernel with
      // the value as its parameter, where a copy would first write n copies in host memory.
      if (host::as_uniform(v.shared_buffer()) != nullptr && n > 0) {
        g.check(g.prims().fill(buf->pointer(), n, bytes, v.uniform_bits()));
      } else {
        g.check(g.pool().upload(buf->pointer(), v.buffer().get(), static_cast<size_t>(n * bytes)));
      }
      return DVec::scalar(t, n, std::move(buf));
    }
  }
}

host::Vec download(Gpu& g, const DVec& v) {
  const Type* t = v.type();
  int64_t n = v.size();
  switch (t->kind) {
    case TypeKind::Seq: {
      host::Buf<int64_t> len(n);
      std::shared_ptr<int64_t[]> off(new int64_t[static_cast<size_t>(n + 1)]);
      if (n == 1) {  // one sequence: its length is its elements' count, known here
        len[0] = v.elems().size();
        off[0] = 0;
        off[1] = len[0];
      } else {
        g.check(g.pool().download(len.data(), v.lengths(), static_cast<size_t>(n) * 8));
        g.check(g.pool().download(off.get(), v.offsets(), static_cast<size_t>(n + 1) * 8));
      }
      return host::Vec::seq(t, n, len.share(), std::move(off), download(g, v.elems()));
    }
    case TypeKind::Pair: return host::Vec::pair(t, download(g, v.first()), download(g, v.second()));
    case TypeKind::Data: return host::Vec::data(t, download(g, v.fields()));
    case TypeKind::Var: return host::Vec::open_type(t, n);
    default: {
      int bytes = elem_bytes(t);
      host::Buf<uint8_t> buf(n * bytes);
      g.check(g.pool().download(buf.data(), v.data(), static_cast<size_t>(n * bytes)));
      return host::Vec::scalar(t, n, buf.share());
    }
  }
}

}  // namespace ndp::exec::cuda
