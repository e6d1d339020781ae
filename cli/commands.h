// The ndp subcommands; each returns the process exit status.
#pragma once

#include <string>
#include <vector>

#include "driver/session.h"

namespace ndp::cli {

struct CommonOptions {
  driver::Backend backend = driver::Backend::Interp;
  bool backend_given = false;
  std::string dump;  // --dump=core|flat|llvm|ptx
};

/// `ndp [FILES...]`: load FILES, then read forms from stdin (interactive REPL on a terminal).
int run_repl(const CommonOptions& opts, const std::vector<std::string>& preload);
/// `ndp run FILE`: evaluate every form, printing program output and expression answers.
int run_file(const CommonOptions& opts, const std::string& path);
/// `ndp check FILE...`: parse and type-check only.
int check_files(const std::vector<std::string>& paths);
/// `ndp compile FILE -o NAME [OPTIONS]`: its own options (compile_command.cpp), `args` after
/// the word compile.
int compile_command(const std::vector<std::string>& args);
/// `ndp autotune [OPTIONS]`: its own options (autotune_command.cpp), `args` after the word.
int autotune_command(const std::vector<std::string>& args);
/// `ndp test PATHS...`: `%test` blocks, REPL transcripts (.in/.out) and error tests.
int run_tests(const CommonOptions& opts, const std::vector<std::string>& paths, bool verbose);

}  // namespace ndp::cli

#include <istream>

namespace ndp::cli {

/// Feeds top-level forms read from `in` to `session` as the non-interactive REPL does: lines
/// are accumulated until they hold a complete form, then evaluated; `:` commands are accepted
/// at the start of a form. Returns false if any form failed.
bool process_stream(driver::Session& session, std::istream& in);

}  // namespace ndp::cli
