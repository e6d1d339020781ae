// The consumer kernels (Note [Consumer kernels] in flatten/flat_ir.h) on the cuda backend: the
// GPU's reduction, scan and pack passes calling the generated element function
// (runtime/gpu/device/fused.cu), or, for small inputs and where those cannot be compiled, the
// kernel then the primitive.
#pragma once

#include <span>

#include "exec/cuda/device_vec.h"
#include "exec/cuda/gpu.h"
#include "exec/cuda/kernels.h"
#include "flatten/flat_ir.h"

namespace ndp::exec::cuda {

/// The consumer kernels (runtime/gpu/consumer_program.h) that consumer statement `s`, of result
/// type `result`, runs over one segment or over several: a reduction's or a scan's flat pass or
/// its tile pass, as seg_reduce_fused and seg_scan_fused choose; a pack's count and compaction.
runtime::gpu::ConsumerKernels consumer_kernels_of(const flatten::Stmt& s, const lang::Type* result, bool one_segment);

/// ReduceKernel and ScanKernel: `lengths` cut the kernel's values over `ins` into segments;
/// `result` is the statement's result type (the element type; [element type] for a scan).
DVec reduce_kernel(Gpu& g, GpuKernels& kernels, const flatten::Stmt& s, const DVec& lengths, std::span<const DVec> ins,
                   const lang::Type* result);
DVec scan_kernel(Gpu& g, GpuKernels& kernels, const flatten::Stmt& s, const DVec& lengths, std::span<const DVec> ins,
                 const lang::Type* result);

/// PackKernel: the instances of `values` whose computed flag is true.
DVec pack_kernel(Gpu& g, GpuKernels& kernels, const flatten::Stmt& s, const DVec& values, std::span<const DVec> ins,
                 lang::TypeContext& types);

}  // namespace ndp::exec::cuda
