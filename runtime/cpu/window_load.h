// Private: reading a vector that is computed on demand (Generate in primitives.h) a window at a
// time, for the primitives that consume fused maps.
#pragma once

#include <algorithm>
#include <cstdint>

#include "primitives.h"

namespace ndp::runtime::detail {

/// `load(p)` for p increasing (as every chunk of the segmented loops reads): computes the window
/// [p, p + kWindow) when p leaves the current one, so the values are produced a few thousand at
/// a time and read back from L1, never stored as a whole vector. Each chunk uses its own copy.
template <class T>
class WindowLoad {
 public:
  static constexpr int64_t kWindow = 2048;

  WindowLoad(const Generate<T>& gen, int64_t n) : gen_(&gen), n_(n) {}
  WindowLoad(const WindowLoad& o) : gen_(o.gen_), n_(o.n_) {}  // a fresh, empty window
  WindowLoad& operator=(const WindowLoad&) = delete;

  T operator()(int64_t p) {
    if (p < lo_ || p >= hi_) {
      lo_ = p;
      hi_ = std::min(p + kWindow, n_);
      (*gen_)(lo_, hi_, buf_);
    }
    return buf_[p - lo_];
  }

 private:
  const Generate<T>* gen_;
  int64_t n_;
  int64_t lo_ = 0, hi_ = 0;
  T buf_[kWindow];
};

}  // namespace ndp::runtime::detail
