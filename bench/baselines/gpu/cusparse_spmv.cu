// cuSPARSE baseline for bench/programs/spmv.ndp (issue 6: ≥ 0.7 × cuSPARSE SpMV): the same
// matrix (row i has bench::spmv_row_length(i, shape) nonzeros in columns drawn from [0, n),
// values -4..4; x holds 1..8, every quantity from bench_hash as in
// bench/baselines/cpu/common.h), as CSR with 32-bit or 64-bit
// indices (spmv.ndp's bench_columns: i32 or NESL's int) and double values (NESL's float),
// y = A·x with cusparseSpMV (CUSPARSE_SPMV_ALG_DEFAULT, its buffer allocated once). Both index
// arrays take the given width, as cuSPARSE requires one width for the row offsets and the
// columns. Times the product alone with CUDA events after a warm-up, median of `runs`; prints the
// checksum of trunc(y) weighted as in NESL, so it is comparable with ndp's. With a batch of B,
// each timed run makes B products back to back and counts a B-th of their time (spmv.ndp's
// bench_batch does the same).
//   cusparse_spmv [rows, default 2^20] [runs, default 20] [shape: spmv.ndp's bench_shape, default 0]
//                 [index bits: 32 or 64, default 32] [batch, default 1]
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "../cpu/common.h"

#define CHECK_CUDA(x)                                                                  \
  do {                                                                                 \
    cudaError_t e = (x);                                                               \
    if (e != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(e));              \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)
#define CHECK_SPARSE(x)                                                                \
  do {                                                                                 \
    cusparseStatus_t s = (x);                                                          \
    if (s != CUSPARSE_STATUS_SUCCESS) {                                                \
      std::fprintf(stderr, "%s failed: %s\n", #x, cusparseGetErrorString(s));          \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

// The product with Index (int32_t or int64_t) as the width of both index arrays.
template <typename Index>
int run(int64_t n, int runs, int shape, int batch) {
  constexpr int64_t kStream = int64_t{1} << 32;
  constexpr cusparseIndexType_t kIndexType = sizeof(Index) == 4 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
  std::vector<Index> start(n + 1, 0);
  int64_t nnz = 0;
  for (int64_t i = 0; i < n; ++i) {
    nnz += bench::spmv_row_length(i, shape);
    if (nnz > std::numeric_limits<Index>::max()) {
      std::fprintf(stderr, "cusparse_spmv: %lld nonzeros and more do not fit %d-bit indices\n", static_cast<long long>(nnz),
                   static_cast<int>(8 * sizeof(Index)));
      return 2;
    }
    start[i + 1] = static_cast<Index>(nnz);
  }
  std::vector<Index> cols(nnz);
  std::vector<double> vals(nnz), x(n), y(n);
  for (int64_t j = 0; j < nnz; ++j) {
    cols[j] = static_cast<Index>(bench::hash(j + 2 * kStream) % n);
    vals[j] = static_cast<double>(bench::hash(j + 3 * kStream) % 9 - 4);
  }
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<double>(bench::hash(i + 4 * kStream) % 8 + 1);

  Index *d_start, *d_cols;
  double *d_vals, *d_x, *d_y;
  CHECK_CUDA(cudaMalloc(&d_start, (n + 1) * sizeof(Index)));
  CHECK_CUDA(cudaMalloc(&d_cols, nnz * sizeof(Index)));
  CHECK_CUDA(cudaMalloc(&d_vals, nnz * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&d_x, n * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&d_y, n * sizeof(double)));
  CHECK_CUDA(cudaMemcpy(d_start, start.data(), (n + 1) * sizeof(Index), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_cols, cols.data(), nnz * sizeof(Index), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_vals, vals.data(), nnz * sizeof(double), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_x, x.data(), n * sizeof(double), cudaMemcpyHostToDevice));

  cusparseHandle_t handle;
  CHECK_SPARSE(cusparseCreate(&handle));
  cusparseSpMatDescr_t a;
  cusparseDnVecDescr_t vx, vy;
  CHECK_SPARSE(cusparseCreateCsr(&a, n, n, nnz, d_start, d_cols, d_vals, kIndexType, kIndexType,
                                 CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  CHECK_SPARSE(cusparseCreateDnVec(&vx, n, d_x, CUDA_R_64F));
  CHECK_SPARSE(cusparseCreateDnVec(&vy, n, d_y, CUDA_R_64F));
  const double one = 1.0, zero = 0.0;
  size_t buffer_size = 0;
  CHECK_SPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, vx, &zero, vy, CUDA_R_64F,
                                       CUSPARSE_SPMV_ALG_DEFAULT, &buffer_size));
  void* buffer = nullptr;
  CHECK_CUDA(cudaMalloc(&buffer, buffer_size > 0 ? buffer_size : 1));
  auto product = [&] {
    return cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, vx, &zero, vy, CUDA_R_64F,
                        CUSPARSE_SPMV_ALG_DEFAULT, buffer);
  };
  CHECK_SPARSE(product());  // warm-up
  CHECK_CUDA(cudaDeviceSynchronize());
  cudaEvent_t t0, t1;
  CHECK_CUDA(cudaEventCreate(&t0));
  CHECK_CUDA(cudaEventCreate(&t1));
  std::vector<float> ms;
  for (int r = 0; r < runs; ++r) {
    CHECK_CUDA(cudaEventRecord(t0));
    for (int k = 0; k < batch; ++k) CHECK_SPARSE(product());  // back to back, as in a loop of products
    CHECK_CUDA(cudaEventRecord(t1));
    CHECK_CUDA(cudaEventSynchronize(t1));
    float m = 0;
    CHECK_CUDA(cudaEventElapsedTime(&m, t0, t1));
    ms.push_back(m / batch);
  }
  std::sort(ms.begin(), ms.end());
  CHECK_CUDA(cudaMemcpy(y.data(), d_y, n * sizeof(double), cudaMemcpyDeviceToHost));
  std::vector<int64_t> truncated(n);
  for (int64_t i = 0; i < n; ++i) truncated[i] = static_cast<int64_t>(y[i]);
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s\nshape: %d, rows: %lld, nonzeros: %lld\ncusparseSpMV (CSR, %d-bit indices, f64): median %.4f ms, min %.4f ms, "
              "max %.4f ms of %d\nchecksum: %lld\n",
              prop.name, shape, static_cast<long long>(n), static_cast<long long>(nnz), static_cast<int>(8 * sizeof(Index)),
              ms[ms.size() / 2], ms.front(), ms.back(), runs,
              static_cast<long long>(bench::weighted_checksum(truncated)));
  return 0;
}

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::strtoll(argv[1], nullptr, 10) : int64_t{1} << 20;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 20;
  const int shape = argc > 3 ? std::atoi(argv[3]) : 0;
  const int index_bits = argc > 4 ? std::atoi(argv[4]) : 32;
  const int batch = argc > 5 ? std::atoi(argv[5]) : 1;
  if (n < 1 || runs < 1 || shape < 0 || shape > 2 || (index_bits != 32 && index_bits != 64) || batch < 1) {
    std::fprintf(stderr, "usage: cusparse_spmv [rows >= 1] [runs >= 1] [shape 0..2] [index bits 32|64] [batch >= 1]\n");
    return 2;
  }
  return index_bits == 32 ? run<int32_t>(n, runs, shape, batch) : run<int64_t>(n, runs, shape, batch);
}
