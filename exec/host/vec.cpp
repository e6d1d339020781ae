// Vec construction and the structural operations (take, concat, pack) for every element type.
#include "exec/host/vec.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include <omp.h>
#include <unistd.h>

#include "exec/host/parallel_loops.h"
#include "lang/diagnostics.h"
#include "lang/eval/prim_call.h"
#include "runtime/cpu/primitives.h"

namespace ndp::exec::host {

using lang::Type;
using lang::TypeKind;

namespace {

struct FunctionTable {
  std::mutex mu;
  std::vector<std::shared_ptr<const lang::FnObj>> values;
  std::map<std::string, int64_t> ids;
};

FunctionTable& function_table() {
  static FunctionTable table;
  return table;
}

}  // namespace

int64_t function_id(const lang::FnObj& f) {
  std::string key = std::to_string(static_cast<int>(f.target)) + ":" + std::to_string(f.id);
  for (const lang::Type* t : f.type_args) key += "," + std::to_string(reinterpret_cast<uintptr_t>(t));
  FunctionTable& table = function_table();
  std::lock_guard<std::mutex> lock(table.mu);
  if (!f.env.empty()) {  // a closure: its captured values make it distinct
    table.values.push_back(std::make_shared<const lang::FnObj>(f));
    return static_cast<int64_t>(table.values.size() - 1);
  }
  auto [it, fresh] = table.ids.emplace(key, static_cast<int64_t>(table.values.size()));
  if (fresh) table.values.push_back(std::make_shared<const lang::FnObj>(f));
  return it->second;
}

std::vector<int64_t> function_tags(const std::vector<lang::Value>& candidates) {
  FunctionTable& table = function_table();
  std::lock_guard<std::mutex> lock(table.mu);
  std::vector<int64_t> tags(table.values.size(), -1);
  for (size_t id = 0; id < table.values.size(); ++id)
    for (size_t c = 0; c < candidates.size() && tags[id] < 0; ++c) {
      const lang::FnObj& f = candidates[c].fn();
      if (f.target == table.values[id]->target && f.id == table.values[id]->id) tags[id] = static_cast<int64_t>(c);
    }
  return tags;
}

std::shared_ptr<const lang::FnObj> function_of(int64_t id) {
  FunctionTable& table = function_table();
  std::lock_guard<std::mutex> lock(table.mu);
  return table.values.at(static_cast<size_t>(id));
}

void fail_function_value() { throw lang::eval::EvalError{kNoFunctionValues, lang::Span{}}; }

namespace {

void check_status(const runtime::Status& st, const char* what) {
  if (!runtime::ok(st))
    throw lang::InternalError(std::string("internal error: cpu backend: ") + what + " failed (" +
                              ndp_status_name(st.code) + ")");
}

}  // namespace

// ---- uniform buffers (Note [Uniform buffers] in vec.h) ----

namespace {

/// The deleter that marks a buffer as uniform and owns its UniformBuffer (found through the
/// deleter, so also from an alias that points at the filled memory).
struct UniformDeleter {
  const UniformBuffer* state;
  void operator()(const void*) const { delete state; }
};

}  // namespace

UniformBuffer::~UniformBuffer() {
  if (data_) pooled_free(data_, static_cast<size_t>(std::max<int64_t>(n_, 1)) * width_);
  if (offsets_) pooled_free(offsets_, static_cast<size_t>(n_ + 1) * sizeof(int64_t));
}

const void* UniformBuffer::data() const {
  std::call_once(data_once_, [&] {
    void* p = pooled_alloc(static_cast<size_t>(std::max<int64_t>(n_, 1)) * width_);
    auto fill = [&](auto tag) {
      // std::fill per block (memset for bytes): a loop storing uint8_t could alias its own
      // pointer and would not vectorise.
      using T = typename decltype(tag)::type;
      T x = value<T>();
      T* o = static_cast<T*>(p);
      int64_t blocks = parallel_blocks(n_);
      parallel_blocks_for(blocks, [&](int64_t b) { std::fill(o + block_start(n_, b, blocks), o + block_start(n_, b + 1, blocks), x); });
    };
    switch (width_) {
      case 1: fill(Tag<uint8_t>{}); break;
      case 4: fill(Tag<uint32_t>{}); break;
      default: fill(Tag<uint64_t>{}); break;
    }
    data_ = p;
  });
  return data_;
}

const int64_t* UniformBuffer::offsets() const {
  std::call_once(offsets_once_, [&] {
    NDP_ASSERT(width_ == sizeof(int64_t), "offsets of a uniform buffer that is not int lengths");
    auto* o = static_cast<int64_t*>(pooled_alloc(static_cast<size_t>(n_ + 1) * sizeof(int64_t)));
    int64_t len = value<int64_t>();
    parallel_for(n_ + 1, [&](int64_t i) { o[i] = i * len; });
    offsets_ = o;
  });
  return offsets_;
}

std::shared_ptr<const void> uniform_buffer_bits(uint64_t bits, size_t width, int64_t n) {
  auto* u = new UniformBuffer(bits, width, n);
  return std::shared_ptr<const void>(static_cast<const void*>(u), UniformDeleter{u});
}

const UniformBuffer* as_uniform(const std::shared_ptr<const void>& buf) {
  const UniformDeleter* d = std::get_deleter<UniformDeleter>(buf);
  return d ? d->state : nullptr;
}

// ---- generated buffers (Note [Generated buffers] in vec.h) ----

namespace {

struct GeneratedDeleter {
  const GeneratedBuffer* state;
  void operator()(const void*) const { delete state; }
};

/// `buf` itself, or, for a generated buffer, its memory under a handle that is no longer
/// recognised as generated: lengths (which offsets and segment descriptors read as memory).
std::shared_ptr<const void> stored(std::shared_ptr<const void> buf) {
  const GeneratedBuffer* g = as_generated(buf);
  if (!g) return buf;
  const void* data = g->data();
  return std::shared_ptr<const void>(data, [keep = std::move(buf)](const void*) {});
}

}  // namespace

GeneratedBuffer::~GeneratedBuffer() {
  if (data_) pooled_free(data_, static_cast<size_t>(std::max<int64_t>(n_, 1)) * width_);
}

const void* GeneratedBuffer::data() const {
  std::call_once(data_once_, [&] {
    void* p = pooled_alloc(static_cast<size_t>(std::max<int64_t>(n_, 1)) * width_);
    const int64_t blocks = parallel_blocks(n_);
    parallel_blocks_for(blocks, [&](int64_t b) {
      const int64_t from = block_start(n_, b, blocks), to = block_start(n_, b + 1, blocks);
      if (from < to) fill(from, to, static_cast<char*>(p) + static_cast<size_t>(from) * width_);
    });
    data_ = p;
    filled_.store(true, std::memory_order_release);
  });
  return data_;
}

namespace {

/// NDP_GENERATED: 0 none, 1 filled buffers from kLeastGenerated values, 2 (unset) past the caches.
int generated_mode() {
  static const int mode = [] {
    const char* s = std::getenv("NDP_GENERATED");
    return s && std::string(s) == "0" ? 0 : s && std::string(s) == "1" ? 1 : 2;
  }();
  return mode;
}

}  // namespace

bool generated_allowed() { return generated_mode() != 0; }

bool generated_worthwhile(int64_t bytes, int64_t n) {
  const int mode = generated_mode();
  // The cores' own caches together: what a pass over a stored vector reads back from, if it fits.
  static const int64_t caches = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return static_cast<int64_t>(l2 > 0 ? l2 : 1 << 20) * std::max(1, omp_get_max_threads());
  }();
  if (mode == 0 || n < kLeastGenerated) return false;
  return mode == 1 || bytes > caches;
}

