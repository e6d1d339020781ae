// Native lifted primitives against the fallback (the interpreter's apply_prim per instance), on
// random inputs of every shape: no instances, empty segments, one huge segment, many
// one-element segments, and mixed; plus the error cases.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include "tests/unit/exec/host/host_helpers.h"

using namespace ndp;
using namespace ndp::test::exec_test;
using lang::TypeKind;

namespace {

struct Gen {
  std::mt19937_64 rng{12345};
  int64_t uni(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
  bool coin(double p = 0.5) { return std::bernoulli_distribution(p)(rng); }
};

enum class Shape { None, EmptySegs, Huge, Ones, Mixed };
constexpr Shape kShapes[] = {Shape::None, Shape::EmptySegs, Shape::Huge, Shape::Ones, Shape::Mixed};
const char* shape_name(Shape s) {
  switch (s) {
    case Shape::None: return "no instances";
    case Shape::EmptySegs: return "empty segments";
    case Shape::Huge: return "one huge segment";
    case Shape::Ones: return "one-element segments";
    case Shape::Mixed: return "mixed";
  }
  return "?";
}

std::vector<int64_t> lengths_of(Shape s, Gen& g) {
  std::vector<int64_t> l;
  switch (s) {
    case Shape::None: break;
    case Shape::EmptySegs:
      for (int i = 0; i < 40; ++i) l.push_back(g.coin(0.75) ? 0 : g.uni(1, 5));
      break;
    case Shape::Huge: l.push_back(100000); break;
    case Shape::Ones: l.assign(40000, 1); break;
    case Shape::Mixed:
      for (int i = 0; i < 300; ++i) l.push_back(g.uni(0, 12));
      break;
  }
  return l;
}

/// Number of instances for elementwise tests of a shape.
int64_t count_of(Shape s) {
  switch (s) {
    case Shape::None: return 0;
    case Shape::EmptySegs: return 1;
    case Shape::Huge: return 100000;
    case Shape::Ones: return 40000;
    case Shape::Mixed: return 300;
  }
  return 0;
}

Value scalar(TypeKind k, Gen& g) {
  switch (k) {
    case TypeKind::Int: return I(g.coin(0.05) ? g.uni(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()) : g.uni(-50, 50));
    case TypeKind::Float: return F(g.real(-100, 100));
    case TypeKind::Bool: return B(g.coin());
    case TypeKind::Char: return Value::char_(static_cast<uint8_t>(g.uni(0, 255)));
    case TypeKind::I32: return Value::i32(static_cast<int32_t>(g.uni(-50, 50)));
    case TypeKind::F32: return Value::f32(static_cast<float>(g.real(-100, 100)));
    default: break;
  }
  return I(0);
}

std::vector<Value> scalars(TypeKind k, int64_t n, Gen& g) {
  std::vector<Value> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(scalar(k, g));
  return v;
}

std::vector<Value> seqs(TypeKind k, const std::vector<int64_t>& lens, Gen& g) {
  std::vector<Value> v;
  for (int64_t l : lens) v.push_back(Value::seq(scalars(k, l, g)));
  return v;
}

std::vector<Value> int_seqs(const std::vector<std::vector<int64_t>>& xs) {
  std::vector<Value> v;
  for (const auto& x : xs) v.push_back(ints(x));
  return v;
}

const Type* type_of(lang::TypeContext& T, TypeKind k) {
  switch (k) {
    case TypeKind::Int: return T.int_();
    case TypeKind::Float: return T.float_();
    case TypeKind::Bool: return T.bool_();
    case TypeKind::Char: return T.char_();
    case TypeKind::I32: return T.i32();
    case TypeKind::F32: return T.f32();
    default: break;
  }
  return T.int_();
}

/// Nested [[int]] instances with the given outer lengths.
std::vector<Value> nested(const std::vector<int64_t>& lens, Gen& g) {
  std::vector<Value> v;
  for (int64_t l : lens) {
    std::vector<Value> inner;
    for (int64_t j = 0; j < l; ++j) inner.push_back(Value::seq(scalars(TypeKind::Int, g.uni(0, 3), g)));
    v.push_back(Value::seq(std::move(inner)));
  }
  return v;
}

constexpr TypeKind kNumbers[] = {TypeKind::Int, TypeKind::Float, TypeKind::I32, TypeKind::F32};
constexpr TypeKind kScalars[] = {TypeKind::Int, TypeKind::Float, TypeKind::Bool, TypeKind::Char, TypeKind::I32, TypeKind::F32};

}  // namespace

// ---------------------------------------------------------------- elementwise

TEST_CASE("lifted elementwise arithmetic, comparison and logic: native = fallback") {
  PrimHarness h;
  Gen g;
  auto& T = h.T;
  for (Shape s : kShapes) {
    INFO(shape_name(s));
    int64_t n = count_of(s);
    for (TypeKind k : kScalars) {
      const Type* t = type_of(T, k);
      Vec a = h.make(t, scalars(k, n, g)), b = h.make(t, scalars(k, n, g));
      for (PrimId p : {PrimId::Eq, PrimId::Ne, PrimId::Lt, PrimId::Gt, PrimId::Le, PrimId::Ge})
        h.same(p, {t}, T.bool_(), {a, b});
      bool number = k != TypeKind::Bool && k != TypeKind::Char;
      if (number) {
        for (PrimId p : {PrimId::Add, PrimId::Sub, PrimId::Mul}) h.same(p, {t}, t, {a, b});
        h.same(PrimId::Negate, {t}, t, {a});
        // Division: never by zero here; with a zero below.
        std::vector<Value> d = scalars(k, n, g);
        for (Value& x : d)
          if (lang::values_equal(x, lang::eval::identity_of(x)))
            x = k == TypeKind::Int ? I(-1) : k == TypeKind::I32 ? Value::i32(7) : k == TypeKind::Float ? F(0.5) : Value::f32(2);
        h.same(PrimId::Div, {t}, t, {a, h.make(t, d)});
        std::vector<Value> pw;
        for (int64_t i = 0; i < n; ++i) pw.push_back(I(g.uni(0, 70)));
        h.same(PrimId::Power, {t}, t, {a, h.make(T.int_(), pw)});
        for (PrimId c : {PrimId::ToI32, PrimId::ToF32, PrimId::ToI64, PrimId::ToF64}) {
          const Type* r = c == PrimId::ToI32 ? T.i32() : c == PrimId::ToF32 ? T.f32() : c == PrimId::ToI64 ? T.int_() : T.float_();
          h.same(c, {t}, r, {a});
        }
      }
      if (k == TypeKind::Int || k == TypeKind::I32 || k == TypeKind::Bool) {
        for (PrimId p : {PrimId::Or, PrimId::And, PrimId::Xor, PrimId::Nor, PrimId::Nand}) h.same(p, {t}, t, {a, b});
        h.same(PrimId::Not, {t}, t, {a});
      }
      h.same(PrimId::Select, {t}, t, {h.make(T.bool_(), scalars(TypeKind::Bool, n, g)), a, b});
    }
  }
}

TEST_CASE("lifted scalar functions and conversions: native = fallback") {
  PrimHarness h;
  Gen g;
  auto& T = h.T;
  for (Shape s : kShapes) {
    INFO(shape_name(s));
    int64_t n = count_of(s);
    Vec f = h.make(T.float_(), scalars(TypeKind::Float, n, g));
    std::vector<Value> pos;
    for (int64_t i = 0; i < n; ++i) pos.push_back(F(g.real(0, 1e6)));
    Vec fp = h.make(T.float_(), pos);
    for (PrimId p : {PrimId::Exp, PrimId::Sin, PrimId::Cos, PrimId::Tan, PrimId::Atan, PrimId::Sinh, PrimId::Cosh, PrimId::Tanh})
      h.same(p, {}, T.float_(), {f});
    for (PrimId p : {PrimId::Sqrt, PrimId::Ln}) h.same(p, {}, T.float_(), {fp});
    std::vector<Value> unit;
    for (int64_t i = 0; i < n; ++i) unit.push_back(F(g.real(-1, 1)));
    for (PrimId p : {PrimId::Asin, PrimId::Acos}) h.same(p, {}, T.float_(), {h.make(T.float_(), unit)});
    h.same(PrimId::Expt, {}, T.float_(), {fp, f});
    for (PrimId p : {PrimId::Ceil, PrimId::Floor, PrimId::Trunc, PrimId::Round}) h.same(p, {}, T.int_(), {f});
    Vec i = h.make(T.int_(), scalars(TypeKind::Int, n, g));
    h.same(PrimId::ToFloat, {}, T.float_(), {i});
    h.same(PrimId::Btoi, {}, T.int_(), {h.make(T.bool_(), scalars(TypeKind::Bool, n, g))});
    h.same(PrimId::CharCode, {}, T.int_(), {h.make(T.char_(), scalars(TypeKind::Char, n, g))});
    std::vector<Value> codes, nonzero, counts;
    for (int64_t j = 0; j < n; ++j) {
      codes.push_back(I(g.uni(0, 255)));
      int64_t d = g.uni(-9, 9);
      nonzero.push_back(I(d == 0 ? 3 : d));
      counts.push_back(I(g.uni(0, 63)));
    }
    h.same(PrimId::CodeChar, {}, T.char_(), {h.make(T.int_(), codes)});
    h.same(PrimId::Rem, {}, T.int_(), {i, h.make(T.int_(), nonzero)});
    h.same(PrimId::Lshift, {}, T.int_(), {i, h.make(T.int_(), counts)});
    h.same(PrimId::Rshift, {}, T.int_(), {i, h.make(T.int_(), counts)});
  }
}

TEST_CASE("lifted scalar errors: same message as the interpreter") {
  PrimHarness h;
  auto& T = h.T;
  auto iv = [&](std::vector<int64_t> xs) {
    std::vector<Value> v;
    for (int64_t x : xs) v.push_back(I(x));
    return h.make(T.int_(), v);
  };
  auto fv = [&](std::vector<double> xs) {
    std::vector<Value> v;
    for (double x : xs) v.push_back(F(x));
    return h.make(T.float_(), v);
  };
  CHECK(h.same(PrimId::Div, {T.int_()}, T.int_(), {iv({1, 2, 3}), iv({1, 0, 2})}) == "Divide by zero.");
  CHECK(h.same(PrimId::Div, {T.int_()}, T.int_(), {iv({INT64_MIN}), iv({-1})}).empty());
  CHECK(h.same(PrimId::Rem, {}, T.int_(), {iv({1, 2}), iv({0, 1})}) == "Divide by zero in function REM.");
  CHECK(h.same(PrimId::Power, {T.int_()}, T.int_(), {iv({2, 2}), iv({3, -1})}) == "The power must be nonnegative for ^ .");
  CHECK(h.same(PrimId::Lshift, {}, T.int_(), {iv({1}), iv({64})}) == "Shift count out of range in function LSHIFT.");
  CHECK(h.same(PrimId::Rshift, {}, T.int_(), {iv({1}), iv({-1})}) == "Shift count out of range in function RSHIFT.");
  CHECK(h.same(PrimId::Sqrt, {}, T.float_(), {fv({4, -1})}) == "Sqrt of negative number.");
  CHECK(h.same(PrimId::Ln, {}, T.float_(), {fv({-1})}) == "Ln of negative number.");
  CHECK(h.same(PrimId::Expt, {}, T.float_(), {fv({-2}), fv({0.5})}) == "Ln of negative number.");
  CHECK(h.same(PrimId::CodeChar, {}, T.char_(), {iv({65, 256})}) == "Character code out of range in function CODE_CHAR.");
  double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(h.same(PrimId::Floor, {}, T.int_(), {fv({1.5, 1e19})}) == "Float value out of integer range in function FLOOR.");
  CHECK(h.same(PrimId::Round, {}, T.int_(), {fv({nan})}) == "Float value out of integer range in function ROUND.");
  CHECK(h.same(PrimId::ToI64, {T.float_()}, T.int_(), {fv({-1e300})}) == "Float value out of integer range in function I64.");
  CHECK(h.same(PrimId::ToI32, {T.float_()}, T.i32(), {fv({3e9})}) == "Float value out of integer range in function I32.");
  CHECK(h.same(PrimId::Round, {}, T.int_(), {fv({2.5, -2.5, 0.49999999999999994})}).empty());
}

TEST_CASE("lifted select on structured elements") {
  PrimHarness h;
  auto& T = h.T;
  const Type* t = T.pair(T.seq(T.int_()), T.char_());
  std::vector<Value> a = {Value::pair(ints({1}), Value::char_('a')), Value::pair(ints({}), Value::char_('b'))};
  std::vector<Value> b = {Value::pair(ints({2, 3}), Value::char_('c')), Value::pair(ints({4}), Value::char_('d'))};
  h.same(PrimId::Select, {t}, t, {h.make(T.bool_(), {B(false), B(true)}), h.make(t, a), h.make(t, b)});
}

// ---------------------------------------------------------------- sequences

TEST_CASE("lifted #, dist, index, iseq: native = fallback") {
  PrimHarness h;
  Gen g;
  auto& T = h.T;
  const Type* si = T.seq(T.int_());
  for (Shape s : kShapes) {
    INFO(shape_name(s));
    auto lens = lengths_of(s, g);
    int64_t n = static_cast<int64_t>(lens.size());
    h.same(PrimId::Length, {T.int_()}, T.int_(), {h.make(si, seqs(TypeKind::Int, lens, g))});
    h.same(PrimId::Length, {si}, T.int_(), {h.make(T.seq(si), nested(lens, g))});
    std::vector<Value> ks;
    for (int64_t l : lens) ks.push_back(I(l));
    Vec k = h.make(T.int_(), ks);
    h.same(PrimId::Dist, {T.float_()}, T.seq(T.float_()), {h.make(T.float_(), scalars(TypeKind::Float, n, g)), k});
    h.same(PrimId::Dist, {si}, T.seq(si), {h.make(si, seqs(TypeKind::Int, std::vector<int64_t>(static_cast<size_t>(n), 2), g)), k});
    h.same(PrimId::Index, {}, si, {k});
    std::vector<Value> st, st2, en;
    for (int64_t l : lens) {
      int64_t a = g.uni(-100, 100), d = g.uni(1, 4);
      st.push_back(I(a));
      st2.push_back(I(d));
      en.push_back(I(a + l * d - g.uni(0, d - 1)));
    }
    h.same(PrimId::Iseq, {}, si, {h.make(T.int_(), st), h.make(T.int_(), st2), h.make(T.int_(), en)});
  }
  auto iv = [&](std::vector<int64_t> xs) {
    std::vector<Value> v;
    for (int64_t x : xs) v.push_back(I(x));
    return h.make(T.int_(), v);
  };
  CHECK(h.same(PrimId::Dist, {T.int_()}, si, {iv({1, 2}), iv({3, -1})}) == "Negative length in function DIST.");
  CHECK(h.same(PrimId::Index, {}, si, {iv({0, -2})}) == "Negative length in function INDEX.");
  CHECK(h.same(PrimId::Iseq, {}, si, {iv({0, 5}), iv({1, 1}), iv({3, 4})}) ==
        "In [s:e:l], e must be >= to s, and l must be positive.");
  CHECK(h.same(PrimId::Iseq, {}, si, {iv({0}), iv({0}), iv({3})}) == "In [s:e:l], e must be >= to s, and l must be positive.");
}

TEST_CASE("lifted elt and rep: native = fallback") {
  PrimHarness h;
  Gen g;
  auto& T = h.T;
  const Type* si = T.seq(T.int_());
  for (Shape s : kShapes) {
    INFO(shape_name(s));
    auto lens = lengths_of(s, g);
    for (int64_t& l : lens) l = std::max<int64_t>(l, 1);
    int64_t n = static_cast<int64_t>(lens.size());
    std::vector<Value> idx;
    for (int64_t l : lens) idx.push_back(I(g.uni(0, l - 1)));
    Vec i = h.make(T.int_(), idx);
    Vec v = h.make(T.seq(T.char_()), seqs(TypeKind::Char, lens, g));
    h.same(PrimId::Elt, {T.char_()}, T.char_(), {v, i});
    h.same(PrimId::Rep, {T.char_()}, T.seq(T.char_()), {v, h.make(T.char_(), scalars(TypeKind::Char, n, g)), i});
    Vec nv = h.make(T.seq(si), nested(lens, g));
    h.same(PrimId::Elt, {si}, si, {nv, i});
    h.same(PrimId::Rep, {si}, T.seq(si), {nv, h.make(si, seqs(TypeKind::Int, std::vector<int64_t>(static_cast<size_t>(n), 2), g)), i});
  }
  Vec v = h.make(si, {ints({1, 2}), ints({}), ints({3})});
  Vec i = h.make(T.int_(), {I(1), I(0), I(0)});
  CHECK(h.same(PrimId::Elt, {T.int_()}, T.int_(), {v, i}) == "Sequence reference (a[i]) out of bounds: index 0, length 0.");
  CHECK(h.same(PrimId::Rep, {T.int_()}, si, {v, h.make(T.int_(), {I(0), I(0), I(0)}), h.make(T.int_(), {I(2), I(0), I(0)})}) ==
        "Sequence reference (a[i]) out of bounds: index 2, length 2.");
}

TEST_CASE("lifted scans and reductions: native = fallback") {
  PrimHarness h;
  Gen g;
  auto& T = h.T;
  struct Fam {
    PrimId scan, reduce;
    std::vector<TypeKind> kinds;
  };
  std::vector<Fam> fams = {
      {PrimId::PlusScan, PrimId::Sum, {TypeKind::Int, TypeKind::Float, TypeKind::I32, TypeKind::F32}},
      {PrimId::MultScan, PrimId::Product, {TypeKind::Int, TypeKind::Float, TypeKind::I32, TypeKind::F32}},
      {PrimId::MaxScan, PrimId::MaxVal, {TypeKind::Int, TypeKind::Float, TypeKind::Char, TypeKind::I32, TypeKind::F32}},
      {PrimId::MinScan, PrimId::MinVal, {TypeKind::Int, TypeKind::Float, TypeKind::Char, TypeKind::I32, TypeKind::F32}},
      {PrimId::OrScan, PrimId::AnyRed, {TypeKind::Int, TypeKind::Bool, TypeKind::I32}},
      {PrimId::AndScan, PrimId::AllRed, {TypeKind::Int, TypeKind::Bool, TypeKind::I32}},
      {PrimId::XorScan, PrimId::Parity, {TypeKind::Int, TypeKind::Bool, TypeKind::I32}},
  };
  for (Shape s : kShapes) {
    INFO(shape_name(s));
    auto lens = lengths_of(s, g);
    for (const Fam& f : fams) {
      for (TypeKind k : f.kinds) {
        const Type* t = type_of(T, k);
        std::vector<Value> vs = seqs(k, lens, g);
        if (f.scan == PrimId::MultScan && (k == TypeKind::Float || k == TypeKind::F32)) {
          // Keep products finite and away from zero so a tolerance is meaningful.
          for (Value& v : vs) {
            std::vector<Value> e;
            for (size_t j = 0; j < v.length(); ++j)
              e.push_back(k == TypeKind::Float ? F(g.real(0.999, 1.001)) : Value::f32(static_cast<float>(g.real(0.999, 1.001))));
            v = Value::seq(std::move(e));
          }
        }
        double tol = k == TypeKind::Float ? 1e-9 : k == TypeKind::F32 ? 1e-3 : 0;
        Vec v = h.make(T.seq(t), vs);
        h.same(f.scan, {t}, T.seq(t), {v}, tol);
        h.same(f.reduce, {t}, t, {v}, tol);
      }
    }
  }
}

TEST_CASE("lifted ->, <-, put, permute: native = fallback") {
  PrimHarness h;
  Gen g;
  auto& T = h.T;
  const Type* si = T.seq(T.int_());
  const Type* pc = T.pair(T.int_(), T.seq(T.char_()));
  for (Shape s : kShapes) {
    INFO(shape_name(s));
    auto lens = lengths_of(s, g);
    std::vector<std::vector<int64_t>> gi, pm, wi;
    for (int64_t l : lens) {
      std::vector<int64_t> x, p(static_cast<size_t>(l)), w;
      if (l > 0)
        for (int64_t j = 0, m = g.uni(0, 2 * l); j < m; ++j) x.push_back(g.uni(0, l - 1));
      std::iota(p.begin(), p.end(), 0);
      std::shuffle(p.begin(), p.end(), g.rng);
      for (int64_t j = 0; j < l; ++j) w.push_back(g.uni(0, l - 1));  // collisions on purpose
      gi.push_back(x);
      pm.push_back(p);
      wi.push_back(w);
    }
    Vec vi = h.make(si, seqs(TypeKind::Int, lens, g));
    std::vector<Value> structured;
    for (int64_t l : lens) {
      std::vector<Value> e;
      for (int64_t j = 0; j < l; ++j) e.push_back(Value::pair(I(g.uni(0, 9)), Value::string(std::string(static_cast<size_t>(g.uni(0, 3)), 'x'))));
      structured.push_back(Value::seq(std::move(e)));
    }
    Vec vs = h.make(T.seq(pc), structured);
    Vec gidx = h.make(si, int_seqs(gi)), perm = h.make(si, int_seqs(pm)), widx = h.make(si, int_seqs(wi));
    h.same(PrimId::Gather, {T.int_()}, si, {vi, gidx});
    h.same(PrimId::Gather, {pc}, T.seq(pc), {vs, gidx});
    h.same(PrimId::Permute, {T.int_()}, si, {vi, perm});
    h.same(PrimId::Permute, {pc}, T.seq(pc), {vs, perm});
    Vec vals = h.make(si, seqs(TypeKind::Int, lens, g));
    h.same(PrimId::Put, {T.int_()}, si, {vals, widx, vi});
    h.same(PrimId::Put, {pc}, T.seq(pc), {vs, widx, vs});
    std::vector<Value> pairs, spairs;
    for (size_t k = 0; k < wi.size(); ++k) {
      std::vector<Value> p, sp;
      for (int64_t j : wi[k]) {
        p.push_back(Value::pair(I(j), I(g.uni(-5, 5))));
        sp.push_back(Value::pair(I(j), Value::pair(I(1), Value::string("w"))));
      }
      pairs.push_back(Value::seq(std::move(p)));
      spairs.push_back(Value::seq(std::move(sp)));
    }
    h.same(PrimId::Write, {T.int_()}, si, {vi, h.make(T.seq(T.pair(T.int_(), T.int_())), pairs)});
    h.same(PrimId::Write, {pc}, T.seq(pc), {vs, h.make(T.seq(T.pair(T.int_(), pc)), spairs)});
  }
  Vec v = h.make(si, {ints({1, 2}), ints({3})});
  CHECK(h.same(PrimId::Gather, {T.int_()}, si, {v, h.make(si, {ints({1}), ints({1})})}) == "Index out of bounds for function ->: index 1, length 1.");
  CHECK(h.same(PrimId::Permute, {T.int_()}, si, {v, h.make(si, {ints({0, 0}), ints({0})})}) ==
        "Bad arguments to function PERMUTE.");
  CHECK(h.same(PrimId::Permute, {T.int_()}, si, {v, h.make(si, {ints({1, 0}), ints({})})}) ==
        "Bad arguments to function PERMUTE.");
  // put: the first failing instance decides between the two messages.
  CHECK(h.same(PrimId::Put, {T.int_()}, si, {v, h.make(si, {ints({5, 0}), ints({})}), v}) ==
        "Index out of bounds for function <-: index 5, length 2.");
  CHECK(h.same(PrimId::Put, {T.int_()}, si, {v, h.make(si, {ints({0}), ints({5})}), v}) == "Length mismatch in function PUT: lengths 2 and 1.");
  CHECK(h.same(PrimId::Write, {T.int_()}, si,
               {v, h.make(T.seq(T.pair(T.int_(), T.int_())), {seq({Value::pair(I(0), I(9))}), seq({Value::pair(I(1), I(9))})})}) ==
        "Index out of bounds for function <-: index 1, length 1.");
}

TEST_CASE("lifted pack, ++, partition, flatten: native = fallback") {
  PrimHarness h;
  Gen g;
  auto& T = h.T;
  const Type* si = T.seq(T.int_());
  for (Shape s : kShapes) {
    INFO(shape_name(s));
    auto lens = lengths_of(s, g);
    std::vector<Value> fl, sfl;
    for (int64_t l : lens) {
      std::vector<Value> e, se;
      for (int64_t j = 0; j < l; ++j) {
        e.push_back(Value::pair(I(j), B(g.coin())));
        se.push_back(Value::pair(ints(std::vector<int64_t>(static_cast<size_t>(g.uni(0, 2)), j)), B(g.coin())));
      }
      fl.push_back(Value::seq(std::move(e)));
      sfl.push_back(Value::seq(std::move(se)));
    }
    h.same(PrimId::Pack, {T.int_()}, si, {h.make(T.seq(T.pair(T.int_(), T.bool_())), fl)});
    h.same(PrimId::Pack, {si}, T.seq(si), {h.make(T.seq(T.pair(si, T.bool_())), sfl)});
    auto lens2 = lens;
    std::shuffle(lens2.begin(), lens2.end(), g.rng);
    h.same(PrimId::Append, {T.float_()}, T.seq(T.float_()),
           {h.make(T.seq(T.float_()), seqs(TypeKind::Float, lens, g)), h.make(T.seq(T.float_()), seqs(TypeKind::Float, lens2, g))});
    h.same(PrimId::Append, {si}, T.seq(si), {h.make(T.seq(si), nested(lens, g)), h.make(T.seq(si), nested(lens2, g))});
    std::vector<std::vector<int64_t>> counts;
    for (int64_t l : lens) {
      std::vector<int64_t> c;
      int64_t left = l;
      while (left > 0 || g.coin(0.2)) {
        int64_t x = g.uni(0, std::min<int64_t>(left, 4));
        c.push_back(x);
        left -= x;
      }
      counts.push_back(c);
    }
    h.same(PrimId::Partition, {T.char_()}, T.seq(T.seq(T.char_())),
           {h.make(T.seq(T.char_()), seqs(TypeKind::Char, lens, g)), h.make(si, int_seqs(counts))});
    h.same(PrimId::Flatten, {T.int_()}, si, {h.make(T.seq(si), nested(lens, g))});
    std::vector<Value> deep;
    for (const Value& x : nested(lens, g)) deep.push_back(Value::seq({x, x}));
    h.same(PrimId::Flatten, {si}, T.seq(si), {h.make(T.seq(T.seq(si)), deep)});
  }
  Vec v = h.make(si, {ints({1, 2}), ints({3})});
  CHECK(h.same(PrimId::Partition, {T.int_()}, T.seq(si), {v, h.make(si, {ints({1}), ints({-1, 2})})}) ==
        "Length mismatch in function PARTITION.");
  CHECK(h.same(PrimId::Partition, {T.int_()}, T.seq(si), {v, h.make(si, {ints({2}), ints({-1, 2})})}) ==
        "Negative length in function PARTITION.");
}

TEST_CASE("lifted rank and rank_down: native = fallback") {
  PrimHarness h;
  Gen g;
  auto& T = h.T;
  const Type* si = T.seq(T.int_());
  for (Shape s : kShapes) {
    INFO(shape_name(s));
    auto lens = lengths_of(s, g);
    for (TypeKind k : {TypeKind::Int, TypeKind::Float, TypeKind::Char, TypeKind::I32, TypeKind::F32}) {
      const Type* t = type_of(T, k);
      std::vector<Value> vs = seqs(k, lens, g);
      if (k == TypeKind::Float) {
        // ties, signed zeros and NaN
        for (Value& v : vs) {
          std::vector<Value> e = v.elems();
          for (Value& x : e) {
            int64_t r = g.uni(0, 9);
            if (r == 0) x = F(std::numeric_limits<double>::quiet_NaN());
            else if (r == 1) x = F(-0.0);
            else if (r == 2) x = F(0.0);
            else if (r == 3) x = F(1.0);
          }
          v = Value::seq(std::move(e));
        }
      }
      Vec v = h.make(T.seq(t), vs);
      h.same(PrimId::Rank, {t}, si, {v});
      h.same(PrimId::RankDown, {t}, si, {v});
    }
  }
}

TEST_CASE("lifted *_combine: native = fallback") {
  PrimHarness h;
  Gen g;
  auto& T = h.T;
  const Type* si = T.seq(T.int_());
  struct C {
    PrimId id;
    std::vector<TypeKind> kinds;
  };
  std::vector<C> cs = {{PrimId::PlusCombine, {TypeKind::Int, TypeKind::Float}},
                       {PrimId::MultCombine, {TypeKind::Int, TypeKind::I32}},
                       {PrimId::MaxCombine, {TypeKind::Int, TypeKind::Float, TypeKind::Char}},
                       {PrimId::MinCombine, {TypeKind::Int, TypeKind::F32}},
                       {PrimId::AndCombine, {TypeKind::Int, TypeKind::Bool}},
                       {PrimId::OrCombine, {TypeKind::Bool, TypeKind::I32}},
                       {PrimId::XorCombine, {TypeKind::Int, TypeKind::Bool}}};
  for (Shape s : kShapes) {
    INFO(shape_name(s));
    auto lens = lengths_of(s, g);
    std::vector<std::vector<int64_t>> idx;
    std::vector<int64_t> ilens;
    for (int64_t l : lens) {
      std::vector<int64_t> x;
      if (l > 0)
        for (int64_t j = 0, m = g.uni(0, 2 * l); j < m; ++j) x.push_back(g.uni(0, l - 1));
      ilens.push_back(static_cast<int64_t>(x.size()));
      idx.push_back(x);
    }
    Vec iv = h.make(si, int_seqs(idx));
    for (const C& c : cs)
      for (TypeKind k : c.kinds) {
        const Type* t = type_of(T, k);
        h.same(c.id, {t}, T.seq(t), {h.make(T.seq(t), seqs(k, lens, g)), iv, h.make(T.seq(t), seqs(k, ilens, g))});
      }
  }
  Vec d = h.make(si, {ints({1, 2}), ints({3})});
  CHECK(h.same(PrimId::PlusCombine, {T.int_()}, si, {d, h.make(si, {ints({0}), ints({0, 4})}), h.make(si, {ints({1}), ints({1, 1})})}) ==
        "Index out of bounds for function PLUS_COMBINE: index 4 at position 1, length 1.");
  CHECK(h.same(PrimId::MaxCombine, {T.int_()}, si, {d, h.make(si, {ints({0}), ints({9})}), h.make(si, {ints({}), ints({1})})}) ==
        "Length mismatch in function MAX_COMBINE.");
}

TEST_CASE("lifted identity and prim_default: native = fallback") {
  PrimHarness h;
  auto& T = h.T;
  lang::DataDef* def = T.new_datadef("pt");
  def->fields = T.pair(T.char_(), T.seq(T.float_()));
  const Type* pt = T.data(def, {});
  const Type* t = T.pair(T.int_(), pt);
  std::vector<Value> vs = {Value::pair(I(3), Value::data(def, Value::pair(Value::char_('x'), seq({F(1)})))),
                           Value::pair(I(4), Value::data(def, Value::pair(Value::char_('y'), seq({}))))};
  h.same(PrimId::Identity, {t}, t, {h.make(t, vs)});
  h.same(PrimId::Identity, {t}, t, {h.make(t, {})});
  h.same(PrimId::PrimDefault, {t}, t, {h.make(T.seq(t), {seq(vs), seq({})})});
  const Type* fn = T.fn(T.int_(), T.int_());
  CHECK(h.same(PrimId::PrimDefault, {fn}, fn, {h.make(T.seq(fn), {seq({})})}) == "No identity value for a function type.");
}

TEST_CASE("lifted primitives without a native version go through the fallback") {
  PrimHarness h;
  auto& T = h.T;
  const Type* si = T.seq(T.int_());
  Vec v = h.make(si, {ints({1, 2}), ints({})});
  std::vector<const Type*> targs = {si};
  exec::host::LiftedCall c{PrimId::ToString, h.span, &targs, T.string()};
  std::vector<Vec> args = {v};
  CHECK(!exec::host::apply_native_prim(h.ctx, c, args).has_value());
  auto r = exec::host::to_values(exec::host::apply_lifted_prim(h.ctx, c, args));
  REQUIRE(r.size() == 2);
  CHECK(r[0].to_string() == "[1, 2]");
  CHECK(r[1].to_string() == "[]");
}

TEST_CASE("rep writes into a sequence handed over to it alone, and copies one anything else shares") {
  // Note [Updates in place] in exec/host/lifted_prims.h.
  PrimHarness h;
  auto& T = h.T;
  const Type* si = T.seq(T.int_());
  std::vector<const Type*> targs = {T.int_()};
  exec::host::LiftedCall c{PrimId::Rep, h.span, &targs, si};
  Vec x = h.make(T.int_(), {I(7), I(8)});
  Vec i = h.make(T.int_(), {I(1), I(0)});
  auto holds = [](const Vec& v, std::vector<Value> want) {
    return lang::values_equal(Value::seq(exec::host::to_values(v)), Value::seq(std::move(want)));
  };
  auto fresh = [&] { return h.make(si, {ints({1, 2, 3}), ints({4})}); };

  // Handed over and unshared: the same element buffer comes back, updated.
  std::vector<Vec> args;
  args.push_back(fresh());
  const void* buffer = args[0].elems().raw_data();
  args.push_back(x);
  args.push_back(i);
  c.owns_first = true;
  Vec updated = exec::host::apply_lifted_prim(h.ctx, c, args);
  CHECK(updated.elems().raw_data() == buffer);
  CHECK(holds(updated, {ints({1, 7, 3}), ints({8})}));

  // Shared with another vector (a variable still holding it): copied, the other unchanged.
  Vec kept = fresh();
  std::vector<Vec> shared = {kept, x, i};
  Vec copy = exec::host::apply_lifted_prim(h.ctx, c, shared);
  CHECK(copy.elems().raw_data() != kept.elems().raw_data());
  CHECK(holds(copy, {ints({1, 7, 3}), ints({8})}));
  CHECK(holds(kept, {ints({1, 2, 3}), ints({4})}));

  // Not handed over: copied even though nothing else shares it.
  std::vector<Vec> held = {fresh(), x, i};
  const void* held_buffer = held[0].elems().raw_data();
  c.owns_first = false;
  Vec copied = exec::host::apply_lifted_prim(h.ctx, c, held);
  CHECK(copied.elems().raw_data() != held_buffer);
  CHECK(holds(held[0], {ints({1, 2, 3}), ints({4})}));
}

// ---------------------------------------------------------------- uniform and regular inputs

namespace {

/// Regular shapes: (instances, length of each).
struct RegularShape {
  const char* name;
  int64_t n, len;
};
constexpr RegularShape kRegularShapes[] = {{"no instances", 0, 3},         {"one instance", 1, 4},
                                           {"one huge segment", 1, 100000}, {"many one-element segments", 40000, 1},
                                           {"empty segments", 50, 0},       {"many short segments", 12000, 3}};

/// n instances of `outer` sequences of `inner` ints each: [[int]].
std::vector<Value> blocks(int64_t n, int64_t outer, int64_t inner, Gen& g) {
  std::vector<Value> v;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<Value> o;
    for (int64_t j = 0; j < outer; ++j) o.push_back(Value::seq(scalars(TypeKind::Int, inner, g)));
    v.push_back(Value::seq(std::move(o)));
  }
  return v;
}

std::vector<Value> same_ints(int64_t n, int64_t x) { return std::vector<Value>(static_cast<size_t>(n), I(x)); }

}  // namespace

