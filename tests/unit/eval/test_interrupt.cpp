// An interrupt request (the REPL's Ctrl-C) stops an evaluation on every executor, and the
// session goes on.
#include <doctest/doctest.h>

#include <cstdio>

#include "driver/session.h"
#include "lang/eval/interp.h"

using ndp::driver::Backend;
using ndp::driver::ExprOutcome;
using ndp::driver::Session;
using ndp::driver::SessionOptions;

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
