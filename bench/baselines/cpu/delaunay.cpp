// Sequential C++ baseline for delaunay.ndp: the same grid, the same gift-wrapping walks around
// each point over its candidates, the same certification and the same rounds (see
// examples/delaunay.ndp), one point after another. `delaunay N RUNS verify` also checks the
// result by brute force (every circumcircle empty, 2n - 2 - h triangles, all counter-clockwise).
#include <algorithm>
#include <cmath>
#include <string_view>

#include "common.h"

namespace {

constexpr double kBig = 1.0e300;

struct Window {
  int64_t clo, chi, rlo, rhi;
};
struct Bands {
  int64_t bl, br, bb, bt;
};
struct Rect {
  bool on;
  double xa, xb, ya, yb;
};
struct Tri {
  int64_t p, q, r;
};

struct Grid {
  int64_t n, g;
  double x0, y0, x1, y1, wx, wy;
  std::vector<double> sx, sy;      // coordinates in sorted (by cell) order
  std::vector<int64_t> scx, scy;   // cell column and row in sorted order
  std::vector<int64_t> order;      // sorted position -> original index
  std::vector<int64_t> cstart;     // cell c's points are at sorted positions cstart[c] .. cstart[c+1]-1
};

int64_t cell_of(double x, double x0, double w, int64_t g) {
  return g == 1 ? 0 : std::min<int64_t>(g - 1, static_cast<int64_t>(std::trunc((x - x0) / w)));
}

int64_t isqrt(int64_t v) {
  int64_t r = static_cast<int64_t>(std::sqrt(static_cast<double>(v)));
  while (r * r > v) --r;
  while ((r + 1) * (r + 1) <= v) ++r;
  return r;
}

// The union of [0, e0), [s1, e1) and [s2, n) as three disjoint spans (NESL's spans).
void spans(int64_t e0, int64_t s1, int64_t e1, int64_t s2, int64_t n, int64_t out[6]) {
  int64_t u = std::max(s1, e0), v = std::max(s2, e0);
  out[0] = 0, out[1] = e0, out[2] = u, out[3] = std::max(u, std::min(e1, s2)), out[4] = v, out[5] = std::max(v, n);
}

void candidates(const Grid& G, int64_t p, Window w, Bands b, std::vector<int64_t>& out) {
  const int64_t g = G.g;
  int64_t rs[6], cs[6];
  const bool side = b.bl > 0 || b.br > 0;  // then every row is searched (in the side bands)
  spans(b.bb, side ? 0 : w.rlo, side ? g : w.rhi + 1, g - b.bt, g, rs);
  for (int k = 0; k < 6; k += 2)
    for (int64_t r = rs[k]; r < rs[k + 1]; ++r) {
      const bool full = r < b.bb || r >= g - b.bt, inw = r >= w.rlo && r <= w.rhi;
      spans(full ? g : b.bl, inw ? w.clo : g, inw ? w.chi + 1 : g, g - b.br, g, cs);
      for (int m = 0; m < 6; m += 2)
        for (int64_t i = G.cstart[r * g + cs[m]]; i < G.cstart[r * g + cs[m + 1]]; ++i)
          if (i != p) out.push_back(i);
    }
}

void strips(const Grid& G, Window w, Bands b, Rect s[4]) {
  const int64_t g = G.g;
  double ex = 1.0e-6 * G.wx, ey = 1.0e-6 * G.wy;
  double xa = G.x0 + static_cast<double>(b.bl) * G.wx - ex;
  double xb = (b.br == 0 ? G.x1 : G.x0 + static_cast<double>(g - b.br) * G.wx) + ex;
  double ya = G.y0 + static_cast<double>(b.bb) * G.wy - ey;
  double yb = (b.bt == 0 ? G.y1 : G.y0 + static_cast<double>(g - b.bt) * G.wy) + ey;
  s[0] = {w.clo > b.bl, xa, G.x0 + static_cast<double>(w.clo) * G.wx + ex, ya, yb};
  s[1] = {w.chi + 1 < g - b.br, G.x0 + static_cast<double>(w.chi + 1) * G.wx - ex, xb, ya, yb};
  s[2] = {w.rlo > b.bb, xa, xb, ya, G.y0 + static_cast<double>(w.rlo) * G.wy + ey};
  s[3] = {w.rhi + 1 < g - b.bt, xa, xb, G.y0 + static_cast<double>(w.rhi + 1) * G.wy - ey, yb};
}

bool apart(double cx, double cy, double rho, const Rect& r) {
  double dx = cx - std::max(r.xa, std::min(r.xb, cx));
  double dy = cy - std::max(r.ya, std::min(r.yb, cy));
  return std::sqrt(dx * dx + dy * dy) > rho * (1.0 + 1.0e-9);
}

bool certified(double ax, double ay, double bx, double by, double px, double py, const Rect s[4]) {
  double aa = ax * ax + ay * ay, bb = bx * bx + by * by;
  double d = 2.0 * (ax * by - ay * bx);
  double ux = (by * aa - ay * bb) / d, uy = (ax * bb - bx * aa) / d;
  double rho = std::sqrt(ux * ux + uy * uy);
  for (int i = 0; i < 4; ++i)
    if (s[i].on && !apart(px + ux, py + uy, rho, s[i])) return false;
  return true;
}

bool beyond_empty(double px, double py, double ax, double ay, double sgn, const Rect s[4]) {
  for (int i = 0; i < 4; ++i) {
    if (!s[i].on) continue;
    const double xs[2] = {s[i].xa, s[i].xb}, ys[2] = {s[i].ya, s[i].yb};
    for (double y : ys)
      for (double x : xs)
        if (!(sgn * (ax * (y - py) - ay * (x - px)) < 0.0)) return false;
  }
  return true;
}

// The walk of one point over its candidates (relative coordinates crx, cry, squared lengths
// crr): appends the triangles (p, a, b) as candidate slots to tris; returns how it ended
// (1 closed, 2 open, 0 gave up) and the open walk's end slots e1, e2.
int fan(const std::vector<double>& crx, const std::vector<double>& cry, const std::vector<double>& crr,
        std::vector<std::pair<int64_t, int64_t>>& tris, int64_t& e1, int64_t& e2) {
  const int64_t len = static_cast<int64_t>(crx.size());
  if (len < 2) return 0;
  int64_t j0 = 0;
  for (int64_t i = 1; i < len; ++i)
    if (crr[i] < crr[j0]) j0 = i;
  int64_t j = j0;
  double s = 1.0;
  e1 = -1;
  for (int64_t steps = 0;; ++steps) {
    double qx = crx[j], qy = cry[j];
    int64_t r = 0;
    double best = 0.0;
    for (int64_t i = 0; i < len; ++i) {
      double c = s * (qx * cry[i] - qy * crx[i]);
      double num = (crr[i] - (crx[i] * qx + cry[i] * qy)) / c;
      double v = c > 0.0 ? num : kBig;
      if (i == 0 || v < best) r = i, best = v;
    }
    bool found = best < kBig, ccw = s > 0.0;
    bool closed = found && ccw && r == j0, open = !(found || ccw);
    if (found) tris.push_back(ccw ? std::make_pair(j, r) : std::make_pair(r, j));
    if (closed || open || steps >= len) {
      e2 = j;
      return closed ? 1 : open ? 2 : 0;
    }
    if (!found) e1 = j;
    j = found ? r : j0;
    s = found ? s : -1.0;
  }
}

std::vector<Tri> delaunay(const std::vector<double>& xs, const std::vector<double>& ys) {
  Grid G;
  const int64_t n = static_cast<int64_t>(xs.size());
  G.n = n;
  G.x0 = *std::min_element(xs.begin(), xs.end()), G.x1 = *std::max_element(xs.begin(), xs.end());
  G.y0 = *std::min_element(ys.begin(), ys.end()), G.y1 = *std::max_element(ys.begin(), ys.end());
  const int64_t g = G.g = std::max<int64_t>(1, isqrt(n / 2));
  G.wx = (G.x1 - G.x0) / static_cast<double>(g), G.wy = (G.y1 - G.y0) / static_cast<double>(g);
  std::vector<int64_t> cx(n), cy(n), cell(n);
  G.cstart.assign(g * g + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    cx[i] = cell_of(xs[i], G.x0, G.wx, g), cy[i] = cell_of(ys[i], G.y0, G.wy, g);
    cell[i] = cy[i] * g + cx[i];
    ++G.cstart[cell[i] + 1];
  }
  for (int64_t c = 0; c < g * g; ++c) G.cstart[c + 1] += G.cstart[c];
  // stable counting sort by cell
  std::vector<int64_t> next(G.cstart.begin(), G.cstart.end() - 1);
  G.order.resize(n), G.sx.resize(n), G.sy.resize(n), G.scx.resize(n), G.scy.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t s = next[cell[i]]++;
    G.order[s] = i, G.sx[s] = xs[i], G.sy[s] = ys[i], G.scx[s] = cx[i], G.scy[s] = cy[i];
  }

