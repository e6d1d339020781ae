// A session: the primitives and the standard library, a growing user program, and a backend
// to run it: source -> check -> interp | flatten -> exec (with codegen's kernels). The REPL,
// `ndp run`, `ndp test` and the embedding API are thin layers over this.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ndp::driver {

enum class Backend { Interp, Cpu, Cuda };
const char* backend_name(Backend b);
/// Parses "interp" | "cpu" | "cuda".
std::optional<Backend> parse_backend(std::string_view name);
/// Empty when the backend can run here; otherwise the reason (shown to the user).
std::string backend_unavailable_reason(Backend b);

struct SessionOptions {
  std::FILE* out = stdout;  // answers and program output
  std::FILE* err = stderr;  // diagnostics and runtime errors
  Backend backend = Backend::Interp;
  /// Answer lines follow NESL's interactive layout ("\n" before each line) when true, and the
  /// non-interactive one (each line + "\n") when false (language.md §5.1, extensions.md §6).
  bool interactive = false;
};

/// The representations `--dump` and `:dump` can show: Core IR, Flat IR, and the fused kernels
/// as host LLVM IR or as PTX.
enum class DumpStage { Core, Flat, Llvm, Ptx };
/// Parses "core" | "flat" | "llvm" | "ptx".
std::optional<DumpStage> parse_stage(std::string_view name);

/// The outcome of evaluating an expression for `%test` and `:type`.
struct ExprOutcome {
  enum class Status { Ok, CompileError, RuntimeError } status = Status::Ok;
  std::string value;    // printed value (REPL format, one line, no print_length limit)
  std::string type;     // printed type with its context
  std::string message;  // the diagnostic / runtime error text
};

class Session {
 public:
  explicit Session(SessionOptions opts = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Evaluates every top-level form of `text` in order, printing answers (when
  /// `print_answers`) and errors as the REPL does. A form's error does not stop later forms.
  /// Returns false if any form failed. `name` names the buffer in diagnostics. With
  /// `echo_definitions` false, function and datatype definitions are not echoed (`ndp run`).
  /// `first_line` is the line of `name` where `text` starts (forms read one at a time from
  /// standard input), so that diagnostics name the line in the whole input.
  bool eval_text(std::string name, std::string text, bool print_answers = true, bool echo_definitions = true,
                 uint32_t first_line = 1);
  /// `load "file"` semantics: finds FILE, FILE.ndp or FILE.nesl; forms run without answers.
  bool load_file(const std::string& path);
  /// Checks a file (parse + types) without running it.
  bool check_text(std::string name, std::string text);

  /// Evaluates one expression (no terminator needed) without binding `it`.
  /// `line` and `col` place the text in `name` for diagnostics (a `%test` case in its file).
  ExprOutcome eval_expr(std::string_view text, std::string_view name = "<expr>", uint32_t line = 1, uint32_t col = 1);
  /// The printed type of an expression, or the error.
  ExprOutcome type_of(std::string_view text);
  using Stage = DumpStage;
  /// `:dump core|flat EXPR`.
  std::string dump(Stage stage, std::string_view text);
  /// `ndp run --dump=core|flat FILE`: runs the file's forms (so later forms see the globals they
  /// define) and prints the Core IR of each function and top-level form, or the Flat IR of each
  /// top-level form, to the session's output; false on errors.
  bool dump_file(Stage stage, std::string name, std::string text);

  /// The streams the session writes answers and diagnostics to (SessionOptions).
  std::FILE* out() const;
  std::FILE* err() const;

  /// True after an `exit` form.
  bool exit_requested() const;
  void set_backend(Backend b);
  Backend backend() const;
  int print_length() const;
  /// True when `text` holds at least one complete form (REPL multi-line input).
  static bool input_complete(std::string_view text);

 private:
  friend class EmbeddedSession;  // the embedding API's session (driver/embedded_session.h)
  struct Impl;
  static std::string diag_text(Impl& s);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ndp::driver
