// Side-effecting primitives on the reference interpreter: console output, errors, streams,
// the object format, shell commands, environment, spawn.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/unit/lang/eval/core_builder.h"

using namespace ndp::lang;
using namespace ndp::test;
using core::PrimId;

namespace {

Value I(int64_t x) { return Value::int_(x); }
Value S(std::string_view s) { return Value::string(s); }

std::string temp_path(const char* tag) {
  return std::string("/tmp/ndp_eval_test_") + tag + "_" + std::to_string(getpid());
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct IO {
  CoreBuilder b;
  TypeContext& T = b.prog.types;

  Value ok(PrimId p, std::vector<Value> args, std::vector<const Type*> targs = {}) {
    auto r = b.apply(p, std::move(args), std::move(targs));
    if (!r.ok) FAIL("unexpected runtime error: " << r.error.message);
    return r.value;
  }
  /// open_* then check the flag; returns the stream.
  Value open(PrimId p, const std::string& path) {
    Value r = ok(p, {S(path)});
    REQUIRE(r.second().first().as_bool());
    return r.first();
  }
  void write_object(const Value& v, const Type* t, const std::string& path) {
    Value s = open(PrimId::OpenOutFile, path);
    Value w = ok(PrimId::WriteObject, {v, s}, {t});
    CHECK(w.first().as_bool());
    CHECK(ok(PrimId::CloseFile, {s}).first().as_bool());
  }
  Value read_object(const Value& sample, const Type* t, const std::string& path) {
    Value s = open(PrimId::OpenInFile, path);
    Value r = ok(PrimId::ReadObject, {sample, s}, {t});
    if (!r.second().first().as_bool()) FAIL("read_object failed: " << r.second().second().to_string());
    ok(PrimId::CloseFile, {s});
    return r.first();
  }
};

}  // namespace

TEST_CASE("print_char and print_string write to the program output, in element order") {
  CoreBuilder b;
  auto* m = b.map({b.pvar(0)}, {b.lit(Value::seq({S("x"), S("yz")}))}, b.prim(PrimId::PrintString, {b.local(0)}));
  auto r = b.run(m, 1);
  REQUIRE(r.ok);
  CHECK(values_equal(r.value, Value::seq({Value::bool_(true), Value::bool_(true)})));
  r = b.run(b.prim(PrimId::PrintChar, {b.ch('!')}));
  REQUIRE(r.ok);
  CHECK(b.output() == "xyz!");
}

TEST_CASE("error prints ERROR: and fails the form; runtime_error only fails") {
  CoreBuilder b;
  auto r = b.run(b.prim(PrimId::Error, {b.str("bad thing")}));
  REQUIRE_FALSE(r.ok);
  CHECK(r.error.message == "bad thing");
  CHECK(b.output() == "ERROR: bad thing\n");
  r = b.run(b.prim(PrimId::RuntimeErrorPrim, {b.str("Length mismatch in function ZIP.")}, {b.prog.types.int_()}));
  REQUIRE_FALSE(r.ok);
  CHECK(r.error.message == "Length mismatch in function ZIP.");
  CHECK(b.output() == "ERROR: bad thing\n");
}

TEST_CASE("the object format: CMU's layout for [1,2] and exact round trips") {
  IO io;
  auto& T = io.T;
  std::string path = temp_path("obj");
  io.write_object(ints({1, 2}), T.seq(T.int_()), path);
  CHECK(slurp(path) == "[ 2 ]\n( 1 2 )\n");
  io.write_object(Value::int_(5), T.int_(), path);
  CHECK(slurp(path) == "( 5 )\n");

  const Type* rec = T.seq(T.pair(T.int_(), T.pair(T.string(), T.bool_())));
  Value v = Value::seq({Value::tuple({I(2), S("foo"), Value::bool_(false)}),
                        Value::tuple({I(7), S("wombat"), Value::bool_(true)})});
  io.write_object(v, rec, path);
  CHECK(values_equal(io.read_object(Value::seq({}), rec, path), v));

  const Type* nested = T.seq(T.seq(T.seq(T.int_())));
  Value n = seqs({seqs({}), seqs({ints({}), ints({1, 2})}), seqs({ints({3})})});
  io.write_object(n, nested, path);
  CHECK(values_equal(io.read_object(Value::seq({}), nested, path), n));
  io.write_object(Value::seq({}), nested, path);
  CHECK(io.read_object(Value::seq({}), nested, path).length() == 0);

  Value fl = floats({0.1, -0.0, 1e300, -std::numeric_limits<double>::infinity(), 5e-324});
  io.write_object(fl, T.seq(T.float_()), path);
  Value back = io.read_object(Value::seq({}), T.seq(T.float_()), path);
  CHECK(values_equal(back, fl));
  CHECK(std::signbit(back.elems()[1].as_float()));

  Value mixed = Value::tuple({Value::char_('\n'), Value::i32(-7), Value::f32(0.1f), S("a b")});
  const Type* mt = T.pair(T.char_(), T.pair(T.i32(), T.pair(T.f32(), T.string())));
  io.write_object(mixed, mt, path);
  CHECK(values_equal(io.read_object(mixed, mt, path), mixed));

  DataDef* point = T.new_datadef("point");
  point->fields = T.pair(T.int_(), T.float_());
  const Type* pt = T.seq(T.data(point, {}));
  Value pv = Value::seq({Value::data(point, Value::pair(I(1), Value::float_(2.5)))});
  io.write_object(pv, pt, path);
  CHECK(values_equal(io.read_object(Value::seq({}), pt, path), pv));

  // a malformed file: the flag is F, the value the sample's identity
  {
    std::ofstream out(path);
    out << "[ 3 ]\n( 1 2 )\n";
  }
  Value s = io.open(PrimId::OpenInFile, path);
  Value r = io.ok(PrimId::ReadObject, {ints({9}), s}, {T.seq(T.int_())});
  CHECK_FALSE(r.second().first().as_bool());
  CHECK(r.first().length() == 0);
  std::remove(path.c_str());
}

TEST_CASE("files: open failures, read_char, read_string, append") {
  IO io;
  std::string path = temp_path("text");
  Value bad = io.ok(PrimId::OpenInFile, {S("/nonexistent/dir/file")});
  CHECK(bad.first().as_stream() == 0);
  CHECK_FALSE(bad.second().first().as_bool());
  std::string msg = bad.second().second().to_string();
  CHECK(msg.rfind("ERROR: while trying to open /nonexistent/dir/file\n", 0) == 0);

  Value s = io.open(PrimId::OpenOutFile, path);
  CHECK(io.ok(PrimId::WriteString, {S("ab,cd"), s}).first().as_bool());
  CHECK(io.ok(PrimId::WriteChar, {Value::char_('\n'), s}).first().as_bool());
  io.ok(PrimId::CloseFile, {s});
  s = io.open(PrimId::OpenAppendFile, path);
  io.ok(PrimId::WriteString, {S("efghij"), s});
  io.ok(PrimId::CloseFile, {s});
  CHECK(slurp(path) == "ab,cd\nefghij");
  // writing to a closed stream fails cleanly
  CHECK_FALSE(io.ok(PrimId::WriteString, {S("x"), s}).first().as_bool());
  CHECK_FALSE(io.ok(PrimId::CloseFile, {s}).first().as_bool());

  s = io.open(PrimId::OpenInFile, path);
  Value c = io.ok(PrimId::ReadChar, {s});
  CHECK(c.first().as_char() == 'a');
  CHECK(c.second().first().as_bool());
  // read to a delimiter (consumed, not returned)
  Value rs = io.ok(PrimId::ReadString, {S(",\n"), I(-1), s});
  CHECK(values_equal(rs.first(), Value::pair(S("b"), I(','))));
  rs = io.ok(PrimId::ReadString, {S(",\n"), I(-1), s});
  CHECK(values_equal(rs.first(), Value::pair(S("cd"), I('\n'))));
  // the length limit
  rs = io.ok(PrimId::ReadString, {S(""), I(3), s});
  CHECK(values_equal(rs.first(), Value::pair(S("efg"), I(-2))));
  // end of file
  rs = io.ok(PrimId::ReadString, {S(""), I(-1), s});
  CHECK(values_equal(rs.first(), Value::pair(S("hij"), I(-1))));
  CHECK(rs.second().first().as_bool());
  c = io.ok(PrimId::ReadChar, {s});
  CHECK(values_equal(c, Value::tuple({Value::char_(' '), Value::bool_(false), S("End of File.")})));
  io.ok(PrimId::CloseFile, {s});
  std::remove(path.c_str());
}

TEST_CASE("the stdout stream is the program output") {
  CoreBuilder b;
  auto* s = b.prim(PrimId::StreamConst, {b.i(2)});
  auto r = b.run(b.prim(PrimId::WriteString, {b.str("hi"), s}));
  REQUIRE(r.ok);
  CHECK(b.output() == "hi");
}

TEST_CASE("shell_command, get_environment_variable") {
  IO io;
  CHECK(values_equal(io.ok(PrimId::ShellCommand, {S("cat"), S("dog")}), S("dog")));
  CHECK(values_equal(io.ok(PrimId::ShellCommand, {S("echo hi"), S("")}), S("hi\n")));
  // a command that ignores its input must not hang or kill us
  std::string big(1 << 20, 'x');
  CHECK(values_equal(io.ok(PrimId::ShellCommand, {S("true"), S(big)}), S("")));
  CHECK(io.ok(PrimId::ShellCommand, {S("wc -c"), S(big)}).to_string().find("1048576") != std::string::npos);
  setenv("NDP_EVAL_TEST_VAR", "value 1", 1);
  CHECK(values_equal(io.ok(PrimId::GetEnv, {S("NDP_EVAL_TEST_VAR")}), S("value 1")));
  CHECK(values_equal(io.ok(PrimId::GetEnv, {S("NDP_EVAL_TEST_UNSET_VAR")}), S("")));
}

TEST_CASE("spawn: new pipes for nullstr arguments") {
  IO io;
  Value null = Value::stream(0);
  Value r = io.ok(PrimId::Spawn, {S("tr a-z A-Z"), null, null, Value::stream(3)});
  REQUIRE(r.second().first().as_bool());
  Value in = r.first().first();
  Value out = r.first().second().first();
  CHECK(r.first().second().second().as_stream() == 3);
  CHECK(io.ok(PrimId::WriteString, {S("hello"), in}).first().as_bool());
  io.ok(PrimId::CloseFile, {in});
  Value line = io.ok(PrimId::ReadString, {S(""), I(-1), out});
  CHECK(values_equal(line.first(), Value::pair(S("HELLO"), I(-1))));
  io.ok(PrimId::CloseFile, {out});
}
