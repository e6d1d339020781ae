// CpuExecutor: every Flat IR op on hand-built programs, recursion, errors and output.
#include <doctest/doctest.h>

#include "flatten/passes/recursion_to_loops.h"
#include "tests/unit/exec/exec_helpers.h"

using namespace ndp;
using namespace ndp::test::exec_test;

namespace {

const lang::Span kSpan{2, 40, 45};

bool eq(const Value& a, const Value& b) { return lang::values_equal(a, b); }

}  // namespace

TEST_CASE("exec: lit, const, length") {
  ExecFixture fx;
  auto& T = fx.T;
  FnBuilder b("main", T.int_(), T.seq(T.int_()));
  VarId n = b.host();
  b.emit(Op::Length, n, {b.fn.param});
  b.fn.body.result = b.lit(b.fn.body, T.seq(T.int_()), ints({1, 2, 3}), n);
  CHECK(eq(fx.ok(std::move(b.fn)), ints({1, 2, 3})));
}

TEST_CASE("exec: global values, undefined globals and function globals") {
  ExecFixture fx;
  auto& T = fx.T;
  auto* g = fx.prog.new_global(lang::core::Global::Kind::Variable, "table");
  g->set_value(ints({4, 5}));
  auto* u = fx.prog.new_global(lang::core::Global::Kind::Variable, "later");
  auto* f = fx.prog.new_global(lang::core::Global::Kind::Function, "fun");
  auto program = [&](uint32_t id, const Type* t) {
    FnBuilder b("main", T.int_(), t);
    VarId one = b.konst(b.fn.body, 1);
    VarId d = b.vec(t);
    b.emit(Op::Global, d, {one}, kSpan).global = id;
    b.fn.body.result = d;
    return std::move(b.fn);
  };
  (void)g;
  (void)u;
  (void)f;
  CHECK(eq(fx.ok(program(0, T.seq(T.int_()))), ints({4, 5})));
  auto r = fx.run(program(1, T.int_()));
  CHECK(!r.ok);
  CHECK(r.error.message == "LATER is undefined.");
  CHECK(r.error.span.begin == kSpan.begin);
  r = fx.run(program(2, T.fn(T.int_(), T.int_())));
  CHECK(!r.ok);
  CHECK(r.error.message == "functions as values are not supported by the cpu backend");
  CHECK(r.error.span.begin == kSpan.begin);
}

TEST_CASE("exec: empty, tuple, first, second") {
  ExecFixture fx;
  auto& T = fx.T;
  const Type* ps = T.pair(T.int_(), T.seq(T.bool_()));
  FnBuilder b("main", T.int_(), ps);
  VarId one = b.konst(b.fn.body, 1);
  VarId e = b.vec(T.seq(T.bool_()));
  b.emit(Op::Empty, e, {one}).type = T.seq(T.bool_());
  VarId t = b.vec(ps);
  b.emit(Op::Tuple, t, {b.fn.param, e});
  VarId a = b.unary(b.fn.body, Op::First, T.int_(), t);
  VarId s = b.unary(b.fn.body, Op::Second, T.seq(T.bool_()), t);
  VarId t2 = b.vec(ps);
  b.emit(Op::Tuple, t2, {a, s});
  b.fn.body.result = t2;
  CHECK(eq(fx.ok(std::move(b.fn)), Value::pair(I(0), seq({}))));
}

TEST_CASE("exec: elements, lengths, nest") {
  ExecFixture fx;
  auto& T = fx.T;
  const Type* si = T.seq(T.int_());
  FnBuilder b("main", T.int_(), T.pair(T.seq(T.int_()), T.seq(si)));
  Block& body = b.fn.body;
  VarId rows = b.instances(body, T.seq(si), seq({ints({1, 2}), ints({}), ints({3})}));  // 3 instances of [int]
  VarId lens = b.unary(body, Op::Lengths, T.int_(), rows);
  VarId flat = b.unary(body, Op::Elements, T.int_(), rows);  // 3 instances of int
  VarId again = b.vec(si);
  b.emit(Op::Nest, again, {lens, flat});
  VarId wl = b.wrap(body, T, lens, 3);
  VarId wa = b.wrap(body, T, again, 3);
  VarId r = b.vec(b.fn.result_type);
  b.emit(Op::Tuple, r, {wl, wa});
  body.result = r;
  CHECK(eq(fx.ok(std::move(b.fn)), Value::pair(ints({2, 0, 1}), seq({ints({1, 2}), ints({}), ints({3})}))));
}

