// flatten/passes/group_filters (Note [Filter groups] in flatten/flat_ir.h): which filter
// consumers become one FilterGroup statement and which stay, and that the cpu backend's run of
// the group gives the statements' own results.
#include <doctest/doctest.h>

#include "flatten/passes/group_filters.h"
#include "tests/unit/exec/exec_helpers.h"

using namespace ndp;
using namespace ndp::test::exec_test;
using flatten::FilterGroup;

namespace {

/// A kernel body over two int inputs: `cmp(in0, in1)`, then btoi of it when `count`.
std::shared_ptr<flatten::KernelBody> compare(lang::TypeContext& T, PrimId cmp, bool count) {
  auto k = std::make_shared<flatten::KernelBody>();
  k->inputs = {T.int_(), T.int_()};
  flatten::KernelNode a, b, c;
  a.kind = b.kind = flatten::KernelNode::Kind::Input;
  a.type = b.type = T.int_();
  b.input = 1;
  c.kind = flatten::KernelNode::Kind::Prim;
  c.prim = cmp;
  c.args = {0, 1};
  c.type = T.bool_();
  k->nodes = {a, b, c};
  k->outputs = {2};
  if (count) {
    flatten::KernelNode d;
    d.kind = flatten::KernelNode::Kind::Prim;
    d.prim = PrimId::Btoi;
    d.args = {2};
    d.type = T.int_();
    k->nodes.push_back(d);
    k->outputs = {3};
  }
  return k;
}

/// One instance holding the segments [[5, 1, 7], [], [3, 3]], seen from inside: their lengths,
/// their elements e and each element's pivot p (3).
struct Segments {
  VarId one, segs, lens, e, p;
};

Segments segments(FnBuilder& b, lang::TypeContext& T) {
  const Type* si = T.seq(T.int_());
  Block& body = b.fn.body;
  Segments s;
  s.one = b.konst(body, 1);
  VarId nested = b.lit(body, T.seq(si), seq({ints({5, 1, 7}), ints({}), ints({3, 3})}), s.one);
  s.segs = b.unary(body, Op::Elements, si, nested);
  s.lens = b.unary(body, Op::Lengths, T.int_(), s.segs);
  s.e = b.unary(body, Op::Elements, T.int_(), s.segs);
  VarId pivots = b.instances(body, si, ints({3, 3, 3}));
  s.p = b.vec(T.int_());
  b.emit(Op::Replicate, s.p, {pivots, s.lens});
  return s;
}

/// n = reduce_kernel sum(lens; e, p) btoi(cmp(e, p)).
VarId count_of(FnBuilder& b, lang::TypeContext& T, const Segments& s, PrimId cmp) {
  VarId n = b.vec(T.int_(), "n");
  Stmt& r = b.emit(Op::ReduceKernel, n, {s.lens, s.e, s.p});
  r.prim = PrimId::Sum;
  r.kernel = compare(T, cmp, true);
  return n;
}

/// kept = pack_kernel(values; e, p) cmp(e, p).
VarId pack_of(FnBuilder& b, lang::TypeContext& T, const Segments& s, PrimId cmp, VarId values) {
  VarId kept = b.vec(T.int_(), "kept");
  b.emit(Op::PackKernel, kept, {values, s.e, s.p}).kernel = compare(T, cmp, false);
  return kept;
}

std::vector<Op> ops(const Block& b) {
  std::vector<Op> out;
  for (const Stmt& s : b.stmts) out.push_back(s.op);
  return out;
}

size_t count_op(const Block& b, Op op) {
  size_t n = 0;
  for (const Stmt& s : b.stmts) n += s.op == op;
  return n;
}

flatten::Program program_of(FnBuilder& b) {
  flatten::Program p;
  p.functions.push_back(std::move(b.fn));
  return p;
}

}  // namespace

