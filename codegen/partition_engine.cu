// The kernels of partition levels (Note [Partition levels] in flatten/flat_ir.h; Note [Partition
// levels on the GPU] in codegen/partition_levels_ptx.h), written once over the program's own
// parts: clang compiles this file to LLVM bitcode at build time (without CUDA's headers:
// codegen/clang_cuda_shim.h, and without optimising), and at run time codegen/
// partition_levels_ptx.cpp defines the externs below from one loop's plan, links and optimises.
//
// Words: every element is a 64-bit word (an int, or a float's bits). A segment is a range
// [at, at + len) of positions, which are its result's places too: the levels rewrite the keys
// in their final order, so a position means the same in every buffer.
#include "codegen/clang_cuda_shim.h"

#include <cstdint>

#include "flatten/partition_engine_abi.h"

using u64 = unsigned long long;
using i64 = long long;

extern "C" {
// The program, defined by the code generator.
/// 1 where an instance of `len` elements recurses.
__device__ int ndp_pl_recurse(i64 len);
/// The instance's scalars (as a[#a / 2]) into s, from its `len` elements, element i at
/// base[first + i]; 0 where one fails (an index out of range).
__device__ int ndp_pl_scalars(const u64* base, i64 first, i64 len, u64* s);
/// The part of element e, in the result's order, given the scalars; -1 where not exactly one
/// part's predicate holds.
__device__ int ndp_pl_part(u64 e, const u64* s);
extern __device__ const int ndp_pl_parts;        // the parts, at most kMaxParts
extern __device__ const int ndp_pl_child_mask;   // bit j: part j is a child (recursed on)
}

