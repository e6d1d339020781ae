// A loop kernel's rows in its block's shared memory (Note [Staged rows]).
#include "codegen/staged_rows.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include "codegen/kernel_ir.h"

namespace ndp::codegen {

namespace {

/// The block's dynamic shared memory (`extern __shared__`), one per module.
llvm::GlobalVariable* dynamic_shared(llvm::Module& m) {
  const char* name = "ndp_staged_rows";
  if (llvm::GlobalVariable* g = m.getGlobalVariable(name, true)) return g;
  auto* t = llvm::ArrayType::get(llvm::Type::getInt8Ty(m.getContext()), 0);
  auto* g = new llvm::GlobalVariable(m, t, false, llvm::GlobalValue::ExternalLinkage, nullptr, name, nullptr,
                                     llvm::GlobalValue::NotThreadLocal, 3);
  g->setAlignment(llvm::Align(16));
  return g;
}

/// %dynamic_smem_size, the shared bytes this launch gave each block, as an i64.
llvm::Value* dynamic_shared_bytes(llvm::IRBuilder<>& b) {
  auto* fty = llvm::FunctionType::get(b.getInt32Ty(), false);
  llvm::InlineAsm* read = llvm::InlineAsm::get(fty, "mov.u32 $0, %dynamic_smem_size;", "=r", /*hasSideEffects=*/false);
  return b.CreateZExt(b.CreateCall(fty, read), b.getInt64Ty());
}

llvm::Value* align(llvm::IRBuilder<>& b, llvm::Value* bytes, uint64_t to) {
  return b.CreateAnd(b.CreateAdd(bytes, b.getInt64(to - 1)), b.getInt64(~(to - 1)));
}

uint64_t size_of(llvm::Type* t) { return t->getPrimitiveSizeInBits() / 8; }

/// A loop over i = from, from + step, ... below `to` (i64s), body(i) inside; returns the i it
/// ended at (the first not below `to`).
llvm::Value* loop(llvm::IRBuilder<>& b, llvm::Value* from, llvm::Value* to, llvm::Value* step,
                  const std::function<void(llvm::Value*)>& body) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* before = b.GetInsertBlock();
  auto* head = llvm::BasicBlock::Create(b.getContext(), "stage_loop", fn);
  auto* inside = llvm::BasicBlock::Create(b.getContext(), "stage_loop_body", fn);
  auto* done = llvm::BasicBlock::Create(b.getContext(), "stage_loop_done", fn);
  b.CreateBr(head);
  b.SetInsertPoint(head);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(from, before);
  b.CreateCondBr(b.CreateICmpSLT(i, to), inside, done);
  b.SetInsertPoint(inside);
  body(i);
  i->addIncoming(b.CreateAdd(i, step), b.GetInsertBlock());
  b.CreateBr(head);
  b.SetInsertPoint(done);
  return i;
}

}  // namespace

