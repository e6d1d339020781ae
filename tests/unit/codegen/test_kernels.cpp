// Fused elementwise kernels: the fusion pass's shape, kernel results against unfused execution
// (interpreted and LLVM-compiled), and the PTX the NVPTX path emits (checked by ptxas).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <unistd.h>

#include "codegen/kernel_jit.h"
#include "codegen/kernel_ptx.h"
#include "exec/cpu/kernels.h"
#include "runtime/gpu/consumer_program.h"
#include "flatten/passes/fuse_elementwise.h"
#include "tests/unit/cpu/cpu_helpers.h"

using namespace ndp;
using namespace ndp::test::cpu;
using exec::host::Vec;

namespace {

/// ptxas as tools/check-ptx.sh finds it: NDP_PTXAS, else on PATH, else the CUDA toolkit's;
/// empty when none is executable.
std::string find_ptxas() {
  std::vector<std::string> candidates;
  if (const char* e = std::getenv("NDP_PTXAS")) candidates.push_back(e);
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    for (size_t b = 0, e; b <= p.size(); b = e + 1) {
      e = p.find(':', b);
      if (e == std::string::npos) e = p.size();
      if (e > b) candidates.push_back(p.substr(b, e - b) + "/ptxas");
    }
  }
  candidates.push_back("/usr/local/cuda/bin/ptxas");
  for (const std::string& c : candidates)
    if (access(c.c_str(), X_OK) == 0) return c;
  return "";
}

/// The PTX sign-extends a 32-bit integer to 64 bits (as narrow gather positions are: a cvt, or
/// a widening multiply where the value only scales an address).
bool ptx_has_widening(const std::string& ptx) {
  return ptx.find("cvt.s64.s32") != std::string::npos || ptx.find("mul.wide.s32") != std::string::npos;
}

/// The statements of a block with op `op`.
std::vector<const Stmt*> stmts_of(const Block& b, Op op) {
  std::vector<const Stmt*> r;
  for (const Stmt& s : b.stmts)
    if (s.op == op) r.push_back(&s);
  return r;
}

size_t prim_nodes(const flat::KernelBody& k) {
  size_t c = 0;
  for (const auto& n : k.nodes) c += n.kind == flat::KernelNode::Kind::Prim;
  return c;
}

flat::Program program_of(flat::Function f) {
  flat::Program p;
  p.functions.push_back(std::move(f));
  return p;
}

/// Random values of a flat scalar type, with the extremes (wrap-around, NaN, infinities, -0).
std::vector<Value> random_values(const Type* t, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Value> v;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < n; ++i) {
    uint64_t r = rng();
    bool special = r % 7 == 0;
    switch (t->kind) {
      case lang::TypeKind::Int: {
        static const int64_t ex[] = {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), -1, 0, 1};
        v.push_back(I(special ? ex[(r >> 8) % 5] : static_cast<int64_t>(r >> 3) - (int64_t{1} << 60)));
        break;
      }
      case lang::TypeKind::I32: {
        static const int32_t ex[] = {std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), -1, 0, 1};
        v.push_back(Value::i32(special ? ex[(r >> 8) % 5] : static_cast<int32_t>(static_cast<uint32_t>(r >> 7))));
        break;
      }
      case lang::TypeKind::Float: {
        static const double ex[] = {inf, -inf, nan, -0.0, 0.0, 1e308};
        v.push_back(F(special ? ex[(r >> 8) % 6] : (static_cast<double>(r % 2001) - 1000.0) / 7.0));
        break;
      }
      case lang::TypeKind::F32: {
        static const float ex[] = {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::quiet_NaN(), -0.0f, 3.4e38f};
        v.push_back(Value::f32(special ? ex[(r >> 8) % 5] : (static_cast<float>(r % 2001) - 1000.0f) / 7.0f));
        break;
      }
      case lang::TypeKind::Bool: v.push_back(B((r >> 11) & 1)); break;
      case lang::TypeKind::Char: v.push_back(Value::char_(static_cast<uint8_t>(r >> 17))); break;
      default: FAIL("not a flat scalar type");
    }
  }
  return v;
}

/// A test function: inputs (vectors of n instances), a chain built by `chain`, whose listed
/// results are wrapped into one tuple of sequences (so every one of them is compared).
struct Chain {
  std::vector<const Type*> input_types;
  std::function<std::vector<VarId>(FnBuilder&, Block&, const std::vector<VarId>&)> build;
};

flat::Function make_function(ExecFixture& fx, const Chain& c, size_t n, uint64_t seed) {
  auto& T = fx.T;
  // The result type is known only after building; build once into a scratch builder for it.
  FnBuilder b("main", T.int_(), T.int_());
  Block& body = b.fn.body;
  std::vector<VarId> ins;
  for (size_t j = 0; j < c.input_types.size(); ++j) {
    const Type* t = c.input_types[j];
    ins.push_back(b.instances(body, T.seq(t), seq(random_values(t, n, seed * 31 + j))));
  }
  std::vector<VarId> outs = c.build(b, body, ins);
  VarId acc = 0;
  const Type* at = nullptr;
  for (size_t i = 0; i < outs.size(); ++i) {
    VarId w = b.wrap(body, T, outs[i], static_cast<int64_t>(n));
    const Type* wt = b.fn.vars[w].type;
    if (i == 0) {
      acc = w;
      at = wt;
      continue;
    }
    const Type* pt = T.pair(at, wt);
    VarId p = b.vec(pt);
    b.emit(body, Op::Tuple, p, {acc, w});
    acc = p;
    at = pt;
  }
  body.result = acc;
  b.fn.result_type = at;
  return std::move(b.fn);
}

