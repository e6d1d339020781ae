// The ndp executable: argument parsing and dispatch to the subcommands.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "lang/diagnostics.h"

namespace {

const char* kUsage =
    "usage: ndp [OPTIONS] [FILE...]          start the REPL (after loading FILEs)\n"
    "       ndp run FILE [OPTIONS]           run a program\n"
    "       ndp check FILE...                parse and type-check without running\n"
    "       ndp test PATH... [OPTIONS]       run %test blocks, REPL transcripts and error tests\n"
    "       ndp compile FILE -o NAME [...]   compile ahead of time for C++ programs (ndp compile --help)\n"
    "       ndp autotune [...]               measure this GPU's switch points (ndp autotune --help)\n"
    "       ndp --help | --version\n"
    "\n"
    "options:\n"
    "  --backend=interp|cpu|cuda   where programs run (default: cuda where a GPU is present, else cpu;\n"
    "                              `ndp test` runs every available backend)\n"
    "  --dump=core|flat|llvm|ptx   print a stage: typed Core IR, Flat IR, fused kernels as host LLVM IR or sm_90 PTX (run)\n"
    "  -v, --verbose               (test) list every case\n"
    "\n"
    "Without a terminal on stdin, ndp reads top-level forms from stdin and prints only the\n"
    "answers. In the REPL, type `help $` or `:help` for commands.\n";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "ndp: %s\n%s", msg.c_str(), kUsage);
  return 2;
}

/// Runs the subcommand `positional` names (the REPL without one); its exit status.
int run_command(const ndp::cli::CommonOptions& opts, const std::vector<std::string>& positional, bool verbose);

}  // namespace

int main(int argc, char** argv) {
  using namespace ndp;
  // OpenMP threads that spin while waiting steal the core the main thread needs on a loaded
  // machine (measured: quicksort of 200k ints 8.8 s spinning, 0.33 s passive). The user's own
  // setting wins.
  setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "compile") {  // options of its own
    try {
      return cli::compile_command({args.begin() + 1, args.end()});
    } catch (const lang::InternalError& e) {
      std::fprintf(stderr, "ndp: %s\n(this is a bug in ndp; please report it)\n", e.what());
      return 3;
    }
  }
  if (!args.empty() && args[0] == "autotune") {
    try {
      return cli::autotune_command({args.begin() + 1, args.end()});
    } catch (const lang::InternalError& e) {
      std::fprintf(stderr, "ndp: %s\n(this is a bug in ndp; please report it)\n", e.what());
      return 3;
    }
  }
  cli::CommonOptions opts;
  std::vector<std::string> positional;
  bool verbose = false;
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--version") {
      std::printf("ndp %s (NESL 3.1 compatible; backends: interp, cpu, cuda)\n", NDP_VERSION);
      return 0;
    }
    if (a.rfind("--backend=", 0) == 0) {
      auto b = driver::parse_backend(a.substr(10));
      if (!b) return usage_error("unknown backend '" + a.substr(10) + "' (expected interp, cpu or cuda)");
      opts.backend = *b;
      opts.backend_given = true;
    } else if (a.rfind("--dump=", 0) == 0) {
      opts.dump = a.substr(7);
      if (!driver::parse_stage(opts.dump))
        return usage_error("unknown --dump kind '" + opts.dump + "' (expected core, flat, llvm or ptx)");
    } else if (a == "-v" || a == "--verbose") {
      verbose = true;
    } else if (a.size() > 1 && a[0] == '-') {
      return usage_error("unknown option '" + a + "'");
    } else {
      positional.push_back(a);
    }
  }
  // The default backend (architecture.md, Backends): the GPU where there is one, else the
  // cpu backend. Only the commands that run code look for a GPU (opening one takes a few hundred
  // milliseconds); `ndp test` without --backend runs every available backend instead.
  bool runs_code = positional.empty() || (positional[0] != "check" && positional[0] != "test");
  if (!opts.backend_given && runs_code)
    opts.backend = driver::backend_unavailable_reason(driver::Backend::Cuda).empty() ? driver::Backend::Cuda : driver::Backend::Cpu;
  if (opts.backend_given && opts.backend != driver::Backend::Interp) {
    std::string why = driver::backend_unavailable_reason(opts.backend);
    if (!why.empty()) {
      std::fprintf(stderr, "ndp: backend %s unavailable: %s\n", driver::backend_name(opts.backend), why.c_str());
      return 2;
    }
  }
  int status = run_command(opts, positional, verbose);
  // Answers go to standard output through stdio's buffer: a full disk or a closed pipe shows
  // only when it is flushed, and must not end in exit status 0 (`ndp run p.ndp > /dev/full`).
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "ndp: cannot write the output: %s\n", std::strerror(errno));
    return status == 0 ? 1 : status;
  }
  return status;
}

namespace {

int run_command(const ndp::cli::CommonOptions& opts, const std::vector<std::string>& positional, bool verbose) {
  using namespace ndp;
  try {
    if (!positional.empty() && positional[0] == "run") {
      if (positional.size() != 2) return usage_error("`ndp run` takes one FILE");
      return cli::run_file(opts, positional[1]);
    }
    if (!positional.empty() && positional[0] == "check") {
      if (positional.size() < 2) return usage_error("`ndp check` needs at least one FILE");
      return cli::check_files({positional.begin() + 1, positional.end()});
    }
    if (!positional.empty() && positional[0] == "test") {
      if (positional.size() < 2) return usage_error("`ndp test` needs at least one FILE or folder");
      return cli::run_tests(opts, {positional.begin() + 1, positional.end()}, verbose);
    }
    if (!positional.empty() && (positional[0] == "bench" || positional[0] == "dev"))
      return usage_error("`ndp " + positional[0] + "` is not available yet in this build");
    return cli::run_repl(opts, positional);
  } catch (const lang::InternalError& e) {
    std::fprintf(stderr, "ndp: %s\n(this is a bug in ndp; please report it)\n", e.what());
    return 3;
  }
}

}  // namespace