StagedRows::StagedRows(llvm::IRBuilder<>& b, const flatten::KernelBody& k,
                       std::vector<flatten::KernelBody::StagedSeq> staged, llvm::Value* n,
                       std::function<llvm::Value*(uint32_t)> seq_pointer,
                       std::function<llvm::Value*(uint32_t, llvm::Value*)> input_at)
    : b_(b), k_(k), staged_(std::move(staged)), global_(std::move(seq_pointer)) {
  llvm::Module& m = *b.GetInsertBlock()->getModule();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());
  thread_ = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  threads_ = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  llvm::Value* blocks = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x);
  per_block_ = b.CreateUDiv(b.CreateAdd(n, b.CreateSub(blocks, b.getInt64(1))), blocks);
  instance_ = b.CreateAdd(b.CreateMul(special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), per_block_), thread_, "instance");
  llvm::Value* recorded = b.CreateICmpULT(thread_, per_block_);  // this thread has a record
  runs_ = b.CreateAnd(recorded, b.CreateICmpSLT(instance_, n));
  shared_ = b.CreateAddrSpaceCast(dynamic_shared(m), b.getPtrTy());
  const uint64_t fields = 1 + 2 * staged_.size();
  data_at_ = align(b, b.CreateMul(per_block_, b.getInt64(8 * fields)), 16);
  llvm::Value* room = dynamic_shared_bytes(b);
  fits_ = entry.CreateAlloca(b.getInt1Ty(), nullptr, "staged");
  b.CreateStore(b.getFalse(), fits_);
  for (uint32_t s = 0; s < staged_.size(); ++s) {
    const uint32_t q = staged_[s].seq;
    for (uint32_t c = 0; c < k.seqs[q].components.size(); ++c) {
      const uint32_t j = static_cast<uint32_t>(k.seq_pointer(q)) + 1 + c;
      components_.push_back({s, j, storage_type(b.getContext(), k.seqs[q].components[c]), entry.CreateAlloca(b.getPtrTy())});
      b.CreateStore(global_(j), components_.back().base);
    }
  }
  llvm::AllocaInst* mine = entry.CreateAlloca(i64);  // the bytes of this instance's rows
  when(b.CreateICmpULE(data_at_, room), [&] {
    // Each instance's record: where each of its rows starts and its length (none past n),
    // and the bytes of all of them.
    when(recorded, [&] {
      llvm::Value* bytes = b_.getInt64(0);
      for (uint32_t s = 0; s < staged_.size(); ++s) {
        const flatten::KernelNode& row = k.nodes[staged_[s].row];
        llvm::Value* me = b_.CreateSelect(runs_, instance_, b_.getInt64(0));  // a record past n reads instance 0
        llvm::Value* id = row.kind == flatten::KernelNode::Kind::Instance ? me : input_at(row.input, me);
        const RowSpan span = row_span(b_, global_(static_cast<uint32_t>(k.seq_pointer(staged_[s].seq))), id);
        llvm::Value* length = b_.CreateSelect(runs_, span.length, b_.getInt64(0));
        b_.CreateStore(span.start, field(thread_, 1 + 2 * s));
        b_.CreateStore(length, field(thread_, 2 + 2 * s));
        for (const Component& c : components_)
          if (c.slot == s) bytes = b_.CreateAdd(bytes, align(b_, b_.CreateMul(length, b_.getInt64(size_of(c.type))), 8));
      }
      b_.CreateStore(bytes, field(thread_, 0));
      b_.CreateStore(bytes, mine);
    });
    // An inclusive scan of the bytes over the records (Hillis and Steele: log2 per_block rounds).
    llvm::AllocaInst* step = entry.CreateAlloca(i64);
    b_.CreateStore(b_.getInt64(1), step);
    llvm::Function* f = b_.GetInsertBlock()->getParent();
    auto* head = llvm::BasicBlock::Create(b_.getContext(), "scan", f);
    auto* body = llvm::BasicBlock::Create(b_.getContext(), "scan_round", f);
    auto* done = llvm::BasicBlock::Create(b_.getContext(), "scan_done", f);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::Value* d = b_.CreateLoad(i64, step);
    b_.CreateCondBr(b_.CreateICmpULT(d, per_block_), body, done);
    b_.SetInsertPoint(body);
    barrier();
    llvm::Value* adds = b_.CreateAnd(recorded, b_.CreateICmpUGE(thread_, d));
    llvm::AllocaInst* got = entry.CreateAlloca(i64);
    b_.CreateStore(b_.getInt64(0), got);
    when(adds, [&] { b_.CreateStore(b_.CreateLoad(i64, field(b_.CreateSub(thread_, d), 0)), got); });
    barrier();
    when(adds, [&] {
      llvm::Value* at = field(thread_, 0);
      b_.CreateStore(b_.CreateAdd(b_.CreateLoad(i64, at), b_.CreateLoad(i64, got)), at);
    });
    b_.CreateStore(b_.CreateShl(d, 1), step);
    b_.CreateBr(head);
    b_.SetInsertPoint(done);
    barrier();
    llvm::Value* total = b_.CreateLoad(i64, field(b_.CreateSub(per_block_, b_.getInt64(1)), 0));
    barrier();  // every thread has read the total from the last record
    // The records' bytes become where each instance's rows start.
    when(recorded, [&] {
      llvm::Value* at = field(thread_, 0);
      b_.CreateStore(b_.CreateSub(b_.CreateLoad(i64, at), b_.CreateLoad(i64, mine)), at);
    });
    barrier();
    llvm::Value* fits = b_.CreateICmpULE(b_.CreateAdd(data_at_, total), room);
    b_.CreateStore(fits, fits_);
    when(fits, [&] {
      each_row([&](const Component& c, llvm::Value* at, llvm::Value* start, llvm::Value* length) {
        copy(c.type, global_(c.pointer), start, b_.CreateGEP(b_.getInt8Ty(), shared_, at), b_.getInt64(0), length);
      });
      // This instance's rows: element e of a row is at its place + (e - start)·size, a base
      // that the row's own offsets index. The base lies outside the shared window, so it is
      // made as an integer: as a shared pointer (LLVM infers the address space of a pointer
      // made from a shared one) it would wrap in the window's 32 bits.
      when(recorded, [&] {
        llvm::Value* at = b_.CreateAdd(data_at_, b_.CreateLoad(i64, field(thread_, 0)));
        for (const Component& c : components_) {
          llvm::Value* start = b_.CreateLoad(i64, field(thread_, 1 + 2 * c.slot));
          llvm::Value* length = b_.CreateLoad(i64, field(thread_, 2 + 2 * c.slot));
          llvm::Value* moved = b_.CreateSub(at, b_.CreateMul(start, b_.getInt64(size_of(c.type))));
          llvm::Value* base = b_.CreateAdd(b_.CreatePtrToInt(shared_, i64), moved);
          b_.CreateStore(b_.CreateIntToPtr(base, b_.getPtrTy()), c.base);
          at = b_.CreateAdd(at, align(b_, b_.CreateMul(length, b_.getInt64(size_of(c.type))), 8));
        }
      });
    });
  });
  barrier();
}