  std::vector<Tri> out;
  std::vector<int64_t> todo(n), rest, cand;
  for (int64_t i = 0; i < n; ++i) todo[i] = i;
  std::vector<double> crx, cry, crr;
  std::vector<std::pair<int64_t, int64_t>> tris;
  int64_t k = 2, b = 0;
  while (!todo.empty()) {
    rest.clear();
    for (int64_t p : todo) {
      Window w{std::max<int64_t>(0, G.scx[p] - k), std::min(g - 1, G.scx[p] + k), std::max<int64_t>(0, G.scy[p] - k),
               std::min(g - 1, G.scy[p] + k)};
      Bands bd{w.clo == 0 ? b : 0, w.chi == g - 1 ? b : 0, w.rlo == 0 ? b : 0, w.rhi == g - 1 ? b : 0};
      cand.clear();
      candidates(G, p, w, bd, cand);
      const double px = G.sx[p], py = G.sy[p];
      crx.resize(cand.size()), cry.resize(cand.size()), crr.resize(cand.size());
      for (size_t i = 0; i < cand.size(); ++i) {
        crx[i] = G.sx[cand[i]] - px, cry[i] = G.sy[cand[i]] - py;
        crr[i] = crx[i] * crx[i] + cry[i] * cry[i];
      }
      tris.clear();
      int64_t e1 = -1, e2 = -1;
      int how = fan(crx, cry, crr, tris, e1, e2);
      Rect st[4];
      strips(G, w, bd, st);
      bool ok = how > 0;
      for (size_t t = 0; ok && t < tris.size(); ++t)
        ok = certified(crx[tris[t].first], cry[tris[t].first], crx[tris[t].second], cry[tris[t].second], px, py, st);
      bool done = ok && how == 2 ? beyond_empty(px, py, crx[e1], cry[e1], 1.0, st) && beyond_empty(px, py, crx[e2], cry[e2], -1.0, st)
                                 : ok || (w.clo == 0 && w.chi == g - 1 && w.rlo == 0 && w.rhi == g - 1);
      if (!done) {
        rest.push_back(p);
        continue;
      }
      const int64_t op = G.order[p];
      for (auto [a, bb] : tris) {
        int64_t oa = G.order[cand[a]], ob = G.order[cand[bb]];
        if (op < oa && op < ob) out.push_back({op, oa, ob});
      }
    }
    std::swap(todo, rest);
    if (8 * k > g) k = g, b = 0;
    else b = k / 2, k = 2 * k;
  }
  std::sort(out.begin(), out.end(), [](const Tri& a, const Tri& c) {
    return a.p != c.p ? a.p < c.p : a.q != c.q ? a.q < c.q : a.r < c.r;
  });
  return out;
}

