// The buffer pool: large blocks reused by size class, small ones not pooled, a cap on the cache.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "exec/host/buffer_pool.h"
#include "exec/host/vec.h"

using namespace ndp::exec::host;

TEST_CASE("buffer pool: large blocks are reused by size class, small ones are not pooled") {
  void* a = pooled_alloc(3 << 20);  // class 4 MiB
  CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
  static_cast<char*>(a)[(3 << 20) - 1] = 1;  // the whole requested size is usable
  size_t cached = pooled_cached_bytes();
  pooled_free(a, 3 << 20);
  CHECK(pooled_cached_bytes() == cached + (4 << 20));
  void* b = pooled_alloc((5 << 20) / 2);  // 2.5 MiB: the same class, so the same block
  CHECK(b == a);
  CHECK(pooled_cached_bytes() == cached);
  pooled_free(b, (5 << 20) / 2);
  void* c = pooled_alloc(5 << 20);  // class 8 MiB: never the 4 MiB block, though it is free
  CHECK(c != b);
  pooled_free(c, 5 << 20);
  // Small blocks go straight back to the allocator.
  size_t before_small = pooled_cached_bytes();
  void* s = pooled_alloc(100);
  CHECK(reinterpret_cast<uintptr_t>(s) % 64 == 0);
  pooled_free(s, 100);
  CHECK(pooled_cached_bytes() == before_small);
  // The cap: 1 GiB-class blocks (address space only; nothing is touched) are kept only while
  // the total stays within pooled_max_cached_bytes() (an eighth of the machine's memory, 1 to
  // 16 GiB). One more such block than the cap holds, all freed: at least one goes back.
  const size_t gib = size_t{1} << 30, before_big = pooled_cached_bytes();
  std::vector<void*> bigs(pooled_max_cached_bytes() / gib + 1);
  for (void*& p : bigs) p = pooled_alloc(size_t{600} << 20);
  for (void* p : bigs) pooled_free(p, size_t{600} << 20);
  CHECK(pooled_cached_bytes() <= pooled_max_cached_bytes());
  CHECK(pooled_cached_bytes() - before_big < bigs.size() * gib);  // not all kept
  CHECK(pooled_max_cached_bytes() >= (size_t{1} << 30));
  CHECK(pooled_max_cached_bytes() <= (size_t{16} << 30));
  // A Buf's memory goes back to the pool when the last Vec sharing it is gone.
  void* first = nullptr;
  {
    Buf<int64_t> buf(1 << 19);  // 4 MiB
    first = buf.data();
    std::shared_ptr<const void> shared = buf.share();
  }
  Buf<double> again(1 << 19);
  CHECK(static_cast<void*>(again.data()) == first);
}
