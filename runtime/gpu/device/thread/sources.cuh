// Thread level: sources, where a pass's input elements come from. A source gives element i
// (`src(i)`); a batch source (kBatch, fused.cu's) gives a thread's items first + j·stride,
// j < count, in one call instead (`src.items(first, stride, count, out)`).
#pragma once

namespace ndp::runtime::gpu::device {

/// Element i of an array (the scan passes load it as 16-byte words where aligned).
template <class T>
struct ArrayIn {
  static constexpr bool kBatch = false;
  const T* p;
  __device__ __forceinline__ T operator()(long long i) const { return p[i]; }
};

/// Element i of an array, converted (flags read as counts).
template <class In, class Convert>
struct ConvertedIn {
  static constexpr bool kBatch = false;
  const In* p;
  Convert convert;
  __device__ __forceinline__ auto operator()(long long i) const { return convert(p[i]); }
};

/// A flags array as a source of bools.
struct FlagsIn {
  static constexpr bool kBatch = false;
  const unsigned char* p;
  __device__ __forceinline__ bool operator()(long long i) const { return p[i] != 0; }
};

/// The items j < N of this thread at first + j·stride that lie below end: how many there are.
__device__ __forceinline__ int items_below(long long first, long long stride, long long end, int n) {
  if (first >= end) return 0;
  long long c = (end - first + stride - 1) / stride;
  return c < n ? static_cast<int>(c) : n;
}

}  // namespace ndp::runtime::gpu::device
