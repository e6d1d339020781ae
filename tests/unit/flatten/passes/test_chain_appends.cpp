// flatten/passes/chain_appends (Note [Append chains] in flatten/flat_ir.h): which `++` and elt
// statements become one AppendChain and which stay, and that the cpu backend's run of the
// chain gives the statements' own results and their first error.
#include <doctest/doctest.h>

#include "flatten/passes/chain_appends.h"
#include "tests/unit/exec/exec_helpers.h"

using namespace ndp;
using namespace ndp::test::exec_test;
using flatten::AppendChain;

namespace {

size_t count_op(const Block& b, Op op) {
  size_t n = 0;
  for (const Stmt& s : b.stmts) n += s.op == op;
  return n;
}

std::vector<Op> ops(const Block& b) {
  std::vector<Op> out;
  for (const Stmt& s : b.stmts) out.push_back(s.op);
  return out;
}

const Stmt* chain_of(const Block& b) {
  for (const Stmt& s : b.stmts)
    if (s.op == Op::AppendChain) return &s;
  return nullptr;
}

flatten::Program program_of(flatten::Function f) {
  flatten::Program p;
  p.functions.push_back(std::move(f));
  return p;
}

/// Two instances of a nested sequence m and of a sequence mid, and the statements
///   x = elt(m, first); xm = x ++ mid; [between]; y = elt(m, second); r = xm ++ y
/// returned as one instance of [[int]]. `between` may add statements.
flatten::Function elts_and_appends(lang::TypeContext& T, int64_t first, int64_t second,
                                const std::function<void(FnBuilder&, Block&, VarId)>& between = {}) {
  const Type* si = T.seq(T.int_());
  FnBuilder b("main", T.int_(), T.seq(si));
  Block& body = b.fn.body;
  VarId one = b.konst(body, 1);
  VarId m = b.instances(body, T.seq(T.seq(si)), seq({seq({ints({1}), ints({2, 3})}), seq({ints({}), ints({4})})}));
  VarId mid = b.instances(body, T.seq(si), seq({ints({0}), ints({9, 9})}));
  VarId two = b.host();
  b.emit(Op::Length, two, {m});
  VarId i = b.lit(body, T.int_(), I(first), two);
  VarId x = b.prim(body, PrimId::Elt, si, {m, i}, {}, lang::Span{2, 10, 11});
  VarId xm = b.prim(body, PrimId::Append, si, {x, mid});
  if (between) between(b, body, two);
  VarId j = b.lit(body, T.int_(), I(second), two);
  VarId y = b.prim(body, PrimId::Elt, si, {m, j}, {}, lang::Span{2, 20, 21});
  VarId r = b.prim(body, PrimId::Append, si, {xm, y});
  VarId twos = b.lit(body, T.int_(), I(2), one);
  VarId w = b.vec(T.seq(si));
  b.emit(Op::Nest, w, {twos, r});
  body.result = w;
  return std::move(b.fn);
}

}  // namespace

TEST_CASE("chain_appends: a ++ chain over elts is one statement, with the statements' results and first error") {
  ExecFixture fx;
  auto& T = fx.T;
  flatten::Program p = flatten::chain_appends(program_of(elts_and_appends(T, 0, 1)));
  CHECK(flatten::verify(p).empty());
  const Block& pb = p.functions[0].body;
  CHECK(count_op(pb, Op::Prim) == 0);  // both elts and both ++ are taken in
  const Stmt* c = chain_of(pb);
  REQUIRE(c != nullptr);
  REQUIRE(c->chain->sources.size() == 3);
  CHECK(c->chain->sources[0].is_elt());
  CHECK(!c->chain->sources[1].is_elt());
  CHECK(c->chain->sources[2].is_elt());
  CHECK(c->chain->checks == std::vector<uint32_t>{0, 2});
  CHECK(c->uses.size() == 5);  // (m, i), mid, (m, j)
  CHECK(flatten::print_program(p).find("append_chain(elt(") != std::string::npos);

  auto run = [&](int64_t first, int64_t second) {
    flatten::Program q = flatten::chain_appends(program_of(elts_and_appends(T, first, second)));
    return fx.run(q);
  };
  auto ok = [&](int64_t first, int64_t second) {
    auto r = run(first, second);
    REQUIRE(r.ok);
    return r.value;
  };
  CHECK(lang::values_equal(ok(0, 1), seq({ints({1, 0, 2, 3}), ints({9, 9, 4})})));
  CHECK(lang::values_equal(ok(1, 0), seq({ints({2, 3, 0, 1}), ints({4, 9, 9})})));
  // Both elts fail: the first statement's error, as in statement order.
  auto r = run(2, 5);
  REQUIRE(!r.ok);
  CHECK(r.error.message == "Sequence reference (a[i]) out of bounds: index 2, length 2.");
  CHECK(r.error.span.begin == 10);
  r = run(0, 2);
  REQUIRE(!r.ok);
  CHECK(r.error.span.begin == 20);
  // The unchained program says the same.
  auto plain = fx.run(elts_and_appends(T, 0, 2));
  REQUIRE(!plain.ok);
  CHECK(plain.error.span.begin == 20);
}

