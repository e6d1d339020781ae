// *_combine (extensions.md §3): out[k] = dest[k] ⊕ vals[i1] ⊕ vals[i2] ⊕ … over every i with
// idx[i] == k, in ascending i; deterministic.
//
// Note [GPU combine]
// The host stably sorts the positions by target (the radix sort of device/sort.cu), so the
// contributions to each target form a run ("bin") in ascending source order. A segmented
// reduction then folds every bin at any bin shape (one hot target, a million tiny ones), in a
// fixed order, so the result does not depend on scheduling:
//  1. ndp_combine_tiles_*: each tile of kTile sorted positions runs a segmented inclusive scan
//     (pairs (head, value): a head starts a bin) and stores its aggregate;
//  2. ndp_combine_carry_*: one block scans the tile aggregates: carry[b] is what the bin open
//     at the start of tile b has accumulated in earlier tiles;
//  3. ndp_combine_apply_*: each tile redoes its scan, adds the carry to the elements before its
//     first head, and at the last element of every bin writes out[k] = dest[k] ⊕ (bin total).
// Exactly associative operators (every integer, bool and char one) give exactly the
// sequential fold. Float + and * reassociate: the result may differ from it by rounding only.
// Float max/min use, within the bin, "the leftmost maximum of the non-NaN values" (NaN as the
// identity), which is associative; dest[k] ⊕ that total is then exactly the sequential fold,
// in which a NaN in dest sticks, NaNs among the values never win and the leftmost of equal
// values (-0.0 vs 0.0) does.
#include <cub/block/block_scan.cuh>

#include "common.cuh"

using namespace ndp_gpu;

