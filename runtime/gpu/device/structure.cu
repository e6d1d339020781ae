// Position vectors for the executor's structural operations (take of nested sequences, shared
// indexing, merge, sequence literals) and simple checks over lengths.
#include "tile/segments.cuh"

using namespace ndp::runtime::gpu::device;

// Element p of new segment k is element p - begin(k) of old segment idx[k].
extern "C" __global__ void __launch_bounds__(kScanBlock)
    ndp_nested_take_positions(const long long* src_offsets, const long long* idx, Segs out_segs, long long* out) {
  for_each_element_segment(out_segs,
                           [&](long long p, long long k) { out[p] = src_offsets[idx[k]] + (p - out_segs.begin(k)); });
}

// The same take with the elements moved at once (flat elements of `bytes` bytes): no position
// vector is written and read back.
#define NDP_NESTED_TAKE(W, bytes)                                                                      \
  extern "C" __global__ void __launch_bounds__(kScanBlock) ndp_nested_take_##bytes(                    \
      const W* src, const long long* src_offsets, const long long* idx, Segs out_segs, W* out) {       \
    for_each_element_segment(out_segs, [&](long long p, long long k) {                                 \
      out[p] = src[src_offsets[idx[k]] + (p - out_segs.begin(k))];                                     \
    });                                                                                                \
  }
NDP_FOR_SIZES(NDP_NESTED_TAKE)

// The same take from a ++ b without building it: sequence i < na of a ++ b is a's sequence i,
// the others b's sequence i - na (merge and two-part sequence literals).
#define NDP_NESTED_TAKE2(W, bytes)                                                                    \
  extern "C" __global__ void __launch_bounds__(kScanBlock)                                            \
      ndp_nested_take2_##bytes(const W* a, const long long* a_off, long long na, const W* b,          \
                               const long long* b_off, const long long* idx, Segs out_segs, W* out) { \
    for_each_element_segment(out_segs, [&](long long p, long long k) {                                \
      const long long i = idx[k], j = p - out_segs.begin(k);                                          \
      out[p] = i < na ? a[a_off[i] + j] : b[b_off[i - na] + j];                                       \
    });                                                                                               \
  }
NDP_FOR_SIZES(NDP_NESTED_TAKE2)

// A take from a ++ b of flat elements without building it: out[i] is element idx[i] of a ++ b
// (the lengths of merged sequences, and merged flat vectors).
#define NDP_GATHER2(W, bytes)                                                                           \
  extern "C" __global__ void ndp_gather2_##bytes(const W* a, long long na, const W* b, const long long* idx, \
                                                 long long n, W* out) {                                  \
    NDP_GRID_STRIDE(i, n) {                                                                              \
      const long long j = idx[i];                                                                        \
      out[i] = j < na ? a[j] : b[j - na];                                                                \
    }                                                                                                    \
  }
NDP_FOR_SIZES(NDP_GATHER2)

// FLATTEN's segments: sequence i of the outer segments holds its inner sequences' elements, which
// run from the first of its first inner sequence to the end of its last: out_off[i] =
// inner_off[begin(i)] (count + 1 entries, the last at the outer total) and out_len[i] the
// difference to the next.
extern "C" __global__ void ndp_flatten_segments(const long long* inner_off, Segs outer, long long* out_off,
                                                long long* out_len) {
  NDP_GRID_STRIDE(i, outer.count + 1) {
    const long long first = inner_off[outer.begin(i)];  // begin(count) is the total
    out_off[i] = first;
    if (i < outer.count) out_len[i] = inner_off[outer.end(i)] - first;
  }
}

// Instance j reads element idx[j] of sequence ids[j]; an index outside its sequence fails.
extern "C" __global__ void ndp_index_shared_positions(const long long* seq_offsets, const long long* ids,
                                                      const long long* idx, long long n, long long* out,
                                                      unsigned long long* first_failure) {
  NDP_GRID_STRIDE(j, n) {
    long long q = ids[j], i = idx[j];
    long long b = seq_offsets[q], len = seq_offsets[q + 1] - b;
    if (i < 0 || i >= len) {
      report_failure(first_failure, j);
      out[j] = 0;
    } else {
      out[j] = b + i;
    }
  }
}

// The same check where every instance reads one sequence: the indices are the positions.
extern "C" __global__ void ndp_first_out_of_range(const long long* idx, long long n, long long bound,
                                                  unsigned long long* first_failure) {
  NDP_GRID_STRIDE(j, n) {
    long long i = idx[j];
    if (i < 0 || i >= bound) report_failure(first_failure, j);
  }
}

// The same check without a wait (Primitives::clamped_positions): the indices copied, an index
// outside [0, bound) as 0 (bound > 0), so that whoever reads through them stays in bounds until
// the failure is read.
extern "C" __global__ void ndp_clamped_positions(const long long* idx, long long n, long long bound, long long* out,
                                                 unsigned long long* first_failure) {
  NDP_GRID_STRIDE(j, n) {
    long long i = idx[j];
    if (i < 0 || i >= bound) {
      report_failure(first_failure, j);
      i = 0;
    }
    out[j] = i;
  }
}