TEST_CASE("group_filters: the counts and packs of filters on the same inputs become one group") {
  ExecFixture fx;
  auto& T = fx.T;
  const Type* si = T.seq(T.int_());
  FnBuilder b("main", T.int_(), T.pair(T.seq(si), T.seq(si)));
  Block& body = b.fn.body;
  Segments s = segments(b, T);
  auto filter = [&](PrimId cmp) {
    VarId n = count_of(b, T, s, cmp);
    VarId kept = pack_of(b, T, s, cmp, s.e);
    VarId r = b.vec(si);
    b.emit(Op::Nest, r, {n, kept});
    return r;
  };
  VarId lt = filter(PrimId::Lt), gt = filter(PrimId::Gt);
  VarId t = b.vec(T.pair(si, si));
  b.emit(Op::Tuple, t, {lt, gt});
  VarId three = b.lit(body, T.int_(), I(3), s.one);
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

  flatten::Program before = program_of(b);
  Value want = Value::pair(seq({ints({1}), ints({}), ints({})}), seq({ints({5, 7}), ints({}), ints({})}));
  auto unfused = fx.run(before);
  REQUIRE(unfused.ok);
  CHECK(lang::values_equal(unfused.value, want));

  flatten::Program p = flatten::group_filters(std::move(before));
  CHECK(flatten::verify(p).empty());
  const Block& pb = p.functions[0].body;
  REQUIRE(count_op(pb, Op::FilterGroup) == 1);
  CHECK(count_op(pb, Op::ReduceKernel) == 0);
  CHECK(count_op(pb, Op::PackKernel) == 0);
  const Stmt* g = nullptr;
  for (const Stmt& st : pb.stmts)
    if (st.op == Op::FilterGroup) g = &st;
  // Members in statement order (count <, pack <, count >, pack >), two distinct predicates.
  REQUIRE(g->filters->members.size() == 4);
  CHECK(g->outs.size() == 4);
  CHECK(g->filters->inputs == 2);
  CHECK(flatten::kernel_inputs(*g) == std::vector<VarId>{s.e, s.p});
  CHECK(std::vector<VarId>(g->uses.begin() + 2, g->uses.end()) == std::vector<VarId>{s.lens, s.e, s.lens, s.e});
  REQUIRE(g->kernel != nullptr);
  CHECK(g->kernel->outputs.size() == 2);
  const auto& m = g->filters->members;
  CHECK((m[0].kind == FilterGroup::Kind::Count && m[1].kind == FilterGroup::Kind::Pack));
  CHECK((m[0].predicate == 0 && m[1].predicate == 0 && m[2].predicate == 1 && m[3].predicate == 1));
  CHECK(flatten::print_program(p).find("filter_group(") != std::string::npos);

  auto res = fx.run(p);
  REQUIRE(res.ok);
  CHECK(lang::values_equal(res.value, want));
}

TEST_CASE("group_filters: a lone consumer stays as it is, and so do consumers of other inputs") {
  lang::core::Program prog;
  auto& T = prog.types;
  FnBuilder b("main", T.int_(), T.int_());
  Segments s = segments(b, T);
  VarId n = count_of(b, T, s, PrimId::Lt);
  // Same predicate, other inputs (p, e): no group with the count.
  VarId kept = b.vec(T.int_(), "kept");
  b.emit(Op::PackKernel, kept, {s.e, s.p, s.e}).kernel = compare(T, PrimId::Lt, false);
  b.fn.body.result = n;
  (void)kept;
  flatten::Program p = program_of(b);
  std::vector<Op> before = ops(p.functions[0].body);
  p = flatten::group_filters(std::move(p));
  CHECK(ops(p.functions[0].body) == before);
}