TEST_CASE("lifted primitives on regular sequences and uniform scalars: native = fallback, regular results") {
  PrimHarness h;
  Gen g;
  auto& T = h.T;
  const Type* si = T.seq(T.int_());
  const Type* ssi = T.seq(si);
  using exec::host::uniform_buffer;
  for (const RegularShape& s : kRegularShapes) {
    INFO(s.name);
    int64_t n = s.n, len = s.len;
    // elt of halves: [[int]] of 2 sequences of len each, index 0, 1 (uniform), mixed, and out of
    // bounds (2, -1).
    Vec halves = uniform_form(h.make(ssi, blocks(n, 2, len, g)));
    REQUIRE((n == 0 || halves.is_regular()));
    for (int64_t i0 : {0, 1}) {
      Vec idx = uniform_form(h.make(T.int_(), same_ints(n, i0)));
      CHECK(h.same(PrimId::Elt, {si}, si, {halves, idx}) == "");
      auto r = h.apply(PrimHarness::Path::native, PrimId::Elt, {si}, si, {halves, idx});
      CHECK((n == 0 || r.value->is_regular()));
    }
    std::vector<Value> mixed;
    for (int64_t k = 0; k < n; ++k) mixed.push_back(I(k % 2));
    CHECK(h.same(PrimId::Elt, {si}, si, {halves, h.make(T.int_(), mixed)}) == "");
    if (n > 0) {
      CHECK(h.same(PrimId::Elt, {si}, si, {halves, uniform_form(h.make(T.int_(), same_ints(n, 2)))}) ==
            "Sequence reference (a[i]) out of bounds: index 2, length 2.");
      CHECK(h.same(PrimId::Elt, {si}, si, {halves, uniform_form(h.make(T.int_(), same_ints(n, -1)))}) ==
            "Sequence reference (a[i]) out of bounds: index -1, length 2.");
    }
    // An irregular outer vector of regular inner sequences.
    std::vector<Value> ragged;
    std::vector<Value> ragged_idx;
    for (int64_t k = 0; k < n; ++k) {
      int64_t outer = 1 + k % 3;
      auto b = blocks(1, outer, len, g);
      ragged.push_back(b[0]);
      ragged_idx.push_back(I(outer - 1));
    }
    Vec rv = h.make(ssi, ragged);
    Vec rv_reg_inner = Vec::seq(ssi, n, rv.shared_buffer(), rv.offsets_buffer(), uniform_form(rv.elems()));
    CHECK(h.same(PrimId::Elt, {si}, si, {rv_reg_inner, h.make(T.int_(), ragged_idx)}) == "");
    CHECK(h.same(PrimId::Elt, {si}, si, {rv_reg_inner, uniform_form(h.make(T.int_(), same_ints(n, 0)))}) == "");
    // Structured inner elements: [[(int, bool)]].
    const Type* sp = T.seq(T.pair(T.int_(), T.bool_()));
    std::vector<Value> pairs;
    for (int64_t k = 0; k < n; ++k) {
      std::vector<Value> o;
      for (int j = 0; j < 2; ++j) {
        std::vector<Value> row;
        for (int64_t x = 0; x < len; ++x) row.push_back(Value::pair(I(k * 10 + x), B(x % 2 == 0)));
        o.push_back(Value::seq(std::move(row)));
      }
      pairs.push_back(Value::seq(std::move(o)));
    }
    CHECK(h.same(PrimId::Elt, {sp}, sp, {uniform_form(h.make(T.seq(sp), pairs)), uniform_form(h.make(T.int_(), same_ints(n, 1)))}) == "");

    // partition into halves: regular [int] cut by the uniform counts [len/2, len - len/2].
    Vec v = uniform_form(h.make(si, seqs(TypeKind::Int, std::vector<int64_t>(static_cast<size_t>(n), len), g)));
    auto counts = [&](int64_t a, int64_t b) {
      std::vector<Value> c(static_cast<size_t>(n), ints({a, b}));
      return uniform_form(h.make(si, c));
    };
    CHECK(h.same(PrimId::Partition, {T.int_()}, ssi, {v, counts(len / 2, len - len / 2)}) == "");
    if (len % 2 == 0) {
      auto r = h.apply(PrimHarness::Path::native, PrimId::Partition, {T.int_()}, ssi, {v, counts(len / 2, len / 2)});
      CHECK((n == 0 || (r.value->is_regular() && r.value->elems().is_regular())));
    }
    if (n > 0) {
      CHECK(h.same(PrimId::Partition, {T.int_()}, ssi, {v, counts(len + 1, len + 1)}) ==
            "Length mismatch in function PARTITION.");
      CHECK(h.same(PrimId::Partition, {T.int_()}, ssi, {v, counts(-1, -1)}) == "Negative length in function PARTITION.");
      std::vector<Value> none(static_cast<size_t>(n), ints({}));
      std::string e = h.same(PrimId::Partition, {T.int_()}, ssi, {v, uniform_form(h.make(si, none))});
      CHECK(e == (len == 0 ? "" : "Length mismatch in function PARTITION."));
    }

    // flatten: regular of regular, and regular outer over irregular inner.
    Vec fr = h.apply(PrimHarness::Path::native, PrimId::Flatten, {T.int_()}, si, {halves}).value.value();
    CHECK((n == 0 || (fr.is_regular() && fr.regular_length() == 2 * len)));
    CHECK(h.same(PrimId::Flatten, {T.int_()}, si, {halves}) == "");
    CHECK(h.same(PrimId::Flatten, {T.int_()}, si, {Vec::seq(ssi, n, halves.shared_buffer(), h.make(ssi, blocks(n, 2, len, g)).elems())}) == "");
    CHECK(h.same(PrimId::Flatten, {T.int_()}, si, {rv_reg_inner}) == "");

    // ++: regular with regular (scalars, and structured elements), and with irregular.
    Vec w = uniform_form(h.make(si, seqs(TypeKind::Int, std::vector<int64_t>(static_cast<size_t>(n), 2), g)));
    CHECK(h.same(PrimId::Append, {T.int_()}, si, {v, w}) == "");
    auto ar = h.apply(PrimHarness::Path::native, PrimId::Append, {T.int_()}, si, {v, w});
    CHECK((n == 0 || (ar.value->is_regular() && ar.value->regular_length() == len + 2)));
    std::vector<int64_t> lens3;
    for (int64_t k = 0; k < n; ++k) lens3.push_back(k % 4);
    CHECK(h.same(PrimId::Append, {T.int_()}, si, {v, h.make(si, seqs(TypeKind::Int, lens3, g))}) == "");
    CHECK(h.same(PrimId::Append, {si}, ssi, {halves, uniform_form(h.make(ssi, blocks(n, 1, 2, g)))}) == "");

    // dist, index and # with uniform lengths.
    Vec k = uniform_form(h.make(T.int_(), same_ints(n, len)));
    CHECK(h.same(PrimId::Dist, {T.float_()}, T.seq(T.float_()), {uniform_form(h.make(T.float_(), std::vector<Value>(static_cast<size_t>(n), F(2.5)))), k}) == "");
    CHECK(h.same(PrimId::Dist, {T.int_()}, si, {h.make(T.int_(), scalars(TypeKind::Int, n, g)), k}) == "");
    CHECK(h.same(PrimId::Index, {}, si, {k}) == "");
    auto ir = h.apply(PrimHarness::Path::native, PrimId::Index, {}, si, {k});
    CHECK((n == 0 || ir.value->is_regular()));
    auto lr = h.apply(PrimHarness::Path::native, PrimId::Length, {si}, T.int_(), {halves});
    CHECK((n == 0 || (lr.value->is_uniform() && lr.value->uniform_value<int64_t>() == 2)));
    if (n > 0) {
      Vec neg = uniform_form(h.make(T.int_(), same_ints(n, -2)));
      CHECK(h.same(PrimId::Dist, {T.int_()}, si, {h.make(T.int_(), scalars(TypeKind::Int, n, g)), neg}) ==
            "Negative length in function DIST.");
      CHECK(h.same(PrimId::Index, {}, si, {neg}) == "Negative length in function INDEX.");
    }
    // Scans, reductions and permute over regular descriptors.
    CHECK(h.same(PrimId::PlusScan, {T.int_()}, si, {v}) == "");
    CHECK(h.same(PrimId::Sum, {T.int_()}, T.int_(), {v}) == "");
    CHECK(h.same(PrimId::MaxVal, {T.int_()}, T.int_(), {v}) == "");
    std::vector<Value> perm;
    for (int64_t x = 0; x < n; ++x) {
      std::vector<int64_t> p(static_cast<size_t>(len));
      for (int64_t j = 0; j < len; ++j) p[static_cast<size_t>(j)] = len - 1 - j;
      perm.push_back(ints(p));
    }
    CHECK(h.same(PrimId::Permute, {T.int_()}, si, {v, uniform_form(h.make(si, perm))}) == "");
  }
}

