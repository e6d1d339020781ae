// The session's commands: one help table for the NESL and the REPL commands, and the REPL's
// `:` commands writing to the session's streams.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "driver/commands.h"
#include "driver/session.h"

using ndp::driver::Session;
using ndp::driver::SessionOptions;

namespace {

/// A session writing to temporary files, and what it wrote.
struct Captured {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  Session session{SessionOptions{out, err}};
  ~Captured() {
    std::fclose(out);
    std::fclose(err);
  }
  static std::string text_of(std::FILE* f) {
    std::fflush(f);
    std::string text;
    std::rewind(f);
    for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
    return text;
  }
  std::string out_text() { return text_of(out); }
  std::string err_text() { return text_of(err); }
};

}  // namespace

TEST_CASE("the help text lists every NESL and REPL command, each once") {
  std::string help = ndp::driver::help_text();
  for (const char* usage : {"load \"FILE\"", "set print_length N", "show status", "describe NAME", "apropos TEXT",
                            "exit", ":help", ":type EXP", ":load FILE", ":backend interp|cpu|cuda", ":time EXP",
                            ":dump core|flat|llvm|ptx EXP", ":quit"}) {
    CAPTURE(usage);
    size_t at = help.find(std::string("  ") + usage + " ");
    CHECK(at != std::string::npos);
    CHECK(help.find(std::string("  ") + usage + " ", at + 1) == std::string::npos);
  }
}

TEST_CASE("`help $` and `:help` print the same table") {
  Captured nesl, repl;
  CHECK(nesl.session.eval_text("<t>", "help $"));
  bool quit = false;
  CHECK(ndp::driver::run_repl_command(repl.session, ":help", &quit));
  CHECK(!quit);
  CHECK(nesl.out_text() == ndp::driver::help_text());
  CHECK(repl.out_text() == ndp::driver::help_text());
}

TEST_CASE("REPL commands: :type, :dump, :quit and an unknown command") {
  Captured c;
  bool quit = false;
  CHECK(ndp::driver::run_repl_command(c.session, ":type [1, 2]", &quit));
  CHECK(c.out_text() == "[1, 2] : [int]\n");
  CHECK(ndp::driver::run_repl_command(c.session, ":dump flat {x + 1 : x in [1, 2]}", &quit));
  CHECK(c.out_text().find("function main") != std::string::npos);
  CHECK(!ndp::driver::run_repl_command(c.session, ":dump nothing 1", &quit));
  CHECK(c.err_text().find("usage: :dump core|flat|llvm|ptx EXPR") != std::string::npos);
  CHECK(!ndp::driver::run_repl_command(c.session, ":frobnicate", &quit));
  CHECK(c.err_text().find("unknown command :frobnicate") != std::string::npos);
  CHECK(!quit);
  CHECK(ndp::driver::run_repl_command(c.session, ":quit", &quit));
  CHECK(quit);
}
