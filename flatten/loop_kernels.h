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
  /// A map kernel whose body reads no scalar: input 0, read by no node, is there only so that
  /// the kernel has its instances' number (the vectoriser passes the enclosing instance of
  /// each, a replicate: one value read in place where there is one, Note [Broadcast inputs]).
  bool count_input = false;
  /// A map kernel every fold of which runs over the instance's own rows (Note [Map kernels]).
  bool own_rows_only = false;
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

/// A variable a map kernel's body reads (Note [Map kernels]): a generator's element or a free
/// variable, of closed type `type`; `shared`: a sequence read in place through its row id;
/// `own_row`: a generator's element that is such a sequence (`row in rows`, rows shared), each
/// instance its own row all the same.
struct MapKernelSlot {
  uint32_t slot;
  const lang::Type* type;
  bool shared;
  bool own_row = false;
};

/// The map kernel of the body `body` of an apply-to-each, whose variables are `slots` (in the
/// order of the kernel's inputs) under the closed type arguments `targs`, or nothing: where the
/// body is not what a loop kernel's body may be (without the loop), gives a sequence, or does
/// not fold. Its `own_rows_only` says whether it folds only over the instance's own rows, which the
/// segmented primitives do as well (Note [Map kernels]).
std::optional<LoopKernel> map_kernel(lang::core::Program& prog, const lang::core::Expr* body,
                                     const std::vector<const lang::Type*>& targs, const std::vector<MapKernelSlot>& slots);

}  // namespace ndp::flatten
