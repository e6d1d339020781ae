// Source buffers and spans: every diagnostic and every AST/Core node points into a SourceManager.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ndp::lang {

/// A half-open byte range [begin, end) in one source buffer. file == 0 means "no location".
struct Span {
  uint32_t file = 0;
  uint32_t begin = 0;
  uint32_t end = 0;

  bool valid() const { return file != 0; }
  /// The smallest span covering both (same file assumed; an invalid side is ignored).
  static Span cover(Span a, Span b);
};

struct LineCol {
  uint32_t line = 0;  // 1-based
  uint32_t col = 0;   // 1-based, in bytes
};

/// Owns the text of every file and REPL input seen in a session, so spans stay valid for its
/// whole life (the REPL reports errors in functions defined many inputs ago).
class SourceManager {
 public:
  /// Adds a buffer and returns its id (never 0). `name` is what diagnostics print ("<stdin>").
  /// `origin` is where the buffer's first byte stands in that file, for a buffer cut from a
  /// larger text (a form read from standard input, a `%test` case of a file).
  uint32_t add(std::string name, std::string text, LineCol origin = {1, 1});

  std::string_view name(uint32_t file) const;
  /// The number of buffers (their ids are 1..count()).
  uint32_t count() const { return static_cast<uint32_t>(buffers_.size()); }
  /// Where buffer `file` starts in the file it was cut from (add's `origin`).
  LineCol origin(uint32_t file) const;
  std::string_view text(uint32_t file) const;
  /// The line and column of span.begin within its buffer (what a caret line is drawn from).
  LineCol line_col(Span span) const;
  /// The same within the file the buffer was cut from (origin applied): what diagnostics print.
  LineCol position(Span span) const;
  /// The full text of the line containing `offset`, without its newline.
  std::string_view line_text(uint32_t file, uint32_t offset) const;
  std::string_view slice(Span span) const;

 private:
  struct Buffer {
    std::string name;
    std::string text;
    std::vector<uint32_t> line_starts;
    LineCol origin;
  };
  std::vector<std::unique_ptr<Buffer>> buffers_;
  const Buffer& buffer(uint32_t file) const;
};

}  // namespace ndp::lang
