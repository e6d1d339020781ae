// `ndp autotune`: measures the switch points of the present GPU, or of the cpu backend on this
// processor, and writes the tuning file (Note [Tuning] in exec/common/tuning.h).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "driver/session.h"

namespace ndp::driver {

struct AutotuneOptions {
  Backend backend = Backend::Cuda;      // Cuda: the GPU's table; Cpu: the processor's
  int64_t elements = int64_t{1} << 24;  // the ints summed at each row length
  int runs = 9;                         // timed rounds of every form (the median counts), after a warm-up
  bool write = true;                    // false: measure and print only
  std::FILE* out = stdout;              // the table and the file's path
  std::FILE* progress = stderr;         // the progress bar
};

/// Measures, for rows of 2^0 ... 2^20 ints, the segmented sum `{sum(r) : r in rows}` flattened
/// (`at grid`) and as a map kernel (on cuda at every level), the forms taking turns, checks
/// that every form gives the same sums, and writes the form of least median time at each length
/// as own_row_lanes. On the GPU it then times NESL's quicksort of elements / 4 ints with each
/// candidate switch point of partition levels (512 ... 4096 elements an instance; Note
/// [Partition levels on the GPU] in codegen/partition_levels_ptx.h) and writes the fastest as
/// partition_switch_elements, and Batcher's sort with each tile of regular levels
/// (regular_tile_bytes). Returns the exit status: 0, 1 when a measurement failed, 2 when the
/// cuda backend has no GPU.
int autotune(const AutotuneOptions& opts);

/// The calls each timing of a form makes back to back, as a program's loop makes them.
inline constexpr int kAutotuneBatchCalls = 10;

namespace autotune_detail {  // for tests

/// The forms autotune times for backend b, in the order of its rounds' results.
int form_count(Backend b);
/// The NESL program autotune runs for backend b: `tune_rounds(rows, rounds, [] int, 0)` gives
/// (the sum of the sums, or -1 where forms disagree; each round's times in nanoseconds, form by
/// form).
std::string tuning_program(Backend b);
/// Parses tune_rounds' printed answer "(CHECK, [NS, NS, ...])".
bool parse_rounds(const std::string& v, int64_t& check, std::vector<int64_t>& ns);
/// The program of the recursion's switch point: `tune_sort(n)` gives (a checksum of NESL's
/// quicksort of n hashed ints, the seconds of the sort).
std::string recursion_program();
/// The program of the regular levels' tile: `tune_bitonic(n)` gives (a checksum of Batcher's
/// sort of n hashed ints, n a power of two, the seconds of the sort).
std::string regular_program();
/// Parses tune_sort's (and tune_bitonic's) printed answer "(CHECK, SECONDS)".
bool parse_sort(const std::string& v, int64_t& check, double& seconds);

}  // namespace autotune_detail

}  // namespace ndp::driver
