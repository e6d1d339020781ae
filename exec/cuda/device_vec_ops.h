// Structural operations on DVecs for every element type (the device counterparts of
// exec/host/vec.h's take, concat, pack, retype), and moving DVecs to and from the host.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "exec/common/vector.h"
#include "exec/host/vec.h"
#include "exec/cuda/gpu.h"

namespace ndp::exec::cuda {

/// leaf(u, w) over the components u of x and w of y (values of one type): pairs and datatypes
/// are walked and rebuilt in x's shape, anything else is a leaf. nullopt where a leaf gives none
/// (the leaves before it have then run: a leaf that moves data queues its move until the whole
/// walk succeeds, or the caller checks the leaves first).
template <class Leaf>
std::optional<DVec> zip_components(const DVec& x, const DVec& y, const Leaf& leaf) {
  switch (x.kind()) {
    case lang::TypeKind::Pair: {
      std::optional<DVec> p = zip_components(x.first(), y.first(), leaf);
      std::optional<DVec> q = p ? zip_components(x.second(), y.second(), leaf) : std::nullopt;
      if (!q) return std::nullopt;
      return DVec::pair(x.type(), std::move(*p), std::move(*q));
    }
    case lang::TypeKind::Data: {
      std::optional<DVec> fields = zip_components(x.fields(), y.fields(), leaf);
      if (!fields) return std::nullopt;
      return DVec::data(x.type(), std::move(*fields));
    }
    default: return leaf(x, y);
  }
}

/// A sequence DVec over `lengths` (n int64 on the device, known to be non-negative): computes
/// the offsets. The elements must number the lengths' sum.
DVec seq_from_lengths(Gpu& g, const lang::Type* t, int64_t n, DBuf lengths, DVec elems);
/// Segment k of `so` is segment k of a (segments sa) followed by segment k of b (sb): a and b
/// flat scalars of one type.
DVec append_flat(Gpu& g, const DVec& a, runtime::gpu::DSegs sa, const DVec& b, runtime::gpu::DSegs sb, runtime::gpu::DSegs so);
/// The same from a lengths vector: regular where its value is known (Note [Known values]).
DVec seq_from_lengths(Gpu& g, const lang::Type* t, const DVec& lengths, DVec elems);
/// The segments that valid `lengths` describe over `total` elements: regular, with no offsets,
/// where their value is known; else their offsets, kept alive in `keep`.
runtime::gpu::DSegs segments_of_lengths(Gpu& g, const DVec& lengths, int64_t total, DBuf& keep);
/// The offsets and element count of a sequence whose lengths buffer is `lengths` (n of them),
/// when that sequence is known (Note [Segment descriptor cache] in dvec.cpp).
struct KnownSegments {
  DBuf offsets;
  int64_t total = 0;
};
std::optional<KnownSegments> known_segments(const DBuf& lengths, int64_t n);
/// Records that `offsets` (n + 1, the last `total`) are the scan of `lengths`, which a later
/// sequence of these lengths then takes without a scan (the caller keeps `offsets` alive: the
/// cache holds it weakly). The lengths are valid, so a total past any memory
/// (host::kMaxElements) or below 0 can only have wrapped: it raises `Out of memory.`.
void remember_segments(const DBuf& lengths, const DBuf& offsets, int64_t n, int64_t total);
/// The last of the n + 1 offsets in each of `offsets` (their total), read back with one wait.
std::vector<int64_t> read_totals(Gpu& g, std::span<const DBuf> offsets, int64_t n);
/// The n + 1 offsets of n lengths known to be valid (no check, no read-back).
DBuf offsets_from_valid_lengths(Gpu& g, int64_t n, const DBuf& lengths);
/// The offsets and their total for n lengths known to be valid: known_segments' when known,
/// else a scan and a read-back of the total, remembered for known_segments.
KnownSegments segments_of_valid_lengths(Gpu& g, int64_t n, const DBuf& lengths);
/// The same for several vectors of n lengths, with one wait for all the totals.
std::vector<KnownSegments> segments_of_valid_lengths(Gpu& g, int64_t n, std::span<const DBuf> lengths);
/// The same where the caller knows their total (an append's: the two totals): no read-back.
KnownSegments segments_of_valid_lengths(Gpu& g, int64_t n, const DBuf& lengths, int64_t total);
/// A DVec of type t with no instances.
DVec empty_of(Gpu& g, lang::TypeContext& types, const lang::Type* t);
/// result[i] = v[idx[i]] for i < m (idx: m int64 on the device, each in [0, v.size())).
/// `rows_total`, where the caller knows it, is the total length of the taken sequences (v a
/// sequence): then nothing is read back.
DVec take(Gpu& g, const DVec& v, CUdeviceptr idx, int64_t m, std::optional<int64_t> rows_total = std::nullopt);
/// take(append(a, b), idx, m) where idx is a permutation of the instances of a ++ b (merge,
/// sequence literals): sequences of flat elements are read from a and b in place, and their
/// total needs no read-back.
DVec take_appended(Gpu& g, const DVec& a, const DVec& b, CUdeviceptr idx, int64_t m);
/// The instances of all parts, one part after another.
DVec concat(Gpu& g, std::span<const DVec> parts);
inline DVec append(Gpu& g, const DVec& a, const DVec& b) {
  DVec parts[2] = {a, b};
  return concat(g, parts);
}
/// The number of true flags (bool), remembered for the last few flag buffers counted.
int64_t count_true(Gpu& g, const DVec& flags);
/// Records the number of true flags, known another way, for count_true.
void remember_count_true(const DVec& flags, int64_t count);
/// count_true would answer without a pass.
bool known_count_true(const DVec& flags);
/// Records that the bool vector `flags` is the negation of `of` (Note [Complementary flags]).
void remember_complement(const DVec& flags, const DVec& of);
/// The instances whose flag (bool, v.size() of them) is true.
DVec pack(Gpu& g, const DVec& v, const DVec& flags);
/// pack of each of vs by the same flags, with one count and, where any needs them, one vector of
/// the trues' positions that all move through, their gathers launched together (Note [Gathers
/// launched together] in device_vec.cpp).
/// `made`, where given, holds the trues' positions made already (count_true(flags) of them).
std::vector<DVec> pack_all(Gpu& g, std::span<const DVec* const> vs, const DVec& flags, DBuf made = {});
/// Whether a pack of v moves through the trues' positions: v holds sequences or tuples, or
/// packs positions.
bool moves_by_positions(const DVec& v);
/// Whether pack (and take) of v moves positions rather than values: v is a gather not yet
/// made whose positions are in range, or a view of one row repeated (Note [Rows repeated as
/// views] in device_vec.cpp), and the result gathers through the kept positions (Note [Rows
/// taken by positions]).
bool packs_positions(const DVec& v);
/// As host::retype: the same buffers at type t.
DVec retype(lang::TypeContext& types, const DVec& v, const lang::Type* t);
/// n copies of the single instance of `one`.
DVec replicate_one(Gpu& g, const DVec& one, int64_t n);
/// For every element of a sequence DVec, its instance (segs.total int64).
DBuf segment_ids(Gpu& g, const DVec& seq);

/// Copies a host Vec to the device and back.
DVec upload(Gpu& g, const host::Vec& v);
host::Vec download(Gpu& g, const DVec& v);

static_assert(FlatVector<DVec>);

}  // namespace ndp::exec::cuda
