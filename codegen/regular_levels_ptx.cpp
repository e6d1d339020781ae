// The kernels of regular levels (see regular_levels_ptx.h, Note [Regular levels] in
// flatten/flat_ir.h).
#include "codegen/regular_levels_ptx.h"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <span>
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

/// The map form's checks (see regular_levels_ptx.h); its element type.
const lang::Type* check_map_form(const flatten::RegularLevels& plan) {
  const flatten::KernelBody* map = plan.map.get();
  const std::vector<uint32_t>& input_parts = plan.input_parts;
  const std::vector<uint32_t>& child_outputs = plan.child_outputs;
  if (map == nullptr || map->instance_at_a_time() || map->can_fail() || map->inputs.empty() ||
      input_parts.size() != map->inputs.size() || child_outputs.empty())
    throw std::runtime_error("regular levels of a map that loops, can fail, or lacks inputs or children");
  const lang::Type* elem = map->inputs[0];
  for (const lang::Type* t : map->inputs)
    if (t != elem) throw std::runtime_error("regular levels of a map whose inputs differ in type");
  for (uint32_t part : input_parts)
    if (part >= child_outputs.size()) throw std::runtime_error("regular levels reading a part past the children");
  for (uint32_t o : child_outputs)
    if (o >= map->outputs.size() || map->nodes.at(map->outputs[o]).type != elem)
      throw std::runtime_error("regular levels whose child is no output of the argument's type");
  return elem;
}

/// `levels` of the map form's levels in place in `mem` (a block's count elements), from length
/// `length` (an i32) down, a barrier after each.
void emit_block_levels(llvm::IRBuilder<>& b, const flatten::RegularLevels& plan, llvm::Type* et, llvm::Value* mem,
                       llvm::Value* count, llvm::Value* length, llvm::Value* levels, llvm::Value* tid, llvm::Value* ntid);

/// i / m and i - (i / m)·m of i32s.
std::pair<llvm::Value*, llvm::Value*> divide(llvm::IRBuilder<>& b, llvm::Value* t, llvm::Value* m) {
  llvm::Value* i = b.CreateUDiv(t, m);
  return {i, b.CreateSub(t, b.CreateMul(i, m))};
}

void emit_block_levels(llvm::IRBuilder<>& b, const flatten::RegularLevels& plan, llvm::Type* et, llvm::Value* mem,
                       llvm::Value* count, llvm::Value* length, llvm::Value* levels, llvm::Value* tid, llvm::Value* ntid) {
  const auto k = static_cast<uint32_t>(plan.child_outputs.size());
  llvm::Value* cur = b.CreateAlloca(b.getInt32Ty());
  b.CreateStore(length, cur);
  llvm::Value* pairs = b.CreateUDiv(count, b.getInt64(k));
  counted_loop(b, b.getInt64(0), levels, b.getInt64(1), [&](llvm::Value*) {
    llvm::Value* l = b.CreateLoad(b.getInt32Ty(), cur);
    llvm::Value* m32 = b.CreateUDiv(l, b.getInt32(k));
    counted_loop(b, tid, pairs, ntid, [&](llvm::Value* t) {
      auto [i, j] = divide(b, b.CreateTrunc(t, b.getInt32Ty()), m32);
      emit_pair(b, *plan.map, plan.input_parts, plan.child_outputs, et, mem, mem, b.CreateAdd(b.CreateMul(i, l), j), m32);
    });
    block_barrier(b);
    b.CreateStore(m32, cur);
  });
}

/// The position (an i32) that element w of an instance of length l = k·m (i32s) takes in the
/// ascent's permutation, within the instance.
llvm::Value* piece_source(llvm::IRBuilder<>& b, std::span<const flatten::RegularLevels::Piece> pieces, llvm::Value* w,
                          llvm::Value* m) {
  auto [p, j] = divide(b, w, m);
  llvm::Value* at = nullptr;
  for (size_t q = pieces.size(); q-- > 0;) {
    const flatten::RegularLevels::Piece& piece = pieces[q];
    llvm::Value* within = piece.reversed ? b.CreateSub(b.CreateSub(m, b.getInt32(1)), j) : j;
    llvm::Value* from = b.CreateAdd(b.CreateMul(b.getInt32(piece.child), m), within);
    at = at == nullptr ? from : b.CreateSelect(b.CreateICmpEQ(p, b.getInt32(static_cast<uint32_t>(q))), from, at);
  }
  return at;
}

}  // namespace

