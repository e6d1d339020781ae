// `ndp autotune`: options, then driver::autotune.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "driver/autotune.h"

namespace ndp::cli {

namespace {

const char* kAutotuneHelp =
    "usage: ndp autotune [--elements=N] [--runs=N] [--no-write]\n"
    "\n"
    "Measures where the cuda backend's run-time choices switch on this GPU, and writes them to\n"
    "the tuning file of the device, tuning/<device name>.txt in the kernel cache folder\n"
    "(NDP_CACHE_DIR, else $XDG_CACHE_HOME/ndp/kernels, else ~/.cache/ndp/kernels). Programs read\n"
    "it when they start on that device; without one they use what autotune measured on an H100.\n"
    "\n"
    "What it tunes: an apply-to-each that folds each instance's own row ({sum(r) : r in rows},\n"
    "a sparse matrix-vector product) runs either flattened, as the segmented primitives, or as a\n"
    "map kernel with 1, 2, 4 ... 32 or 256 threads a row. For rows of 2^0 ... 2^20 ints it times\n"
    "the segmented sum in every form, the forms taking turns, checks that they agree, and keeps\n"
    "the fastest (by its median) for each length. It takes about a minute; a progress bar shows\n"
    "on a terminal.\n"
    "\n"
    "options:\n"
    "  --elements=N   ints summed at each row length (default 16777216)\n"
    "  --runs=N       timed rounds, each form once a round; the median counts (default 9; a\n"
    "                 warm-up round more)\n"
    "  --no-write     measure and print the table only\n"
    "\n"
    "NDP_MAP_LANES=N overrides the tuning for one run: N lanes a row (0: flattened).\n";

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
  for (const std::string& a : args) {
    int64_t n = 0;
    Match elements = Match::No, runs = Match::No;
    if (a == "--help" || a == "-h") {
      std::fputs(kAutotuneHelp, stdout);
      return 0;
    } else if (a == "--no-write") {
      opts.write = false;
    } else if ((elements = number_option(a, "--elements", 1 << 20, int64_t{1} << 30, n)) != Match::No) {
      if (elements == Match::Bad) return 2;
      opts.elements = n;
    } else if ((runs = number_option(a, "--runs", 1, 50, n)) != Match::No) {
      if (runs == Match::Bad) return 2;
      opts.runs = static_cast<int>(n);
    } else {
      std::fprintf(stderr, "ndp autotune: unknown option '%s'\n%s", a.c_str(), kAutotuneHelp);
      return 2;
    }
  }
  return driver::autotune(opts);
}

}  // namespace ndp::cli
