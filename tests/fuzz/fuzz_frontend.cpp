// libFuzzer target: any byte string through the lexer, parser and type checker must produce
// diagnostics or Core IR, never a crash, a hang or an internal error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontend/frontend.h"
#include "lang/core.h"
#include "lang/diagnostics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ndp;
  lang::SourceManager sm;
  lang::ast::AstContext ast;
  lang::DiagnosticEngine diags;
  lang::core::Program prog;
  frontend::Checker checker(prog, diags);
  uint32_t file = sm.add("fuzz.ndp", std::string(reinterpret_cast<const char*>(data), size));
  frontend::input_is_complete(sm.text(file));
  for (const auto* form : frontend::parse_program(ast, sm, file, diags)) checker.check(*form);
  lang::format_diagnostics(sm, diags.all());
  return 0;
}
