// Tuning parameters of the CPU runtime: how finely work is cut into parallel chunks.
#pragma once

#include <cstdint>

namespace ndp::runtime {

/// Performance knobs, not semantics: results never depend on them, except the rounding of
/// float scans and reductions, which may be reassociated (extensions.md §4).
struct Tuning {
  /// Items (segments + elements) below which a call runs on one chunk; keeps small calls
  /// free of OpenMP start-up cost.
  int64_t grain = int64_t{1} << 15;
  /// The number of chunks a large call is cut into; 0 means one per OpenMP thread. Tests set
  /// it above the thread count to put chunk boundaries in awkward places.
  int chunks = 0;
};

/// The process-wide tuning. Change it only while no runtime call is running.
Tuning& tuning();

}  // namespace ndp::runtime
