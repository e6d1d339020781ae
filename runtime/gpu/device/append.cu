// Per-segment append, reverse and rotate. Each is a gather: one thread per output element, given
// its segment (Note [Segments of a tile]), reads its source, so writes are coalesced and every
// segment shape runs at full width. Elements move as raw words (per element size).
#include "tile_segments.cuh"

using namespace ndp_gpu;

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
