// A loop kernel's rows in its block's shared memory (Note [Staged rows]).
#include "codegen/staged_rows.h"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include <algorithm>

#include "codegen/block_memory.h"
#include "codegen/kernel_ir.h"

namespace ndp::codegen {

namespace {

uint64_t size_of(llvm::Type* t) { return t->getPrimitiveSizeInBits() / 8; }

/// `count` elements of type t into to[0, count), thread `thread` of `threads` (i64s) storing its
/// share: zeros where `zeroed` (Note [Zeroed rows]), else from[from_start..] (a staged row's
/// copy, or a sourced one's: Note [Sourced rows]).
void start_range(llvm::IRBuilder<>& b, llvm::Type* t, bool zeroed, llvm::Value* from, llvm::Value* from_start,
                 llvm::Value* to, llvm::Value* count, llvm::Value* thread, llvm::Value* threads) {
  if (zeroed) zero_range_by_block(b, t, to, count, thread, threads);
  else copy_range_by_block(b, {t}, {from}, from_start, {to}, count, thread, threads);
}

}  // namespace

StagedRows::StagedRows(llvm::IRBuilder<>& b, const flatten::KernelBody& k,
                       std::vector<flatten::KernelBody::StagedSeq> staged, llvm::Value* n,
                       std::function<llvm::Value*(uint32_t)> seq_pointer,
                       std::function<llvm::Value*(uint32_t, llvm::Value*)> input_at, int lanes, uint64_t zeroed,
                       std::function<llvm::Value*(uint32_t)> source_of)
    : b_(b), k_(k), staged_(std::move(staged)), global_(std::move(seq_pointer)) {
  auto source = [&](uint32_t j) -> llvm::Value* { return source_of ? source_of(j) : nullptr; };
  llvm::Module& m = *b.GetInsertBlock()->getModule();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());
  thread_ = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  threads_ = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  llvm::Value* blocks = special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x);
  per_block_ = b.CreateUDiv(b.CreateAdd(n, b.CreateSub(blocks, b.getInt64(1))), blocks);
  llvm::Value* first = b.CreateMul(special_register(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), per_block_);
  // Thread r < per_block writes record r; the lanes of group g run instance first + g.
  llvm::Value* record_instance = b.CreateAdd(first, thread_);
  llvm::Value* recorded = b.CreateICmpULT(thread_, per_block_);  // this thread writes a record
  llvm::Value* record_runs = b.CreateAnd(recorded, b.CreateICmpSLT(record_instance, n));
  slot_ = lanes > 1 ? b.CreateUDiv(thread_, b.getInt64(lanes)) : thread_;  // this thread's instance's record
  lane_ = lanes > 1 ? b.CreateURem(thread_, b.getInt64(lanes)) : b.getInt64(0);
  lanes_ = lanes;
  instance_ = b.CreateAdd(first, slot_, "instance");
  has_instance_ = b.CreateICmpULT(slot_, per_block_);
  runs_ = b.CreateAnd(has_instance_, b.CreateICmpSLT(instance_, n));
  shared_ = b.CreateAddrSpaceCast(dynamic_shared(m), b.getPtrTy());
  const uint64_t fields = 1 + 2 * staged_.size();
  data_at_ = align_up(b, b.CreateMul(per_block_, b.getInt64(8 * fields)), 16);
  llvm::Value* room = dynamic_shared_bytes(b);
  fits_ = entry.CreateAlloca(b.getInt1Ty(), nullptr, "staged");
  b.CreateStore(b.getFalse(), fits_);
  for (uint32_t s = 0; s < staged_.size(); ++s) {
    const uint32_t q = staged_[s].seq;
    for (uint32_t c = 0; c < k.seqs[q].components.size(); ++c) {
      const uint32_t j = static_cast<uint32_t>(k.seq_pointer(q)) + 1 + c;
      components_.push_back({s, j, storage_type(b.getContext(), k.seqs[q].components[c]), entry.CreateAlloca(i64),
                             q < 64 && (zeroed >> q & 1) != 0, source(j)});
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
        llvm::Value* me = b_.CreateSelect(record_runs, record_instance, b_.getInt64(0));  // a record past n reads instance 0
        llvm::Value* id = row.kind == flatten::KernelNode::Kind::Instance ? me : input_at(row.input, me);
        const RowSpan span = row_span(b_, global_(static_cast<uint32_t>(k.seq_pointer(staged_[s].seq))), id);
        llvm::Value* length = b_.CreateSelect(record_runs, span.length, b_.getInt64(0));
        b_.CreateStore(span.start, field(thread_, 1 + 2 * s));
        b_.CreateStore(length, field(thread_, 2 + 2 * s));
        for (const Component& c : components_)
          if (c.slot == s) bytes = b_.CreateAdd(bytes, align_up(b_, b_.CreateMul(length, b_.getInt64(size_of(c.type))), 8));
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
      if (lanes_ == 1)
        each_row([&](const Component& c, llvm::Value* at, llvm::Value* start, llvm::Value* length) {
          start_range(b_, c.type, c.zeroed, starts_as(c), start, b_.CreateGEP(b_.getInt8Ty(), shared_, at), length, thread_,
                      threads_);
        });
      // This instance's rows: element e of a row is at its place + (e - start)·size, from a
      // base that the row's own offsets index (shared_pointer). A warp an instance copies its
      // own rows (Note [Staged rows]).
      when(has_instance_, [&] {
        own_rows([&](const Component& c, llvm::Value* at, llvm::Value* start, llvm::Value* length) {
          b_.CreateStore(b_.CreateSub(at, b_.CreateMul(start, b_.getInt64(size_of(c.type)))), c.base);
          if (lanes_ == 1) return;
          start_range(b_, c.type, c.zeroed, starts_as(c), start, b_.CreateGEP(b_.getInt8Ty(), shared_, at), length, lane_,
                      b_.getInt64(lanes_));
        });
      });
    });
  });
  // Component `pointer` (of type t) of this instance's row of staged sequence s, zeroed in
  // global memory by the instance's lanes, or copied there from `from` (Note [Sourced rows]).
  auto start_in_global = [&](const flatten::KernelBody::StagedSeq& s, llvm::Type* t, uint32_t pointer, llvm::Value* from) {
    const flatten::KernelNode& row = k.nodes[s.row];
    llvm::Value* id = row.kind == flatten::KernelNode::Kind::Instance ? instance_ : input_at(row.input, instance_);
    const RowSpan span = row_span(b_, global_(static_cast<uint32_t>(k.seq_pointer(s.seq))), id);
    start_range(b_, t, from == nullptr, from, span.start, b_.CreateGEP(t, global_(pointer), span.start), span.length, lane_,
                b_.getInt64(lanes_));
  };
  // Zeroed or sourced rows a warp's loop does not stage (its own-slot rows) start in global
  // memory, coalesced.
  for (const flatten::KernelBody::StagedSeq& s : k.staged_seqs()) {
    const bool here = std::any_of(staged_.begin(), staged_.end(), [&](const auto& t) { return t.seq == s.seq; });
    const bool zeroes = s.seq < 64 && (zeroed >> s.seq & 1);
    const uint32_t first = static_cast<uint32_t>(k.seq_pointer(s.seq)) + 1;
    if (here || (!zeroes && source(first) == nullptr)) continue;
    when(runs_, [&] {
      for (uint32_t c = 0; c < k.seqs[s.seq].components.size(); ++c)
        start_in_global(s, storage_type(b_.getContext(), k.seqs[s.seq].components[c]), first + c,
                        zeroes ? nullptr : source(first + c));
    });
  }
  // A block whose rows stay in global memory starts its instances' zeroed and sourced rows there.
  if (std::any_of(components_.begin(), components_.end(), [](const Component& c) { return c.zeroed || c.source; })) {
    when(b_.CreateAnd(b_.CreateNot(fits()), runs_), [&] {
      for (const Component& c : components_)
        if (c.zeroed || c.source) start_in_global(staged_[c.slot], c.type, c.pointer, c.zeroed ? nullptr : c.source);
    });
  }
  barrier();
}