std::optional<Strided> GeneratedBuffer::strided() const {
  if (!strided_) return std::nullopt;
  const GeneratedBuffer* g = strided_->source->generated();
  if (g && !g->filled()) return std::nullopt;  // (a view of a view: in runs)
  return strided_;
}

namespace {

/// Elements [begin, end) of a strided view of a vector in memory, to out: a row's run at a time.
template <class T>
void fill_strided(const Strided& s, int64_t begin, int64_t end, T* out) {
  const T* src = static_cast<const T*>(s.source->raw_data());
  for (int64_t p = begin, q = begin / s.c; p < end; ++q) {
    const int64_t stop = std::min(end, (q + 1) * s.c);
    copy_run(out + (p - begin), src + q * s.stride + s.offset + (p - q * s.c), stop - p);
    p = stop;
  }
}

}  // namespace

void GeneratedBuffer::fill(int64_t begin, int64_t end, void* out) const {
  if (fill_) return fill_(begin, end, out);
  if (std::optional<Strided> s = strided()) {
    switch (width_) {
      case 1: return fill_strided(*s, begin, end, static_cast<uint8_t*>(out));
      case 4: return fill_strided(*s, begin, end, static_cast<uint32_t*>(out));
      case 8: return fill_strided(*s, begin, end, static_cast<uint64_t*>(out));
      default: break;
    }
  }
  char* o = static_cast<char*>(out);
  for (int64_t p = begin; p < end;) {
    const Located at = locate_(p);
    const int64_t stop = std::min(end, at.end), count = stop - p;
    const GeneratedBuffer* g = at.source->generated();
    if (g && !g->filled()) g->fill(at.pos, at.pos + count, o + static_cast<size_t>(p - begin) * width_);
    else std::memcpy(o + static_cast<size_t>(p - begin) * width_,
                     static_cast<const char*>(at.source->raw_data()) + static_cast<size_t>(at.pos) * width_,
                     static_cast<size_t>(count) * width_);
    p = stop;
  }
}

const void* GeneratedBuffer::in_place(int64_t p, int64_t& end) const {
  if (filled()) {
    end = n_;
    return static_cast<const char*>(data_) + static_cast<size_t>(p) * width_;
  }
  if (!locate_) return nullptr;
  const Located at = locate_(p);
  const GeneratedBuffer* g = at.source->generated();
  int64_t source_end = at.source->size();
  const void* q = g && !g->filled() ? g->in_place(at.pos, source_end)
                                    : static_cast<const char*>(at.source->raw_data()) + static_cast<size_t>(at.pos) * width_;
  end = std::min(at.end, p + (source_end - at.pos));
  return q;
}

