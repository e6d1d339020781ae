// How many GPU threads run each instance of a map kernel (Note [Map kernels] in
// flatten/flat_ir.h): the level `at LEVEL` pins, or the dispatch's choice.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "exec/cuda/device_vec.h"
#include "flatten/flat_ir.h"
#include "runtime/cuda/device.h"

namespace ndp::exec::cuda {

/// Every lanes count but 1 that map_kernel_lanes may give (powers of two up to a block of 256):
/// `ndp compile` holds a variant of each map kernel for each.
std::vector<int> map_kernel_lane_choices();

// Note [Map kernel dispatch]
// A map kernel's instances run on `thread` (1 lane), `subwarp(N)` (N), `warp` (32) or `block`
// (256) as `at LEVEL` says. `auto` (and the levels a map kernel cannot take: `grid`, `seq`,
// which the compiler warned of) chooses at run time so that the machine is full: the most lanes
// (at most 256) with n·lanes at most twice the threads the GPU holds at once, so few instances
// get many lanes each and many instances one. Where every fold runs over a sequence the kernel
// reads, the lanes are no more than its rows' average length rounded up to a power of two: lanes
// past a fold's length would idle.
int map_kernel_lanes(const flatten::Stmt& s, int64_t n, std::span<const DVec> seqs,
                     const runtime::cuda::DeviceProperties& device);

}  // namespace ndp::exec::cuda
