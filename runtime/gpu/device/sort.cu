// RANK and SORT (Note [Sort order] in runtime/cpu/primitives.h), and the stable LSD radix sort
// of keys, or of (key, int64 payload) pairs, that they and combine share (Note [GPU radix
// sort]): the device-wide passes over tile/radix_upsweep.cuh and tile/onesweep.cuh.
//
// Note [GPU radix sort]
// A sort by b-byte keys is one upsweep and then one pass per 8-bit digit that varies:
//  * Upsweep: one read of the input counts the digits of every byte position at once
//    (hist[byte][digit]); a small kernel turns each row into where each digit's run starts
//    (digit_start). The host reads the counts back and skips the bytes with one digit only.
//  * One-sweep pass (Adinets & Merrill, "Onesweep: A Faster Least Significant Digit Radix Sort
//    for GPUs", 2022): a block takes a tile of kSortTile elements by ticket, ranks its keys by
//    the digit (cub's BlockRadixRankMatchEarlyCounts: stable in the warp-striped arrangement the
//    keys are loaded in), and publishes its digit counts as soon as it has them. Then thread d
//    looks back over the earlier tiles' counts of digit d, as a scan's decoupled look-back does
//    (tile/look_back.cuh), until a tile holding an inclusive count, and publishes its own. An
//    element of digit d at position r of the ranked tile goes to
//        digit_start[d] + (elements of digit d in earlier tiles) + (r - the run of d's start).
//    The keys (and payloads) are exchanged through shared memory in ranked order first, so that
//    a warp writes runs of consecutive addresses.
//  Each pass reads and writes every key once (and payload); the look-back words are the only
//  other traffic. A status and a count share one look-back word, so one load reads both; a
//  32-bit word (2 status bits, 30 count bits) serves every n < 2^30, a 64-bit word the rest.
//  Tickets order the tiles, so a block only waits for tiles that running blocks hold and that
//  publish their counts without waiting: no deadlock.
// Equal keys keep their order in every pass (ranking is stable, tiles are taken in order), so
// the sort is stable. Keys-only sorts convert values to keys on the first pass's load and back
// on the last pass's store, so no pass of their own does either.
#include "common.cuh"
#include "tile/onesweep.cuh"
#include "tile/radix_upsweep.cuh"

using namespace ndp::runtime::gpu::device;

// Keys and positions for a sort of pairs, per element type (char and 4-byte types use 32-bit
// keys, 8-byte types 64): keys[p] = the order-preserving key of v[p] ^ flip (flip reverses the
// order for descending sorts), payload[p] = p.
#define NDP_SORT_KEYS(T, name, K)                                                                               \
  extern "C" __global__ void ndp_sort_keys_##name(const T* v, long long n, K flip, K* keys, long long* payload) { \
    NDP_GRID_STRIDE(p, n) {                                                                                     \
      keys[p] = sort_key(v[p]) ^ flip;                                                                          \
      payload[p] = p;                                                                                           \
    }                                                                                                           \
  }
NDP_SORT_KEYS(long long, i64, unsigned long long)
NDP_SORT_KEYS(double, f64, unsigned long long)
NDP_SORT_KEYS(int, i32, unsigned)
NDP_SORT_KEYS(float, f32, unsigned)
NDP_SORT_KEYS(unsigned char, char, unsigned)

// The upsweep: digit counts of every byte position of the keys of values (and whether a key
// collapses), or of keys.
#define NDP_UPSWEEP_VALUES(T, name)                                                                        \
  extern "C" __global__ void __launch_bounds__(256) ndp_radix_upsweep_##name(                               \
      const T* v, long long n, KeyOf<T> flip, unsigned long long* hist, unsigned* collapsed) {             \
    radix_upsweep(ValuesAsKeys<T>{v, flip}, n, hist, collapsed);                                           \
  }
NDP_UPSWEEP_VALUES(long long, i64)
NDP_UPSWEEP_VALUES(double, f64)
NDP_UPSWEEP_VALUES(int, i32)
NDP_UPSWEEP_VALUES(float, f32)
NDP_UPSWEEP_VALUES(unsigned char, char)

