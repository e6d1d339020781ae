// Consumer programs: the consumer kernels' PTX (device/fused.cu) with a generated element
// function put in, compiled by the driver as one program.
//
// Note [Consumer programs]
// The consumer kernels call `ndp_elements`, the element function that codegen generates for
// each fused map (Note [Consumer kernels] in flatten/flat_ir.h). Linked as separate objects (a
// relocatable cubin and the function's own object), each call follows the ABI: the 64-byte
// result goes through the stack, and the callee saves the registers it shares with the caller.
// Nsight Compute on an SpMV of 2^20 rows of 16 nonzeros (H100): 21 local stores and 21 local
// loads a call, 7.6M sectors each way, most of them reaching L2, which was the kernel's limit.
// Compiled as one program, ptxas sees both sides of the call: the function gets no stack
// frame and no kernel a frame for the result (ptxas -v; tools/check-ptx.sh checks it for every
// consumer program the tests make), and the SpMV's local traffic is gone.
//
// So the build embeds fused.cu's PTX for each element type (nvcc -rdc -ptx, which declares
// ndp_elements `.extern`), and consumer_program puts the element function's definition in place
// of that declaration and keeps only the entries that a use runs: the driver's JIT takes about
// 0.1 s an entry, and a use needs one (a reduction or a scan: its flat or its tile pass) or two
// (a pack counts, then compacts). The driver's JIT
// compiles the whole text (cuModuleLoadDataEx), and its own cache keeps the result across runs.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/gpu/primitives.h"

namespace ndp::runtime::gpu {

/// What a consumer kernel does with the elements its element function computes: a reduction
/// or a scan of one segment or of several (the flat pass or the tile pass:
/// Primitives::seg_reduce_fused and seg_scan_fused run the one for their segment count,
/// detail::reduce_with and scan_with), a pack.
enum class ConsumerUse { ReduceOne, ReduceSegments, ScanOne, ScanSegments, Pack };

/// The consumer kernels a use runs: the element type of the fused.cu image that holds them and
/// their entry names (only those: the JIT costs about 0.1 s an entry). `t` is the element type
/// reduced or scanned, or the type of the values a pack keeps (whose flags come from the bool
/// image); `op` is ignored for a pack.
struct ConsumerKernels {
  ndp_elem_type image;
  std::vector<std::string> entries;
  /// Names them, for the caches of the programs made of them.
  std::string key() const {
    std::string k = std::to_string(static_cast<int>(image));
    for (const std::string& e : entries) k += " " + e;
    return k;
  }
};
ConsumerKernels consumer_kernels(ConsumerUse use, ndp_op op, ndp_elem_type t);

/// The embedded PTX of device/fused.cu for element type t; empty in a build without the CUDA
/// toolkit.
std::string_view consumer_ptx(ndp_elem_type t);

/// One program's PTX: `consumers` (fused.cu's PTX, which declares ndp_elements) with the
/// definition from `element` (PTX of a module that defines ndp_elements, codegen's
/// compile_element_ptx) in place of the declaration, made internal to the program, and of the
/// entries only those named in `keep`. Fails, naming what is missing, when `consumers` does not
/// declare ndp_elements, `element` has no header to drop, or an entry of `keep` is absent.
cuda::Result<std::string> consumer_program(std::string_view consumers, std::string_view element,
                                           std::span<const std::string> keep);

}  // namespace ndp::runtime::gpu
