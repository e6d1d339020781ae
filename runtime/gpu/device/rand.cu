// rand on the device: the streams of Note [rand] (lang/eval/rand.h), with the draw counts in a
// hash table per call site (Note [Draw counts on the device] in runtime/gpu/rand.cpp), and the
// path hashes of apply-to-each elements.
#include "thread/mix.cuh"
#include "tile/segments.cuh"

using namespace ndp::runtime::gpu::device;

namespace {

/// One (path, count) entry of a call site's table. The table has `capacity` (a power of two)
/// probed slots and one more, slot `capacity`, for the path that equals kEmptyPath.
struct DrawSlot {
  unsigned long long path;
  unsigned long long count;    // draws before the current statement
  unsigned int pending;        // the current statement's draws at this path
  unsigned int first;          // the lowest stable rank among them (duplicates only)
};

constexpr unsigned long long kEmptyPath = ~0ull;

__device__ long long claim_slot(DrawSlot* table, long long capacity, unsigned long long path,
                                unsigned long long* inserted) {
  if (path == kEmptyPath) return capacity;
  unsigned long long mask = static_cast<unsigned long long>(capacity - 1);
  for (unsigned long long s = mix64(path) & mask;; s = (s + 1) & mask) {
    unsigned long long old = atomicCAS(&table[s].path, kEmptyPath, path);
    if (old == kEmptyPath) atomicAdd(inserted, 1ull);
    if (old == kEmptyPath || old == path) return static_cast<long long>(s);
  }
}

template <class T>
__device__ bool positive(T bound) { return bound > T(0); }

}  // namespace

extern "C" __global__ void ndp_rand_table_clear(DrawSlot* table, long long slots) {
  NDP_GRID_STRIDE(s, slots) table[s] = DrawSlot{kEmptyPath, 0, 0, 0};
}

// Moves every used slot of `from` into `to` (cleared, larger).
extern "C" __global__ void ndp_rand_table_rehash(const DrawSlot* from, long long from_capacity, DrawSlot* to,
                                                 long long to_capacity, unsigned long long* inserted) {
  NDP_GRID_STRIDE(s, from_capacity + 1) {
    DrawSlot d = from[s];
    if (d.path == kEmptyPath && s != from_capacity) continue;
    if (s == from_capacity && d.count == 0) continue;
    long long t = claim_slot(to, to_capacity, d.path, inserted);
    to[t].count = d.count;
  }
}

// Instance i claims its path's slot and counts itself there. Failures: word 0, the first
// instance whose bound is not positive; word 1 becomes nonzero where two instances share a
// path; word 2 counts the new slots.
#define NDP_RAND_CLAIM(T, name)                                                                          \
  extern "C" __global__ void ndp_rand_claim_##name(const T* bounds, const unsigned long long* paths,     \
                                                   long long n, DrawSlot* table, long long capacity,     \
                                                   long long* slot_of, unsigned long long* words) {      \
    NDP_GRID_STRIDE(i, n) {                                                                              \
      if (!positive(bounds[i])) report_failure(words, i);                                                \
      long long s = claim_slot(table, capacity, paths[i], words + 2);                                    \
      slot_of[i] = s;                                                                                    \
      if (atomicAdd(&table[s].pending, 1u) == 1u) words[1] = 1;                                          \
    }                                                                                                    \
  }
NDP_RAND_CLAIM(long long, i64)
NDP_RAND_CLAIM(double, f64)
NDP_RAND_CLAIM(int, i32)
NDP_RAND_CLAIM(float, f32)

// Where paths repeat: the lowest stable rank of each slot's instances (`first` is all ones
// before; the draw resets it).
extern "C" __global__ void ndp_rand_group_starts(const long long* slot_of, const long long* ranks, long long n,
                                                 DrawSlot* table) {
  NDP_GRID_STRIDE(i, n) atomicMin(&table[slot_of[i]].first, static_cast<unsigned int>(ranks[i]));
}