#define NDP_UPSWEEP_KEYS(K, kname)                                                                          \
  extern "C" __global__ void __launch_bounds__(256)                                                         \
      ndp_radix_upsweep_##kname(const K* k, long long n, unsigned long long* hist, unsigned* collapsed) {   \
    radix_upsweep(KeysIn<K>{k}, n, hist, collapsed);                                                        \
  }                                                                                                         \
  /* keys[q] = the segment of element payload[q]: the major key of a segmented sort. */                   \
  extern "C" __global__ void ndp_sort_segment_keys_##kname(const long long* payload, long long n, Segs s,    \
                                                           K* keys) {                                        \
    NDP_GRID_STRIDE(q, n) keys[q] = static_cast<K>(s.segment_of(payload[q]));                                \
  }
NDP_UPSWEEP_KEYS(unsigned, u32)
NDP_UPSWEEP_KEYS(unsigned long long, u64)

extern "C" __global__ void __launch_bounds__(256) ndp_radix_digit_starts(const unsigned long long* hist,
                                                                         long long* digit_start) {
  radix_digit_starts(hist, digit_start);
}

// One-sweep passes of keys alone (look-back words of 32 bits: n < 2^30), named
// ndp_onesweep_<type>_<from><to>, from and to each v (values, converted) or k (keys).
#define NDP_ONESWEEP_KEYS(T, name, from, to, load, store)                                                 \
  extern "C" __global__ void __launch_bounds__(kSortThreads) ndp_onesweep_##name##_##from##to(                 \
      const void* in, void* out, long long n, int shift, KeyOf<T> flip, const long long* digit_start,          \
      unsigned* lookback, unsigned long long* ticket) {                                                       \
    onesweep_pass<KeyOf<T>, unsigned, false>(load, store, nullptr, nullptr, n, shift, digit_start, lookback,  \
                                             ticket);                                                         \
  }
#define NDP_ONESWEEP_VALUES(T, name)                                                                        \
  NDP_ONESWEEP_KEYS(T, name, v, v, (ValuesAsKeys<T>{static_cast<const T*>(in), flip}),                       \
                    (KeysAsValues<T>{static_cast<T*>(out), flip}))                                          \
  NDP_ONESWEEP_KEYS(T, name, v, k, (ValuesAsKeys<T>{static_cast<const T*>(in), flip}),                       \
                    (KeysOut<KeyOf<T>>{static_cast<KeyOf<T>*>(out)}))                                       \
  NDP_ONESWEEP_KEYS(T, name, k, v, (KeysIn<KeyOf<T>>{static_cast<const KeyOf<T>*>(in)}),                     \
                    (KeysAsValues<T>{static_cast<T*>(out), flip}))                                          \
  NDP_ONESWEEP_KEYS(T, name, k, k, (KeysIn<KeyOf<T>>{static_cast<const KeyOf<T>*>(in)}),                     \
                    (KeysOut<KeyOf<T>>{static_cast<KeyOf<T>*>(out)}))
NDP_ONESWEEP_VALUES(long long, i64)
NDP_ONESWEEP_VALUES(double, f64)
NDP_ONESWEEP_VALUES(int, i32)
NDP_ONESWEEP_VALUES(float, f32)
NDP_ONESWEEP_VALUES(unsigned char, char)

// One-sweep passes of (key, payload) pairs, ndp_onesweep_pairs_<key>_<look-back word bits>.
#define NDP_ONESWEEP_PAIRS(K, kname, W, wbits)                                                             \
  extern "C" __global__ void __launch_bounds__(kSortThreads) ndp_onesweep_pairs_##kname##_##wbits(            \
      const K* keys_in, const long long* payload_in, K* keys_out, long long* payload_out, long long n,         \
      int shift, const long long* digit_start, W* lookback, unsigned long long* ticket) {                     \
    onesweep_pass<K, W, true>(KeysIn<K>{keys_in}, KeysOut<K>{keys_out}, payload_in, payload_out, n, shift,     \
                              digit_start, lookback, ticket);                                                 \
  }
NDP_ONESWEEP_PAIRS(unsigned, u32, unsigned, w32)
NDP_ONESWEEP_PAIRS(unsigned, u32, unsigned long long, w64)
NDP_ONESWEEP_PAIRS(unsigned long long, u64, unsigned, w32)
NDP_ONESWEEP_PAIRS(unsigned long long, u64, unsigned long long, w64)

// RANK's result: the element at sorted position q came from payload[q] and lands at position q
// of the sorted array, i.e. at q - begin(its segment) within the segment.
extern "C" __global__ void ndp_rank_positions(const long long* payload, Segs s, long long* out) {
  NDP_GRID_STRIDE(q, s.total) out[payload[q]] = q - s.begin(s.segment_of(q));
}
