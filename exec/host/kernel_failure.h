// Raising the error of a fused kernel that failed (Note [Kernels that can fail] in
// flatten/flat_ir.h), for both backends.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "flatten/flat_ir.h"
#include "lang/value.h"

namespace ndp::exec::host {

/// Raises the error that kernel `k`'s failure record `record` (flatten/kernel_abi.h) stands for:
/// evaluates the nodes up to the failed one at the failed instance, whose input values are
/// `inputs`, with the interpreter's primitives, which raise the interpreter's error at the
/// node's span. Where the host computes that instance without a failure (a math function whose
/// result differs in the last bits on the GPU), raises an internal error that says so.
[[noreturn]] void raise_kernel_failure(const flatten::KernelBody& k, uint64_t record, std::span<const lang::Value> inputs,
                                       std::span<const std::vector<lang::Value>> seqs = {});

/// Whether the host computes values of type t exactly as the device does (ints, bools, chars
/// and i32s; not floats, whose math functions may differ in the last bits).
bool computed_alike(const lang::Type* t);

/// The outputs of kernel `k` where every instance's inputs are `inputs` (Note [Known values] in
/// exec/cuda/device_vec.cpp): its nodes evaluated once with the interpreter's primitives. Only
/// for kernels of inputs, constants and primitives over ints, bools and chars (the host and the
/// device compute those alike); nothing where the kernel is another kind, or fails (its
/// instances then fail on the device, which reports the error as always).
std::optional<std::vector<lang::Value>> uniform_outputs(const flatten::KernelBody& k, std::span<const lang::Value> inputs);

/// The same for one elementwise primitive `prim` of int, bool, char or i32 arguments and
/// result (`k - 1` of a loop's known counter): its value, or nothing where it is not such a
/// primitive or raises an error.
std::optional<lang::Value> uniform_prim(lang::core::PrimId prim, const std::vector<const lang::Type*>* type_args,
                                       std::span<const lang::Value> args, const lang::Type* result);

}  // namespace ndp::exec::host
