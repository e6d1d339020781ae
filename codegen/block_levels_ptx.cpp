// Note [Compiled block levels] (codegen/block_levels_ptx.h): the engine's bitcode with one
// program made constant, optimised and printed as PTX.
#include "codegen/block_levels_ptx.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>

#include <set>
#include <stdexcept>

#include "codegen/block_levels_engine.h"
#include "codegen/nvptx.h"

namespace ndp::codegen {

namespace bl = runtime::gpu::block_levels;

namespace {

constexpr const char* kEntry = "ndp_block_levels_compiled";

/// Gives the external array `name` of m the bytes [data, data + size) as its constant value.
void define_array(llvm::Module& m, const char* name, const void* data, size_t size) {
  llvm::GlobalVariable* decl = m.getGlobalVariable(name);
  if (!decl) throw std::runtime_error(std::string("the block-levels engine's bitcode declares no ") + name);
  const auto* bytes = static_cast<const uint8_t*>(data);
  llvm::Constant* init = llvm::ConstantDataArray::get(m.getContext(), llvm::ArrayRef<uint8_t>(bytes, bytes + size));
  auto* def = new llvm::GlobalVariable(m, init->getType(), true, llvm::GlobalValue::InternalLinkage, init, "",
                                       nullptr, llvm::GlobalValue::NotThreadLocal, decl->getAddressSpace());
  def->setAlignment(llvm::Align(8));
  decl->replaceAllUsesWith(def);
  decl->eraseFromParent();
  def->setName(name);
}

/// Defines `ndp_bl_program(engine)`: statement pc a block that calls ndp_bl_op_at(engine, pc)
/// and goes on to the statement it names (one of those that can follow pc), returns true on
/// kDone and false on kFailed or past the last statement (as Engine::run_loop).
void define_program(llvm::Module& m, const bl::Program& p) {
  llvm::LLVMContext& ctx = m.getContext();
  llvm::Function* program = m.getFunction("ndp_bl_program");
  llvm::Function* op_at = m.getFunction("ndp_bl_op_at");
  if (!program || !op_at || !program->isDeclaration())
    throw std::runtime_error("the block-levels engine's bitcode lacks ndp_bl_program or ndp_bl_op_at");
  llvm::IRBuilder<> b(ctx);
  auto* done = llvm::BasicBlock::Create(ctx, "done", program);
  auto* failed = llvm::BasicBlock::Create(ctx, "failed", program);
  std::vector<llvm::BasicBlock*> at(static_cast<size_t>(p.n_ops));
  for (auto& block : at) block = llvm::BasicBlock::Create(ctx, "statement", program);
  b.SetInsertPoint(done);
  b.CreateRet(b.getInt1(true));
  b.SetInsertPoint(failed);
  b.CreateRet(b.getInt1(false));
  llvm::Value* engine = program->getArg(0);
  for (int pc = 0; pc < p.n_ops; ++pc) {
    const bl::Op& op = p.ops[pc];
    std::set<int64_t> next{pc + 1};
    if (op.kind == bl::kJump || op.kind == bl::kJumpIfZero) next.insert(op.imm);
    if (op.kind == bl::kPlaceChildren) next = {0};
    b.SetInsertPoint(at[static_cast<size_t>(pc)]);
    llvm::Value* r = b.CreateCall(op_at, {engine, b.getInt32(pc)});
    llvm::SwitchInst* sw = b.CreateSwitch(r, failed, static_cast<unsigned>(next.size() + 1));
    sw->addCase(b.getInt32(bl::kDone), done);
    for (int64_t k : next)
      if (k >= 0 && k < p.n_ops) sw->addCase(b.getInt32(static_cast<int32_t>(k)), at[static_cast<size_t>(k)]);
  }
  // The entry: the first statement (blocks were created after `done` and `failed`).
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", program, done);
  b.SetInsertPoint(entry);
  b.CreateBr(p.n_ops > 0 ? at[0] : failed);
}

/// The first round: the always-inline functions inlined, then each function simplified (its
/// reads of the program folded, its statements' switches with them) and the parts no statement
/// calls any more dropped.
void fold_statement_kinds(llvm::Module& m, llvm::TargetMachine& tm) {
  Passes passes(&tm);
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  fpm.addPass(llvm::EarlyCSEPass());
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::SimplifyCFGPass());
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::AlwaysInlinerPass());
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.addPass(llvm::GlobalDCEPass());
  mpm.run(m, passes.mam);
}

}  // namespace

bool has_block_levels_engine() { return kBlockLevelsEngineCount > 0; }

std::string compile_block_levels_ptx(const bl::Program& p, int32_t n_nodes, int32_t n_lists) {
  if (!has_block_levels_engine()) throw std::runtime_error("this ndp was built without the block-levels engine's bitcode");
  llvm::LLVMContext ctx;
  llvm::StringRef bitcode(reinterpret_cast<const char*>(kBlockLevelsEngine[0].data), kBlockLevelsEngine[0].size);
  llvm::Expected<std::unique_ptr<llvm::Module>> parsed =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "block_levels_engine.bc"), ctx);
  if (!parsed) throw std::runtime_error("reading the block-levels engine: " + llvm::toString(parsed.takeError()));
  llvm::Module& m = **parsed;

  define_array(m, "ndp_bl_ops", p.ops, sizeof(bl::Op) * static_cast<size_t>(p.n_ops));
  define_array(m, "ndp_bl_nodes", p.nodes, sizeof(bl::Node) * static_cast<size_t>(n_nodes));
  define_array(m, "ndp_bl_lists", p.lists, sizeof(int32_t) * static_cast<size_t>(n_lists));
  define_array(m, "ndp_bl_vars", p.vars, sizeof(bl::Var) * static_cast<size_t>(p.n_vars));
  const int64_t scalars[] = {p.n_ops, p.n_vars, p.n_slots, p.param, p.at, p.next_at, p.rec_ids,
                             p.tmp0,  p.tmp1,   p.tmp2,    p.in_bytes, p.out_bytes, p.cap};
  define_array(m, "ndp_bl_scalars", scalars, sizeof scalars);
  define_program(m, p);

  // Two rounds of inlining. First every function but the statements' parts (NDP_BL_PART, marked
  // noinline) goes into the kernel, and each statement's kind folds, so that it calls only its
  // own part; then the parts go in too, and the optimiser specialises them to their statements.
  for (llvm::Function& f : m) {
    if (f.isDeclaration() || f.getName() == kEntry) continue;
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
    f.removeFnAttr(llvm::Attribute::OptimizeNone);
    if (!f.hasFnAttribute(llvm::Attribute::NoInline)) f.addFnAttr(llvm::Attribute::AlwaysInline);
  }
  if (llvm::GlobalVariable* used = m.getGlobalVariable("llvm.compiler.used")) used->eraseFromParent();
  std::unique_ptr<llvm::TargetMachine> tm = nvptx_machine();
  m.setDataLayout(tm->createDataLayout());
  verify(m);
  fold_statement_kinds(m, *tm);
  for (llvm::Function& f : m) {
    if (f.isDeclaration() || f.getName() == kEntry) continue;
    f.removeFnAttr(llvm::Attribute::NoInline);
    f.addFnAttr(llvm::Attribute::AlwaysInline);
  }
  // O1: O2 spends twice the time (half of it in CorrelatedValuePropagation over the one large
  // function) for PTX of the same size.
  optimize(m, *tm, llvm::OptimizationLevel::O1);
  return emit_ptx(m, *tm);
}

}  // namespace ndp::codegen