/// Runs the chain unfused and fused on the same inputs; both must agree exactly (NaN = NaN).
/// Returns the number of kernels fusion made.
size_t check_chain(const Chain& c, size_t n, uint64_t seed) {
  ExecFixture fx;
  flat::Program plain = program_of(make_function(fx, c, n, seed));
  flat::Program fused = flat::fuse_elementwise(program_of(make_function(fx, c, n, seed)));
  auto problems = flat::verify(fused);
  CHECK_MESSAGE(problems.empty(), (problems.empty() ? "" : problems[0]) << "\n" << flat::print_program(fused));
  auto a = fx.run(plain);
  auto b = fx.run(fused);
  REQUIRE(a.ok);
  REQUIRE(b.ok);
  CHECK_MESSAGE(close_values(a.value, b.value, 0), "n = " << n);
  return stmts_of(fused.functions[0].body, Op::Kernel).size();
}

VarId prim(FnBuilder& b, Block& body, PrimId p, const Type* r, std::vector<VarId> args) {
  return b.prim(body, p, r, std::move(args));
}

}  // namespace

TEST_CASE("fuse: a chain of five elementwise ops becomes one kernel") {
  ExecFixture fx;
  auto& T = fx.T;
  Chain c{{T.int_(), T.int_(), T.int_(), T.int_()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
            VarId s = prim(b, body, PrimId::Add, T.int_(), {in[0], in[1]});
            VarId m = prim(b, body, PrimId::Mul, T.int_(), {s, in[2]});
            VarId d = prim(b, body, PrimId::Sub, T.int_(), {m, in[3]});
            VarId g = prim(b, body, PrimId::Negate, T.int_(), {d});
            return std::vector<VarId>{prim(b, body, PrimId::Lt, T.bool_(), {g, in[0]})};
          }};
  flat::Program p = flat::fuse_elementwise(program_of(make_function(fx, c, 5, 1)));
  CHECK(flat::verify(p).empty());
  const Block& body = p.functions[0].body;
  auto kernels = stmts_of(body, Op::Kernel);
  REQUIRE(kernels.size() == 1);
  CHECK(stmts_of(body, Op::Prim).empty());
  CHECK(prim_nodes(*kernels[0]->kernel) == 5);
  CHECK(kernels[0]->uses.size() == 4);
  CHECK(kernels[0]->outs.size() == 1);  // the intermediate values are read only inside
  CHECK(p.functions[0].vars[kernels[0]->dst].type == T.bool_());
  std::string printed = flat::print_program(p);
  CHECK(printed.find("kernel(") != std::string::npos);
  CHECK(printed.find("= <(%") != std::string::npos);
  for (size_t n : {0, 1, 5, 1000, 40000}) CHECK(check_chain(c, n, n + 3) == 1);
}

TEST_CASE("fuse: primitives that can fail or have effects are not fused") {
  ExecFixture fx;
  auto& T = fx.T;
  // + * | int / | - +  : the division (can fail) splits the chain into two kernels.
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
  VarId sq = prim(b, body, PrimId::Sqrt, T.float_(), {fl});  // fails on negatives
  VarId z = prim(b, body, PrimId::Mul, T.float_(), {sq, sq});
  VarId rd = prim(b, body, PrimId::Rand, T.int_(), {e});  // an effect
  VarId w = prim(b, body, PrimId::Add, T.int_(), {rd, e});
  VarId t = b.vec(T.pair(T.float_(), T.int_()));
  b.emit(body, Op::Tuple, t, {z, w});
  VarId n3 = b.host();
  b.emit(body, Op::Length, n3, {t});
  body.result = b.fn.param;
  flat::Program p = flat::fuse_elementwise(program_of(std::move(b.fn)));
  CHECK(flat::verify(p).empty());
  const Block& out = p.functions[0].body;
  auto kernels = stmts_of(out, Op::Kernel);
  CHECK(kernels.size() == 2);  // {+, *} and {-, +, float}
  std::set<PrimId> left;
  for (const Stmt* s2 : stmts_of(out, Op::Prim)) left.insert(s2->prim);
  CHECK(left.count(PrimId::Div) == 1);
  CHECK(left.count(PrimId::Rem) == 1);
  CHECK(left.count(PrimId::Sqrt) == 1);
  CHECK(left.count(PrimId::Rand) == 1);
  CHECK(left.count(PrimId::Mul) == 1);  // sqrt's square: a group of one stays a primitive
  CHECK(left.count(PrimId::Add) == 1);  // rand's sum: likewise
  for (const Stmt* k : kernels)
    for (const auto& node : k->kernel->nodes)
      if (node.kind == flat::KernelNode::Kind::Prim) CHECK(node.prim != PrimId::Div);
  // Float division cannot fail: it is fused.
  CHECK(flat::kernel_prim_ok(PrimId::Div, {T.float_(), T.float_()}, T.float_()));
  CHECK(!flat::kernel_prim_ok(PrimId::Div, {T.int_(), T.int_()}, T.int_()));
  CHECK(!flat::kernel_prim_ok(PrimId::ToI64, {T.float_()}, T.int_()));
  CHECK(!flat::kernel_prim_ok(PrimId::CodeChar, {T.int_()}, T.char_()));
}

