// fuse_elementwise: which chains of elementwise primitives become one Kernel statement, which
// values it outputs, and which literals become its constants. (That the fused programs give the
// unfused results is checked where kernels run: exec/cpu/test_kernels.cpp.)
#include <doctest/doctest.h>

#include <optional>
#include <set>
#include <string>

#include "flatten/flat_ir.h"
#include "flatten/passes/fuse_elementwise.h"
#include "lang/value.h"
#include "tests/unit/flatten/passes/elementwise_chains.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

TEST_CASE("fuse: a chain of five elementwise ops becomes one kernel") {
  lang::TypeContext T;
  Chain c = five_op_chain(T);
  flatten::Program p = flatten::fuse_elementwise(program_of(make_function(T, c, 5, 1)));
  CHECK(flatten::verify(p).empty());
  const Block& body = p.functions[0].body;
  auto kernels = stmts_of(body, Op::Kernel);
  REQUIRE(kernels.size() == 1);
  CHECK(stmts_of(body, Op::Prim).empty());
  CHECK(prim_nodes(*kernels[0]->kernel) == 5);
  CHECK(kernels[0]->uses.size() == 4);
  CHECK(kernels[0]->outs.size() == 1);  // the intermediate values are read only inside
  CHECK(p.functions[0].vars[kernels[0]->dst].type == T.bool_());
  std::string printed = flatten::print_program(p);
  CHECK(printed.find("kernel(") != std::string::npos);
  CHECK(printed.find("= <(%") != std::string::npos);
}

TEST_CASE("fuse: primitives that can fail are fused, effects are not") {
  lang::TypeContext T;
  // + * int/ rem - + float sqrt * | rand + : everything up to the square joins one kernel (its
  // nodes that can fail report through the failure record); rand, an effect, stays a primitive,
  // and so does the sum of its result (a group of one).
  FnBuilder b("main", T.int_(), T.int_());
  Block& body = b.fn.body;
  VarId x = b.instances(body, T.seq(T.int_()), ints({1, 2, 3}));
  VarId y = b.instances(body, T.seq(T.int_()), ints({4, 5, 6}));
  VarId s = prim(b, body, PrimId::Add, T.int_(), {x, y});
  VarId m = prim(b, body, PrimId::Mul, T.int_(), {s, y});
  VarId q = prim(b, body, PrimId::Div, T.int_(), {m, x});
  VarId r = prim(b, body, PrimId::Rem, T.int_(), {q, y});
  VarId d = prim(b, body, PrimId::Sub, T.int_(), {r, x});
  VarId e = prim(b, body, PrimId::Add, T.int_(), {d, y});
  VarId fl = prim(b, body, PrimId::ToFloat, T.float_(), {e});
  VarId sq = prim(b, body, PrimId::Sqrt, T.float_(), {fl});
  VarId z = prim(b, body, PrimId::Mul, T.float_(), {sq, sq});
  VarId rd = prim(b, body, PrimId::Rand, T.int_(), {e});  // an effect
  VarId w = prim(b, body, PrimId::Add, T.int_(), {rd, e});
  VarId t = b.vec(T.pair(T.float_(), T.int_()));
  b.emit(body, Op::Tuple, t, {z, w});
  VarId n3 = b.host();
  b.emit(body, Op::Length, n3, {t});
  body.result = b.fn.param;
  flatten::Program p = flatten::fuse_elementwise(program_of(std::move(b.fn)));
  CHECK(flatten::verify(p).empty());
  const Block& out = p.functions[0].body;
  auto kernels = stmts_of(out, Op::Kernel);
  REQUIRE(kernels.size() == 1);
  CHECK(prim_nodes(*kernels[0]->kernel) == 9);
  CHECK(kernels[0]->kernel->can_fail());
  std::multiset<PrimId> left;
  for (const Stmt* s2 : stmts_of(out, Op::Prim)) left.insert(s2->prim);
  CHECK(left == std::multiset<PrimId>{PrimId::Rand, PrimId::Add});
  // Which nodes can fail, at which types.
  CHECK(flatten::kernel_prim_ok(PrimId::Div, {T.float_(), T.float_()}, T.float_()));
  CHECK(!flatten::kernel_prim_ok(PrimId::Div, {T.int_(), T.int_()}, T.int_()));
  CHECK(flatten::kernel_prim_fallible(PrimId::Div, {T.int_(), T.int_()}, T.int_()));
  CHECK(flatten::kernel_prim_fallible(PrimId::ToI64, {T.float_()}, T.int_()));
  CHECK(!flatten::kernel_prim_fallible(PrimId::ToI64, {T.int_()}, T.int_()));
  CHECK(flatten::kernel_prim_ok(PrimId::ToI64, {T.int_()}, T.int_()));
  CHECK(flatten::kernel_prim_fallible(PrimId::CodeChar, {T.int_()}, T.char_()));
  CHECK(flatten::kernel_prim_ok(PrimId::Exp, {T.float_()}, T.float_()));
  CHECK(!flatten::kernel_prim_ok(PrimId::Rand, {T.int_()}, T.int_()));
  CHECK(!flatten::kernel_prim_fallible(PrimId::Rand, {T.int_()}, T.int_()));
}

