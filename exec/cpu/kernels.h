// Running Kernel statements (Note [Fused kernels] in flatten/flat_ir.h) on the cpu backend.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "flatten/kernel_abi.h"
#include "exec/host/parallel_loops.h"
#include "exec/host/vec.h"
#include "flatten/flat_ir.h"

namespace ndp::exec::cpu {

using namespace host;  // the cpu backend runs on the host vectors and primitives


/// The kernel's outputs (of types `out_types`) over the n instances of `ins` (flat scalar Vecs
/// of the input types, all of one length). Uses compiled code (codegen/kernel_jit.h) when
/// n is large enough to repay compiling and compilation succeeds; else `interpret_kernel`.
/// `seqs`: the rows of each sequence a loop kernel reads (Note [Sequences in loop kernels]);
/// the rows it writes follow the outputs (Note [Sequence state in loop kernels]).
std::vector<Vec> run_kernel(const flatten::KernelBody& k, std::span<const Vec> ins,
                            std::span<const lang::Type* const> out_types, std::span<const Vec> seqs = {});

/// The interpretive version of a kernel with the HostKernelFn convention: evaluates the nodes
/// chunk by chunk (small temporaries that stay in cache, one pass over the data).
void interpret_kernel(const flatten::KernelBody& k, int64_t begin, int64_t end, const void* const* ins, void* const* outs);

/// Output 0 of `k` over instances [begin, end) of `ins`, written to out[0, end - begin): the
/// values a consumer kernel computes on demand (runtime::Generate). Compiled code when the n
/// instances repay compiling, else interpret_kernel. Holds pointers into `ins`' buffers.
std::function<void(int64_t begin, int64_t end, void* out)> kernel_generator(const flatten::KernelBody& k,
                                                                         std::span<const Vec> ins);

/// Calls fn over [0, n) in chunks of `grain` instances, in parallel where there are several.
void run_chunks(flatten::HostKernelFn fn, int64_t n, const void* const* ins, void* const* outs,
                int64_t grain = host::kParallelGrain);

}  // namespace ndp::exec::cpu