llvm::Value* StagedRows::pointer(uint32_t j) {
  for (const Component& c : components_)
    if (c.pointer == j) return b_.CreateLoad(b_.getPtrTy(), c.base);
  return global_(j);
}

void StagedRows::write_back() {
  barrier();
  when(b_.CreateLoad(b_.getInt1Ty(), fits_), [&] {
    each_row([&](const Component& c, llvm::Value* at, llvm::Value* start, llvm::Value* length) {
      if (k_.seqs[staged_[c.slot].seq].written)
        copy(c.type, b_.CreateGEP(b_.getInt8Ty(), shared_, at), b_.getInt64(0), global_(c.pointer), start, length);
    });
  });
}

llvm::Value* StagedRows::field(llvm::Value* r, uint32_t f) {
  const uint64_t fields = 1 + 2 * staged_.size();
  llvm::Value* at = b_.CreateAdd(b_.CreateMul(r, b_.getInt64(fields)), b_.getInt64(f));
  return b_.CreateGEP(b_.getInt64Ty(), shared_, at);
}

void StagedRows::each_row(const std::function<void(const Component&, llvm::Value*, llvm::Value*, llvm::Value*)>& body) {
  llvm::Type* i64 = b_.getInt64Ty();
  loop(b_, b_.getInt64(0), per_block_, b_.getInt64(1), [&](llvm::Value* r) {
    llvm::Value* at = b_.CreateAdd(data_at_, b_.CreateLoad(i64, field(r, 0)));
    for (const Component& c : components_) {
      llvm::Value* start = b_.CreateLoad(i64, field(r, 1 + 2 * c.slot));
      llvm::Value* length = b_.CreateLoad(i64, field(r, 2 + 2 * c.slot));
      body(c, at, start, length);
      at = b_.CreateAdd(at, align(b_, b_.CreateMul(length, b_.getInt64(size_of(c.type))), 8));
    }
  });
}

void StagedRows::copy(llvm::Type* t, llvm::Value* from, llvm::Value* from_start, llvm::Value* to, llvm::Value* to_start,
                      llvm::Value* count) {
  // kUnroll loads a thread in flight before their stores: a load's latency is paid once for
  // all of them (a loop of one load and its store waits for each).
  constexpr int kUnroll = 8;
  llvm::Value* rounds = b_.CreateMul(threads_, b_.getInt64(kUnroll));
  llvm::Value* whole = b_.CreateSub(count, b_.CreateMul(threads_, b_.getInt64(kUnroll - 1)));  // e + 7·threads < count
  auto element = [&](llvm::Value* e) { return b_.CreateGEP(t, from, b_.CreateAdd(from_start, e)); };
  auto place = [&](llvm::Value* e) { return b_.CreateGEP(t, to, b_.CreateAdd(to_start, e)); };
  llvm::Value* rest = loop(b_, thread_, whole, rounds, [&](llvm::Value* e) {
    std::vector<llvm::Value*> xs;
    for (int u = 0; u < kUnroll; ++u) xs.push_back(b_.CreateLoad(t, element(b_.CreateAdd(e, b_.CreateMul(threads_, b_.getInt64(u))))));
    for (int u = 0; u < kUnroll; ++u) b_.CreateStore(xs[u], place(b_.CreateAdd(e, b_.CreateMul(threads_, b_.getInt64(u)))));
  });
  loop(b_, rest, count, threads_, [&](llvm::Value* e) { b_.CreateStore(b_.CreateLoad(t, element(e)), place(e)); });
}

void StagedRows::when(llvm::Value* cond, const std::function<void()>& body) {
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  auto* yes = llvm::BasicBlock::Create(b_.getContext(), "stage_if", fn);
  auto* join = llvm::BasicBlock::Create(b_.getContext(), "stage_join", fn);
  b_.CreateCondBr(cond, yes, join);
  b_.SetInsertPoint(yes);
  body();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
}

void StagedRows::barrier() { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

}  // namespace ndp::codegen
