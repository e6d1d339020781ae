// The REPL: libedit line editing and history on a terminal, plain form reading otherwise.
#include <editline/readline.h>
#include <pthread.h>
#include <signal.h>
#include <sys/select.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "driver/commands.h"
#include "lang/eval/deep_stack.h"
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

// Ctrl-C (Note [Cancellation] in include/ndp/interrupt.h). It stops the evaluation in
// progress (the session and its definitions stay); at a prompt it drops the form being typed.
// The kernel hands SIGINT to any thread that does not block it (OpenMP workers too), so the
// handler passes it on to the thread that must wake up from a blocking call: the evaluation
// thread, or at a prompt the REPL's own. A signal passed on (SI_TKILL) is not passed on again.

static pthread_t repl_thread;

static void on_interrupt(int signo, siginfo_t* info, void*) {
  lang::eval::interrupt_requested().store(true);
  if (info != nullptr && info->si_code == SI_TKILL) return;
  lang::eval::DeepStack::forward_to_evaluation(signo);
  if (!pthread_equal(pthread_self(), repl_thread)) pthread_kill(repl_thread, signo);
}

/// Set when Ctrl-C ended the line being read (read_key); the REPL drops that line.
static bool line_interrupted = false;

/// libedit's key reader: a Ctrl-C while waiting for a key ends the line (as Enter would, so
/// libedit leaves the terminal in order) and marks it to be dropped; libedit itself would
/// restart the read and keep the half-typed line. SIGINT is blocked except inside pselect, so
/// one that comes just before the wait is seen, not slept through.
static int read_key(FILE*) {
  sigset_t sigint, unblocked;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  for (;;) {
    pthread_sigmask(SIG_BLOCK, &sigint, &unblocked);
    bool interrupted = lang::eval::interrupt_requested().exchange(false);
    int ready = 0;
    if (!interrupted) {
      fd_set fds;
      FD_ZERO(&fds);
      FD_SET(STDIN_FILENO, &fds);
      ready = pselect(STDIN_FILENO + 1, &fds, nullptr, nullptr, nullptr, &unblocked);
    }
    pthread_sigmask(SIG_SETMASK, &unblocked, nullptr);
    if (interrupted || (ready < 0 && errno == EINTR && lang::eval::interrupt_requested().exchange(false))) {
      line_interrupted = true;
      return '\n';
    }
    if (ready < 0) {
      if (errno == EINTR) continue;
      return EOF;
    }
    unsigned char c;
    ssize_t got = read(STDIN_FILENO, &c, 1);
    if (got == 1) return c;
    if (got == 0 || errno != EINTR) return EOF;
  }
}

static int interactive_loop(driver::Session& session) {
  repl_thread = pthread_self();
  struct sigaction sa {};
  sa.sa_sigaction = on_interrupt;
  sa.sa_flags = SA_SIGINFO;  // no SA_RESTART: a blocking read in the evaluation ends with EINTR
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  std::printf("ndp %s, NESL 3.1 compatible. Type `help $` or `:help` for commands, `exit $` to leave.\n",
              NDP_VERSION);
  std::string hist = history_path();
  rl_getc_function = read_key;
  rl_catch_signals = 0;  // our handler stays in place, without SA_RESTART: a blocked read ends
  using_history();
  stifle_history(2000);
  if (!hist.empty()) read_history(hist.c_str());
  std::string buffer;
  bool quit = false;
  uint32_t line_no = 0, buffer_line = 1;  // as in process_stream
  while (!quit && !session.exit_requested()) {
    lang::eval::interrupt_requested().store(false);  // a Ctrl-C from before this prompt is stale
    char* raw = readline(buffer.empty() ? "ndp> " : "   > ");
    if (raw && line_interrupted) {
      // Ctrl-C at a prompt: the form being typed is dropped, the session goes on.
      line_interrupted = false;
      std::free(raw);
      buffer.clear();
      continue;
    }
    if (!raw) break;  // end of input (Ctrl-D)
    std::string line(raw);
    std::free(raw);
    ++line_no;
    if (buffer.empty()) buffer_line = line_no;
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
