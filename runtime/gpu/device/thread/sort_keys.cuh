// Thread level: the radix sort's keys. Order-preserving unsigned keys of the element types and
// back, where a pass's keys come from and go to (values converted, or keys as they are), and the
// digit of a key (Note [GPU radix sort] in sort.cu).
#pragma once

#include <cuda/std/type_traits>

namespace ndp::runtime::gpu::device {

__device__ inline unsigned sort_key(unsigned char x) { return x; }
__device__ inline unsigned sort_key(int x) { return static_cast<unsigned>(x) ^ 0x80000000u; }
__device__ inline unsigned long long sort_key(long long x) { return static_cast<unsigned long long>(x) ^ (1ull << 63); }
// Floats: every NaN above +inf (all ones), -0.0 as 0.0; negatives order backwards in their
// bits (flip them all), positives get the sign bit set.
__device__ inline unsigned sort_key(float x) {
  if (x != x) return ~0u;
  if (x == 0.0f) x = 0.0f;
  unsigned bits = __float_as_uint(x);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}
__device__ inline unsigned long long sort_key(double x) {
  if (x != x) return ~0ull;
  if (x == 0.0) x = 0.0;
  unsigned long long bits = static_cast<unsigned long long>(__double_as_longlong(x));
  return (bits & (1ull << 63)) ? ~bits : (bits | (1ull << 63));
}

/// Whether sort_key loses information on x: a NaN (all NaNs share a key) or -0.0 (the key of
/// 0.0). Values with none of them are sorted as keys alone and decoded from them.
template <class T>
__device__ inline bool key_collapses(T x) {
  if constexpr (cuda::std::is_floating_point_v<T>) return x != x || (x == T(0) && signbit(x));
  else return false;
}

/// The value whose sort_key is k (x without key_collapses).
template <class T, class K>
__device__ inline T from_sort_key(K k) {
  if constexpr (cuda::std::is_same_v<T, unsigned char>) return static_cast<unsigned char>(k);
  else if constexpr (cuda::std::is_same_v<T, int>) return static_cast<int>(k ^ 0x80000000u);
  else if constexpr (cuda::std::is_same_v<T, long long>) return static_cast<long long>(k ^ (1ull << 63));
  else if constexpr (cuda::std::is_same_v<T, float>) return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
  else return __longlong_as_double(static_cast<long long>((k & (1ull << 63)) ? (k & ~(1ull << 63)) : ~k));
}

/// The key type of an element type: 32 bits for char and 4-byte types, 64 for 8-byte ones.
template <class T>
using KeyOf = cuda::std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned>;

/// Where a pass's keys come from: values converted (sort_key(v[i]) ^ flip) or keys as they are.
/// A load is split in two, raw(i) then key(raw), so that a thread issues all its loads before it
/// converts any (one load in flight at a time leaves the passes latency-bound).
template <class T>
struct ValuesAsKeys {
  using K = KeyOf<T>;
  using Raw = T;
  const T* v;
  K flip;
  __device__ T raw(long long i) const { return v[i]; }
  __device__ K key(T x) const { return sort_key(x) ^ flip; }
  __device__ static bool collapses(T x) { return key_collapses(x); }
};
template <class K>
struct KeysIn {
  using Raw = K;
  const K* k;
  __device__ K raw(long long i) const { return k[i]; }
  __device__ K key(K x) const { return x; }
  __device__ static bool collapses(K) { return false; }
};

/// Where a pass's keys go: decoded to values, or as they are.
template <class T>
struct KeysAsValues {
  using K = KeyOf<T>;
  T* v;
  K flip;
  __device__ void operator()(long long i, K k) const { v[i] = from_sort_key<T>(k ^ flip); }
};
template <class K>
struct KeysOut {
  K* k;
  __device__ void operator()(long long i, K key) const { k[i] = key; }
};

/// The digit of a key at `shift` (cub's digit extractor interface).
template <class K>
struct DigitAt {
  int shift;
  __device__ __forceinline__ unsigned Digit(K key) const { return static_cast<unsigned>(key >> shift) & 255u; }
};

}  // namespace ndp::runtime::gpu::device