std::string compile_regular_levels_ptx(const flatten::RegularLevels& plan, bool in_block) {
  const bool ascent = plan.callee != nullptr;
  const lang::Type* elem = check_map_form(ascent ? *plan.callee : plan);
  if (ascent) {
    std::vector<bool> seen(plan.parts.size(), false);
    for (const flatten::RegularLevels::Piece& p : plan.pieces) {
      if (p.child >= seen.size() || seen[p.child]) throw std::runtime_error("an ascent whose pieces are not its children once each");
      seen[p.child] = true;
    }
    if (plan.pieces.size() != plan.parts.size()) throw std::runtime_error("an ascent whose pieces are not its children once each");
  }
  std::unique_ptr<llvm::TargetMachine> tm = nvptx_machine();
  llvm::LLVMContext ctx;
  llvm::Module m("ndp_regular_levels", ctx);
  m.setTargetTriple(kNvptxTriple);
  m.setDataLayout(tm->createDataLayout());
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* ptr = b.getPtrTy();
  // (total or pairs, src, dst, then: m or l; L, levels, tile; tile, levels, table)
  std::vector<llvm::Type*> params{i64, ptr, ptr, i64};
  if (in_block) params.insert(params.end(), {i64, ascent ? ptr : i64});
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), params, false), llvm::Function::ExternalLinkage,
                                    "ndp_kernel", m);
  annotate(fn, "kernel", 1);
  if (in_block) annotate(fn, "maxntidx", 1024);  // launched with up to 1024 threads: registers for that many
  llvm::Type* et = storage_type(ctx, elem);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value* src = b.CreateAddrSpaceCast(fn->getArg(1), b.getPtrTy(1));
  llvm::Value* dst = b.CreateAddrSpaceCast(fn->getArg(2), b.getPtrTy(1));
  llvm::Value* tid = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  llvm::Value* ntid = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  llvm::Value* ctaid = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  const auto k = static_cast<uint32_t>(plan.parts.size());
  if (!in_block && !ascent) {
    llvm::Value* t = b.CreateAdd(b.CreateMul(ctaid, ntid), tid);
    emit_when(b, b.CreateICmpSLT(t, fn->getArg(0)), [&] {
      llvm::Value* m32 = b.CreateTrunc(fn->getArg(3), b.getInt32Ty());
      auto [i, j] = divide(b, b.CreateTrunc(t, b.getInt32Ty()), m32);
      emit_pair(b, *plan.map, plan.input_parts, plan.child_outputs, et, src, dst,
                b.CreateAdd(b.CreateMul(i, b.CreateMul(m32, b.getInt32(k))), j), m32);
    });
  } else if (!in_block) {  // an ascent level's permutation, a thread an element
    llvm::Value* e = b.CreateAdd(b.CreateMul(ctaid, ntid), tid);
    emit_when(b, b.CreateICmpSLT(e, fn->getArg(0)), [&] {
      llvm::Value* l = b.CreateTrunc(fn->getArg(3), b.getInt32Ty());
      auto [i, w] = divide(b, b.CreateTrunc(e, b.getInt32Ty()), l);
      llvm::Value* from = b.CreateAdd(b.CreateMul(i, l), piece_source(b, plan.pieces, w, b.CreateUDiv(l, b.getInt32(k))));
      b.CreateStore(b.CreateLoad(et, b.CreateGEP(et, src, b.CreateZExt(from, i64))), b.CreateGEP(et, dst, e));
    });
  } else {
    llvm::Value* total = fn->getArg(0);
    llvm::Value* shared = dynamic_shared(m);
    llvm::Value* tile = ascent ? fn->getArg(3) : fn->getArg(5);
    llvm::Value* start = b.CreateMul(ctaid, tile);
    llvm::Value* count = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, tile, b.CreateSub(total, start));
    copy_range_by_block(b, {et}, {src}, start, {shared}, count, tid, ntid);
    block_barrier(b);
    llvm::Value* result = shared;
    if (!ascent) {
      emit_block_levels(b, plan, et, shared, count, b.CreateTrunc(fn->getArg(3), b.getInt32Ty()), fn->getArg(4), tid, ntid);
    } else {
      // Two halves of tile elements: each ascent level permutes from one into the other, then
      // runs the callee's levels there.
      llvm::Value* other = b.CreateGEP(et, shared, tile);
      llvm::Value* levels = fn->getArg(4);
      llvm::Value* table = b.CreateAddrSpaceCast(fn->getArg(5), b.getPtrTy(1));
      counted_loop(b, b.getInt64(0), levels, b.getInt64(1), [&](llvm::Value* a) {
        llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(a, b.getInt64(1)), b.getInt64(0));
        llvm::Value* from = b.CreateSelect(odd, other, shared);
        llvm::Value* to = b.CreateSelect(odd, shared, other);
        llvm::Value* l = b.CreateLoad(b.getInt32Ty(), b.CreateGEP(b.getInt32Ty(), table, b.CreateMul(a, b.getInt64(2))));
        llvm::Value* callee_levels = b.CreateSExt(
            b.CreateLoad(b.getInt32Ty(), b.CreateGEP(b.getInt32Ty(), table, b.CreateAdd(b.CreateMul(a, b.getInt64(2)), b.getInt64(1)))),
            i64);
        llvm::Value* m32 = b.CreateUDiv(l, b.getInt32(k));
        counted_loop(b, tid, count, ntid, [&](llvm::Value* e) {
          auto [i, w] = divide(b, b.CreateTrunc(e, b.getInt32Ty()), l);
          llvm::Value* at = b.CreateAdd(b.CreateMul(i, l), piece_source(b, plan.pieces, w, m32));
          b.CreateStore(b.CreateLoad(et, b.CreateGEP(et, from, b.CreateZExt(at, i64))), b.CreateGEP(et, to, e));
        });
        block_barrier(b);
        emit_block_levels(b, *plan.callee, et, to, count, l, callee_levels, tid, ntid);
      });
      // After an odd number of levels the tile is in the second half.
      result = b.CreateSelect(b.CreateICmpNE(b.CreateAnd(levels, b.getInt64(1)), b.getInt64(0)), other, shared);
    }
    copy_range_by_block(b, {et}, {result}, b.getInt64(0), {b.CreateGEP(et, dst, start)}, count, tid, ntid);
  }
  b.CreateRetVoid();
  link_libdevice(m, "ndp_kernel");
  verify(m);
  optimize(m, *tm);
  return emit_ptx(m, *tm);
}

}  // namespace ndp::codegen
