// Sequential C++ baseline for spmv.ndp: the row-by-row sparse product over a CSR matrix.
#include "common.h"

namespace {

// The CSR form of spmv.ndp's nested rows: row i's (column, value) pairs are
// cols/vals[start[i] .. start[i+1]).
struct Csr {
  std::vector<int64_t> start, cols;
  std::vector<double> vals;
};

constexpr int64_t kStream = int64_t{1} << 32;  // offset separating the hash streams, as in NESL

Csr make_matrix(int64_t n) {
  Csr m;
  m.start.resize(n + 1);
  m.start[0] = 0;
  for (int64_t i = 0; i < n; ++i) m.start[i + 1] = m.start[i] + bench::spmv_row_length(i, 0);  // spmv.ndp's bench_shape 0
  int64_t nnz = m.start[n];
  m.cols.resize(nnz);
  m.vals.resize(nnz);
  for (int64_t j = 0; j < nnz; ++j) {
    m.cols[j] = bench::hash(j + 2 * kStream) % n;
    m.vals[j] = static_cast<double>(bench::hash(j + 3 * kStream) % 9 - 4);
  }
  return m;
}

void spmv(const Csr& m, const std::vector<double>& x, std::vector<double>& y) {
  int64_t n = static_cast<int64_t>(m.start.size()) - 1;
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int64_t k = m.start[i]; k < m.start[i + 1]; ++k) s += m.vals[k] * x[m.cols[k]];
    y[i] = s;
  }
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args = bench::parse_args(argc, argv, 1000000);
  int64_t n = args.size;
  Csr m = make_matrix(n);
  std::vector<double> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<double>(bench::hash(i + 4 * kStream) % 8 + 1);
  double secs = bench::best_of(args.runs, [] {}, [&] { spmv(m, x, y); });
  // trunc, as the NESL checksum does; the values are exact integers anyway.
  std::vector<int64_t> truncated(n);
  for (int64_t i = 0; i < n; ++i) truncated[i] = static_cast<int64_t>(y[i]);
  bench::report("algorithm", bench::weighted_checksum(truncated), secs);
}
