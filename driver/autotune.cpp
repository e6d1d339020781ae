// `ndp autotune` (autotune.h): the segmented sum at every level and row length, on the GPU.
#include "driver/autotune.h"

#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "driver/session.h"
#include "exec/common/tuning.h"
#include "exec/cuda/gpu.h"

namespace ndp::driver {

namespace {

/// A form of the segmented sum: its name in the program, how the table prints it, its lanes (0:
/// flattened).
struct Form {
  const char* name;
  const char* level;
  int lanes;
};

constexpr Form kGpuForms[] = {{"grid", "flattened", 0},  {"thread", "thread", 1},   {"sub2", "subwarp(2)", 2},
                              {"sub4", "subwarp(4)", 4}, {"sub8", "subwarp(8)", 8}, {"sub16", "subwarp(16)", 16},
                              {"warp", "warp", 32},      {"block", "block", 256}};
// On the host a level is one task an instance whatever its lanes: flattened or a map kernel.
constexpr Form kCpuForms[] = {{"grid", "flattened", 0}, {"thread", "map kernel", 1}};

std::span<const Form> forms_of(Backend b) {
  if (b == Backend::Cpu) return kCpuForms;
  return kGpuForms;
}

}  // namespace

namespace autotune_detail {

int form_count(Backend b) { return static_cast<int>(forms_of(b).size()); }

/// The program autotune runs: each form; `tune_timed(j, rows)`, form j timed over kAutotuneBatchCalls
/// calls back to back, as a program's loop makes them (a call timed alone would count its
/// launch and the wait for its end, about 25 µs on a 40 µs segmented sum, and favour the forms
/// of fewer host steps); and round k, in which every form is timed once, in nanoseconds a call,
/// starting with form k mod the forms' count, so that over as many rounds as forms each form
/// runs in each place of a round. Measured: the calls early in a round (after the last round's
/// work) ran up to 30% slower than the same calls later, and a fixed order would make the first
/// forms lose. An untimed call of the flattened form opens each round. The times come back in
/// the order of the backend's forms, with the sum of the sums, or -1 where the forms' sums
/// differ.
std::string tuning_program(Backend b) {
  const std::span<const Form> forms = forms_of(b);
  const size_t count = forms.size();
  std::string p, timed = "function tune_timed(j, rows) =\n", lets, sums, places;
  for (size_t i = 0; i < count; ++i) {
    const Form& f = forms[i];
    std::string level = f.lanes == 0 ? "grid" : f.lanes == 1 ? "thread" : f.lanes == 32 ? "warp" : f.lanes == 256 ? "block"
                                                                                         : fmt::format("subwarp({})", f.lanes);
    p += fmt::format("function tune_sum_{0}(rows) = {{sum(r) : r in rows}} at {1} $\n", f.name, level);
    // A loop a form: one loop passed the form as a function value would choose it at every call.
    p += fmt::format("function tune_calls_{0}(rows, k, last) = if k == 0 then last else tune_calls_{0}(rows, k - 1, tune_sum_{0}(rows)) $\n",
                     f.name);
    const std::string call = fmt::format("time(tune_calls_{}(rows, {}, [] int))", f.name, kAutotuneBatchCalls);
    timed += i + 1 < count ? fmt::format("  {}if j == {} then {}\n", i ? "else " : "", i, call)
                           : fmt::format("  else {} $\n", call);
    lets += fmt::format("      (r{0}, t{0}) = tune_timed(rem(k + {0}, {1}), rows); s{0} = sum(r{0});\n", i, count);
    sums += fmt::format("{}s{}", i ? ", " : "", i);
    places += fmt::format("{}round(t{} * {:.1f})", i ? ", " : "", i, 1e9 / kAutotuneBatchCalls);
  }
  p += timed;
  p += "function tune_round(rows, k) =\n  let settle = sum(tune_sum_grid(rows));\n" + lets +
       fmt::format("      by_place = [{}];\n", places) +
       "      agreed = if all({s == settle : s in [" + sums + "]}) then settle else -1\n" +
       fmt::format("  in (agreed, {{by_place[rem(j - rem(k, {0}) + {0}, {0})] : j in [0:{0}]}}) $\n", count);
  p += "function tune_rounds(rows, k, times, check) =\n"
       "  if k == 0 then (check, times)\n"
       "  else let (c, ts) = tune_round(rows, k) in tune_rounds(rows, k - 1, times ++ ts, if check < 0 then check else c) $\n";
  return p;
}

/// The program of the recursion's switch point (Note [Levels in a block] in
/// runtime/gpu/block_levels.h): NESL's quicksort of n hashed ints, timed around the sort alone;
/// `tune_sort(n)` gives (a position-weighted checksum of the sorted keys, the seconds).
std::string recursion_program() {
  return "function tune_qsort(a) =\n"
         "  if #a < 2 then a\n"
         "  else let p = a[#a / 2]; l = {e in a | e < p}; m = {e in a | e == p}; g = {e in a | e > p};\n"
         "           r = {tune_qsort(v) : v in [l, g]}\n"
         "       in r[0] ++ m ++ r[1] $\n"
         "function tune_sort(n) =\n"
         "  let keys = {rem((i * 6364136223846793005 + 1442695040888963407) xor rshift(i * 2685821657736338717, 29), "
         "1073741824) : i in [0:n]};\n"
         "      (s, secs) = time(tune_qsort(keys))\n"
         "  in (sum({x * (i + 1) : x in s; i in [0:#s]}), secs) $\n";
}

std::string regular_program() {
  return "function tune_merge(a) =\n"
         "  if #a < 2 then a\n"
         "  else let h = bottop(a); lo = {min(x, y) : x in h[0]; y in h[1]}; hi = {max(x, y) : x in h[0]; y in h[1]}\n"
         "       in flatten({tune_merge(c) : c in [lo, hi]}) $\n"
         "function tune_bitonic_sort(a) =\n"
         "  if #a < 2 then a\n"
         "  else let s = {tune_bitonic_sort(h) : h in bottop(a)} in tune_merge(s[0] ++ reverse(s[1])) $\n"
         "function tune_bitonic(n) =\n"
         "  let keys = {rem((i * 6364136223846793005 + 1442695040888963407) xor rshift(i * 2685821657736338717, 29), "
         "1073741824) : i in [0:n]};\n"
         "      (s, secs) = time(tune_bitonic_sort(keys))\n"
         "  in (sum({x * (i + 1) : x in s; i in [0:#s]}), secs) $\n";
}

/// The answers' common start "(CHECK, ": what follows it, or null where v does not start so.
const char* after_check(const std::string& v, int64_t& check) {
  const char* p = v.c_str();
  char* end = nullptr;
  if (*p++ != '(') return nullptr;
  check = std::strtoll(p, &end, 10);
  if (end == p || std::strncmp(end, ", ", 2) != 0) return nullptr;
  return end + 2;
}

/// Parses "(CHECK, SECONDS)".
bool parse_sort(const std::string& v, int64_t& check, double& seconds) {
  const char* p = after_check(v, check);
  if (p == nullptr) return false;
  char* end = nullptr;
  seconds = std::strtod(p, &end);
  return end != p && std::strcmp(end, ")") == 0;
}

/// Parses "(CHECK, [NS, NS, ...])".
bool parse_rounds(const std::string& v, int64_t& check, std::vector<int64_t>& ns) {
  const char* p = after_check(v, check);
  if (p == nullptr || *p++ != '[') return false;
  char* end = nullptr;
  while (*p != ']') {
    int64_t x = std::strtoll(p, &end, 10);
    if (end == p) return false;
    ns.push_back(x);
    p = end;
    if (p[0] == ',' && p[1] == ' ') p += 2;
    else if (*p != ']') return false;
  }
  return std::strcmp(p, "])") == 0;
}

}  // namespace autotune_detail

namespace {

using autotune_detail::parse_rounds;
using autotune_detail::tuning_program;

/// Whether form `f` is a candidate on rows of `length`: lanes past twice a row's length idle.
bool worth_measuring(const Form& f, int64_t length) { return f.lanes <= 1 || f.lanes <= 2 * length; }

class Progress {
 public:
  Progress(std::FILE* to, int total) : to_(to), total_(total), bar_(to != nullptr && isatty(fileno(to))) {}
  void step(const std::string& what) {
    ++done_;
    if (!bar_) return;
    const int width = 30, filled = width * done_ / total_;
    std::fprintf(to_, "\rautotune [%s%s] %3d%%  %-32s", std::string(static_cast<size_t>(filled), '#').c_str(),
                 std::string(static_cast<size_t>(width - filled), '.').c_str(), 100 * done_ / total_, what.c_str());
    std::fflush(to_);
  }
  /// Takes the bar off its line, so that other text can go there.
  void clear() {
    if (bar_) std::fprintf(to_, "\r%-80s\r", "");
  }
  void line(const std::string& text) {
    clear();
    if (to_) std::fprintf(to_, "%s\n", text.c_str());
  }

