// The GPU runtime's segmented vector primitives: the same contract as the CPU runtime's
// (runtime/cpu/primitives.h, Note [Primitive conventions]) over device memory. Each function
// queues its kernels on the device stream and returns as soon as they are queued, except
// where it must read a scalar back (a check's outcome, a count the caller needs to size an
// output): those synchronise, and say so.
//
// Note [GPU primitive conventions]
// * Arrays are device pointers (CUdeviceptr) into memory from the MemoryPool; element types
//   are stored as Note [Element storage] in ndp/runtime.h says (bool and char: one byte).
// * A descriptor (DSegs) is the device form of ndp_segdes: `offsets` (count + 1 int64 on the
//   device) or, when offsets is 0, `count` regular segments of `regular_length`. `total` is
//   known on the host, since every output's size depends on it.
// * Results: a `cuda::Status` says whether the driver did what was asked (a failed launch or
//   allocation, a fault); a checked primitive returns `cuda::Result<ndp_status>`, whose value
//   is the data outcome (NDP_OK, or the same record the CPU runtime gives for the same input:
//   code, lowest failing position, index, length). On a data failure the output's contents
//   are unspecified, but nothing is written outside it.
// * Scratch space comes from the MemoryPool and is released (stream-ordered) before return.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ndp/runtime.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/errors.h"
#include "runtime/cuda/memory.h"
#include "runtime/cuda/module.h"
#include "runtime/gpu/partition.h"

namespace ndp::runtime::gpu {

using cuda::Result;
using cuda::Status;
using cuda::CUdeviceptr;

/// A segment descriptor whose arrays live on the device.
struct DSegs {
  int64_t count = 0;
  int64_t total = 0;
  CUdeviceptr offsets = 0;     ///< count + 1 entries, or 0 for the regular form
  int64_t regular_length = 0;  ///< the length of every segment when offsets == 0

  static DSegs flat(int64_t n) { return DSegs{1, n, 0, n}; }
  static DSegs irregular(int64_t count, int64_t total, CUdeviceptr offsets) { return DSegs{count, total, offsets, 0}; }
};

/// Bytes of one element of each type (ndp_elem_type order).
inline int elem_bytes(ndp_elem_type t) { return t == NDP_I64 || t == NDP_F64 ? 8 : t == NDP_I32 || t == NDP_F32 ? 4 : 1; }

inline ndp_status data_ok() { return ndp_status{NDP_OK, -1, -1, -1}; }

/// The primitive kernels (compiled by nvcc into fatbinaries embedded in the binary) loaded
/// into one device. Not copyable; the device and the pool must outlive it.
class Primitives {
 public:
  /// Loads every embedded module. Fails when the build had no CUDA toolkit (call "nvcc").
  static Result<std::unique_ptr<Primitives>> load(cuda::Device& device, cuda::MemoryPool& pool);
  ~Primitives();
  Primitives(const Primitives&) = delete;
  Primitives& operator=(const Primitives&) = delete;

  /// Inputs small enough take the one-launch paths (Note [Small inputs in one launch] in
  /// primitives.cpp); false sends them down the general paths too, so that tests reach both.
  void set_small_inputs_in_one_launch(bool on) { small_in_one_launch_ = on; }
  bool small_inputs_in_one_launch() const { return small_in_one_launch_; }