// PARTITION's lengths without a wait (exec/cuda's partition_deferred): a negative length fails
// and counts as 0, and none counts for more than `most` (the elements: the caller makes sure
// that n of those cannot sum past an int64, so their offsets never wrap).
extern "C" __global__ void ndp_clamped_lengths(const long long* len, long long n, long long most, long long* out,
                                               unsigned long long* first_failure) {
  NDP_GRID_STRIDE(j, n) {
    long long l = len[j];
    if (l < 0) {
      report_failure(first_failure, j);
      l = 0;
    }
    out[j] = l < most ? l : most;
  }
}

// Offsets (n + 1, non-decreasing from 0) and lengths (n) cut to `total` elements: rows that
// stay inside the elements where the lengths' sum is checked later (partition_deferred).
extern "C" __global__ void ndp_rows_within(const long long* off, long long n, long long total, long long* out_off,
                                           long long* out_len) {
  NDP_GRID_STRIDE(j, n + 1) {
    const long long a = off[j] < total ? off[j] : total;
    out_off[j] = a;
    if (j < n) {
      const long long b = off[j + 1] < total ? off[j + 1] : total;
      out_len[j] = b - a;
    }
  }
}

// A partition of one sequence of `total` elements into m pieces in one block (partition_deferred,
// Note [Small inputs in one launch] in runtime/gpu/primitives.cpp): the pieces' offsets (m + 1)
// and lengths cut to stay inside the elements, as ndp_clamped_lengths, a scan and
// ndp_rows_within make them over the general path, and a failure recorded where a length is
// negative or past the elements, or where the lengths do not add up to `total` (the position
// then m). With every length taken in [0, total], no sum wraps: the caller asks m·total to fit.
extern "C" __global__ void __launch_bounds__(kScanBlock)
    ndp_partition_block(const long long* len, long long m, long long total, long long* out_off, long long* out_len,
                        unsigned long long* first_failure) {
  using Scan = cub::BlockScan<long long, kScanBlock>;
  __shared__ typename Scan::TempStorage storage;
  long long sum = 0;
  for (long long chunk = 0; chunk < m; chunk += kScanBlock) {
    const long long j = chunk + threadIdx.x;
    long long l = j < m ? len[j] : 0;
    if (l < 0 || l > total) {
      report_failure(first_failure, j);
      l = l < 0 ? 0 : total;
    }
    long long before = 0, in_chunk = 0;
    Scan(storage).ExclusiveSum(l, before, in_chunk);
    before += sum;
    if (j < m) {
      const long long a = before < total ? before : total, b = before + l < total ? before + l : total;
      out_off[j] = a;
      out_len[j] = b - a;
    }
    sum += in_chunk;
    __syncthreads();  // the next chunk's scan reuses the storage
  }
  if (threadIdx.x == 0) {
    out_off[m] = sum < total ? sum : total;
    if (sum != total) report_failure(first_failure, m);
  }
}

extern "C" __global__ void ndp_widen_flags(const unsigned char* flags, long long n, long long* out) {
  NDP_GRID_STRIDE(i, n) out[i] = flags[i] != 0;
}

// MERGE: flags[i] ? (true flags before i) : na + (false flags before i); `before` is the
// exclusive plus-scan of the flags.
extern "C" __global__ void ndp_merge_positions(const unsigned char* flags, const long long* before, long long n,
                                               long long na, long long* out) {
  NDP_GRID_STRIDE(i, n) out[i] = flags[i] ? before[i] : na + (i - before[i]);
}

// MERGE's positions in one block (Note [Small inputs in one launch] in runtime/gpu/primitives.cpp):
// the block scans the flags kScanBlock at a time and carries the trues counted so far.
extern "C" __global__ void __launch_bounds__(kScanBlock)
    ndp_merge_positions_block(const unsigned char* flags, long long n, long long na, long long* out) {
  using Scan = cub::BlockScan<long long, kScanBlock>;
  __shared__ typename Scan::TempStorage storage;
  long long trues = 0;
  for (long long chunk = 0; chunk < n; chunk += kScanBlock) {
    const long long i = chunk + threadIdx.x;
    const long long f = i < n && flags[i] ? 1 : 0;
    long long before = 0, in_chunk = 0;
    Scan(storage).ExclusiveSum(f, before, in_chunk);
    before += trues;
    if (i < n) out[i] = f ? before : na + (i - before);
    trues += in_chunk;
    __syncthreads();  // the next chunk's scan reuses the storage
  }
}

