// Scalar loops as one kernel (Note [Loop kernels] in flatten/flat_ir.h).
#pragma once

#include <optional>
#include <set>
#include <vector>

#include "flatten/flat_ir.h"
#include "lang/core.h"

namespace ndp::flatten {

/// A loop kernel body and where each sequence it reads comes from.
struct LoopKernel {
  struct Source {
    bool shared;     // a shared parameter, read through ids
    uint32_t which;  // shared: its parameter slot; else the number of the parameter's sequence leaf
  };
  KernelBody body;
  std::vector<Source> seqs;
};

/// The loop kernel of function `fn` at the closed type arguments `targs`, with `body` its body
/// after the Core rewrites (merge_tail_calls), or nothing when it is not a loop over scalars.
///
/// A loop here: the parameter and the result are flat scalars or tuples of them, and the
/// parameter may hold `shared` sequences (Note [Shared arguments]) of them that every call
/// passes on unchanged, read by # and elt (Note [Sequences in loop kernels]); every tail
/// position of the body is a value or a call of `fn` itself at the same type arguments, and at
/// least one of each; the rest is lets, tuples, ifs, literals and the primitives a kernel holds
/// (those that can fail too), and calls of other functions whose bodies are all that (their
/// bodies are compiled in place); apply-to-eachs over ranges and the sequences the loop reads,
/// which reductions, # and indexing consume (Note [Folds in kernels]); and appends to a
/// sequence of the state (Note [Appended sequences in loop kernels]). The kernel's inputs are
/// the leaves of the parameter, in order, and its outputs the leaves of the result (Note [Loop
/// kernels]).
std::optional<LoopKernel> loop_kernel(lang::core::Program& prog, const lang::core::Function& fn,
                                      const lang::core::Expr* body, const std::vector<const lang::Type*>& targs,
                                      const std::set<uint32_t>& shared);

}  // namespace ndp::flatten
