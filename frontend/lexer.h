// The lexer: NESL source bytes to tokens (language.md §1, extensions.md §1 sized literals).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lang/ast.h"
#include "lang/diagnostics.h"

namespace ndp::frontend {

enum class Tok : uint8_t {
#define TOKEN(id, spelling) id,
#include "frontend/token.def"
};

/// The spelling used in messages: "->", "then", "end of input", "name".
const char* token_spelling(Tok kind);

struct Token {
  Tok kind = Tok::End;
  uint32_t begin = 0;  // byte offsets into the buffer
  uint32_t end = 0;
  /// Ident / keywords: the word in lower case. String: the bytes after escapes.
  std::string text;
  int64_t int_value = 0;
  double float_value = 0;
  uint8_t char_value = 0;
  lang::ast::Sized sized = lang::ast::Sized::Default;
};

struct LexResult {
  std::vector<Token> tokens;  // always ends with one Tok::End
  /// The input ended inside a comment or a string: more input could complete it (REPL).
  bool unterminated = false;
};

/// Splits `text` into tokens. Lexical errors go to `diags` (when not null) with spans in
/// buffer `file`; each becomes a Tok::Error token so that the parser drops the form silently.
LexResult lex(std::string_view text, uint32_t file, lang::DiagnosticEngine* diags);

/// Index of the token that ends the top-level form starting at `start`: the first `$`, or
/// the first `;` outside brackets, `let` bindings and an unparenthesised type context; the
/// index of Tok::End when there is none.
size_t form_end(const std::vector<Token>& tokens, size_t start);

}  // namespace ndp::frontend