std::shared_ptr<const void> generated_view(size_t width, int64_t n, Locate locate, std::optional<Strided> strided) {
  auto* g = new GeneratedBuffer(width, n, std::move(locate), strided);
  return std::shared_ptr<const void>(static_cast<const void*>(g), GeneratedDeleter{g});
}

std::shared_ptr<const void> generated_buffer(size_t width, int64_t n, FillRange fill) {
  auto* g = new GeneratedBuffer(width, n, std::move(fill));
  return std::shared_ptr<const void>(static_cast<const void*>(g), GeneratedDeleter{g});
}

const GeneratedBuffer* as_generated(const std::shared_ptr<const void>& buf) {
  const GeneratedDeleter* d = std::get_deleter<GeneratedDeleter>(buf);
  return d ? d->state : nullptr;
}

bool same_uniform(std::span<const Vec> parts) {
  for (const Vec& p : parts)
    if (!(p.is_uniform() || p.is_regular()) || p.uniform_bits() != parts[0].uniform_bits()) return false;
  return true;
}

Vec broadcast_first(const Vec& v, int64_t n) {
  NDP_ASSERT(is_flat_scalar(v.type()) && (v.is_uniform() || v.size() > 0),
             "broadcast_first of a Vec without a scalar instance");
  if (v.is_uniform()) return Vec::scalar(v.type(), n, uniform_buffer_bits(v.uniform_bits(), storage_width(v.kind()), n));
  return with_scalar(v.kind(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Vec::scalar(v.type(), n, uniform_buffer(v.data<T>()[0], n));
  });
}

bool all_uniform(std::span<const Vec> vs) {
  return std::all_of(vs.begin(), vs.end(), [](const Vec& v) { return v.is_uniform(); });
}

std::vector<Vec> first_instances(std::span<const Vec> vs) {
  return map_parts(vs, [](const Vec& v) { return broadcast_first(v, 1); });
}

std::shared_ptr<int64_t[]> new_offsets(int64_t n) {
  if (n > kMaxElements) throw std::bad_alloc();  // "Out of memory." (Buf)
  size_t bytes = static_cast<size_t>(n + 1) * sizeof(int64_t);
  return std::shared_ptr<int64_t[]>(static_cast<int64_t*>(pooled_alloc(bytes)),
                                    [bytes](int64_t* p) { pooled_free(p, bytes); });
}

std::shared_ptr<const int64_t[]> offsets_of(const int64_t* lengths, int64_t n) {
  auto off = new_offsets(n);
  // An exclusive prefix sum, the check for negative lengths folded into it (two passes over
  // blocks when large; one plain loop when small, as most are at the leaves of a recursion).
  int64_t* o = off.get();
  int64_t nblocks = parallel_blocks(n);
  std::vector<int64_t> block_sum(static_cast<size_t>(nblocks) + 1, 0);
  auto bounds = [&](int64_t b) { return static_cast<int64_t>(static_cast<__int128>(n) * b / nblocks); };
  int64_t lowest = 0;
#pragma omp parallel for schedule(static, 1) reduction(min : lowest) if (nblocks > 1)
  for (int64_t b = 0; b < nblocks; ++b) {
    int64_t sum = 0, low = 0;
    for (int64_t i = bounds(b), e = bounds(b + 1); i < e; ++i) {
      int64_t l = lengths[i];
      low = std::min(low, l);
      o[i] = sum;  // block-relative; the block's start is added below
      // Saturating at kMaxElements + 1, so that no sum of huge lengths wraps around.
      sum = std::min(sum + std::min(l, kMaxElements + 1), kMaxElements + 1);
    }
    block_sum[static_cast<size_t>(b) + 1] = sum;
    lowest = std::min(lowest, low);
  }
  if (lowest < 0) throw lang::InternalError("internal error: cpu backend: a negative sequence length");
  for (int64_t b = 0; b < nblocks; ++b)
    block_sum[static_cast<size_t>(b) + 1] =
        std::min(block_sum[static_cast<size_t>(b) + 1] + block_sum[static_cast<size_t>(b)], kMaxElements + 1);
  if (block_sum[static_cast<size_t>(nblocks)] > kMaxElements) throw std::bad_alloc();  // "Out of memory."
#pragma omp parallel for schedule(static, 1) if (nblocks > 1)
  for (int64_t b = 1; b < nblocks; ++b) {
    int64_t base = block_sum[static_cast<size_t>(b)];
    for (int64_t i = bounds(b), e = bounds(b + 1); i < e; ++i) o[i] += base;
  }
  o[n] = block_sum[static_cast<size_t>(nblocks)];
  return off;
}

namespace {

// Note [Offsets cache]
// The offsets of a lengths buffer are asked for again and again: `nest(lens, x)` after
// `lens = lengths(s)` (every filter and map in a lifted context), each consumer kernel over
// the same segments, several nests of one lengths vector. Buffers are immutable while alive,
// so the last few (lengths buffer, offsets) pairs are kept, the buffer by weak reference: a
// freed buffer never matches, even when a new one takes its address. Only moderate sizes are
// kept, so that the cache holds little memory beyond what the live vectors hold.
struct OffsetsCache {
  static constexpr size_t kEntries = 4;
  static constexpr int64_t kMaxCount = int64_t{1} << 21;  // 16 MiB of offsets
  struct Entry {
    std::weak_ptr<const void> lengths;
    const void* raw = nullptr;
    int64_t n = -1;
    std::shared_ptr<const int64_t[]> offsets;
  };
  Entry entries[kEntries];
  size_t next = 0;

