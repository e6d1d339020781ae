// compile_object: an LLVM module of the image (bytes), the host loops of the kernels with their
// table, and the fatbinary, emitted as an object file by the host's target machine.
#include "codegen/kernel_object.h"

// GCC pairs LLVM's `new GlobalVariable` (a User's sized operator new) with the wrong delete in
// its exception path, a false alarm that is not ours to fix.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

#include <llvm/IR/Constants.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "codegen/host_loop.h"
#include "flatten/kernel_abi.h"

namespace ndp::codegen {

namespace {

std::unique_ptr<llvm::TargetMachine> host_target(const std::string& cpu) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  std::string triple = llvm::sys::getDefaultTargetTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) throw std::runtime_error("no LLVM target for " + triple + ": " + error);
  std::string name = cpu == "native" ? llvm::sys::getHostCPUName().str() : cpu;
  std::string features;
  if (cpu == "native") {
    for (const auto& [feature, on] : llvm::sys::getHostCPUFeatures()) features += (on ? "+" : "-") + feature.str() + ",";
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(triple, name, features, options, llvm::Reloc::PIC_));
  if (!tm) throw std::runtime_error("LLVM cannot make code for the CPU '" + cpu + "'");
  // LLVM takes any name and falls back to a generic CPU; a misspelt name must not do that silently.
  if (cpu != "native" && !tm->getMCSubtargetInfo()->isCPUStringValid(name))
    throw std::runtime_error("unknown CPU '" + cpu + "' (an LLVM CPU name such as x86-64-v2, x86-64-v3, znver4, or native)");
  return tm;
}

/// `const unsigned char NAME[]` and `const unsigned long NAME_size`.
void add_bytes(llvm::Module& m, const std::string& name, std::string_view bytes) {
  llvm::LLVMContext& c = m.getContext();
  llvm::Constant* data = llvm::ConstantDataArray::getRaw(llvm::StringRef(bytes.data(), bytes.size()), bytes.size(),
                                                         llvm::Type::getInt8Ty(c));
  auto* g = new llvm::GlobalVariable(m, data->getType(), true, llvm::GlobalValue::ExternalLinkage, data, name);
  g->setAlignment(llvm::Align(64));
  new llvm::GlobalVariable(m, llvm::Type::getInt64Ty(c), true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantInt::get(llvm::Type::getInt64Ty(c), bytes.size()), name + "_size");
}

std::unique_ptr<llvm::Module> build(llvm::LLVMContext& c, const ObjectContents& o, llvm::TargetMachine& tm) {
  auto m = std::make_unique<llvm::Module>("ndp_" + o.symbol, c);
  m->setDataLayout(tm.createDataLayout());
  m->setTargetTriple(tm.getTargetTriple().str());
  add_bytes(*m, "ndp_image_" + o.symbol, o.image);
  llvm::Type* i64 = llvm::Type::getInt64Ty(c);
  llvm::Type* ptr = llvm::PointerType::get(c, 0);
  auto* entry = llvm::StructType::get(c, {i64, ptr});
  std::vector<llvm::Constant*> rows;
  for (const flatten::KernelBody* k : o.host_kernels) {
    std::string key = k->key();
    std::string fn = "ndp_kernel_" + o.symbol + "_" + flatten::stable_hash_hex(key);
    emit_loop(*m, *k, fn);
    m->getFunction(fn)->setLinkage(llvm::GlobalValue::InternalLinkage);
    rows.push_back(llvm::ConstantStruct::get(entry, {llvm::ConstantInt::get(i64, flatten::stable_hash(key)),
                                                     m->getFunction(fn)}));
  }
  auto* table_type = llvm::ArrayType::get(entry, rows.size());
  new llvm::GlobalVariable(*m, table_type, true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(table_type, rows), "ndp_kernels_" + o.symbol);
  new llvm::GlobalVariable(*m, i64, true, llvm::GlobalValue::ExternalLinkage, llvm::ConstantInt::get(i64, rows.size()),
                           "ndp_kernels_" + o.symbol + "_count");
  // The GPU modules: {key as a C string, fatbinary (aligned as the driver wants)}.
  auto* module_entry = llvm::StructType::get(c, {ptr, ptr});
  std::vector<llvm::Constant*> modules;
  for (size_t i = 0; i < o.gpu_modules.size(); ++i) {
    const auto& [key, fatbin] = o.gpu_modules[i];
    llvm::Constant* key_text = llvm::ConstantDataArray::getString(c, key);
    auto* key_global = new llvm::GlobalVariable(*m, key_text->getType(), true, llvm::GlobalValue::PrivateLinkage,
                                                key_text, "ndp_gpu_key");
    llvm::Constant* bytes = llvm::ConstantDataArray::getRaw(llvm::StringRef(fatbin.data(), fatbin.size()),
                                                            fatbin.size(), llvm::Type::getInt8Ty(c));
    auto* image = new llvm::GlobalVariable(*m, bytes->getType(), true, llvm::GlobalValue::PrivateLinkage, bytes,
                                           "ndp_gpu_image");
    image->setAlignment(llvm::Align(64));
    modules.push_back(llvm::ConstantStruct::get(module_entry, {key_global, image}));
  }
  auto* modules_type = llvm::ArrayType::get(module_entry, modules.size());
  new llvm::GlobalVariable(*m, modules_type, true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(modules_type, modules), "ndp_gpu_modules_" + o.symbol);
  new llvm::GlobalVariable(*m, i64, true, llvm::GlobalValue::ExternalLinkage, llvm::ConstantInt::get(i64, modules.size()),
                           "ndp_gpu_modules_" + o.symbol + "_count");
  std::string verr;
  llvm::raw_string_ostream vs(verr);
  if (llvm::verifyModule(*m, &vs)) throw std::runtime_error("invalid object module: " + verr);
  optimise(*m, &tm);
  return m;
}

}  // namespace

std::string compile_object(const ObjectContents& o) {
  std::unique_ptr<llvm::TargetMachine> tm = host_target(o.cpu);
  llvm::LLVMContext c;
  std::unique_ptr<llvm::Module> m = build(c, o, *tm);
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw std::runtime_error("LLVM cannot write object files for this target");
  pm.run(*m);
  return std::string(buffer.data(), buffer.size());
}

std::string object_ir(const ObjectContents& o) {
  std::unique_ptr<llvm::TargetMachine> tm = host_target(o.cpu);
  llvm::LLVMContext c;
  ObjectContents without_data = o;
  without_data.image = {};  // the bytes would drown the code
  for (auto& [key, fatbin] : without_data.gpu_modules) fatbin = {};
  std::unique_ptr<llvm::Module> m = build(c, without_data, *tm);
  std::string text;
  llvm::raw_string_ostream os(text);
  m->print(os, nullptr);
  return text;
}

}  // namespace ndp::codegen
