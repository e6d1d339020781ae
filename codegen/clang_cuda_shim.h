// What CUDA's headers give device code, for clang compiling without them (-nocudainc): clang 19
// does not read CUDA 13's headers. Only what codegen/partition_engine.cu uses.
#pragma once

#define __CUDACC__ 1
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __host__ __attribute__((host))
#define __forceinline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

#include <__clang_cuda_builtin_vars.h>

// __syncthreads is one of clang's NVPTX builtins.
__device__ inline int __shfl_up_sync(unsigned mask, int v, unsigned d) { return __nvvm_shfl_sync_up_i32(mask, v, d, 0); }
__device__ inline long long __shfl_up_sync(unsigned mask, long long v, unsigned d) {
  const int lo = __nvvm_shfl_sync_up_i32(mask, static_cast<int>(v), d, 0);
  const int hi = __nvvm_shfl_sync_up_i32(mask, static_cast<int>(v >> 32), d, 0);
  return static_cast<long long>((static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) | static_cast<unsigned>(lo));
}
__device__ inline long __shfl_up_sync(unsigned mask, long v, unsigned d) {
  return static_cast<long>(__shfl_up_sync(mask, static_cast<long long>(v), d));
}
__device__ inline int atomicExch(int* p, int v) { return __nvvm_atom_xchg_gen_i(p, v); }
__device__ inline unsigned long long atomicMin(unsigned long long* p, unsigned long long v) {
  return __nvvm_atom_min_gen_ull(p, v);
}
__device__ inline double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
__device__ inline long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