  cuda::Device& device() const { return device_; }
  cuda::MemoryPool& pool() const { return pool_; }
  /// The kernel named `name` in any loaded module (cached; fails with "cuModuleGetFunction").
  Result<cuda::Kernel> kernel(const std::string& name);
  /// The look-back scratch of a single-pass scan or selection over ntiles tiles (2 + 2·ntiles
  /// words or more): one buffer kept from call to call, valid as the previous pass left it
  /// (Note [Look-back epochs] in device/tile/look_back_records.cuh). Passes that use it run one
  /// at a time, on the device's stream.
  Result<CUdeviceptr> lookback_scratch(int64_t ntiles);
  /// A new key for a deferred permute's hashes (Note [Deferred permutes by hashes] in
  /// permute.cpp): a random start, then a new word each call.
  uint64_t next_permute_key();
  /// Four words kept from call to call for checks that synchronise: word 0 is kNoFailure (all
  /// ones) whenever no check is running, so a check needs no fill before its kernel; one that
  /// found a failure writes it back with rearm_failure_words (Note [Armed failure words] in
  /// primitives.cpp). Words 1 to 3 are the check's to use.
  Result<CUdeviceptr> failure_words();
  /// Sets word 0 back to kNoFailure after a check read a failure from it.
  Status rearm_failure_words();

  // ---- fills and generators (generate.cpp) ----
  /// out[i] = value (bytes: 1, 4 or 8; the value's low `bytes` bytes).
  Status fill(CUdeviceptr out, int64_t n, int bytes, uint64_t value);
  /// out[i] = start + i·stride (int64).
  Status iota(CUdeviceptr out, int64_t n, int64_t start = 0, int64_t stride = 1);
  /// DIST: out[O[k]+j] = x[k].
  Status dist(ndp_elem_type t, CUdeviceptr x, DSegs s, CUdeviceptr out);
  /// INDEX: out[O[k]+j] = start[k] + j·stride[k] (numbers only; ints wrap).
  Status index(ndp_elem_type t, CUdeviceptr start, CUdeviceptr stride, DSegs s, CUdeviceptr out);

  // ---- descriptors (segdes.cpp) ----
  /// offsets[0] = 0, offsets[k+1] = offsets[k] + lengths[k] (n + 1 entries); *total = offsets[n]
  /// (synchronises). A negative length fails NDP_NEGATIVE_LENGTH with its position.
  Result<ndp_status> offsets_from_lengths(CUdeviceptr lengths, int64_t n, CUdeviceptr offsets, int64_t* total);
  /// offsets[0] = 0 and the inclusive sums of lengths after it (n + 1 entries), in one launch,
  /// for lengths known to be valid (no check, no read-back).
  Status valid_offsets(CUdeviceptr lengths, int64_t n, CUdeviceptr offsets);
  /// The segment of every element (s.total entries, int64).
  Status segment_ids(DSegs s, CUdeviceptr out);
  /// Every element's place in its segment: 0, 1, ... in each (s.total entries, int64).
  Status segment_ranks(DSegs s, CUdeviceptr out);
  /// LENGTHS of any descriptor (s.count int64 entries).
  Status lengths_of(DSegs s, CUdeviceptr out);

  // ---- scans and reductions (seg_scan.cpp, seg_reduce.cpp) ----
  /// As runtime::seg_scan; in and out may be the same array. Unsupported (op, type) pairs give
  /// NDP_UNSUPPORTED.
  Result<ndp_status> seg_scan(ndp_op op, bool inclusive, ndp_elem_type t, CUdeviceptr in, DSegs s, CUdeviceptr out);
  /// As runtime::seg_reduce: out[k] = identity ⊕ segment k (s.count entries).
  Result<ndp_status> seg_reduce(ndp_op op, ndp_elem_type t, CUdeviceptr in, DSegs s, CUdeviceptr out);
  /// As runtime::seg_index_of_extreme (op max or min): out[k] = the least position in segment k
  /// holding its seg_reduce, or max_int (s.count int64 entries; Note [Index of the extreme]).
  Result<ndp_status> seg_index_of_extreme(ndp_op op, ndp_elem_type t, CUdeviceptr in, DSegs s, CUdeviceptr out);
  /// The number of true bytes of a bool array (synchronises).
  Result<int64_t> count_true(CUdeviceptr flags, int64_t n);