// Brute-force check: every triangle ccw with its smallest vertex first, no repeats, no point
// strictly inside any circumcircle, and 2n - 2 - h triangles (h from a monotone-chain hull).
bool verify(const std::vector<double>& xs, const std::vector<double>& ys, const std::vector<Tri>& t) {
  const int64_t n = static_cast<int64_t>(xs.size());
  auto orient = [&](int64_t a, int64_t b, int64_t c) {
    return (xs[b] - xs[a]) * (ys[c] - ys[a]) - (ys[b] - ys[a]) * (xs[c] - xs[a]);
  };
  std::vector<int64_t> idx(n), hull(2 * n);
  for (int64_t i = 0; i < n; ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return xs[a] != xs[b] ? xs[a] < xs[b] : ys[a] < ys[b]; });
  int64_t h = 0;
  for (int pass = 0; pass < 2; ++pass) {
    int64_t base = h;
    for (int64_t m = 0; m < n; ++m) {
      int64_t i = pass == 0 ? idx[m] : idx[n - 1 - m];
      while (h >= base + 2 && orient(hull[h - 2], hull[h - 1], i) <= 0) --h;
      hull[h++] = i;
    }
    --h;
  }
  bool ok = static_cast<int64_t>(t.size()) == 2 * n - 2 - h;
  for (size_t i = 0; ok && i < t.size(); ++i) {
    const Tri& a = t[i];
    ok = a.p < a.q && a.p < a.r && orient(a.p, a.q, a.r) > 0.0 &&
         (i == 0 || t[i - 1].p != a.p || t[i - 1].q != a.q || t[i - 1].r != a.r);
    for (int64_t d = 0; ok && d < n; ++d) {
      double adx = xs[a.p] - xs[d], ady = ys[a.p] - ys[d], bdx = xs[a.q] - xs[d], bdy = ys[a.q] - ys[d];
      double cdx = xs[a.r] - xs[d], cdy = ys[a.r] - ys[d];
      double det = (adx * adx + ady * ady) * (bdx * cdy - cdx * bdy) - (bdx * bdx + bdy * bdy) * (adx * cdy - cdx * ady) +
                   (cdx * cdx + cdy * cdy) * (adx * bdy - bdx * ady);
      ok = !(det > 0.0);
    }
  }
  std::fprintf(stderr, "verify: %zu triangles, %lld hull points: %s\n", t.size(), static_cast<long long>(h),
               ok ? "ok" : "FAILED");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args = bench::parse_args(argc, argv, 10000);
  const double scale = 1073741824.0;
  std::vector<double> xs(args.size), ys(args.size);
  for (int64_t i = 0; i < args.size; ++i)
    xs[i] = static_cast<double>(bench::hash(2 * i)) / scale, ys[i] = static_cast<double>(bench::hash(2 * i + 1)) / scale;
  std::vector<Tri> tris;
  double secs = bench::best_of(args.runs, [] {}, [&] { tris = delaunay(xs, ys); });
  if (argc > 3 && std::string_view(argv[3]) == "verify" && !verify(xs, ys, tris)) return 1;
  std::vector<int64_t> keys(tris.size());
  for (size_t i = 0; i < tris.size(); ++i) keys[i] = tris[i].p + 3 * tris[i].q + 7 * tris[i].r;
  bench::report("algorithm", bench::weighted_checksum(keys), secs);
}
