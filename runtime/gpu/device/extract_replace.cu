// EXTRACT (one element per segment) and REPLACE (a copy with one element per segment replaced):
// one thread per segment, elements moved as raw words (per element size). A failing index is
// recorded in slot 0 (common.cuh); ndp_extract_record writes the status record.
#include "common.cuh"

using namespace ndp::runtime::gpu::device;

#define NDP_EXTRACT(W, bytes)                                                                                \
  extern "C" __global__ void ndp_extract_##bytes(const W* v, const long long* idx, Segs s, W* out,           \
                                                 unsigned long long* fail) {                                 \
    NDP_GRID_STRIDE(k, s.count) {                                                                            \
      long long i = idx[k];                                                                                  \
      if (i < 0 || i >= s.length(k)) report_failure(fail, k);                                                \
      else out[k] = v[s.begin(k) + i];                                                                       \
    }                                                                                                        \
  }                                                                                                          \
  /* The placement runs only once every index is known good, so that a failing in-place call */          \
  /* leaves v intact. */                                                                                     \
  extern "C" __global__ void ndp_replace_place_##bytes(const long long* idx, const W* x, Segs s, W* out,     \
                                                       const unsigned long long* fail) {                     \
    if (*fail != kNoFailure) return;                                                                         \
    NDP_GRID_STRIDE(k, s.count) out[s.begin(k) + idx[k]] = x[k];                                             \
  }
NDP_FOR_SIZES(NDP_EXTRACT)

extern "C" __global__ void ndp_replace_check(const long long* idx, Segs s, unsigned long long* fail) {
  NDP_GRID_STRIDE(k, s.count) {
    long long i = idx[k];
    if (i < 0 || i >= s.length(k)) report_failure(fail, k);
  }
}

// One thread: rec = {NDP_INDEX_OUT_OF_BOUNDS, k, idx[k], length(k)} for the lowest failing
// segment k, or {NDP_OK, -1, -1, -1}.
extern "C" __global__ void ndp_extract_record(const long long* idx, Segs s, const unsigned long long* fail,
                                              long long* rec) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  if (*fail == kNoFailure) {
    rec[0] = 0;
    rec[1] = rec[2] = rec[3] = -1;
    return;
  }
  long long k = static_cast<long long>(*fail);
  rec[0] = 1;
  rec[1] = k;
  rec[2] = idx[k];
  rec[3] = s.length(k);
}