  // ---- permutations (permute.cpp) ----
  /// out[i] = v[idx[i]] for i < n, unchecked (the caller knows the indices are in range);
  /// bytes = the element size (1, 4 or 8).
  Status gather(int bytes, CUdeviceptr v, CUdeviceptr idx, int64_t n, CUdeviceptr out);
  /// One gather of gather_many: out[i] = v[idx[i]], of `bytes` (1, 4 or 8) an element.
  struct GatherPart {
    int bytes = 8;
    CUdeviceptr v = 0, out = 0;
  };
  /// Every part's gather through the one index vector idx (n elements), unchecked, in a launch
  /// per kGatherParts parts: the components of a tuple, or the members of a filter group that
  /// share their positions, each took a launch of its own.
  Status gather_many(std::span<const GatherPart> parts, CUdeviceptr idx, int64_t n);
  static constexpr int kGatherParts = 8;
  /// out[idx[i]] = v[i] for i < n, unchecked.
  Status scatter(int bytes, CUdeviceptr v, CUdeviceptr idx, int64_t n, CUdeviceptr out);
  /// As runtime::permute (checked: a permutation in every segment).
  Result<ndp_status> permute(ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, DSegs s, CUdeviceptr out);
  /// permute without waiting for its check: where some index is out of bounds or taken twice,
  /// `word` (a failure word, kNoFailure where none) no longer holds kNoFailure (but no position:
  /// Note [Deferred permutes by hashes] in permute.cpp) and out holds whatever the in-bounds
  /// positions moved; the caller reads the word later and raises the error by the checked permute.
  Status permute_deferred(ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, DSegs s, CUdeviceptr out, CUdeviceptr word);
  /// As runtime::dpermute (highest source position wins on collisions; out may alias defaults).
  Result<ndp_status> dpermute(ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, DSegs sv, CUdeviceptr defaults,
                              DSegs sd, CUdeviceptr out);
  /// As runtime::bpermute (checked).
  Result<ndp_status> bpermute(ndp_elem_type t, CUdeviceptr v, DSegs sv, CUdeviceptr idx, DSegs si, CUdeviceptr out);

  // ---- per-segment element access (extract_replace.cpp) ----
  Result<ndp_status> extract(ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, DSegs s, CUdeviceptr out);
  Result<ndp_status> replace(ndp_elem_type t, CUdeviceptr v, CUdeviceptr idx, CUdeviceptr x, DSegs s, CUdeviceptr out);

  // ---- selection (pack.cpp) ----
  /// PACK's result lengths per segment, and *total their sum (synchronises).
  Status pack_lengths(CUdeviceptr flags, DSegs s, CUdeviceptr out_lengths, int64_t* total);
  /// The positions of the true flags, in order (out has as many int64 entries as there are
  /// true flags; the caller knows that number from count_true or pack_lengths).
  Status true_positions(CUdeviceptr flags, int64_t n, CUdeviceptr out);
  /// The positions of the true flags of s.total (positions: room for s.total int64), and per
  /// segment of `s` how many it holds (counts, s.count) and how many come before it (offsets,
  /// s.count + 1, the last the number kept), without a wait (Note [Counts from the kept
  /// positions] in pack.cpp).
  Status true_positions_counted(CUdeviceptr flags, DSegs s, CUdeviceptr positions, CUdeviceptr counts,
                                CUdeviceptr offsets);
  /// PACK's data: the elements whose flag is true, in order.
  Status pack(ndp_elem_type t, CUdeviceptr v, CUdeviceptr flags, int64_t n, CUdeviceptr out);
  /// pack where the number kept is not known yet: out has room for n elements, and the result
  /// is the number written, which the pass itself counts (one pass over the flags, not
  /// count_true and then pack; synchronises to read the number back).
  Result<int64_t> pack_counted(ndp_elem_type t, CUdeviceptr v, CUdeviceptr flags, int64_t n, CUdeviceptr out);