// A pack of rows over few instances in one block (Note [Small inputs in one launch] in
// runtime/gpu/primitives.cpp): the positions of the true flags, and for each rows' lengths
// vector the kept rows' lengths and offsets (kept + 1 of them, the last their total). The block
// scans the flags kScanBlock at a time, and each lengths vector's kept entries with them,
// carrying the sums so far. The layout is PackRowsParts' in structure.cpp.
constexpr int kPackRowsParts = 4;
struct PackRowsParts {
  const long long* lengths[kPackRowsParts];
  long long* out_lengths[kPackRowsParts];
  long long* out_offsets[kPackRowsParts];
  int count;
};
extern "C" __global__ void __launch_bounds__(kScanBlock)
    ndp_pack_rows_block(const unsigned char* flags, long long n, const __grid_constant__ PackRowsParts parts,
                        long long* positions) {
  using Scan = cub::BlockScan<long long, kScanBlock>;
  __shared__ typename Scan::TempStorage storage;
  long long trues = 0, total[kPackRowsParts] = {};
  for (long long chunk = 0; chunk < n; chunk += kScanBlock) {
    const long long i = chunk + threadIdx.x;
    const bool f = i < n && flags[i];
    long long before = 0, in_chunk = 0;
    Scan(storage).ExclusiveSum(f ? 1ll : 0ll, before, in_chunk);
    __syncthreads();  // the scans below reuse the storage
    before += trues;
    if (f) positions[before] = i;
    for (int j = 0; j < parts.count; ++j) {
      const long long len = f ? parts.lengths[j][i] : 0;
      long long start = 0, sum = 0;
      Scan(storage).ExclusiveSum(len, start, sum);
      __syncthreads();
      if (f) {
        parts.out_lengths[j][before] = len;
        parts.out_offsets[j][before] = total[j] + start;
      }
      total[j] += sum;
    }
    trues += in_chunk;
  }
  if (threadIdx.x == 0)
    for (int j = 0; j < parts.count; ++j) parts.out_offsets[j][trues] = total[j];
}

// A sequence literal of k parts of n instances each: element j of instance i is instance i of
// part j, which sits at j*n + i in the parts' concatenation.
extern "C" __global__ void ndp_seq_lit_positions(long long n, long long k, long long* out) {
  NDP_GRID_STRIDE(p, n * k) out[p] = (p % k) * n + p / k;
}

extern "C" __global__ void ndp_first_difference(const long long* a, const long long* b, long long n,
                                                unsigned long long* first_failure) {
  NDP_GRID_STRIDE(i, n) if (a[i] != b[i]) report_failure(first_failure, i);
}

// [s:e:d] per instance: ceil((e - s) / d) elements; d < 1 or e < s fails (the host then raises
// the interpreter's message).
// words[0]: the first instance whose range is bad; words[1]: the longest length (atomicMax
// from 0), read back with it, so that a sum that could wrap is caught without a reduction.
extern "C" __global__ void ndp_iseq_lengths(const long long* s, const long long* d, const long long* e, long long n,
                                            long long* out, unsigned long long* words) {
  NDP_GRID_STRIDE(i, n) {
    if (d[i] < 1 || e[i] < s[i]) {
      report_failure(words, i);
      out[i] = 0;
      continue;
    }
    unsigned long long width = static_cast<unsigned long long>(e[i]) - static_cast<unsigned long long>(s[i]);
    unsigned long long step = static_cast<unsigned long long>(d[i]);
    unsigned long long length = width / step + (width % step != 0);
    out[i] = static_cast<long long>(length);
    atomicMax(words + 1, length);
  }
}

// An affine view's positions (Note [Regular elt views] in exec/cuda/device_vec.h): element i of
// the view is source[(i / c)·stride + (i % c)·inner + offset]; out[k] is that position for
// i = idx[k].
extern "C" __global__ void ndp_affine_positions(const long long* idx, long long n, long long c, long long stride,
                                                long long offset, long long inner, long long* out) {
  NDP_GRID_STRIDE(k, n) {
    const long long i = idx[k];
    out[k] = (i / c) * stride + (i % c) * inner + offset;
  }
}

// The view's n elements themselves, stored.
#define NDP_AFFINE_GATHER(W, bytes)                                                                       \
  extern "C" __global__ void ndp_affine_gather_##bytes(const W* src, long long n, long long c, long long stride, \
                                                       long long offset, long long inner, W* out) {        \
    NDP_GRID_STRIDE(i, n) out[i] = src[(i / c) * stride + (i % c) * inner + offset];                      \
  }
NDP_FOR_SIZES(NDP_AFFINE_GATHER)

// Positions the host knows as a formula (Note [Affine indices] in exec/cuda/affine_index.h).
extern "C" __global__ void ndp_formula_positions(long long n, long long c, long long a, long long b, long long k,
                                                 long long* out) {
  NDP_GRID_STRIDE(i, n) out[i] = (i / c) * a + (i % c) * b + k;
}