TEST_CASE("lifted elementwise primitives of uniform arguments: uniform results, the fallback's values and errors") {
  PrimHarness h;
  auto& T = h.T;
  using Path = PrimHarness::Path;
  const std::vector<const Type*> none;
  // apply_lifted_prim and the fallback; errors are checked for the call's span (PrimHarness).
  auto run = [&](Path path, PrimId id, const Type* result, std::vector<Vec> args) {
    PrimHarness::Outcome o = h.apply(path, id, none, result, args);
    return std::pair{o.value, o.error};
  };
  for (int64_t n : {int64_t{2}, int64_t{100000}}) {
    CAPTURE(n);
    auto ui = [&](int64_t x) { return uniform_form(h.make(T.int_(), same_ints(n, x))); };
    auto uf = [&](double x) { return uniform_form(h.make(T.float_(), std::vector<Value>(static_cast<size_t>(n), F(x)))); };
    auto ub = [&](bool x) { return uniform_form(h.make(T.bool_(), std::vector<Value>(static_cast<size_t>(n), B(x)))); };
    struct Case {
      PrimId id;
      const Type* result;
      std::vector<Vec> args;
    };
    std::vector<Case> cases = {{PrimId::Add, T.int_(), {ui(5), ui(7)}},      {PrimId::Div, T.int_(), {ui(9), ui(2)}},
                               {PrimId::Div, T.int_(), {ui(9), ui(0)}},      {PrimId::Rem, T.int_(), {ui(-9), ui(4)}},
                               {PrimId::Lt, T.bool_(), {ui(1), ui(2)}},      {PrimId::Not, T.bool_(), {ub(true)}},
                               {PrimId::Sqrt, T.float_(), {uf(2.0)}},        {PrimId::Select, T.int_(), {ub(false), ui(1), ui(2)}},
                               {PrimId::ToFloat, T.float_(), {ui(3)}},       {PrimId::Mul, T.float_(), {uf(1.5), uf(-2.0)}}};
    for (Case& c : cases) {
      INFO(lang::core::prim_info(c.id).name);
      auto [r, err] = run(Path::lifted, c.id, c.result, c.args);
      auto [f, ferr] = run(Path::fallback, c.id, c.result, c.args);
      CHECK(err == ferr);
      if (err.empty()) {
        REQUIRE(r.has_value());
        CHECK(r->is_uniform());
        CHECK(r->size() == n);
        auto rv = exec::host::to_values(*r), fv = exec::host::to_values(*f);
        REQUIRE(rv.size() == fv.size());
        CHECK(lang::values_equal(rv[0], fv[0]));
        CHECK(lang::values_equal(rv[static_cast<size_t>(n - 1)], fv[static_cast<size_t>(n - 1)]));
      }
    }
    // Not every argument uniform: per instance as usual.
    std::vector<Value> xs;
    for (int64_t i = 0; i < n; ++i) xs.push_back(I(i));
    auto [r, err] = run(Path::lifted, PrimId::Add, T.int_(), {ui(5), h.make(T.int_(), xs)});
    REQUIRE(r.has_value());
    CHECK(!r->is_uniform());
    CHECK(r->data<int64_t>()[n - 1] == n + 4);
  }
}
