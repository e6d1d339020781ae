// flatten::verify: a valid program has no problems; broken scoping, kinds and call targets do.
#include <doctest/doctest.h>

#include "flatten/flat_ir.h"
#include "tests/unit/flatten/flat_builder.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

namespace {

bool mentions(const std::vector<std::string>& problems, const std::string& what) {
  for (const std::string& p : problems)
    if (p.find(what) != std::string::npos) return true;
  return false;
}

/// f(x : int) : [int] = nest([#x], x + x) with an if_nonempty around the addition.
flatten::Program valid_program(lang::TypeContext& T) {
  FnBuilder b("f", T.int_(), T.int_());
  VarId n = b.host();
  b.emit(Op::Length, n, {b.fn.param});
  VarId r = b.vec(T.int_(), "r");
  Stmt& s = b.emit(Op::IfNonEmpty, r, {n});
  s.then_block = std::make_unique<Block>();
  s.else_block = std::make_unique<Block>();
  VarId sum = b.prim(*s.then_block, PrimId::Add, T.int_(), {b.fn.param, b.fn.param}, {T.int_()});
  s.then_block->result = sum;
  s.else_block->result = b.fn.param;
  b.fn.body.result = r;
  flatten::Program p;
  p.functions.push_back(std::move(b.fn));
  return p;
}

}  // namespace

TEST_CASE("verify: a valid program has no problems") {
  lang::core::Program prog;
  flatten::Program p = valid_program(prog.types);
  CHECK(flatten::verify(p).empty());
}

TEST_CASE("verify: use before definition and out of scope") {
  lang::core::Program prog;
  auto& T = prog.types;
  FnBuilder b("g", T.int_(), T.int_());
  VarId later = b.vec(T.int_(), "later");
  VarId d = b.prim(b.fn.body, PrimId::Negate, T.int_(), {later}, {T.int_()});
  b.emit(Op::First, later, {b.fn.param});  // also: first of a non-pair
  VarId n = b.host();
  b.emit(Op::Length, n, {b.fn.param});
  VarId r = b.vec(T.int_(), "r");
  Stmt& s = b.emit(Op::IfNonEmpty, r, {n});
  s.then_block = std::make_unique<Block>();
  s.else_block = std::make_unique<Block>();
  VarId inner = b.prim(*s.then_block, PrimId::Negate, T.int_(), {b.fn.param}, {T.int_()});
  s.then_block->result = inner;
  s.else_block->result = b.fn.param;
  b.prim(b.fn.body, PrimId::Negate, T.int_(), {inner}, {T.int_()});  // inner is out of scope here
  b.fn.body.result = d;
  flatten::Program p;
  p.functions.push_back(std::move(b.fn));
  auto problems = flatten::verify(p);
  CHECK(mentions(problems, "before its definition"));
  CHECK(mentions(problems, "out of its scope"));
  CHECK(mentions(problems, "has type int"));
}

TEST_CASE("verify: host/vector mix-ups") {
  lang::core::Program prog;
  auto& T = prog.types;
  FnBuilder b("h", T.int_(), T.int_());
  VarId n = b.host();
  b.emit(Op::Length, n, {b.fn.param});
  b.prim(b.fn.body, PrimId::Negate, T.int_(), {n}, {T.int_()});  // a host operand of a prim
  VarId bad = b.vec(T.int_(), "bad");
  b.emit(Op::Lit, bad, {b.fn.param}).lit = I(1);  // lit's count must be host
  VarId hostdst = b.host("h");
  b.emit(Op::Tuple, hostdst, {b.fn.param, b.fn.param});  // a vector op defining a host var
  VarId sl = b.vec(T.int_(), "sl");
  b.emit(Op::Slice, sl, {b.fn.param, b.fn.param, n});  // slice bounds must be host
  b.fn.body.result = n;                                  // a host result
  flatten::Program p;
  p.functions.push_back(std::move(b.fn));
  auto problems = flatten::verify(p);
  CHECK(mentions(problems, "must be a vector variable"));
  CHECK(mentions(problems, "must be a host variable"));
  CHECK(mentions(problems, "the body returns a host variable"));
  CHECK(mentions(problems, "(slice): operand 1 (x_0) must be a host variable"));
}

TEST_CASE("verify: bad call target, arity and duplicate definitions") {
  lang::core::Program prog;
  auto& T = prog.types;
  FnBuilder b("k", T.int_(), T.int_());
  VarId r = b.vec(T.int_(), "r");
  b.emit(Op::Call, r, {b.fn.param}).func = 7;
  b.prim(b.fn.body, PrimId::Add, T.int_(), {b.fn.param}, {T.int_()});  // Add takes two
  b.emit(Op::Elements, r, {b.fn.param});                              // r again
  b.fn.body.result = r;
  flatten::Program p;
  p.functions.push_back(std::move(b.fn));
  p.entry = 3;
  auto problems = flatten::verify(p);
  CHECK(mentions(problems, "calls function 7 of 1"));
  CHECK(mentions(problems, "has 1 operands, expects 2"));
  CHECK(mentions(problems, "defined twice"));
  CHECK(mentions(problems, "entry function 3 of 1"));
}