TEST_CASE("fuse: values read after the group are outputs; reads in between stop the group") {
  ExecFixture fx;
  auto& T = fx.T;
  FnBuilder b("main", T.int_(), T.int_());
  Block& body = b.fn.body;
  VarId x = b.instances(body, T.seq(T.int_()), ints({1, 2, 3}));
  VarId y = b.instances(body, T.seq(T.int_()), ints({4, 5, 6}));
  VarId s = prim(b, body, PrimId::Add, T.int_(), {x, y});
  VarId m = prim(b, body, PrimId::Mul, T.int_(), {s, y});
  VarId g = prim(b, body, PrimId::Gt, T.bool_(), {m, x});
  VarId sel = prim(b, body, PrimId::Select, T.int_(), {g, s, x});
  // s is read after the kernel (by a division), sel by a nested block, m only inside.
  VarId q = prim(b, body, PrimId::Div, T.int_(), {s, y});
  VarId c = b.host();
  b.emit(body, Op::Length, c, {q});
  VarId r = b.vec(T.int_());
  Stmt& iff = b.emit(body, Op::IfNonEmpty, r, {c});
  iff.then_block = std::make_unique<Block>();
  iff.else_block = std::make_unique<Block>();
  VarId inner = b.prim(*iff.then_block, PrimId::Negate, T.int_(), {sel});
  iff.then_block->result = inner;
  iff.else_block->result = sel;
  VarId w = b.wrap(body, T, r, 3);
  b.fn.result_type = T.seq(T.int_());
  body.result = w;
  flat::Program p = flat::fuse_elementwise(program_of(std::move(b.fn)));
  CHECK(flat::verify(p).empty());
  auto kernels = stmts_of(p.functions[0].body, Op::Kernel);
  REQUIRE(kernels.size() == 1);
  std::set<VarId> outs(kernels[0]->outs.begin(), kernels[0]->outs.end());
  CHECK(outs == std::set<VarId>{s, sel});
  CHECK(prim_nodes(*kernels[0]->kernel) == 4);
  auto res = fx.run(p);
  REQUIRE(res.ok);
  // s = 5 7 9; m = 20 35 54; m > x everywhere: sel = s; result = -s.
  CHECK(lang::values_equal(res.value, ints({-5, -7, -9})));

  // A read between two ops of a chain ends the group there (the first op's value is needed
  // before the kernel would run), so nothing is delayed past its reader.
  FnBuilder b2("main", T.int_(), T.int_());
  Block& body2 = b2.fn.body;
  VarId x2 = b2.instances(body2, T.seq(T.int_()), ints({1, 2, 3}));
  VarId a2 = prim(b2, body2, PrimId::Add, T.int_(), {x2, x2});
  VarId n2 = b2.host();
  b2.emit(body2, Op::Length, n2, {a2});
  VarId m2 = prim(b2, body2, PrimId::Mul, T.int_(), {a2, x2});
  (void)m2;
  body2.result = b2.fn.param;
  flat::Program p2 = flat::fuse_elementwise(program_of(std::move(b2.fn)));
  CHECK(flat::verify(p2).empty());
  CHECK(stmts_of(p2.functions[0].body, Op::Kernel).empty());
}