TEST_CASE("exec: replicate, pack, merge, seqlit") {
  ExecFixture fx;
  auto& T = fx.T;
  const Type* si = T.seq(T.int_());
  const Type* ss = T.seq(si);
  FnBuilder b("main", T.int_(), T.pair(T.pair(si, si), T.pair(si, ss)));
  Block& body = b.fn.body;
  VarId xs = b.instances(body, si, ints({7, 8, 9}));
  VarId counts = b.instances(body, si, ints({2, 0, 1}));
  VarId rep = b.vec(T.int_());
  b.emit(Op::Replicate, rep, {xs, counts});
  VarId flags = b.instances(body, T.seq(T.bool_()), seq({B(true), B(false), B(true)}));
  VarId packed = b.vec(T.int_());
  b.emit(Op::Pack, packed, {xs, flags});
  VarId fs = b.instances(body, si, ints({-1}));
  VarId merged = b.vec(T.int_());
  b.emit(Op::Merge, merged, {flags, packed, fs});
  VarId sl = b.vec(si);
  b.emit(Op::SeqLit, sl, {xs, counts});
  VarId w1 = b.wrap(body, T, rep, 3), w2 = b.wrap(body, T, packed, 2), w3 = b.wrap(body, T, merged, 3),
        w4 = b.wrap(body, T, sl, 3);
  VarId p1 = b.vec(T.pair(si, si)), p2 = b.vec(T.pair(si, ss)), r = b.vec(b.fn.result_type);
  b.emit(Op::Tuple, p1, {w1, w2});
  b.emit(Op::Tuple, p2, {w3, w4});
  b.emit(Op::Tuple, r, {p1, p2});
  body.result = r;
  Value expect = Value::pair(Value::pair(ints({7, 7, 9}), ints({7, 9})),
                             Value::pair(ints({7, -1, 9}), seq({ints({7, 2}), ints({8, 0}), ints({9, 1})})));
  CHECK(eq(fx.ok(std::move(b.fn)), expect));
}

TEST_CASE("exec: check_lengths reports with the statement's span") {
  ExecFixture fx;
  auto& T = fx.T;
  const Type* si = T.seq(T.int_());
  auto program = [&](Value second) {
    FnBuilder b("main", T.int_(), T.int_());
    VarId a = b.instances(b.fn.body, T.seq(si), seq({ints({1}), ints({1, 2})}));
    VarId c = b.instances(b.fn.body, T.seq(si), std::move(second));
    b.emit(Op::CheckLengths, 0, {a, c}, kSpan);
    b.fn.body.result = b.fn.param;
    return std::move(b.fn);
  };
  CHECK(eq(fx.ok(program(seq({ints({5}), ints({6, 7})}))), I(0)));
  auto r = fx.run(program(seq({ints({5}), ints({6})})));
  CHECK(!r.ok);
  CHECK(r.error.message == "Length mismatch in an apply-to-each: lengths 2 and 1.");
  CHECK(r.error.span.begin == kSpan.begin);
}

TEST_CASE("exec: prim errors name the statement and the first failing instance") {
  ExecFixture fx;
  auto& T = fx.T;
  FnBuilder b("main", T.int_(), T.seq(T.int_()));
  VarId xs = b.instances(b.fn.body, T.seq(T.int_()), ints({1, 2, 3}));
  VarId ys = b.instances(b.fn.body, T.seq(T.int_()), ints({1, 0, 1}));
  VarId q = b.prim(b.fn.body, PrimId::Div, T.int_(), {xs, ys}, {T.int_()}, kSpan);
  b.fn.body.result = b.wrap(b.fn.body, T, q, 3);
  auto r = fx.run(std::move(b.fn));
  CHECK(!r.ok);
  CHECK(r.error.message == "Divide by zero.");
  CHECK(r.error.span.file == kSpan.file);
  CHECK(r.error.span.begin == kSpan.begin);
}

TEST_CASE("exec: output primitives run once per instance, in order") {
  ExecFixture fx;
  auto& T = fx.T;
  FnBuilder b("main", T.int_(), T.seq(T.bool_()));
  VarId s = b.instances(b.fn.body, T.seq(T.string()), seq({Value::string("ab"), Value::string("c"), Value::string("d")}));
  VarId ok = b.prim(b.fn.body, PrimId::PrintString, T.bool_(), {s});
  b.fn.body.result = b.wrap(b.fn.body, T, ok, 3);
  CHECK(eq(fx.ok(std::move(b.fn)), seq({B(true), B(true), B(true)})));
  CHECK(fx.output() == "abcd");
}

