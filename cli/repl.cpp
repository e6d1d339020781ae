// The REPL: libedit line editing and history on a terminal, plain form reading otherwise.
#include <editline/readline.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "lang/eval/interp.h"

namespace ndp::cli {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string history_path() {
  if (const char* p = std::getenv("NDP_HISTORY")) return p;
  if (const char* home = std::getenv("HOME")) return std::string(home) + "/.ndp_history";
  return "";
}

bool only_space(const std::string& s) { return trim(s).empty(); }

}  // namespace

bool run_colon_command(jit::Session& session, const std::string& line, bool* quit) {
  std::string rest = trim(line.substr(1));
  std::string word = rest.substr(0, rest.find_first_of(" \t"));
  std::string arg = trim(rest.substr(word.size()));
  if (word == "quit" || word == "q") {
    *quit = true;
    return true;
  }
  if (word == "help" || word == "h") return session.eval_text("<help>", "help $", true);
  if (word == "type" || word == "t") {
    jit::ExprOutcome o = session.type_of(arg);
    if (o.status != jit::ExprOutcome::Status::Ok) {
      std::fputs(o.message.c_str(), stderr);
      return false;
    }
    std::printf("%s : %s\n", arg.c_str(), o.type.c_str());
    return true;
  }
  if (word == "load" || word == "l") return session.load_file(arg);
  if (word == "backend") {
    if (arg.empty()) {  // `:backend` alone says which one runs the forms
      std::fprintf(stderr, "backend: %s\n", jit::backend_name(session.backend()));
      return true;
    }
    auto b = jit::parse_backend(arg);
    if (!b) {
      std::fprintf(stderr, "unknown backend '%s' (expected interp, cpu or cuda)\n", arg.c_str());
      return false;
    }
    std::string why = jit::backend_unavailable_reason(*b);
    if (!why.empty()) {
      std::fprintf(stderr, "backend %s unavailable: %s\n", arg.c_str(), why.c_str());
      return false;
    }
    session.set_backend(*b);
    return true;
  }
  if (word == "time") {
    auto start = std::chrono::steady_clock::now();
    jit::ExprOutcome o = session.eval_expr(arg, "<time>");
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (o.status != jit::ExprOutcome::Status::Ok) {
      std::fputs(o.status == jit::ExprOutcome::Status::RuntimeError ? ("RUNTIME ERROR: " + o.message + "\n").c_str()
                                                                    : o.message.c_str(),
                 stderr);
      return false;
    }
    std::printf("it = %s : %s\ntime: %.6f s\n", o.value.c_str(), o.type.c_str(), secs);
    return true;
  }
  if (word == "dump") {
    std::string stage = arg.substr(0, arg.find_first_of(" \t"));
    std::string expr = trim(arg.substr(stage.size()));
    if (stage == "core" || stage == "flat" || stage == "llvm" || stage == "ptx") {
      auto which = stage == "core"   ? jit::Session::Stage::Core
                   : stage == "flat" ? jit::Session::Stage::Flat
                   : stage == "llvm" ? jit::Session::Stage::Llvm
                                     : jit::Session::Stage::Ptx;
      std::fputs((session.dump(which, expr) + "\n").c_str(), stdout);
      return true;
    }
    std::fprintf(stderr, "usage: :dump core|flat|llvm|ptx EXPR\n");
    return false;
  }
  std::fprintf(stderr, "unknown command :%s (type :help)\n", word.c_str());
  return false;
}

bool process_stream(jit::Session& session, std::istream& in) {
  bool ok = true;
  std::string buffer;
  std::string line;
  bool quit = false;
  while (!quit && !session.exit_requested() && std::getline(in, line)) {
    if (only_space(buffer) && !trim(line).empty() && trim(line)[0] == ':') {
      ok &= run_colon_command(session, trim(line), &quit);
      buffer.clear();
      continue;
    }
    buffer += line;
    buffer += '\n';
    if (jit::Session::input_complete(buffer)) {
      ok &= session.eval_text("<stdin>", buffer);
      buffer.clear();
    }
  }
  // A last form without its terminator still gets evaluated, so the user sees the error.
  if (!quit && !session.exit_requested() && !only_space(buffer)) ok &= session.eval_text("<stdin>", buffer);
  return ok;
}

/// Ctrl-C stops the evaluation in progress (the session and its definitions stay); at the
/// prompt it only asks for the flag, which the next evaluation clears before it starts.
static void on_interrupt(int) { lang::eval::interrupt_requested().store(true); }

static int interactive_loop(jit::Session& session) {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  std::printf("ndp %s, NESL 3.1 compatible. Type `help $` or `:help` for commands, `exit $` to leave.\n",
              NDP_VERSION);
  std::string hist = history_path();
  using_history();
  stifle_history(2000);
  if (!hist.empty()) read_history(hist.c_str());
  std::string buffer;
  bool quit = false;
  while (!quit && !session.exit_requested()) {
    char* raw = readline(buffer.empty() ? "ndp> " : "   > ");
    if (!raw) break;  // end of input (Ctrl-D)
    std::string line(raw);
    std::free(raw);
    lang::eval::interrupt_requested().store(false);  // a Ctrl-C typed at the prompt is stale
    if (!trim(line).empty()) add_history(line.c_str());
    if (buffer.empty() && !trim(line).empty() && trim(line)[0] == ':') {
      run_colon_command(session, trim(line), &quit);
      continue;
    }
    buffer += line + "\n";
    if (jit::Session::input_complete(buffer)) {
      session.eval_text("<stdin>", buffer);
      buffer.clear();
    }
  }
  if (!hist.empty()) write_history(hist.c_str());
  return 0;
}

int run_repl(const CommonOptions& opts, const std::vector<std::string>& preload) {
  jit::SessionOptions so;
  so.backend = opts.backend;
  so.interactive = isatty(STDIN_FILENO);
  jit::Session session(so);
  for (const std::string& f : preload)
    if (!session.load_file(f)) return 1;
  if (so.interactive) return interactive_loop(session);
  return process_stream(session, std::cin) ? 0 : 1;
}

}  // namespace ndp::cli
