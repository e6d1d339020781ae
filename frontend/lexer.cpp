// The lexer: comments, case folding, literals with NESL's rules, longest-match punctuation.
#include "frontend/lexer.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <unordered_map>

namespace ndp::frontend {

using lang::ast::Sized;

const char* token_spelling(Tok kind) {
  switch (kind) {
    // clang-format off
#define TOKEN(id, spelling) case Tok::id: return spelling;
#include "frontend/token.def"
    // clang-format on
  }
  return "token";
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_alpha(c) || is_digit(c); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f'; }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

const std::unordered_map<std::string_view, Tok>& keywords() {
  static const std::unordered_map<std::string_view, Tok> table = {
#define TOKEN(id, spelling)
#define KEYWORD(id, spelling) {spelling, Tok::id},
#include "frontend/token.def"
  };
  return table;
}

std::string printable(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", u);
}

class Lexer {
 public:
  Lexer(std::string_view text, uint32_t file, lang::DiagnosticEngine* diags)
      : text_(text), file_(file), diags_(diags) {}

  LexResult run() {
    // A UTF-8 byte-order mark (what some editors write first) is no part of the program.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
    while (true) {
      skip_space_and_comments();
      if (pos_ >= text_.size()) break;
      lex_token();
    }
    Token end;
    end.kind = Tok::End;
    end.begin = end.end = static_cast<uint32_t>(text_.size());
    out_.tokens.push_back(std::move(end));
    return std::move(out_);
  }

 private:
  std::string_view text_;
  uint32_t file_;
  lang::DiagnosticEngine* diags_;
  size_t pos_ = 0;
  LexResult out_;

  char at(size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

  void report(size_t begin, size_t end, std::string message) {
    if (diags_)
      diags_->error(lang::Span{file_, static_cast<uint32_t>(begin), static_cast<uint32_t>(end)}, std::move(message));
  }

  Token& push(Tok kind, size_t begin, size_t end) {
    Token t;
    t.kind = kind;
    t.begin = static_cast<uint32_t>(begin);
    t.end = static_cast<uint32_t>(end);
    out_.tokens.push_back(std::move(t));
    return out_.tokens.back();
  }

  void error_token(size_t begin, size_t end, std::string message) {
    report(begin, end, std::move(message));
    push(Tok::Error, begin, end);
    pos_ = end;
  }

  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (is_space(c)) {
        ++pos_;
      } else if (c == '%') {
        // `%test` blocks (extensions.md §5) are ordinary comments here.
        size_t close = text_.find('%', pos_ + 1);
        if (close == std::string_view::npos) {
          report(pos_, pos_ + 1, "End of File reached inside of a comment.");
          out_.unterminated = true;
          push(Tok::Error, pos_, text_.size());
          pos_ = text_.size();
          return;
        }
        pos_ = close + 1;
      } else {
        return;
      }
    }
  }

  void lex_token() {
    size_t start = pos_;
    char c = text_[pos_];
    if (is_digit(c) || (c == '.' && is_digit(at(pos_ + 1)))) return lex_number();
    if (is_alpha(c)) return lex_word();
    if (c == '`') {
      if (pos_ + 1 >= text_.size())
        return error_token(start, pos_ + 1, "end of input right after ` (a character literal needs one character)");
      Token& t = push(Tok::Char, start, pos_ + 2);
      t.char_value = static_cast<uint8_t>(text_[pos_ + 1]);
      t.text = std::string(1, text_[pos_ + 1]);
      pos_ += 2;
      return;
    }
    if (c == '"') return lex_string();
    lex_punct(start, c);
  }

  void lex_word() {
    size_t start = pos_;
    while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
    std::string word;
    word.reserve(pos_ - start);
    for (size_t i = start; i < pos_; ++i) word += lower(text_[i]);
    auto it = keywords().find(word);
    Token& t = push(it == keywords().end() ? Tok::Ident : it->second, start, pos_);
    t.text = std::move(word);
  }

  void lex_string() {
    size_t start = pos_++;
    std::string bytes;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      // A backslash makes the next byte literal; there are no other escapes (`\t` is `t`).
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size())
        ++pos_;
      else if (text_[pos_] == '\\')
        break;
      bytes += text_[pos_++];
    }
    if (pos_ >= text_.size()) {
      report(start, start + 1, "Reached end-of-input while parsing a quoted string");
      out_.unterminated = true;
      push(Tok::Error, start, text_.size());
      pos_ = text_.size();
      return;
    }
    ++pos_;
    Token& t = push(Tok::String, start, pos_);
    t.text = std::move(bytes);
  }

  bool suffix_at(size_t i, std::string_view s) const {
    if (i + s.size() > text_.size()) return false;
    for (size_t k = 0; k < s.size(); ++k)
      if (lower(text_[i + k]) != s[k]) return false;
    return !is_ident_char(at(i + s.size())) && at(i + s.size()) != '.';
  }

  void lex_number() {
    size_t start = pos_;
    bool is_float = false;
    while (is_digit(at(pos_))) ++pos_;
    if (at(pos_) == '.') {
      is_float = true;
      ++pos_;
      while (is_digit(at(pos_))) ++pos_;
    }
    char e = at(pos_);
    char after_e = at(pos_ + 1);
    if ((e == 'e' || e == 'E') && (is_digit(after_e) || after_e == '+' || after_e == '-')) {
      pos_ += 2;
      if (!is_digit(after_e) && !is_digit(at(pos_))) {
        while (is_ident_char(at(pos_)) || at(pos_) == '.') ++pos_;
        return error_token(start, pos_,
                           fmt::format("malformed exponent in number '{}'", text_.substr(start, pos_ - start)));
      }
      is_float = true;
      while (is_digit(at(pos_))) ++pos_;
    }
    size_t digits_end = pos_;
    Sized sized = Sized::Default;
    if (suffix_at(pos_, "i32")) {
      sized = Sized::I32;
      pos_ += 3;
    } else if (suffix_at(pos_, "f32")) {
      sized = Sized::F32;
      pos_ += 3;
    }
    if (is_ident_char(at(pos_)) || at(pos_) == '.') {
      // `1a`, `3b2`, `2.5.3`: CMU misreads these; ndp refuses them (language.md §1.5).
      while (is_ident_char(at(pos_)) || at(pos_) == '.') ++pos_;
      return error_token(start, pos_,
                         fmt::format("malformed number '{}': a number cannot be followed directly by a "
                                     "letter or a '.'",
                                     text_.substr(start, pos_ - start)));
    }
    std::string_view lexeme = text_.substr(start, digits_end - start);
    if (sized == Sized::I32 && is_float)
      return error_token(
          start, pos_, fmt::format("'{}': the i32 suffix needs an integer literal", text_.substr(start, pos_ - start)));
    if (is_float || sized == Sized::F32) return finish_float(start, lexeme, sized);
    finish_int(start, lexeme, sized);
  }

  void finish_int(size_t start, std::string_view lexeme, Sized sized) {
    int64_t limit = sized == Sized::I32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
    int64_t v = 0;
    for (char d : lexeme) {
      int digit = d - '0';
      if (v > (limit - digit) / 10)
        return error_token(start, pos_,
                           fmt::format("integer literal {} does not fit in {} bits", text_.substr(start, pos_ - start),
                                       sized == Sized::I32 ? 32 : 64));
      v = v * 10 + digit;
    }
    Token& t = push(Tok::Int, start, pos_);
    t.int_value = v;
    t.sized = sized;
  }

  void finish_float(size_t start, std::string_view lexeme, Sized sized) {
    // from_chars reports underflow as out of range; strtod then gives the subnormal or zero,
    // which NESL accepts, while an infinite result is an overflow, which it refuses.
    std::string s(lexeme);
    double v = 0;
    bool overflow = false;
    if (sized == Sized::F32) {
      float f = 0;
      auto r = std::from_chars(s.data(), s.data() + s.size(), f);
      if (r.ec == std::errc::result_out_of_range) f = std::strtof(s.c_str(), nullptr);
      overflow = std::isinf(f);
      v = f;
    } else {
      auto r = std::from_chars(s.data(), s.data() + s.size(), v);
      if (r.ec == std::errc::result_out_of_range) v = std::strtod(s.c_str(), nullptr);
      overflow = std::isinf(v);
    }
    if (overflow)
      return error_token(start, pos_,
                         fmt::format("float literal {} is too large for {}", text_.substr(start, pos_ - start),
                                     sized == Sized::F32 ? "f32" : "a float"));
    Token& t = push(Tok::Float, start, pos_);
    t.float_value = v;
    t.sized = sized;
  }

  void lex_punct(size_t start, char c) {
    char n = at(pos_ + 1);
    auto one = [&](Tok k) {
      push(k, start, start + 1);
      pos_ = start + 1;
    };
    auto two = [&](Tok k) {
      push(k, start, start + 2);
      pos_ = start + 2;
    };
    auto cmu_only = [&](std::string_view tok) {
      error_token(start, start + tok.size(), fmt::format("'{}' is CMU NESL syntax that ndp does not support", tok));
    };
    switch (c) {
      case '-': return n == '>' ? two(Tok::Arrow) : one(Tok::Minus);
      case '+': return n == '+' ? two(Tok::PlusPlus) : one(Tok::Plus);
      case '<':
        if (n == '-') return two(Tok::LArrow);
        return n == '=' ? two(Tok::LessEq) : one(Tok::Less);
      case '>':
        if (n == '>') return cmu_only(">>");
        return n == '=' ? two(Tok::GreaterEq) : one(Tok::Greater);
      case '=':
        if (n == '>') return two(Tok::FatArrow);
        return n == '=' ? two(Tok::EqEq) : one(Tok::Equal);
      case '/': return n == '=' ? two(Tok::NotEq) : one(Tok::Slash);
      case ':':
        if (n == '=') return cmu_only(":=");
        return n == ':' ? two(Tok::ColonColon) : one(Tok::Colon);
      case '|':
        if (n == '=') return cmu_only("|=");
        return n == '|' ? two(Tok::BarBar) : one(Tok::Bar);
      case '&':
        if (n == '=') return cmu_only("&=");
        return cmu_only("&");
      case '!': return cmu_only("!");
      case '\'': return cmu_only("'");
      case '\\': return error_token(start, start + 1, "'\\' is allowed only inside a string literal");
      case '#': return one(Tok::Hash);
      case '(': return one(Tok::LParen);
      case ')': return one(Tok::RParen);
      case '*': return one(Tok::Star);
      case ',': return one(Tok::Comma);
      case ';': return one(Tok::Semi);
      case '@': return one(Tok::At);
      case '[': return one(Tok::LBracket);
      case ']': return one(Tok::RBracket);
      case '^': return one(Tok::Caret);
      case '{': return one(Tok::LBrace);
      case '}': return one(Tok::RBrace);
      case '?': return one(Tok::Question);
      case '$': return one(Tok::Dollar);
      default: {
        // A multi-byte UTF-8 character is one error, not one per byte.
        size_t end = start + 1;
        if (static_cast<unsigned char>(c) >= 0x80)
          while (end < text_.size() && static_cast<unsigned char>(text_[end]) >= 0x80) ++end;
        if (end > start + 1)
          return error_token(start, end,
                             fmt::format("unexpected non-ASCII characters '{}'", text_.substr(start, end - start)));
        return error_token(start, end, fmt::format("unexpected character {}", printable(c)));
      }
    }
  }
};

}  // namespace

