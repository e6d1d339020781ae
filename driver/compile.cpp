// `ndp compile` (compile.h): load the file, prepare each exported function as the embedding API
// does (`f(ARG)`, flattened), then write the stage asked for.
#include "driver/compile.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/kernel_object.h"
#include "driver/compile_gpu.h"
#include "driver/cpp_header.h"
#include "driver/embedded_session.h"
#include "flatten/compiled_image.h"
#include "flatten/kernel_abi.h"
#include "include/ndp/ndp.hpp"
#include "lang/diagnostics.h"

namespace ndp::driver {

namespace fs = std::filesystem;

bool parse_emit_stage(const std::string& name, EmitStage* out) {
  static const std::pair<const char*, EmitStage> names[] = {
      {"core", EmitStage::Core},   {"flat", EmitStage::Flat},     {"llvm", EmitStage::Llvm},
      {"ptx", EmitStage::Ptx},     {"cubin", EmitStage::Cubin},   {"fatbin", EmitStage::Fatbin},
      {"obj", EmitStage::Obj},     {"header", EmitStage::Header}};
  for (const auto& [n, s] : names)
    if (name == n) {
      *out = s;
      return true;
    }
  return false;
}

namespace {

/// The output's base name as a C identifier (the symbols' and the namespace's name).
std::string symbol_of(const std::string& output) {
  std::string s = fs::path(output).filename().string();
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "_" + s;
  return s;
}

/// Files written whole or not at all: each goes to a temporary name first, and all are renamed
/// into place together once everything succeeded.
class Outputs {
 public:
  ~Outputs() {
    for (const auto& [tmp, path] : files_) fs::remove_all(tmp, ec_);
  }
  bool add(const std::string& path, const std::string& bytes) {
    std::string tmp = path + ".tmp" + std::to_string(::getpid());
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    files_.emplace_back(tmp, path);
    if (!out) {
      std::fprintf(stderr, "ndp: cannot write %s\n", path.c_str());
      return false;
    }
    return true;
  }
  /// A folder of files, made under a temporary name and renamed into place like a file.
  bool add_folder(const std::string& path, const std::vector<std::pair<std::string, std::string>>& files) {
    std::string tmp = path + ".tmp" + std::to_string(::getpid());
    fs::create_directories(tmp, ec_);
    files_.emplace_back(tmp, path);
    for (const auto& [name, bytes] : files) {
      std::ofstream f(fs::path(tmp) / name, std::ios::binary);
      f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!f) {
        std::fprintf(stderr, "ndp: cannot write %s\n", path.c_str());
        return false;
      }
    }
    return true;
  }
  bool commit() {
    for (const auto& [tmp, path] : files_) {
      if (fs::is_directory(path, ec_)) fs::remove_all(path, ec_);  // a folder output replaces the old one
      fs::rename(tmp, path, ec_);
      if (ec_) {
        std::fprintf(stderr, "ndp: cannot write %s: %s\n", path.c_str(), ec_.message().c_str());
        return false;
      }
    }
    files_.clear();
    return true;
  }

 private:
  std::vector<std::pair<std::string, std::string>> files_;
  std::error_code ec_;
};

}  // namespace

