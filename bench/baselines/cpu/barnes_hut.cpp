// Sequential C++ baseline for barnes_hut.ndp: the forces on the same 2*10^4 bodies by the same
// Barnes-Hut method. The quadtree is built by the same recursion (a stable split of each cell's
// bodies into its four quadrants, the non-empty ones in quadrant order; a cell of one body, or
// one of half-width below 1e-9, is a leaf; every node's centre of mass summed over its own
// bodies in their order) into the same pre-order array, and each body walks that array with the
// same opening criterion (a leaf, or size^2 < theta^2 * distance^2, adds its pull and skips its
// subtree). Every expression is written in the NESL program's operation order; only the order
// of ndp's parallel sums may differ, so the checksum (a double: the forces' sum weighted by
// position) is compared by bench/run_cpu.py with a relative tolerance.
#include <algorithm>
#include <cmath>

#include "common.h"

namespace {

struct Body {
  double x, y, m;
};

// A node: the centre of mass (x, y, m) of its cell's bodies, the cell's size (2h) and how many
// nodes its subtree holds (itself included), which is how far a walk skips past it.
struct Node {
  double x, y, m, size;
  int64_t skip;
};

int quadrant(const Body& b, double cx, double cy) { return (b.x < cx ? 0 : 1) + (b.y < cy ? 0 : 2); }

// NESL's centre: each sum over the cell's bodies in order, then the two divisions.
void centre(const Body* bodies, size_t n, Node& node) {
  double mass = 0.0, sx = 0.0, sy = 0.0;
  for (size_t i = 0; i < n; ++i) mass += bodies[i].m;
  for (size_t i = 0; i < n; ++i) sx += bodies[i].x * bodies[i].m;
  for (size_t i = 0; i < n; ++i) sy += bodies[i].y * bodies[i].m;
  node.x = sx / mass;
  node.y = sy / mass;
  node.m = mass;
}

// Appends the pre-order nodes of the cell of centre (cx, cy) and half-width h holding
// bodies[0..n) to `tree`. The bodies are split in place (stably, through `scratch`) into the
// four quadrants, so each child's bodies are contiguous and in their original order, as NESL's
// pack leaves them.
void build(Body* bodies, size_t n, double cx, double cy, double h, std::vector<Node>& tree, std::vector<Body>& scratch) {
  const size_t at = tree.size();
  tree.push_back({});
  centre(bodies, n, tree[at]);
  tree[at].size = 2.0 * h;
  if (n < 2 || h < 1.0e-9) {
    tree[at].skip = 1;
    return;
  }
  size_t count[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < n; ++i) ++count[quadrant(bodies[i], cx, cy)];
  size_t start[4], next[4];
  start[0] = 0;
  for (int k = 1; k < 4; ++k) start[k] = start[k - 1] + count[k - 1];
  for (int k = 0; k < 4; ++k) next[k] = start[k];
  for (size_t i = 0; i < n; ++i) scratch[next[quadrant(bodies[i], cx, cy)]++] = bodies[i];
  std::copy(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(n), bodies);
  for (int k = 0; k < 4; ++k)
    if (count[k] > 0)
      build(bodies + start[k], count[k], cx + (static_cast<double>(k % 2) - 0.5) * h,
            cy + (static_cast<double>(k / 2) - 0.5) * h, h / 2.0, tree, scratch);
  tree[at].skip = static_cast<int64_t>(tree.size() - at);
}

// The walk of one body over the pre-order tree, as NESL's walk (its tail recursion as a loop).
void walk(double px, double py, const std::vector<Node>& tree, double theta, double eps2, double& fx, double& fy) {
  fx = 0.0;
  fy = 0.0;
  const int64_t t = static_cast<int64_t>(tree.size());
  int64_t k = 0;
  while (k < t) {
    const Node& c = tree[k];
    const double dx = c.x - px;
    const double dy = c.y - py;
    const bool far = c.skip == 1 || c.size * c.size < theta * theta * (dx * dx + dy * dy);
    if (far) {
      // pull(px, py, c, eps2)
      const double r2 = dx * dx + dy * dy + eps2;
      const double s = r2 == 0.0 ? 0.0 : c.m / (r2 * std::sqrt(r2));
      fx = fx + dx * s;
      fy = fy + dy * s;
      k += c.skip;
    } else {
      k += 1;
    }
  }
}

// The force on every body; the bodies lie in the square of centre (0.5, 0.5) and side 1.
void forces(const std::vector<Body>& bodies, double theta, double eps2, std::vector<Node>& tree,
            std::vector<double>& fx, std::vector<double>& fy) {
  std::vector<Body> work(bodies), scratch(bodies.size());
  tree.clear();
  build(work.data(), work.size(), 0.5, 0.5, 0.5, tree, scratch);
  for (size_t i = 0; i < bodies.size(); ++i) walk(bodies[i].x, bodies[i].y, tree, theta, eps2, fx[i], fy[i]);
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args = bench::parse_args(argc, argv, 20000);
  const size_t n = static_cast<size_t>(args.size);
  const double scale = 1073741824.0;
  std::vector<Body> bodies(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t j = static_cast<int64_t>(i);
    bodies[i] = {static_cast<double>(bench::hash(3 * j)) / scale, static_cast<double>(bench::hash(3 * j + 1)) / scale,
                 1.0 + static_cast<double>(bench::hash(3 * j + 2)) / scale};
  }
  std::vector<Node> tree;
  std::vector<double> fx(n), fy(n);
  double secs = bench::best_of(args.runs, [] {}, [&] { forces(bodies, 0.5, 1.0e-4, tree, fx, fy); });
  // bench_checksum: sum((fx + 2 fy) * (i + 1)).
  double check = 0.0;
  for (size_t i = 0; i < n; ++i) check += (fx[i] + 2.0 * fy[i]) * static_cast<double>(i + 1);
  bench::report_float("algorithm", check, secs);
}
