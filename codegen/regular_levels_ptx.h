// PTX for the levels of a regular recursion (Note [Regular levels] in flatten/flat_ir.h): the
// step's elementwise kernel applied in place to every instance of a level, for one level over
// the whole array, or for all the levels left in each block's share of it in shared memory.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "flatten/flat_ir.h"

namespace ndp::codegen {

/// PTX text (sm_90) of an entry `ndp_kernel` that applies `map` (elementwise, cannot fail,
/// inputs and child outputs of one flat scalar type) to the levels of a regular recursion of k =
/// child_outputs.size() parts: at a level of instances of length L = k·m, element j < m of
/// child c of instance i, at i·L + c·m + j, becomes output child_outputs[c] of the map whose
/// input q is element i·L + input_parts[q]·m + j. Indices are 32-bit: launch it for fewer than
/// 2^31 elements.
///  - `in_block` false: `ndp_kernel(i64 pairs, ptr src, ptr dst, i64 m)`, one level from src to
///    dst (which may be src); thread t < pairs = (elements) / k takes (i, j) = (t / m, t mod m).
///  - `in_block` true: `ndp_kernel(i64 total, ptr src, ptr dst, i64 L, i64 levels, i64 tile)`:
///    block b copies elements [b·tile, b·tile + tile) (a multiple of L, those below total) of src
///    to its dynamic shared memory (tile elements), runs `levels` levels from length L down,
///    L / k at each, and copies them to the same place of dst.
/// Throws std::runtime_error where the body is not such a map, or LLVM fails.
std::string compile_regular_levels_ptx(const flatten::KernelBody& map, std::span<const uint32_t> input_parts,
                                       std::span<const uint32_t> child_outputs, bool in_block);

}  // namespace ndp::codegen