TEST_CASE("group_filters: a member whose values are defined after the first member starts a group of its own") {
  ExecFixture fx;
  auto& T = fx.T;
  const Type* si = T.seq(T.int_());
  FnBuilder b("main", T.int_(), T.pair(si, T.pair(si, si)));
  Block& body = b.fn.body;
  Segments s = segments(b, T);
  VarId n = count_of(b, T, s, PrimId::Lt);  // a group starts here
  VarId x = b.prim(body, PrimId::Negate, T.int_(), {s.e}, {T.int_()});
  VarId kx = pack_of(b, T, s, PrimId::Lt, x);    // x comes after the count
  VarId ke = pack_of(b, T, s, PrimId::Gt, s.e);  // joins the group kx starts
  VarId wn = b.wrap(body, T, n, 3), wx = b.wrap(body, T, kx, 1), we = b.wrap(body, T, ke, 2);
  VarId inner = b.vec(T.pair(si, si)), r = b.vec(T.pair(si, T.pair(si, si)));
  b.emit(Op::Tuple, inner, {wx, we});
  b.emit(Op::Tuple, r, {wn, inner});
  body.result = r;

  flatten::Program p = flatten::group_filters(program_of(b));
  CHECK(flatten::verify(p).empty());
  const Block& pb = p.functions[0].body;
  CHECK(count_op(pb, Op::ReduceKernel) == 1);  // the count stays alone
  CHECK(count_op(pb, Op::PackKernel) == 0);
  REQUIRE(count_op(pb, Op::FilterGroup) == 1);
  size_t x_at = 0, group_at = 0;
  for (size_t i = 0; i < pb.stmts.size(); ++i) {
    const Stmt& st = pb.stmts[i];
    if (st.op == Op::Prim && st.dst == x) x_at = i;
    if (st.op != Op::FilterGroup) continue;
    group_at = i;
    CHECK(st.outs == std::vector<VarId>{kx, ke});
    REQUIRE(st.kernel != nullptr);
    CHECK(st.kernel->outputs.size() == 2);  // < and >
  }
  CHECK(x_at < group_at);  // the group sits where kx was
  // Counts of e < 3 per segment; -e where e < 3; e where e > 3.
  auto res = fx.run(p);
  REQUIRE(res.ok);
  CHECK(lang::values_equal(res.value, Value::pair(ints({1, 0, 0}), Value::pair(ints({-1}), ints({5, 7})))));
}

TEST_CASE("group_filters: packs by one flags variable form a group without a kernel") {
  ExecFixture fx;
  auto& T = fx.T;
  const Type* si = T.seq(T.int_());
  FnBuilder b("main", T.int_(), T.pair(si, si));
  Block& body = b.fn.body;
  VarId one = b.konst(body, 1);
  VarId a = b.instances(body, si, ints({4, 5, 6}));
  VarId c = b.instances(body, si, ints({7, 8, 9}));
  VarId flags = b.instances(body, T.seq(T.bool_()), seq({B(true), B(false), B(true)}));
  VarId pa = b.vec(T.int_()), pc = b.vec(T.int_());
  b.emit(Op::Pack, pa, {a, flags});
  b.emit(Op::Pack, pc, {c, flags});
  VarId two = b.lit(body, T.int_(), I(2), one);
  VarId sa = b.vec(si), sc = b.vec(si);
  b.emit(Op::Nest, sa, {two, pa});
  b.emit(Op::Nest, sc, {two, pc});
  VarId r = b.vec(T.pair(si, si));
  b.emit(Op::Tuple, r, {sa, sc});
  body.result = r;

  flatten::Program p = flatten::group_filters(program_of(b));
  CHECK(flatten::verify(p).empty());
  const Block& pb = p.functions[0].body;
  CHECK(count_op(pb, Op::Pack) == 0);
  REQUIRE(count_op(pb, Op::FilterGroup) == 1);
  for (const Stmt& st : pb.stmts) {
    if (st.op != Op::FilterGroup) continue;
    CHECK(st.kernel == nullptr);
    REQUIRE(st.filters->members.size() == 2);
    CHECK(st.filters->members[0].predicate == -1);  // the group's input 0: the flags
    CHECK(st.filters->members[1].predicate == -1);
  }
  auto res = fx.run(p);
  REQUIRE(res.ok);
  CHECK(lang::values_equal(res.value, Value::pair(ints({4, 6}), ints({7, 9}))));
}
