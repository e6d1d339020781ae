// Private to runtime/gpu: the host half of the tiled segmented scan (Note [Tiled segmented
// scan] in device/scan.cuh), shared by seg_scan.cpp, seg_reduce.cpp and pack.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/gpu/launch.h"

namespace ndp::rt::gpu::detail {

/// The tile and block sizes of device/scan.cuh (kTile, kScanBlock, kCarryBlock).
constexpr int64_t kTile = 2048;
constexpr unsigned kScanBlock = 256;
constexpr unsigned kCarryBlock = 1024;

inline int64_t tile_count(int64_t n) { return n <= 0 ? 0 : (n + kTile - 1) / kTile; }

/// One block per tile (tile kernels loop by grid stride beyond the launch limit).
inline cuda::LaunchConfig tile_launch(int64_t ntiles) {
  int64_t grid = ntiles < 1 ? 1 : ntiles > (int64_t{1} << 30) ? (int64_t{1} << 30) : ntiles;
  return cuda::LaunchConfig{static_cast<unsigned>(grid), kScanBlock, 0};
}

/// NDP_OK with *identity_bits = the identity of (op, t) in its low bytes, or the CPU runtime's
/// status for a pair it does not support (NDP_UNSUPPORTED) or an unknown op or type.
ndp_status op_identity(ndp_op op, ndp_elem_type t, uint64_t* identity_bits);

/// Phases 1 and 2: with more than one tile, `carry` receives one value per tile (the value the
/// tile starts from), computed by kernels `aggs_kernel` (in, s, agg) and `carries_kernel`
/// (agg, ntiles, carry); with one tile it stays empty (a null pointer for phase 3).
Status tile_carries(Primitives& p, const std::string& aggs_kernel, const std::string& carries_kernel, CUdeviceptr in,
                    DSegs s, cuda::DeviceBuffer& carry);

}  // namespace ndp::rt::gpu::detail
