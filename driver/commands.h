// The commands a session understands besides top-level forms, and their help text.
#pragma once

#include <string>
#include <string_view>

#include "driver/session.h"

namespace ndp::driver {

/// The help text of `help $` and `:help`: the top-level forms, the NESL commands and the REPL
/// commands, from the one table that lists them (driver/commands.cpp).
std::string help_text();

/// Runs one REPL command line (`:type EXP`, `:dump flat EXP`, ...), writing to the session's
/// streams; false if it failed. Sets *quit for `:quit`.
bool run_repl_command(Session& session, std::string_view line, bool* quit);

}  // namespace ndp::driver