  // ---- partitions (partition.cpp, Note [Partitions] in partition.h) ----
  /// Stage 1 of a partition of n elements by f's predicates: `bases` (partition_bases_words
  /// words) receives each predicate's true flags before every tile, and totals[k] predicate k's
  /// number of true flags (read back: synchronises; not where totals is null).
  Status partition_totals(const PartitionFlags& f, int64_t n, CUdeviceptr bases, int64_t* totals);
  /// Stage 2: each column of c to its pack (room for its predicate's total), in order; where s
  /// has segments (s.total == n), out's buffers receive each predicate's count + 1 offsets of
  /// its pack's segments and its count per segment.
  Status partition_scatter(const PartitionFlags& f, const PartitionColumns& c, int64_t n, CUdeviceptr bases, DSegs s,
                           const PartitionSegments& out);

  // ---- append, reverse, rotate (append.cpp) ----
  Status append(ndp_elem_type t, CUdeviceptr a, DSegs sa, CUdeviceptr b, DSegs sb, DSegs so, CUdeviceptr out);
  /// One append of append_many: segment k of out is segment k of a, then segment k of b, of
  /// `bytes` (1, 4 or 8) an element.
  struct AppendPart {
    int bytes = 8;
    CUdeviceptr a = 0, b = 0, out = 0;
    /// Where set, element p of a (of b) is read at a[a_index[p]] (int64 positions): a gather
    /// not yet made, read through its positions instead of stored first.
    CUdeviceptr a_index = 0, b_index = 0;
  };
  /// Every part's append over the same descriptors, in a launch per kAppendManyParts parts (the
  /// components of a tuple each took a launch of their own).
  Status append_many(std::span<const AppendPart> parts, DSegs sa, DSegs sb, DSegs so);
  static constexpr int kAppendManyParts = 8;
  /// The parts of a chain of appends (device/append.cu): instance k's part i is the length[i][k]
  /// elements of data[i] from start[i][k] (n int64 each). Passed to the kernels by value.
  static constexpr int kMaxAppendParts = 8;
  struct AppendParts {
    int32_t count = 0;
    CUdeviceptr data[kMaxAppendParts] = {};
    CUdeviceptr start[kMaxAppendParts] = {};
    CUdeviceptr length[kMaxAppendParts] = {};
  };
  /// Instance k's sequence idx[k] of its nested sequence (outer_offsets: n + 1 offsets into the
  /// inner sequences; inner_offsets: theirs into the elements), as a part: start[k] and
  /// length[k]. Returns the first k whose index is outside its sequence, or -1 (synchronises).
  Result<int64_t> elt_segments(CUdeviceptr outer_offsets, CUdeviceptr idx, CUdeviceptr inner_offsets, int64_t n,
                               CUdeviceptr start, CUdeviceptr length);
  /// The same where every index is known to be in range: no check read back, so no wait.
  Status elt_segments_in_range(CUdeviceptr outer_offsets, CUdeviceptr idx, CUdeviceptr inner_offsets, int64_t n,
                               CUdeviceptr start, CUdeviceptr length);
  /// out[k] = the sum of instance k's part lengths (n instances).
  Status append_parts_lengths(const AppendParts& parts, int64_t n, CUdeviceptr out);
  /// Segment k of out (shape so, whose lengths append_parts_lengths gave) is instance k's parts,
  /// one after another.
  Status append_parts(ndp_elem_type t, const AppendParts& parts, DSegs so, CUdeviceptr out);
  Status reverse(ndp_elem_type t, CUdeviceptr v, DSegs s, CUdeviceptr out);
  Status rotate(ndp_elem_type t, CUdeviceptr v, CUdeviceptr shift, DSegs s, CUdeviceptr out);

  // ---- ordering (rank_sort.cpp): Note [Sort order] of runtime/cpu/primitives.h ----
  Result<ndp_status> rank(ndp_elem_type t, CUdeviceptr v, DSegs s, ndp_order order, CUdeviceptr out);
  Result<ndp_status> sort(ndp_elem_type t, CUdeviceptr v, DSegs s, ndp_order order, CUdeviceptr out);

