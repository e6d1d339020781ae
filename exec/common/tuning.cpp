// Tuning files and the choices they drive (Note [Tuning]).
#include "exec/common/tuning.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "exec/common/cache_dir.h"
#include "flatten/kernel_abi.h"

namespace ndp::exec {

Tuning Tuning::gpu_defaults() {
  Tuning t;
  // `ndp autotune` on an NVIDIA H100 80GB HBM3 (bench/results/session22/tuning_h100.txt).
  t.own_row_lanes = {1, 1, 1, 2, 4, 8, 16, 32, 32, 32, 256, 256, 32, 256, 256, 256, 0, 0, 0, 0, 0};
  return t;
}

Tuning Tuning::cpu_defaults() {
  Tuning t;
  t.elements = int64_t{1} << 22;
  // Measured on 2 cores (bench/results/session22/README.md): a row's own loop wins from 2^8 on.
  for (int k = 8; k < kRowLogs; ++k) t.own_row_lanes[static_cast<size_t>(k)] = 1;
  return t;
}

std::string Tuning::text(std::string_view device) const {
  std::string s = fmt::format("# ndp autotune: {}\n", device);
  s += "# own_row_lanes: by log2 of the rows' average length, 2^0 ... 2^20, the lanes a row gets as a map kernel; "
       "0: the flattened form\n";
  s += fmt::format("elements {}\nown_row_lanes", elements);
  for (int lanes : own_row_lanes) s += fmt::format(" {}", lanes);
  s += "\n# block_levels_elements: the most elements a recursion level may hold to finish in GPU blocks; 0: never\n";
  s += fmt::format("block_levels_elements {}\n", block_levels_elements);
  s += "# regular_tile_bytes: the shared memory of a block's tile of regular recursion levels\n";
  s += fmt::format("regular_tile_bytes {}\n", regular_tile_bytes);
  s += "# partition_switch_elements: the most elements of an instance of partition levels a GPU block takes\n";
  return s + fmt::format("partition_switch_elements {}\n", partition_switch_elements);
}

std::optional<Tuning> Tuning::parse(std::string_view text, std::string* error) {
  Tuning t = gpu_defaults();
  bool lanes_seen = false;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream words(line);
    std::string key;
    if (!(words >> key) || key[0] == '#') continue;  // blank (CRLF's `\r` too) or a comment
    auto bad = [&](std::string_view why) {
      if (error) *error = fmt::format("line {}: {}", number, why);
      return std::nullopt;
    };
    if (key == "elements") {
      if (!(words >> t.elements) || t.elements < 1 || t.elements > kMostElements)
        return bad(fmt::format("`elements` needs a count from 1 to {}", kMostElements));
    } else if (key == "block_levels_elements") {
      if (!(words >> t.block_levels_elements) || t.block_levels_elements < 0 || t.block_levels_elements > kMostElements)
        return bad(fmt::format("`block_levels_elements` needs a count from 0 to {}", kMostElements));
    } else if (key == "regular_tile_bytes") {
      if (!(words >> t.regular_tile_bytes) || t.regular_tile_bytes < 256 || t.regular_tile_bytes > kMostTileBytes)
        return bad(fmt::format("`regular_tile_bytes` needs a count of bytes from 256 to {}", kMostTileBytes));
    } else if (key == "partition_switch_elements") {
      if (!(words >> t.partition_switch_elements) || t.partition_switch_elements < kLeastPartitionSwitch ||
          t.partition_switch_elements > kMostPartitionSwitch)
        return bad(fmt::format("`partition_switch_elements` needs a count from {} to {}", kLeastPartitionSwitch,
                               kMostPartitionSwitch));
    } else if (key == "own_row_lanes") {
      for (int& lanes : t.own_row_lanes)
        if (!(words >> lanes) || lanes < 0 || lanes > 256 || (lanes & (lanes - 1)) != 0)
          return bad(fmt::format("`own_row_lanes` needs {} powers of two up to 256, or 0", kRowLogs));
      lanes_seen = true;
    } else {
      return bad(fmt::format("unknown key `{}`", key));
    }
    std::string extra;
    if (words >> extra) return bad(fmt::format("unexpected `{}`", extra));
  }
  if (!lanes_seen) {
    if (error) *error = "no `own_row_lanes` line";
    return std::nullopt;
  }
  return t;
}

namespace {

/// The table's entry for rows of `average` elements: by log2 of it, rounded.
int table_entry(const Tuning& t, int64_t average) {
  int k = 0;
  while (k + 1 < Tuning::kRowLogs && (int64_t{3} << k) <= 2 * average) ++k;
  return t.own_row_lanes[static_cast<size_t>(k)];
}

}  // namespace

int cpu_own_row_form(const Tuning& t, int64_t n, int64_t average, int threads) {
  return table_entry(t, average) > 0 && n >= 4 * int64_t{threads} ? 1 : 0;
}

