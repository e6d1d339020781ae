// User-facing diagnostics: the one place that formats `file:line:col: error: message` + caret.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "lang/source.h"

namespace ndp::lang {

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  Span span;
  std::string message;             // first line: lowercase start is not required (NESL phrases)
  std::vector<std::string> extra;  // further lines printed after the caret (type details)
};

/// Collects diagnostics of one compilation step; the front end keeps going after an error
/// where it can, so one file reports all its errors at once.
class DiagnosticEngine {
 public:
  void error(Span span, std::string message, std::vector<std::string> extra = {});
  void warning(Span span, std::string message, std::vector<std::string> extra = {});
  void add(Diagnostic d);

  bool has_errors() const { return error_count_ > 0; }
  size_t error_count() const { return error_count_; }
  const std::vector<Diagnostic>& all() const { return diags_; }
  void clear();

 private:
  std::vector<Diagnostic> diags_;
  size_t error_count_ = 0;
};

/// Renders one diagnostic:
///   file:line:col: error: message
///     <source line>
///     <caret line>
///   <extra lines>
std::string format_diagnostic(const SourceManager& sm, const Diagnostic& d);
std::string format_diagnostics(const SourceManager& sm, const std::vector<Diagnostic>& ds);

/// A runtime error as the REPL reports it: `RUNTIME ERROR: message`, then (for a valid span)
/// the place as a note, "raised here", with its caret line.
std::string format_runtime_error(const SourceManager& sm, const std::string& message, Span span);

/// A violated internal invariant (a compiler bug, never a user error). Only the top level
/// catches it; no pass does.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void ndp_unreachable(const char* why);

#define NDP_ASSERT(cond, msg)                                                               \
  do {                                                                                      \
    if (!(cond))                                                                            \
      throw ::ndp::lang::InternalError(std::string("internal error: ") + (msg) + " [" #cond \
                                       "] at " __FILE__);                                   \
  } while (0)

}  // namespace ndp::lang