  // ---- consumer kernels (fused.cpp; Note [Consumer kernels] in flatten/flat_ir.h) ----
  /// The input arrays of a consumer kernel's element function (device/fused.cu), by value.
  struct FusedInputs {
    CUdeviceptr p[8] = {};
  };
  /// seg_reduce and seg_scan of the elements that the element function of `m` (a module of a
  /// consumer program of type t, consumer_program.h) computes from `in`: s.total of them,
  /// never stored.
  Result<ndp_status> seg_reduce_fused(const cuda::Module& m, ndp_op op, ndp_elem_type t, const FusedInputs& in, DSegs s,
                                      CUdeviceptr out);
  Result<ndp_status> seg_scan_fused(const cuda::Module& m, ndp_op op, bool inclusive, ndp_elem_type t,
                                    const FusedInputs& in, DSegs s, CUdeviceptr out);
  /// pack of v (n elements of type t) by the flags the element function of `m` (a bool module)
  /// computes from `flags`: counts them, takes the output from allocate(count), compacts into
  /// it. Returns the count.
  Result<int64_t> pack_fused(const cuda::Module& m, ndp_elem_type t, CUdeviceptr v, const FusedInputs& flags, int64_t n,
                             const std::function<Result<CUdeviceptr>(int64_t)>& allocate);

