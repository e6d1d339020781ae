// hash of any value on the device, as lang/eval/prims_seq.cpp's hash_value computes it: flat
// scalars mixed with a tag of their kind, pairs and datatypes from their parts' hashes, and a
// sequence as a fold of its elements' hashes in order (one thread a sequence: the fold is
// sequential by definition).
#include "thread/mix.cuh"
#include "thread/words.cuh"
#include "common.cuh"

using namespace ndp::runtime::gpu::device;

namespace {

__device__ unsigned long long scalar_bits(long long x) { return static_cast<unsigned long long>(x); }
__device__ unsigned long long scalar_bits(int x) { return static_cast<unsigned long long>(static_cast<long long>(x)); }
__device__ unsigned long long scalar_bits(bool x) { return x ? 0x11 : 0x10; }
__device__ unsigned long long scalar_bits(unsigned char x) { return 0x200ull + x; }
__device__ unsigned long long scalar_bits(double x) {
  return to_bits(x == 0.0 ? 0.0 : x) ^ 0x1;  // eql(0.0, -0.0): they hash alike
}
__device__ unsigned long long scalar_bits(float x) {
  return (to_bits(x == 0.0f ? 0.0f : x) & 0xFFFFFFFFull) ^ 0x3;
}

}  // namespace

#define NDP_HASH_SCALAR(T, name)                                                                              \
  extern "C" __global__ void ndp_hash_scalar_##name(const T* v, long long n, unsigned long long* out) {      \
    NDP_GRID_STRIDE(i, n) out[i] = mix64(scalar_bits(v[i]));                                                  \
  }
NDP_FOR_ELEMS(NDP_HASH_SCALAR)

extern "C" __global__ void ndp_hash_pair(const unsigned long long* a, const unsigned long long* b, long long n,
                                         unsigned long long* out) {
  NDP_GRID_STRIDE(i, n) out[i] = mix64(a[i] * 31 ^ b[i]);
}

extern "C" __global__ void ndp_hash_data(const unsigned long long* fields, long long n, unsigned long long id,
                                         unsigned long long* out) {
  NDP_GRID_STRIDE(i, n) out[i] = mix64(fields[i] ^ id);
}

extern "C" __global__ void ndp_hash_fold(const unsigned long long* elems, Segs s, unsigned long long* out) {
  NDP_GRID_STRIDE(k, s.count) {
    long long b = s.begin(k), e = s.end(k);
    unsigned long long acc = mix64(static_cast<unsigned long long>(e - b) ^ 0x5);
    for (long long p = b; p < e; ++p) acc = mix64(acc ^ elems[p]);
    out[k] = acc;
  }
}

// hash(x, l) from x's hash h: h rem l (unsigned); a modulus below 1 fails.
extern "C" __global__ void ndp_hash_modulo(const unsigned long long* h, const long long* l, long long n, long long* out,
                                           unsigned long long* first_failure) {
  NDP_GRID_STRIDE(i, n) {
    if (l[i] < 1) {
      report_failure(first_failure, i);
      out[i] = 0;
    } else {
      out[i] = static_cast<long long>(h[i] % static_cast<unsigned long long>(l[i]));
    }
  }
}
