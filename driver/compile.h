// `ndp compile`: a program compiled ahead of time into files a C++ program links (Note
// [Compiled images] in flatten/compiled_image.h).
#pragma once

#include <string>
#include <vector>

namespace ndp::driver {

/// The stages `--emit` can stop at, in pipeline order; All writes the object and the header.
enum class EmitStage { Core, Flat, Llvm, Ptx, Cubin, Fatbin, Obj, Header, All };

struct CompileOptions {
  std::string input;               // the .ndp file
  std::string output;              // NAME: the files are NAME.o, NAME.h, ... (path without extension)
  EmitStage emit = EmitStage::All;
  bool cpu_only = false;           // --target=cpu: host code only, for the cpu backend
  std::vector<std::string> exports;  // the functions to export; empty: every function of the file
  std::string cpu = "x86-64-v3";   // the host CPU of the object's kernels (LLVM name, or native)
};

/// "core" ... "header"; false for an unknown name.
bool parse_emit_stage(const std::string& name, EmitStage* out);

/// Compiles; diagnostics go to standard error. Writes the stage's files whole or not at all.
/// Returns the exit status (0, 1 for errors in the program, 2 for unusable options or files).
int compile_program(const CompileOptions& o);

}  // namespace ndp::driver