  std::shared_ptr<const int64_t[]> find(const std::shared_ptr<const void>& lengths, int64_t n) {
    for (Entry& e : entries)
      if (e.raw == lengths.get() && e.n == n && !e.lengths.expired() && e.lengths.lock() == lengths) return e.offsets;
    return nullptr;
  }
  void add(const std::shared_ptr<const void>& lengths, int64_t n, std::shared_ptr<const int64_t[]> offsets) {
    if (n > kMaxCount || !lengths) return;
    entries[next] = Entry{lengths, lengths.get(), n, std::move(offsets)};
    next = (next + 1) % kEntries;
  }
};

OffsetsCache& offsets_cache() {
  thread_local OffsetsCache cache;  // the executor's thread; no locking
  return cache;
}

}  // namespace

std::shared_ptr<const int64_t[]> offsets_for(const std::shared_ptr<const void>& lengths, int64_t n) {
  // A uniform buffer keeps its own offsets (i·length, no scan); the alias keeps it alive.
  if (const UniformBuffer* u = as_uniform(lengths)) return std::shared_ptr<const int64_t[]>(lengths, u->offsets());
  if (as_generated(lengths)) return offsets_for(stored(lengths), n);
  OffsetsCache& cache = offsets_cache();
  if (auto hit = cache.find(lengths, n)) return hit;
  auto off = offsets_of(static_cast<const int64_t*>(lengths.get()), n);
  cache.add(lengths, n, off);
  return off;
}

Vec Vec::scalar(const Type* t, int64_t n, std::shared_ptr<const void> buf) {
  NDP_ASSERT(is_flat_scalar(t), "Vec::scalar of a structured type");
  Vec v;
  v.type_ = t;
  v.n_ = n;
  v.buf_ = std::move(buf);
  v.uni_ = as_uniform(v.buf_);
  v.gen_ = as_generated(v.buf_);
  NDP_ASSERT(!v.uni_ || v.uni_->size() >= n, "a Vec past the end of its uniform buffer");
  NDP_ASSERT(!v.gen_ || v.gen_->size() >= n, "a Vec past the end of its generated buffer");
  return v;
}

Vec Vec::seq(const Type* t, int64_t n, std::shared_ptr<const void> lengths, Vec elems) {
  lengths = stored(std::move(lengths));
  // Regular, or one sequence (made regular below): no offsets to compute.
  if (n == 1 || as_uniform(lengths)) return seq(t, n, std::move(lengths), nullptr, std::move(elems));
  auto off = offsets_for(lengths, n);
  return seq(t, n, std::move(lengths), std::move(off), std::move(elems));
}

Vec Vec::seq(const Type* t, int64_t n, std::shared_ptr<const void> lengths, std::shared_ptr<const int64_t[]> offsets,
             Vec elems) {
  NDP_ASSERT(t->kind == TypeKind::Seq, "Vec::seq of a non-sequence type");
  lengths = stored(std::move(lengths));
  // One sequence is regular whatever its length: a recursion over a single input sequence
  // starts regular, and stays so while its segments split evenly (Note [Uniform buffers]).
  const UniformBuffer* uni = as_uniform(lengths);
  if (n == 1 && !uni) {
    NDP_ASSERT(static_cast<const int64_t*>(lengths.get())[0] == elems.size(),
               "sequence lengths do not cover their elements");
    lengths = uniform_buffer(elems.size(), 1);
    uni = as_uniform(lengths);
  }
  Vec v;
  v.type_ = t;
  v.n_ = n;
  v.uni_ = uni;
  if (v.uni_) {
    // Regular: the offsets are i·length, made by the buffer only if asked for.
    NDP_ASSERT(v.uni_->size() >= n && n * v.uni_->value<int64_t>() == elems.size(),
               "sequence lengths do not cover their elements");
    offsets = nullptr;
  } else {
    NDP_ASSERT(offsets[n] == elems.size(), "sequence lengths do not cover their elements");
    if (!offsets_cache().find(lengths, n)) offsets_cache().add(lengths, n, offsets);  // for later nests of these lengths
  }
  v.buf_ = std::move(lengths);
  v.off_ = std::move(offsets);
  v.a_ = std::make_shared<const Vec>(std::move(elems));
  return v;
}

Vec Vec::pair(const Type* t, Vec a, Vec b) {
  NDP_ASSERT(t->kind == TypeKind::Pair && a.size() == b.size(), "Vec::pair of mismatched parts");
  Vec v;
  v.type_ = t;
  v.n_ = a.size();
  v.a_ = std::make_shared<const Vec>(std::move(a));
  v.b_ = std::make_shared<const Vec>(std::move(b));
  return v;
}

Vec Vec::data(const Type* t, Vec fields) {
  NDP_ASSERT(t->kind == TypeKind::Data, "Vec::data of a non-datatype");
  Vec v;
  v.type_ = t;
  v.n_ = fields.size();
  v.a_ = std::make_shared<const Vec>(std::move(fields));
  return v;
}

