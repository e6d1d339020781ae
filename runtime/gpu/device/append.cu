// Per-segment append, reverse and rotate. Each is a gather: one thread per output element finds
// its segment (Segs::segment_of) and reads its source, so writes are coalesced and every
// segment shape runs at full width. Elements move as raw words (per element size).
#include "common.cuh"

using namespace ndp_gpu;

#define NDP_APPEND(W, bytes)                                                                                  \
  /* Segment k of out (shape so) is segment k of a followed by segment k of b. */                            \
  extern "C" __global__ void ndp_append_##bytes(const W* a, Segs sa, const W* b, Segs sb, Segs so, W* out) {  \
    NDP_GRID_STRIDE(q, so.total) {                                                                            \
      long long k = so.segment_of(q), j = q - so.begin(k), la = sa.length(k);                                 \
      out[q] = j < la ? a[sa.begin(k) + j] : b[sb.begin(k) + (j - la)];                                       \
    }                                                                                                         \
  }                                                                                                           \
  /* out[O[k] + L[k]-1-j] = v[O[k]+j], read from the mirrored source. */                                     \
  extern "C" __global__ void ndp_reverse_##bytes(const W* v, Segs s, W* out) {                                \
    NDP_GRID_STRIDE(q, s.total) {                                                                             \
      long long k = s.segment_of(q);                                                                          \
      out[q] = v[s.begin(k) + s.end(k) - 1 - q];                                                              \
    }                                                                                                         \
  }                                                                                                           \
  /* Element j moves to (j + shift[k]) mod L[k], so target j reads (j - shift[k]) mod L[k]. */               \
  extern "C" __global__ void ndp_rotate_##bytes(const W* v, const long long* shift, Segs s, W* out) {         \
    NDP_GRID_STRIDE(q, s.total) {                                                                             \
      long long k = s.segment_of(q), base = s.begin(k), len = s.length(k);                                    \
      long long r = shift[k] % len;                                                                           \
      long long from = q - base - r;                                                                          \
      if (from < 0) from += len;                                                                              \
      if (from >= len) from -= len;                                                                           \
      out[q] = v[base + from];                                                                                \
    }                                                                                                         \
  }
NDP_FOR_SIZES(NDP_APPEND)
