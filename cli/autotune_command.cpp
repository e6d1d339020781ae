// `ndp autotune`: options, then driver::autotune.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "driver/autotune.h"

namespace ndp::cli {

namespace {

/// printf's format: %d is driver::kAutotuneBatchCalls.
const char* kAutotuneHelp =
    "usage: ndp autotune [--backend=cuda|cpu] [--elements=N] [--runs=N] [--no-write]\n"
    "\n"
    "Measures where the run-time choices of the cuda backend switch on this GPU (or, with\n"
    "--backend=cpu, those of the cpu backend on this processor and its threads), and writes them\n"
    "to the tuning file of the device, tuning/<device name>.txt in the kernel cache folder\n"
    "(NDP_CACHE_DIR, else $XDG_CACHE_HOME/ndp/kernels, else ~/.cache/ndp/kernels). Programs read\n"
    "it when they start on that device; without one they use what autotune measured on an H100\n"
    "(cuda) or on 2 cores (cpu). The backend is cuda where a GPU is present, else cpu.\n"
    "\n"
    "What it tunes: an apply-to-each that folds each instance's own row ({sum(r) : r in rows},\n"
    "a sparse matrix-vector product) runs either flattened, as the segmented primitives, or as a\n"
    "map kernel with 1, 2, 4 ... 32 or 256 threads a row (on the cpu backend, a task a row);\n"
    "at 256, rows too few to fill the GPU take several blocks each (NDP_SPLIT_PARTS pins them).\n"
    "For rows of 2^0 ... 2^20 ints it times the segmented sum in every form, %d calls back to\n"
    "back as a loop makes them, the forms taking turns; checks that they agree, and keeps the\n"
    "fastest (by its median) for each length.\n"
    "On the GPU it also tunes where a recursion that partitions its instances (quicksort)\n"
    "hands them to blocks, a block running every level left of an instance: it times NESL's\n"
    "quicksort of a quarter as many ints with the blocks taking instances of at most 512, 1024,\n"
    "2048 or 4096 elements, and keeps the fastest; and the shared memory of a block's tile of a\n"
    "regular recursion (Batcher's merge and sort), whose levels one kernel runs: it times\n"
    "Batcher's sort with tiles of 8, 16, 32 and 48 KiB.\n"
    "It takes about a minute; a progress bar shows on a terminal.\n"
    "\n"
    "options:\n"
    "  --backend=B    cuda (this GPU) or cpu (this processor)\n"
    "  --elements=N   ints summed at each row length (default 16777216)\n"
    "  --runs=N       timed rounds, each form once a round; the median counts (default 9; a\n"
    "                 warm-up round more)\n"
    "  --no-write     measure and print the table only\n"
    "\n"
    "NDP_MAP_LANES=N overrides the tuning for one run: N lanes a row (0: flattened);\n"
    "NDP_PARTITION_SWITCH=N the partitioning recursion's switch point, NDP_PARTITION_LEVELS=0\n"
    "runs such recursions level by level; NDP_BLOCK_LEVELS_ELEMENTS=N the switch point of other\n"
    "recursions whose results lay out (not measured: 2^18 elements a level by default), and\n"
    "NDP_BLOCK_LEVELS=0 keeps them out of the blocks.\n";

enum class Match { No, Yes, Bad };

/// Whether `a` is `NAME=N` with lo <= N <= hi (then `out` is N); Bad (and said) for another N.
Match number_option(const std::string& a, const char* name, int64_t lo, int64_t hi, int64_t& out) {
  const std::string prefix = std::string(name) + "=";
  if (a.rfind(prefix, 0) != 0) return Match::No;
  const std::string v = a.substr(prefix.size());
  char* end = nullptr;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < lo || n > hi) {
    std::fprintf(stderr, "ndp autotune: %s needs a whole number from %lld to %lld, not '%s'\n", name,
                 static_cast<long long>(lo), static_cast<long long>(hi), v.c_str());
    return Match::Bad;
  }
  out = n;
  return Match::Yes;
}

}  // namespace

int autotune_command(const std::vector<std::string>& args) {
  driver::AutotuneOptions opts;
  bool backend_given = false;
  for (const std::string& a : args) {
    int64_t n = 0;
    Match elements = Match::No, runs = Match::No;
    if (a == "--help" || a == "-h") {
      std::printf(kAutotuneHelp, driver::kAutotuneBatchCalls);
      return 0;
    } else if (a == "--no-write") {
      opts.write = false;
    } else if (a.rfind("--backend=", 0) == 0) {
      std::optional<driver::Backend> b = driver::parse_backend(a.substr(10));
      if (!b || *b == driver::Backend::Interp) {
        std::fprintf(stderr, "ndp autotune: --backend is cuda or cpu, not '%s'\n", a.substr(10).c_str());
        return 2;
      }
      opts.backend = *b;
      backend_given = true;
    } else if ((elements = number_option(a, "--elements", 1 << 20, int64_t{1} << 30, n)) != Match::No) {
      if (elements == Match::Bad) return 2;
      opts.elements = n;
    } else if ((runs = number_option(a, "--runs", 1, 50, n)) != Match::No) {
      if (runs == Match::Bad) return 2;
      opts.runs = static_cast<int>(n);
    } else {
      std::fprintf(stderr, "ndp autotune: unknown option '%s'\n", a.c_str());
      std::fprintf(stderr, kAutotuneHelp, driver::kAutotuneBatchCalls);
      return 2;
    }
  }
  if (!backend_given && !driver::backend_unavailable_reason(driver::Backend::Cuda).empty()) {
    std::fprintf(stderr, "ndp autotune: no GPU here: tuning the cpu backend\n");
    opts.backend = driver::Backend::Cpu;
  }
  return driver::autotune(opts);
}

}  // namespace ndp::cli