Vec Vec::open_type(const Type* t, int64_t n) {
  if (n != 0) fail_function_value();
  Vec v;
  v.type_ = t;
  return v;
}

Indices segment_ids(runtime::SegView segs) {
  Indices out(static_cast<size_t>(segs.total()));
  check_status(runtime::segment_ids(segs, std::span<int64_t>(out.data(), out.size())), "segment ids");
  return out;
}

Indices true_positions(const bool* flags, int64_t n) {
  // Fixed blocks counted first (FlagSplit), then each block writes at its offset.
  const FlagSplit split(flags, n);
  Indices out(static_cast<size_t>(split.a_count()));
  parallel_blocks_for(split.blocks(), [&](int64_t b) {
    int64_t o = split.a_start(b);
    for (int64_t i = split.begin(b), e = split.begin(b + 1); i < e; ++i)
      if (flags[i]) out[static_cast<size_t>(o++)] = i;
  });
  return out;
}

namespace {

/// Whether every leaf of v is a flat scalar: v is scalars, or pairs and datatypes of them (a
/// point, a line of two points), so a few flat arrays of the same positions.
bool flat_leaves(const Vec& v) {
  switch (v.type()->kind) {
    case TypeKind::Pair: return flat_leaves(v.first()) && flat_leaves(v.second());
    case TypeKind::Data: return flat_leaves(v.fields());
    default: return is_flat_scalar(v.type());
  }
}

/// v (flat_leaves) with `move` (a flat scalar Vec to the moved one) applied to each leaf: one
/// pass a leaf, and no position vector between them.
template <class Move>
Vec map_leaves(const Vec& v, Move&& move) {
  switch (v.type()->kind) {
    case TypeKind::Pair: return Vec::pair(v.type(), map_leaves(v.first(), move), map_leaves(v.second(), move));
    case TypeKind::Data: return Vec::data(v.type(), map_leaves(v.fields(), move));
    default: return move(v);
  }
}

/// v (flat_leaves) with each leaf copied into `total` new elements by copy(out, in), the
/// leaf's element arrays as T* and const T*.
template <class Copy>
Vec copy_leaves(const Vec& v, int64_t total, Copy&& copy) {
  return map_leaves(v, [&](const Vec& leaf) {
    return with_scalar(leaf.kind(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Buf<T> out(total);
      copy(out.data(), leaf.data<T>());
      return Vec::scalar(leaf.type(), total, out.share());
    });
  });
}

}  // namespace

Vec take(const Vec& v, std::span<const int64_t> idx) {
  const Type* t = v.type();
  int64_t m = static_cast<int64_t>(idx.size());
  switch (t->kind) {
    case TypeKind::Seq: {
      if (v.is_regular()) {
        // Regular stays regular: element x of new instance i is element ix[i]·c + x.
        int64_t c = v.regular_length();
        const Vec& ve = v.elems();
        const int64_t* ix = idx.data();
        Vec elems;
        if (flat_leaves(ve)) {  // a leaf at a time, as below
          elems = copy_leaves(ve, m * c, [&](auto* o, const auto* in) {
            parallel_regular_runs(m, c, [&](int64_t i, int64_t from, int64_t to) {
              copy_run(o + i * c + from, in + ix[i] * c + from, to - from);
            });
          });
        } else {
          Indices eidx(static_cast<size_t>(m * c));
          parallel_regular_runs(m, c, [&](int64_t i, int64_t from, int64_t to) {
            for (int64_t x = from; x < to; ++x) eidx[static_cast<size_t>(i * c + x)] = ix[i] * c + x;
          });
          elems = take(ve, eidx);
        }
        return Vec::seq(t, m, uniform_buffer(c, m), std::move(elems));
      }
      Buf<int64_t> len(m);
      int64_t* l = len.data();
      const int64_t* vl = v.lengths();
      const int64_t* ix = idx.data();
      parallel_for(m, [&](int64_t i) { l[i] = vl[ix[i]]; });
      auto off = offsets_of(l, m);
      const int64_t* voff = v.offsets();
      const Vec& ve = v.elems();
      if (flat_leaves(ve)) {
        // Elements of flat scalars (or tuples of them): each new instance is one contiguous
        // block of the old elements, copied a leaf at a time.
        const int64_t* oo = off.get();
        Vec elems = copy_leaves(ve, oo[m], [&](auto* o, const auto* in) {
          parallel_run_pieces(m, oo, [&](int64_t i, int64_t from, int64_t to) {
            copy_run(o + oo[i] + from, in + voff[ix[i]] + from, to - from);
          });
        });
        return Vec::seq(t, m, len.share(), std::move(off), std::move(elems));
      }
      // Element p of new instance i is element p - off[i] of old instance idx[i].
      Indices seg = segment_ids(runtime::SegView(ndp_segdes_irregular(m, len.data(), off.get())));
      Indices eidx(seg.size());
      parallel_for(static_cast<int64_t>(seg.size()), [&](int64_t p) {
        int64_t i = seg[static_cast<size_t>(p)];
        eidx[static_cast<size_t>(p)] = voff[idx[i]] + (p - off[i]);
      });
      Vec elems = take(v.elems(), eidx);
      return Vec::seq(t, m, len.share(), std::move(off), std::move(elems));
    }
    case TypeKind::Pair: return Vec::pair(t, take(v.first(), idx), take(v.second(), idx));
    case TypeKind::Data: return Vec::data(t, take(v.fields(), idx));
    case TypeKind::Var: return Vec::open_type(t, m);
    default:
      if (v.is_uniform()) return broadcast_first(v, m);
      return with_scalar(t->kind, [&](auto tag) {
        using T = typename decltype(tag)::type;
        Buf<T> out(m);
        T* o = out.data();
        const T* in = v.data<T>();
        const int64_t* ix = idx.data();
        parallel_for(m, [&](int64_t i) { o[i] = in[ix[i]]; });
        return Vec::scalar(t, m, out.share());
      });
  }
}

