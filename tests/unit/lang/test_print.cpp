// Printing of types and values: every printing example of language.md §3, §5 and library.md §11.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "lang/types.h"
#include "lang/value.h"

using namespace ndp::lang;

namespace {

using TC = TypeClass;

Value ints(std::vector<int64_t> xs) {
  std::vector<Value> v;
  for (int64_t x : xs) v.push_back(Value::int_(x));
  return Value::seq(std::move(v));
}

Value floats(std::vector<double> xs) {
  std::vector<Value> v;
  for (double x : xs) v.push_back(Value::float_(x));
  return Value::seq(std::move(v));
}

Value range(int64_t from, int64_t to) {
  std::vector<int64_t> xs;
  for (int64_t i = from; i < to; ++i) xs.push_back(i);
  return ints(xs);
}

// The non-interactive answer for a monomorphic value.
std::string answer(const std::string& name, const Value& v, const Type* t, const PrintOptions& opts = {}) {
  return render_lines(answer_lines(name, format_value(v, t, opts), t, {}));
}

// The echo of a definition: `NAME = fn : TYPE`.
std::string fn_echo(const std::string& name, const Type* t, const std::vector<TypeClass>& classes) {
  return render_lines(answer_lines(name, "fn", t, classes));
}

const Type* tuple(TypeContext& tc, std::vector<const Type*> parts) {
  const Type* t = parts.back();
  for (size_t i = parts.size() - 1; i-- > 0;) t = tc.pair(parts[i], t);
  return t;
}

std::string at_string_answer(TypeContext& tc, const Value& v) {
  return answer("it", Value::string(nesl_string_of(v)), tc.string());
}

}  // namespace

TEST_CASE("line model: join, J and rendering (§5.5)") {
  CHECK(render_lines(join_lines(lines_of("ab"), lines_of("cd"))) == "abcd\n");
  CHECK(render_lines(join_all({lines_of("a"), lines_of("b"), lines_of("c")})) == "abc\n");
  CHECK(join_all({}).empty());
  // Too wide: B goes below, indented by A's indentation.
  std::string long_text(118, 'x');
  Lines broken = join_lines(lines_of(long_text), lines_of("yyy"));
  REQUIRE(broken.size() == 2);
  CHECK(broken[1].indent == 0);
  CHECK(broken[1].text == "yyy");
  // Fitting: B's further lines are indented by the joined width.
  Lines b = {PrintLine{0, "12"}, PrintLine{1, "34"}};
  Lines j = join_lines(lines_of("abc"), b);
  REQUIRE(j.size() == 2);
  CHECK(j[0].text == "abc12");
  CHECK(j[1].indent == 4);
  // Exactly 120 columns still fits.
  CHECK(join_lines(lines_of(std::string(100, 'a')), lines_of(std::string(20, 'b'))).size() == 1);
  CHECK(join_lines(lines_of(std::string(100, 'a')), lines_of(std::string(21, 'b'))).size() == 2);
  // A multi-line A: only its last line meets B.
  Lines a = {PrintLine{0, "first"}, PrintLine{2, "second"}};
  Lines ab = join_lines(a, lines_of("!"));
  REQUIRE(ab.size() == 2);
  CHECK(ab[1].indent == 2);
  CHECK(ab[1].text == "second!");
  CHECK(render_lines({PrintLine{3, "x"}, PrintLine{0, "y"}}) == "   x\ny\n");
}

TEST_CASE("tuples are nested pairs (§3.3)") {
  TypeContext tc;
  const Type* i = tc.int_();
  CHECK(answer("it", Value::tuple({Value::int_(1), Value::int_(2), Value::int_(3)}), tuple(tc, {i, i, i})) ==
        "it = (1, 2, 3) : int, int, int\n");
  Value nested = Value::pair(Value::pair(Value::int_(1), Value::int_(2)), Value::pair(Value::int_(3), Value::int_(4)));
  const Type* nested_t = tc.pair(tc.pair(i, i), tc.pair(i, i));
  CHECK(answer("it", nested, nested_t) == "it = ((1, 2), 3, 4) : (int, int), int, int\n");
  CHECK(answer("it", Value::seq({nested}), tc.seq(nested_t)) == "it = [((1, 2), 3, 4)] : [((int, int), int, int)]\n");
  Value mixed = Value::pair(ints({1}), Value::seq({ints({2})}));
  CHECK(answer("it", mixed, tc.pair(tc.seq(i), tc.seq(tc.seq(i)))) == "it = ([1], [[2]]) : [int], [[int]]\n");
}

