// GPU generators (fill, iota, DIST, INDEX) against the CPU runtime, at every shape.
#include <limits>
#include <type_traits>

#include "tests/unit/runtime/gpu/gpu_fixture.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

TEST_CASE("gpu fill and iota") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  for (int64_t n : {0, 1, 7, 100'003}) {
    DArray<int64_t> a(*p, n);
    REQUIRE(p->iota(a.ptr(), n, 5, 3).ok());
    Vec<int64_t> h = a.host(*p);
    for (int64_t i = 0; i < n; ++i) REQUIRE(h[i] == 5 + 3 * i);
    DArray<uint8_t> b(*p, n);
    REQUIRE(p->fill(b.ptr(), n, 1, 1).ok());
    Vec<uint8_t> hb = b.host(*p);
    for (int64_t i = 0; i < n; ++i) REQUIRE(hb[i] == 1);
  }
}

TEST_CASE_TEMPLATE("gpu dist matches the cpu runtime", T, int64_t, double, int32_t, float, bool, uint8_t) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  constexpr ndp_elem_type et = elem_type_of<T>();
  std::vector<Shape> shapes = small_shapes();
  for (Shape& s : large_shapes()) shapes.push_back(std::move(s));
  for (const Shape& s : shapes) {
    CAPTURE(s.name);
    Vec<T> x = random_values<T>(s.count(), 3);
    Vec<T> want(s.total());
    REQUIRE(ok(dist<T>(x, s.view(), want)));
    DShape ds(*p, s);
    DArray<T> dx(*p, x.cspan()), out(*p, s.total());
    REQUIRE(p->dist(et, dx.ptr(), ds.segs, out.ptr()).ok());
    Vec<T> got = out.host(*p);
    for (int64_t i = 0; i < s.total(); ++i) REQUIRE(got[i] == want[i]);
  }
}

TEST_CASE("gpu fill keeps the low bytes of the value at every element size") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  const uint64_t value = 0x1122334455667788ull;
  for (int64_t n : {1, 3, 100'003}) {
    DArray<uint64_t> a8(*p, n);
    DArray<uint32_t> a4(*p, n);
    DArray<uint8_t> a1(*p, n);
    REQUIRE(p->fill(a8.ptr(), n, 8, value).ok());
    REQUIRE(p->fill(a4.ptr(), n, 4, value).ok());
    REQUIRE(p->fill(a1.ptr(), n, 1, value).ok());
    Vec<uint64_t> h8 = a8.host(*p);
    Vec<uint32_t> h4 = a4.host(*p);
    Vec<uint8_t> h1 = a1.host(*p);
    for (int64_t i = 0; i < n; ++i) {
      REQUIRE(h8[i] == value);
      REQUIRE(h4[i] == 0x55667788u);
      REQUIRE(h1[i] == 0x88u);
    }
  }
}

TEST_CASE_TEMPLATE("gpu index matches the cpu runtime (ints wrap)", T, int64_t, double, int32_t, float) {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  std::vector<Shape> shapes = small_shapes();
  for (Shape& s : large_shapes()) shapes.push_back(std::move(s));
  for (const Shape& s : shapes) {
    CAPTURE(s.name);
    Vec<T> start = random_values<T>(s.count(), 5), stride = random_values<T>(s.count(), 6);
    if constexpr (std::is_integral_v<T>) {  // near the top of the range, so that the values wrap
      using U = std::make_unsigned_t<T>;
      for (int64_t k = 0; k < s.count(); ++k)
        start[k] = static_cast<T>(static_cast<U>(std::numeric_limits<T>::max()) - U(3) + static_cast<U>(start[k]));
    }
    Vec<T> want(s.total());
    REQUIRE(ok(index<T>(start, stride, s.view(), want)));
    DShape ds(*p, s);
    DArray<T> dstart(*p, start.cspan()), dstride(*p, stride.cspan()), out(*p, s.total());
    REQUIRE(p->index(elem_type_of<T>(), dstart.ptr(), dstride.ptr(), ds.segs, out.ptr()).ok());
    CHECK(first_diff<T>(out.host(*p).cspan(), want) == -1);
  }
}
