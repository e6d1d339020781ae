// A compiled program as bytes: what `ndp compile` embeds in its output and the AOT runtime
// (exec/api) reads back, without the front end.
//
// Note [Compiled images]
// An image holds everything running the program's exported functions needs:
// * the entries: per exported function its flattened call `f(ARG)` (Flat IR), the global ARG
//   the call binds (exec/host/bound_global.h), and its argument and result types;
// * the types they mention (user datatypes included), and the global variables their Global
//   statements read, with their values (computed when the program was compiled);
// * the source buffers, so that a runtime error is reported with its line and caret as in the
//   REPL (the standard library's buffers keep their names and ids but not their text: its
//   errors are reported at the user's call, Note [Executor errors]).
// The bytes are little-endian and start with a magic word and fingerprints of the primitive and
// Flat IR tables: an image is read only by the ndp version that wrote it (`read_image` says so
// otherwise). Pointers become indices into tables (types, data definitions, kernel bodies).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flatten/flat_ir.h"
#include "lang/core.h"
#include "lang/source.h"

namespace ndp::flatten {

struct CompiledEntry {
  std::string name;                   // the function's source name
  uint32_t argument = 0;              // the global each call binds
  const lang::Type* arg_type = nullptr;
  const lang::Type* result_type = nullptr;
  Program flat;                       // f(ARG), flattened
};

/// One buffer of the session's SourceManager, in id order.
struct SourceBuffer {
  std::string name;
  std::string text;                   // empty for the standard library's buffers
  lang::LineCol origin{1, 1};
};

struct CompiledImage {
  std::vector<SourceBuffer> sources;  // ids 1, 2, ...
  uint32_t library_files = 0;         // buffers 1..library_files are the standard library
  std::vector<CompiledEntry> entries;
};

/// The bytes of an image of `entries`, whose types and globals belong to `core`.
std::string write_image(const lang::core::Program& core, const std::vector<SourceBuffer>& sources,
                        uint32_t library_files, std::span<const CompiledEntry* const> entries);

/// Reads an image into `core` (fresh: its types and globals are created here). Throws
/// std::runtime_error naming what is wrong (not an image, another ndp version, truncated).
CompiledImage read_image(std::string_view bytes, lang::core::Program& core);

/// The kernel bodies of the entries, each once (what `ndp compile` compiles ahead).
std::vector<const KernelBody*> image_kernels(std::span<const CompiledEntry* const> entries);

}  // namespace ndp::flatten