TEST_CASE("datatypes (§3.4)") {
  TypeContext tc;
  const Type* i = tc.int_();

  DataDef* point = tc.new_datadef("point");
  point->fields = tc.pair(i, i);
  const Type* point_t = tc.data(point, {});
  CHECK(fn_echo("point", tc.fn(point->fields, point_t), {}) == "point = fn : (int, int) -> point\n");
  CHECK(fn_echo("px", tc.fn(point_t, i), {}) == "px = fn : point -> int\n");
  CHECK(answer("it", ints({1, 3}), tc.seq(i)) == "it = [1, 3] : [int]\n");
  CHECK(format_value(Value::data(point, Value::pair(Value::int_(1), Value::int_(2))), point_t) == "point(1, 2)");

  DataDef* box = tc.new_datadef("box");
  box->params = {TC::Any};
  const Type* a0 = tc.var(0, TC::Any);
  box->fields = a0;
  CHECK(fn_echo("box", tc.fn(a0, tc.data(box, {a0})), box->params) == "box = fn : a -> box(a) :: (a in any)\n");
  Value boxes = Value::seq({Value::data(box, Value::char_('a')), Value::data(box, Value::char_('b'))});
  CHECK(answer("it", boxes, tc.seq(tc.data(box, {tc.char_()}))) == "it = [box(`a), box(`b)] : [box(char)]\n");
  Value box_pair = Value::seq({Value::data(box, Value::pair(Value::int_(1), Value::float_(2.5)))});
  CHECK(answer("it", box_pair, tc.seq(tc.data(box, {tc.pair(i, tc.float_())}))) ==
        "it = [box(1, 2.5)] : [box((int, float))]\n");
  // The field type comes from the instance: an empty [char] field prints "".
  CHECK(format_value(Value::data(box, Value::seq({})), tc.data(box, {tc.string()})) == "box(\"\")");
  CHECK(format_value(Value::data(box, Value::seq({})), tc.data(box, {tc.seq(i)})) == "box([])");
  CHECK(format_value(Value::data(box, Value::data(box, Value::seq({}))), tc.data(box, {tc.data(box, {tc.string()})})) ==
        "box(box(\"\"))");

  // datatype rev(a, b) :: (b in any; a in any): parameters in context order, so Var(0) is b.
  DataDef* rev = tc.new_datadef("rev");
  rev->params = {TC::Any, TC::Any};
  const Type* p0 = tc.var(0, TC::Any);
  const Type* p1 = tc.var(1, TC::Any);
  rev->fields = tc.pair(p1, p0);
  CHECK(fn_echo("rev", tc.fn(rev->fields, tc.data(rev, {p0, p1})), rev->params) ==
        "rev = fn : (a, b) -> rev(b, a) :: (a in any; b in any)\n");
  CHECK(answer("it", Value::data(rev, Value::pair(Value::int_(1), Value::char_('c'))), tc.data(rev, {tc.char_(), i})) ==
        "it = rev(1, `c) : rev(char, int)\n");

  DataDef* nb = tc.new_datadef("nb");
  nb->params = {TC::Number};
  const Type* n0 = tc.var(0, TC::Number);
  nb->fields = tc.pair(n0, tc.seq(n0));
  CHECK(fn_echo("nb", tc.fn(nb->fields, tc.data(nb, {n0})), nb->params) ==
        "nb = fn : (a, [a]) -> nb(a) :: (a in number)\n");
  CHECK(fn_echo("mk", tc.fn(n0, tc.data(nb, {n0})), {TC::Number}) == "mk = fn : a -> nb(a) :: (a in number)\n");
  Value nb_v = Value::data(nb, Value::pair(Value::float_(1.5), floats({1.5})));
  CHECK(answer("it", Value::seq({nb_v, nb_v}), tc.seq(tc.data(nb, {tc.float_()}))) ==
        "it = [nb(1.5, [1.5]), nb(1.5, [1.5])] : [nb(float)]\n");

  // datatype pair3(a, b, a) :: (a in number; b in any)  (§3.9)
  DataDef* pair3 = tc.new_datadef("pair3");
  pair3->params = {TC::Number, TC::Any};
  const Type* q0 = tc.var(0, TC::Number);
  const Type* q1 = tc.var(1, TC::Any);
  pair3->fields = tuple(tc, {q0, q1, q0});
  CHECK(fn_echo("pair3", tc.fn(pair3->fields, tc.data(pair3, {q0, q1})), pair3->params) ==
        "pair3 = fn : (b, a, b) -> pair3(b, a) :: (a in any; b in number)\n");

  // A datatype whose fields have a left-nested pair keeps its inner parentheses.
  DataDef* ln = tc.new_datadef("ln");
  ln->fields = tc.pair(tc.pair(i, i), i);
  CHECK(format_value(Value::data(ln, Value::pair(Value::pair(Value::int_(1), Value::int_(2)), Value::int_(3))),
                     tc.data(ln, {})) == "ln((1, 2), 3)");
}