llvm::Value* StagedRows::starts_as(const Component& c) { return c.source != nullptr ? c.source : global_(c.pointer); }

llvm::Value* StagedRows::fits() { return b_.CreateLoad(b_.getInt1Ty(), fits_); }

llvm::Value* StagedRows::shared_pointer(uint32_t j) {
  for (const Component& c : components_) {
    if (c.pointer != j) continue;
    // The base may lie before the window (a row's global offsets are large): its distance is
    // negative, and the body's addresses come back into the window in 64-bit arithmetic.
    llvm::Value* base = b_.CreateLoad(b_.getInt64Ty(), c.base);
    return b_.CreateGEP(b_.getInt8Ty(), dynamic_shared(*b_.GetInsertBlock()->getModule()), base);
  }
  return global_(j);
}

void StagedRows::write_back() {
  barrier();
  when(b_.CreateLoad(b_.getInt1Ty(), fits_), [&] {
    auto back = [&](const Component& c, llvm::Value* at, llvm::Value* start, llvm::Value* length) {
      if (!k_.seqs[staged_[c.slot].seq].written) return;
      if (lanes_ == 1)
        copy(c.type, b_.CreateGEP(b_.getInt8Ty(), shared_, at), b_.getInt64(0), global_(c.pointer), start, length);
      else
        copy_range_by_block(b_, {c.type}, {b_.CreateGEP(b_.getInt8Ty(), shared_, at)}, b_.getInt64(0),
                            {b_.CreateGEP(c.type, global_(c.pointer), start)}, length, lane_, b_.getInt64(lanes_));
    };
    if (lanes_ == 1) each_row(back);
    else when(has_instance_, [&] { own_rows(back); });
  });
}

