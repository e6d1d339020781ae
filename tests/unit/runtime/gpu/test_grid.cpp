// grid_columns: whether row and column ids form a grid (Note [Tiled folds] in
// flatten/tiled_folds.h), against the definition.
#include "tests/unit/runtime/gpu/gpu_fixture.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

namespace {

int64_t columns_of(gpu::Primitives& p, const Vec<int64_t>& rows, const Vec<int64_t>& columns) {
  DArray<int64_t> r(p, rows.cspan()), c(p, columns.cspan());
  auto m = p.grid_columns(r.ptr(), c.ptr(), rows.n);
  REQUIRE_MESSAGE(m.ok(), m.status().message());
  return m.value();
}

/// The ids of an n × m grid: row i (ids 7i), column j (ids 3j + 1).
std::pair<Vec<int64_t>, Vec<int64_t>> grid(int64_t n, int64_t m) {
  Vec<int64_t> rows(n * m), columns(n * m);
  for (int64_t t = 0; t < n * m; ++t) {
    rows[t] = 7 * (t / m);
    columns[t] = 3 * (t % m) + 1;
  }
  return {std::move(rows), std::move(columns)};
}

}  // namespace

TEST_CASE("gpu grid_columns finds the columns of a grid and nothing else") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (auto [n, m] : {std::pair<int64_t, int64_t>{1, 1}, {5, 1}, {1, 9}, {3, 4}, {2048, 2048}, {100'003, 3}}) {
    CAPTURE(n);
    CAPTURE(m);
    auto [rows, columns] = grid(n, m);
    CHECK(columns_of(*p, rows, columns) == m);
    if (n * m < 2) continue;
    // A column out of place, a row that changes inside its run: no grid.
    const int64_t last = n * m - 1;
    columns[last] += 1;
    CHECK(columns_of(*p, rows, columns) == (n == 1 ? n * m : -1));
    columns[last] -= 1;
    rows[last] += 1;  // with runs of one, any rows are a grid
    CHECK(columns_of(*p, rows, columns) == (m == 1 ? 1 : -1));
  }
  // Runs of unequal lengths: the first run's length does not divide n.
  Vec<int64_t> rows(7), columns(7);
  for (int64_t t = 0; t < 7; ++t) rows[t] = t < 3 ? 0 : 1, columns[t] = t < 3 ? t : t - 3;
  CHECK(columns_of(*p, rows, columns) == -1);
  Vec<int64_t> none(0);
  CHECK(columns_of(*p, none, none) == -1);
}
