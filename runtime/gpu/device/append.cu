// Per-segment append (of two sequences, or of up to kMaxAppendParts parts), reverse and rotate.
// Each is a gather: one thread per output element, given
// its segment (Note [Segments of a tile]), reads its source, so writes are coalesced and every
// segment shape runs at full width. Elements move as raw words (per element size).
#include "thread/words.cuh"
#include "tile/segments.cuh"

using namespace ndp::runtime::gpu::device;

namespace {

/// The parts of an append chain (Primitives::AppendParts): instance k's part i is the
/// length[i][k] elements of data[i] from start[i][k]. Passed by value (__grid_constant__).
constexpr int kMaxAppendParts = 8;
struct AppendParts {
  int count;
  const void* data[kMaxAppendParts];
  const long long* start[kMaxAppendParts];
  const long long* length[kMaxAppendParts];
};
static_assert(sizeof(AppendParts) == 8 + 3 * 8 * kMaxAppendParts, "the layout of runtime/gpu's Primitives::AppendParts");

}  // namespace

// Instance k's sequence idx[k] of its nested sequence (outer_off: n + 1 offsets into the inner
// sequences, inner_off into their elements): where its elements start, and how many. An index
// outside the instance's sequence fails (its part is then empty).
extern "C" __global__ void ndp_elt_segments(const long long* outer_off, const long long* idx,
                                            const long long* inner_off, long long n, long long* start,
                                            long long* length, unsigned long long* first_failure) {
  NDP_GRID_STRIDE(k, n) {
    const long long b = outer_off[k], i = idx[k];
    if (i < 0 || i >= outer_off[k + 1] - b) {
      report_failure(first_failure, k);
      start[k] = 0;
      length[k] = 0;
      continue;
    }
    start[k] = inner_off[b + i];
    length[k] = inner_off[b + i + 1] - inner_off[b + i];
  }
}

// out[k] = the sum of instance k's part lengths.
extern "C" __global__ void ndp_append_parts_lengths(const __grid_constant__ AppendParts parts, long long n,
                                                    long long* out) {
  NDP_GRID_STRIDE(k, n) {
    long long sum = 0;
    for (int i = 0; i < parts.count; ++i) sum += parts.length[i][k];
    out[k] = sum;
  }
}

#define NDP_APPEND(W, bytes)                                                                                  \
  /* Segment k of out (shape so) is segment k of a followed by segment k of b. */                            \
  extern "C" __global__ void __launch_bounds__(kScanBlock)                                                    \
      ndp_append_##bytes(const W* a, Segs sa, const W* b, Segs sb, Segs so, W* out) {                         \
    for_each_element_segment(so, [&](long long q, long long k) {                                              \
      long long j = q - so.begin(k), la = sa.length(k);                                                       \
      out[q] = j < la ? a[sa.begin(k) + j] : b[sb.begin(k) + (j - la)];                                      \
    });                                                                                                       \
  }                                                                                                           \
  /* out[O[k] + L[k]-1-j] = v[O[k]+j], read from the mirrored source. */                                     \
  extern "C" __global__ void __launch_bounds__(kScanBlock) ndp_reverse_##bytes(const W* v, Segs s, W* out) {  \
    for_each_element_segment(s, [&](long long q, long long k) { out[q] = v[s.begin(k) + s.end(k) - 1 - q]; }); \
  }                                                                                                           \
  /* Element j moves to (j + shift[k]) mod L[k], so target j reads (j - shift[k]) mod L[k]. */               \
  extern "C" __global__ void __launch_bounds__(kScanBlock)                                                    \
      ndp_rotate_##bytes(const W* v, const long long* shift, Segs s, W* out) {                                \
    for_each_element_segment(s, [&](long long q, long long k) {                                               \
      long long base = s.begin(k), len = s.length(k);                                                         \
      long long r = shift[k] % len;                                                                           \
      long long from = q - base - r;                                                                          \
      if (from < 0) from += len;                                                                              \
      if (from >= len) from -= len;                                                                           \
      out[q] = v[base + from];                                                                                \
    });                                                                                                       \
  }
NDP_FOR_SIZES(NDP_APPEND)

// Several appends over the same descriptors (Primitives::append_many): a thread finds its
// element's segment and source once and moves that element of every part. The layout is
// AppendManyParts' in append.cpp.
constexpr int kAppendManyParts = 8;
struct AppendManyParts {
  unsigned long long a[kAppendManyParts], b[kAppendManyParts], out[kAppendManyParts];
  unsigned long long a_index[kAppendManyParts], b_index[kAppendManyParts];  // 0, or a part's positions
  int bytes[kAppendManyParts];
  int count;
};
extern "C" __global__ void __launch_bounds__(kScanBlock)
    ndp_append_many(const __grid_constant__ AppendManyParts parts, Segs sa, Segs sb, Segs so) {
  for_each_element_segment(so, [&](long long q, long long k) {
    const long long j = q - so.begin(k), la = sa.length(k);
    const bool from_a = j < la;
    const long long p = from_a ? sa.begin(k) + j : sb.begin(k) + (j - la);
    for (int c = 0; c < parts.count; ++c) {
      const unsigned long long src = from_a ? parts.a[c] : parts.b[c];
      const unsigned long long index = from_a ? parts.a_index[c] : parts.b_index[c];
      const long long at = index ? reinterpret_cast<const long long*>(index)[p] : p;
      move_element(parts.bytes[c], parts.out[c], q, src, at);
    }
  });
}

#define NDP_APPEND_PARTS(W, bytes)                                                                    \
  /* Segment k of out (shape so) is instance k's parts, one after another. */                        \
  extern "C" __global__ void __launch_bounds__(kScanBlock)                                            \
      ndp_append_parts_##bytes(const __grid_constant__ AppendParts parts, Segs so, W* out) {          \
    for_each_element_segment(so, [&](long long q, long long k) {                                      \
      long long j = q - so.begin(k);                                                                  \
      int i = 0;                                                                                      \
      for (long long len; i < parts.count - 1 && j >= (len = parts.length[i][k]); ++i) j -= len;      \
      out[q] = static_cast<const W*>(parts.data[i])[parts.start[i][k] + j];                          \
    });                                                                                               \
  }
NDP_FOR_SIZES(NDP_APPEND_PARTS)
