// difftest: random differential testing of ndp's backends (interp against cpu), with shrinking.
#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "driver/session.h"
#include "tests/difftest/generator.h"
#include "tests/difftest/runner.h"
#include "tests/difftest/shrink.h"

namespace {

using namespace ndp;
using namespace ndp::difftest;

const char* kUsage =
    "usage: difftest [--count N] [--seed S] [--backend cpu|interp|cuda] [--max-depth D] [--max-nodes N]\n"
    "                [--verbose] [--self-test] [--first K] [--shrink-attempts N] [--save DIR]\n"
    "                [--timeout SEC] [--print] [--fake-bug NAME] [--rand]\n"
    "Generates N random well-typed NESL programs (program K of seed S is always the same program),\n"
    "runs each on the interpreter and on the chosen backend, compares the answers and shrinks every\n"
    "failure to a small .ndp reproducer. --self-test compares the interpreter with itself and\n"
    "checks that every generated program type-checks. --fake-bug NAME reports a mismatch for\n"
    "every program that uses NAME (to see the shrinker work); --rand also generates `rand`, whose\n"
    "streams must be identical on every backend. Ends with `N passed, M failed`.\n";

struct Options {
  int count = 100;
  uint64_t seed = 1;
  int first = 0;
  driver::Backend backend = driver::Backend::Cpu;
  GenOptions gen;
  bool verbose = false;
  bool self_test = false;
  bool print = false;
  int shrink_attempts = 2000;
  int timeout = 60;
  std::string save_dir;
  std::string fake_bug;  // pretend the backend is wrong on programs that use this name
};

// The program being run, for the crash and timeout handlers (they may only call write()).
std::string g_current;

void write_all(const char* s, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(STDOUT_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

extern "C" void on_fatal(int sig) {
  const char* what = sig == SIGALRM ? "\ndifftest: TIMEOUT (the program below did not finish)\n"
                                    : "\ndifftest: CRASH (a fatal signal while running the program below)\n";
  write_all(what, std::strlen(what));
  write_all(g_current.data(), g_current.size());
  write_all("\n", 1);
  if (sig == SIGALRM) _exit(4);
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_handlers() {
  // An alternate stack, so that a stack overflow is reported too.
  static std::vector<char> alt(1 << 16);
  stack_t ss{};
  ss.ss_sp = alt.data();
  ss.ss_size = alt.size();
  sigaltstack(&ss, nullptr);
  struct sigaction sa{};
  sa.sa_handler = on_fatal;
  sa.sa_flags = SA_ONSTACK;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) sigaction(sig, &sa, nullptr);
}

uint64_t program_seed(uint64_t seed, int k) {
  // splitmix64 of (seed, k): program k is reproducible on its own with --first k --count 1.
  uint64_t z = seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(k) + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

enum class Failure { None, Internal, IllTyped, TypeDisagrees, Mismatch };

const char* failure_name(Failure f) {
  switch (f) {
    case Failure::None: return "pass";
    case Failure::Internal: return "internal error";
    case Failure::IllTyped: return "ill-typed program (generator or type checker bug)";
    case Failure::TypeDisagrees: return "inferred type differs from the generator's (generator or type checker bug)";
    case Failure::Mismatch: return "backends disagree";
  }
  return "?";
}

struct Evaluation {
  RunOutcome ref, test;
  Verdict verdict;
  Failure failure = Failure::None;
};

Evaluation evaluate(const Program& p, const Options& opt, const std::string& label) {
  Evaluation ev;
  std::string defs = defs_text(p), expr = expr_text(p.expr);
  g_current = label + "\n" + defs + expr + "\n";
  alarm(static_cast<unsigned>(opt.timeout));
  ev.ref = run_program(defs, expr, driver::Backend::Interp);
  ev.test = run_program(defs, expr, opt.self_test ? driver::Backend::Interp : opt.backend);
  alarm(0);
  ev.verdict = compare(ev.ref, ev.test);
  if (ev.ref.internal || ev.test.internal) ev.failure = Failure::Internal;
  else if (!ev.ref.defs_ok || ev.ref.expr.status == driver::ExprOutcome::Status::CompileError) ev.failure = Failure::IllTyped;
  else if (ev.ref.expr.type != type_answer(p.expr->type)) ev.failure = Failure::TypeDisagrees;
  else if (ev.verdict.mismatch) ev.failure = Failure::Mismatch;
  else if (!opt.fake_bug.empty() && ev.ref.expr.status == driver::ExprOutcome::Status::Ok &&
           (mentions(defs, opt.fake_bug) || mentions(expr, opt.fake_bug))) {
    // Exercises the shrinker without a broken backend: it should end at a tiny program
    // that still uses the name.
    ev.failure = Failure::Mismatch;
    ev.verdict.mismatch = true;
    ev.verdict.detail = "fake bug (--fake-bug " + opt.fake_bug + ")";
  }
  return ev;
}

// Tallies which syntax and library functions the generated programs exercise.
void count_constructs(const Program& p, std::map<std::string, int>& counts) {
  auto visit = [&](const ExprP& e) {
    switch (e->kind) {
      case Expr::Kind::Call:
        if (e->text.rfind("fun", 0) != 0 && e->text.rfind("dt", 0) != 0) ++counts[e->text];
        else ++counts[e->text.rfind("fun", 0) == 0 ? "<user function call>" : "<datatype constructor>"];
        break;
      case Expr::Kind::Binop:
      case Expr::Kind::Prefix: ++counts[e->text]; break;
      case Expr::Kind::Each: ++counts[e->has_filter ? "<apply-to-each with filter>" : "<apply-to-each>"]; break;
      case Expr::Kind::If: ++counts["<if>"]; break;
      case Expr::Kind::Let: ++counts["<let>"]; break;
      case Expr::Kind::Range: ++counts["<range>"]; break;
      case Expr::Kind::Index: ++counts["<index>"]; break;
      default: break;
    }
    return true;
  };
  walk(p.expr, visit);
  for (const auto& d : p.defs)
    if (d.kind == Program::Def::Kind::Function && d.fn.body) walk(d.fn.body, visit);
}

// The flags that select the same programs and comparison, for the "reproduce" line.
std::string generation_flags(const Options& opt) {
  std::string f = opt.self_test ? " --self-test" : fmt::format(" --backend {}", driver::backend_name(opt.backend));
  if (opt.gen.max_depth != GenOptions{}.max_depth) f += fmt::format(" --max-depth {}", opt.gen.max_depth);
  if (opt.gen.max_nodes != GenOptions{}.max_nodes) f += fmt::format(" --max-nodes {}", opt.gen.max_nodes);
  if (opt.gen.rand) f += " --rand";
  if (!opt.fake_bug.empty()) f += " --fake-bug " + opt.fake_bug;
  return f;
}

// What a failure is about, so that shrinking keeps the same bug instead of drifting to
// another one (an ill-typed candidate that merely lost a binding is a different failure).
std::string failure_signature(const Evaluation& ev) {
  switch (ev.failure) {
    case Failure::Mismatch: return ev.verdict.detail;
    case Failure::Internal: return ev.ref.internal ? ev.ref.internal_what : ev.test.internal_what;
    case Failure::IllTyped: {
      std::string msg = ev.ref.defs_ok ? ev.ref.expr.message : ev.ref.defs_diag;
      if (size_t at = msg.find("error: "); at != std::string::npos) msg = msg.substr(at + 7);
      msg = msg.substr(0, msg.find('\n'));
      if (size_t fn = msg.find("for function "); fn != std::string::npos) {
        size_t end = msg.find(' ', fn + 13);
        return "args of " + msg.substr(fn + 13, end - fn - 13);
      }
      for (const char* key : {"is undefined", "two branches", "must be of type", "does not match the pattern"})
        if (msg.find(key) != std::string::npos) return key;
      return msg.substr(0, 40);
    }
    default: return "";
  }
}

std::string comment_safe(std::string s) {
  for (char& c : s)
    if (c == '%' || c == '\n') c = c == '%' ? '?' : ' ';
  return s;
}

std::string reproducer(const Program& p, const Evaluation& ev, const Options& opt, int k, const char* test_name) {
  std::string header = fmt::format("% difftest reproducer: seed {}, program {}: {} %\n", opt.seed, k, failure_name(ev.failure));
  header += "% interp: " + comment_safe(describe(ev.ref)) + " %\n";
  header += fmt::format("% {}: {} %\n", test_name, comment_safe(describe(ev.test)));
  if (ev.failure == Failure::TypeDisagrees)
    header += "% generator's type: " + comment_safe(type_answer(p.expr->type)) + " %\n";
  header += "\n";
  return program_file(p, header, expected_text(ev.ref));
}

std::optional<Options> parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string(argv[++i]);
    };
    auto number = [&](auto& out) {
      auto v = value();
      if (!v) return false;
      char* end = nullptr;
      unsigned long long n = std::strtoull(v->c_str(), &end, 10);
      if (*end != '\0' || v->empty()) return false;
      out = static_cast<std::remove_reference_t<decltype(out)>>(n);
      return true;
    };
    bool ok = true;
    if (a == "--count") ok = number(o.count);
    else if (a == "--seed") ok = number(o.seed);
    else if (a == "--first") ok = number(o.first);
    else if (a == "--max-depth") ok = number(o.gen.max_depth);
    else if (a == "--max-nodes") ok = number(o.gen.max_nodes);
    else if (a == "--shrink-attempts") ok = number(o.shrink_attempts);
    else if (a == "--timeout") ok = number(o.timeout);
    else if (a == "--verbose") o.verbose = true;
    else if (a == "--self-test") o.self_test = true;
    else if (a == "--print") o.print = true;
    else if (a == "--rand") o.gen.rand = true;
    else if (a == "--fake-bug") {
      auto v = value();
      ok = v.has_value();
      if (v) o.fake_bug = *v;
    } else if (a == "--save") {
      auto v = value();
      ok = v.has_value();
      if (v) o.save_dir = *v;
    } else if (a == "--backend") {
      auto v = value();
      auto b = v ? driver::parse_backend(*v) : std::nullopt;
      ok = b.has_value();
      if (b) o.backend = *b;
    } else if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "difftest: bad argument near `%s`\n%s", a.c_str(), kUsage);
      return std::nullopt;
    }
  }
  if (o.gen.max_depth < 1) o.gen.max_depth = 1;
  if (o.timeout < 1) o.timeout = 1;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> parsed = parse_args(argc, argv);
  if (!parsed) return 2;
  Options opt = *parsed;
  install_handlers();

  if (!opt.self_test) {
    std::string reason = driver::backend_unavailable_reason(opt.backend);
    if (!reason.empty()) {
      fmt::print("difftest: backend {} is unavailable: {}\n", driver::backend_name(opt.backend), reason);
      fmt::print("difftest: comparing interp with itself instead (--self-test)\n");
      opt.self_test = true;
    } else if (opt.backend == driver::Backend::Interp) {
      opt.self_test = true;
    }
  }
  const char* test_name = opt.self_test ? "interp (2nd run)" : driver::backend_name(opt.backend);
  fmt::print("difftest: seed {}, programs {}..{}, interp vs {}, max depth {}\n", opt.seed, opt.first,
             opt.first + opt.count - 1, test_name, opt.gen.max_depth);
  std::fflush(stdout);

  int passed = 0, failed = 0, warnings = 0, runtime_errors = 0, ill_typed = 0, type_disagreements = 0;
  double total_ms = 0, max_ms = 0;
  int slowest = -1;
  std::map<std::string, int> error_messages;
  std::map<std::string, int> coverage;

  for (int k = opt.first; k < opt.first + opt.count; ++k) {
    Generator gen(program_seed(opt.seed, k), opt.gen);
    Program p = gen.program();
    std::string label = fmt::format("% seed {}, program {} %", opt.seed, k);
    if (opt.print) fmt::print("{}\n{}{}\n", label, defs_text(p), expr_text(p.expr));
    if (opt.verbose) count_constructs(p, coverage);
    Evaluation ev = evaluate(p, opt, label);
    double ms = ev.ref.millis + ev.test.millis;
    total_ms += ms;
    if (ms > max_ms) {
      max_ms = ms;
      slowest = k;
    }
    if (ev.failure == Failure::IllTyped) ++ill_typed;
    if (ev.failure == Failure::TypeDisagrees) ++type_disagreements;
    if (ev.ref.expr.status == driver::ExprOutcome::Status::RuntimeError) {
      ++runtime_errors;
      ++error_messages[ev.ref.expr.message];
    }
    for (const std::string& w : ev.verdict.warnings) {
      ++warnings;
      fmt::print("warning: program {}: {}\n", k, w);
    }
    if (opt.verbose) fmt::print("program {}: interp {} | {} {} ({:.1f} ms)\n", k, describe(ev.ref), test_name, describe(ev.test), ms);
    if (ev.failure == Failure::None) {
      ++passed;
      continue;
    }
    ++failed;
    fmt::print("\nFAIL program {} (seed {}): {}{}\n", k, opt.seed, failure_name(ev.failure),
               ev.verdict.mismatch ? " - " + ev.verdict.detail : "");
    fmt::print("  interp: {}\n  {}: {}\n", describe(ev.ref), test_name, describe(ev.test));
    fmt::print("  reproduce: difftest --seed {} --first {} --count 1{}\n", opt.seed, k, generation_flags(opt));
    std::fflush(stdout);
    Failure kind = ev.failure;
    std::string signature = failure_signature(ev);
    auto same_failure = [&](const Evaluation& e) { return e.failure == kind && failure_signature(e) == signature; };
    ShrinkStats stats;
    Program small = shrink(p, [&](const Program& c) { return same_failure(evaluate(c, opt, label + " (shrinking)")); },
                           opt.shrink_attempts, &stats);
    Evaluation final_ev = evaluate(small, opt, label);
    if (!same_failure(final_ev)) final_ev = ev, small = p;
    std::string file = reproducer(small, final_ev, opt, k, test_name);
    fmt::print("--- reproducer ({} shrink steps, {} candidates tried; {} -> {} characters) ---\n{}---\n", stats.accepted,
               stats.attempts, program_size(p), program_size(small), file);
    if (!opt.save_dir.empty()) {
      std::filesystem::create_directories(opt.save_dir);
      std::ofstream(std::filesystem::path(opt.save_dir) / fmt::format("seed{}_prog{}.ndp", opt.seed, k)) << file;
    }
    std::fflush(stdout);
  }

  {
    int n = opt.count;
    fmt::print("\nstatistics: {} programs, {} type-checked ({:.1f}%), {} ended in a runtime error\n", n,
               n - ill_typed, n ? 100.0 * (n - ill_typed) / n : 100.0, runtime_errors);
    if (type_disagreements) fmt::print("  {} inferred types differed from the generator's\n", type_disagreements);
    fmt::print("  time: {:.1f} ms per program on average, slowest {:.1f} ms (program {})\n", n ? total_ms / n : 0.0,
               max_ms, slowest);
    for (const auto& [msg, cnt] : error_messages) fmt::print("  {:5}  {}\n", cnt, msg);
    if (opt.verbose) {
      std::string line = "  constructs and library functions used:";
      for (const auto& [name, cnt] : coverage) line += fmt::format(" {}={}", name, cnt);
      fmt::print("{}\n", line);
    }
  }
  if (warnings) fmt::print("{} warnings\n", warnings);
  fmt::print("{} passed, {} failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
