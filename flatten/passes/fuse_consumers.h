// Pass: fusion of maps into the reductions and scans they feed, and of filters into their
// packs (Note [Consumer kernels] in flatten/flat_ir.h).
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR after fuse_elementwise and fuse_siblings. Guarantees: within each
/// block,
///   v = kernel or fusible prim (..); m = nest(lens, v); r = prim REDUCE-or-SCAN(m)
/// where v and m are read nowhere else becomes `r = reduce_kernel/scan_kernel(lens; ..)`, and
///   f = kernel or fusible prim (..); y = pack(x, f)
/// where f is read nowhere else and x is a flat scalar vector becomes `y = pack_kernel(x; ..)`.
/// The consumer keeps its position; the producer loses that output (and goes when it has none
/// left), the nest goes. The consumer computes the producer's expression for the one value it
/// needs (kernel inputs stay at most kMaxConsumerInputs). Kernels cannot fail, so results and
/// errors are those of the unfused program. Why: the map's values never go to memory; a sum
/// of squares reads its input once instead of writing and reading a vector of squares.
Program fuse_consumers(Program p);

/// True when `p` is a reduction (sum product max_val min_val any all parity) or a scan
/// (plus_scan ... xor_scan) whose operator the runtimes define on element type `elem` (a flat
/// scalar): + and * on numbers, max and min on numbers and char, and/or/xor on ints and bool.
bool consumer_prim_ok(lang::core::PrimId p, const lang::Type* elem);

}  // namespace ndp::flatten
