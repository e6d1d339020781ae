// The kernels of regular levels (see regular_levels_ptx.h, Note [Regular levels] in
// flatten/flat_ir.h).
#include "codegen/regular_levels_ptx.h"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "codegen/block_memory.h"
#include "codegen/kernel_ir.h"
#include "codegen/nvptx.h"

namespace ndp::codegen {

namespace {

/// One (instance, j) of a level in memory `mem` (elements of type et): the map's inputs loaded
/// from base + part·m (base = i·L + j, an i32), its child outputs stored at base + c·m. Every
/// load comes before every store, so the level may be computed in place.
void emit_pair(llvm::IRBuilder<>& b, const flatten::KernelBody& map, std::span<const uint32_t> input_parts,
               std::span<const uint32_t> child_outputs, llvm::Type* et, llvm::Value* from, llvm::Value* to, llvm::Value* base,
               llvm::Value* m) {
  auto at = [&](uint32_t part) { return b.CreateZExt(b.CreateAdd(base, b.CreateMul(b.getInt32(part), m)), b.getInt64Ty()); };
  InstanceValues v = emit_instance(
      b, map, b.CreateZExt(base, b.getInt64Ty()),
      [&](uint32_t q) -> llvm::Value* { return b.CreateLoad(et, b.CreateGEP(et, from, at(input_parts[q]))); },
      MathLibrary::Libdevice);
  for (size_t c = 0; c < child_outputs.size(); ++c)
    b.CreateStore(v.outputs.at(child_outputs[c]), b.CreateGEP(et, to, at(static_cast<uint32_t>(c))));
}

/// i / m and i - (i / m)·m of i32s.
std::pair<llvm::Value*, llvm::Value*> divide(llvm::IRBuilder<>& b, llvm::Value* t, llvm::Value* m) {
  llvm::Value* i = b.CreateUDiv(t, m);
  return {i, b.CreateSub(t, b.CreateMul(i, m))};
}

}  // namespace

std::string compile_regular_levels_ptx(const flatten::KernelBody& map, std::span<const uint32_t> input_parts,
                                       std::span<const uint32_t> child_outputs, bool in_block) {
  if (map.instance_at_a_time() || map.can_fail() || map.inputs.empty() || input_parts.size() != map.inputs.size() ||
      child_outputs.empty())
    throw std::runtime_error("regular levels of a map that loops, can fail, or lacks inputs or children");
  const lang::Type* elem = map.inputs[0];
  const auto k = static_cast<uint32_t>(child_outputs.size());
  for (const lang::Type* t : map.inputs)
    if (t != elem) throw std::runtime_error("regular levels of a map whose inputs differ in type");
  for (uint32_t part : input_parts)
    if (part >= k) throw std::runtime_error("regular levels reading a part past the children");
  for (uint32_t o : child_outputs)
    if (o >= map.outputs.size() || map.nodes.at(map.outputs[o]).type != elem)
      throw std::runtime_error("regular levels whose child is no output of the argument's type");
  std::unique_ptr<llvm::TargetMachine> tm = nvptx_machine();
  llvm::LLVMContext ctx;
  llvm::Module m("ndp_regular_levels", ctx);
  m.setTargetTriple(kNvptxTriple);
  m.setDataLayout(tm->createDataLayout());
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* ptr = b.getPtrTy();
  std::vector<llvm::Type*> params = in_block ? std::vector<llvm::Type*>{i64, ptr, ptr, i64, i64, i64}
                                             : std::vector<llvm::Type*>{i64, ptr, ptr, i64};
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), params, false), llvm::Function::ExternalLinkage,
                                    "ndp_kernel", m);
  llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(fn), llvm::MDString::get(ctx, "kernel"),
                          llvm::ValueAsMetadata::get(b.getInt32(1))};
  m.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, md));
  llvm::Type* et = storage_type(ctx, elem);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value* src = b.CreateAddrSpaceCast(fn->getArg(1), b.getPtrTy(1));
  llvm::Value* dst = b.CreateAddrSpaceCast(fn->getArg(2), b.getPtrTy(1));
  llvm::Value* tid = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  llvm::Value* ntid = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  llvm::Value* ctaid = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  llvm::Value* k32 = b.getInt32(k);
  if (!in_block) {
    llvm::Value* t = b.CreateAdd(b.CreateMul(ctaid, ntid), tid);
    emit_when(b, b.CreateICmpSLT(t, fn->getArg(0)), [&] {
      llvm::Value* m32 = b.CreateTrunc(fn->getArg(3), b.getInt32Ty());
      auto [i, j] = divide(b, b.CreateTrunc(t, b.getInt32Ty()), m32);
      emit_pair(b, map, input_parts, child_outputs, et, src, dst, b.CreateAdd(b.CreateMul(i, b.CreateMul(m32, k32)), j), m32);
    });
  } else {
    llvm::Value *total = fn->getArg(0), *length = fn->getArg(3), *levels = fn->getArg(4), *tile = fn->getArg(5);
    llvm::Value* shared = dynamic_shared(m);
    llvm::Value* start = b.CreateMul(ctaid, tile);
    llvm::Value* count = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, tile, b.CreateSub(total, start));
    llvm::Value* cur = b.CreateAlloca(b.getInt32Ty());
    b.CreateStore(b.CreateTrunc(length, b.getInt32Ty()), cur);
    copy_range_by_block(b, {et}, {src}, start, {shared}, count, tid, ntid);
    block_barrier(b);
    llvm::Value* pairs = b.CreateUDiv(count, b.getInt64(k));
    counted_loop(b, b.getInt64(0), levels, b.getInt64(1), [&](llvm::Value*) {
      llvm::Value* l = b.CreateLoad(b.getInt32Ty(), cur);
      llvm::Value* m32 = b.CreateUDiv(l, k32);
      counted_loop(b, tid, pairs, ntid, [&](llvm::Value* t) {
        auto [i, j] = divide(b, b.CreateTrunc(t, b.getInt32Ty()), m32);
        emit_pair(b, map, input_parts, child_outputs, et, shared, shared, b.CreateAdd(b.CreateMul(i, l), j), m32);
      });
      block_barrier(b);
      b.CreateStore(m32, cur);
    });
    copy_range_by_block(b, {et}, {shared}, b.getInt64(0), {b.CreateGEP(et, dst, start)}, count, tid, ntid);
  }
  b.CreateRetVoid();
  link_libdevice(m, "ndp_kernel");
  verify(m);
  optimize(m, *tm);
  return emit_ptx(m, *tm);
}

}  // namespace ndp::codegen