TEST_CASE("function types (§3.5)") {
  TypeContext tc;
  const Type* a = tc.var(0, TC::Any);
  const Type* id = tc.fn(a, a);
  CHECK(type_to_string(tc.seq(id), {TC::Any}) == "[a -> a] :: (a in any)");
  CHECK(type_to_string(tc.pair(id, tc.int_()), {TC::Any}) == "a -> a, int :: (a in any)");
  CHECK(format_value(Value::pair(Value::fn(std::make_shared<FnObj>()), Value::int_(1)), tc.pair(id, tc.int_())) ==
        "(fn, 1)");
  // A function argument is parenthesised, a function result is not.
  const Type* i = tc.int_();
  // A functional parameter carries CMU's hidden type variable (listed, never shown).
  CHECK(type_to_string(tc.fn(tc.fn(i, i), i), {}) == "(int -> int) -> int :: (a in any)");
  CHECK(type_to_string(tc.fn(i, tc.fn(i, i)), {}) == "int -> int -> int");
  // ap(g, x) = g(x), exactly as CMU prints it (language.md §3.5): the hidden variable of the
  // functional parameter takes the name `a`.
  const Type* b = tc.var(1, TC::Any);
  CHECK(type_to_string(tc.fn(tc.pair(tc.fn(a, b), a), b), {TC::Any, TC::Any}) ==
        "(c -> b, c) -> b :: (a in any; b in any; c in any)");
  // library.md's map and scan.
  CHECK(type_to_string(tc.fn(tc.pair(tc.fn(a, b), tc.seq(a)), tc.seq(b)), {TC::Any, TC::Any}) ==
        "(c -> b, [c]) -> [b] :: (a in any; b in any; c in any)");
  CHECK(type_to_string(tc.fn(tc.pair(tc.fn(tc.pair(a, a), a), tc.pair(a, tc.seq(a))), tc.pair(tc.seq(a), a)),
                       {TC::Any}) == "((b, b) -> b, b, [b]) -> ([b], b) :: (a in any; b in any)");
}

TEST_CASE("type signatures and inference echoes (§3.6–3.8)") {
  TypeContext tc;
  const Type* a = tc.var(0, TC::Ordinal);
  CHECK(fn_echo("f3", tc.fn(tc.seq(a), tc.seq(a)), {TC::Ordinal}) == "f3 = fn : [a] -> [a] :: (a in ordinal)\n");
  CHECK(answer("it", Value::string("abc"), tc.string()) == "it = \"abc\" : [char]\n");
  CHECK(fn_echo("ev", tc.fn(tc.int_(), tc.bool_()), {}) == "ev = fn : int -> bool\n");
  CHECK(fn_echo("od", tc.fn(tc.int_(), tc.bool_()), {}) == "od = fn : int -> bool\n");
  CHECK(answer("it", Value::bool_(true), tc.bool_()) == "it = T : bool\n");
  const Type* n = tc.var(0, TC::Number);
  CHECK(fn_echo("bad", tc.fn(n, n), {TC::Number}) == "bad = fn : a -> a :: (a in number)\n");
  const Type* any = tc.var(0, TC::Any);
  CHECK(fn_echo("h", tc.fn(any, any), {TC::Any}) == "h = fn : a -> a :: (a in any)\n");
  CHECK(answer("it", Value::pair(Value::int_(1), Value::float_(1.0)), tc.pair(tc.int_(), tc.float_())) ==
        "it = (1, 1.0) : int, float\n");
  CHECK(fn_echo("g", tc.fn(tc.int_(), tc.int_()), {}) == "g = fn : int -> int\n");
  // Types inside error messages are one line.
  CHECK(type_to_string(tc.pair(n, n), {TC::Number}) == "a, a :: (a in number)");
  const Type* l = tc.var(0, TC::Logical);
  CHECK(type_to_string(tc.pair(l, l), {TC::Logical}) == "a, a :: (a in logical)");
  CHECK(type_to_string(tc.pair(tc.seq(any), tc.int_()), {TC::Any}) == "[a], int :: (a in any)");
  CHECK(type_to_string(tc.float_(), {}) == "float");
  CHECK(type_to_string(TypeScheme{{TC::Number}, tc.fn(n, n)}) == "a -> a :: (a in number)");
}

