// `ndp compile`: option parsing; the work is driver/compile.cpp's.
#include <cstdio>
#include <sstream>

#include "cli/commands.h"
#include "driver/compile.h"

namespace ndp::cli {

namespace {

const char* kCompileUsage =
    "usage: ndp compile FILE -o NAME [OPTIONS]\n"
    "\n"
    "Compiles FILE ahead of time for a C++ program: NAME.o (the program, its kernels for the CPU and\n"
    "its GPU modules as fatbinaries: sm_90 SASS and compute_90 PTX) and NAME.h (a typed C++ function\n"
    "for each exported function). Link them with ndp's runtime, without the compiler:\n"
    "  c++ -std=c++20 main.cpp NAME.o $(pkg-config --cflags --libs ndp-runtime)\n"
    "Top-level assignments of FILE run now; their values are compiled in.\n"
    "\n"
    "options:\n"
    "  -o NAME              the output files' path without extension (default: FILE's name)\n"
    "  --emit=STAGE         stop at a stage and write its file: core (NAME.core, typed Core IR),\n"
    "                       flat (NAME.flat, Flat IR), llvm (NAME.ll, the object's LLVM IR), ptx\n"
    "                       (NAME.ptx, every GPU module), cubin or fatbin (a folder NAME.cubin or\n"
    "                       NAME.fatbin, a file a module), obj (NAME.o), header (NAME.h)\n"
    "  --target=cuda|cpu    cuda (default): the program runs on the GPU where there is one, else on\n"
    "                       the CPU (needs the CUDA toolkit's ptxas and fatbinary to compile);\n"
    "                       cpu: host code only\n"
    "  --export=F,G,...     the functions to export (default: every function FILE defines); each\n"
    "                       needs one type: a polymorphic one needs a signature\n"
    "                       (`function f(a) : [int] -> [int] = ...`)\n"
    "  --cpu=NAME           the CPU the kernels are compiled for: an LLVM CPU name (default\n"
    "                       x86-64-v3: AVX2, as any x86-64 server since 2013 or 2017 for AMD has)\n"
    "                       or native (this machine's; x86-64-v2 for older CPUs)\n";

int usage(const std::string& msg) {
  std::fprintf(stderr, "ndp compile: %s\n%s", msg.c_str(), kCompileUsage);
  return 2;
}

}  // namespace

int compile_command(const std::vector<std::string>& args) {
  driver::CompileOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kCompileUsage, stdout);
      return 0;
    }
    if (a == "-o") {
      if (i + 1 == args.size()) return usage("-o needs a NAME");
      o.output = args[++i];
    } else if (a.rfind("--emit=", 0) == 0) {
      if (!driver::parse_emit_stage(a.substr(7), &o.emit)) return usage("unknown stage '" + a.substr(7) + "'");
    } else if (a.rfind("--target=", 0) == 0) {
      std::string t = a.substr(9);
      if (t != "cpu" && t != "cuda") return usage("unknown target '" + t + "' (expected cpu or cuda)");
      o.cpu_only = t == "cpu";
    } else if (a.rfind("--export=", 0) == 0) {
      std::istringstream names(a.substr(9));
      for (std::string n; std::getline(names, n, ',');)
        if (!n.empty()) o.exports.push_back(n);
    } else if (a.rfind("--cpu=", 0) == 0) {
      o.cpu = a.substr(6);
    } else if (a.size() > 1 && a[0] == '-') {
      return usage("unknown option '" + a + "'");
    } else if (o.input.empty()) {
      o.input = a;
    } else {
      return usage("one FILE at a time");
    }
  }
  if (o.input.empty()) return usage("no FILE to compile");
  if (o.output.empty()) {
    o.output = o.input;
    for (const char* ext : {".ndp", ".nesl"})
      if (o.output.size() > std::string(ext).size() && o.output.ends_with(ext)) o.output.resize(o.output.size() - std::string(ext).size());
  }
  return driver::compile_program(o);
}

}  // namespace ndp::cli