/// The index of the first statement of `op` in b, or b.stmts.size().
size_t first_at(const Block& b, Op op) {
  for (size_t i = 0; i < b.stmts.size(); ++i)
    if (b.stmts[i].op == op) return i;
  return b.stmts.size();
}

TEST_CASE("fuse: a node that can fail is not delayed past a statement that can fail") {
  lang::TypeContext T;
  // q = x / y; check_lengths(sx, sy); r = q + y: a kernel of {/, +} after the check would report
  // a division by zero after a length mismatch. So the division is not delayed past the check,
  // and the sum, which reads y, is not hoisted above it either (Note [Members hoisted into a
  // kernel]: the check may be the one that y has q's length). Without the check they fuse.
  for (bool check : {true, false}) {
    CAPTURE(check);
    FnBuilder b("main", T.int_(), T.int_());
    Block& body = b.fn.body;
    VarId x = b.instances(body, T.seq(T.int_()), ints({1, 2, 3}));
    VarId y = b.instances(body, T.seq(T.int_()), ints({4, 5, 6}));
    VarId q = prim(b, body, PrimId::Div, T.int_(), {x, y});
    if (check) {
      VarId sx = b.vec(T.seq(T.int_()));
      b.emit(body, Op::Nest, sx, {x, x});
      b.emit(body, Op::CheckLengths, 0, {sx, sx});
    }
    VarId r = prim(b, body, PrimId::Add, T.int_(), {q, y});
    VarId n3 = b.host();
    b.emit(body, Op::Length, n3, {r});
    body.result = b.fn.param;
    flatten::Program p = flatten::fuse_elementwise(program_of(std::move(b.fn)));
    CHECK(flatten::verify(p).empty());
    const Block& out = p.functions[0].body;
    CHECK(stmts_of(out, Op::Kernel).size() == (check ? 0u : 1u));
    CHECK(stmts_of(out, Op::Prim).size() == (check ? 2u : 0u));
  }
}

TEST_CASE("fuse: what a member hoisted into a closed kernel may read") {
  lang::TypeContext T;
  // a = x + x; t = (a, x); then, past the tuple that closed a's group:
  //  - m = a * x reads a and x (defined before the kernel): hoisted, one kernel of {+, *};
  //  - d = a / x can fail: not hoisted (an error would come before the tuple's statement);
  //  - w = a * v, v a literal defined after the kernel but a constant of it: hoisted;
  //  - u = a * y, y a vector defined after the kernel: not hoisted;
  //  - past a length check (which may be the one that x has a's length), a * x is not hoisted,
  //    a * 7 (a literal) is.
  enum class Second { Mul, Div, LitAfter, VecAfter, MulPastCheck, LitPastCheck };
  for (Second second : {Second::Mul, Second::Div, Second::LitAfter, Second::VecAfter, Second::MulPastCheck,
                        Second::LitPastCheck}) {
    CAPTURE(static_cast<int>(second));
    FnBuilder b("main", T.int_(), T.int_());
    Block& body = b.fn.body;
    VarId x = b.instances(body, T.seq(T.int_()), ints({1, 2, 3}));
    VarId a = prim(b, body, PrimId::Add, T.int_(), {x, x});
    b.emit(body, Op::Tuple, b.vec(T.pair(T.int_(), T.int_())), {a, x});
    VarId other = x;
    if (second == Second::MulPastCheck || second == Second::LitPastCheck) {
      VarId sx = b.vec(T.seq(T.int_()));
      b.emit(body, Op::Nest, sx, {x, x});
      b.emit(body, Op::CheckLengths, 0, {sx, sx});
    }
    if (second == Second::LitAfter || second == Second::LitPastCheck) {
      other = b.vec(T.int_());
      b.emit(body, Op::Lit, other, {b.konst(body, 3)}).lit = lang::Value::int_(7);
      body.stmts.back().type = T.int_();
    } else if (second == Second::VecAfter) {
      other = b.instances(body, T.seq(T.int_()), ints({4, 5, 6}));
    }
    VarId r = prim(b, body, second == Second::Div ? PrimId::Div : PrimId::Mul, T.int_(), {a, other});
    b.emit(body, Op::Length, b.host(), {r});
    body.result = b.fn.param;
    flatten::Program p = flatten::fuse_elementwise(program_of(std::move(b.fn)));
    CHECK(flatten::verify(p).empty());
    const Block& out = p.functions[0].body;
    const bool hoisted = second == Second::Mul || second == Second::LitAfter || second == Second::LitPastCheck;
    CHECK(stmts_of(out, Op::Kernel).size() == (hoisted ? 1u : 0u));
    CHECK(stmts_of(out, Op::Prim).size() == (hoisted ? 0u : 2u));
    if (hoisted) CHECK(first_at(out, Op::Kernel) < first_at(out, Op::Tuple));
  }
}