TEST_CASE("kernels: results equal unfused execution for every fusable op and type") {
  ExecFixture fx;
  auto& T = fx.T;
  std::vector<Chain> chains;
  // int: wrap-around arithmetic, logic, comparisons, select, conversions.
  chains.push_back({{T.int_(), T.int_(), T.int_()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
                      auto* t = T.int_();
                      VarId s = prim(b, body, PrimId::Add, t, {in[0], in[1]});
                      VarId m = prim(b, body, PrimId::Mul, t, {s, in[2]});
                      VarId d = prim(b, body, PrimId::Sub, t, {m, in[0]});
                      VarId ng = prim(b, body, PrimId::Negate, t, {d});
                      VarId o = prim(b, body, PrimId::Or, t, {ng, in[1]});
                      VarId a = prim(b, body, PrimId::And, t, {o, in[2]});
                      VarId x = prim(b, body, PrimId::Xor, t, {a, m});
                      VarId no = prim(b, body, PrimId::Nor, t, {x, in[0]});
                      VarId na = prim(b, body, PrimId::Nand, t, {no, s});
                      VarId nt = prim(b, body, PrimId::Not, t, {na});
                      std::vector<VarId> r{nt};
                      for (PrimId c : {PrimId::Eq, PrimId::Ne, PrimId::Lt, PrimId::Gt, PrimId::Le, PrimId::Ge}) {
                        VarId cmp = prim(b, body, c, T.bool_(), {m, in[0]});
                        r.push_back(prim(b, body, PrimId::Select, t, {cmp, s, nt}));
                      }
                      VarId cmp = prim(b, body, PrimId::Lt, T.bool_(), {in[0], in[1]});
                      r.push_back(prim(b, body, PrimId::Btoi, t, {cmp}));
                      r.push_back(prim(b, body, PrimId::ToFloat, T.float_(), {m}));
                      r.push_back(prim(b, body, PrimId::ToI32, T.i32(), {m}));
                      r.push_back(prim(b, body, PrimId::ToF32, T.f32(), {m}));
                      r.push_back(prim(b, body, PrimId::ToF64, T.float_(), {d}));
                      r.push_back(prim(b, body, PrimId::ToI64, t, {d}));
                      return r;
                    }});
  // float: IEEE arithmetic, NaN/inf comparisons, conversions.
  chains.push_back({{T.float_(), T.float_(), T.float_()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
                      auto* t = T.float_();
                      VarId s = prim(b, body, PrimId::Add, t, {in[0], in[1]});
                      VarId m = prim(b, body, PrimId::Mul, t, {s, in[2]});
                      VarId d = prim(b, body, PrimId::Sub, t, {m, in[0]});
                      VarId q = prim(b, body, PrimId::Div, t, {d, in[1]});
                      VarId ng = prim(b, body, PrimId::Negate, t, {q});
                      std::vector<VarId> r{ng};
                      for (PrimId c : {PrimId::Eq, PrimId::Ne, PrimId::Lt, PrimId::Gt, PrimId::Le, PrimId::Ge}) {
                        r.push_back(prim(b, body, c, T.bool_(), {in[0], in[1]}));
                        VarId cmp = prim(b, body, c, T.bool_(), {q, in[2]});
                        r.push_back(prim(b, body, PrimId::Select, t, {cmp, ng, in[0]}));
                      }
                      r.push_back(prim(b, body, PrimId::ToF32, T.f32(), {q}));
                      r.push_back(prim(b, body, PrimId::ToF64, t, {q}));
                      return r;
                    }});
  // bool logic and comparisons; char codes and comparisons.
  chains.push_back({{T.bool_(), T.bool_(), T.char_(), T.char_()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
                      auto* t = T.bool_();
                      VarId o = prim(b, body, PrimId::Or, t, {in[0], in[1]});
                      VarId a = prim(b, body, PrimId::And, t, {o, in[1]});
                      VarId x = prim(b, body, PrimId::Xor, t, {a, in[0]});
                      VarId no = prim(b, body, PrimId::Nor, t, {x, in[1]});
                      VarId na = prim(b, body, PrimId::Nand, t, {no, o});
                      VarId nt = prim(b, body, PrimId::Not, t, {na});
                      std::vector<VarId> r{nt};
                      for (PrimId c : {PrimId::Eq, PrimId::Ne, PrimId::Lt, PrimId::Gt, PrimId::Le, PrimId::Ge}) {
                        r.push_back(prim(b, body, c, t, {nt, in[1]}));
                        VarId cc = prim(b, body, c, t, {in[2], in[3]});
                        r.push_back(prim(b, body, PrimId::Select, T.char_(), {cc, in[2], in[3]}));
                      }
                      VarId code = prim(b, body, PrimId::CharCode, T.int_(), {in[2]});
                      r.push_back(prim(b, body, PrimId::Add, T.int_(), {code, code}));
                      return r;
                    }});
  // i32 and f32: 32-bit wrap-around and single-precision rounding.
  chains.push_back({{T.i32(), T.i32(), T.f32(), T.f32()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
                      VarId s = prim(b, body, PrimId::Add, T.i32(), {in[0], in[1]});
                      VarId m = prim(b, body, PrimId::Mul, T.i32(), {s, in[1]});
                      VarId ng = prim(b, body, PrimId::Negate, T.i32(), {m});
                      VarId fs = prim(b, body, PrimId::Add, T.f32(), {in[2], in[3]});
                      VarId fm = prim(b, body, PrimId::Mul, T.f32(), {fs, in[3]});
                      VarId fq = prim(b, body, PrimId::Div, T.f32(), {fm, in[2]});
                      VarId cf = prim(b, body, PrimId::ToF32, T.f32(), {ng});
                      VarId sum = prim(b, body, PrimId::Sub, T.f32(), {fq, cf});
                      VarId lt = prim(b, body, PrimId::Lt, T.bool_(), {sum, in[2]});
                      return std::vector<VarId>{ng, prim(b, body, PrimId::ToI64, T.int_(), {m}),
                                                prim(b, body, PrimId::ToF64, T.float_(), {sum}),
                                                prim(b, body, PrimId::Select, T.i32(), {lt, m, s}),
                                                prim(b, body, PrimId::Ge, T.bool_(), {in[0], in[1]})};
                    }});
  // 0 and 1 instances, a small context, and one large enough to take the compiled path and
  // several parallel chunks.
  for (size_t ci = 0; ci < chains.size(); ++ci)
    for (size_t n : {size_t{0}, size_t{1}, size_t{17}, size_t{70001}}) {
      INFO("chain " << ci << ", n = " << n);
      CHECK(check_chain(chains[ci], n, ci * 100 + n) >= 1);
    }
}

