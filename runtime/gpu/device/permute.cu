// Permutations: unchecked gather/scatter, PERMUTE (checked scatter), DPERMUTE (scatter into
// defaults, highest source wins) and BPERMUTE (checked gather). Elements move as raw words, so
// every kernel is instantiated per element size, not per type.
//
// Checked kernels record failures in two slots (common.cuh: atomicMin of the lowest failing
// position): slot 0 an index out of bounds, slot 1 (PERMUTE only) a target an earlier position
// took. ndp_permute_record then turns the slots into the status record on the device, so the
// host reads one record back.
#include "common.cuh"
#include "thread/words.cuh"
#include "warp/fold.cuh"

using namespace ndp::runtime::gpu::device;

#define NDP_GATHER_SCATTER(W, bytes)                                                                        \
  extern "C" __global__ void ndp_gather_##bytes(const W* v, const long long* idx, long long n, W* out) {  \
    NDP_GRID_STRIDE(i, n) out[i] = v[idx[i]];                                                             \
  }                                                                                                       \
  extern "C" __global__ void ndp_scatter_##bytes(const W* v, const long long* idx, long long n, W* out) { \
    NDP_GRID_STRIDE(i, n) out[idx[i]] = v[i];                                                             \
  }
NDP_FOR_SIZES(NDP_GATHER_SCATTER)

// Several gathers through one index vector (Primitives::gather_many): a thread reads its
// position once and moves element i of every part. The layout is GatherManyParts' in permute.cpp.
constexpr int kGatherParts = 8;
struct GatherManyParts {
  unsigned long long v[kGatherParts], out[kGatherParts];
  int bytes[kGatherParts];
  int count;
};
extern "C" __global__ void ndp_gather_many(const __grid_constant__ GatherManyParts parts, const long long* idx, long long n) {
  NDP_GRID_STRIDE(i, n) {
    const long long j = idx[i];
    for (int c = 0; c < parts.count; ++c) move_element(parts.bytes[c], parts.out[c], i, parts.v[c], j);
  }
}

// ---- PERMUTE ----
// Pass 1: every in-bounds source lowers its target's claim to its own position, so afterwards
// each claim holds the lowest position aiming at that target. Pass 2: a source whose target
// holds another position is a duplicate (an earlier position took the target); the others
// write. The lowest duplicate is the lowest position whose target an earlier one took, the
// record the CPU runtime gives (Note [Checking permutations] in runtime/cpu/permute.cpp).

extern "C" __global__ void ndp_permute_claim(const long long* idx, Segs s, unsigned long long* claim,
                                             unsigned long long* fail) {
  NDP_GRID_STRIDE(p, s.total) {
    long long k = s.segment_of(p), len = s.length(k), t = idx[p];
    if (t < 0 || t >= len) report_failure(fail, p);
    else atomicMin(&claim[s.begin(k) + t], static_cast<unsigned long long>(p));
  }
}

#define NDP_PERMUTE_PLACE(W, bytes)                                                                        \
  extern "C" __global__ void ndp_permute_place_##bytes(const W* v, const long long* idx, Segs s,           \
                                                       const unsigned long long* claim, W* out,            \
                                                       unsigned long long* fail) {                         \
    NDP_GRID_STRIDE(p, s.total) {                                                                          \
      long long k = s.segment_of(p), len = s.length(k), t = idx[p];                                        \
      if (t < 0 || t >= len) continue;                                                                     \
      long long g = s.begin(k) + t;                                                                        \
      if (claim[g] != static_cast<unsigned long long>(p)) report_failure(fail + 1, p);                     \
      else out[g] = v[p];                                                                                  \
    }                                                                                                      \
  }
NDP_FOR_SIZES(NDP_PERMUTE_PLACE)

// ---- DPERMUTE ----
// Every in-bounds source raises its target's owner to its own position (atomic maximum); once
// the bounds are known good, out receives the defaults and exactly the owners write, so the
// highest source position wins whatever the thread order.

extern "C" __global__ void ndp_dpermute_own(const long long* idx, Segs sv, Segs sd, long long* owner,
                                            unsigned long long* fail) {
  NDP_GRID_STRIDE(p, sv.total) {
    long long k = sv.segment_of(p), len = sd.length(k), t = idx[p];
    if (t < 0 || t >= len) report_failure(fail, p);
    else atomicMax(&owner[sd.begin(k) + t], p);
  }
}

