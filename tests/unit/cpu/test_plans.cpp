// The cpu executor's statement plans: filter groups (exec/cpu/filter_groups.h) and append
// chains (exec/cpu/append_chains.h): which statements they take, and that running them
// gives the statements' own results and errors.
#include <doctest/doctest.h>

#include "exec/cpu/append_chains.h"
#include "exec/cpu/filter_groups.h"
#include "tests/unit/cpu/cpu_helpers.h"

using namespace ndp;
using namespace ndp::test::cpu;
using exec::cpu::AppendPlan;
using exec::cpu::FilterPlan;

namespace {

const lang::Span kSpan{2, 40, 45};

/// A kernel body over two int inputs: `cmp(in0, in1)`, then btoi of it when `count`.
std::shared_ptr<flat::KernelBody> compare(lang::TypeContext& T, PrimId cmp, bool count) {
  auto k = std::make_shared<flat::KernelBody>();
  k->inputs = {T.int_(), T.int_()};
  flat::KernelNode a, b, c;
  a.kind = b.kind = flat::KernelNode::Kind::Input;
  a.type = b.type = T.int_();
  b.input = 1;
  c.kind = flat::KernelNode::Kind::Prim;
  c.prim = cmp;
  c.args = {0, 1};
  c.type = T.bool_();
  k->nodes = {a, b, c};
  k->outputs = {2};
  if (count) {
    flat::KernelNode d;
    d.kind = flat::KernelNode::Kind::Prim;
    d.prim = PrimId::Btoi;
    d.args = {2};
    d.type = T.int_();
    k->nodes.push_back(d);
    k->outputs = {3};
  }
  return k;
}

}  // namespace

TEST_CASE("plans: the counts and packs of filters on the same inputs run as one group") {
  ExecFixture fx;
  auto& T = fx.T;
  const Type* si = T.seq(T.int_());
  FnBuilder b("main", T.int_(), T.pair(T.seq(si), T.seq(si)));
  Block& body = b.fn.body;
  // One instance holding [[5, 1, 7], [], [3, 3]]; each element against its segment's pivot 3.
  VarId one = b.konst(body, 1);
  VarId nested = b.lit(body, T.seq(si), seq({ints({5, 1, 7}), ints({}), ints({3, 3})}), one);
  VarId segs = b.unary(body, Op::Elements, si, nested);
  VarId lens = b.unary(body, Op::Lengths, T.int_(), segs);
  VarId e = b.unary(body, Op::Elements, T.int_(), segs);
  VarId pivots = b.instances(body, si, ints({3, 3, 3}));
  VarId p = b.vec(T.int_());
  b.emit(Op::Replicate, p, {pivots, lens});
  auto filter = [&](PrimId cmp) {
    VarId n = b.vec(T.int_());
    Stmt& r = b.emit(Op::ReduceKernel, n, {lens, e, p});
    r.prim = PrimId::Sum;
    r.kernel = compare(T, cmp, true);
    VarId kept = b.vec(T.int_());
    b.emit(Op::PackKernel, kept, {e, e, p}).kernel = compare(T, cmp, false);
    VarId s = b.vec(si);
    b.emit(Op::Nest, s, {n, kept});
    return s;
  };
  VarId lt = filter(PrimId::Lt), gt = filter(PrimId::Gt);
  VarId t = b.vec(T.pair(si, si));
  b.emit(Op::Tuple, t, {lt, gt});
  VarId three = b.lit(body, T.int_(), I(3), one);
  VarId w = b.vec(T.seq(T.pair(si, si)));
  b.emit(Op::Nest, w, {three, t});
  // Unwrap into the pair of [[int]] the function returns.
  VarId ws = b.unary(body, Op::Elements, T.pair(si, si), w);
  VarId a = b.unary(body, Op::First, si, ws);
  VarId c = b.unary(body, Op::Second, si, ws);
  VarId wa = b.vec(T.seq(si)), wc = b.vec(T.seq(si));
  b.emit(Op::Nest, wa, {three, a});
  b.emit(Op::Nest, wc, {three, c});
  VarId r = b.vec(T.pair(T.seq(si), T.seq(si)));
  b.emit(Op::Tuple, r, {wa, wc});
  body.result = r;

  flat::Program prog;
  prog.functions.push_back(std::move(b.fn));
  FilterPlan plan(prog);
  CHECK(plan.group_count() == 1);
  const Block& pb = prog.functions[0].body;
  int leaders = 0, members = 0;
  for (const Stmt& s : pb.stmts)
    if (const FilterPlan::Role* role = plan.role(s)) (role->leads ? leaders : members)++;
  CHECK(leaders == 1);
  CHECK(members == 3);
  Value want = Value::pair(seq({ints({1}), ints({}), ints({})}), seq({ints({5, 7}), ints({}), ints({})}));
  auto res = fx.run(prog);
  REQUIRE(res.ok);
  CHECK(lang::values_equal(res.value, want));
}

TEST_CASE("plans: a ++ chain over elts is one copy, and reports the first elt's error") {
  ExecFixture fx;
  auto& T = fx.T;
  const Type* si = T.seq(T.int_());
  auto build = [&](int64_t first, int64_t second) {
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
    VarId j = b.lit(body, T.int_(), I(second), two);
    VarId y = b.prim(body, PrimId::Elt, si, {m, j}, {}, lang::Span{2, 20, 21});
    VarId r = b.prim(body, PrimId::Append, si, {xm, y});
    VarId twos = b.lit(body, T.int_(), I(2), one);
    VarId w = b.vec(T.seq(si));
    b.emit(Op::Nest, w, {twos, r});
    body.result = w;
    (void)one;
    return std::move(b.fn);
  };
  flat::Program prog;
  prog.functions.push_back(build(0, 1));
  AppendPlan plan(prog);
  int roots = 0, skipped = 0;
  for (const Stmt& s : prog.functions[0].body.stmts)
    if (const AppendPlan::Role* role = plan.role(s)) (role->skipped ? skipped : roots)++;
  CHECK(roots == 1);
  CHECK(skipped == 3);
  CHECK(lang::values_equal(fx.ok(build(0, 1)), seq({ints({1, 0, 2, 3}), ints({9, 9, 4})})));
  CHECK(lang::values_equal(fx.ok(build(1, 0)), seq({ints({2, 3, 0, 1}), ints({4, 9, 9})})));
  // Both elts fail: the first statement's error, as in statement order.
  auto r = fx.run(build(2, 5));
  REQUIRE(!r.ok);
  CHECK(r.error.message == "Sequence reference (a[i]) out of bounds.");
  CHECK(r.error.span.begin == 10);
  r = fx.run(build(0, 2));
  REQUIRE(!r.ok);
  CHECK(r.error.span.begin == 20);
}
