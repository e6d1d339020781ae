// Pass: fusion of chains of elementwise primitives into Kernel statements.
#pragma once

#include <vector>

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR. Guarantees: within each block, every connected group of at least
/// two Prim statements whose primitive `kernel_prim_ok` accepts becomes one Kernel statement
/// (Note [Fused kernels] in flat_ir.h) at the position of the group's last member; its outputs
/// are the members' results read anywhere outside the group (other statements, nested blocks,
/// block results, recursion-loop parts). A member is delayed to the kernel's position only if
/// nothing between them reads it, and fused primitives cannot fail, so errors, effects and
/// results are those of the unfused program. Why: each lifted primitive makes a full pass over
/// memory and allocates its result; a fused chain makes one pass and keeps its temporaries in
/// registers.
Program fuse_elementwise(Program p);

/// True for the pure elementwise primitives a kernel may contain, at these operand and result
/// element types: arithmetic except integer division, comparisons, logic, negate, select, btoi,
/// char_code, float and the conversions that cannot fail, on int, float, bool, char, i32, f32.
bool kernel_prim_ok(lang::core::PrimId p, const std::vector<const lang::Type*>& args, const lang::Type* result);

/// True for the elementwise primitives that can fail and that the kernel generator computes
/// when the caller has checked their operands first (the cuda backend runs the check as its
/// own kernel): integer / (int, i32) and rem (no zero divisor), lshift and rshift on int
/// (0 <= count < 64). Never fused by fuse_elementwise, whose kernels cannot fail.
bool kernel_prim_checked_ok(lang::core::PrimId p, const std::vector<const lang::Type*>& args, const lang::Type* result);

/// The kernel body applying `p` once to inputs of `args`: one Input node per argument, then the
/// primitive (the cuda backend's single elementwise primitives).
KernelBody one_node_kernel(lang::core::PrimId p, const std::vector<const lang::Type*>& args, const lang::Type* result);

/// The operand check of a kernel_prim_checked_ok primitive on its second operand, of type `t`:
/// true where it fails (a zero divisor; a shift count outside [0, 64)).
KernelBody checked_prim_guard(lang::core::PrimId p, const lang::Type* t, const lang::Type* bool_type);

/// True when `v` is a scalar of the flat scalar type `t` (a kernel Const node).
bool const_ok(const lang::Value& v, const lang::Type* t);

}  // namespace ndp::flatten