Indices iota_indices(int64_t n, int64_t first) {
  Indices idx(static_cast<size_t>(n));
  parallel_for(n, [&](int64_t i) { idx[static_cast<size_t>(i)] = first + i; });
  return idx;
}

Vec slice(const Vec& v, int64_t begin, int64_t count) {
  NDP_ASSERT(begin >= 0 && count >= 0 && begin + count <= v.size(), "slice out of range");
  if (begin == 0 && count == v.size()) return v;
  return take(v, iota_indices(count, begin));
}

namespace {

/// Flat scalar parts that lie one after another in one buffer (the packs one partition wrote,
/// Note [Children one after another] in flatten/passes/lay_out_results.h): their concatenation
/// as a view of that memory, n elements; nothing for parts elsewhere.
std::optional<Vec> contiguous_view(std::span<const Vec> parts, int64_t n) {
  const size_t width = storage_width(parts[0].kind());
  auto nonempty = std::find_if(parts.begin(), parts.end(), [](const Vec& p) { return p.size() > 0; });
  if (nonempty == parts.end()) return std::nullopt;
  const Vec::Buffer& first = nonempty->shared_buffer();
  const char* end = static_cast<const char*>(first.get());
  for (const Vec& p : parts) {
    if (p.size() == 0) continue;  // (an empty part may lie anywhere)
    const Vec::Buffer& b = p.shared_buffer();
    // Memory (not a uniform or generated buffer) of the same allocation, right after the last part.
    if (b == nullptr || p.generated() != nullptr || as_uniform(b) != nullptr || b.get() != end || first.owner_before(b) ||
        b.owner_before(first))
      return std::nullopt;
    end += static_cast<size_t>(p.size()) * width;
  }
  return Vec::scalar(parts[0].type(), n, first);
}

}  // namespace

Vec concat(std::span<const Vec> parts) {
  NDP_ASSERT(!parts.empty(), "concat of no parts");
  const Type* t = parts[0].type();
  int64_t n = 0;
  for (const Vec& p : parts) n += p.size();
  if (parts.size() == 1) return parts[0];
  auto children = [&](auto get) { return map_parts(parts, get); };
  switch (t->kind) {
    case TypeKind::Seq: {
      if (same_uniform(parts)) {  // regular sequences of one length stay so
        auto elems = children([](const Vec& p) { return p.elems(); });
        return Vec::seq(t, n, uniform_buffer(parts[0].regular_length(), n), concat(elems));
      }
      Buf<int64_t> len(n);
      int64_t o = 0;
      for (const Vec& p : parts) {
        std::memcpy(len.data() + o, p.lengths(), static_cast<size_t>(p.size()) * sizeof(int64_t));
        o += p.size();
      }
      auto elems = children([](const Vec& p) { return p.elems(); });
      Vec e = concat(elems);
      return Vec::seq(t, n, len.share(), std::move(e));
    }
    case TypeKind::Pair: {
      auto a = children([](const Vec& p) { return p.first(); });
      auto b = children([](const Vec& p) { return p.second(); });
      return Vec::pair(t, concat(a), concat(b));
    }
    case TypeKind::Data: {
      auto f = children([](const Vec& p) { return p.fields(); });
      return Vec::data(t, concat(f));
    }
    case TypeKind::Var: return Vec::open_type(t, n);
    default:
      if (same_uniform(parts) && n > 0) return broadcast_first(parts[0], n);
      if (std::optional<Vec> view = contiguous_view(parts, n)) return *view;
      return with_scalar(t->kind, [&](auto tag) {
        using T = typename decltype(tag)::type;
        Buf<T> out(n);
        int64_t o = 0;
        for (const Vec& p : parts) {
          if (p.size() > 0) std::memcpy(out.data() + o, p.data<T>(), static_cast<size_t>(p.size()) * sizeof(T));
          o += p.size();
        }
        return Vec::scalar(t, n, out.share());
      });
  }
}

int64_t count_true(const bool* flags, int64_t n) { return runtime::count_true(std::span<const bool>(flags, static_cast<size_t>(n))); }

int64_t count_true(const Vec& flags) {
  if (flags.is_uniform()) return flags.uniform_value<bool>() ? flags.size() : 0;
  return count_true(flags.data<bool>(), flags.size());
}

