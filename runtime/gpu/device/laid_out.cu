// Note [Results laid out on the GPU] (exec/cuda/laid_out_levels.h): the per-level passes that
// place a laid-out recursion's results where they belong and check its lengths on the device.
#include <cstdint>

#include "common.cuh"
#include "runtime/gpu/laid_out.h"

using namespace ndp::runtime::gpu::device;

/// out[i] = !f[i].
extern "C" __global__ void ndp_laid_out_not(const unsigned char* f, long long n, unsigned char* out) {
  NDP_GRID_STRIDE(i, n) out[i] = f[i] == 0;
}

/// Row r of the `rows` rows (offsets `off`, `total` elements) to out[at[r] ...].
#define NDP_LAID_OUT_PLACE(W, bytes)                                                                              \
  extern "C" __global__ void ndp_laid_out_place_##bytes(const long long* off, long long rows, long long total,     \
                                                        const W* elems, const long long* at, W* out) {             \
    const Segs s{rows, total, off, 0};                                                                            \
    NDP_GRID_STRIDE(e, total) {                                                                                   \
      const long long r = s.segment_of(e);                                                                        \
      out[at[r] + e - off[r]] = elems[e];                                                                         \
    }                                                                                                             \
  }
NDP_FOR_SIZES(NDP_LAID_OUT_PLACE)

/// *failed = 1 where lens[i] is not the length of row i of the rows whose offsets are `off`.
extern "C" __global__ void ndp_laid_out_same_lengths(const long long* lens, const long long* off, long long n, int* failed) {
  NDP_GRID_STRIDE(i, n) {
    if (lens[i] != off[i + 1] - off[i]) *failed = 1;
  }
}

/// Per recursing instance j (of `rec`): its children's places in the next level (next_at,
/// children `k` each, the next argument's offsets `child_off`) and its rows' places, from its
/// own place rec_at[j]; *failed = 1 where its children are not k, or its parts' lengths do not
/// add up to its argument's rec_len[j].
extern "C" __global__ void ndp_laid_out_pieces(ndp::runtime::gpu::LaidOutPieces p, long long rec, const long long* rec_at, const long long* rec_len,
                                               const long long* counts, long long k, const long long* child_off,
                                               long long* next_at, int* failed) {
  NDP_GRID_STRIDE(j, rec) {
    if (counts[j] != k) *failed = 1;
    long long pos = rec_at[j];
    for (int q = 0; q < p.count; ++q) {
      if (p.child[q] >= 0) {
        const long long c = p.child_major ? p.child[q] * rec + j : j * k + p.child[q];
        next_at[c] = pos;
        pos += child_off[c + 1] - child_off[c];
      } else {
        p.at[q][j] = pos;
        pos += p.off[q][j + 1] - p.off[q][j];
      }
    }
    if (pos - rec_at[j] != rec_len[j]) *failed = 1;
  }
}
