// Formatting of diagnostics (file:line:col, source line, caret).
#include "lang/diagnostics.h"

#include <fmt/format.h>

namespace ndp::lang {

void DiagnosticEngine::error(Span span, std::string message, std::vector<std::string> extra) {
  add(Diagnostic{Severity::Error, span, std::move(message), std::move(extra)});
}

void DiagnosticEngine::warning(Span span, std::string message, std::vector<std::string> extra) {
  add(Diagnostic{Severity::Warning, span, std::move(message), std::move(extra)});
}

void DiagnosticEngine::add(Diagnostic d) {
  if (d.severity == Severity::Error) ++error_count_;
  diags_.push_back(std::move(d));
}

void DiagnosticEngine::clear() {
  diags_.clear();
  error_count_ = 0;
}

static const char* severity_name(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

std::string format_diagnostic(const SourceManager& sm, const Diagnostic& d) {
  std::string out;
  if (!d.span.valid()) {
    out = fmt::format("{}: {}\n", severity_name(d.severity), d.message);
  } else {
    LineCol at = sm.position(d.span);
    out = fmt::format("{}:{}:{}: {}: {}\n", sm.name(d.span.file), at.line, at.col, severity_name(d.severity), d.message);
    LineCol lc = sm.line_col(d.span);  // the caret goes under the buffer's own line
    std::string_view line = sm.line_text(d.span.file, d.span.begin);
    out += fmt::format("  {}\n  ", line);
    // Keep tabs in the caret line so the caret lines up under a tab-indented source line.
    for (uint32_t i = 0; i + 1 < lc.col && i < line.size(); ++i) out += line[i] == '\t' ? '\t' : ' ';
    uint32_t width = d.span.end > d.span.begin ? d.span.end - d.span.begin : 1;
    uint32_t room = static_cast<uint32_t>(line.size()) >= lc.col ? static_cast<uint32_t>(line.size()) - lc.col + 1 : 1;
    out += '^';
    for (uint32_t i = 1; i < width && i < room; ++i) out += '~';
    out += '\n';
  }
  for (const std::string& e : d.extra) out += e + "\n";
  return out;
}

std::string format_runtime_error(const SourceManager& sm, const std::string& message, Span span) {
  std::string text = "RUNTIME ERROR: " + message + "\n";
  if (span.valid()) text += format_diagnostic(sm, Diagnostic{Severity::Note, span, "raised here", {}});
  return text;
}

std::string format_diagnostics(const SourceManager& sm, const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const Diagnostic& d : ds) out += format_diagnostic(sm, d);
  return out;
}

void ndp_unreachable(const char* why) { throw InternalError(std::string("internal error: unreachable: ") + why); }

}  // namespace ndp::lang
