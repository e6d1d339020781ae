// Pass: fusion of chains of elementwise primitives into Kernel statements.
#pragma once

#include <vector>

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR. Guarantees: within each block, every connected group of at least
/// two Prim statements whose primitive `kernel_prim_ok` or `kernel_prim_fallible` accepts
/// becomes one Kernel statement (Note [Fused kernels] in flat_ir.h) at the position of the
/// group's last member; its outputs are the members' results read anywhere outside the group
/// (other statements, nested blocks, block results, recursion-loop parts). A member is delayed
/// to the kernel's position only if nothing between them reads it, and a member that can fail
/// only past statements that cannot fail and have no effect (pure_and_total); members that
/// can fail join one group, whose kernel keeps their statement order; so errors,
/// effects and results are those of the unfused program (Note [Kernels that can fail]). Why:
/// each lifted primitive makes a full pass over memory and allocates its result; a fused chain
/// makes one pass and keeps its temporaries in registers.
Program fuse_elementwise(Program p);

/// True for the pure elementwise primitives that cannot fail and that a kernel may contain, at
/// these operand and result element types: arithmetic except integer division, comparisons,
/// logic, negate, select, btoi, char_code, float, the conversions that cannot fail, on int,
/// float, bool, char, i32, f32; exp, the trigonometric and hyperbolic functions on float;
/// eql of flat scalars.
bool kernel_prim_ok(lang::core::PrimId p, const std::vector<const lang::Type*>& args, const lang::Type* result);

/// True for the elementwise primitives that can fail and that a kernel may contain (Note
/// [Kernels that can fail]): integer / (int, i32), rem, lshift, rshift, ^ (a negative power),
/// sqrt, ln, expt, ceil, floor, trunc, round, code_char, i64 and i32 of a float or f32, and
/// hash of a flat scalar.
bool kernel_prim_fallible(lang::core::PrimId p, const std::vector<const lang::Type*>& args, const lang::Type* result);

/// The kernel body applying `p` once to inputs of `args`: one Input node per argument, then the
/// primitive, whose errors are reported at `span` (the cuda backend's single elementwise
/// primitives).
KernelBody one_node_kernel(lang::core::PrimId p, const std::vector<const lang::Type*>& args, const lang::Type* result,
                           lang::Span span = {});

/// True when `v` is a scalar of the flat scalar type `t` (a kernel Const node).
bool const_ok(const lang::Value& v, const lang::Type* t);
/// The bits of such a scalar in its storage type, zero-extended (a kernel key's constants; a
/// literal's fill on the cuda backend).
uint64_t const_bits(const lang::Value& v);

}  // namespace ndp::flatten