TEST_CASE("fuse: nodes that can fail in independent chains join one kernel, in statement order") {
  lang::TypeContext T;
  // q = x / y; r = sqrt(z); s = r * 2.0; t = q + 1: as two kernels, {/, +} at t and {sqrt, *}
  // at s, sqrt's would run first and report its error before the division's. They become one
  // kernel whose division node comes before its sqrt node.
  FnBuilder b("main", T.int_(), T.int_());
  Block& body = b.fn.body;
  VarId x = b.instances(body, T.seq(T.int_()), ints({1, 2}));
  VarId y = b.instances(body, T.seq(T.int_()), ints({0, 1}));
  VarId z = b.vec(T.float_());
  b.emit(body, Op::Lit, z, {b.konst(body, 2)}).lit = lang::Value::float_(-1.0);
  body.stmts.back().type = T.float_();
  VarId q = prim(b, body, PrimId::Div, T.int_(), {x, y});
  VarId r = prim(b, body, PrimId::Sqrt, T.float_(), {z});
  VarId s = prim(b, body, PrimId::Mul, T.float_(), {r, r});
  VarId t = prim(b, body, PrimId::Add, T.int_(), {q, x});
  VarId pair = b.vec(T.pair(T.float_(), T.int_()));
  b.emit(body, Op::Tuple, pair, {s, t});
  body.result = b.fn.param;
  flatten::Program p = flatten::fuse_elementwise(program_of(std::move(b.fn)));
  CHECK(flatten::verify(p).empty());
  auto kernels = stmts_of(p.functions[0].body, Op::Kernel);
  REQUIRE(kernels.size() == 1);
  CHECK(stmts_of(p.functions[0].body, Op::Prim).empty());
  const auto& nodes = kernels[0]->kernel->nodes;
  size_t div_at = nodes.size(), sqrt_at = nodes.size();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind != flatten::KernelNode::Kind::Prim) continue;
    if (nodes[i].prim == PrimId::Div) div_at = i;
    if (nodes[i].prim == PrimId::Sqrt) sqrt_at = i;
  }
  REQUIRE(div_at < nodes.size());
  REQUIRE(sqrt_at < nodes.size());
  CHECK(div_at < sqrt_at);
}