TEST_CASE("fuse: scalar literals read only by a kernel become constants") {
  ExecFixture fx;
  auto& T = fx.T;
  Chain c{{T.float_(), T.int_()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
            VarId n = b.host();
            b.emit(body, Op::Length, n, {in[0]});
            VarId k = b.lit(body, T.float_(), F(2.5), n);
            VarId nan = b.lit(body, T.float_(), F(std::numeric_limits<double>::quiet_NaN()), n);
            VarId big = b.lit(body, T.int_(), I(std::numeric_limits<int64_t>::max()), n);
            VarId m = prim(b, body, PrimId::Mul, T.float_(), {in[0], k});
            VarId lt = prim(b, body, PrimId::Lt, T.bool_(), {m, nan});
            VarId s0 = prim(b, body, PrimId::Add, T.int_(), {in[1], big});
            VarId s = prim(b, body, PrimId::Select, T.int_(), {lt, s0, in[1]});
            // Only literals: the kernel keeps them as inputs (its n comes from them).
            VarId l1 = b.lit(body, T.int_(), I(6), n);
            VarId l2 = b.lit(body, T.int_(), I(7), n);
            VarId p = prim(b, body, PrimId::Mul, T.int_(), {l1, l2});
            VarId q = prim(b, body, PrimId::Negate, T.int_(), {p});
            return std::vector<VarId>{m, lt, s, q, k};
          }};
  flat::Program p = flat::fuse_elementwise(program_of(make_function(fx, c, 9, 4)));
  CHECK(flat::verify(p).empty());
  auto kernels = stmts_of(p.functions[0].body, Op::Kernel);
  REQUIRE(kernels.size() == 2);
  size_t consts = 0;
  for (const Stmt* k : kernels)
    for (const auto& node : k->kernel->nodes) consts += node.kind == flat::KernelNode::Kind::Const;
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
  CHECK(flat::print_program(p).find("const 2.5") != std::string::npos);
  for (size_t n : {size_t{0}, size_t{5}, size_t{50000}}) CHECK(check_chain(c, n, n + 11) == 2);
}

namespace {

/// A kernel body straight from a chain, with its input Vecs, for comparing the two loops.
struct BodyCase {
  std::shared_ptr<const flat::KernelBody> body;
  std::vector<Vec> ins;
};

BodyCase kernel_of(ExecFixture& fx, const Chain& c, size_t n, uint64_t seed) {
  auto& T = fx.T;
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
  flat::Program p = flat::fuse_elementwise(program_of(std::move(b.fn)));
  auto ks = stmts_of(p.functions[0].body, Op::Kernel);
  REQUIRE(ks.size() == 1);
  bc.body = ks[0]->kernel;
  std::vector<Vec> ordered;
  for (VarId u : ks[0]->uses) ordered.push_back(bc.ins.at(u - ins[0]));
  bc.ins = std::move(ordered);
  return bc;
}

}  // namespace

TEST_CASE("kernels: compiled code equals the interpretive loop, bit for bit") {
  ExecFixture fx;
  auto& T = fx.T;
  Chain c{{T.int_(), T.float_(), T.float_(), T.i32()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
            VarId fi = prim(b, body, PrimId::ToFloat, T.float_(), {in[0]});
            VarId s = prim(b, body, PrimId::Add, T.float_(), {fi, in[1]});
            VarId q = prim(b, body, PrimId::Div, T.float_(), {s, in[2]});
            VarId lt = prim(b, body, PrimId::Lt, T.bool_(), {q, in[1]});
            VarId ne = prim(b, body, PrimId::Ne, T.bool_(), {q, q});  // NaN test
            VarId o = prim(b, body, PrimId::Or, T.bool_(), {lt, ne});
            VarId w = prim(b, body, PrimId::Mul, T.int_(), {in[0], in[0]});
            VarId i3 = prim(b, body, PrimId::ToI64, T.int_(), {in[3]});
            VarId sel = prim(b, body, PrimId::Select, T.int_(), {o, w, i3});
            return std::vector<VarId>{sel, o, q};
          }};
  codegen::HostKernelCompiler compiler;
  for (size_t n : {size_t{0}, size_t{3}, size_t{1000}, size_t{100003}}) {
    BodyCase bc = kernel_of(fx, c, n, n);
    const flat::KernelBody& k = *bc.body;
    REQUIRE(k.outputs.size() == 3);
    std::vector<const void*> in;
    for (const Vec& v : bc.ins) in.push_back(v.buffer().get());
    std::vector<std::vector<uint64_t>> ra(3, std::vector<uint64_t>(n + 1)), rb(3, std::vector<uint64_t>(n + 1));
    std::vector<void*> oa, ob;
    for (size_t o = 0; o < 3; ++o) {
      oa.push_back(ra[o].data());
      ob.push_back(rb[o].data());
    }
    exec::cpu::interpret_kernel(k, 0, static_cast<int64_t>(n), in.data(), oa.data());
    flat::HostKernelFn fn = compiler.compile(k);
    REQUIRE(static_cast<bool>(fn));
    exec::cpu::run_chunks(fn, static_cast<int64_t>(n), in.data(), ob.data());
    CHECK(ra == rb);
  }
  CHECK(compiler.compiled() == 1);  // one body, compiled once (cached by its key)
}

