// PlacedRows on the host: a laid-out loop's results, each row written at its place, whole rows
// or chosen rows of a vector (Note [Base rows from the argument] in exec/common/flat_walk.h).
#include <doctest/doctest.h>

#include "exec/host/placed_rows.h"
#include "exec/host/vec.h"
#include "tests/unit/exec/host/host_helpers.h"

using namespace ndp;
using namespace ndp::test::exec_test;
using namespace ndp::exec::host;

TEST_CASE("placed rows: whole rows and chosen rows land at their places, short and long rows alike") {
  lang::core::Program prog;
  auto& T = prog.types;
  const Type* t = T.seq(T.int_());
  // Rows of 0, 1, 2 and 40000 elements, so that the copy is split by elements over the threads.
  std::vector<Value> rows;
  std::vector<int64_t> lens = {0, 1, 2, 40000, 1, 3};
  int64_t total = 0;
  for (size_t i = 0; i < lens.size(); ++i) {
    std::vector<Value> xs;
    for (int64_t x = 0; x < lens[i]; ++x) xs.push_back(I(static_cast<int64_t>(i) * 100000 + x));
    rows.push_back(seq(xs));
    total += lens[i];
  }
  Vec v = from_values(T, t, rows);
  // Rows 5, 3 and 1 chosen, placed in that order from the start; then rows 0, 2 and 4 after
  // them by put of their own pack.
  auto out = placed_rows(t, total);
  REQUIRE(out != nullptr);
  const std::vector<int64_t> which = {5, 3, 1};
  const std::vector<int64_t> at = {0, 3, 40003};
  out->put_rows_of(v, which, at);
  const bool rest[6] = {true, false, true, false, true, false};
  out->put(pack(v, rest), std::vector<int64_t>{40004, 40004, 40006});
  auto got = to_values(out->rows(t, {3, 40000, 1, 0, 2, 1}));
  REQUIRE(got.size() == 6);
  CHECK(lang::values_equal(got[0], rows[5]));
  CHECK(lang::values_equal(got[1], rows[3]));
  CHECK(lang::values_equal(got[2], rows[1]));
  CHECK(lang::values_equal(got[3], rows[0]));
  CHECK(lang::values_equal(got[4], rows[2]));
  CHECK(lang::values_equal(got[5], rows[4]));
  // Nothing chosen places nothing.
  out->put_rows_of(v, {}, {});
  // Short rows only (a deep level's finished rows): rows 1, 4, 2 and 0 in one loop.
  auto few = placed_rows(t, 4);
  REQUIRE(few != nullptr);
  few->put_rows_of(v, std::vector<int64_t>{1, 4, 2, 0}, std::vector<int64_t>{3, 2, 0, 2});
  auto short_rows = to_values(few->rows(t, {2, 1, 1}));
  REQUIRE(short_rows.size() == 3);
  CHECK(lang::values_equal(short_rows[0], rows[2]));
  CHECK(lang::values_equal(short_rows[1], rows[4]));
  CHECK(lang::values_equal(short_rows[2], rows[1]));
}
