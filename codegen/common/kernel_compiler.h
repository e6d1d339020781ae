// One code generator for fused elementwise kernels (Note [Fused kernels] in flatten/flat_ir.h),
// two targets: host code through ORC LLJIT (codegen/cpu/kernel_jit.h) and PTX for sm_90.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "codegen/common/kernel_abi.h"
#include "flatten/flat_ir.h"

namespace ndp::codegen {

/// Compiles kernel bodies to callable host code.
class KernelCompiler {
 public:
  virtual ~KernelCompiler() = default;
  /// The compiled kernel (HostKernelFn convention), valid for the compiler's lifetime; throws
  /// std::runtime_error when LLVM fails.
  virtual HostKernelFn compile(const flat::KernelBody& k) = 0;
};

/// A hash of a kernel key that is the same in every build and process (FNV-1a; std::hash is
/// not), naming the kernel's files in caches and checks.
inline uint64_t stable_hash(std::string_view key) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  return h;
}

/// stable_hash as 16 hex digits.
inline std::string stable_hash_hex(std::string_view key) {
  static const char* digits = "0123456789abcdef";
  uint64_t h = stable_hash(key);
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) s[static_cast<size_t>(i)] = digits[h & 15];
  return s;
}

/// Instances each thread of a PTX kernel computes.
inline constexpr int kPtxInstancesPerThread = 4;

/// PTX text (target nvptx64-nvidia-cuda, sm_90) of an entry `ndp_kernel(i64 n, ptr in_0, ...,
/// ptr out_0, ...)` where thread %tid.x of block %ctaid.x computes the instances
/// %ctaid.x·%ntid.x·kPtxInstancesPerThread + %tid.x + u·%ntid.x for u < kPtxInstancesPerThread
/// (those below n): launch ceil(n / kPtxInstancesPerThread) threads.
/// Throws std::runtime_error when LLVM fails.
std::string compile_ptx(const flat::KernelBody& k);

/// PTX text (sm_90) of the device function `ndp_element(i64 i, ptr ins) -> i64` that the
/// consumer kernels call (runtime/gpu/device/fused.cu): output 0 of `k` (its only output) for
/// instance i, reading input j at ins[j][i]; the value's bits in the low bytes (bool: 0/1).
std::string compile_element_ptx(const flat::KernelBody& k);

}  // namespace ndp::codegen