extern "C" __global__ void ndp_rand_mark_groups(const long long* slot_of, long long n, DrawSlot* table) {
  NDP_GRID_STRIDE(i, n) table[slot_of[i]].first = ~0u;
}

/// The draw number of instance i: the slot's earlier draws, plus the instances before it in
/// this statement with the same path (ranks: stable ranks of slot_of, or null where no path
/// repeats).
__device__ unsigned long long draw_number(const DrawSlot* table, const long long* slot_of, const long long* ranks,
                                          long long i) {
  const DrawSlot& d = table[slot_of[i]];
  return d.count + (ranks ? static_cast<unsigned long long>(ranks[i] - d.first) : 0ull);
}

__device__ unsigned long long raw_draw(unsigned long long seed_mix, unsigned long long path, unsigned long long site,
                                       unsigned long long c) {
  return mix64(mix64(seed_mix ^ path ^ site) ^ c);
}

// The draws themselves, as lang/eval/prims_scalar.cpp's rand_prim turns r into a value below
// the bound.
__device__ long long below(unsigned long long r, long long bound) {
  return static_cast<long long>(__umul64hi(r, static_cast<unsigned long long>(bound)));
}
__device__ int below(unsigned long long r, int bound) {
  return static_cast<int>(__umul64hi(r, static_cast<unsigned long long>(bound)));
}
__device__ double below(unsigned long long r, double bound) {
  double v = static_cast<double>(r >> 11) * 0x1p-53 * bound;
  return v >= bound ? nextafter(bound, 0.0) : v;
}
__device__ float below(unsigned long long r, float bound) {
  float v = __fmul_rn(static_cast<float>(r >> 40) * 0x1p-24f, bound);
  return v >= bound ? nextafterf(bound, 0.0f) : v;
}

#define NDP_RAND_DRAW(T, name)                                                                            \
  extern "C" __global__ void ndp_rand_draw_##name(const T* bounds, const unsigned long long* paths,       \
                                                  const long long* slot_of, const long long* ranks,       \
                                                  long long n, const DrawSlot* table,                     \
                                                  const unsigned long long* seed_mix,                     \
                                                  unsigned long long site, T* out) {                      \
    NDP_GRID_STRIDE(i, n) {                                                                               \
      unsigned long long c = draw_number(table, slot_of, ranks, i);                                       \
      out[i] = below(raw_draw(*seed_mix, paths[i], site, c), bounds[i]);                                  \
    }                                                                                                     \
  }
NDP_RAND_DRAW(long long, i64)
NDP_RAND_DRAW(double, f64)
NDP_RAND_DRAW(int, i32)
NDP_RAND_DRAW(float, f32)

// After the draws: the statement's draws become earlier draws.
extern "C" __global__ void ndp_rand_commit(const long long* slot_of, long long n, DrawSlot* table) {
  NDP_GRID_STRIDE(i, n) {
    DrawSlot& d = table[slot_of[i]];
    unsigned int p = atomicExch(&d.pending, 0u);
    if (p != 0) atomicAdd(&d.count, static_cast<unsigned long long>(p));
  }
}

// rand_seed over n > 0 instances: the last one's seed is the one in force.
extern "C" __global__ void ndp_rand_seed(const long long* seeds, long long n, unsigned long long* seed_mix) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *seed_mix = mix64(static_cast<unsigned long long>(seeds[n - 1]));
}

// The path hashes of the elements of apply-to-each instances: element j of segment k gets
// mix(parent[k] ^ j) (RandState::step).
extern "C" __global__ void __launch_bounds__(kScanBlock)
    ndp_path_step(const unsigned long long* parent, Segs s, unsigned long long* out) {
  for_each_element_segment(s, [&](long long p, long long k) {
    out[p] = mix64(parent[k] ^ static_cast<unsigned long long>(p - s.begin(k)));
  });
}

// A seed the host knows (a top-level form's start: 0).
extern "C" __global__ void ndp_rand_seed_value(unsigned long long seed, unsigned long long* seed_mix) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *seed_mix = mix64(seed);
}