TEST_CASE("variable naming and contexts (§3.9)") {
  TypeContext tc;
  const Type* x = tc.var(0, TC::Any);
  const Type* y = tc.var(1, TC::Any);
  CHECK(fn_echo("k", tc.fn(tc.pair(x, y), tc.pair(y, x)), {TC::Any, TC::Any}) ==
        "k = fn : (a, b) -> (b, a) :: (a in any; b in any)\n");
  // m(x, y, z) = (x + z, y): x is Var 0 (number), y is Var 1.
  const Type* xn = tc.var(0, TC::Number);
  CHECK(fn_echo("m", tc.fn(tuple(tc, {xn, y, xn}), tc.pair(xn, y)), {TC::Number, TC::Any}) ==
        "m = fn : (b, a, b) -> (b, a) :: (a in any; b in number)\n");
  CHECK(fn_echo("k5", tc.fn(tc.pair(tc.seq(x), y), tc.seq(tc.pair(x, y))), {TC::Any, TC::Any}) ==
        "k5 = fn : ([a], b) -> [(a, b)] :: (a in any; b in any)\n");
  const Type* z = tc.var(2, TC::Any);
  CHECK(fn_echo("k2", tc.fn(tc.pair(tc.pair(x, y), z), tuple(tc, {z, x, y})), {TC::Any, TC::Any, TC::Any}) ==
        "k2 = fn : ((a, b), c) -> (c, a, b) :: (a in any; b in any; c in any)\n");
  CHECK(fn_echo("f10", tc.fn(x, tuple(tc, {x, tc.seq(x), tc.float_()})), {TC::Any}) ==
        "f10 = fn : a -> (a, [a], float) :: (a in any)\n");
  const Type* o = tc.var(0, TC::Ordinal);
  CHECK(fn_echo("f12", tc.fn(tc.seq(o), tc.bool_()), {TC::Ordinal}) == "f12 = fn : [a] -> bool :: (a in ordinal)\n");
  std::vector<const Type*> six;
  for (uint32_t k = 0; k < 6; ++k) six.push_back(tc.var(k, TC::Any));
  const Type* t13 = tuple(tc, six);
  CHECK(fn_echo("f13", tc.fn(t13, t13), std::vector<TypeClass>(6, TC::Any)) ==
        "f13 = fn : (a0, a1, a2, a3, a4, a5) -> (a0, a1, a2, a3, a4, a5)\n"
        "            :: (a0 in any; a1 in any; a2 in any; a3 in any; a4 in any; a5 in any)\n");
  // Variable indices need not be dense or ordered; only occurring variables are listed.
  const Type* v7 = tc.var(7, TC::Number);
  const Type* v3 = tc.var(3, TC::Logical);
  std::vector<TypeClass> sparse(8, TC::Any);
  sparse[7] = TC::Number;
  sparse[3] = TC::Logical;
  CHECK(type_to_string(tc.fn(v7, v3), sparse) == "b -> a :: (a in logical; b in number)");
  // var_classes decides the class; Type::cls is the fallback where var_classes is short.
  CHECK(type_to_string(tc.seq(tc.var(0, TC::Any)), {TC::Ordinal}) == "[a] :: (a in ordinal)");
  CHECK(type_to_string(tc.seq(tc.var(0, TC::Number)), {}) == "[a] :: (a in number)");
  // Extension types.
  CHECK(type_to_string(tc.fn(tc.pair(tc.i32(), tc.f32()), tc.stream()), {}) == "(i32, f32) -> stream");
}

TEST_CASE("echoes of §5.2") {
  TypeContext tc;
  CHECK(answer("x", Value::int_(5), tc.int_()) == "x = 5 : int\n");
  const Type* n = tc.var(0, TC::Number);
  CHECK(fn_echo("sq", tc.fn(n, n), {TC::Number}) == "sq = fn : a -> a :: (a in number)\n");
  CHECK(render_lines(answer_lines("it", format_value(Value::fn(std::make_shared<FnObj>()), tc.fn(n, n)), tc.fn(n, n),
                                  {TC::Number})) == "it = fn : a -> a :: (a in number)\n");
  CHECK(answer("(a, b)", Value::pair(Value::int_(1), Value::float_(2.5)), tc.pair(tc.int_(), tc.float_())) ==
        "(a, b) = (1, 2.5) : int, float\n");
  DataDef* vect = tc.new_datadef("vect");
  const Type* f = tc.float_();
  vect->fields = tuple(tc, {f, f, f});
  const Type* vect_t = tc.data(vect, {});
  CHECK(fn_echo("vect", tc.fn(vect->fields, vect_t), {}) == "vect = fn : (float, float, float) -> vect\n");
  Value v = Value::data(vect, Value::tuple({Value::float_(1.0), Value::float_(2.0), Value::float_(3.0)}));
  CHECK(answer("it", v, vect_t) == "it = vect(1.0, 2.0, 3.0) : vect\n");
}

