// GPU generators (fill, iota, DIST, INDEX) against the CPU runtime, at every shape.
#include "gpu_fixture.h"

using namespace ndp::rt;
using namespace ndp::rt::testing;

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