namespace {

using namespace ndp::flatten::partition_engine;  // the layout the host shares
constexpr int kWarps = kThreads / 32;
constexpr int kScatterWarps = kScatterThreads / 32;
constexpr int kScatterItems = kPerTile / kScatterThreads;  // a thread's elements of a tile (8)
constexpr int kTileChunks = kPerTile / 32;         // a tile's chunks of 32 elements, a warp's load
constexpr int kBlockWarps = kBlockThreads / 32;
constexpr int kWindow = 32;          // the most elements a warp finishes at once, all their levels
constexpr int kMostPending = kMostBlockTile / (kWindow + 1) + 1;  // a block level's longer segments
constexpr int kNoElement = -2;       // a lane past a segment's end (parts are >= 0, -1 a failure)

/// A block level's segment of more than kWindow elements: its place within the block's.
struct Pending {
  unsigned short at, len;
};
__device__ inline i64* slot_of(i64* counters, int slot) { return counters + kSlot * slot; }

__device__ inline int lane() { return static_cast<int>(threadIdx.x) & 31; }
__device__ inline int warp() { return static_cast<int>(threadIdx.x) >> 5; }
__device__ inline unsigned lanes_before() { return __nvvm_read_ptx_sreg_lanemask_lt(); }
__device__ inline bool is_child(int part) { return ((ndp_pl_child_mask >> part) & 1) != 0; }
__device__ inline i64 add_to(i64* p, i64 v) { return __nvvm_atom_add_gen_ll(p, v); }
__device__ inline void fail(i64* counters) { __nvvm_atom_xchg_gen_ll(&counters[kFailed], 1); }

/// The sum of x over this lane and the lanes before it. Every lane of the warp calls it.
template <class T>
__device__ T warp_inclusive_sum(T x) {
  for (int d = 1; d < 32; d <<= 1) {
    const T y = __shfl_up_sync(0xffffffffu, x, static_cast<unsigned>(d));
    if (lane() >= d) x += y;
  }
  return x;
}

/// The exclusive prefix of v over the block (of `Warps` warps), in thread order; *total the
/// block's sum. Every thread calls it; `scratch` holds Warps + 1 words.
template <int Warps = kWarps>
__device__ i64 block_exclusive_scan(i64 v, i64* scratch, i64* total) {
  const i64 x = warp_inclusive_sum(v);
  if (lane() == 31) scratch[warp()] = x;
  __syncthreads();
  if (threadIdx.x == 0) {
    i64 run = 0;
    for (int w = 0; w < Warps; ++w) {
      const i64 t = scratch[w];
      scratch[w] = run;
      run += t;
    }
    scratch[Warps] = run;
  }
  __syncthreads();
  const i64 r = scratch[warp()] + x - v;
  *total = scratch[Warps];
  __syncthreads();
  return r;
}

/// Where a grid level writes a part of a segment: the next level's buffer for a part that
/// recurses over more than `switch_at` elements, the result for every other.
__device__ inline bool to_next(int part, i64 n, i64 switch_at) { return is_child(part) && n > switch_at && ndp_pl_recurse(n) != 0; }

__device__ inline bool vote_any(bool v) { return __nvvm_vote_any_sync(0xffffffffu, v); }
__device__ inline bool vote_all(bool v) { return __nvvm_vote_all_sync(0xffffffffu, v); }
__device__ inline unsigned ballot(bool v) { return __nvvm_vote_ballot_sync(0xffffffffu, v); }
__device__ inline void sync_warp() { __nvvm_bar_warp_sync(0xffffffffu); }

/// Instances of at most kWindow elements in all, all their levels by one warp, each element
/// stored to out[its place] at the end. Lane l, where `mine`, holds element l of the warp's
/// window: buf[shift + l], in an instance that is lanes [lo, hi) of the window. A level ranks
/// every element of a recursing instance within its part by ballots masked to the instance, and
/// moves it through buf (an element stays within its instance, so within its buffer and shift);
/// the instances travel with their elements through `room` (the warp's own kWindow words). Every
/// lane of the warp calls it; false where the plan's promises fail.
__device__ bool finish_window(u64* buf, int shift, unsigned* room, u64* out, int lo, int hi, bool mine) {
  const int l = lane();
  bool active = mine && ndp_pl_recurse(hi - lo) != 0;
  u64 key = mine ? buf[shift + l] : 0;
  bool ok = true;
  while (vote_any(active)) {
    int p = -1;
    if (active) {
      u64 scalars[kMaxScalars];
      if (ndp_pl_scalars(buf, shift + lo, hi - lo, scalars) == 0) ok = false;
      p = ndp_pl_part(key, scalars);
      if (p < 0) ok = false;
    }
    const unsigned within = static_cast<unsigned>(((1ull << (hi - lo)) - 1ull) << lo);
    int at = lo, size = 0, rank = 0;
#pragma unroll
    for (int j = 0; j < kMaxParts; ++j) {
      if (j >= ndp_pl_parts) break;
      const unsigned b = ballot(p == j) & within;
      const int nj = __builtin_popcount(b);
      at += j < p ? nj : 0;
      if (j == p) {
        size = nj;
        rank = __builtin_popcount(b & lanes_before());
      }
    }
    int to = l;
    bool next_active = false;
    if (p >= 0) {
      to = at + rank;
      next_active = is_child(p) && ndp_pl_recurse(size) != 0;
      if (next_active && size == hi - lo) ok = false;
      lo = at;
      hi = at + size;
    }
    sync_warp();  // (every lane's reads of the keys are done)
    if (mine) {
      buf[shift + to] = key;
      room[to] = static_cast<unsigned>(lo) | static_cast<unsigned>(hi) << 8 | (next_active ? 1u << 16 : 0u);
    }
    sync_warp();
    if (mine) {
      key = buf[shift + l];
      const unsigned r = room[l];
      lo = static_cast<int>(r & 0xffu);
      hi = static_cast<int>((r >> 8) & 0xffu);
      active = (r >> 16) != 0;
    }
    sync_warp();
    if (!vote_all(ok)) return false;
  }
  if (mine) out[shift + l] = key;
  return true;
}

/// The block kernel's two buffers of `capacity` elements each (its dynamic shared memory).
struct Buffers {
  u64* base;
  int capacity;
  __device__ u64* operator[](int b) const { return base + b * capacity; }
};

/// A warp's short instances (of at most kWindow elements) that wait to be finished together:
/// each instance's buffer, place and length packed in a word of `entries` (the warp's own, in
/// shared memory), `lanes` their elements. A split leaves one or two short children, of about
/// 17 elements on average; a window of one instance left half the warp's lanes idle at every
/// level (bench/results/session46).
struct Shorts {
  unsigned* entries;
  int count, lanes;
};
__device__ inline unsigned short_entry(int buffer, int at, int n) {
  return static_cast<unsigned>(buffer) | static_cast<unsigned>(at) << 1 | static_cast<unsigned>(n) << 13;
}

/// All levels of a warp's short instances at once (finish_window), lanes given to them in turn;
/// then none waits. `keys` are the block's two buffers. Every lane of the warp calls it.
__device__ bool finish_shorts(Buffers keys, Shorts& w, unsigned* room, u64* out) {
  sync_warp();  // (the entries were written by lane 0)
  const int l = lane();
  int buffer = 0, shift = 0, lo = 0, hi = 0;
  bool mine = false;
  for (int i = 0, first = 0; i < w.count; ++i) {
    const unsigned e = w.entries[i];
    const int n = static_cast<int>(e >> 13), at = static_cast<int>((e >> 1) & 0xfffu);
    if (l >= first && l < first + n) {
      buffer = static_cast<int>(e & 1u);
      shift = at - first;
      lo = first;
      hi = first + n;
      mine = true;
    }
    first += n;
  }
  w.count = w.lanes = 0;
  return finish_window(keys[buffer], shift, room, out, lo, hi, mine);
}

/// A block level's instance [lo, lo + n) of keys[from] (n more than kWindow), split into its
/// parts by one warp, stably: the elements of a part that recurses go to their places in
/// keys[from ^ 1], all others to their places in `out` (they are final). A recursing part of
/// more than kWindow elements joins the next level's list (`next`, *next_count); the shorter ones
/// wait in `w` to be finished by windows (finish_shorts). One pass counts the parts, one moves
/// every element, ranked within its part by ballots; each reads four chunks of 32 elements at a
/// time, their loads in flight together, and an instance of at most four chunks is read once.
/// Every lane of the warp calls it; false where the plan's promises fail.
__device__ bool split_by_warp(Buffers keys, int from, u64* out, int lo, int n, Pending* next, int* next_count,
                              Shorts& w, unsigned* room) {
  constexpr int kLoads = 4;
  const int l = lane();
  const u64* src = keys[from];
  u64* const to = keys[from ^ 1];
  u64 scalars[kMaxScalars];
  bool ok = ndp_pl_scalars(src, lo, n, scalars) != 0;
  u64 e[kLoads];
  int p[kLoads];
  auto classify = [&](int c) {
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const int i = c + u * 32 + l;
      e[u] = i < n ? src[lo + i] : 0;
      p[u] = i < n ? ndp_pl_part(e[u], scalars) : kNoElement;
      if (i < n && p[u] < 0) ok = false;
    }
  };
  int count[kMaxParts] = {0, 0, 0, 0};
  for (int c = 0; c < n; c += kLoads * 32) {
    classify(c);
#pragma unroll
    for (int u = 0; u < kLoads; ++u)
#pragma unroll
      for (int j = 0; j < kMaxParts; ++j)
        if (j < ndp_pl_parts) count[j] += __builtin_popcount(ballot(p[u] == j));
  }
  int start[kMaxParts], place[kMaxParts];
  unsigned deeper = 0;  // bit j: part j recurses
  int at = lo;
#pragma unroll
  for (int j = 0; j < kMaxParts; ++j) {
    start[j] = place[j] = at;
    if (j >= ndp_pl_parts) continue;
    if (is_child(j) && count[j] > 0 && ndp_pl_recurse(count[j]) != 0) {
      deeper |= 1u << j;
      if (count[j] == n) ok = false;
    }
    at += count[j];
  }
  if (!vote_all(ok)) return false;
  for (int c = 0; c < n; c += kLoads * 32) {
    if (n > kLoads * 32) classify(c);  // (else the first pass's elements are still here)
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      int where = 0;
#pragma unroll
      for (int j = 0; j < kMaxParts; ++j) {
        if (j >= ndp_pl_parts) break;
        const unsigned b = ballot(p[u] == j);
        if (p[u] == j) where = place[j] + __builtin_popcount(b & lanes_before());
        place[j] += __builtin_popcount(b);
      }
      if (p[u] >= 0) (((deeper >> p[u]) & 1u) != 0 ? to : out)[where] = e[u];
    }
  }
  // The recursing parts: the long ones to the next level, the short ones to wait for a window.