llvm::Value* StagedRows::field(llvm::Value* r, uint32_t f) {
  const uint64_t fields = 1 + 2 * staged_.size();
  llvm::Value* at = b_.CreateAdd(b_.CreateMul(r, b_.getInt64(fields)), b_.getInt64(f));
  return b_.CreateGEP(b_.getInt64Ty(), shared_, at);
}

void StagedRows::rows_of(llvm::Value* r, const RowBody& body) {
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Value* at = b_.CreateAdd(data_at_, b_.CreateLoad(i64, field(r, 0)));
  for (const Component& c : components_) {
    llvm::Value* start = b_.CreateLoad(i64, field(r, 1 + 2 * c.slot));
    llvm::Value* length = b_.CreateLoad(i64, field(r, 2 + 2 * c.slot));
    body(c, at, start, length);
    at = b_.CreateAdd(at, align_up(b_, b_.CreateMul(length, b_.getInt64(size_of(c.type))), 8));
  }
}

void StagedRows::each_row(const RowBody& body) {
  counted_loop(b_, b_.getInt64(0), per_block_, b_.getInt64(1), [&](llvm::Value* r) { rows_of(r, body); });
}

void StagedRows::own_rows(const RowBody& body) { rows_of(slot_, body); }

void StagedRows::copy(llvm::Type* t, llvm::Value* from, llvm::Value* from_start, llvm::Value* to, llvm::Value* to_start,
                      llvm::Value* count) {
  copy_range_by_block(b_, {t}, {from}, from_start, {b_.CreateGEP(t, to, to_start)}, count, thread_, threads_);
}

void StagedRows::when(llvm::Value* cond, const std::function<void()>& body) { emit_when(b_, cond, body); }

void StagedRows::barrier() { block_barrier(b_); }

}  // namespace ndp::codegen
