// Consumer kernels on the cuda backend (see consumer_kernels.h).
#include "exec/cuda/consumer_kernels.h"

#include <algorithm>

#include "exec/host/lifted_prims.h"
#include "exec/cuda/device_vec_ops.h"
#include "exec/cuda/lifted_prims.h"
#include "lang/diagnostics.h"

namespace ndp::exec::cuda {

namespace {

using runtime::gpu::Primitives;

/// The kernel inputs as the element function's argument (at most kMaxConsumerInputs arrays),
/// gathering inside the kernel where they allow (Note [Fused gathers] in kernels.h).
struct ConsumerArgs {
  std::vector<GatheredInput> gathered;
  std::vector<const DVec*> unchecked;
  Primitives::FusedInputs in;
};
ConsumerArgs consumer_args(Gpu& g, std::span<const DVec> ins) {
  NDP_ASSERT(!ins.empty() && ins.size() <= flatten::kMaxConsumerInputs, "consumer kernel with a bad input count");
  static_assert(flatten::kMaxConsumerInputs <= std::size(Primitives::FusedInputs{}.p));
  // Guarded, g gathers take 2g + 1 of the pointers, so they never outnumber the flag words.
  static_assert(flatten::kMaxConsumerInputs / 2 <= Gpu::kGatherFlags);
  KernelArgs a = kernel_args(ins, flatten::kMaxConsumerInputs, &g);
  ConsumerArgs c;
  c.gathered = std::move(a.gathered);
  c.unchecked = std::move(a.unchecked);
  for (size_t j = 0; j < a.ptrs.size(); ++j) c.in.p[j] = a.ptrs[j];
  return c;
}

/// After a consumer kernel that read unchecked gathers (Note [Checked gathers] in device_vec.h):
/// reads their failure flags, throws the first failed gather's error, or marks them checked.
void check_consumer_gathers(Gpu& g, const ConsumerArgs& args) {
  if (std::none_of(args.unchecked.begin(), args.unchecked.end(), [](const DVec* v) { return v != nullptr; })) return;
  const std::array<uint64_t, Gpu::kGatherFlags> flags = g.take_gather_flags();
  for (size_t k = 0; k < args.unchecked.size(); ++k)
    if (args.unchecked[k] && flags[k] != 0) args.unchecked[k]->gather_failed();
  for (const DVec* v : args.unchecked)
    if (v) v->gather_checked();
}

// Note [Consumers of small inputs]
// A consumer program costs the driver's JIT 0.1 to 0.3 s the first time on a machine (Note
// [Consumer programs] in runtime/gpu/consumer_program.h); fused, a consumer saves writing and
// reading its values, at most 16 bytes an element: under a microsecond below 2^16 elements. So
// a smaller input runs unfused, the elementwise kernel (quick to compile, and kept in the disk
// cache) then the primitive, and a REPL expression over small data does not wait for the JIT
// (bench/gpu/repl_latency.py). The path depends on the input's size alone, so an input always
// takes the same one.
constexpr int64_t kMinFusedElements = int64_t{1} << 16;

/// The consumer program for `elements` inputs of the statement, with its arguments in `args`;
/// null where the input is small (Note [Consumers of small inputs]) or the program cannot be
/// compiled: the caller runs the consumer unfused.
const runtime::cuda::Module* consumer_program(Gpu& g, GpuKernels& kernels, const flatten::Stmt& s, std::span<const DVec> ins,
                                         int64_t elements, const runtime::gpu::ConsumerKernels& use, ConsumerArgs& args) {
  if (elements < kMinFusedElements) return nullptr;
  args = consumer_args(g, ins);
  return kernels.consumer_module(*s.kernel, use, args.gathered);
}

/// The kernel's values, stored: the unfused path where the consumer kernels are not linked.
DVec values(GpuKernels& kernels, const flatten::Stmt& s, std::span<const DVec> ins, const lang::Type* t) {
  const lang::Type* types[] = {t};
  return kernels.run(*s.kernel, ins, types).at(0);
}

}  // namespace

runtime::gpu::ConsumerKernels consumer_kernels_of(const flatten::Stmt& s, const lang::Type* result, bool one_segment) {
  using runtime::gpu::ConsumerUse;
  switch (s.op) {
    case flatten::Op::ReduceKernel:
      return runtime::gpu::consumer_kernels(one_segment ? ConsumerUse::ReduceOne : ConsumerUse::ReduceSegments,
                                            op_of(s.prim), elem_type(result));
    case flatten::Op::ScanKernel:
      return runtime::gpu::consumer_kernels(one_segment ? ConsumerUse::ScanOne : ConsumerUse::ScanSegments,
                                            op_of(s.prim), elem_type(result->a));
    default:
      NDP_ASSERT(s.op == flatten::Op::PackKernel, "consumer kernels of a statement that is no consumer");
      return runtime::gpu::consumer_kernels(ConsumerUse::Pack, NDP_OP_OR, elem_type(result));
  }
}

DVec reduce_kernel(Gpu& g, GpuKernels& kernels, const flatten::Stmt& s, const DVec& lengths, std::span<const DVec> ins,
                   const lang::Type* result) {
  DBuf off;
  const runtime::gpu::DSegs segs = segments_of_lengths(g, lengths, ins[0].size(), off);
  DBuf out = g.alloc(lengths.size() * elem_bytes(result));
  const ndp_elem_type t = elem_type(result);
  ndp_status st;
  ConsumerArgs args;
  if (const runtime::cuda::Module* m =
          consumer_program(g, kernels, s, ins, ins[0].size(), consumer_kernels_of(s, result, segs.count <= 1), args)) {
    st = g.check(g.prims().seg_reduce_fused(*m, op_of(s.prim), t, args.in, segs, out->pointer()));
    check_consumer_gathers(g, args);
  } else
    st = g.check(g.prims().seg_reduce(op_of(s.prim), t, values(kernels, s, ins, result).data(), segs, out->pointer()));
  NDP_ASSERT(st.code == NDP_OK, "a reduction the flattener admitted");
  return DVec::scalar(result, lengths.size(), std::move(out));
}

DVec scan_kernel(Gpu& g, GpuKernels& kernels, const flatten::Stmt& s, const DVec& lengths, std::span<const DVec> ins,
                 const lang::Type* result) {
  const int64_t total = ins[0].size();
  const lang::Type* e = result->a;
  DBuf out = g.alloc(total * elem_bytes(e));
  DVec seq = seq_from_lengths(g, result, lengths, DVec::scalar(e, total, out));
  const ndp_elem_type t = elem_type(e);
  ndp_status st;
  ConsumerArgs args;
  if (const runtime::cuda::Module* m =
          consumer_program(g, kernels, s, ins, total, consumer_kernels_of(s, result, lengths.size() <= 1), args)) {
    st = g.check(g.prims().seg_scan_fused(*m, op_of(s.prim), false, t, args.in, seq.segs(), out->pointer()));
    check_consumer_gathers(g, args);
  } else
    st = g.check(g.prims().seg_scan(op_of(s.prim), false, t, values(kernels, s, ins, e).data(), seq.segs(), out->pointer()));
  NDP_ASSERT(st.code == NDP_OK, "a scan the flattener admitted");
  return seq;
}

DVec pack_kernel(Gpu& g, GpuKernels& kernels, const flatten::Stmt& s, const DVec& v, std::span<const DVec> ins,
                 lang::TypeContext& types) {
  ConsumerArgs args;
  const runtime::cuda::Module* m = consumer_program(g, kernels, s, ins, v.size(), consumer_kernels_of(s, v.type(), true), args);
  if (!m) return pack(g, v, values(kernels, s, ins, types.bool_()));
  DBuf out;
  const int bytes = elem_bytes(v.type());
  int64_t kept = g.check(g.prims().pack_fused(*m, elem_type(v.type()), v.data(), args.in, v.size(),
                                              [&](int64_t count) -> runtime::cuda::Result<CUdeviceptr> {
                                                out = g.alloc(count * bytes);
                                                return out->pointer();
                                              }));
  check_consumer_gathers(g, args);
  return DVec::scalar(v.type(), kept, std::move(out));
}

}  // namespace ndp::exec::cuda