 private:
  std::FILE* to_;
  int total_, done_ = 0;
  bool bar_;
};

bool write_atomically(const std::string& path, const std::string& text, std::string& why) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out.flush()) {
      why = std::strerror(errno);
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    why = ec.message();
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
}

/// A switch point of the GPU's recursions that autotune measures by timing a NESL sort with
/// each candidate: the program, the sort's expression, the candidates and what they set.
struct SwitchPoint {
  const char* what;            // the progress bar's step
  std::string program;         // defines the sort's function
  std::string expr;            // gives "(CHECK, SECONDS)"
  std::string row;             // the printed row's start, before the candidates' times
  std::vector<int64_t> candidates;
  int64_t exec::Tuning::*field;
  std::function<std::string(int64_t)> name;  // a candidate as printed
};

/// Runs the sort with each candidate in turn, the candidates taking turns in each round as the
/// forms do; the least median time wins. False (reported) where a sort failed or the
/// candidates' answers differ.
bool tune_switch(const AutotuneOptions& opts, Session& session, exec::cuda::Gpu& gpu, exec::Tuning& tuning, Progress& progress,
                 const SwitchPoint& sw) {
  using autotune_detail::parse_sort;
  const size_t count = sw.candidates.size();
  progress.step(sw.what);
  if (!session.eval_text("<autotune>", sw.program, false, false)) return false;
  std::vector<std::vector<double>> seconds(count);
  std::optional<int64_t> check;
  exec::Tuning trial = tuning;
  for (int round = 0; round <= opts.runs; ++round) {
    for (size_t place = 0; place < count; ++place) {
      const size_t c = (place + static_cast<size_t>(round)) % count;
      trial.*sw.field = sw.candidates[c];
      gpu.set_tuning(trial);
      ExprOutcome r = session.eval_expr(sw.expr);
      int64_t sum = 0;
      double secs = 0;
      if (r.status != ExprOutcome::Status::Ok || !parse_sort(r.value, sum, secs)) {
        progress.line(fmt::format("ndp autotune: the sort failed: {}", r.message.empty() ? r.value : r.message));
        return false;
      }
      if (check && *check != sum) {
        progress.line("ndp autotune: the sort's answers differ with the switch point (a bug in ndp)");
        return false;
      }
      check = sum;
      if (round > 0) seconds[c].push_back(secs);  // round 0 warms up
    }
  }
  gpu.set_tuning(tuning);
  std::string row = sw.row;
  double best_ms = 0;
  for (size_t c = 0; c < count; ++c) {
    std::vector<double>& t = seconds[c];
    std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
    const double ms = 1e3 * t[t.size() / 2];
    row += fmt::format(" {}: {:.2f}", sw.name(sw.candidates[c]), ms);
    if (c == 0 || ms < best_ms) best_ms = ms, tuning.*sw.field = sw.candidates[c];
  }
  progress.clear();
  std::fprintf(opts.out, "%s; chosen %s\n", row.c_str(), sw.name(tuning.*sw.field).c_str());
  std::fflush(opts.out);
  return true;
}

/// The GPU's recursion switch points: the instances of partition levels that the blocks take
/// (Tuning::partition_switch_elements), by quicksort of opts.elements / 4 ints; the tile of
/// regular levels (Tuning::regular_tile_bytes), by Batcher's sort of the largest power of two up
/// to that. (Tuning::block_levels_elements, the hand-off of other laid-out recursions, is no
/// longer measured: quicksort, which measured it, runs as partition levels now.)
bool tune_recursion(const AutotuneOptions& opts, Session& session, exec::cuda::Gpu& gpu, exec::Tuning& tuning, Progress& progress) {
  const int64_t n = std::max<int64_t>(opts.elements / 4, 1024);
  const SwitchPoint blocks{"partition levels in blocks", autotune_detail::recursion_program(), fmt::format("tune_sort({})", n),
                           fmt::format("quicksort of {} ints, ms by the most elements of an instance that a block takes:", n),
                           {512, 1024, 2048, 4096},
                           &exec::Tuning::partition_switch_elements,
                           [](int64_t c) { return fmt::format("{}", c); }};
  const int64_t pow2 = int64_t{1} << (63 - std::countl_zero(static_cast<uint64_t>(n)));
  const SwitchPoint tiles{"regular levels' tile", autotune_detail::regular_program(), fmt::format("tune_bitonic({})", pow2),
                          fmt::format("Batcher's sort of {} ints, ms by the bytes of a block's tile of regular levels:", pow2),
                          {8192, 16384, 32768, 49152},
                          &exec::Tuning::regular_tile_bytes,
                          [](int64_t c) { return fmt::format("{}K", c / 1024); }};
  return tune_switch(opts, session, gpu, tuning, progress, blocks) && tune_switch(opts, session, gpu, tuning, progress, tiles);
}

}  // namespace