  // ---- the executor's structural positions (structure.cpp) ----
  /// out[p] = src_offsets[idx[k]] + (p - out_segs.begin(k)) for p in segment k: the element
  /// positions of a take of nested sequences.
  Status nested_take_positions(CUdeviceptr src_offsets, CUdeviceptr idx, DSegs out_segs, CUdeviceptr out);
  /// out[p] = src[the position nested_take_positions computes]: the take's elements when they
  /// are flat, of `bytes` bytes (1, 4 or 8), moved in one pass.
  Status nested_take(int bytes, CUdeviceptr src, CUdeviceptr src_offsets, CUdeviceptr idx, DSegs out_segs,
                     CUdeviceptr out);
  /// nested_take from a ++ b (na sequences of a, then b's) without building it.
  Status nested_take2(int bytes, CUdeviceptr a, CUdeviceptr a_offsets, int64_t na, CUdeviceptr b,
                      CUdeviceptr b_offsets, CUdeviceptr idx, DSegs out_segs, CUdeviceptr out);
  /// out[j] = seq_offsets[ids[j]] + idx[j]; returns the lowest j whose index is outside its
  /// sequence, or -1 (synchronises).
  Result<int64_t> index_shared_positions(CUdeviceptr seq_offsets, CUdeviceptr ids, CUdeviceptr idx, int64_t n,
                                         CUdeviceptr out);
  /// The same without the wait: the lowest such j lowers the word at `failure` (atomicMin;
  /// the caller reads it later, ~0 where every index is inside).
  Status index_shared_positions_into(CUdeviceptr seq_offsets, CUdeviceptr ids, CUdeviceptr idx, int64_t n,
                                     CUdeviceptr out, CUdeviceptr failure);
  /// The lowest j with idx[j] outside [0, bound) (int64), or -1 (synchronises): the bounds check
  /// of reads from one sequence, where the indices are the positions.
  Result<int64_t> first_out_of_range(CUdeviceptr idx, int64_t n, int64_t bound);
  /// The same check without the wait: out[j] = idx[j], or 0 where idx[j] is outside [0, bound)
  /// (bound > 0), and the lowest such j lowers the word at `failure` (as
  /// index_shared_positions_into).
  Status clamped_positions(CUdeviceptr idx, int64_t n, int64_t bound, CUdeviceptr out, CUdeviceptr failure);
  /// One rows' lengths vector of pack_rows_block, and where the kept rows' lengths and offsets
  /// go (kept and kept + 1 int64, the last offset their total).
  struct PackedRows {
    CUdeviceptr lengths = 0, out_lengths = 0, out_offsets = 0;
  };
  static constexpr int kPackRowsParts = 4;
  /// Whether pack_rows_block takes n flags and `parts` rows' lengths vectors.
  bool packs_rows_in_one_block(int64_t n, size_t parts) const;
  /// A pack of rows over few instances in one launch, without a wait: the positions of the
  /// true flags of n, and each of `rows`' kept lengths and offsets (Note [Small inputs in one
  /// launch] in primitives.cpp). Only where packs_rows_in_one_block(n, rows.size()).
  Status pack_rows_block(CUdeviceptr flags, int64_t n, std::span<const PackedRows> rows, CUdeviceptr positions);
  /// MERGE's positions into a ++ b: flags[i] ? #true before i : na + #false before i.
  Status merge_positions(CUdeviceptr flags, int64_t n, int64_t na, CUdeviceptr out);
  /// out[i] = element idx[i] of a ++ b (na elements of a, then b's), of `bytes` (1, 4 or 8) an
  /// element, without building a ++ b.
  Status gather2(int bytes, CUdeviceptr a, int64_t na, CUdeviceptr b, CUdeviceptr idx, int64_t n, CUdeviceptr out);
  /// The positions in its source of elements idx[k] (k < n) of an affine view: (i / c)·stride +
  /// (i % c)·inner + offset (int64; c > 0).
  Status affine_positions(CUdeviceptr idx, int64_t n, int64_t c, int64_t stride, int64_t offset, int64_t inner,
                          CUdeviceptr out);
  /// The n elements of that view of src, of `bytes` (1, 4 or 8) each: out[i] = src[(i / c)·stride
  /// + (i % c)·inner + offset].
  Status affine_gather(int bytes, CUdeviceptr src, int64_t n, int64_t c, int64_t stride, int64_t offset, int64_t inner,
                       CUdeviceptr out);
  /// out[i] = (i / c)·a + (i % c)·b + k for i < n (c ≥ 1): positions the host knows as a
  /// formula (Note [Affine indices] in exec/cuda/affine_index.h).
  Status formula_positions(int64_t n, int64_t c, int64_t a, int64_t b, int64_t k, CUdeviceptr out);
  /// FLATTEN's segments from the inner sequences' offsets (outer.total + 1 of them) and the
  /// outer segments: out_offsets (outer.count + 1) and out_lengths (outer.count).
  Status flatten_segments(CUdeviceptr inner_offsets, DSegs outer, CUdeviceptr out_offsets, CUdeviceptr out_lengths);
  /// out[i*k + j] = j*n + i (n·k entries).
  Status seq_lit_positions(int64_t n, int64_t k, CUdeviceptr out);
  /// The lengths of [start:end:stride] per instance (int64 arrays of n), and *longest the
  /// longest; returns the lowest instance with stride < 1 or end < start, or -1 (synchronises
  /// once).
  Result<int64_t> iseq_lengths(CUdeviceptr start, CUdeviceptr stride, CUdeviceptr end, int64_t n, CUdeviceptr out,
                               int64_t* longest);
  /// The lowest i with a[i] != b[i] (int64), or -1 (synchronises).
  Result<int64_t> first_difference(CUdeviceptr a, CUdeviceptr b, int64_t n);
  /// The same check without the wait: the lowest i lowers the word at `failure`.
  Status first_difference_into(CUdeviceptr a, CUdeviceptr b, int64_t n, CUdeviceptr failure);
  /// out[j] = len[j] cut to [0, most] for j < n; the lowest negative j lowers the word at
  /// `failure`.
  Status clamped_lengths(CUdeviceptr len, int64_t n, int64_t most, CUdeviceptr out, CUdeviceptr failure);
  /// The offsets `off` (n + 1, non-decreasing) and their rows' lengths cut to `total`
  /// elements, into out_off (n + 1) and out_len (n).
  Status rows_within(CUdeviceptr off, int64_t n, int64_t total, CUdeviceptr out_off, CUdeviceptr out_len);
  /// One sequence of `total` elements cut into m pieces of the lengths `len` in one launch
  /// (Note [Small inputs in one launch]), where partition_fits_one_block(m) and m·total fits an
  /// int64: the pieces' offsets (m + 1) and lengths cut to stay inside the elements, as
  /// clamped_lengths, valid_offsets and rows_within make them; a length out of [0, total], or
  /// lengths whose sum is not `total`, lower the word at `failure`.
  Status partition_block(CUdeviceptr len, int64_t m, int64_t total, CUdeviceptr out_off, CUdeviceptr out_len,
                         CUdeviceptr failure);
  bool partition_fits_one_block(int64_t m) const;

