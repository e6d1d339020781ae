// rand's draws on the device (DrawCounts, Note [Draw counts on the device]) and the hash
// primitives, against a host model of Note [rand] and of hash_value.
#include <map>
#include <vector>

#include "runtime/gpu/rand.h"
#include "tests/unit/runtime/gpu/gpu_fixture.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

namespace {

uint64_t mix(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The interpreter's draws, one instance after another: counts by (site, path) since the seed.
struct HostDraws {
  uint64_t seed_mix = mix(0);
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> counts;
  int64_t draw(uint64_t site, uint64_t path, int64_t bound) {
    uint64_t c = counts[{site, path}]++;
    uint64_t r = mix(mix(seed_mix ^ path ^ site) ^ c);
    return static_cast<int64_t>((static_cast<unsigned __int128>(r) * static_cast<uint64_t>(bound)) >> 64);
  }
};

std::vector<int64_t> device_draws(gpu::Primitives& p, gpu::DrawCounts& d, uint64_t site, const std::vector<uint64_t>& paths,
                                  int64_t bound) {
  int64_t n = static_cast<int64_t>(paths.size());
  std::vector<int64_t> bounds(paths.size(), bound);
  DArray<int64_t> db(p, std::span<const int64_t>(bounds));
  DArray<uint64_t> dp(p, std::span<const uint64_t>(paths));
  DArray<int64_t> out(p, n);
  auto bad = d.draw(NDP_I64, site, db.ptr(), dp.ptr(), n, out.ptr());
  REQUIRE_MESSAGE(bad.ok(), bad.status().message());
  REQUIRE(bad.value() == -1);
  Vec<int64_t> h = out.host(p);
  return std::vector<int64_t>(h.p.get(), h.p.get() + n);
}

}  // namespace

TEST_CASE("gpu rand draws as the interpreter: repeated paths, growing tables, sites, reseeding") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  gpu::DrawCounts d(*p);
  REQUIRE(d.restart(0).ok());
  HostDraws host;
  auto check = [&](uint64_t site, const std::vector<uint64_t>& paths) {
    std::vector<int64_t> got = device_draws(*p, d, site, paths, 1000000007);
    for (size_t i = 0; i < paths.size(); ++i) REQUIRE(got[i] == host.draw(site, paths[i], 1000000007));
  };
  std::vector<uint64_t> distinct(5000), repeated(3000), empty_marker = {~0ull, 7, ~0ull};
  for (size_t i = 0; i < distinct.size(); ++i) distinct[i] = mix(i);
  for (size_t i = 0; i < repeated.size(); ++i) repeated[i] = (i * 7919) % 13;  // each path ~230 times
  check(11, distinct);       // past the first capacity: the table grows
  check(11, distinct);       // the same paths again: counts 1
  check(11, repeated);       // numbered in instance order
  check(12, repeated);       // another site counts apart
  check(11, empty_marker);   // the path equal to the table's empty marker
  check(11, empty_marker);
  // rand_seed: the last instance's seed, counts restarted.
  std::vector<int64_t> seeds = {5, 42};
  DArray<int64_t> ds(*p, std::span<const int64_t>(seeds));
  REQUIRE(d.reseed(ds.ptr(), 2).ok());
  host.seed_mix = mix(42);
  host.counts.clear();
  check(11, repeated);
  check(11, distinct);
}

TEST_CASE("gpu rand reports the first bound that is not positive") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  gpu::DrawCounts d(*p);
  std::vector<double> bounds = {1.0, 2.0, 0.0, -1.0, 3.0};
  std::vector<uint64_t> paths = {1, 2, 3, 4, 5};
  DArray<double> db(*p, std::span<const double>(bounds)), out(*p, 5);
  DArray<uint64_t> dp(*p, std::span<const uint64_t>(paths));
  auto bad = d.draw(NDP_F64, 3, db.ptr(), dp.ptr(), 5, out.ptr());
  REQUIRE(bad.ok());
  CHECK(bad.value() == 2);
  bounds[2] = bounds[3] = 0.5;  // then it draws again, below each bound
  DArray<double> good(*p, std::span<const double>(bounds));
  bad = d.draw(NDP_F64, 3, good.ptr(), dp.ptr(), 5, out.ptr());
  REQUIRE(bad.ok());
  CHECK(bad.value() == -1);
  Vec<double> h = out.host(*p);
  for (int64_t i = 0; i < 5; ++i) CHECK((h[i] >= 0.0 && h[i] < bounds[i]));
}

TEST_CASE("gpu path steps and sequence hashes") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  std::vector<int64_t> offsets = {0, 3, 3, 7};  // lengths 3, 0, 4
  std::vector<uint64_t> parent = {10, 20, 30}, elems = {1, 2, 3, 4, 5, 6, 7};
  DArray<int64_t> doff(*p, std::span<const int64_t>(offsets));
  DArray<uint64_t> dparent(*p, std::span<const uint64_t>(parent)), delems(*p, std::span<const uint64_t>(elems));
  gpu::DSegs s = gpu::DSegs::irregular(3, 7, doff.ptr());
  DArray<uint64_t> steps(*p, 7), folds(*p, 3);
  REQUIRE(p->path_step(dparent.ptr(), s, steps.ptr()).ok());
  REQUIRE(p->hash_fold(delems.ptr(), s, folds.ptr()).ok());
  Vec<uint64_t> hs = steps.host(*p), hf = folds.host(*p);
  for (int64_t k = 0; k < 3; ++k) {
    uint64_t acc = mix(static_cast<uint64_t>(offsets[k + 1] - offsets[k]) ^ 0x5);
    for (int64_t q = offsets[k]; q < offsets[k + 1]; ++q) {
      CHECK(hs[q] == mix(parent[k] ^ static_cast<uint64_t>(q - offsets[k])));
      acc = mix(acc ^ elems[q]);
    }
    CHECK(hf[k] == acc);
  }
}
