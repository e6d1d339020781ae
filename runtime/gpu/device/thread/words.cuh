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

/// to[q] = from[p] for elements of `bytes` bytes (8, 4 or 1) at raw addresses: one element of a
/// part of the batched moves (gather_many, append_many), whose parts differ in element size.
__device__ __forceinline__ void move_element(int bytes, unsigned long long to, long long q, unsigned long long from,
                                             long long p) {
  switch (bytes) {
    case 8: reinterpret_cast<unsigned long long*>(to)[q] = reinterpret_cast<const unsigned long long*>(from)[p]; break;
    case 4: reinterpret_cast<unsigned int*>(to)[q] = reinterpret_cast<const unsigned int*>(from)[p]; break;
    default: reinterpret_cast<unsigned char*>(to)[q] = reinterpret_cast<const unsigned char*>(from)[p]; break;
  }
}

/// Bit i set where flags[first + i] is nonzero (first + i < n), i < 16: one 16-byte load where
/// the 16 flags are all before n (`whole`) and the array aligned.
__device__ __forceinline__ unsigned flag_mask16(const unsigned char* flags, long long first, long long n, bool whole) {
  unsigned mask = 0;
  if (whole && aligned16(flags)) {
    const uint4 w = *reinterpret_cast<const uint4*>(flags + first);
    const unsigned words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int k = 0; k < 4; ++k)
#pragma unroll
      for (int b = 0; b < 4; ++b) mask |= ((words[k] >> (8 * b)) & 0xffu) != 0 ? 1u << (4 * k + b) : 0u;
  } else {
#pragma unroll
    for (int i = 0; i < 16; ++i) mask |= first + i < n && flags[first + i] != 0 ? 1u << i : 0u;
  }
  return mask;
}

}  // namespace ndp::runtime::gpu::device
