// `ndp autotune`'s program (driver/autotune.h): run on the cpu backend, where every form is a
// real one too, it gives each round's time of every form and the forms' sums agree.
#include <doctest/doctest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "driver/autotune.h"
#include "driver/session.h"

using namespace ndp::driver;

namespace {

/// A cpu backend session whose printing goes nowhere (autotune's answers are read back).
struct QuietSession {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> quiet{std::tmpfile(), &std::fclose};
  Session session{options(quiet.get())};
  static SessionOptions options(std::FILE* to) {
    SessionOptions so;
    so.backend = Backend::Cpu;
    so.out = to;
    so.err = to;
    return so;
  }
};

}  // namespace

TEST_CASE("autotune's rounds time every form and check that the forms agree") {
  QuietSession quiet;
  Session& session = quiet.session;
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

TEST_CASE("autotune's quicksort sorts, and its answer reads back") {
  QuietSession quiet;
  Session& session = quiet.session;
  REQUIRE(session.eval_text("<autotune>", autotune_detail::recursion_program(), false, false));
  // The checksum is position-weighted: equal only where the keys come out in order.
  ExprOutcome by_sort =
      session.eval_expr("let keys = {rem((i * 6364136223846793005 + 1442695040888963407) xor rshift(i * 2685821657736338717, 29), "
                        "1073741824) : i in [0:3000]}; s = sort(keys) in sum({x * (i + 1) : x in s; i in [0:#s]})");
  REQUIRE(by_sort.status == ExprOutcome::Status::Ok);
  ExprOutcome r = session.eval_expr("tune_sort(3000)");
  REQUIRE(r.status == ExprOutcome::Status::Ok);
  int64_t check = 0;
  double seconds = -1;
  REQUIRE(autotune_detail::parse_sort(r.value, check, seconds));
  CHECK(std::to_string(check) == by_sort.value);
  CHECK(seconds >= 0);
  CHECK_FALSE(autotune_detail::parse_sort("(12, x)", check, seconds));
  CHECK_FALSE(autotune_detail::parse_sort("(12 0.5)", check, seconds));
  CHECK_FALSE(autotune_detail::parse_sort("(12, 0.5", check, seconds));
}
