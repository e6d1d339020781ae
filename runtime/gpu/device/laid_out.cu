// Note [Results laid out on the GPU] (exec/cuda/laid_out_levels.h): the per-level passes that
// place a laid-out recursion's results where they belong and check its lengths on the device.
#include <cstdint>

#include "common.cuh"

using namespace ndp::runtime::gpu::device;

/// out[i] = !f[i].
extern "C" __global__ void ndp_laid_out_not(const unsigned char* f, long long n, unsigned char* out) {
  NDP_GRID_STRIDE(i, n) out[i] = f[i] == 0;
}

/// Row r of the `rows` rows (offsets `off`, `total` elements) to out[at[r] ...].
#define NDP_LAID_OUT_PLACE(W, bytes)                                                                              \
  extern "C" __global__ void ndp_laid_out_place_##bytes(const long long* off, long long rows, long long total,     \
                                                        const W* elems, const long long* at, W* out) {             \
    NDP_GRID_STRIDE(e, total) {                                                                                   \
      long long lo = 0, hi = rows - 1;                                                                            \
      while (lo < hi) {                                                                                           \
        const long long mid = lo + (hi - lo + 1) / 2;                                                            \
        if (off[mid] <= e) lo = mid; else hi = mid - 1;                                                           \
      }                                                                                                           \
      out[at[lo] + e - off[lo]] = elems[e];                                                                       \
    }                                                                                                             \
  }
NDP_FOR_SIZES(NDP_LAID_OUT_PLACE)

/// *failed = 1 where lens[i] is not the length of row i of the rows whose offsets are `off`.
extern "C" __global__ void ndp_laid_out_same_lengths(const long long* lens, const long long* off, long long n, int* failed) {
  NDP_GRID_STRIDE(i, n) {
    if (lens[i] != off[i + 1] - off[i]) *failed = 1;
  }
}

/// A recursing instance's pieces in order (Note [Results laid out before the calls]): a child
/// (its index among the instance's children) or rows of the level (their offsets; each row's
/// place written to `at`).
struct Pieces {
  int count;
  int child[4];                // -1 for rows
  const long long* off[4];     // rows: their offsets
  long long* at[4];            // rows: each row's place
};

/// Per recursing instance j (of `rec`): its children's places in the next level (next_at,
/// children `k` each, the next argument's offsets `child_off`) and its rows' places, from its
/// own place rec_at[j]; *failed = 1 where its children are not k, or its parts' lengths do not
/// add up to its argument's rec_len[j].
extern "C" __global__ void ndp_laid_out_pieces(Pieces p, long long rec, const long long* rec_at, const long long* rec_len,
                                               const long long* counts, long long k, const long long* child_off,
                                               long long* next_at, int* failed) {
  NDP_GRID_STRIDE(j, rec) {
    if (counts[j] != k) *failed = 1;
    long long pos = rec_at[j];
    for (int q = 0; q < p.count; ++q) {
      if (p.child[q] >= 0) {
        const long long c = j * k + p.child[q];
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
