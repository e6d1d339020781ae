// Sequential C++ baseline for radix_blocks.ndp: the same LSD radix sort by per-block counting
// (blocks of 1000 keys, 8-bit digits from bit 0 while the shift is below 30).
#include <array>

#include "common.h"

// One pass, as in NESL: each block counts its keys' digits into 256 buckets; bucket j of block
// b starts after every smaller bucket and after bucket j of the earlier blocks; each key goes to
// its bucket's next free place, in key order.
static std::vector<int64_t> radix_pass(const std::vector<int64_t>& keys, int shift, int64_t block) {
  const int64_t n = static_cast<int64_t>(keys.size()), nb = (n + block - 1) / block;
  std::vector<std::array<int64_t, 256>> counts(static_cast<size_t>(nb));
  for (int64_t b = 0; b < nb; ++b) {
    counts[b].fill(0);
    for (int64_t i = b * block; i < std::min(n, (b + 1) * block); ++i) ++counts[b][(keys[i] >> shift) & 255];
  }
  int64_t start = 0;  // bucket by bucket, block by block: the exclusive scan in that order
  for (int j = 0; j < 256; ++j)
    for (int64_t b = 0; b < nb; ++b) {
      int64_t c = counts[b][j];
      counts[b][j] = start;
      start += c;
    }
  std::vector<int64_t> out(keys.size());
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t i = b * block; i < std::min(n, (b + 1) * block); ++i) out[counts[b][(keys[i] >> shift) & 255]++] = keys[i];
  return out;
}

int main(int argc, char** argv) {
  bench::Args args = bench::parse_args(argc, argv, 1000000);
  std::vector<int64_t> input(static_cast<size_t>(args.size));
  for (int64_t i = 0; i < args.size; ++i) input[i] = bench::hash(i);
  std::vector<int64_t> result;
  double secs = bench::best_of(args.runs, [] {}, [&] {
    result = input;
    for (int shift = 0; shift < 30; shift += 8) result = radix_pass(result, shift, 1000);
  });
  bench::report("algorithm", bench::weighted_checksum(result), secs);
}