  // ---- rand paths and hash (rand.cpp, hash.cpp; draws: DrawCounts in rand.h) ----
  /// rand's path hashes of apply-to-each elements: element j of segment k gets
  /// mix(parent[k] ^ j) (uint64; Note [rand] in lang/eval/rand.h).
  Status path_step(CUdeviceptr parent, DSegs s, CUdeviceptr out);
  /// hash_value (lang/eval/prims_seq.cpp) of n flat scalars of type t, as uint64.
  Status hash_scalar(ndp_elem_type t, CUdeviceptr v, int64_t n, CUdeviceptr out);
  /// Of n pairs, from their parts' hashes.
  Status hash_pair(CUdeviceptr first, CUdeviceptr second, int64_t n, CUdeviceptr out);
  /// Of n values of the datatype numbered `id`, from their fields' hashes.
  Status hash_data(CUdeviceptr fields, int64_t n, uint64_t id, CUdeviceptr out);
  /// Of s.count sequences, from their elements' hashes (one thread a sequence).
  Status hash_fold(CUdeviceptr elems, DSegs s, CUdeviceptr out);
  /// hash(x, l) from x's hash: out[i] = h[i] rem l[i] (unsigned). Returns the lowest i with
  /// l[i] < 1, or -1 (synchronises).
  Result<int64_t> hash_modulo(CUdeviceptr h, CUdeviceptr l, int64_t n, CUdeviceptr out);

  // ---- the shape of a map kernel's instances (grid.cpp; Note [Tiled folds]) ----
  /// m where the n int64 row ids `rows` are constant over each run of m and `columns` repeat
  /// every m (columns[t] = columns[t % m]), m the length of rows' first run, dividing n; else
  /// -1 (synchronises, twice).
  Result<int64_t> grid_columns(CUdeviceptr rows, CUdeviceptr columns, int64_t n);

  // ---- the slots of appended sequences (slots.cpp; Note [Appended sequences in loop kernels]) ----
  /// slots[i] = in_offsets[i] + i * room for i <= n.
  Status slot_offsets(CUdeviceptr in_offsets, int64_t n, int64_t room, CUdeviceptr slots);
  /// The lowest i whose lengths[i] passes its slot, or -1 (synchronises).
  Result<int64_t> slot_outgrown(CUdeviceptr slots, CUdeviceptr lengths, int64_t n);
  /// Each row i, out_offsets[i + 1] - out_offsets[i] elements of `elem_bytes` (8, 4 or 1) from
  /// its slot to out + out_offsets[i].
  Status slot_pack(int elem_bytes, CUdeviceptr slot_elems, CUdeviceptr slots, CUdeviceptr out_offsets, int64_t n,
                   CUdeviceptr out);

  // ---- irregular reduction (combine.cpp) ----
  /// As runtime::combine: deterministic; floats may differ from the sequential fold by rounding only
  /// (extensions.md §4, float reassociation).
  Result<ndp_status> combine(ndp_op op, ndp_elem_type t, CUdeviceptr dest, int64_t ndest, CUdeviceptr idx,
                             CUdeviceptr vals, int64_t n, CUdeviceptr out);

 private:
  struct Impl;
  Primitives(cuda::Device& device, cuda::MemoryPool& pool);
  cuda::Device& device_;
  cuda::MemoryPool& pool_;
  std::unique_ptr<Impl> impl_;
  bool small_in_one_launch_ = true;
};

}  // namespace ndp::runtime::gpu