int compile_program(const CompileOptions& o) {
  bool gpu_stage = o.emit == EmitStage::Ptx || o.emit == EmitStage::Cubin || o.emit == EmitStage::Fatbin;
  if (o.cpu_only && gpu_stage) {
    std::fprintf(stderr, "ndp: compile: --emit=ptx|cubin|fatbin are GPU stages; --target=cpu has none\n");
    return 2;
  }
  std::ifstream in(o.input, std::ios::binary);
  std::error_code ec;
  if (!in || fs::is_directory(o.input, ec)) {
    std::fprintf(stderr, "ndp: cannot read %s\n", o.input.c_str());
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();

  // Top-level assignments run now, on the interpreter; their values go into the image.
  EmbeddedSession session(Backend::Interp, stdout);
  try {
    session.compile(o.input, text.str());
  } catch (const ndp::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }

  const lang::core::Program& core = session.core();
  std::vector<uint32_t> exported;
  if (o.exports.empty()) {
    exported = session.user_functions();
  } else {
    for (const std::string& name : o.exports) {
      std::optional<uint32_t> id = session.lookup(name);
      if (!id || core.globals[*id]->kind != lang::core::Global::Kind::Function) {
        std::fprintf(stderr, "ndp: %s defines no function '%s' to export\n", o.input.c_str(), name.c_str());
        return 2;
      }
      exported.push_back(*id);
    }
  }
  if (exported.empty()) {
    std::fprintf(stderr, "ndp: %s defines no function to export\n", o.input.c_str());
    return 1;
  }

  // Each exported function needs one type, and one the C++ header can spell.
  bool ok = true;
  std::vector<HeaderFunction> header_fns;
  for (uint32_t id : exported) {
    const lang::core::Function& fn = core.globals[id]->fn;
    const lang::TypeScheme& scheme = core.globals[id]->scheme;
    if (!scheme.is_mono()) {
      std::fputs(session
                     .error_text(fn.span, fmt::format("function '{}' is polymorphic ({}): an exported function needs one "
                                                      "type; give it a signature, e.g. `function {}(...) : {} = ...`, "
                                                      "or leave it out of --export",
                                                      fn.name, lang::type_to_string(scheme), fn.name,
                                                      "[int] -> [int]"))
                     .c_str(),
                 stderr);
      ok = false;
      continue;
    }
    std::optional<HeaderFunction> h = header_function(fn);
    if (!h) {
      std::fputs(session
                     .error_text(fn.span, fmt::format("function '{}' has type {}, which the C++ header cannot express "
                                                      "(streams, functions and datatypes cannot cross it)",
                                                      fn.name, lang::type_to_string(scheme)))
                     .c_str(),
                 stderr);
      ok = false;
      continue;
    }
    h->signature = lang::type_to_string(scheme);
    h->place = session.place(fn.span);
    header_fns.push_back(std::move(*h));
  }
  if (!ok) return 1;

  std::vector<std::shared_ptr<const EmbeddedSession::Entry>> entries;
  std::vector<const flatten::CompiledEntry*> entry_ptrs;
  try {
    for (uint32_t id : exported) {
      const lang::Type* t = core.globals[id]->scheme.type;
      entries.push_back(session.entry(id, t->a, t->b));
      entry_ptrs.push_back(entries.back().get());
    }
  } catch (const ndp::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }

  std::string symbol = symbol_of(o.output);
  Outputs out;
  try {
    codegen::ObjectContents object;
    object.symbol = symbol;
    object.cpu = o.cpu;
    object.host_kernels = flatten::image_kernels(entry_ptrs);
    std::vector<GpuModule> modules;
    if (!o.cpu_only && (gpu_stage || o.emit == EmitStage::Obj || o.emit == EmitStage::All)) {
      modules = gpu_modules(session.types(), entry_ptrs);
      if (o.emit != EmitStage::Ptx) assemble_gpu_modules(modules);
      for (const GpuModule& m : modules) object.gpu_modules.emplace_back(m.key, m.fatbin);
    }
    std::string image;
    switch (o.emit) {
      case EmitStage::Core: {
        std::string dump;
        for (uint32_t id : exported) dump += lang::core::dump_function(core, core.globals[id]->fn) + "\n";
        ok = out.add(o.output + ".core", dump);
        break;
      }
      case EmitStage::Flat: {
        std::string dump;
        for (const auto& e : entries) dump += "// " + e->name + "\n" + flatten::print_program(e->flat) + "\n";
        ok = out.add(o.output + ".flat", dump);
        break;
      }
      case EmitStage::Llvm: ok = out.add(o.output + ".ll", codegen::object_ir(object)); break;
      case EmitStage::Ptx: {
        // One listing of every module, each a whole PTX program of its own.
        std::string listing;
        for (const GpuModule& m : modules) listing += "// ---- module " + m.key + "\n" + m.ptx + "\n";
        ok = out.add(o.output + ".ptx", listing);
        break;
      }
      case EmitStage::Cubin:
      case EmitStage::Fatbin: {
        // One file a module in the folder NAME.cubin or NAME.fatbin, named by its key's hash.
        bool cubin = o.emit == EmitStage::Cubin;
        std::vector<std::pair<std::string, std::string>> files;
        for (const GpuModule& m : modules)
          files.emplace_back(flatten::stable_hash_hex(m.key) + (cubin ? ".cubin" : ".fatbin"), cubin ? m.cubin : m.fatbin);
        ok = out.add_folder(o.output + (cubin ? ".cubin" : ".fatbin"), files);
        break;
      }
      case EmitStage::Header: ok = out.add(o.output + ".h", header_text(symbol, o.input, header_fns, o.cpu_only)); break;
      case EmitStage::Obj:
      case EmitStage::All:
        image = session.image(entry_ptrs);
        object.image = image;
        ok = out.add(o.output + ".o", codegen::compile_object(object));
        if (ok && o.emit == EmitStage::All) ok = out.add(o.output + ".h", header_text(symbol, o.input, header_fns, o.cpu_only));
        break;
    }
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "ndp: compile: %s\n", e.what());
    return 1;
  }
  return ok && out.commit() ? 0 : 2;
}

}  // namespace ndp::driver
