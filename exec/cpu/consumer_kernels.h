// The consumer kernels (Note [Consumer kernels] in flatten/flat_ir.h) on the cpu backend: the
// runtime's reduction, scan and pack reading the fused map's values a window at a time.
#pragma once

#include <span>

#include "exec/host/vec.h"
#include "flatten/flat_ir.h"

namespace ndp::exec::cpu {

using namespace host;  // the cpu backend runs on the host vectors and primitives


/// ReduceKernel and ScanKernel: `lengths` cut the kernel's values over `ins` into segments;
/// `result` is the statement's result type (the element type; [element type] for a scan).
Vec reduce_kernel(const flatten::Stmt& s, const Vec& lengths, std::span<const Vec> ins, const lang::Type* result);
Vec scan_kernel(const flatten::Stmt& s, const Vec& lengths, std::span<const Vec> ins, const lang::Type* result);

/// PackKernel: the instances of `values` whose computed flag is true.
Vec pack_kernel(const flatten::Stmt& s, const Vec& values, std::span<const Vec> ins);

}  // namespace ndp::exec::cpu