std::string cpu_device_name(int threads) {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "cpu";
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      model = line.substr(line.find(':') + 1);
      model.erase(0, model.find_first_not_of(' '));
      break;
    }
  return fmt::format("{} ({} threads)", model, threads);
}

int own_row_lanes(const Tuning& t, int64_t n, int64_t average, int64_t resident) {
  int lanes = table_entry(t, average);
  if (lanes == 0) return 0;
  int most = 1;  // lanes past a row's length would idle
  while (most < 256 && most < average) most *= 2;
  lanes = std::min(lanes, most);
  // The threads the measurement ran: as many, where the GPU holds them, with fewer instances.
  // (elements <= 2^40 and lanes <= 256: no overflow.)
  const int64_t measured = std::max<int64_t>(1, t.elements / std::max<int64_t>(1, average)) * lanes;
  const int64_t wanted = std::min(measured, resident);
  while (lanes < most && n * lanes < wanted) lanes *= 2;
  return lanes;
}

namespace {

/// NDP_SPLIT_PARTS, where set to a count from 1 to kMostSplitBlocks.
std::optional<int64_t> pinned_split_parts() {
  const char* s = std::getenv("NDP_SPLIT_PARTS");
  if (s == nullptr || *s == '\0') return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  if (*end != '\0' || v < 1 || v > flatten::kMostSplitBlocks) {
    static bool told = false;
    if (!told) std::fprintf(stderr, "ndp: warning: NDP_SPLIT_PARTS=%s is not a count from 1 to %lld; ignored\n", s,
                            static_cast<long long>(flatten::kMostSplitBlocks));
    told = true;
    return std::nullopt;
  }
  return v;
}

}  // namespace

int64_t split_parts(int64_t n, int64_t average, int64_t resident_blocks) {
  if (n <= 0) return 1;
  int64_t parts = 1;
  if (std::optional<int64_t> pinned = pinned_split_parts()) {
    parts = *pinned;
  } else {
    // Measured on an H200 (bench/results/session28): 2^24 ints in 512 rows ran faster a block
    // a row (38.4 µs a call) than split (39.3-40.3); in 256 rows, 45.5 µs a block a row and
    // 39.3-41.0 split into 512 to 4096 blocks, 60 µs where the chunks were 1024 elements.
    // Rounding the parts up left a second wave of a few blocks (64 rows of 2^18 in 17 parts,
    // 1088 blocks on 1056 places, ran at 0.75 of the copy's bandwidth where 16 rows of 2^20 in
    // 66 parts, 1056 blocks, ran at 0.83).
    if (n > resident_blocks / 2) return 1;
    parts = std::min(resident_blocks / n, average / kLeastSplitShare);
  }
  return std::clamp<int64_t>(parts, 1, std::max<int64_t>(1, flatten::kMostSplitBlocks / n));
}

int64_t split_parts_within(int64_t parts, int64_t n, int64_t resident_blocks) {
  if (pinned_split_parts() || n <= 0) return parts;
  return std::clamp<int64_t>(resident_blocks / n, 1, parts);
}

std::string tuning_file(std::string_view device) {
  std::string dir = kernel_cache_dir();
  if (dir.empty()) return "";
  std::string name;
  for (char c : device) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return dir + "/tuning/" + (name.empty() ? "device" : name) + ".txt";
}

Tuning load_tuning(std::string_view device, const Tuning& defaults) {
  std::string path = tuning_file(device);
  std::ifstream in(path);
  if (path.empty() || !in) return defaults;
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  if (std::optional<Tuning> t = Tuning::parse(text.str(), &error)) return *t;
  std::fprintf(stderr, "ndp: warning: ignoring the tuning file %s (%s); run `ndp autotune` again\n", path.c_str(),
               error.c_str());
  return defaults;
}

std::optional<int> forced_map_lanes() {
  const char* s = std::getenv("NDP_MAP_LANES");
  if (s == nullptr || *s == '\0') return std::nullopt;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (*end != '\0' || v < 0 || v > 256 || (v & (v - 1)) != 0) {
    static bool told = false;
    if (!told) std::fprintf(stderr, "ndp: warning: NDP_MAP_LANES=%s is not 0 or a power of two up to 256; ignored\n", s);
    told = true;
    return std::nullopt;
  }
  return static_cast<int>(v);
}

bool block_rows_allowed() {
  const char* s = std::getenv("NDP_BLOCK_ROWS");
  if (s == nullptr || *s == '\0' || std::string_view(s) == "1") return true;
  if (std::string_view(s) == "0") return false;
  static bool told = false;
  if (!told) std::fprintf(stderr, "ndp: warning: NDP_BLOCK_ROWS=%s is not 0 or 1; ignored\n", s);
  told = true;
  return true;
}

}  // namespace ndp::exec
