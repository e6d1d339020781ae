// The commands of a session, with their help text in one table: the NESL top-level commands
// (`help $`, `set print_length 20 $`, ...) and the REPL's `:` commands (`:type EXP`, ...).
#include "driver/commands.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

#include "driver/session_impl.h"

namespace ndp::driver {

namespace {

struct CommandHelp {
  const char* usage;
  const char* meaning;
};

const CommandHelp kForms[] = {
    {"EXP", "evaluate EXP and bind it to `it`"},
    {"PATTERN = EXP", "define global variables"},
    {"function NAME(ARGS) = EXP", "define a function (optionally `: TYPE`)"},
    {"datatype NAME(TYPES) [:: CONTEXT]", "define a datatype"},
};

const CommandHelp kNeslCommands[] = {
    {"load \"FILE\"", "evaluate every form of FILE (FILE, FILE.ndp, FILE.nesl)"},
    {"load", "reload the last file"},
    {"set print_length N", "print at most N elements per sequence (default 100)"},
    {"set arg_check on|off", "accepted; ndp always checks arguments"},
    {"set verbose on|off", "accepted; ndp never prints progress messages"},
    {"show status", "print the settings"},
    {"describe NAME", "type and documentation of a function"},
    {"apropos TEXT", "names that contain TEXT"},
    {"help, ?", "this text"},
    {"exit", "leave ndp"},
};

const CommandHelp kReplCommands[] = {
    {":help", "this text"},
    {":type EXP", "the type of EXP, without evaluating it"},
    {":load FILE", "same as load \"FILE\""},
    {":backend interp|cpu|cuda", "choose the backend"},
    {":time EXP", "evaluate EXP and print the time it took"},
    {":dump core|flat|llvm|ptx EXP", "print EXP in an intermediate representation"},
    {":quit", "leave ndp"},
};

template <size_t N>
void append_section(std::string& text, const char* title, const CommandHelp (&commands)[N]) {
  text += title;
  text += "\n";
  for (const CommandHelp& c : commands) text += fmt::format("  {:<24}{}{}\n", c.usage, std::string_view(c.usage).size() >= 24 ? "  " : "", c.meaning);
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

std::string help_text() {
  std::string text;
  append_section(text, "ndp top-level forms (end each with $ or ;):", kForms);
  append_section(text, "NESL commands:", kNeslCommands);
  append_section(text, "REPL commands:", kReplCommands);
  return text;
}

bool Session::Impl::run_command(const lang::ast::TopLevel& form) {
  const auto& args = form.command_args;
  auto arg = [&](size_t i) { return i < args.size() ? args[i] : std::string(); };
  const std::string& word = form.name;
  if (word == "exit") {
    exit_requested = true;
    return true;
  }
  if (word == "help" || word == "?") {
    std::fputs(help_text().c_str(), opts.out);
    return true;
  }
  if (word == "set") {
    if (arg(0) == "print_length" && args.size() == 2) {
      const std::string value = arg(1);  // `end` points into it: it must outlive the check
      char* end = nullptr;
      long n = std::strtol(value.c_str(), &end, 10);
      if (*end == '\0' && n >= 0) {
        print.print_length = static_cast<int>(n);
        return true;
      }
    } else if ((arg(0) == "arg_check" || arg(0) == "verbose") && args.size() == 2 &&
               (arg(1) == "on" || arg(1) == "off")) {
      (arg(0) == "verbose" ? verbose : arg_check) = arg(1) == "on";
      return true;
    }
  }
  if (word == "show" && arg(0) == "status" && args.size() == 1) {
    std::fputs(fmt::format("verbose: {}\narg_check: {}\nprint_length: {}\nbackend: {}\n", verbose ? "on" : "off",
                           arg_check ? "on" : "off", print.print_length, backend_name(opts.backend))
                   .c_str(),
               opts.out);
    return true;
  }
  if (word == "describe" && args.size() == 1) return describe(form, arg(0));
  if (word == "apropos" && args.size() == 1) {
    for (const std::string& n : checker.names())
      if (n.find(arg(0)) != std::string::npos) std::fputs((n + "\n").c_str(), opts.out);
    return true;
  }
  std::string all = upper(word);
  for (const std::string& a : args) all += " " + upper(a);
  error_at(form.span, "Unknown top level command: " + all);
  return false;
}

bool Session::Impl::describe(const lang::ast::TopLevel& form, const std::string& name) {
  std::optional<uint32_t> id = checker.lookup(name);
  if (!id) {
    error_at(form.span, fmt::format("{} is undefined.", name));
    return false;
  }
  const auto& g = *prog.globals.at(*id);
  std::string kind = g.kind == lang::core::Global::Kind::Variable ? "variable"
                     : g.kind == lang::core::Global::Kind::Constructor ? "datatype constructor"
                     : g.kind == lang::core::Global::Kind::Prim ? "primitive function"
                                                                   : "function";
  std::string text = fmt::format("{} : {}\n  {}{}\n", g.name, lang::type_to_string(g.scheme), kind,
                                 g.library ? " (standard library)" : "");
  if (g.kind == lang::core::Global::Kind::Function && !g.fn.doc.empty()) text += "  " + g.fn.doc + "\n";
  std::fputs(text.c_str(), opts.out);
  return true;
}

bool run_repl_command(Session& session, std::string_view line, bool* quit) {
  std::string rest = trim(std::string(line.substr(1)));
  std::string word = rest.substr(0, rest.find_first_of(" \t"));
  std::string arg = trim(rest.substr(word.size()));
  if (word == "quit" || word == "q") {
    *quit = true;
    return true;
  }
  if (word == "help" || word == "h") {
    std::fputs(help_text().c_str(), session.out());
    return true;
  }
  if (word == "type" || word == "t") {
    ExprOutcome o = session.type_of(arg);
    if (o.status != ExprOutcome::Status::Ok) {
      std::fputs(o.message.c_str(), session.err());
      return false;
    }
    std::fprintf(session.out(), "%s : %s\n", arg.c_str(), o.type.c_str());
    return true;
  }
  if (word == "load" || word == "l") return session.load_file(arg);
  if (word == "backend") {
    if (arg.empty()) {  // `:backend` alone says which one runs the forms
      std::fprintf(session.err(), "backend: %s\n", backend_name(session.backend()));
      return true;
    }
    auto b = parse_backend(arg);
    if (!b) {
      std::fprintf(session.err(), "unknown backend '%s' (expected interp, cpu or cuda)\n", arg.c_str());
      return false;
    }
    std::string why = backend_unavailable_reason(*b);
    if (!why.empty()) {
      std::fprintf(session.err(), "backend %s unavailable: %s\n", arg.c_str(), why.c_str());
      return false;
    }
    session.set_backend(*b);
    return true;
  }
  if (word == "time") {
    auto start = std::chrono::steady_clock::now();
    ExprOutcome o = session.eval_expr(arg, "<time>");
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (o.status != ExprOutcome::Status::Ok) {
      std::fputs(o.status == ExprOutcome::Status::RuntimeError ? ("RUNTIME ERROR: " + o.message + "\n").c_str()
                                                                    : o.message.c_str(),
                 session.err());
      return false;
    }
    std::fprintf(session.out(), "it = %s : %s\ntime: %.6f s\n", o.value.c_str(), o.type.c_str(), secs);
    return true;
  }
  if (word == "dump") {
    std::string stage = arg.substr(0, arg.find_first_of(" \t"));
    std::string expr = trim(arg.substr(stage.size()));
    if (std::optional<Session::Stage> which = parse_stage(stage)) {
      std::fputs((session.dump(*which, expr) + "\n").c_str(), session.out());
      return true;
    }
    std::fprintf(session.err(), "usage: :dump core|flat|llvm|ptx EXPR\n");
    return false;
  }
  std::fprintf(session.err(), "unknown command :%s (type :help)\n", word.c_str());
  return false;
}

}  // namespace ndp::driver
