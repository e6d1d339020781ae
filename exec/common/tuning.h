// The machine's switch points, measured by `ndp autotune` (Note [Tuning]).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ndp::exec {

// Note [Tuning]
// Some run-time choices depend on the machine more than on the program: where a map kernel
// over rows beats the flattened segmented primitives, and with how many lanes a row (Note [Map
// kernel dispatch] in exec/cuda/map_lanes.h). `ndp autotune` (driver/autotune.cpp) measures
// them on the present GPU and writes a tuning file, `tuning/<device name>.txt` in the cache
// folder (exec/common/cache_dir.h), which the cuda backend reads when it starts. Without a
// file, the defaults are what autotune measured on an H100; the same shapes do not carry to
// every GPU (an H200's bandwidth and SM count differ), which is why the file is per device.
// The cpu backend has a table of its own, keyed by the processor and its threads
// (cpu_device_name): there a row is either flattened or one task's loop.
// NDP_MAP_LANES=N overrides every such choice with N lanes (0: the flattened form), on the cpu
// backend too, so that tests run both forms everywhere.
struct Tuning {
  static constexpr int kRowLogs = 21;  // average row lengths 2^0 ... 2^20
  static constexpr int64_t kMostElements = int64_t{1} << 40;
  static constexpr int64_t kMostTileBytes = 48 * 1024;  // a launch's shared memory without opting in

  /// By the rounded log2 of the rows' average length: the lanes a row gets as a map kernel,
  /// or 0 where the flattened form is faster. Measured on `elements` elements in all.
  std::array<int, kRowLogs> own_row_lanes{};
  int64_t elements = int64_t{1} << 24;
  /// The cuda backend's hybrid recursion (Note [Levels in a block] in runtime/gpu/block_levels.h):
  /// a laid-out loop's level of at most this many elements hands its small instances to one
  /// kernel; 0: never. `ndp autotune` measured it with a quicksort until quicksort became a
  /// partition loop (partition_switch_elements), which these blocks no longer see; it keeps this
  /// default (the best of 2^14 ... 2^20 on an H200, bench/results/session33).
  int64_t block_levels_elements = int64_t{1} << 18;
  /// The cuda backend's regular levels (Note [Regular levels] in flatten/flat_ir.h): the shared
  /// memory of a block's tile, whose levels one kernel runs; instances longer than it take a
  /// launch a level. Measured by `ndp autotune` with Batcher's sort; an older file without the
  /// key keeps this default (bench/results/session44).
  int64_t regular_tile_bytes = 32 * 1024;
  /// The cuda backend's partition levels (Note [Partition levels on the GPU] in
  /// codegen/partition_levels_ptx.h): instances of at most this many elements leave the grid
  /// levels for the blocks, which take up to kMostPartitionSwitch. Measured by `ndp autotune`
  /// with quicksort; an older file without the key keeps this default.
  int64_t partition_switch_elements = 2048;
  static constexpr int64_t kLeastPartitionSwitch = 64, kMostPartitionSwitch = 4096;

  static Tuning gpu_defaults();
  /// The cpu backend's: own_row_lanes is 0 (flattened) or 1 (a map kernel, an instance a
  /// task), measured by `ndp autotune --backend=cpu` on 2 cores.
  static Tuning cpu_defaults();
  /// The file's text: a header comment naming `device`, then `key value...` lines.
  std::string text(std::string_view device) const;
  /// The tuning in `text`, or nothing (and `error` says why).
  static std::optional<Tuning> parse(std::string_view text, std::string* error);
};

/// Lanes for n instances whose folded rows average `average` elements, with `resident`
/// threads on the GPU at once: the table's choice, with more lanes a row where fewer
/// instances than the measurement had would leave the GPU emptier, and never more lanes than
/// the rows' length rounded up to a power of two, nor than 256. 0: the flattened form.
int own_row_lanes(const Tuning& t, int64_t n, int64_t average, int64_t resident);

/// The least share of a row a block folds where a row is split over blocks.
inline constexpr int64_t kLeastSplitShare = 4096;

/// The blocks each of n instances of a map kernel at `block` takes, where its one outer fold
/// runs over rows of `average` elements and the GPU holds `resident_blocks` blocks at once (Note
/// [Rows over several blocks] in codegen/lanes.h): 1 where the instances fill half of those
/// blocks; else as many as they hold (n · parts at most resident_blocks), each folding at least
/// kLeastSplitShare elements of a row; never more than kMostSplitBlocks blocks in all.
/// NDP_SPLIT_PARTS=N pins it to N (within that bound), for tests and measurements.
int64_t split_parts(int64_t n, int64_t average, int64_t resident_blocks);

/// `parts` (split_parts's choice, from the device's threads) cut to the blocks of the kernel
/// that runs them the GPU holds at once, `resident_blocks` (its registers may allow fewer than
/// the device's threads), at least 1: one wave at most, unless NDP_SPLIT_PARTS pins them.
int64_t split_parts_within(int64_t parts, int64_t n, int64_t resident_blocks);

/// The tuning file of `device`, "" where no cache folder is kept.
std::string tuning_file(std::string_view device);

/// The tuning of `device`: its file's, else `defaults`. A file that does not parse is reported
/// once on stderr and ignored.
Tuning load_tuning(std::string_view device, const Tuning& defaults);

/// On the cpu backend, with `threads` threads: whether n instances whose rows average `average`
/// elements run as the map kernel (1) or flattened (0). The map kernel gives each instance to
/// one thread, so it needs at least four instances a thread to keep them all busy.
int cpu_own_row_form(const Tuning& t, int64_t n, int64_t average, int threads);

/// The name the cpu backend's tuning file is keyed by: the processor's model and the threads.
std::string cpu_device_name(int threads);

/// NDP_MAP_LANES, where set: the lanes every run-time choice of a map kernel's form takes.
std::optional<int> forced_map_lanes();

/// False where NDP_BLOCK_ROWS=0: GPU map kernels then launch without shared memory for their
/// block's rows (Note [Block rows launches] in exec/cuda/kernels.cpp), so that tests and
/// measurements run both ways.
bool block_rows_allowed();

}  // namespace ndp::exec
