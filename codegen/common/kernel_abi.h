// The calling convention of compiled elementwise kernels (Note [Fused kernels] in
// flatten/flat_ir.h), shared by the code generators and the executors that call them.
#pragma once

#include <cstdint>

namespace ndp::codegen {

/// Computes instances [begin, end) of a kernel: ins[j] and outs[k] point at element 0 of input
/// j and output k, stored as Note [Vec representation] says (bool: one byte 0/1, char: uint8,
/// int: int64, i32: int32, float: double, f32: float).
using HostKernelFn = void (*)(int64_t begin, int64_t end, const void* const* ins, void* const* outs);

}  // namespace ndp::codegen