TEST_CASE("values (§5.3)") {
  TypeContext tc;
  const Type* i = tc.int_();
  const Type* c = tc.char_();
  Value pairs = Value::seq({Value::pair(Value::int_(1), Value::char_('a')), Value::pair(Value::int_(2), Value::char_('b'))});
  CHECK(answer("it", pairs, tc.seq(tc.pair(i, c))) == "it = [(1, `a), (2, `b)] : [(int, char)]\n");
  CHECK(answer("it", Value::seq({Value::string("ab"), Value::string("cd")}), tc.seq(tc.string())) ==
        "it = [\"ab\", \"cd\"] : [[char]]\n");
  CHECK(answer("it", Value::seq({ints({}), ints({1})}), tc.seq(tc.seq(i))) == "it = [[], [1]] : [[int]]\n");
  CHECK(answer("it", Value::seq({Value::seq({})}), tc.seq(tc.string())) == "it = [\"\"] : [[char]]\n");
  CHECK(answer("it", Value::seq({}), tc.seq(tc.string())) == "it = [] : [[char]]\n");
  CHECK(answer("it", Value::seq({Value::pair(ints({}), Value::int_(1))}), tc.seq(tc.pair(tc.seq(i), i))) ==
        "it = [([], 1)] : [([int], int)]\n");
  Value ip = Value::seq({Value::pair(Value::int_(1), ints({2})), Value::pair(Value::int_(3), ints({4, 5}))});
  CHECK(answer("it", ip, tc.seq(tc.pair(i, tc.seq(i)))) == "it = [(1, [2]), (3, [4, 5])] : [(int, [int])]\n");
  Value six = Value::tuple({Value::int_(1), Value::float_(2.0), Value::char_('a'), Value::bool_(true),
                            Value::string("s"), ints({1})});
  CHECK(answer("it", six, tuple(tc, {i, tc.float_(), c, tc.bool_(), tc.string(), tc.seq(i)})) ==
        "it = (1, 2.0, `a, T, \"s\", [1]) : int, float, char, bool, [char], [int]\n");
  CHECK(answer("it", Value::string("\\\""), tc.string()) == "it = \"\\\\\\\"\" : [char]\n");
  CHECK(answer("it", Value::char_(' '), c) == "it = `  : char\n");
  CHECK(format_value(Value::char_('\n'), c) == "`\n");
  CHECK(format_value(Value::string("a\tb\nc"), tc.string()) == "\"a\tb\nc\"");
  CHECK(format_value(Value::bool_(false), tc.bool_()) == "F");
  CHECK(format_value(Value::int_(-3), i) == "-3");
  CHECK(format_value(Value::int_(std::numeric_limits<int64_t>::min()), i) == "-9223372036854775808");
  CHECK(format_value(Value::seq({}), tc.string()) == "\"\"");
  CHECK(format_value(Value::seq({}), tc.seq(i)) == "[]");
  CHECK(format_value(Value::seq({Value::seq({})}), tc.seq(tc.seq(tc.string()))) == "[[]]");

  PrintOptions five{5};
  CHECK(answer("it", range(1, 20), tc.seq(i), five) == "it = [1, 2, 3, 4, 5,...] : [int]\n");
  CHECK(answer("it", Value::seq({ints({1, 2, 3, 4, 5, 6, 7}), ints({1})}), tc.seq(tc.seq(i)), five) ==
        "it = [[1, 2, 3, 4, 5,...], [1]] : [[int]]\n");
  CHECK(answer("it", Value::string("abcdefghijklmnop"), tc.string(), five) == "it = \"abcdefghijklmnop\" : [char]\n");
  CHECK(format_value(range(1, 6), tc.seq(i), five) == "[1, 2, 3, 4, 5]");
  // The limit applies at every level: 6 rows of 6 elements.
  std::vector<Value> rows(6, range(0, 6));
  CHECK(format_value(Value::seq(rows), tc.seq(tc.seq(i)), PrintOptions{2}) == "[[0, 1,...], [0, 1,...],...]");
  PrintOptions zero{0};
  CHECK(answer("it", ints({1, 2}), tc.seq(i), zero) == "it = [...] : [int]\n");
  CHECK(format_value(ints({}), tc.seq(i), zero) == "[]");
  CHECK(format_value(Value::string("abc"), tc.string(), zero) == "\"abc\"");
  CHECK(format_value(Value::seq({Value::string("abc")}), tc.seq(tc.string()), zero) == "[...]");
  // Default print_length is 100.
  std::string hundred = format_value(range(0, 101), tc.seq(i));
  CHECK(hundred.substr(hundred.size() - 9) == ", 99,...]");
  CHECK(format_value(range(0, 100), tc.seq(i)).find("...") == std::string::npos);
}

