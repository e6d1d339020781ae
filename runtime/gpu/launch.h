// Host-side helpers of the primitive dispatchers: kernel names per element type, and launching
// a kernel by name over a grid-stride shape in one call.
#pragma once

#include <string>

#include "runtime/gpu/primitives.h"

namespace ndp::rt::gpu {

/// The kernel-name suffix of an element type (NDP_FOR_ELEMS in device/common.cuh).
inline const char* elem_suffix(ndp_elem_type t) {
  switch (t) {
    case NDP_I64: return "i64";
    case NDP_F64: return "f64";
    case NDP_I32: return "i32";
    case NDP_F32: return "f32";
    case NDP_BOOL: return "bool";
    case NDP_CHAR: return "char";
  }
  return "?";
}

/// The op-name part of scan/reduce/combine kernel names.
inline const char* op_name(ndp_op op) {
  switch (op) {
    case NDP_OP_PLUS: return "plus";
    case NDP_OP_MULT: return "mult";
    case NDP_OP_MAX: return "max";
    case NDP_OP_MIN: return "min";
    case NDP_OP_AND: return "and";
    case NDP_OP_OR: return "or";
    case NDP_OP_XOR: return "xor";
  }
  return "?";
}

/// Launches kernel `name` with a grid-stride shape for `n` work items (nothing for n == 0).
/// Arguments are passed by value with the exact types the kernel declares (device pointers as
/// CUdeviceptr, DSegs as the kernel's Segs).
template <class... Args>
Status launch_named(Primitives& p, const std::string& name, int64_t n, Args... args) {
  if (n <= 0) return Status();
  Result<cuda::Kernel> k = p.kernel(name);
  if (!k.ok()) return k.status();
  return cuda::launch_with(p.device(), k.value(), p.device().grid_stride(n), args...);
}

}  // namespace ndp::rt::gpu