#define NDP_DPERMUTE(W, bytes)                                                                             \
  extern "C" __global__ void ndp_dpermute_place_##bytes(const W* v, const long long* idx, Segs sv, Segs sd, \
                                                       const long long* owner, W* out,                     \
                                                       const unsigned long long* fail) {                   \
    if (*fail != kNoFailure) return;                                                                       \
    NDP_GRID_STRIDE(p, sv.total) {                                                                         \
      long long g = sd.begin(sv.segment_of(p)) + idx[p];                                                   \
      if (owner[g] == p) out[g] = v[p];                                                                    \
    }                                                                                                      \
  }
NDP_FOR_SIZES(NDP_DPERMUTE)

// ---- BPERMUTE ----

#define NDP_BPERMUTE(W, bytes)                                                                             \
  extern "C" __global__ void ndp_bpermute_##bytes(const W* v, Segs sv, const long long* idx, Segs si,      \
                                                 W* out, unsigned long long* fail) {                       \
    NDP_GRID_STRIDE(p, si.total) {                                                                         \
      long long k = si.segment_of(p), len = sv.length(k), t = idx[p];                                      \
      if (t < 0 || t >= len) report_failure(fail, p);                                                      \
      else out[p] = v[sv.begin(k) + t];                                                                    \
    }                                                                                                      \
  }
NDP_FOR_SIZES(NDP_BPERMUTE)

// ---- the status record ----
// One thread: rec = {code, position, index, length} of the lowest failure in slot 0 (index out
// of bounds), else in slot 1 (not a permutation), else {NDP_OK, -1, -1, -1}. Position p lies in
// segment sp.segment_of(p); its length is that segment's length in sl (the target shape).
extern "C" __global__ void ndp_permute_record(const long long* idx, Segs sp, Segs sl, const unsigned long long* fail,
                                              long long* rec) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  rec[0] = 0;
  rec[1] = rec[2] = rec[3] = -1;
  for (int slot = 0; slot < 2; ++slot) {
    if (fail[slot] == kNoFailure) continue;
    long long p = static_cast<long long>(fail[slot]);
    rec[0] = slot == 0 ? 1 : 3;  // NDP_INDEX_OUT_OF_BOUNDS, NDP_NOT_A_PERMUTATION
    rec[1] = p;
    rec[2] = idx[p];
    rec[3] = sl.length(sp.segment_of(p));
    return;
  }
}

// ---- PERMUTE whose check is read later (Note [Deferred permutes by hashes] in permute.cpp) ----
// Each source adds hash(its target) - hash(its position), or 1 where its index is out of bounds,
// to `word`, a block's sum at a time; `word` starts at kNoFailure and stays there exactly when
// the sum is 0, which the host reads as success.

/// splitmix64's finalizer of x ^ key: a bijection of 64-bit words, so two different targets
/// never hash alike.
__device__ __forceinline__ unsigned long long permute_hash(long long x, unsigned long long key) {
  unsigned long long z = static_cast<unsigned long long>(x) ^ key;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Adds the block's `x` (every thread's) to `word` with one atomic (blocks of at most 1024, of
/// any size: launch_named's grid-stride shape).
__device__ __forceinline__ void add_block_sum(unsigned long long x, unsigned long long* word) {
  __shared__ unsigned long long warp_sums[32];
  x = warp_fold(x, [](unsigned long long a, unsigned long long b) { return a + b; });  // lane 0 has the warp's
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = x;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long b = 0;
    for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w) b += warp_sums[w];
    if (b != 0) atomicAdd(word, b);
  }
}

#define NDP_PERMUTE_HASHED_PLACE(W, bytes)                                                                 \
  extern "C" __global__ void ndp_permute_hashed_place_##bytes(const W* v, const long long* idx, Segs s,    \
                                                              unsigned long long key, W* out,              \
                                                              unsigned long long* word) {                  \
    unsigned long long sum = 0;                                                                            \
    NDP_GRID_STRIDE(p, s.total) {                                                                          \
      long long k = s.segment_of(p), len = s.length(k), t = idx[p];                                        \
      if (t < 0 || t >= len) {                                                                             \
        sum += 1;                                                                                          \
        continue;                                                                                          \
      }                                                                                                    \
      long long g = s.begin(k) + t;                                                                        \
      out[g] = v[p];                                                                                       \
      sum += permute_hash(g, key) - permute_hash(p, key);                                                  \
    }                                                                                                      \
    add_block_sum(sum, word);                                                                              \
  }
NDP_FOR_SIZES(NDP_PERMUTE_HASHED_PLACE)