TEST_CASE("fuse: values read after the group are outputs; reads in between stop the group") {
  lang::TypeContext T;
  auto [fn, s, sel] = read_after_group(T);
  flatten::Program p = flatten::fuse_elementwise(program_of(std::move(fn)));
  CHECK(flatten::verify(p).empty());
  auto kernels = stmts_of(p.functions[0].body, Op::Kernel);
  REQUIRE(kernels.size() == 1);
  std::set<VarId> outs(kernels[0]->outs.begin(), kernels[0]->outs.end());
  CHECK(outs == std::set<VarId>{s, sel});
  CHECK(prim_nodes(*kernels[0]->kernel) == 4);
  // s is read after the kernel (by a tuple), sel by a nested block, m only inside.
  // A read between two ops of a chain ends the group there (the first op's value is needed
  // before the kernel would run), so nothing is delayed past its reader: the second op, which
  // cannot fail, is hoisted to the first's place instead (Note [Members hoisted into a kernel]).
  FnBuilder b2("main", T.int_(), T.int_());
  Block& body2 = b2.fn.body;
  VarId x2 = b2.instances(body2, T.seq(T.int_()), ints({1, 2, 3}));
  VarId a2 = prim(b2, body2, PrimId::Add, T.int_(), {x2, x2});
  b2.emit(body2, Op::Tuple, b2.vec(T.pair(T.int_(), T.int_())), {a2, x2});
  VarId m2 = prim(b2, body2, PrimId::Mul, T.int_(), {a2, x2});
  b2.emit(body2, Op::Tuple, b2.vec(T.pair(T.int_(), T.int_())), {m2, x2});
  body2.result = b2.fn.param;
  flatten::Program p2 = flatten::fuse_elementwise(program_of(std::move(b2.fn)));
  CHECK(flatten::verify(p2).empty());
  {
    auto k2 = stmts_of(p2.functions[0].body, Op::Kernel);
    REQUIRE(k2.size() == 1);
    CHECK(first_at(p2.functions[0].body, Op::Kernel) < first_at(p2.functions[0].body, Op::Tuple));
    CHECK(std::set<VarId>(k2[0]->outs.begin(), k2[0]->outs.end()) == std::set<VarId>{a2, m2});
  }
  // A length needs only the instance count: it reads the chain's input instead, and the chain
  // fuses (an inlined function's `length(param)` between the caller's ops and its own).
  FnBuilder b3("main", T.int_(), T.int_());
  Block& body3 = b3.fn.body;
  VarId x3 = b3.instances(body3, T.seq(T.int_()), ints({1, 2, 3}));
  VarId a3 = prim(b3, body3, PrimId::Add, T.int_(), {x3, x3});
  b3.emit(body3, Op::Length, b3.host(), {a3});
  prim(b3, body3, PrimId::Mul, T.int_(), {a3, x3});
  body3.result = b3.fn.param;
  flatten::Program p3 = flatten::fuse_elementwise(program_of(std::move(b3.fn)));
  CHECK(flatten::verify(p3).empty());
  CHECK(stmts_of(p3.functions[0].body, Op::Kernel).size() == 1);
  auto lengths = stmts_of(p3.functions[0].body, Op::Length);
  REQUIRE(lengths.size() == 1);
  CHECK(lengths[0]->uses[0] == x3);
}

TEST_CASE("fuse: scalar literals read only by a kernel become constants") {
  lang::TypeContext T;
  Chain c = literal_chain(T);
  flatten::Program p = flatten::fuse_elementwise(program_of(make_function(T, c, 9, 4)));
  CHECK(flatten::verify(p).empty());
  auto kernels = stmts_of(p.functions[0].body, Op::Kernel);
  REQUIRE(kernels.size() == 2);
  size_t consts = 0;
  for (const Stmt* k : kernels)
    for (const auto& node : k->kernel->nodes) consts += node.kind == flatten::KernelNode::Kind::Const;
  CHECK(consts == 3);
  // 2.5 is still read (it is an output of the test), NaN and max_int are gone; 6 and 7 stay.
  std::set<std::string> scalar_lits;
  for (const Stmt* l : stmts_of(p.functions[0].body, Op::Lit))
    if (l->type->kind != lang::TypeKind::Seq) scalar_lits.insert(lang::format_value(l->lit, l->type));
  CHECK(scalar_lits.count("2.5") == 1);
  CHECK(scalar_lits.count("6") == 1);
  CHECK(scalar_lits.count("7") == 1);
  CHECK(scalar_lits.count("9223372036854775807") == 0);
  CHECK(scalar_lits.size() == 4);  // and the lengths of the result's wrapping (9)
  CHECK(flatten::print_program(p).find("const 2.5") != std::string::npos);
}

TEST_CASE("fuse: an integer / or rem by a literal other than zero cannot fail") {
  lang::TypeContext T;
  // x / d with d a constant node (a fused literal) or an input.
  auto divide = [&](PrimId p, const lang::Type* t, std::optional<lang::Value> d) {
    flatten::KernelBody k = flatten::one_node_kernel(p, {t, t}, t);
    if (d) {
      k.nodes[1].kind = flatten::KernelNode::Kind::Const;
      k.nodes[1].value = *d;
      k.inputs.pop_back();
    }
    return k;
  };
  CHECK(!divide(PrimId::Div, T.int_(), lang::Value::int_(2)).can_fail());
  CHECK(!divide(PrimId::Div, T.int_(), lang::Value::int_(-1)).can_fail());
  CHECK(!divide(PrimId::Rem, T.int_(), lang::Value::int_(9)).can_fail());
  CHECK(!divide(PrimId::Div, T.i32(), lang::Value::i32(3)).can_fail());
  CHECK(divide(PrimId::Div, T.int_(), lang::Value::int_(0)).can_fail());
  CHECK(divide(PrimId::Rem, T.int_(), lang::Value::int_(0)).can_fail());
  CHECK(divide(PrimId::Div, T.i32(), lang::Value::i32(0)).can_fail());
  CHECK(divide(PrimId::Div, T.int_(), std::nullopt).can_fail());
  CHECK(divide(PrimId::Rem, T.int_(), std::nullopt).can_fail());
}