#pragma unroll
  for (int j = 0; j < kMaxParts; ++j) {
    if (j >= ndp_pl_parts || ((deeper >> j) & 1u) == 0) continue;
    if (count[j] > kWindow) {
      if (l == 0) next[__nvvm_atom_add_gen_i(next_count, 1)] = Pending{static_cast<unsigned short>(start[j]), static_cast<unsigned short>(count[j])};
      continue;
    }
    if (w.lanes + count[j] > kWindow && !finish_shorts(keys, w, room, out)) ok = false;
    if (l == 0) w.entries[w.count] = short_entry(from ^ 1, start[j], count[j]);
    ++w.count;
    w.lanes += count[j];
  }
  return vote_all(ok);
}

}  // namespace

extern "C" {

/// The first level's instances (offsets[i], offsets[i + 1]), a thread each: those of more than
/// `switch_at` elements (the tuning's switch point, at most the blocks' capacity) that recurse to the large
/// list (with their tiles; slot 0), the others to the small list (the blocks copy those that do
/// not recurse).
__global__ void __launch_bounds__(kThreads) ndp_pl_seed(const i64* offsets, i64 n, i64 switch_at, Large* large,
                                                        Tile* tiles, Small* small, i64* counters) {
  // Empty instances and empty parts are never asked whether they recurse (they move nothing); a
  // program whose empty instances recurse fails or never ends, so the levels run one by one.
  if (blockIdx.x == 0 && threadIdx.x == 0 && ndp_pl_recurse(0) != 0) fail(counters);
  for (i64 i = static_cast<i64>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += static_cast<i64>(gridDim.x) * kThreads) {
    const i64 at = offsets[i], len = offsets[i + 1] - at;
    if (len == 0) continue;
    if (len > switch_at && ndp_pl_recurse(len) != 0) {
      const i64 k = (len + kPerTile - 1) / kPerTile;
      const i64 s = add_to(&counters[kLarge], 1);
      const i64 t0 = add_to(&counters[kTiles], k);
      large[s] = Large{at, len, t0, k};
      for (i64 q = 0; q < k; ++q) tiles[t0 + q] = Tile{s, q * kPerTile};
    } else {
      small[add_to(&counters[kSmall], 1)] = Small{at, len, 1};
    }
  }
}

/// Counts of a grid level (its lists in `slot`), a block a tile at a time: the tile's elements in
/// each part (counts[tile·P + j]). Its first block empties the other slot, which the plan then
/// fills for the next level. Each thread loads its kTileItems elements first (coalesced, all in
/// flight at once), then classifies them. Like every grid level's kernel it runs a fixed grid (the
/// blocks the device holds at once) over however many items the level has, which it reads on the
/// device, so that the host launches levels without reading their sizes. (Items taken one at a
/// time from a counter measured the same as these strides.)
// (Four blocks a multiprocessor: at the driver's choice of registers it held two, and a full
// level took 62 against 48 µs.)
__global__ void __launch_bounds__(kThreads, 4) ndp_pl_count(const Large* large, const Tile* tiles, const u64* src, i64* counts,
                                                         i64* counters, int slot) {
  __shared__ u64 scalars[kMaxScalars];
  __shared__ i64 scratch[kWarps + 1];
  if (blockIdx.x == 0 && threadIdx.x == 0) slot_of(counters, slot ^ 1)[kLarge] = slot_of(counters, slot ^ 1)[kTiles] = 0;
  const i64 n_tiles = slot_of(counters, slot)[kTiles];
  for (i64 tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
    const Tile t = tiles[tile];
    const Large s = large[t.seg];
    const i64 n = s.len - t.start < kPerTile ? s.len - t.start : kPerTile;
    if (threadIdx.x == 0 && ndp_pl_scalars(src, s.at, s.len, scalars) == 0) fail(counters);
    const u64* from = src + s.at + t.start;
    u64 v[kTileItems];
#pragma unroll
    for (int k = 0; k < kTileItems; ++k) {
      const i64 i = k * kThreads + threadIdx.x;
      v[k] = i < n ? from[i] : 0;
    }
    __syncthreads();
    i64 mine = 0;  // packed: part j's count in bits [16j, 16j + 16)
    bool bad = false;
#pragma unroll
    for (int k = 0; k < kTileItems; ++k) {
      if (k * kThreads + threadIdx.x >= n) continue;
      const int p = ndp_pl_part(v[k], scalars);
      bad = bad || p < 0;
      mine += p >= 0 ? i64{1} << (16 * p) : 0;
    }
    if (bad) fail(counters);
    i64 sums = 0;
    block_exclusive_scan(mine, scratch, &sums);  // (its last barrier ends the reads of scalars)
    if (threadIdx.x < static_cast<unsigned>(ndp_pl_parts))
      counts[tile * ndp_pl_parts + threadIdx.x] = (sums >> (16 * threadIdx.x)) & 0xffff;
  }
}

/// A grid level's plan (its lists in `slot`), a block a segment at a time: its tiles' counts
/// become each tile's first place within each part (an exclusive scan over the segment's tiles),
/// `sizes` gets the parts' sizes, and the parts that recurse go to the next level's lists (those
/// of more than switch_at elements, with their tiles, in the other slot) or to the small list.
/// *failed where a child is its whole segment: it would recurse for ever (the levels run again one
/// by one, and meet the limit).
__global__ void __launch_bounds__(kThreads) ndp_pl_plan(const Large* large, i64* counts, i64* sizes, i64 switch_at, Large* next,
                                                        Tile* next_tiles, Small* small, i64* counters, int slot) {
  __shared__ i64 scratch[kWarps + 1];
  __shared__ i64 part_sizes[kMaxParts];
  __shared__ i64 new_seg, new_tile0, new_tiles;
  i64* const to = slot_of(counters, slot ^ 1);
  const i64 n_large = slot_of(counters, slot)[kLarge];
  for (i64 seg = blockIdx.x; seg < n_large; seg += gridDim.x) {
    const Large s = large[seg];
#pragma unroll
    for (int j = 0; j < ndp_pl_parts; ++j) {
      i64 run = 0;
      for (i64 q0 = 0; q0 < s.tiles; q0 += kThreads) {
        const i64 q = q0 + threadIdx.x;
        i64* c = &counts[(s.tile0 + q) * ndp_pl_parts + j];
        const i64 v = q < s.tiles ? *c : 0;
        i64 total = 0;
        const i64 before = block_exclusive_scan(v, scratch, &total);
        if (q < s.tiles) *c = run + before;
        run += total;
      }
      if (threadIdx.x == 0) {
        part_sizes[j] = run;
        sizes[seg * ndp_pl_parts + j] = run;
      }
    }
    __syncthreads();
    i64 at = s.at;
#pragma unroll
    for (int j = 0; j < ndp_pl_parts; ++j) {
      const i64 n = part_sizes[j];
      if (is_child(j) && n > 0 && ndp_pl_recurse(n) != 0) {
        if (n == s.len) {
          if (threadIdx.x == 0) fail(counters);
        } else if (n > switch_at) {
          if (threadIdx.x == 0) {
            new_tiles = (n + kPerTile - 1) / kPerTile;
            new_seg = add_to(&to[kLarge], 1);
            new_tile0 = add_to(&to[kTiles], new_tiles);
            next[new_seg] = Large{at, n, new_tile0, new_tiles};
          }
          __syncthreads();
          for (i64 q = threadIdx.x; q < new_tiles; q += kThreads) next_tiles[new_tile0 + q] = Tile{new_seg, q * kPerTile};
          __syncthreads();
        } else if (threadIdx.x == 0) {
          small[add_to(&counters[kSmall], 1)] = Small{at, n, 0};
        }
      }
      at += n;
    }
    __syncthreads();  // (part_sizes is the next segment's)
  }
}

/// A grid level's moves (its lists in `slot`), a block a tile at a time: every element to its
/// place, stably within its part, into `next` where its part recurses over more than switch_at
/// elements (to_next), into `out` otherwise, straight from registers. Each warp loads chunks of
/// 32 consecutive elements (chunk k·16 + w for its k-th load) and ranks each element within its
/// part and chunk by ballots; the chunks' counts, scanned over the tile a part at a time, place
/// every chunk, and each store of a warp writes at most one run a part. (Through shared memory,
/// the tile loaded, rewritten in its parts' order and stored, a full level of 2^24 ints took 133
/// µs against 114.)
__global__ void __launch_bounds__(kScatterThreads, 2) ndp_pl_scatter(const Large* large, const Tile* tiles, i64 switch_at,
                                                                  const u64* src, const i64* counts, const i64* sizes, u64* next,
                                                                  u64* out, i64* counters, int slot) {
  __shared__ unsigned short chunk_before[kMaxParts][kTileChunks];  // a part's elements in earlier chunks
  __shared__ u64 scalars[kMaxScalars];
  __shared__ i64 first[kMaxParts];  // each part's first place for this tile
  __shared__ bool into_next[kMaxParts];
  const int l = lane(), w = warp();
  const i64 n_tiles = slot_of(counters, slot)[kTiles];
  for (i64 tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
    const Tile t = tiles[tile];
    const Large s = large[t.seg];
    const int n = static_cast<int>(s.len - t.start < kPerTile ? s.len - t.start : kPerTile);
    if (threadIdx.x == 0) {
      ndp_pl_scalars(src, s.at, s.len, scalars);  // (its failure was recorded by the counts)
      i64 at = s.at;
#pragma unroll
      for (int j = 0; j < ndp_pl_parts; ++j) {
        const i64 size = sizes[t.seg * ndp_pl_parts + j];
        first[j] = at + counts[tile * ndp_pl_parts + j];
        into_next[j] = to_next(j, size, switch_at);
        at += size;
      }
    }
    const u64* from = src + s.at + t.start;
    u64 e[kScatterItems];
#pragma unroll
    for (int k = 0; k < kScatterItems; ++k) {
      const int i = k * kScatterThreads + static_cast<int>(threadIdx.x);
      e[k] = i < n ? from[i] : 0;
    }
    __syncthreads();  // (the scalars)
    int part[kScatterItems], rank[kScatterItems];
#pragma unroll
    for (int k = 0; k < kScatterItems; ++k) {
      const int i = k * kScatterThreads + static_cast<int>(threadIdx.x);
      part[k] = i < n ? ndp_pl_part(e[k], scalars) : -1;
      rank[k] = 0;
#pragma unroll
      for (int j = 0; j < kMaxParts; ++j) {
        if (j >= ndp_pl_parts) break;
        const unsigned b = ballot(part[k] == j);
        if (part[k] == j) rank[k] = __builtin_popcount(b & lanes_before());
        if (l == 0) chunk_before[j][k * kScatterWarps + w] = static_cast<unsigned short>(__builtin_popcount(b));
      }
    }
    __syncthreads();
    // Warp j scans part j's chunk counts (four chunks a lane) into their exclusive prefixes.
    if (w < ndp_pl_parts) {
      unsigned short* c = chunk_before[w];
      int v[kTileChunks / 32], sum = 0;
#pragma unroll
      for (int q = 0; q < kTileChunks / 32; ++q) {
        v[q] = c[l * (kTileChunks / 32) + q];
        sum += v[q];
      }
      int before = warp_inclusive_sum(sum) - sum;
#pragma unroll
      for (int q = 0; q < kTileChunks / 32; ++q) {
        c[l * (kTileChunks / 32) + q] = static_cast<unsigned short>(before);
        before += v[q];
      }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kScatterItems; ++k) {
      const int p = part[k];
      if (p < 0) continue;
      const i64 to = first[p] + chunk_before[p][k * kScatterWarps + w] + rank[k];
      (into_next[p] ? next : out)[to] = e[k];
    }
    __syncthreads();  // (chunk_before, first and into_next are the next tile's)
  }
}

/// The levels left of the small segments, a block a segment of at most `capacity` elements (a
/// power of two up to kMostBlockTile) in shared memory, read into one of two buffers: 2 ·
/// capacity words of dynamic shared memory. A level's segments of more than kWindow elements
/// are listed; the block's warps take them one at a time and split each from one buffer into the
/// other (split_by_warp), listing the next level's and finishing the shorter children at once.
/// Every element is stored to `out` once, when it is final. *failed where a part is not exactly
/// one, a scalar fails, a segment is past the tile, or a child is its whole segment.
__global__ void __launch_bounds__(kBlockThreads) ndp_pl_block(const Small* small, const u64* arg, u64* out, i64* counters, int capacity) {
  extern __shared__ u64 block_keys[];
  const Buffers keys{block_keys, capacity};
  __shared__ Pending pending[2][kMostPending];
  __shared__ unsigned room[kBlockWarps][kWindow];
  __shared__ unsigned short_entries[kBlockWarps][kWindow];  // (an instance may be one element)
  __shared__ int pending_count[2], taken, bad;
  const Small s = small[blockIdx.x];
  const u64* src = (s.from_arg != 0 ? arg : out) + s.at;
  if (ndp_pl_recurse(s.len) == 0) {  // an instance of the first level that is its own result
    for (i64 i = threadIdx.x; i < s.len && s.from_arg != 0; i += kBlockThreads) out[s.at + i] = src[i];
    return;
  }
  if (s.len > capacity) {
    if (threadIdx.x == 0) fail(counters);
    return;
  }
  const int len = static_cast<int>(s.len);
  u64* const dst = out + s.at;
  for (int i = threadIdx.x; i < len; i += kBlockThreads) keys[0][i] = src[i];
  if (threadIdx.x == 0) {
    bad = taken = 0;
    pending_count[0] = 1;
    pending_count[1] = 0;
    pending[0][0] = Pending{0, static_cast<unsigned short>(len)};
  }
  __syncthreads();
  if (len <= kWindow) {
    if (warp() == 0 && !finish_window(keys[0], 0, room[0], dst, 0, len, lane() < len) && lane() == 0) fail(counters);
    return;
  }
  Shorts shorts{short_entries[warp()], 0, 0};
  for (int now = 0;; now ^= 1) {
    // (Filled in the level before, read after a barrier: the same in every thread.)
    const int count = pending_count[now];
    if (count == 0) break;
    for (;;) {
      int t = 0;
      if (lane() == 0) t = __nvvm_atom_add_gen_i(&taken, 1);
      t = __nvvm_shfl_sync_idx_i32(0xffffffffu, t, 0, 0x1f);
      if (t >= count) break;
      const Pending p = pending[now][t];
      if (!split_by_warp(keys, now, dst, p.at, p.len, pending[now ^ 1], &pending_count[now ^ 1], shorts, room[warp()]) &&
          lane() == 0)
        bad = 1;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      pending_count[now] = 0;
      taken = 0;
    }
    // A barrier that also tells every thread whether a split failed: a warp may set `bad`
    // during a level while another still reads it, so it is read only here.
    if (__nvvm_bar0_or(bad != 0) != 0) break;
  }
  // (The short instances' places are never a later level's, so they may wait until the end.)
  if (shorts.count > 0 && !finish_shorts(keys, shorts, room[warp()], dst) && lane() == 0) bad = 1;
  __syncthreads();
  if (threadIdx.x == 0 && bad != 0) fail(counters);
}

}  // extern "C"