namespace {

/// sum_to(x) = if x > 0 then x + sum_to(x - 1) else 0, lifted as the vectoriser does it: each
/// branch on the packed subset that takes it (`nothing` when it has none), then a merge.
flatten::Function sum_to(lang::TypeContext& T) {
  FnBuilder b("sum_to", T.int_(), T.int_());
  Block& body = b.fn.body;
  VarId n = b.host();
  b.emit(Op::Length, n, {b.fn.param});
  VarId zero = b.lit(body, T.int_(), I(0), n);
  VarId flags = b.prim(body, PrimId::Gt, T.bool_(), {b.fn.param, zero}, {T.int_()});
  VarId notf = b.prim(body, PrimId::Not, T.bool_(), {flags}, {T.bool_()});
  VarId c_then = b.host("c");
  b.emit(Op::Count, c_then, {flags});
  VarId c_else = b.host("c");
  b.emit(Op::Count, c_else, {notf});
  auto branch = [&](VarId count, auto&& fill) {
    VarId r = b.vec(T.int_(), "branch");
    Stmt& s = b.emit(Op::IfNonEmpty, r, {count});
    s.then_block = std::make_unique<Block>();
    s.else_block = std::make_unique<Block>();
    s.then_block->result = fill(*s.then_block);
    VarId none = b.vec(T.int_(), "none");
    b.emit(*s.else_block, Op::Nothing, none, {});
    s.else_block->result = none;
    return r;
  };
  VarId t = branch(c_then, [&](Block& th) {
    VarId xs = b.vec(T.int_());
    b.emit(th, Op::Pack, xs, {b.fn.param, flags});
    VarId m = b.host();
    b.emit(th, Op::Length, m, {xs});
    VarId one = b.lit(th, T.int_(), I(1), m);
    VarId xm1 = b.prim(th, PrimId::Sub, T.int_(), {xs, one}, {T.int_()});
    VarId rec = b.vec(T.int_());
    b.emit(th, Op::Call, rec, {xm1}).func = 1;
    return b.prim(th, PrimId::Add, T.int_(), {xs, rec}, {T.int_()});
  });
  VarId e = branch(c_else, [&](Block& el) {
    VarId zs = b.vec(T.int_());
    b.emit(el, Op::Pack, zs, {zero, notf});
    return zs;
  });
  VarId merged = b.vec(T.int_());
  b.emit(Op::Merge, merged, {flags, t, e});
  body.result = merged;
  return std::move(b.fn);
}

flatten::Program sum_to_program(lang::TypeContext& T, Value xs, int64_t k) {
  FnBuilder b("main", T.int_(), T.seq(T.int_()));
  VarId v = b.instances(b.fn.body, T.seq(T.int_()), std::move(xs));
  VarId r = b.vec(T.int_());
  b.emit(Op::Call, r, {v}).func = 1;
  b.fn.body.result = b.wrap(b.fn.body, T, r, k);
  flatten::Program p;
  p.functions.push_back(std::move(b.fn));
  p.functions.push_back(sum_to(T));
  return p;
}

}  // namespace

TEST_CASE("exec: recursive lifted calls, if_nonempty and merge") {
  ExecFixture fx;
  auto& T = fx.T;
  flatten::Program p = sum_to_program(T, ints({3, 0, 5, 1}), 4);
  CHECK(flatten::verify(p).empty());
  auto r = fx.run(p);
  REQUIRE(r.ok);
  CHECK(eq(r.value, ints({6, 0, 15, 1})));

  flatten::Program none = sum_to_program(T, ints({}), 0);
  r = fx.run(none);
  REQUIRE(r.ok);
  CHECK(eq(r.value, ints({})));
}

TEST_CASE("exec: deep recursion runs on the big stack") {
  ExecFixture fx;
  flatten::Program p = sum_to_program(fx.T, ints({20000}), 1);
  auto r = fx.run(p);
  REQUIRE(r.ok);
  CHECK(eq(r.value, ints({200010000})));
}