namespace {

constexpr int kThreads = 256;
constexpr int kItems = 8;
constexpr int kTile = kThreads * kItems;

enum : int { kPlus = 0, kMult = 1, kMax = 2, kMin = 3, kAnd = 4, kOr = 5, kXor = 6 };

template <class T>
constexpr bool is_float_v = false;
template <>
constexpr bool is_float_v<float> = true;
template <>
constexpr bool is_float_v<double> = true;

/// The CPU runtime's OpFn::apply (runtime/cpu/ops.h): acc is the earlier operand.
template <int O, class T>
__device__ T apply(T acc, T x) {
  if constexpr (O == kPlus || O == kMult) {
    if constexpr (is_float_v<T>) {
      return O == kPlus ? acc + x : acc * x;
    } else if constexpr (sizeof(T) == 8) {
      using U = unsigned long long;
      return static_cast<T>(O == kPlus ? U(acc) + U(x) : U(acc) * U(x));
    } else {
      using U = unsigned;
      return static_cast<T>(O == kPlus ? U(acc) + U(x) : U(acc) * U(x));
    }
  } else if constexpr (O == kMax) {
    return x > acc ? x : acc;
  } else if constexpr (O == kMin) {
    return x < acc ? x : acc;
  } else if constexpr (sizeof(T) == 1) {  // bool
    if constexpr (O == kAnd) return acc && x;
    else if constexpr (O == kOr) return acc || x;
    else return acc != x;
  } else {
    if constexpr (O == kAnd) return static_cast<T>(acc & x);
    else if constexpr (O == kOr) return static_cast<T>(acc | x);
    else return static_cast<T>(acc ^ x);
  }
}

/// The associative operator that reduces a bin: apply, except float max/min, where a NaN on
/// the left is the identity (Note [GPU combine]).
template <int O, class T>
__device__ T reduce_op(T a, T b) {
  if constexpr (is_float_v<T> && (O == kMax || O == kMin)) {
    if (a != a) return b;
  }
  return apply<O, T>(a, b);
}

/// A segmented-scan element: `head` says a bin starts at or before it (within what the pair
/// covers); `value` folds the elements since the last head.
template <class T>
struct Pair {
  int head;
  T value;
};

template <int O, class T>
struct PairOp {
  __device__ Pair<T> operator()(const Pair<T>& a, const Pair<T>& b) const {
    return Pair<T>{a.head | b.head, b.head ? b.value : reduce_op<O, T>(a.value, b.value)};
  }
};

/// The target (bin) of sorted position q: keys are 32- or 64-bit.
__device__ long long key_at(const void* keys, int key_bytes, long long q) {
  return key_bytes == 8 ? static_cast<long long>(static_cast<const unsigned long long*>(keys)[q])
                        : static_cast<long long>(static_cast<const unsigned*>(keys)[q]);
}

/// Loads this tile's pairs in blocked order (thread t holds sorted positions t*kItems + i),
/// runs the segmented inclusive scan and returns the tile's aggregate. Padding past n is a
/// head, so it cannot disturb real elements (it only ever follows them).
template <int O, class T>
__device__ Pair<T> scan_tile(const void* keys, int key_bytes, const long long* from, const T* vals, long long n,
                             Pair<T> (&item)[kItems]) {
  using Scan = cub::BlockScan<Pair<T>, kThreads>;
  __shared__ typename Scan::TempStorage temp;
  long long first = static_cast<long long>(blockIdx.x) * kTile + static_cast<long long>(threadIdx.x) * kItems;
  for (int i = 0; i < kItems; ++i) {
    long long q = first + i;
    if (q < n) item[i] = Pair<T>{q == 0 || key_at(keys, key_bytes, q - 1) != key_at(keys, key_bytes, q), vals[from[q]]};
    else item[i] = Pair<T>{1, T()};
  }
  Pair<T> aggregate;
  Scan(temp).InclusiveScan(item, item, PairOp<O, T>{}, aggregate);
  return aggregate;
}

template <int O, class T>
__device__ void combine_tiles(const void* keys, int key_bytes, const long long* from, const T* vals, long long n,
                              Pair<T>* aggregates) {
  Pair<T> item[kItems];
  Pair<T> aggregate = scan_tile<O, T>(keys, key_bytes, from, vals, n, item);
  if (threadIdx.x == 0) aggregates[blockIdx.x] = aggregate;
}

// One block: carry[b] = the segmented inclusive scan of aggregates[0, b) (b >= 1; tile 0 needs
// none, since position 0 is a head). Chunks of kThreads aggregates, with a running carry.
template <int O, class T>
__device__ void combine_carry(const Pair<T>* aggregates, long long tiles, Pair<T>* carry) {
  using Scan = cub::BlockScan<Pair<T>, kThreads>;
  __shared__ typename Scan::TempStorage temp;
  PairOp<O, T> op;
  Pair<T> running{1, T()};
  for (long long start = 0; start < tiles; start += kThreads) {
    long long b = start + threadIdx.x;
    Pair<T> x = b < tiles ? aggregates[b] : Pair<T>{1, T()};
    Pair<T> inclusive, chunk;
    Scan(temp).InclusiveScan(x, inclusive, op, chunk);
    if (start > 0) inclusive = op(running, inclusive);
    if (b + 1 < tiles) carry[b + 1] = inclusive;
    running = start > 0 ? op(running, chunk) : chunk;
    __syncthreads();
  }
}

template <int O, class T>
__device__ void combine_apply(const void* keys, int key_bytes, const long long* from, const T* vals, long long n,
                              const Pair<T>* carry, const T* dest, T* out) {
  Pair<T> item[kItems];
  scan_tile<O, T>(keys, key_bytes, from, vals, n, item);
  long long first = static_cast<long long>(blockIdx.x) * kTile + static_cast<long long>(threadIdx.x) * kItems;
  for (int i = 0; i < kItems; ++i) {
    long long q = first + i;
    if (q >= n) break;
    long long k = key_at(keys, key_bytes, q);
    if (q + 1 < n && key_at(keys, key_bytes, q + 1) == k) continue;  // not the bin's last element
    T total = item[i].head ? item[i].value : reduce_op<O, T>(carry[blockIdx.x].value, item[i].value);
    out[k] = apply<O, T>(dest[k], total);
  }
}

}  // namespace

#define NDP_COMBINE(O, op, T, name)                                                                         \
  extern "C" __global__ void __launch_bounds__(kThreads) ndp_combine_tiles_##op##_##name(                   \
      const void* keys, int key_bytes, const long long* from, const T* vals, long long n, Pair<T>* aggregates) { \
    combine_tiles<O, T>(keys, key_bytes, from, vals, n, aggregates);                                        \
  }                                                                                                         \
  extern "C" __global__ void __launch_bounds__(kThreads)                                                    \
      ndp_combine_carry_##op##_##name(const Pair<T>* aggregates, long long tiles, Pair<T>* carry) {         \
    combine_carry<O, T>(aggregates, tiles, carry);                                                          \
  }                                                                                                         \
  extern "C" __global__ void __launch_bounds__(kThreads) ndp_combine_apply_##op##_##name(                   \
      const void* keys, int key_bytes, const long long* from, const T* vals, long long n, const Pair<T>* carry, \
      const T* dest, T* out) {                                                                              \
    combine_apply<O, T>(keys, key_bytes, from, vals, n, carry, dest, out);                                  \
  }

