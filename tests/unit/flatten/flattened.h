// Test helper: ndp source checked by the front end and flattened to Flat IR (vectorise alone or
// the whole pipeline), printed, with counts of what the printout holds.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "flatten/flat_ir.h"
#include "flatten/pipeline.h"
#include "flatten/vectorise.h"
#include "frontend/frontend.h"

namespace ndp::test::flat_ir {

/// The number of times `needle` occurs in `text`.
inline size_t occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

/// Checks every form of `src` and flattens the last one (an expression).
struct Flattened {
  lang::SourceManager sm;
  lang::ast::AstContext ast;
  lang::DiagnosticEngine diags;
  lang::core::Program prog;
  flatten::Program flat;
  std::string text;

  /// `all_passes`: the whole pipeline (flatten::flatten), else vectorisation alone.
  explicit Flattened(const std::string& src, bool all_passes = false) {
    frontend::Checker checker(prog, diags);
    uint32_t file = sm.add("t.ndp", src);
    const lang::core::Expr* body = nullptr;
    for (const auto* form : frontend::parse_program(ast, sm, file, diags)) {
      auto cf = checker.check(*form);
      REQUIRE_MESSAGE(cf.has_value(), lang::format_diagnostics(sm, diags.all()));
      body = cf->top.body;
    }
    REQUIRE(body);
    flat = all_passes ? flatten::flatten(prog, body) : flatten::vectorise(prog, body);
    text = flatten::print_program(flat);
  }
  size_t count(const std::string& needle) const { return occurrences(text, needle); }
};

}  // namespace ndp::test::flat_ir
