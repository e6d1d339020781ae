// `ndp autotune`'s program (driver/autotune.h): run on the cpu backend, where every form is a
// real one too, it gives each round's time of every form and the forms' sums agree.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "driver/autotune.h"
#include "driver/session.h"

using namespace ndp::driver;

TEST_CASE("autotune's rounds time every form and check that the forms agree") {
  std::FILE* quiet = std::tmpfile();
  SessionOptions so;
  so.backend = Backend::Cpu;
  so.out = quiet;
  so.err = quiet;
  Session session(so);
  // The cuda backend's program runs on the cpu backend too: its levels are map kernels there.
  for (Backend program : {Backend::Cuda, Backend::Cpu}) {
    CAPTURE(backend_name(program));
    REQUIRE(session.eval_text("<autotune>", autotune_detail::tuning_program(program), false, false));
    for (int length : {1, 3, 64}) {
      CAPTURE(length);
      const int rounds = 3, forms = autotune_detail::form_count(program);
      ExprOutcome r = session.eval_expr("tune_rounds(partition({rem(i, 1000) : i in [0:" + std::to_string(length * 50) +
                                        "]}, dist(" + std::to_string(length) + ", 50)), " + std::to_string(rounds) +
                                        ", [] int, 0)");
      REQUIRE(r.status == ExprOutcome::Status::Ok);
      int64_t check = 0;
      std::vector<int64_t> ns;
      REQUIRE(autotune_detail::parse_rounds(r.value, check, ns));
      CHECK(ns.size() == static_cast<size_t>(rounds * forms));
      int64_t want = 0;
      for (int i = 0; i < length * 50; ++i) want += i % 1000;
      CHECK(check == want);
      for (int64_t t : ns) CHECK(t > 0);
    }
  }
  std::fclose(quiet);
}

TEST_CASE("parse_rounds reads the answer and refuses anything else") {
  int64_t check = 0;
  std::vector<int64_t> ns;
  CHECK(autotune_detail::parse_rounds("(12, [3, 4, 5])", check, ns));
  CHECK(check == 12);
  CHECK(ns == std::vector<int64_t>{3, 4, 5});
  ns.clear();
  CHECK(autotune_detail::parse_rounds("(-1, [])", check, ns));
  CHECK(check == -1);
  CHECK(ns.empty());
  CHECK_FALSE(autotune_detail::parse_rounds("12, [3]", check, ns));
  CHECK_FALSE(autotune_detail::parse_rounds("(12, [3, x])", check, ns));
  CHECK_FALSE(autotune_detail::parse_rounds("(12 [3])", check, ns));
  CHECK_FALSE(autotune_detail::parse_rounds("(12, [3,", check, ns));  // ends inside the list
  CHECK_FALSE(autotune_detail::parse_rounds("(12, [3]", check, ns));   // no closing parenthesis
}