TEST_CASE("kernels: PTX for sm_90 assembles with ptxas") {
  ExecFixture fx;
  auto& T = fx.T;
  Chain c{{T.int_(), T.float_(), T.bool_(), T.f32()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
            VarId fi = prim(b, body, PrimId::ToFloat, T.float_(), {in[0]});
            VarId s = prim(b, body, PrimId::Mul, T.float_(), {fi, in[1]});
            VarId lt = prim(b, body, PrimId::Le, T.bool_(), {s, in[1]});
            VarId a = prim(b, body, PrimId::Xor, T.bool_(), {lt, in[2]});
            VarId i = prim(b, body, PrimId::Btoi, T.int_(), {a});
            VarId f3 = prim(b, body, PrimId::ToF32, T.f32(), {s});
            VarId g = prim(b, body, PrimId::Sub, T.f32(), {f3, in[3]});
            return std::vector<VarId>{prim(b, body, PrimId::Add, T.int_(), {i, in[0]}), a, g};
          }};
  BodyCase bc = kernel_of(fx, c, 4, 1);
  // Inputs 1 and 3 read through positions (Note [Fused gathers]), input 3's i32 (Note [Narrow
  // gather positions]): two more parameters, and it must assemble too.
  const flat::GatheredInput gathered[] = {{1, false}, {3, true}};
  for (std::span<const flat::GatheredInput> g :
       {std::span<const flat::GatheredInput>(), std::span<const flat::GatheredInput>(gathered)}) {
    CAPTURE(g.size());
    // Only the narrow positions are widened (the body converts nothing from i32).
    CHECK((ptx_has_widening(codegen::compile_ptx(*bc.body, g))) == !g.empty());
    std::string ptx = codegen::compile_ptx(*bc.body, g);
    CHECK(ptx.find("ndp_kernel_param_" + std::to_string(1 + 4 + g.size() + 2)) != std::string::npos);
    CHECK(ptx.find("ndp_kernel_param_" + std::to_string(1 + 4 + g.size() + 3)) == std::string::npos);
    CHECK(ptx.find(".target sm_90") != std::string::npos);
    CHECK(ptx.find(".entry ndp_kernel") != std::string::npos);
    CHECK(ptx.find("%tid.x") != std::string::npos);
    CHECK(ptx.find("%ctaid.x") != std::string::npos);
    std::string ptxas = find_ptxas();
    if (ptxas.empty()) {
      MESSAGE("ptxas not found (NDP_PTXAS, PATH, /usr/local/cuda/bin): PTX not assembled");
      return;
    }
    char path[] = "/tmp/ndp_kernel_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    std::string file = std::string(path) + ".ptx";
    std::rename(path, file.c_str());
    std::ofstream(file) << ptx;
    std::string cmd = ptxas + " -arch=sm_90 -o /dev/null " + file + " 2>&1";
    int rc = std::system(cmd.c_str());
    std::remove(file.c_str());
    CHECK_MESSAGE(rc == 0, "ptxas rejected:\n" << ptx);
  }
}

// The cuda backend runs every elementwise primitive that kernel_prim_ok or
// kernel_prim_checked_ok accepts as a one-node kernel (exec/cuda/lifted_prims.cpp); each such
// kernel must assemble for sm_90.
TEST_CASE("kernels: every one-node kernel the cuda backend can generate assembles with ptxas") {
  lang::TypeContext T;
  std::vector<const lang::Type*> plain = {T.int_(), T.float_(), T.bool_(), T.char_(), T.i32(), T.f32()};
  char dir[] = "/tmp/ndp_onenode_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  int count = 0;
  for (int p = 0; p < static_cast<int>(lang::core::PrimId::Count_); ++p) {
    auto id = static_cast<lang::core::PrimId>(p);
    int arity = lang::core::prim_info(id).arity;
    if (arity < 1 || arity > 3) continue;
    std::vector<size_t> pick(static_cast<size_t>(arity), 0);
    for (;;) {
      std::vector<const lang::Type*> args;
      for (size_t i : pick) args.push_back(plain[i]);
      for (const lang::Type* r : plain) {
        if (!flat::kernel_prim_ok(id, args, r) && !flat::kernel_prim_checked_ok(id, args, r)) continue;
        flat::KernelBody k = flat::one_node_kernel(id, args, r);
        std::ofstream(std::string(dir) + "/k" + std::to_string(count++) + ".ptx") << codegen::compile_ptx(k);
      }
      size_t d = 0;
      while (d < pick.size() && ++pick[d] == plain.size()) pick[d++] = 0;
      if (d == pick.size()) break;
    }
  }
  CHECK(count > 50);  // LLVM generated every kernel (compile_ptx throws otherwise)
  std::string ptxas = find_ptxas();
  if (ptxas.empty()) {
    MESSAGE("ptxas not found (NDP_PTXAS, PATH, /usr/local/cuda/bin): PTX generated but not assembled");
  } else {
    std::string cmd = std::string("for f in ") + dir + "/*.ptx; do " + ptxas + " -arch=sm_90 -o /dev/null $f || exit 1; done";
    CHECK(std::system(cmd.c_str()) == 0);
  }
  std::system((std::string("rm -rf ") + dir).c_str());
}