TEST_CASE("chain_appends: no chain across a statement that can fail") {
  ExecFixture fx;
  auto& T = fx.T;
  // Between the first elt and the root: a division whose result the answer does not need, but
  // which fails (by zero) after the first elt would have failed.
  auto divide = [&](FnBuilder& b, Block& body, VarId n) {
    VarId a = b.lit(body, T.int_(), I(1), n);
    VarId z = b.lit(body, T.int_(), I(0), n);
    b.prim(body, PrimId::Div, T.int_(), {a, z}, {T.int_()}, lang::Span{2, 30, 31});
  };
  flatten::Program p = program_of(elts_and_appends(T, 5, 0, divide));
  std::vector<Op> before = ops(p.functions[0].body);
  p = flatten::chain_appends(std::move(p));
  // The division lies between x and the root, so the root forms no chain; nothing lies
  // between x and xm, so xm = x ++ mid is a chain of its own.
  const Block& pb = p.functions[0].body;
  const Stmt* c = chain_of(pb);
  REQUIRE(c != nullptr);
  CHECK(count_op(pb, Op::AppendChain) == 1);
  CHECK(c->chain->sources.size() == 2);
  CHECK(ops(pb).size() == before.size() - 1);  // only x went
  // The first elt fails first, before the division: its error.
  auto r = fx.run(p);
  REQUIRE(!r.ok);
  CHECK(r.error.span.begin == 10);
}

TEST_CASE("chain_appends: a value read elsewhere stays a whole source, and a lone ++ stays as it is") {
  lang::core::Program prog;
  auto& T = prog.types;
  const Type* si = T.seq(T.int_());
  FnBuilder b("main", T.int_(), si);
  Block& body = b.fn.body;
  VarId m = b.instances(body, T.seq(T.seq(si)), seq({seq({ints({1}), ints({2, 3})})}));
  VarId n = b.host();
  b.emit(Op::Length, n, {m});
  VarId i = b.lit(body, T.int_(), I(0), n);
  VarId x = b.prim(body, PrimId::Elt, si, {m, i});
  VarId xx = b.prim(body, PrimId::Append, si, {x, x});  // x is read twice
  VarId r = b.prim(body, PrimId::Append, si, {xx, x});
  body.result = r;
  flatten::Program p = flatten::chain_appends(program_of(std::move(b.fn)));
  CHECK(flatten::verify(p).empty());
  const Block& pb = p.functions[0].body;
  const Stmt* c = chain_of(pb);
  REQUIRE(c != nullptr);
  REQUIRE(c->chain->sources.size() == 3);  // x ++ x ++ x, each whole
  for (const AppendChain::Source& s : c->chain->sources) CHECK(!s.is_elt());
  CHECK(c->chain->checks.empty());
  CHECK(count_op(pb, Op::Prim) == 1);  // the elt stays

  FnBuilder lone("lone", T.int_(), si);
  VarId a = lone.instances(lone.fn.body, T.seq(si), seq({ints({1})}));
  lone.fn.body.result = lone.prim(lone.fn.body, PrimId::Append, si, {a, a});
  flatten::Program q = program_of(std::move(lone.fn));
  std::vector<Op> before = ops(q.functions[0].body);
  q = flatten::chain_appends(std::move(q));
  CHECK(ops(q.functions[0].body) == before);
}

TEST_CASE("chain_appends: sequences of sequences are not chained") {
  lang::core::Program prog;
  auto& T = prog.types;
  const Type* si = T.seq(T.int_());
  const Type* ssi = T.seq(si);
  FnBuilder b("main", T.int_(), ssi);
  Block& body = b.fn.body;
  VarId a = b.instances(body, T.seq(ssi), seq({seq({ints({1})})}));
  VarId aa = b.prim(body, PrimId::Append, ssi, {a, a});
  body.result = b.prim(body, PrimId::Append, ssi, {aa, a});
  flatten::Program p = program_of(std::move(b.fn));
  std::vector<Op> before = ops(p.functions[0].body);
  p = flatten::chain_appends(std::move(p));
  CHECK(ops(p.functions[0].body) == before);
}
