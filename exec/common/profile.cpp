// The NDP_PROFILE table (profile.h).
#include "exec/common/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "flatten/flat_ir.h"
#include "lang/core.h"
#include "runtime/cuda/trace.h"

namespace ndp::exec {

namespace {

struct Entry {
  std::string where;  // "function: dst = op"
  int64_t calls = 0;
  int64_t instances = 0;
  double seconds = 0;
  uint64_t waits = 0, launches = 0, wait_ns = 0, call_ns = 0, allocs = 0;
};

struct Table {
  std::mutex mu;
  // The statements of the program running now, by address (cheap to find), and those of the
  // programs before it, by description: a later program may reuse a freed statement's address.
  std::map<const flatten::Stmt*, Entry> current;
  std::map<std::string, Entry> earlier;
  Entry compiling{"(compiling kernels: the host JIT, PTX, the driver's JIT, cached modules)"};

  ~Table() { print(); }

  void archive() {
    for (auto& [s, e] : current) {
      Entry& a = earlier[e.where];
      a.where = e.where;
      a.calls += e.calls;
      a.instances += e.instances;
      a.seconds += e.seconds;
      a.waits += e.waits;
      a.launches += e.launches;
      a.wait_ns += e.wait_ns;
      a.call_ns += e.call_ns;
      a.allocs += e.allocs;
    }
    current.clear();
  }

  void print() {
    std::lock_guard<std::mutex> lock(mu);
    archive();
    std::vector<const Entry*> rows;
    double total = 0;
    bool gpu = false;  // the cuda backend's statements count waits and launches
    for (const auto& [s, e] : earlier) {
      rows.push_back(&e);
      total += e.seconds;
      gpu = gpu || e.launches > 0 || e.waits > 0;
    }
    if (compiling.calls > 0) {
      rows.push_back(&compiling);
      total += compiling.seconds;
    }
    std::sort(rows.begin(), rows.end(), [](const Entry* a, const Entry* b) { return a->seconds > b->seconds; });
    std::fprintf(stderr, "NDP_PROFILE: %.4f s in data statements, %.4f s of it compiling kernels%s\n%10s %6s %8s %10s %12s%s  %s\n",
                 total, compiling.seconds, stmt_profile_host_only() ? " (host time: kernels not waited for)" : "",
                 "seconds", "%", "calls", "us/call", "instances", gpu ? "  waits/call launches/call wait us/call driver us/call allocs/call" : "", "statement");
    // The 60 most expensive statements, down to a hundred-thousandth of the total (a small
    // timed part of a program whose set-up dominates still shows).
    for (size_t r = 0; r < rows.size() && r < 60; ++r) {
      const Entry* e = rows[r];
      if (e->seconds < total * 1e-5) break;
      const double calls = static_cast<double>(e->calls);
      const std::string stream =
          gpu ? fmt::format("  {:10.1f} {:13.1f} {:12.1f} {:15.1f} {:11.2f}", static_cast<double>(e->waits) / calls,
                            static_cast<double>(e->launches) / calls, 1e-3 * static_cast<double>(e->wait_ns) / calls,
                            1e-3 * static_cast<double>(e->call_ns) / calls, static_cast<double>(e->allocs) / calls)
              : std::string();
      std::fprintf(stderr, "%10.4f %6.1f %8lld %10.1f %12lld%s  %s\n", e->seconds, 100 * e->seconds / total,
                   static_cast<long long>(e->calls), 1e6 * e->seconds / calls, static_cast<long long>(e->instances),
                   stream.c_str(), e->where.c_str());
    }
  }
};

Table& table() {
  static Table t;  // printed when the process exits
  return t;
}

std::string describe(const flatten::Function& fn, const flatten::Stmt& s) {
  auto var = [&](flatten::VarId v) {
    const std::string& h = v < fn.vars.size() ? fn.vars[v].hint : std::string();
    return fmt::format("{}_{}", h.empty() ? "v" : h, v);
  };
  std::string what = flatten::op_name(s.op);
  if (s.op == flatten::Op::Prim || s.op == flatten::Op::ReduceKernel || s.op == flatten::Op::ScanKernel)
    what += std::string(" ") + lang::core::prim_info(s.prim).name;
  std::string args;
  for (flatten::VarId u : s.uses) args += (args.empty() ? "" : ", ") + var(u);
  return fmt::format("{}: {} = {}({})", fn.name, var(s.dst), what, args);
}

}  // namespace

void stmt_profile_new_program() {
  if (!stmt_profile_enabled()) return;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.archive();
}

bool stmt_profile_enabled() {
  static const bool on = [] {
    const char* s = std::getenv("NDP_PROFILE");
    return s != nullptr && *s != '\0' && std::string(s) != "0";
  }();
  return on;
}

bool stmt_profile_host_only() {
  static const bool host = [] {
    const char* s = std::getenv("NDP_PROFILE");
    return s != nullptr && (std::string(s) == "host" || std::string(s) == "trace");
  }();
  return host;
}

bool stmt_profile_trace() { return runtime::cuda::tracing(); }  // (one reading of NDP_PROFILE=trace)

void stmt_profile_trace_stmt(const flatten::Function& fn, const flatten::Stmt& s, int64_t instances) {
  fmt::print(stderr, "{:10.1f} ndp trace: {} [{} instances]\n", runtime::cuda::trace_microseconds(), describe(fn, s), instances);
}

namespace {
thread_local double compile_seconds = 0;
}  // namespace

void stmt_profile_add_compile(double seconds) {
  compile_seconds += seconds;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  ++t.compiling.calls;
  t.compiling.seconds += seconds;
}

double stmt_profile_compile_seconds() { return compile_seconds; }

void stmt_profile_add(const flatten::Function& fn, const flatten::Stmt& s, int64_t instances, double seconds,
                      StreamCounts stream) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  Entry& e = t.current[&s];
  if (e.calls == 0) e.where = describe(fn, s);
  ++e.calls;
  e.instances += instances;
  e.seconds += seconds;
  e.waits += stream.waits;
  e.launches += stream.launches;
  e.wait_ns += stream.wait_ns;
  e.call_ns += stream.call_ns;
  e.allocs += stream.allocs;
}

}  // namespace ndp::exec
