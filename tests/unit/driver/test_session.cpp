// A session: NESL source through the front end to printed values, and an interrupt request
// (the REPL's Ctrl-C) that stops an evaluation on every executor while the session goes on.
#include <doctest/doctest.h>

#include <cstdio>

#include "driver/session.h"
#include "lang/eval/interp.h"

using ndp::driver::Backend;
using ndp::driver::ExprOutcome;
using ndp::driver::Session;
using ndp::driver::SessionOptions;

namespace {

struct Quiet {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  ~Quiet() {
    std::fclose(out);
    std::fclose(err);
  }
};

std::string value_of(Session& s, std::string_view text) {
  ExprOutcome r = s.eval_expr(text);
  if (r.status != ExprOutcome::Status::Ok) return "<" + r.message + ">";
  return r.value;
}

std::string error_of(Session& s, std::string_view text) {
  ExprOutcome r = s.eval_expr(text);
  if (r.status != ExprOutcome::Status::RuntimeError) return "<not a runtime error: " + r.value + r.message + ">";
  return r.message;
}

}  // namespace

TEST_CASE("library.md examples through a session") {
  Quiet q;
  Session s(SessionOptions{q.out, q.err});
  CHECK(value_of(s, "{plus_scan(x) : x in [[1,2,3],[] int,[4,5]]}") == "[[0, 1, 3], [], [0, 4]]");
  CHECK(value_of(s, "sum([] float)") == "0.0");
  CHECK(value_of(s, "max_val([] float)") == "-inf");
  CHECK(value_of(s, "all([] bool)") == "T");
  CHECK(value_of(s, "rank([10.0,-5.0,0.0,10.0,-10.0,100.0,10.0])") == "[3, 1, 2, 4, 0, 6, 5]");
  CHECK(value_of(s, "[0,0,0,0,0] <- [(1,7),(1,9),(1,11)]") == "[0, 11, 0, 0, 0]");
  CHECK(value_of(s, "{v -> i : v in [[1,2,3],[4,5]]; i in [[2,2],[1,0,1]]}") == "[[3, 3], [5, 4, 5]]");
  CHECK(value_of(s, "{dist(a, n) : a in \"xy\"; n in [3,1]}") == "[\"xxx\", \"y\"]");
  CHECK(value_of(s, "identity((3,\"ab\",t))") == "(0, \"\", F)");
  CHECK(value_of(s, "min_int / -1") == "-9223372036854775808");
  CHECK(value_of(s, "{10 / x : x in [0, 1, 2] | x > 0}") == "[10, 5]");
  CHECK(value_of(s, "plus_combine([0.0], [0, 0, 0], [1.0e16, 1.0, -1.0e16])") == "[0.0]");
  CHECK(error_of(s, "[1,2,3][3]") == "Sequence reference (a[i]) out of bounds: index 3, length 3.");
  CHECK(error_of(s, "{a+b : a in [1,2,3]; b in [10,20]}") == "Length mismatch in an apply-to-each: lengths 3 and 2.");
  CHECK(error_of(s, "permute([1,2], [0,0])") == "Bad arguments to function PERMUTE.");
}

TEST_CASE("deep recursion through a session") {
  Quiet q;
  Session s(SessionOptions{q.out, q.err});
  REQUIRE(s.eval_text("<test>", "function depth(n) = if n == 0 then 0 else 1 + depth(n - 1) $", false));
  CHECK(value_of(s, "depth(100000)") == "100000");
  CHECK(value_of(s, "{depth(n) : n in [3, 100000]}") == "[3, 100000]");
}

TEST_CASE("an interrupt request stops the evaluation and is cleared; the session goes on") {
  for (Backend b : {Backend::Interp, Backend::Cpu}) {
    CAPTURE(ndp::driver::backend_name(b));
    std::FILE* sink = std::fopen("/dev/null", "w");
    SessionOptions opts;
    opts.out = sink;
    opts.err = sink;
    opts.backend = b;
    Session s(opts);
    REQUIRE(s.eval_text("t", "function down(n) = if n == 0 then 0 else down(n - 1) $ x = 5 $", false));
    ndp::lang::eval::interrupt_requested().store(true);
    ExprOutcome o = s.eval_expr("{down(i) : i in [0:100]}");
    CHECK(o.status == ExprOutcome::Status::RuntimeError);
    CHECK(o.message == "Interrupted.");
    CHECK_FALSE(ndp::lang::eval::interrupt_requested().load());
    ExprOutcome after = s.eval_expr("x + 1");
    CHECK(after.status == ExprOutcome::Status::Ok);
    CHECK(after.value == "6");
    std::fclose(sink);
  }
}

// Lambdas as values (Note [Lambdas] in lang/core.h): closures that keep their captured values,
// returned by functions, kept in sequences and called through unknown function values. The
// interpreter runs them all; the flat backends run lambdas that are called where they are known
// (tests/programs/language/lambdas.ndp) and refuse the rest by name, never with a wrong answer.
TEST_CASE("lambdas as values: closures on the interpreter, a named refusal on cpu") {
  Quiet q;
  const char* defs =
      "function compose(p, q) = (x) => p(q(x)) $ function adder(n) = (x) => x + n $ "
      "add7 = let a = 7 in (x) => x + a $ fs = [(x) => x + 1, (x) => x * 10] $";
  Session s(SessionOptions{q.out, q.err});
  REQUIRE(s.eval_text("<test>", defs, false));
  CHECK(value_of(s, "compose((x) => x + 1, (x) => x * 2)(5)") == "11");
  CHECK(value_of(s, "adder(5)(1)") == "6");
  CHECK(value_of(s, "{adder(n)(n) : n in [1, 2, 3]}") == "[2, 4, 6]");
  CHECK(value_of(s, "add7(1)") == "8");
  CHECK(value_of(s, "{g(3) : g in fs}") == "[4, 30]");
  CHECK(value_of(s, "{g(x) : g in fs; x in [5, 6]}") == "[6, 60]");
  CHECK(value_of(s, "let k = 2; g = (x) => x * k in {g : i in [1, 2]}") == "[fn, fn]");
  CHECK(value_of(s, "eql(add7, add7)") == "T");
  CHECK(value_of(s, "let h = (x) => x in eql(h, add7)") == "F");
  CHECK(value_of(s, "let d = 1 in ((x) => (y) => x + y + d)(2)(3)") == "6");
  CHECK(error_of(s, "adder(1)(1 / 0)") == "Divide by zero.");

  Session cpu(SessionOptions{q.out, q.err, ndp::driver::Backend::Cpu});
  REQUIRE(cpu.eval_text("<test>", "function adder(n) = (x) => x + n $", false));
  CHECK(value_of(cpu, "let k = 2 in ((x) => x * k)(4)") == "8");
  CHECK(error_of(cpu, "adder(5)(1)").find("not supported by the cpu backend") != std::string::npos);
  CHECK(error_of(cpu, "let k = 2; g = (x) => x * k in [g, g]").find("uses variables around it (k)") !=
        std::string::npos);
}