Vec pack(const Vec& v, const Vec& flags) {
  NDP_ASSERT(v.size() == flags.size(), "pack with flags of another length");
  if (flags.is_uniform()) return flags.uniform_value<bool>() ? v : take(v, {});
  return pack(v, flags.data<bool>());
}

namespace {

/// pack of irregular rows of flat leaves by one flag a row, `kept` of them set: the rows cut
/// into blocks, each block's kept rows and elements counted, then each block writes its kept
/// rows' lengths, offsets and sources, and the elements are copied a kept row at a time. A
/// flattened recursion packs its recursing and its finished rows at every level, and at the
/// deep levels a row holds a few elements and its flag is a coin toss, so the loops over rows
/// are branch-free, and there is no position vector and no second offsets pass (take's way).
Vec pack_rows(const Vec& v, const bool* flags, int64_t kept) {
  const int64_t n = v.size();
  const int64_t* vl = v.lengths();
  const int64_t* voff = v.offsets();
  const int64_t blocks = parallel_blocks(n + voff[n]);
  std::vector<int64_t> rows_before(static_cast<size_t>(blocks) + 1, 0), elems_before(static_cast<size_t>(blocks) + 1, 0);
  parallel_blocks_for(blocks, [&](int64_t b) {
    int64_t rows = 0, elems = 0;
    for (int64_t i = block_start(n, b, blocks), end = block_start(n, b + 1, blocks); i < end; ++i) {
      rows += flags[i];
      elems += vl[i] & -static_cast<int64_t>(flags[i]);
    }
    rows_before[static_cast<size_t>(b) + 1] = rows;
    elems_before[static_cast<size_t>(b) + 1] = elems;
  });
  for (size_t b = 0; b < static_cast<size_t>(blocks); ++b) {
    rows_before[b + 1] += rows_before[b];
    elems_before[b + 1] += elems_before[b];
  }
  NDP_ASSERT(rows_before.back() == kept, "pack_rows with a wrong count");
  Buf<int64_t> len(kept);
  std::shared_ptr<int64_t[]> off = new_offsets(kept);
  Indices from(static_cast<size_t>(kept));
  int64_t* l = len.data();
  int64_t* o = off.get();
  o[kept] = elems_before.back();
  parallel_blocks_for(blocks, [&](int64_t b) {
    // Every row written at the next free slot, which advances for a kept one; done once the
    // block's slots are full, so no write reaches the next block's.
    int64_t w = rows_before[static_cast<size_t>(b)], at = elems_before[static_cast<size_t>(b)];
    const int64_t w_end = rows_before[static_cast<size_t>(b) + 1];
    for (int64_t i = block_start(n, b, blocks), end = block_start(n, b + 1, blocks); i < end && w < w_end; ++i) {
      l[w] = vl[i];
      o[w] = at;
      from[static_cast<size_t>(w)] = voff[i];
      at += vl[i] & -static_cast<int64_t>(flags[i]);
      w += flags[i];
    }
  });
  Vec elems = copy_leaves(v.elems(), o[kept], [&](auto* out, const auto* in) {
    parallel_run_pieces(kept, o, [&](int64_t i, int64_t b, int64_t e) {
      copy_run(out + o[i] + b, in + from[static_cast<size_t>(i)] + b, e - b);
    });
  });
  return Vec::seq(v.type(), kept, len.share(), std::shared_ptr<const int64_t[]>(std::move(off)), std::move(elems));
}

}  // namespace

Vec pack(const Vec& v, const bool* flags) {
  // Every flag set: the vector as it is, with no copy (the recursive instances of a level where
  // none has finished yet, so at the top levels of a recursion, where vectors are largest).
  int64_t total = count_true(flags, v.size());
  if (total == v.size()) return v;
  if (v.is_uniform()) return broadcast_first(v, total);
  if (v.type()->kind == TypeKind::Seq && !v.is_regular() && flat_leaves(v.elems())) return pack_rows(v, flags, total);
  if (!is_flat_scalar(v.type())) {
    Indices pos = true_positions(flags, v.size());
    return take(v, pos);
  }
  return with_scalar(v.kind(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::span<const bool> f(flags, static_cast<size_t>(v.size()));
    Buf<T> out(total);
    check_status(runtime::pack<T>(v.values<T>(), f, std::span<T>(out.data(), static_cast<size_t>(total))), "pack");
    return Vec::scalar(v.type(), total, out.share());
  });
}

Vec retype(lang::TypeContext& types, const Vec& v, const Type* t) {
  const Type* from = v.type();
  if (from == t) return v;
  if (from->kind == TypeKind::Data) return retype(types, v.fields(), t);
  if (t->kind == TypeKind::Data) return Vec::data(t, retype(types, v, types.subst(t->data->fields, t->args)));
  NDP_ASSERT(from->kind == t->kind, "retype between unrelated types");
  switch (t->kind) {
    case TypeKind::Seq:
      return Vec::seq(t, v.size(), v.shared_buffer(), v.offsets_buffer(), retype(types, v.elems(), t->a));
    case TypeKind::Pair: return Vec::pair(t, retype(types, v.first(), t->a), retype(types, v.second(), t->b));
    case TypeKind::Fn:
    case TypeKind::Var: return Vec::open_type(t, v.size());
    default: return Vec::scalar(t, v.size(), v.shared_buffer());
  }
}