// The consumer kernels' element function (compile_element_ptx) for every element type a
// reduction, scan or pack consumes, put into the consumer kernels of its type as the cuda backend
// does (Note [Consumer programs] in runtime/gpu/consumer_program.h): the program keeps just the
// entries its use runs, and ptxas compiles it as the driver's JIT does, as one program, where no
// call passes the element function's result through the stack.
TEST_CASE("kernels: element functions compile into their consumer programs with no call through the stack") {
  lang::TypeContext T;
  using runtime::gpu::ConsumerUse;
  struct Case {
    const lang::Type* t;
    const char* image;
    runtime::gpu::ConsumerKernels use;
  } cases[] = {{T.int_(), "i64", runtime::gpu::consumer_kernels(ConsumerUse::ReduceOne, NDP_OP_PLUS, NDP_I64)},
               {T.float_(), "f64", runtime::gpu::consumer_kernels(ConsumerUse::ReduceSegments, NDP_OP_PLUS, NDP_F64)},
               {T.i32(), "i32", runtime::gpu::consumer_kernels(ConsumerUse::ScanSegments, NDP_OP_MAX, NDP_I32)},
               {T.f32(), "f32", runtime::gpu::consumer_kernels(ConsumerUse::ScanOne, NDP_OP_MIN, NDP_F32)},
               {T.bool_(), "bool", runtime::gpu::consumer_kernels(ConsumerUse::Pack, NDP_OP_OR, NDP_F64)},
               {T.char_(), "char", runtime::gpu::consumer_kernels(ConsumerUse::ReduceSegments, NDP_OP_MAX, NDP_CHAR)}};
  char dir[] = "/tmp/ndp_element_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  std::string ptxas = find_ptxas();
  for (const Case& c : cases) {
    const std::string image = c.image;
    CAPTURE(image);
    // max(x, x): an output of the type read from an input of the type (char and bool too).
    flat::KernelBody k = c.t->kind == lang::TypeKind::Bool ? flat::one_node_kernel(PrimId::Not, {c.t}, c.t)
                         : c.t->kind == lang::TypeKind::Char
                             ? flat::one_node_kernel(PrimId::Select, {T.bool_(), c.t, c.t}, c.t)
                             : flat::one_node_kernel(PrimId::Add, {c.t, c.t}, c.t);
    // Also with input 0 read through int64 and i32 positions (Note [Fused gathers] in
    // exec/cuda/kernels.h, Note [Narrow gather positions] in exec/cuda/device_vec.h).
    const flat::GatheredInput wide[] = {{0, false}}, narrow[] = {{0, true}};
    for (std::span<const flat::GatheredInput> g : {std::span<const flat::GatheredInput>(),
                                                      std::span<const flat::GatheredInput>(wide),
                                                      std::span<const flat::GatheredInput>(narrow)}) {
      CAPTURE(g.size());
      const bool narrowed = !g.empty() && g[0].narrow;
      CAPTURE(narrowed);
      std::string ptx = codegen::compile_element_ptx(k, g);
      // Narrow positions load 4 bytes and widen them; int64 ones load 8 as they are.
      CHECK(ptx_has_widening(ptx) == narrowed);
      CHECK(ptx.find(".visible .func  (.param .align 8 .b8 func_retval0[64]) ndp_elements(") != std::string::npos);
      // With a gather, the streamed inputs and positions load evict-first (Note [Streamed
      // inputs beside gathers]); without, nothing does.
      CHECK((ptx.find("ld.global.cs.nc.") != std::string::npos) == !g.empty());
      std::string_view consumers = runtime::gpu::consumer_ptx(c.use.image);
      if (consumers.empty()) {
        MESSAGE("a build without the consumer kernels: no program to put the element function in");
        continue;
      }
      runtime::cuda::Result<std::string> program = runtime::gpu::consumer_program(consumers, ptx, c.use.entries);
      REQUIRE_MESSAGE(program.ok(), program.status().message());
      // The function, internal to the program, in place of the declaration; only the use's entries.
      CHECK(program->find(".extern .func") == std::string::npos);
      CHECK(program->find("\n.func  (.param .align 8 .b8 func_retval0[64]) ndp_elements(") != std::string::npos);
      size_t entries = 0;
      for (size_t at = program->find(".entry "); at != std::string::npos; at = program->find(".entry ", at + 1)) ++entries;
      CHECK(entries == c.use.entries.size());
      for (const std::string& e : c.use.entries) CHECK(program->find(".entry " + e + "(") != std::string::npos);
      if (ptxas.empty()) continue;
      std::string file = std::string(dir) + "/" + c.image + ".ptx", log = std::string(dir) + "/" + c.image + ".log";
      std::ofstream(file) << program.value();
      CHECK(std::system((ptxas + " -arch=sm_90 -v -o /dev/null " + file + " > " + log + " 2>&1").c_str()) == 0);
      std::ifstream in(log);
      // ptxas reports each function's frame: the element function has none, and no kernel's
      // holds the 64-byte result (a kernel may keep a few bytes of its own).
      std::string line, function;
      int frames = 0;
      while (std::getline(in, line)) {
        if (line.find("Function properties for") != std::string::npos) function = line;
        if (line.find("bytes stack frame") == std::string::npos) continue;
        ++frames;
        const int bytes = std::atoi(line.c_str() + line.find_first_not_of(' '));
        CAPTURE(function);
        CAPTURE(line);
        CHECK(bytes < 64);
        if (function.find("ndp_elements") != std::string::npos) CHECK(bytes == 0);
      }
      CHECK(frames >= static_cast<int>(c.use.entries.size()));
    }
  }
  std::system((std::string("rm -rf ") + dir).c_str());
}

