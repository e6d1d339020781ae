// Thread level: values moved as raw words. A value's bits as one 64-bit word (what shuffles and
// the look-back records carry), and 16-byte words: the widest load and store a thread issues,
// which the passes use wherever an array is aligned.
#pragma once

namespace ndp::runtime::gpu::device {

template <class T>
__device__ __forceinline__ unsigned long long to_bits(T v) {
  unsigned long long u = 0;
  memcpy(&u, &v, sizeof(T));
  return u;
}

template <class T>
__device__ __forceinline__ T from_bits(unsigned long long u) {
  T v;
  memcpy(&v, &u, sizeof(T));
  return v;
}

/// Elements per 16-byte word.
template <class T>
inline constexpr int kVec = 16 / static_cast<int>(sizeof(T));

/// The kVec<T> elements of a 16-byte word.
template <class T>
struct Word {
  T e[kVec<T>];
};

template <class T>
__device__ __forceinline__ Word<T> load_word(const T* p) {
  uint4 u = *reinterpret_cast<const uint4*>(p);
  Word<T> w;
  memcpy(&w, &u, sizeof u);
  return w;
}

template <class T>
__device__ __forceinline__ void store_word(T* p, const Word<T>& w) {
  uint4 u;
  memcpy(&u, &w, sizeof u);
  *reinterpret_cast<uint4*>(p) = u;
}

__device__ __forceinline__ bool aligned16(const void* p) { return (reinterpret_cast<unsigned long long>(p) & 15) == 0; }

/// The part of a flat array that 16-byte words cover: elements [head, head + words·kVec<T>).
struct AlignedSpan {
  long long head, words;
};

template <class T>
__device__ AlignedSpan aligned_span(const T* p, long long n) {
  long long past = static_cast<long long>((reinterpret_cast<unsigned long long>(p) & 15) / sizeof(T));
  long long head = past == 0 ? 0 : kVec<T> - past;
  if (head > n) head = n;
  return AlignedSpan{head, (n - head) / kVec<T>};
}

}  // namespace ndp::runtime::gpu::device
