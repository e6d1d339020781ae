// The lifted primitives of the cuda backend (Note [Lifted primitives] in exec/host/
// lifted_prims.h for the contract).
//
// Note [GPU lifted primitives]
// * Native: the sequence primitives that the flattened programs spend their time in (scans,
//   reductions, dist, index, element access, rep, ->, <-, put, permute, join, pack, ++,
//   partition, flatten, rank, *_combine, eql of sequences) run on the GPU primitives
//   (runtime/gpu) with the data
//   left on the device; elementwise primitives that the kernel generator handles (those that
//   can fail too) run as one-node kernels (kernels.h).
// * Errors: the device checks every input (bounds, lengths, permutations). When a check
//   fails the arguments go to the host and the cpu backend's primitive runs on them, which
//   raises exactly the interpreter's message (the first failing instance decides), so every
//   backend reports the same error without the device code knowing any message text.
// * Everything else (string and I/O primitives, rand, eql and hash of structured values, rep,
//   <- and put of structured elements) moves its arguments to the host, runs the cpu
//   backend's lifted primitive and moves the result back:
//   correct for every primitive, and counted (`host_fallbacks`) so that NDP_DEBUG=1 can say
//   where a program leaves the device. With NDP_HOST_FALLBACK=error such a primitive is
//   instead the runtime error "cuda: NAME ran on the host (NDP_HOST_FALLBACK=error)." at its
//   statement, except I/O and the string primitives (@, ||, exp_string), which belong on the
//   host: it finds what still leaves the device.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "exec/host/lifted_prims.h"
#include "exec/cuda/gpu.h"
#include "exec/cuda/kernels.h"

namespace ndp::exec::cuda {

struct GpuPrimContext {
  Gpu* gpu = nullptr;
  GpuKernels* kernels = nullptr;
  host::PrimContext host;  // types, streams, rand, output: shared with the host fallback
  int64_t* host_fallbacks = nullptr;
  /// Whether a primitive called at this place reads its failure later (Note [Deferred failure
  /// records] in gpu.h): outside the library, as the executor's kernels do.
  std::function<bool(lang::Span)> defers_failures;
  /// The one-node kernels of such primitives, one a call site and kernel, kept while the
  /// program runs: a deferred record evaluates its kernel again when it reads a failure.
  mutable std::map<std::string, std::unique_ptr<const flatten::KernelBody>> deferred_bodies;
};

DVec apply_lifted_prim(const GpuPrimContext& ctx, const host::LiftedCall& c, std::span<const DVec> args);
/// The C runtime operator of a scan, reduction or combine primitive: host::scan_op's, since
/// runtime::Op shares ndp_op's values.
ndp_op op_of(lang::core::PrimId id);
/// The cpu backend's primitive on host copies of the arguments (`before_instance` as
/// host::apply_fallback_prim's; when given, the interpreter's per-instance primitive runs): a
/// host fallback (Note [GPU lifted primitives]), counted, or refused with NDP_HOST_FALLBACK=error.
DVec host_prim(const GpuPrimContext& ctx, const host::LiftedCall& c, std::span<const DVec> args,
               const std::function<void(int64_t)>& before_instance = {});

}  // namespace ndp::exec::cuda
