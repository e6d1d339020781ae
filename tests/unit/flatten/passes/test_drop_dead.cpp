// drop_dead: unread statements that cannot fail are removed, repeatedly, and a kernel keeps only
// the outputs someone reads; statements that can fail stay, so errors are unchanged.
#include <doctest/doctest.h>

#include <set>
#include <utility>

#include "flatten/flat_ir.h"
#include "flatten/passes/drop_dead.h"
#include "flatten/passes/fuse_elementwise.h"
#include "tests/unit/flatten/passes/elementwise_chains.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

namespace {

std::set<PrimId> prims_of(const Block& b) {
  std::set<PrimId> r;
  for (const Stmt* s : stmts_of(b, Op::Prim)) r.insert(s->prim);
  return r;
}

}  // namespace

TEST_CASE("drop_dead: unread pure statements go, and then what only they read; a division stays") {
  lang::TypeContext T;
  FnBuilder b("main", T.int_(), T.int_());
  Block& body = b.fn.body;
  VarId x = b.instances(body, T.seq(T.int_()), ints({1, 2, 3}));
  VarId sum = prim(b, body, PrimId::Add, T.int_(), {x, x});
  prim(b, body, PrimId::Mul, T.int_(), {sum, x});    // unread: goes, and then the sum it read
  prim(b, body, PrimId::Div, T.int_(), {x, x});      // unread, but can fail: stays, with x
  b.emit(body, Op::Length, b.host(), {x});           // unread: goes
  body.result = b.fn.param;
  flatten::Program p = flatten::drop_dead(program_of(std::move(b.fn)));
  CHECK(flatten::verify(p).empty());
  const Block& out = p.functions[0].body;
  CHECK(prims_of(out) == std::set<PrimId>{PrimId::Div});
  CHECK(stmts_of(out, Op::Length).empty());
  CHECK(stmts_of(out, Op::Elements).size() == 1);  // x, which the division reads
}

TEST_CASE("drop_dead: a kernel loses its unread outputs, and goes when none is read") {
  lang::TypeContext T;
  // s = x + y, m = s * x fuse into one kernel with outputs s and m: s is read by a tuple that
  // nobody reads, m by rand (an effect, so it stays).
  FnBuilder b("main", T.int_(), T.int_());
  Block& body = b.fn.body;
  VarId x = b.instances(body, T.seq(T.int_()), ints({1, 2, 3}));
  VarId y = b.instances(body, T.seq(T.int_()), ints({4, 5, 6}));
  VarId s = prim(b, body, PrimId::Add, T.int_(), {x, y});
  VarId m = prim(b, body, PrimId::Mul, T.int_(), {s, x});
  b.emit(body, Op::Tuple, b.vec(T.pair(T.int_(), T.int_())), {s, y});
  prim(b, body, PrimId::Rand, T.int_(), {m});
  body.result = b.fn.param;
  flatten::Program fused = flatten::fuse_elementwise(program_of(std::move(b.fn)));
  auto before = stmts_of(fused.functions[0].body, Op::Kernel);
  REQUIRE(before.size() == 1);
  REQUIRE(std::set<VarId>(before[0]->outs.begin(), before[0]->outs.end()) == std::set<VarId>{s, m});
  flatten::Program p = flatten::drop_dead(std::move(fused));
  CHECK(flatten::verify(p).empty());
  auto after = stmts_of(p.functions[0].body, Op::Kernel);
  REQUIRE(after.size() == 1);
  CHECK(after[0]->outs == std::vector<VarId>{m});
  CHECK(after[0]->dst == m);
  CHECK(after[0]->kernel->outputs.size() == 1);
  CHECK(stmts_of(p.functions[0].body, Op::Tuple).empty());

  // The same chain read only by the length (which reads the chain's input instead): the
  // kernel, and then its inputs, all go.
  FnBuilder b2("main", T.int_(), T.int_());
  Block& body2 = b2.fn.body;
  VarId x2 = b2.instances(body2, T.seq(T.int_()), ints({1, 2, 3}));
  VarId s2 = prim(b2, body2, PrimId::Add, T.int_(), {x2, x2});
  VarId m2 = prim(b2, body2, PrimId::Mul, T.int_(), {s2, x2});
  b2.emit(body2, Op::Length, b2.host(), {m2});
  body2.result = b2.fn.param;
  flatten::Program fused2 = flatten::fuse_elementwise(program_of(std::move(b2.fn)));
  REQUIRE(stmts_of(fused2.functions[0].body, Op::Kernel).size() == 1);
  flatten::Program p2 = flatten::drop_dead(std::move(fused2));
  CHECK(flatten::verify(p2).empty());
  CHECK(p2.functions[0].body.stmts.empty());

  // A kernel that can fail stays when nobody reads it, with one output: its checks must run.
  FnBuilder b3("main", T.int_(), T.int_());
  Block& body3 = b3.fn.body;
  VarId x3 = b3.instances(body3, T.seq(T.int_()), ints({1, 2, 3}));
  VarId q3 = prim(b3, body3, PrimId::Div, T.int_(), {x3, x3});
  prim(b3, body3, PrimId::Add, T.int_(), {q3, x3});
  body3.result = b3.fn.param;
  flatten::Program p3 = flatten::drop_dead(flatten::fuse_elementwise(program_of(std::move(b3.fn))));
  CHECK(flatten::verify(p3).empty());
  auto kept = stmts_of(p3.functions[0].body, Op::Kernel);
  REQUIRE(kept.size() == 1);
  CHECK(kept[0]->outs.size() == 1);
  CHECK(kept[0]->kernel->can_fail());
}