// Float + and * are not associative, and extensions.md §3 defines *_combine as the left fold in
// ascending source order: one thread per target folds its bin sequentially, starting from
// dest[k]. Exact; the price is a serial walk of each bin (a single hot target of m values costs
// m dependent additions on one thread).
template <int O, class T>
__device__ void combine_fold(const void* keys, int key_bytes, const long long* from, const T* vals, long long n,
                             const T* dest, T* out) {
  NDP_GRID_STRIDE(q, n) {
    long long k = key_at(keys, key_bytes, q);
    if (q > 0 && key_at(keys, key_bytes, q - 1) == k) continue;  // not the bin's first element
    T acc = dest[k];
    for (long long r = q; r < n && key_at(keys, key_bytes, r) == k; ++r) acc = apply<O, T>(acc, vals[from[r]]);
    out[k] = acc;
  }
}

#define NDP_COMBINE_FOLD(O, op, T, name)                                                                   \
  extern "C" __global__ void ndp_combine_fold_##op##_##name(const void* keys, int key_bytes, const long long* from, \
                                                            const T* vals, long long n, const T* dest, T* out) { \
    combine_fold<O, T>(keys, key_bytes, from, vals, n, dest, out);                                         \
  }
NDP_COMBINE_FOLD(kPlus, plus, double, f64)
NDP_COMBINE_FOLD(kMult, mult, double, f64)
NDP_COMBINE_FOLD(kPlus, plus, float, f32)
NDP_COMBINE_FOLD(kMult, mult, float, f32)

// The (operator, type) pairs the language defines (runtime/cpu/ops.h, supports()).
#define NDP_COMBINE_INTS(T, name)                                                                          \
  NDP_COMBINE(kPlus, plus, T, name) NDP_COMBINE(kMult, mult, T, name) NDP_COMBINE(kMax, max, T, name)     \
  NDP_COMBINE(kMin, min, T, name) NDP_COMBINE(kAnd, and, T, name) NDP_COMBINE(kOr, or, T, name)           \
  NDP_COMBINE(kXor, xor, T, name)
#define NDP_COMBINE_FLOATS(T, name)                                                                        \
  NDP_COMBINE(kPlus, plus, T, name) NDP_COMBINE(kMult, mult, T, name) NDP_COMBINE(kMax, max, T, name)     \
  NDP_COMBINE(kMin, min, T, name)
NDP_COMBINE_INTS(long long, i64)
NDP_COMBINE_INTS(int, i32)
NDP_COMBINE_FLOATS(double, f64)
NDP_COMBINE_FLOATS(float, f32)
NDP_COMBINE(kAnd, and, bool, bool)
NDP_COMBINE(kOr, or, bool, bool)
NDP_COMBINE(kXor, xor, bool, bool)
NDP_COMBINE(kMax, max, unsigned char, char)
NDP_COMBINE(kMin, min, unsigned char, char)

// Checks every index and makes the sort's input: keys[p] = idx[p] (32- or 64-bit), from[p] = p.
// An index outside [0, ndest) lowers slot 0 (common.cuh).
extern "C" __global__ void ndp_combine_keys(const long long* idx, long long n, long long ndest, int key_bytes, void* keys,
                                            long long* from, unsigned long long* fail) {
  NDP_GRID_STRIDE(p, n) {
    long long i = idx[p];
    if (i < 0 || i >= ndest) {
      report_failure(fail, p);
      i = 0;
    }
    if (key_bytes == 8) static_cast<unsigned long long*>(keys)[p] = static_cast<unsigned long long>(i);
    else static_cast<unsigned*>(keys)[p] = static_cast<unsigned>(i);
    from[p] = p;
  }
}

// One thread: rec = {NDP_INDEX_OUT_OF_BOUNDS, p, idx[p], ndest} for the lowest failing p, or
// {NDP_OK, -1, -1, -1}.
extern "C" __global__ void ndp_combine_record(const long long* idx, long long ndest, const unsigned long long* fail,
                                              long long* rec) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  if (*fail == kNoFailure) {
    rec[0] = 0;
    rec[1] = rec[2] = rec[3] = -1;
    return;
  }
  long long p = static_cast<long long>(*fail);
  rec[0] = 1;
  rec[1] = p;
  rec[2] = idx[p];
  rec[3] = ndest;
}