TEST_CASE("values without a known static type fall back to the tags") {
  CHECK(format_value(Value::string("hi"), nullptr) == "\"hi\"");
  CHECK(format_value(Value::seq({}), nullptr) == "[]");
  CHECK(format_value(Value::tuple({Value::int_(1), Value::string("x")}), nullptr) == "(1, \"x\")");
  CHECK(format_value(Value::stream(1), nullptr) == "stream");
}

TEST_CASE("float format (§5.4)") {
  TypeContext tc;
  const Type* fs = tc.seq(tc.float_());
  CHECK(answer("it", floats({1.0 / 7.0, 100.0 / 7.0, 1.0e7 / 3.0, 1.0e-3 / 3.0}), fs) ==
        "it = [0.142857142857143, 14.2857142857143, 3333333.33333333, 3.33333333333333E-4] : [float]\n");
  CHECK(answer("it", floats({2.0 / 3.0 * 1.0e10, 0.1 * 3.0, 1.0 - 1.0e-16}), fs) ==
        "it = [6.66666666666667E9, 0.3, 1.0] : [float]\n");
  volatile double minus_one = -1.0;
  CHECK(answer("it", floats({9999999.0, 10000000.0, 0.001, 0.00099, 0.0 * minus_one}), fs) ==
        "it = [9999999.0, 1.0E7, 0.001, 9.9E-4, 0.0] : [float]\n");
  CHECK(answer("it", floats({-1.0 / 7.0, -1.0e20 / 3.0, 1.0e300 * 10.0, 123456.789}), fs) ==
        "it = [-0.142857142857143, -3.33333333333333E19, 1.0E301, 123456.789] : [float]\n");
  CHECK(answer("it", Value::float_(9999999.999999999 * 1.0), tc.float_()) == "it = 1.0E7 : float\n");
  CHECK(answer("it", Value::float_(std::exp(1.0)), tc.float_()) == "it = 2.71828182845905 : float\n");
  CHECK(answer("it", Value::float_(M_PI), tc.float_()) == "it = 3.14159265358979 : float\n");
  // The examples in the recipe's text.
  CHECK(format_float(100.0) == "100.0");
  CHECK(format_float(0.001) == "0.001");
  CHECK(format_float(0.00123456789) == "0.00123456789");
  CHECK(format_float(9999999.99999999) == "9999999.99999999");
  CHECK(format_float(1.0e7) == "1.0E7");
  CHECK(format_float(1.23456789e8) == "1.23456789E8");
  CHECK(format_float(1.0e-4) == "1.0E-4");
  CHECK(format_float(2.0 / 3.0 * 1.0e-300) == "6.66666666666667E-301");
  CHECK(format_float(-0.0) == "0.0");
  CHECK(format_float(-2.5) == "-2.5");
  CHECK(format_float(1.5) == "1.5");
  CHECK(format_float(0.1) == "0.1");
  CHECK(format_float(5.0e-324) == "4.94065645841247E-324");
  CHECK(format_float(1.7976931348623157e308) == "1.79769313486232E308");
  // extensions.md §1/§4: IEEE specials.
  CHECK(format_float(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(format_float(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(format_float(std::numeric_limits<double>::quiet_NaN()) == "nan");
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(format_value(floats({inf, -inf, inf - inf}), fs) == "[inf, -inf, nan]");
}

TEST_CASE("line breaking of long answers (§5.5)") {
  TypeContext tc;
  const Type* is = tc.seq(tc.int_());
  CHECK(answer("it", range(0, 30), is) ==
        "it = \n"
        "  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, "
        "29] : [int]\n");
  CHECK(answer("it", range(0, 35), is) ==
        "it = \n"
        "  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, "
        "29, 30, 31, 32, 33, 34]\n"
        "   : [int]\n");
  CHECK(answer("it",
               floats({1.0 / 7.0, 100.0 / 7.0, 1.0e7 / 3.0, 1.0e-3 / 3.0, 2.0 / 3.0 * 1.0e10, 0.1 * 3.0,
                       1.0 - 1.0e-16}),
               tc.seq(tc.float_())) ==
        "it\n"
        " = [0.142857142857143, 14.2857142857143, 3333333.33333333, 3.33333333333333E-4, 6.66666666666667E9, 0.3, "
        "1.0] : [float]\n");
  CHECK(answer("longname_variable_for_testing_the_wrapping_of_values", range(0, 28), is) ==
        "longname_variable_for_testing_the_wrapping_of_values\n"
        " = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27] : "
        "[int]\n");
  // lt3(a, b, c, d, e, g, h, i) = (a + 1, b + 1.0, [c], [[d]], (e, g), h and t, i)
  const Type* i = tc.int_();
  const Type* f = tc.float_();
  const Type* b = tc.bool_();
  std::vector<const Type*> v;
  for (uint32_t k = 0; k < 5; ++k) v.push_back(tc.var(k, TC::Any));
  const Type* arg = tuple(tc, {i, f, v[0], v[1], v[2], v[3], b, v[4]});
  const Type* res = tuple(tc, {i, f, tc.seq(v[0]), tc.seq(tc.seq(v[1])), tc.pair(v[2], v[3]), b, v[4]});
  CHECK(fn_echo("lt3", tc.fn(arg, res), std::vector<TypeClass>(5, TC::Any)) ==
        "lt3 = fn : (int, float, a, b, c, d, bool, e) -> (int, float, [a], [[b]], (c, d), bool, e)\n"
        "            :: (a in any; b in any; c in any; d in any; e in any)\n");
  // The line model of a type alone.
  Lines tl = type_lines(tc.fn(arg, res), std::vector<TypeClass>(5, TC::Any));
  REQUIRE(tl.size() == 2);
  CHECK(tl[1].indent == 0);
  CHECK(tl[1].text == " :: (a in any; b in any; c in any; d in any; e in any)");
  // A long tuple type: the piece that does not fit goes below, indented to where the
  // previous pieces ended; the closing J(TYPE, "") of §5.5 then starts a line of its own
  // because the broken line is already wider than 120 columns.
  std::vector<const Type*> many(30, tc.float_());
  std::string first_line = "float";
  for (int k = 1; k < 13; ++k) first_line += ", float";
  std::string rest_line;
  for (int k = 0; k < 17; ++k) rest_line += ", float";
  CHECK(render_lines(type_lines(tuple(tc, many), {})) ==
        first_line + "\n" + std::string(84, ' ') + rest_line + "\n" + std::string(84, ' ') + "\n");
}

TEST_CASE("@ and exp_string (§5.6, library.md §11)") {
  TypeContext tc;
  CHECK(at_string_answer(tc, floats({1.5, 2.0})) == "it = \"[1.5, 2.0]\" : [char]\n");
  std::vector<Value> strs;
  for (const Value& v : {Value::float_(1.0 / 3.0), Value::float_(1.0e10), Value::float_(0.0001),
                         Value::float_(123456789.0), Value::bool_(true), Value::string("ab"),
                         Value::tuple({Value::int_(1), Value::int_(2), Value::int_(3)})})
    strs.push_back(Value::string(nesl_string_of(v)));
  CHECK(answer("it", Value::seq(strs), tc.seq(tc.string())) ==
        "it = [\"0.33333333\", \"1.0e+10\", \"1.0e-4\", \"1.2345679e+8\", \"t\", \"[`a, `b]\", \"(1, 2, 3)\"] : "
        "[[char]]\n");
  CHECK(at_string_answer(tc, Value::tuple({Value::int_(1), Value::int_(2), Value::int_(3)})) ==
        "it = \"(1, 2, 3)\" : [char]\n");
  CHECK(at_string_answer(tc, Value::pair(Value::pair(Value::int_(1), Value::int_(2)), Value::int_(3))) ==
        "it = \"((1, 2), 3)\" : [char]\n");
  CHECK(at_string_answer(tc, Value::string("ab")) == "it = \"[`a, `b]\" : [char]\n");
  CHECK(at_string_answer(tc, Value::bool_(true)) == "it = \"t\" : [char]\n");
  CHECK(at_string_answer(tc, floats({1.0, 0.1, 1.0e7, 1.0e-4, 123.456})) ==
        "it = \"[1.0, 0.1, 1.0e+7, 1.0e-4, 123.456]\" : [char]\n");
  CHECK(at_string_answer(tc, Value::float_(123456.789)) == "it = \"123456.79\" : [char]\n");
  CHECK(at_string_answer(tc, Value::float_(0.00012345)) == "it = \"1.2345e-4\" : [char]\n");
  CHECK(at_string_answer(tc, Value::float_(-0.5)) == "it = \"-0.5\" : [char]\n");
  CHECK(nesl_string_of(Value::bool_(false)) == "f");
  CHECK(nesl_string_of(Value::char_('c')) == "`c");
  CHECK(nesl_string_of(Value::int_(std::numeric_limits<int64_t>::min())) == "-9223372036854775808");
  CHECK(nesl_string_of(Value::int_(-42)) == "-42");
  CHECK(nesl_string_of(Value::fn(std::make_shared<FnObj>())) == "function");
  CHECK(nesl_string_of(Value::seq({})) == "[]");
  CHECK(nesl_string_of(Value::float_(0.0)) == "0.0");
  CHECK(nesl_string_of(Value::float_(0.001)) == "0.001");
  CHECK(nesl_string_of(Value::float_(9999999.0)) == "9999999.0");
  CHECK(nesl_string_of(Value::float_(9999999.99)) == "1.0e+7");
  CHECK(nesl_string_of(Value::float_(-1.0e-10)) == "-1.0e-10");
  CHECK(nesl_string_of(Value::i32(-7)) == "-7");
  CHECK(nesl_string_of(Value::f32(0.5f)) == "0.5");
  CHECK(nesl_string_of(Value::float_(std::numeric_limits<double>::infinity())) == "inf");
  // No print_length limit in @.
  CHECK(nesl_string_of(range(0, 200)).find("...") == std::string::npos);
  // Datatype values print as their field tuple.
  DataDef* point = tc.new_datadef("point");
  point->fields = tc.pair(tc.int_(), tc.int_());
  CHECK(nesl_string_of(Value::data(point, Value::pair(Value::int_(1), Value::int_(2)))) == "(1, 2)");
  CHECK(nesl_string_of(Value::seq({Value::pair(Value::int_(1), Value::string("x"))})) == "[(1, [`x])]");

  CHECK(answer("it", Value::string(exp_string(1234.5678, 3)), tc.string()) == "it = \"1.235e+3\" : [char]\n");
  CHECK(answer("it", Value::string(exp_string(-0.00123, 2)), tc.string()) == "it = \"-1.23e-3\" : [char]\n");
  CHECK(exp_string(0.0, 4) == "0.0");
  CHECK(exp_string(1.0, 2) == "1.00e+0");
  CHECK(exp_string(1.5e100, 8) == "1.50000000e+100");
}

TEST_CASE("sized types print as int and float (extensions.md §1)") {
  TypeContext tc;
  CHECK(answer("it", Value::i32(-7), tc.i32()) == "it = -7 : i32\n");
  CHECK(answer("it", Value::f32(1.5f), tc.f32()) == "it = 1.5 : f32\n");
  CHECK(format_f32(0.1f) == "0.1");
  CHECK(format_f32(1.0f / 3.0f) == "0.33333334");
  CHECK(format_f32(1.0e10f) == "1.0E10");
  CHECK(format_f32(1.0e-5f) == "1.0E-5");
  CHECK(format_f32(16777216.0f) == "1.6777216E7");
  CHECK(format_f32(9999999.0f) == "9999999.0");
  CHECK(format_f32(std::numeric_limits<float>::max()) == "3.4028235E38");
  CHECK(format_f32(-0.0f) == "0.0");
  CHECK(format_f32(-2.25f) == "-2.25");
  CHECK(format_f32(100.0f) == "100.0");
  CHECK(format_f32(0.001f) == "0.001");
  CHECK(format_f32(std::numeric_limits<float>::infinity()) == "inf");
  CHECK(format_f32(-std::numeric_limits<float>::infinity()) == "-inf");
  CHECK(format_f32(std::numeric_limits<float>::quiet_NaN()) == "nan");
  CHECK(format_value(Value::seq({Value::f32(0.25f), Value::f32(3.0f)}), tc.seq(tc.f32())) == "[0.25, 3.0]");
  CHECK(format_value(Value::i32(std::numeric_limits<int32_t>::min()), tc.i32()) == "-2147483648");
}
