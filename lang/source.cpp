// Source buffers, line tables and span arithmetic.
#include "lang/source.h"

#include <algorithm>

namespace ndp::lang {

Span Span::cover(Span a, Span b) {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  return Span{a.file, std::min(a.begin, b.begin), std::max(a.end, b.end)};
}

uint32_t SourceManager::add(std::string name, std::string text, LineCol origin) {
  auto buf = std::make_unique<Buffer>();
  buf->name = std::move(name);
  buf->origin = origin;
  buf->text = std::move(text);
  buf->line_starts.push_back(0);
  for (uint32_t i = 0; i < buf->text.size(); ++i)
    if (buf->text[i] == '\n') buf->line_starts.push_back(i + 1);
  buffers_.push_back(std::move(buf));
  return static_cast<uint32_t>(buffers_.size());
}

const SourceManager::Buffer& SourceManager::buffer(uint32_t file) const { return *buffers_.at(file - 1); }

LineCol SourceManager::origin(uint32_t file) const { return buffer(file).origin; }

std::string_view SourceManager::name(uint32_t file) const { return buffer(file).name; }
std::string_view SourceManager::text(uint32_t file) const { return buffer(file).text; }

LineCol SourceManager::line_col(Span span) const {
  const Buffer& b = buffer(span.file);
  auto it = std::upper_bound(b.line_starts.begin(), b.line_starts.end(), span.begin);
  uint32_t line = static_cast<uint32_t>(it - b.line_starts.begin());
  return LineCol{line, span.begin - b.line_starts[line - 1] + 1};
}

LineCol SourceManager::position(Span span) const {
  const LineCol origin = buffer(span.file).origin;
  LineCol lc = line_col(span);
  if (lc.line == 1) lc.col += origin.col - 1;  // only the first line starts inside a line
  lc.line += origin.line - 1;
  return lc;
}

std::string_view SourceManager::line_text(uint32_t file, uint32_t offset) const {
  const Buffer& b = buffer(file);
  auto it = std::upper_bound(b.line_starts.begin(), b.line_starts.end(), offset);
  uint32_t start = *(it - 1);
  uint32_t end = start;
  while (end < b.text.size() && b.text[end] != '\n') ++end;
  return std::string_view(b.text).substr(start, end - start);
}

std::string_view SourceManager::slice(Span span) const {
  return std::string_view(buffer(span.file).text).substr(span.begin, span.end - span.begin);
}

}  // namespace ndp::lang