Vec replicate_one(const Vec& one, int64_t n) {
  NDP_ASSERT(one.size() == 1, "replicate_one of a Vec without exactly one instance");
  if (n == 1) return one;
  const Type* t = one.type();
  switch (t->kind) {
    case TypeKind::Seq: {
      // n copies of the one sequence: constant lengths, the elements repeated (a literal
      // sequence in a large context, say).
      int64_t len = one.length(0);
      Indices idx(static_cast<size_t>(n * len));
      parallel_for(n, [&](int64_t i) {
        for (int64_t j = 0; j < len; ++j) idx[static_cast<size_t>(i * len + j)] = j;
      });
      return Vec::seq(t, n, uniform_buffer(len, n), take(one.elems(), idx));
    }
    case TypeKind::Pair: return Vec::pair(t, replicate_one(one.first(), n), replicate_one(one.second(), n));
    case TypeKind::Data: return Vec::data(t, replicate_one(one.fields(), n));
    case TypeKind::Var: return Vec::open_type(t, n);
    default:
      // Uniform: no memory until something needs it (literals of 10^7 instances are common:
      // `dist(t, n)`, and most are only compared with or added to).
      return broadcast_first(one, n);
  }
}

Vec replicate_each(const Vec& v, runtime::SegView segs) {
  NDP_ASSERT(segs.count() == v.size(), "replicate_each with a count per instance missing");
  if (!is_flat_scalar(v.type()) && flat_leaves(v))
    return map_leaves(v, [&](const Vec& leaf) { return replicate_each(leaf, segs); });
  if (!is_flat_scalar(v.type())) return take(v, segment_ids(segs));
  if (v.is_uniform()) return broadcast_first(v, segs.total());
  // Scalars: the runtime's DIST writes each value straight into its segment (one pass, no
  // index vector), parallel over elements whatever the segment lengths.
  int64_t m = segs.total();
  return with_scalar(v.kind(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Buf<T> buf(m);
    check_status(runtime::dist<T>(v.values<T>(), segs, std::span<T>(buf.data(), static_cast<size_t>(m))), "dist");
    return Vec::scalar(v.type(), m, buf.share());
  });
}

Vec replicate_each(const Vec& v, const LengthSegs& segs) {
  NDP_ASSERT(segs.view.count() == v.size(), "replicate_each with a count per instance missing");
  if (!is_flat_scalar(v.type()) && flat_leaves(v))
    return map_leaves(v, [&](const Vec& leaf) { return replicate_each(leaf, segs); });
  const int64_t m = segs.view.total();
  if (is_flat_scalar(v.type()) && !v.is_uniform() && generated_worthwhile(m * static_cast<int64_t>(storage_width(v.kind())), m))
    return generated_replicate(v, segs);
  return replicate_each(v, segs.view);
}

Vec generated_replicate(const Vec& v, const LengthSegs& segs) {
  NDP_ASSERT(is_flat_scalar(v.type()) && segs.view.count() == v.size(), "generated_replicate of a structured vector");
  const runtime::SegView view = segs.view;
  (void)v.raw_data();  // (stored here, in parallel, not inside some fill)
  // Element p is the value of the segment it lies in: found once for a range (the offsets'
  // upper bound), then followed along it.
  return with_scalar(v.kind(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    FillRange fill = [values = v, offsets = segs.offsets, view](int64_t begin, int64_t end, void* out) {
      const T* x = values.template data<T>();
      T* o = static_cast<T*>(out);
      const int64_t* off = view.offsets();
      int64_t seg = view.is_regular() ? begin / view.regular_length()
                                      : std::upper_bound(off, off + view.count() + 1, begin) - off - 1;
      for (int64_t p = begin; p < end; ++seg) {
        // A plain loop: the deep levels of a recursion fill segments of a few elements, where
        // a call a segment costs more than the stores.
        const int64_t stop = std::min(end, view.end(seg));
        const T value = x[seg];
        for (; p < stop; ++p) o[p - begin] = value;
      }
    };
    return Vec::scalar(v.type(), view.total(), generated_buffer(sizeof(T), view.total(), std::move(fill)));
  });
}

LengthSegs segments_of(const Vec& lengths) {
  int64_t n = lengths.size();
  if (lengths.is_uniform()) {
    int64_t len = lengths.uniform_value<int64_t>();
    if (len > 0 && n > kMaxElements / len) throw std::bad_alloc();  // "Out of memory." (Buf)
    return LengthSegs{nullptr, runtime::SegView::regular(n, len)};
  }
  auto off = offsets_for(lengths.shared_buffer(), n);
  runtime::SegView view(ndp_segdes_irregular(n, lengths.data<int64_t>(), off.get()));
  return LengthSegs{std::move(off), view};
}

int64_t first_length_difference(const Vec& a, const Vec& b) {
  NDP_ASSERT(a.size() == b.size(), "first_length_difference of vectors with different instance counts");
  if (a.is_regular() && b.is_regular()) return a.size() == 0 || a.regular_length() == b.regular_length() ? -1 : 0;
  return first_failing(a.size(), [&](int64_t i) { return a.length(i) != b.length(i); });
}

}  // namespace ndp::exec::host