// A consumer program that cannot be made says what is missing, and never splices blindly.
TEST_CASE("kernels: consumer_program refuses PTX without the declaration, the definition or an entry") {
  const std::string consumers =
      ".version 9.0\n.target sm_90\n.address_size 64\n\n"
      ".extern .func  (.param .b64 func_retval0) ndp_elements\n(\n\t.param .b64 p0\n)\n;\n"
      ".visible .entry keep_me(\n)\n{\n\tret;\n}\n"
      ".visible .entry drop_me(\n)\n{\n\t{\n\tret;\n\t}\n}\n"
      ".entry also_kept(\n)\n{\n\tret;\n}\n";
  const std::string element = ".version 7.8\n.target sm_90\n.address_size 64\n\n.visible .func  (.param .b64 func_retval0) ndp_elements(\n)\n{\n\tret;\n}\n";
  const std::string keep[] = {"keep_me", "also_kept"};
  runtime::cuda::Result<std::string> ok = runtime::gpu::consumer_program(consumers, element, keep);
  REQUIRE(ok.ok());
  CHECK(ok.value() ==
        ".version 9.0\n.target sm_90\n.address_size 64\n\n"
        "\n.func  (.param .b64 func_retval0) ndp_elements(\n)\n{\n\tret;\n}\n\n"
        ".visible .entry keep_me(\n)\n{\n\tret;\n}\n"
        ".entry also_kept(\n)\n{\n\tret;\n}\n");
  const std::string missing[] = {"keep_me", "nowhere"};
  runtime::cuda::Result<std::string> no_entry = runtime::gpu::consumer_program(consumers, element, missing);
  REQUIRE_FALSE(no_entry.ok());
  CHECK(no_entry.status().message().find("no entry nowhere") != std::string::npos);
  CHECK_FALSE(runtime::gpu::consumer_program(".version 9.0\n.visible .entry keep_me(\n)\n{\n}\n", element, keep).ok());
  CHECK_FALSE(runtime::gpu::consumer_program(consumers, ".visible .func ndp_elements()\n{\n}\n", keep).ok());
  CHECK_FALSE(runtime::gpu::consumer_program(consumers, ".address_size 64\n.func other()\n{\n}\n", keep).ok());
}

// Integer /, rem and the shifts, which the cuda backend runs as one-node kernels after a check
// kernel has excluded the failing operands: the generated code must give the interpreter's
// results for every operand pair the check lets through (min_int / -1 wraps, rem(x, -1) = 0).
TEST_CASE("kernels: checked integer division, rem and shifts equal the interpreter") {
  lang::TypeContext T;
  const lang::Type* I = T.int_();
  const int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> xs = {0, 1, -1, 7, -7, 13, -13, kMin, kMax, kMin + 1, 1000000007, -99};
  codegen::HostKernelCompiler compiler;
  for (lang::core::PrimId p : {lang::core::PrimId::Div, lang::core::PrimId::Rem, lang::core::PrimId::Lshift,
                               lang::core::PrimId::Rshift}) {
    bool shift = p == lang::core::PrimId::Lshift || p == lang::core::PrimId::Rshift;
    std::vector<int64_t> a, b;
    for (int64_t x : xs)
      for (int64_t y : shift ? std::vector<int64_t>{0, 1, 5, 31, 32, 63} : xs)
        if (y != 0 || shift) {
          a.push_back(x);
          b.push_back(y);
        }
    REQUIRE(flat::kernel_prim_checked_ok(p, {I, I}, I));
    flat::HostKernelFn fn = compiler.compile(flat::one_node_kernel(p, {I, I}, I));
    REQUIRE(static_cast<bool>(fn));
    std::vector<int64_t> out(a.size());
    const void* ins[2] = {a.data(), b.data()};
    void* outs[1] = {out.data()};
    fn(0, static_cast<int64_t>(a.size()), ins, outs);
    lang::eval::PrimEnv env;
    env.types = &T;
    std::vector<const lang::Type*> targs;
    lang::eval::PrimCall call{p, lang::Span{}, &targs, nullptr, &env};
    for (size_t i = 0; i < a.size(); ++i) {
      lang::Value args[2] = {lang::Value::int_(a[i]), lang::Value::int_(b[i])};
      CAPTURE(static_cast<int>(p));
      CAPTURE(a[i]);
      CAPTURE(b[i]);
      CHECK(out[i] == lang::eval::apply_prim(call, args).as_int());
    }
  }
  // i32 division, min_int32 / -1 included.
  const lang::Type* I32 = T.i32();
  REQUIRE(flat::kernel_prim_checked_ok(lang::core::PrimId::Div, {I32, I32}, I32));
  flat::HostKernelFn div32 = compiler.compile(flat::one_node_kernel(lang::core::PrimId::Div, {I32, I32}, I32));
  REQUIRE(static_cast<bool>(div32));
  const int32_t m32 = std::numeric_limits<int32_t>::min();
  std::vector<int32_t> a32, b32;
  for (int32_t x : {0, 1, -1, 7, -7, m32, m32 + 1, std::numeric_limits<int32_t>::max()})
    for (int32_t y : {1, -1, 2, -3, m32}) {
      a32.push_back(x);
      b32.push_back(y);
    }
  std::vector<int32_t> out32(a32.size());
  const void* ins32[2] = {a32.data(), b32.data()};
  void* outs32[1] = {out32.data()};
  div32(0, static_cast<int64_t>(a32.size()), ins32, outs32);
  lang::eval::PrimEnv env;
  env.types = &T;
  std::vector<const lang::Type*> targs;
  lang::eval::PrimCall call{lang::core::PrimId::Div, lang::Span{}, &targs, nullptr, &env};
  for (size_t i = 0; i < a32.size(); ++i) {
    lang::Value args[2] = {lang::Value::i32(a32[i]), lang::Value::i32(b32[i])};
    CAPTURE(a32[i]);
    CAPTURE(b32[i]);
    CHECK(out32[i] == lang::eval::apply_prim(call, args).as_i32());
  }
}
