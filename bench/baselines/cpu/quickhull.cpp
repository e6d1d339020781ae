// Sequential C++ baseline for quickhull.ndp: the same recursive quickhull on the same points.
#include "common.h"

namespace {

struct Point {
  double x, y;
};

// Written in the same operation order as NESL's cross_product, so the doubles are identical.
double cross_product(Point o, Point p1, Point p2) { return (p1.x - o.x) * (p2.y - o.y) - (p1.y - o.y) * (p2.x - o.x); }

// NESL's hsplit: appends p1 and then the hull points strictly left of p1 -> p2 to `out`. The
// farthest point is the leftmost maximum of the cross products (max_index's tie rule), and
// the points kept are those with a positive cross product, in input order (pack).
void hsplit(const std::vector<Point>& points, Point p1, Point p2, std::vector<Point>& out) {
  std::vector<Point> packed;
  size_t best = 0;
  double best_cross = 0.0;
  for (size_t i = 0; i < points.size(); ++i) {
    double c = cross_product(points[i], p1, p2);
    if (i == 0 || c > best_cross) {
      best = i;
      best_cross = c;
    }
    if (c > 0.0) packed.push_back(points[i]);
  }
  if (packed.size() < 2) {
    out.push_back(p1);
    out.insert(out.end(), packed.begin(), packed.end());
    return;
  }
  Point pm = points[best];
  hsplit(packed, p1, pm, out);
  hsplit(packed, pm, p2, out);
}

std::vector<Point> quickhull(const std::vector<Point>& points) {
  size_t imin = 0, imax = 0;
  for (size_t i = 1; i < points.size(); ++i) {
    if (points[i].x < points[imin].x) imin = i;
    if (points[i].x > points[imax].x) imax = i;
  }
  std::vector<Point> hull;
  hsplit(points, points[imin], points[imax], hull);
  hsplit(points, points[imax], points[imin], hull);
  return hull;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args = bench::parse_args(argc, argv, 1000000);
  const double scale = 1073741824.0;
  std::vector<Point> points(args.size);
  for (int64_t i = 0; i < args.size; ++i)
    points[i] = {static_cast<double>(bench::hash(2 * i)) / scale, static_cast<double>(bench::hash(2 * i + 1)) / scale};
  std::vector<Point> hull;
  double secs = bench::best_of(args.runs, [] {}, [&] { hull = quickhull(points); });
  std::vector<int64_t> keys(hull.size());
  for (size_t i = 0; i < hull.size(); ++i)
    keys[i] = static_cast<int64_t>(hull[i].x * scale) + 3 * static_cast<int64_t>(hull[i].y * scale);
  bench::report("algorithm", bench::weighted_checksum(keys), secs);
}