TEST_CASE("exec: recursion as loops (while) gives the same results") {
  ExecFixture fx;
  flatten::Program p = flatten::recursion_to_loops(sum_to_program(fx.T, ints({3, 0, 5, 1, 2}), 5));
  REQUIRE(p.functions[1].body.stmts.size() == 1);
  REQUIRE(p.functions[1].body.stmts[0].op == Op::Recurse);
  CHECK(flatten::verify(p).empty());
  auto r = fx.run(p);
  REQUIRE(r.ok);
  CHECK(eq(r.value, ints({6, 0, 15, 1, 3})));
  flatten::Program deep = flatten::recursion_to_loops(sum_to_program(fx.T, ints({100000, 7}), 2));
  r = fx.run(deep);
  REQUIRE(r.ok);
  CHECK(eq(r.value, ints({5000050000, 28})));
  flatten::Program none = flatten::recursion_to_loops(sum_to_program(fx.T, ints({}), 0));
  r = fx.run(none);
  REQUIRE(r.ok);
  CHECK(eq(r.value, ints({})));
}

TEST_CASE("exec: nothing, retype, concat, slice") {
  ExecFixture fx;
  auto& T = fx.T;
  lang::DataDef* def = T.new_datadef("point");
  def->fields = T.pair(T.int_(), T.float_());
  const Type* pt = T.data(def, {});
  const Type* si = T.seq(T.int_());
  FnBuilder b("main", T.int_(), T.pair(T.seq(pt), T.pair(si, si)));
  Block& body = b.fn.body;
  VarId xs = b.instances(body, si, ints({1, 2, 3}));
  VarId m = b.host();
  b.emit(Op::Length, m, {xs});
  VarId fl = b.lit(body, T.float_(), F(0.5), m);
  VarId fields = b.vec(def->fields);
  b.emit(Op::Tuple, fields, {xs, fl});
  VarId pts = b.unary(body, Op::Retype, pt, fields);
  VarId back = b.unary(body, Op::Retype, def->fields, pts);
  VarId firsts = b.unary(body, Op::First, T.int_(), back);
  VarId none = b.vec(T.int_());
  b.emit(Op::Nothing, none, {});
  VarId both = b.vec(T.int_());
  b.emit(Op::Concat, both, {firsts, none});
  VarId twice = b.vec(T.int_());
  b.emit(Op::Concat, twice, {both, xs});
  VarId one = b.konst(body, 1), four = b.konst(body, 4);
  VarId mid = b.vec(T.int_());
  b.emit(Op::Slice, mid, {twice, one, four});
  VarId w1 = b.wrap(body, T, pts, 3), w2 = b.wrap(body, T, twice, 6), w3 = b.wrap(body, T, mid, 4);
  VarId p2 = b.vec(T.pair(si, si)), r = b.vec(b.fn.result_type);
  b.emit(Op::Tuple, p2, {w2, w3});
  b.emit(Op::Tuple, r, {w1, p2});
  body.result = r;
  flatten::Program p;
  p.functions.push_back(std::move(b.fn));
  CHECK(flatten::verify(p).empty());
  auto res = fx.run(p);
  REQUIRE(res.ok);
  auto point = [&](int64_t x) { return Value::data(def, Value::pair(I(x), F(0.5))); };
  CHECK(eq(res.value, Value::pair(seq({point(1), point(2), point(3)}),
                                  Value::pair(ints({1, 2, 3, 1, 2, 3}), ints({2, 3, 1, 2})))));
}

TEST_CASE("exec: time pairs the value with the seconds") {
  ExecFixture fx;
  auto& T = fx.T;
  const Type* pt = T.pair(T.int_(), T.float_());
  FnBuilder b("main", T.int_(), pt);
  VarId r = b.vec(pt);
  Stmt& s = b.emit(Op::Time, r, {});
  s.then_block = std::make_unique<Block>();
  s.then_block->result = b.prim(*s.then_block, PrimId::Negate, T.int_(), {b.fn.param}, {T.int_()});
  b.fn.body.result = r;
  Value v = fx.ok(std::move(b.fn));
  CHECK(v.first().as_int() == 0);
  CHECK(v.second().as_float() >= 0.0);
}

