// Test helper: a kernel body fused from an elementwise chain, with random input vectors, for the
// LLVM code generators' tests (the compiled code against the interpretive loop, the PTX).
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "exec/host/convert.h"
#include "flatten/passes/fuse_elementwise.h"
#include "tests/unit/flatten/passes/elementwise_chains.h"

namespace ndp::test::flat_ir {

using exec::host::Vec;

/// A kernel body straight from a chain, with its input Vecs, for comparing the two loops.
struct BodyCase {
  std::shared_ptr<const flatten::KernelBody> body;
  std::vector<Vec> ins;
};

inline BodyCase kernel_of(lang::TypeContext& T, const Chain& c, size_t n, uint64_t seed) {
  FnBuilder b("main", T.int_(), T.int_());
  Block& body = b.fn.body;
  std::vector<VarId> ins;
  BodyCase bc;
  for (size_t j = 0; j < c.input_types.size(); ++j) {
    ins.push_back(b.vec(c.input_types[j]));
    bc.ins.push_back(exec::host::from_values(T, c.input_types[j], random_values(c.input_types[j], n, seed + j)));
  }
  std::vector<VarId> outs = c.build(b, body, ins);
  body.result = outs[0];
  for (VarId o : outs) b.emit(body, Op::Length, b.host(), {o});  // every output is read outside
  // Fuse with the inputs treated as parameters: run the pass on the chain's statements only.
  Block only;
  for (Stmt& s : body.stmts)
    if (s.op == Op::Prim || s.op == Op::Length) only.stmts.push_back(std::move(s));
  body.stmts = std::move(only.stmts);
  flatten::Program p = flatten::fuse_elementwise(program_of(std::move(b.fn)));
  auto ks = stmts_of(p.functions[0].body, Op::Kernel);
  REQUIRE(ks.size() == 1);
  bc.body = ks[0]->kernel;
  std::vector<Vec> ordered;
  for (VarId u : ks[0]->uses) ordered.push_back(bc.ins.at(u - ins[0]));
  bc.ins = std::move(ordered);
  return bc;
}


}  // namespace ndp::test::flat_ir
