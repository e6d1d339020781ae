// One code generator for fused elementwise kernels (Note [Fused kernels] in flatten/flat_ir.h),
// two targets: host code through ORC LLJIT (codegen/cpu/kernel_jit.h) and PTX for sm_90.
#pragma once

#include <cstdint>
#include <span>
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

/// An input read through positions (Note [Fused gathers] in codegen/cuda/kernels.h): the
/// body's input number `input`, with positions that are int64, or i32 where `narrow` (i32
/// indices widened by i64(), read as they are stored: 4 bytes a position instead of 8, Note
/// [Narrow gather positions] in codegen/cuda/dvec.h).
struct GatheredInput {
  uint32_t input = 0;
  bool narrow = false;
};

/// PTX text (target nvptx64-nvidia-cuda, sm_90) of an entry `ndp_kernel(i64 n, ptr in_0, ...,
/// ptr out_0, ...)` where thread %tid.x of block %ctaid.x computes the instances
/// %ctaid.x·%ntid.x·kPtxInstancesPerThread + %tid.x + u·%ntid.x for u < kPtxInstancesPerThread
/// (those below n): launch ceil(n / kPtxInstancesPerThread) threads.
/// Throws std::runtime_error when LLVM fails.
///
/// `gathered` lists inputs read through positions (Note [Fused gathers] in
/// codegen/cuda/kernels.h): instance i reads element idx_g[i] of input gathered[g].input instead
/// of element i, where idx_g (int64, or i32 where narrow; in range) is passed after the body's
/// inputs, in order (before the outputs).
std::string compile_ptx(const flat::KernelBody& k, std::span<const GatheredInput> gathered = {});

/// The consumer kernels' batch of elements (runtime/gpu/device/fused.cu): 64 bytes, holding
/// element_items(bytes) values of `bytes` bytes each as an array (the items a thread of a
/// scan or reduction pass holds: 8 of 8 bytes, 16 of 4 bytes, 16 of one byte).
inline constexpr unsigned kElementWords = 8;
inline constexpr int element_items(int bytes) { return bytes >= 4 ? 64 / bytes : 16; }

/// PTX text (sm_90) of the device function `ndp_elements(i64 first, i64 stride, i32 count, ptr
/// ins) -> {[8 x i64]}` that the consumer kernels call: output 0 of `k` (its only output) for
/// the instances first + j·stride, j < count (at most element_items), reading input q at
/// ins[q][i]; the values as an array of their storage type in the 64 result bytes (bool: 0/1).
/// One call computes a thread's whole share of a tile, so its loads are in flight together.
/// `gathered` as compile_ptx's, with positions that may be out of range: for gathered input
/// g (ng of them), the position array is ins[#inputs + g] and its bound (an integer, above 0)
/// ins[#inputs + ng + g]; a position outside [0, bound) reads element 0 instead and sets the
/// 8-byte word g of the flags array ins[#inputs + 2·ng] to 1, which the caller reads after the
/// kernel (Note [Checked gathers] in codegen/cuda/dvec.h).
std::string compile_element_ptx(const flat::KernelBody& k, std::span<const GatheredInput> gathered = {});

/// A key suffix naming `gathered`, for the caches of kernels compiled with it (empty when none).
std::string gathered_key(std::span<const GatheredInput> gathered);

}  // namespace ndp::codegen