TEST_CASE("exec: errors in library statements surface at the user's call") {
  lang::core::Program prog;
  auto& T = prog.types;
  std::FILE* out = std::tmpfile();
  const lang::Span lib{1, 3, 4}, user{2, 10, 12};
  FnBuilder f("lib_div", T.int_(), T.int_());
  f.fn.body.result = f.prim(f.fn.body, PrimId::Div, T.int_(), {f.fn.param, f.fn.param}, {T.int_()}, lib);
  FnBuilder m("main", T.int_(), T.int_());
  VarId r = m.vec(T.int_());
  m.emit(Op::Call, r, {m.fn.param}, user).func = 1;
  m.fn.body.result = r;
  flatten::Program p;
  p.functions.push_back(std::move(m.fn));
  p.functions.push_back(std::move(f.fn));
  exec::cpu::CpuExecutor ex(prog, out);
  auto res = ex.run(p);
  CHECK(res.error.span.file == 1);
  ex.set_library_files(1);
  res = ex.run(p);
  CHECK(!res.ok);
  CHECK(res.error.message == "Divide by zero.");
  CHECK(res.error.span.file == 2);
  CHECK(res.error.span.begin == 10);
  std::fclose(out);
}

TEST_CASE("exec: literals in many instances are uniform; count, pack, seqlit, empty and check_lengths use it") {
  ExecFixture fx;
  auto& T = fx.T;
  const Type* si = T.seq(T.int_());
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{70000}}) {
    CAPTURE(n);
    // k = count(lit true in n); p = pack(lit 4 in n, lit true/false in n); the instances of
    // seqlit(p, p) (regular [4, 4] each) with their lengths, and an empty sequence per instance.
    FnBuilder b("main", T.int_(), T.pair(T.seq(T.seq(si)), T.pair(T.seq(T.int_()), T.seq(si))));
    Block& body = b.fn.body;
    VarId nn = b.konst(body, n);
    VarId yes = b.lit(body, T.bool_(), B(true), nn);
    VarId no = b.lit(body, T.bool_(), B(false), nn);
    VarId four = b.lit(body, T.int_(), I(4), nn);
    VarId k = b.host();
    b.emit(Op::Count, k, {yes});
    VarId kept = b.vec(T.int_()), dropped = b.vec(T.int_());
    b.emit(Op::Pack, kept, {four, yes});
    b.emit(Op::Pack, dropped, {four, no});
    VarId nothing = b.vec(si);  // one empty sequence per kept instance: [] ++ dropped's none
    b.emit(Op::Empty, nothing, {k}).type = si;
    VarId pairs = b.vec(si);
    b.emit(Op::SeqLit, pairs, {kept, kept});
    VarId single = b.vec(si);
    b.emit(Op::SeqLit, single, {kept});
    b.emit(Op::CheckLengths, 0, {pairs, pairs});
    VarId lens = b.unary(body, Op::Lengths, T.int_(), pairs);
    VarId e = b.vec(si);
    b.emit(Op::Empty, e, {k}).type = si;
    VarId r1 = b.wrap(body, T, pairs, n), r2 = b.wrap(body, T, lens, n), r3 = b.wrap(body, T, e, n);
    VarId p = b.vec(T.pair(T.seq(T.int_()), T.seq(si))), r = b.vec(b.fn.result_type);
    b.emit(Op::Tuple, p, {r2, r3});
    b.emit(Op::Tuple, r, {r1, p});
    body.result = r;
    std::vector<Value> want_pairs(static_cast<size_t>(n), ints({4, 4})), want_lens(static_cast<size_t>(n), I(2)),
        want_empty(static_cast<size_t>(n), ints({}));
    CHECK(eq(fx.ok(std::move(b.fn)),
             Value::pair(seq(want_pairs), Value::pair(seq(want_lens), seq(want_empty)))));
    if (n == 0) continue;
    // check_lengths of regular vectors of different lengths fails with its span.
    FnBuilder c("main", T.int_(), T.int_());
    VarId nn2 = c.konst(c.fn.body, n);
    VarId x = c.lit(c.fn.body, T.int_(), I(1), nn2);
    VarId two = c.vec(si), three = c.vec(si);
    c.emit(Op::SeqLit, two, {x, x});
    c.emit(Op::SeqLit, three, {x, x, x});
    c.emit(Op::CheckLengths, 0, {two, three}, kSpan);
    c.fn.body.result = c.fn.param;
    auto res = fx.run(std::move(c.fn));
    CHECK(!res.ok);
    CHECK(res.error.message == "Length mismatch in an apply-to-each: lengths 2 and 3.");
    CHECK(res.error.span.begin == kSpan.begin);
  }
}
