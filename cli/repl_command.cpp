// The REPL: libedit line editing and history on a terminal, plain form reading otherwise.
#include <editline/readline.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "driver/commands.h"
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

bool process_stream(driver::Session& session, std::istream& in) {
  bool ok = true;
  std::string buffer;
  std::string line;
  bool quit = false;
  // Lines are counted over the whole input, so a diagnostic names the line of stdin it is on.
  uint32_t line_no = 0, buffer_line = 1;
  while (!quit && !session.exit_requested() && std::getline(in, line)) {
    ++line_no;
    if (buffer.empty()) buffer_line = line_no;
    if (only_space(buffer) && !trim(line).empty() && trim(line)[0] == ':') {
      ok &= driver::run_repl_command(session, trim(line), &quit);
      buffer.clear();
      continue;
    }
    buffer += line;
    buffer += '\n';
    if (driver::Session::input_complete(buffer)) {
      ok &= session.eval_text("<stdin>", buffer, true, true, buffer_line);
      buffer.clear();
    }
  }
  // A last form without its terminator still gets evaluated, so the user sees the error.
  if (!quit && !session.exit_requested() && !only_space(buffer))
    ok &= session.eval_text("<stdin>", buffer, true, true, buffer_line);
  return ok;
}

/// Ctrl-C stops the evaluation in progress (the session and its definitions stay); at the
/// prompt it only asks for the flag, which the next evaluation clears before it starts.
static void on_interrupt(int) { lang::eval::interrupt_requested().store(true); }

static int interactive_loop(driver::Session& session) {
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
  uint32_t line_no = 0, buffer_line = 1;  // as in process_stream
  while (!quit && !session.exit_requested()) {
    char* raw = readline(buffer.empty() ? "ndp> " : "   > ");
    if (!raw) break;  // end of input (Ctrl-D)
    std::string line(raw);
    std::free(raw);
    ++line_no;
    if (buffer.empty()) buffer_line = line_no;
    lang::eval::interrupt_requested().store(false);  // a Ctrl-C typed at the prompt is stale
    if (!trim(line).empty()) add_history(line.c_str());
    if (buffer.empty() && !trim(line).empty() && trim(line)[0] == ':') {
      driver::run_repl_command(session, trim(line), &quit);
      continue;
    }
    buffer += line + "\n";
    if (driver::Session::input_complete(buffer)) {
      session.eval_text("<stdin>", buffer, true, true, buffer_line);
      buffer.clear();
    }
  }
  if (!hist.empty()) write_history(hist.c_str());
  return 0;
}

int run_repl(const CommonOptions& opts, const std::vector<std::string>& preload) {
  driver::SessionOptions so;
  so.backend = opts.backend;
  so.interactive = isatty(STDIN_FILENO);
  driver::Session session(so);
  for (const std::string& f : preload)
    if (!session.load_file(f)) return 1;
  if (so.interactive) return interactive_loop(session);
  return process_stream(session, std::cin) ? 0 : 1;
}

}  // namespace ndp::cli
