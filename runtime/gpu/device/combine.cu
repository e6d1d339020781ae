// *_combine (extensions.md §3): out[k] = dest[k] ⊕ vals[i1] ⊕ vals[i2] ⊕ … over every i with
// idx[i] == k, in ascending i; deterministic.
//
// Note [GPU combine]
// The host stably sorts the positions by target (the radix sort of device/sort.cu), so the
// contributions to each target form a run ("bin") in ascending source order. A segmented
// reduction then folds every bin at any bin shape (one hot target, a million tiny ones), in a
// fixed order, so the result does not depend on scheduling:
//  1. ndp_combine_tiles_*: each tile of kCombineTile sorted positions runs a segmented
//     inclusive scan (pairs (head, value): a head starts a bin) and stores its aggregate;
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
//
// The passes are tile/combine.cuh's, their operators thread/combine_bins.cuh's.
#include "tile/combine.cuh"

using namespace ndp::runtime::gpu::device;

#define NDP_COMBINE(O, op, T, name)                                                                          \
  extern "C" __global__ void __launch_bounds__(kCombineThreads)                                              \
      ndp_combine_tiles_##op##_##name(const void* keys, int key_bytes, const long long* from, const T* vals, \
                                      long long n, BinPair<T>* aggregates) {                                 \
    combine_tiles<O, T>(keys, key_bytes, from, vals, n, aggregates);                                         \
  }                                                                                                          \
  extern "C" __global__ void __launch_bounds__(kCombineThreads)                                              \
      ndp_combine_carry_##op##_##name(const BinPair<T>* aggregates, long long tiles, BinPair<T>* carry) {    \
    combine_carry<O, T>(aggregates, tiles, carry);                                                           \
  }                                                                                                          \
  extern "C" __global__ void __launch_bounds__(kCombineThreads)                                              \
      ndp_combine_apply_##op##_##name(const void* keys, int key_bytes, const long long* from, const T* vals, \
                                      long long n, const BinPair<T>* carry, const T* dest, T* out) {         \
    combine_apply<O, T>(keys, key_bytes, from, vals, n, carry, dest, out);                                   \
  }

// Float + and * fold each bin sequentially (combine_fold: extensions.md §3's left fold, exact).
#define NDP_COMBINE_FOLD(O, op, T, name)                                                                   \
  extern "C" __global__ void ndp_combine_fold_##op##_##name(const void* keys, int key_bytes, const long long* from, \
                                                            const T* vals, long long n, const T* dest, T* out) { \
    combine_fold<O, T>(keys, key_bytes, from, vals, n, dest, out);                                         \
  }
NDP_COMBINE_FOLD(Op::plus, plus, double, f64)
NDP_COMBINE_FOLD(Op::mult, mult, double, f64)
NDP_COMBINE_FOLD(Op::plus, plus, float, f32)
NDP_COMBINE_FOLD(Op::mult, mult, float, f32)

// The (operator, type) pairs the language defines (runtime/cpu/ops.h, supports()).
#define NDP_COMBINE_INTS(T, name)                                                                          \
  NDP_COMBINE(Op::plus, plus, T, name) NDP_COMBINE(Op::mult, mult, T, name)                                \
  NDP_COMBINE(Op::max, max, T, name) NDP_COMBINE(Op::min, min, T, name)                                    \
  NDP_COMBINE(Op::and_, and, T, name) NDP_COMBINE(Op::or_, or, T, name) NDP_COMBINE(Op::xor_, xor, T, name)
#define NDP_COMBINE_FLOATS(T, name)                                                                        \
  NDP_COMBINE(Op::plus, plus, T, name) NDP_COMBINE(Op::mult, mult, T, name)                                \
  NDP_COMBINE(Op::max, max, T, name) NDP_COMBINE(Op::min, min, T, name)
NDP_COMBINE_INTS(long long, i64)
NDP_COMBINE_INTS(int, i32)
NDP_COMBINE_FLOATS(double, f64)
NDP_COMBINE_FLOATS(float, f32)
NDP_COMBINE(Op::and_, and, bool, bool)
NDP_COMBINE(Op::or_, or, bool, bool)
NDP_COMBINE(Op::xor_, xor, bool, bool)
NDP_COMBINE(Op::max, max, unsigned char, char)
NDP_COMBINE(Op::min, min, unsigned char, char)

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