LexResult lex(std::string_view text, uint32_t file, lang::DiagnosticEngine* diags) {
  return Lexer(text, file, diags).run();
}

size_t form_end(const std::vector<Token>& tokens, size_t start) {
  int depth = 0;
  int lets = 0;             // `let`s at depth 0 still waiting for their `in`
  bool in_context = false;  // after `::` of a signature or datatype, before `=`
  for (size_t i = start; i < tokens.size(); ++i) {
    switch (tokens[i].kind) {
      case Tok::End:
      case Tok::Dollar: return i;
      case Tok::LParen:
      case Tok::LBracket:
      case Tok::LBrace: ++depth; break;
      case Tok::RParen:
      case Tok::RBracket:
      case Tok::RBrace:
        if (depth > 0) --depth;
        break;
      case Tok::Let:
        if (depth == 0) ++lets;
        break;
      case Tok::In:
        if (depth == 0 && lets > 0) --lets;
        break;
      case Tok::ColonColon:
        if (depth == 0) in_context = true;
        break;
      case Tok::Equal:
        if (depth == 0) in_context = false;
        break;
      case Tok::Semi: {
        if (depth > 0 || lets > 0) break;
        // `:: a in number; b in any` separates context bindings; no form starts `NAME in`.
        bool binding_follows =
            i + 2 < tokens.size() && tokens[i + 1].kind == Tok::Ident && tokens[i + 2].kind == Tok::In;
        if (in_context && binding_follows) break;
        return i;
      }
      default: break;
    }
  }
  return tokens.size() - 1;
}

}  // namespace ndp::frontend
