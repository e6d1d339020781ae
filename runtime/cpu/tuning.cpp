// The process-wide tuning record of the CPU runtime.
#include "tuning.h"

namespace ndp::runtime {

Tuning& tuning() {
  static Tuning t;
  return t;
}

}  // namespace ndp::runtime
