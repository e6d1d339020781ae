// The CPU runtime's segmented vector primitives (library.md §2.3, extensions.md §3–§4), C++ API.
#pragma once

// Note [Primitive conventions]
// - Every primitive is segmented; the flat form is the one-segment descriptor
//   SegView::flat(n). Indices are relative to the start of their segment.
// - Element types: int64_t, double, int32_t, float, bool, uint8_t (char); see ops.h.
// - The caller allocates every output with the size the descriptors imply; a span of another
//   size gives NDP_LENGTH_MISMATCH (position -1). Outputs never alias inputs unless a
//   function says so.
// - Checks (bounds, permutations) run before anything observable is promised: on failure the
//   output's contents are unspecified, but nothing is written outside it, and the status names
//   the failing element with the lowest position.
// - Everything runs in parallel over OpenMP threads at every segment shape (parallel.h).

#include <cstdint>
#include <functional>
#include <span>

#include "ops.h"
#include "segdes.h"
#include "status.h"

namespace ndp::runtime {

// ---- scans and reductions (seg_scan.cpp, seg_reduce.cpp) ----

/// Segmented scan restarting at every segment. exclusive: out[O[k]+j] = id ⊕ v[O[k]] ⊕ … ⊕
/// v[O[k]+j-1]; inclusive also includes v[O[k]+j]. out may be the same array as in.
template <class T>
Status seg_scan(Op op, ScanKind kind, std::span<const T> in, SegView s, std::span<T> out);

/// Segmented reduction: out[k] = id ⊕ (all of segment k); empty segments give id.
template <class T>
Status seg_reduce(Op op, std::span<const T> in, SegView s, std::span<T> out);

/// max_index / min_index of every segment (op max or min): out[k] = the least j with
/// v[O[k]+j] == the segment's seg_reduce, or max_int where none is (an empty segment, or one of
/// NaNs only).
template <class T>
Status seg_index_of_extreme(Op op, std::span<const T> in, SegView s, std::span<int64_t> out);

// ---- consumers of computed vectors (Note [Consumer kernels] in flatten/flat_ir.h) ----

/// Elements [begin, end) of a vector computed on demand (a fused map), written to
/// out[0, end - begin). Called from several threads at once, on disjoint ranges.
template <class T>
using Generate = std::function<void(int64_t begin, int64_t end, T* out)>;

/// seg_scan and seg_reduce of the vector `in` computes (s.total() elements): the values are
/// produced a window at a time while they are consumed, never stored as a whole.
template <class T>
Status seg_scan_generated(Op op, ScanKind kind, const Generate<T>& in, SegView s, std::span<T> out);
template <class T>
Status seg_reduce_generated(Op op, const Generate<T>& in, SegView s, std::span<T> out);

/// pack of v by flags computed on demand: counts the true flags, asks `allocate` for that many
/// elements, and fills them in order.
template <class T>
Status pack_generated(std::span<const T> v, const Generate<bool>& flags, const std::function<T*(int64_t)>& allocate);

// ---- permutations (permute.cpp) ----

/// PERMUTE (scatter): out[O[k] + idx[p]] = v[p] for p in segment k; idx must be a
/// permutation of [0, L[k]) in every segment.
template <class T>
Status permute(std::span<const T> v, std::span<const int64_t> idx, SegView s, std::span<T> out);

/// DPERMUTE (scatter into defaults): out is a copy of `defaults` (shape sd) in which element
/// p of segment k of v (shape sv) is written at sd.begin(k) + idx[p]; where several p hit
/// one target, the highest source position wins. sv and sd must have the same count;
/// out may be the same array as defaults.
template <class T>
Status dpermute(std::span<const T> v, std::span<const int64_t> idx, SegView sv, std::span<const T> defaults,
                SegView sd, std::span<T> out);

/// BPERMUTE (gather): out[p] = v[sv.begin(k) + idx[p]] for p in segment k of si.
template <class T>
Status bpermute(std::span<const T> v, SegView sv, std::span<const int64_t> idx, SegView si, std::span<T> out);

// ---- per-segment element access (extract_replace.cpp) ----

/// EXTRACT: out[k] = v[O[k] + idx[k]] (idx and out have one entry per segment).
template <class T>
Status extract(std::span<const T> v, std::span<const int64_t> idx, SegView s, std::span<T> out);

/// REPLACE: out = v with out[O[k] + idx[k]] = x[k]. out may be the same array as v.
template <class T>
Status replace(std::span<const T> v, std::span<const int64_t> idx, std::span<const T> x, SegView s,
               std::span<T> out);

// ---- generators (dist_index.cpp) ----

/// DIST: out[O[k]+j] = x[k].
template <class T>
Status dist(std::span<const T> x, SegView s, std::span<T> out);

/// INDEX: out[O[k]+j] = start[k] + j·stride[k] (numbers only; ints wrap).
template <class T>
Status index(std::span<const T> start, std::span<const T> stride, SegView s, std::span<T> out);

// ---- selection (pack.cpp) ----

/// The lengths of PACK's result: out_lengths[k] = the number of true flags in segment k;
/// *total receives their sum.
Status pack_lengths(std::span<const bool> flags, SegView s, std::span<int64_t> out_lengths, int64_t* total);

/// pack_lengths of several flag vectors over the same segments (at most kMostCounts), in one
/// pass over the segments: out[j][k] = the number of true flags of flags[j] in segment k (a
/// filter group's counts, quicksort's `<`, `==` and `>` the pivot).
inline constexpr size_t kMostCounts = 8;
Status pack_lengths_many(std::span<const std::span<const bool>> flags, SegView s, std::span<const std::span<int64_t>> out);

/// The number of true flags, in parallel (what a flat pack_lengths computes, without a
/// descriptor).
int64_t count_true(std::span<const bool> flags);

/// PACK's data: the elements of v whose flag is true, in order (segments do not matter for
/// the data, so tuple fields sharing one flags vector each take one call). out must have
/// exactly as many entries as there are true flags.
template <class T>
Status pack(std::span<const T> v, std::span<const bool> flags, std::span<T> out);

/// The most outputs of one partition.
inline constexpr size_t kMostPartitions = 8;

/// Several PACKs of one vector (at most kMostPartitions): output j gets the elements of v whose
/// flag in flags[j] is true, in order, where `allocate(counts, outs)` points outs[j] at room for
/// counts[j] elements (once every count is known, so the caller may give all outputs one
/// buffer); where it leaves outs[j] null, output j is not written. One pass over v (Note [One
/// pass for a filter group's packs] in pack.cpp).
template <class T>
using PartitionAllocate = std::function<void(std::span<const int64_t> counts, std::span<T*> outs)>;
template <class T>
Status partition(std::span<const T> v, std::span<const std::span<const bool>> flags, const PartitionAllocate<T>& allocate);

// ---- append, reverse, rotate (append.cpp, reverse_rotate.cpp) ----

/// Per-segment append: segment k of out (shape so, lengths from append_lengths) is segment k
/// of a followed by segment k of b.
template <class T>
Status append(std::span<const T> a, SegView sa, std::span<const T> b, SegView sb, SegView so, std::span<T> out);

/// Per-segment reverse: out[O[k] + L[k]-1-j] = v[O[k]+j].
template <class T>
Status reverse(std::span<const T> v, SegView s, std::span<T> out);

/// Per-segment rotation right by shift[k]: element j of segment k moves to (j + shift[k]) mod
/// L[k]; negative shifts rotate left, any amount is allowed.
template <class T>
Status rotate(std::span<const T> v, std::span<const int64_t> shift, SegView s, std::span<T> out);

// ---- ordering (rank_sort.cpp) ----

// Note [Sort order]
// Stable LSD radix sort on order-preserving unsigned keys. Integers and char sort
// numerically. Floats sort numerically with -0.0 equal to 0.0 (ties keep their order), and
// every NaN, whatever its sign or payload, above +inf, NaNs tied among themselves: the order
// the reference interpreter uses. Descending order reverses the keys, so ties stay in their
// original order there too and NaNs come first.

/// RANK_UP / RANK_DOWN: out[p] = the position (within its segment) element p takes when its
/// segment is stably sorted. Numbers and char.
template <class T>
Status rank(std::span<const T> v, SegView s, Order order, std::span<int64_t> out);

/// Stable per-segment sort.
template <class T>
Status sort(std::span<const T> v, SegView s, Order order, std::span<T> out);

// ---- irregular reduction (combine.cpp) ----

/// *_combine (extensions.md §3): out[k] = dest[k] ⊕ vals[i1] ⊕ vals[i2] ⊕ … over every i with
/// idx[i] == k, in ascending i. Deterministic; floats give exactly the sequential left fold.
/// An index outside [0, #dest) fails with its position.
template <class T>
Status combine(Op op, std::span<const T> dest, std::span<const int64_t> idx, std::span<const T> vals,
               std::span<T> out);

}  // namespace ndp::runtime