int autotune(const AutotuneOptions& opts) {
  const bool cpu = opts.backend == Backend::Cpu;
  std::string device;
  exec::cuda::Gpu* gpu = nullptr;
  if (cpu) {
    device = exec::cpu_device_name(omp_get_max_threads());
  } else {
    std::string why;
    gpu = opts.backend == Backend::Cuda ? exec::cuda::Gpu::get(&why) : nullptr;
    if (gpu == nullptr) {
      std::fprintf(stderr, "ndp autotune: no GPU to tune: %s\n", why.empty() ? "the interp backend has no choices" : why.c_str());
      return 2;
    }
    device = gpu->device().properties().name;
  }
  const std::span<const Form> forms = forms_of(opts.backend);
  // The program's answers go nowhere; declared before the session, closed after it.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> quiet(std::fopen("/dev/null", "w"), &std::fclose);
  SessionOptions so;
  so.backend = opts.backend;
  so.out = quiet ? quiet.get() : stdout;
  Session session(so);
  if (!session.eval_text("<autotune>", tuning_program(opts.backend), false, false)) return 1;

  Progress progress(opts.progress, exec::Tuning::kRowLogs + (cpu ? 0 : 2));
  exec::Tuning tuning = cpu ? exec::Tuning::cpu_defaults() : exec::Tuning::gpu_defaults();
  tuning.elements = opts.elements;
  const size_t kCount = forms.size();
  std::fprintf(opts.out,
               "ndp autotune on %s: {sum(r) : r in rows} over %ld ints, every form in turn, median of %d rounds, GB/s "
               "at 8 bytes an int%s\n",
               device.c_str(), static_cast<long>(opts.elements), opts.runs,
               cpu ? "" : " (in parentheses: lanes past twice the rows' length, not a candidate)");
  std::string header = fmt::format("{:>8}", "row");
  for (const Form& f : forms) header += fmt::format(" {:>11}", f.level);
  std::fprintf(opts.out, "%s  chosen\n", header.c_str());
  for (int k = 0; k < exec::Tuning::kRowLogs; ++k) {
    const int64_t length = int64_t{1} << k, rows = std::max<int64_t>(1, opts.elements / length);
    progress.step(fmt::format("rows of 2^{}", k));
    // Made on the device by the call: a global would live on the host as a value, and each use
    // would upload it and rebuild its offsets, which the flattened form then pays for.
    ExprOutcome r = session.eval_expr(
        fmt::format("tune_rounds(partition({{rem(i, 1000) : i in [0:{0}]}}, dist({1}, {2})), {3}, [] int, 0)",
                    rows * length, length, rows, opts.runs + 1));
    int64_t check = 0;
    std::vector<int64_t> ns;
    if (r.status != ExprOutcome::Status::Ok || !parse_rounds(r.value, check, ns) ||
        ns.size() != kCount * static_cast<size_t>(opts.runs + 1)) {
      progress.line(fmt::format("ndp autotune: rows of 2^{} failed: {}", k, r.message.empty() ? r.value : r.message));
      return 1;
    }
    if (check < 0) {
      progress.line(fmt::format("ndp autotune: on rows of 2^{} the forms' sums differ (a bug in ndp)", k));
      return 1;
    }
    std::string row = fmt::format("{:>8}", fmt::format("2^{}", k));
    int64_t best_ns = 0;
    int best = 0;
    for (size_t f = 0; f < kCount; ++f) {
      std::vector<int64_t> times;
      for (size_t round = 1; round <= static_cast<size_t>(opts.runs); ++round) times.push_back(ns[round * kCount + f]);
      std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
      const int64_t median = std::max<int64_t>(times[times.size() / 2], 1);
      const double gbs = 8.0 * static_cast<double>(rows * length) / static_cast<double>(median);
      const bool candidate = worth_measuring(forms[f], length);
      row += fmt::format(" {:>11}", candidate ? fmt::format("{:.0f}", gbs) : fmt::format("({:.0f})", gbs));
      if (candidate && (best_ns == 0 || median < best_ns)) best_ns = median, best = static_cast<int>(f);
    }
    tuning.own_row_lanes[static_cast<size_t>(k)] = forms[best].lanes;
    progress.clear();
    std::fprintf(opts.out, "%s  %s\n", row.c_str(), forms[best].level);
    std::fflush(opts.out);
  }
  if (gpu != nullptr && !tune_recursion(opts, session, *gpu, tuning, progress)) return 1;
  if (!opts.write) return 0;
  const std::string path = exec::tuning_file(device);
  if (path.empty()) {
    std::fprintf(stderr, "ndp autotune: no cache folder (NDP_CACHE_DIR=off or no HOME): the tuning was not written\n");
    return 1;
  }
  if (std::string why; !write_atomically(path, tuning.text(device), why)) {
    std::fprintf(stderr, "ndp autotune: cannot write %s: %s\n", path.c_str(), why.c_str());
    return 1;
  }
  std::fprintf(opts.out, "wrote %s\n", path.c_str());
  return 0;
}

}  // namespace ndp::driver
