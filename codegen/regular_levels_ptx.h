// PTX for the levels of a regular recursion (Notes [Regular levels] and [Regular ascents] in
// flatten/flat_ir.h): the array rewritten in place, level by level, over the whole array or for
// all the levels left in each block's share of it in shared memory.
#pragma once

#include <string>

#include "flatten/flat_ir.h"

namespace ndp::codegen {

/// PTX text (sm_90) of an entry `ndp_kernel` for regular plan `plan`. Indices are 32-bit:
/// launch it for fewer than 2^31 elements.
///
/// A plan of the map form (plan.map: elementwise, cannot fail, inputs and child outputs of one
/// flat scalar type) of k = child_outputs.size() parts: at a level of instances of length
/// L = k·m, element j < m of child c of instance i, at i·L + c·m + j, becomes output
/// child_outputs[c] of the map whose input q is element i·L + input_parts[q]·m + j.
///  - `in_block` false: `ndp_kernel(i64 pairs, ptr src, ptr dst, i64 m)`, one level from src to
///    dst (which may be src); thread t < pairs = (elements) / k takes (i, j) = (t / m, t mod m).
///  - `in_block` true: `ndp_kernel(i64 total, ptr src, ptr dst, i64 L, i64 levels, i64 tile)`:
///    block b copies elements [b·tile, b·tile + tile) (a multiple of L, those below total) of
///    src to its dynamic shared memory (tile elements), runs `levels` levels from length L down,
///    L / k at each, and copies them to the same place of dst.
///
/// A plan of the ascent form (plan.callee of the map form, plan.pieces over k = parts.size()
/// children): at an ascent level of length l = k·m, piece p of instance i, at i·l + p·m, is
/// child pieces[p].child (at i·l + child·m), forwards or reversed; then the callee's levels.
///  - `in_block` false: `ndp_kernel(i64 total, ptr src, ptr dst, i64 l)`: that permutation, from
///    src to dst (not src), a thread an element.
///  - `in_block` true: `ndp_kernel(i64 total, ptr src, ptr dst, i64 tile, i64 levels, ptr
///    table)`: block b copies its tile of src to shared memory (2·tile elements: the
///    permutation goes from one half to the other), and for each ascent level a < levels, whose
///    length and callee levels are the i32 pair table[2a], table[2a + 1], permutes and runs the
///    callee's levels; then copies the tile to the same place of dst.
/// Throws std::runtime_error where the plan is not such a plan, or LLVM fails.
std::string compile_regular_levels_ptx(const flatten::RegularLevels& plan, bool in_block);

}  // namespace ndp::codegen
