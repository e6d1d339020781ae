// compile_ptx: a kernel body as an NVPTX kernel for sm_90, ptx_instances_per_thread instances a
// thread; compile_element_ptx: one output of a body as the element function of the consumer kernels.
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "codegen/kernel_ptx.h"
#include "codegen/kernel_ir.h"
#include "codegen/libdevice.h"
#include "codegen/nvptx.h"
#include "codegen/block_memory.h"
#include "codegen/block_rows.h"
#include "codegen/staged_rows.h"
#include "codegen/tiled_folds.h"
#include "flatten/kernel_abi.h"

namespace ndp::codegen {

using flatten::kElementWords;
using flatten::element_items;

namespace {

// Note [Math functions on the GPU]
// Kernels call libdevice's functions (__nv_exp, __nv_log, ...: kernel_ir.cpp with
// MathLibrary::Libdevice); sqrt, floor, ceil and trunc are LLVM intrinsics, which NVPTX emits as
// single correctly rounded instructions, as the host computes them. Before the PTX is emitted the
// functions a module calls are linked in from libdevice (embedded in ndp, codegen/libdevice.h),
// made internal and inlined, so that the PTX is the one entry without calls: an element function
// goes into a consumer program as its text (Note [Consumer programs]), which must not call
// through the stack. libdevice asks `__nvvm_reflect` for compile options; it is answered as nvcc
// answers by default: no flush-to-zero of denormals (__CUDA_FTZ 0), the target's __CUDA_ARCH.

/// The answer of __nvvm_reflect(`option`).
int reflect_answer(llvm::StringRef option) {
  if (option == "__CUDA_ARCH") return 900;
  return 0;  // __CUDA_FTZ, and any option libdevice may ask that nvcc leaves at 0
}

}  // namespace

bool has_libdevice() { return kLibdeviceCount > 0; }

namespace {

/// Inlines m's always-inline functions (the segment searches) where they are called.
void inline_always(llvm::Module& m) {
  Passes passes;
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::AlwaysInlinerPass());
  mpm.addPass(llvm::GlobalDCEPass());
  mpm.run(m, passes.mam);
}

}  // namespace

void link_libdevice(llvm::Module& m, const std::string& entry) { link_libdevice(m, std::vector<std::string>{entry}); }

void link_libdevice(llvm::Module& m, const std::vector<std::string>& entries) {
  bool calls = false;
  for (const llvm::Function& f : m)
    calls = calls || (f.isDeclaration() && f.getName().starts_with("__nv_"));
  if (!calls) return;
  if (kLibdeviceCount == 0)
    throw std::runtime_error("this ndp was built without libdevice (the CUDA toolkit's math library), so math "
                             "functions cannot be compiled for the GPU");
  llvm::StringRef bitcode(reinterpret_cast<const char*>(kLibdevice[0].data), kLibdevice[0].size);
  llvm::Expected<std::unique_ptr<llvm::Module>> lib =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "libdevice.10.bc"), m.getContext());
  if (!lib) throw std::runtime_error("reading libdevice: " + llvm::toString(lib.takeError()));
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded))
    throw std::runtime_error("linking libdevice failed");
  if (llvm::Function* reflect = m.getFunction("__nvvm_reflect")) {
    std::vector<llvm::CallInst*> calls_of_reflect;
    for (llvm::User* u : reflect->users())
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(u)) calls_of_reflect.push_back(call);
    for (llvm::CallInst* call : calls_of_reflect) {
      llvm::StringRef option;
      if (auto* g = llvm::dyn_cast<llvm::GlobalVariable>(call->getArgOperand(0)->stripPointerCasts()))
        if (auto* text = llvm::dyn_cast_or_null<llvm::ConstantDataSequential>(g->getInitializer()))
          option = text->isCString() ? text->getAsCString() : text->getAsString();
      call->replaceAllUsesWith(llvm::ConstantInt::get(call->getType(), reflect_answer(option)));
      call->eraseFromParent();
    }
  }
  for (llvm::Function& f : m) {
    if (f.isDeclaration() || std::find(entries.begin(), entries.end(), f.getName().str()) != entries.end()) continue;
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
    f.removeFnAttr(llvm::Attribute::NoInline);
    f.removeFnAttr(llvm::Attribute::OptimizeNone);
    f.addFnAttr(llvm::Attribute::AlwaysInline);
  }
  inline_always(m);
}

namespace {

/// An always-inline internal function of m named `name`, taking `args` int64s and giving one.
llvm::Function* int_helper(llvm::Module& m, const char* name, unsigned args) {
  llvm::Type* i64 = llvm::Type::getInt64Ty(m.getContext());
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(i64, std::vector<llvm::Type*>(args, i64), false),
                                    llvm::Function::InternalLinkage, name, m);
  fn->addFnAttr(llvm::Attribute::AlwaysInline);
  return fn;
}

/// fn's entry branching to a new block `regular` where c > 0 (segments of one length c), else to
/// a new block `irregular`; the builder is left at neither.
std::pair<llvm::BasicBlock*, llvm::BasicBlock*> branch_on_regular(llvm::IRBuilder<>& b, llvm::Function* fn, llvm::Value* c) {
  llvm::LLVMContext& ctx = fn->getContext();
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* regular = llvm::BasicBlock::Create(ctx, "regular", fn);
  auto* irregular = llvm::BasicBlock::Create(ctx, "irregular", fn);
  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateICmpSGT(c, b.getInt64(0)), regular, irregular);
  return {regular, irregular};
}

/// The segments' offsets at an address given as an int, as a pointer made in fn's entry block.
llvm::Value* offsets_base(llvm::IRBuilder<>& b, llvm::Function* fn, llvm::Value* offsets) {
  llvm::IRBuilder<> at_entry(fn->getEntryBlock().getTerminator());
  return at_entry.CreateIntToPtr(offsets, b.getPtrTy());
}

/// base[k], the segments' offsets never written while a kernel runs.
llvm::Value* offset_at(llvm::IRBuilder<>& b, llvm::Value* base, llvm::Value* k) {
  auto* at = b.CreateLoad(b.getInt64Ty(), b.CreateGEP(b.getInt64Ty(), base, k));
  at->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(b.getContext(), {}));
  return at;
}

/// `i64 ndp_segment_in(i64 offsets, i64 lo, i64 hi, i64 i)`: the last k in [lo, hi] with
/// offsets[k] <= i (offsets[lo] <= i), a binary search; past empty segments to the one holding i.
llvm::Function* define_segment_in(llvm::Module& m) {
  llvm::LLVMContext& ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Function* fn = int_helper(m, "ndp_segment_in", 4);
  llvm::Value *offsets = fn->getArg(0), *i = fn->getArg(3);
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* search = llvm::BasicBlock::Create(ctx, "search", fn);
  auto* step = llvm::BasicBlock::Create(ctx, "step", fn);
  auto* found = llvm::BasicBlock::Create(ctx, "found", fn);
  b.SetInsertPoint(entry);
  llvm::Value* base = b.CreateIntToPtr(offsets, b.getPtrTy());
  b.CreateBr(search);
  b.SetInsertPoint(search);
  llvm::PHINode* lo = b.CreatePHI(i64, 2, "lo");
  llvm::PHINode* hi = b.CreatePHI(i64, 2, "hi");
  lo->addIncoming(fn->getArg(1), entry);
  hi->addIncoming(fn->getArg(2), entry);
  b.CreateCondBr(b.CreateICmpSLT(lo, hi), step, found);
  b.SetInsertPoint(step);
  llvm::Value* mid = b.CreateAdd(lo, b.CreateLShr(b.CreateAdd(b.CreateSub(hi, lo), b.getInt64(1)), 1), "mid");
  llvm::Value* below = b.CreateICmpSLE(offset_at(b, base, mid), i);
  lo->addIncoming(b.CreateSelect(below, mid, lo), step);
  hi->addIncoming(b.CreateSelect(below, hi, b.CreateSub(mid, b.getInt64(1))), step);
  b.CreateBr(search);
  b.SetInsertPoint(found);
  b.CreateRet(lo);
  return fn;
}

/// `i64 ndp_segment_of(i64 offsets, i64 n, i64 c, i64 i)`: the segment holding element i of n
/// segments, i / c where they all have c > 0 elements, else searched for over the offsets.
llvm::Function* define_segment_of(llvm::Module& m, llvm::Function* segment_in) {
  llvm::IRBuilder<> b(m.getContext());
  llvm::Function* fn = int_helper(m, "ndp_segment_of", 4);
  llvm::Value *offsets = fn->getArg(0), *n = fn->getArg(1), *c = fn->getArg(2), *i = fn->getArg(3);
  auto [regular, search] = branch_on_regular(b, fn, c);
  b.SetInsertPoint(regular);
  b.CreateRet(b.CreateUDiv(i, c));
  b.SetInsertPoint(search);
  b.CreateRet(b.CreateCall(segment_in, {offsets, b.getInt64(0), b.CreateSub(n, b.getInt64(1)), i}));
  return fn;
}

/// The segments a walk passes before it searches instead (ndp_segment_from).
constexpr int kSegmentWalk = 8;

/// `i64 ndp_segment_from(i64 offsets, i64 n, i64 c, i64 i, i64 from)`: the same, where segment
/// `from` starts at or before i (a thread's earlier element): walking on from it, and searching
/// the rest once the walk passes kSegmentWalk segments.
llvm::Function* define_segment_from(llvm::Module& m, llvm::Function* segment_in) {
  llvm::LLVMContext& ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Function* fn = int_helper(m, "ndp_segment_from", 5);
  llvm::Value *offsets = fn->getArg(0), *n = fn->getArg(1), *c = fn->getArg(2), *i = fn->getArg(3), *from = fn->getArg(4);
  auto [regular, walk] = branch_on_regular(b, fn, c);
  llvm::BasicBlock* entry = &fn->getEntryBlock();
  llvm::Value* base = offsets_base(b, fn, offsets);
  auto* step = llvm::BasicBlock::Create(ctx, "step", fn);
  auto* next = llvm::BasicBlock::Create(ctx, "next", fn);
  auto* search = llvm::BasicBlock::Create(ctx, "search", fn);
  auto* found = llvm::BasicBlock::Create(ctx, "found", fn);
  b.SetInsertPoint(regular);
  b.CreateRet(b.CreateUDiv(i, c));
  b.SetInsertPoint(walk);
  llvm::PHINode* k = b.CreatePHI(i64, 2, "k");
  llvm::PHINode* steps = b.CreatePHI(i64, 2, "steps");
  k->addIncoming(from, entry);
  steps->addIncoming(b.getInt64(0), entry);
  llvm::Value* after = b.CreateAdd(k, b.getInt64(1));
  b.CreateCondBr(b.CreateICmpSLT(after, n), step, found);
  b.SetInsertPoint(step);
  b.CreateCondBr(b.CreateICmpSLE(offset_at(b, base, after), i), next, found);
  b.SetInsertPoint(next);
  llvm::Value* taken = b.CreateAdd(steps, b.getInt64(1));
  k->addIncoming(after, next);
  steps->addIncoming(taken, next);
  b.CreateCondBr(b.CreateICmpSLT(taken, b.getInt64(kSegmentWalk)), walk, search);
  b.SetInsertPoint(search);  // offsets[after] <= i
  b.CreateRet(b.CreateCall(segment_in, {offsets, after, b.CreateSub(n, b.getInt64(1)), i}));
  b.SetInsertPoint(found);
  b.CreateRet(k);
  return fn;
}

/// `i64 ndp_segment_start(i64 offsets, i64 c, i64 k)`: the first element of segment k, k·c where
/// every segment has c > 0 elements, else offsets[k]. Inlined where called.
llvm::Function* define_segment_start(llvm::Module& m) {
  llvm::IRBuilder<> b(m.getContext());
  llvm::Function* fn = int_helper(m, "ndp_segment_start", 3);
  llvm::Value *offsets = fn->getArg(0), *c = fn->getArg(1), *k = fn->getArg(2);
  auto [regular, stored] = branch_on_regular(b, fn, c);
  b.SetInsertPoint(regular);
  b.CreateRet(b.CreateMul(k, c));
  b.SetInsertPoint(stored);
  b.CreateRet(offset_at(b, b.CreateIntToPtr(offsets, b.getPtrTy()), k));
  return fn;
}

/// The segment helpers of a module that reads spread inputs, defined together the first time
/// one is asked for (the unused ones go with the optimiser's or the inliner's dead code).
struct SegmentHelpers {
  llvm::Function *of = nullptr, *from = nullptr, *start = nullptr;
  SegmentHelpers& in(llvm::Module& m) {
    if (of == nullptr) {
      llvm::Function* search = define_segment_in(m);
      of = define_segment_of(m, search);
      from = define_segment_from(m, search);
      start = define_segment_start(m);
    }
    return *this;
  }
  bool defined() const { return of != nullptr; }
};

/// The position in `gathered` of input j, or -1 when input j is read at the instance itself.
int gathered_slot(std::span<const GatheredInput> gathered, uint32_t j) {
  for (size_t g = 0; g < gathered.size(); ++g)
    if (gathered[g].input == j) return static_cast<int>(g);
  return -1;
}

/// The type a gathered input's positions are stored as (i32 where narrow).
llvm::Type* position_type(llvm::IRBuilder<>& b, const GatheredInput& g) {
  return g.narrow ? b.getInt32Ty() : b.getInt64Ty();
}

// Note [Regular rows in kernels]
// A sequence whose rows all have one length c, known to the host (a regular sequence: Note
// [Known values] in exec/cuda/device_vec.cpp, such as an even partition), has offsets i·c that
// the executor would otherwise fill (a launch) and the kernel read (8 bytes a row: as many
// bytes again as the elements of a segmented sum of rows of one). Such a kernel takes c in the
// offsets' parameter, and row_span computes a row's start. A sequence a loop writes in place
// qualifies too (a counting loop's buckets, dist(0, 256) in every instance: its written rows
// keep the shape they came in); an appended one does not (its slots have offsets of their
// own). The variant has its own key (kernel_key's "|regular"), so a compiled program without
// it runs the plain kernel on the filled offsets.

// Note [Streamed inputs beside gathers]
// An element function that gathers (x[c] in SpMV) reads its other inputs, and the positions,
// once each, in order: a stream far larger than L2 that would evict the gathered array, which is
// read at random and again and again. Nsight Compute on the SpMV of 2^20 rows of 16 nonzeros
// (H100): L2 at 85% of its throughput, 68% of L2 hits, DRAM moving 455 MB where the stream and
// one pass over x are 290 MB. So such a function loads its streams with ld.global.cs.nc
// (cache-streaming: evict-first in L1 and L2) and its gathers as before. A function without
// gathers has nothing to keep in L2 and loads as before.

/// ld.global.cs.nc of a t at the global address `at` (inline PTX: LLVM has no intrinsic for
/// the cache operator). One-byte values load into a 16-bit register, as PTX requires.
llvm::Value* streaming_load(llvm::IRBuilder<>& b, llvm::Type* t, llvm::Value* at) {
  const char* ptx_type = nullptr;
  const char* reg = nullptr;
  llvm::Type* reg_type = t;
  if (t->isDoubleTy()) ptx_type = "f64", reg = "d";
  else if (t->isFloatTy()) ptx_type = "f32", reg = "f";
  else if (t->isIntegerTy(64)) ptx_type = "u64", reg = "l";
  else if (t->isIntegerTy(32)) ptx_type = "u32", reg = "r";
  else if (t->isIntegerTy(8)) ptx_type = "u8", reg = "h", reg_type = b.getInt16Ty();
  else throw std::runtime_error("no streaming load for this element type");
  auto* fty = llvm::FunctionType::get(reg_type, {b.getInt64Ty()}, false);
  // Not volatile and no memory clobber: the inputs are not written while the kernel runs, so
  // the load is a pure function of its address, as the invariant loads are.
  llvm::InlineAsm* load = llvm::InlineAsm::get(fty, std::string("ld.global.cs.nc.") + ptx_type + " $0, [$1];",
                                               std::string("=") + reg + ",l", /*hasSideEffects=*/false);
  llvm::Value* v = b.CreateCall(fty, load, {b.CreatePtrToInt(at, b.getInt64Ty())});
  return reg_type == t ? v : b.CreateTrunc(v, t);
}

/// Whether parameter `param` is an array the loop writes (Note [Sequence state in loop kernels]),
/// the sequences' pointers starting at `seqs_at`.
bool written_pointer(const flatten::KernelBody& k, size_t param, size_t seqs_at) {
  for (uint32_t q = 0; q < k.seqs.size(); ++q) {
    const size_t first = seqs_at + k.seq_pointer(q);  // its offsets, then its components
    const size_t ncomp = k.seqs[q].components.size();
    if (k.seqs[q].written && param > first && param <= first + ncomp) return true;
    // An appended one's row lengths and slots (Note [Appended sequences in loop kernels]).
    if (k.seqs[q].appended && param >= first + 2 + ncomp && param <= first + 2 + 2 * ncomp) return true;
  }
  return false;
}

}  // namespace

std::string compile_ptx(const flatten::KernelBody& k, std::span<const GatheredInput> gathered, int lanes,
                        flatten::KernelForm form, flatten::RowForms rows) {
  const bool tiled = form == flatten::KernelForm::Tiled, split = form == flatten::KernelForm::SplitRows;
  for (uint32_t q = 0; q < 64; ++q)
    if ((rows.regular >> q & 1) && (q >= k.seqs.size() || k.seqs[q].appended))
      throw std::runtime_error("regular rows for a sequence the kernel lacks or appends to");
  if ((rows.zeroed & rows.sourced) != 0) throw std::runtime_error("rows both zeroed and sourced");
  for (uint32_t q = 0; q < 64; ++q) {
    if (!((rows.zeroed | rows.sourced) >> q & 1)) continue;
    const std::vector<flatten::KernelBody::StagedSeq>& staged = k.staged_seqs();
    if (q >= k.seqs.size() || !k.seqs[q].written || k.staged_seqs_on(lanes).empty() ||
        std::none_of(staged.begin(), staged.end(), [&](const flatten::KernelBody::StagedSeq& s) { return s.seq == q; }))
      throw std::runtime_error("zeroed or sourced rows for a sequence the kernel does not stage and write");
  }
  if (lanes < 1 || lanes > 1024 || (lanes & (lanes - 1)) != 0 || (lanes > 1 && !k.instance_at_a_time()))
    throw std::runtime_error("lanes that are not a power of two up to a block, or lanes for an elementwise kernel");
  // A loop on lanes is a multiprefix loop on a warp (Note [Multiprefix loops]): a warp an
  // instance, whose lanes store only where the instance is one of the launch's.
  const bool warp_loop = k.loop && lanes > 1;
  if (warp_loop && (lanes != 32 || !k.multiprefix() || form != flatten::KernelForm::Instances))
    throw std::runtime_error("a loop kernel on lanes that is not a multiprefix loop on a warp");
  std::optional<flatten::TiledFold> shape = tiled ? flatten::tiled_fold(k) : std::nullopt;
  if (tiled && (!shape || lanes > 1)) throw std::runtime_error("a tiled kernel of a body without a tiled fold, or on lanes");
  if (split && (lanes != flatten::kSplitLanes || !k.split_fold()))
    throw std::runtime_error("instances split over blocks without a block's lanes and one outer fold over a row");
  std::unique_ptr<llvm::TargetMachine> tm = nvptx_machine();
  llvm::LLVMContext ctx;
  llvm::Module m("ndp_kernel", ctx);
  m.setTargetTriple(kNvptxTriple);
  m.setDataLayout(tm->createDataLayout());
  llvm::IRBuilder<> b(ctx);
  std::vector<llvm::Type*> params{b.getInt64Ty()};
  // The positions of each gathered input that is not a broadcast follow the inputs: a pointer,
  // or an affine view's three int64s (c, stride, offset).
  std::vector<unsigned> position_param(gathered.size(), 0);
  size_t positions = 0;
  for (size_t g = 0; g < gathered.size(); ++g) {
    if (gathered[g].broadcast || gathered[g].iota) continue;
    if (gathered[g].segments_of > 0) {  // a spread over an earlier one's segments: its parameters
      if (gathered[g].segments_of > g || !gathered[g].spread || !gathered[gathered[g].segments_of - 1].spread)
        throw std::runtime_error("a spread input over the segments of a later or other input");
      position_param[g] = position_param[gathered[g].segments_of - 1];
      continue;
    }
    position_param[g] = static_cast<unsigned>(1 + k.inputs.size() + positions);
    positions += static_cast<size_t>(flatten::position_params(gathered[g]));
  }
  // Then the pointers of the sequences a loop reads (Note [Sequences in loop kernels]); the
  // offsets of one with regular rows are their one length.
  const size_t seqs_at = 1 + k.inputs.size() + positions;
  size_t ni = k.inputs.size() + positions + k.seq_pointers(), no = k.outputs.size();
  const bool can_fail = k.can_fail();  // then the failure record follows the outputs
  // The parameters that are int64 numbers, not pointers: an affine view's three, a regular
  // sequence's one length.
  std::vector<bool> int_param(1 + ni + no + 1, false);
  for (size_t g = 0; g < gathered.size(); ++g)
    if (const int p = flatten::position_params(gathered[g]); p > 1)  // numbers, not a positions pointer
      std::fill_n(int_param.begin() + position_param[g], p, true);
  for (uint32_t q = 0; q < k.seqs.size() && q < 64; ++q)
    if (rows.regular >> q & 1) int_param[seqs_at + k.seq_pointer(q)] = true;
  for (size_t j = 0; j < ni + no + (can_fail ? 1 : 0); ++j)
    params.push_back(int_param[1 + j] ? static_cast<llvm::Type*>(b.getInt64Ty()) : b.getPtrTy());
  // A sourced sequence's component sources (RowForms::sourced), by their sequence pointers.
  std::map<uint32_t, unsigned> source_param;
  for (uint32_t q = 0; q < k.seqs.size() && q < 64; ++q)
    if (rows.sourced >> q & 1)
      for (uint32_t c = 0; c < k.seqs[q].components.size(); ++c) {
        source_param[static_cast<uint32_t>(k.seq_pointer(q)) + 1 + c] = static_cast<unsigned>(params.size());
        params.push_back(b.getPtrTy());
      }
  if (tiled) params.push_back(b.getInt64Ty());  // m, the grid's columns (Note [Tiled folds])
  if (split) {  // partials, arrivals, parts (Note [Rows over several blocks] in codegen/lanes.h)
    params.push_back(b.getPtrTy());
    params.push_back(b.getPtrTy());
    params.push_back(b.getInt64Ty());
  }
  const bool watches = flatten::watches_failures(k.loop, k.folds());
  if (watches) {  // the deferred failure records, and how many to read (kernel_abi.h)
    params.push_back(b.getPtrTy());
    params.push_back(b.getInt64Ty());
  }
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), params, false);
  auto* fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "ndp_kernel", m);
  annotate(fn, "kernel", 1);
  // A tiled kernel's four folds a thread, unrolled over the chunk, would take ~100 registers and
  // two blocks a multiprocessor; three blocks (80 registers) ran the 2048² f32 product in 1.58
  // ms where two took 1.78 and four 1.58 (H200).
  if (tiled) {
    annotate(fn, "maxntidx", 256);
    annotate(fn, "minctasm", 3);
  }

  // Distinct buffers: inputs are never written and never alias an output, so loads may use the
  // read-only path.
  for (size_t j = 0; j < ni + no; ++j) {
    if (int_param[1 + j]) continue;
    // A warp loop's lanes hand each other its written rows through memory across __syncwarp,
    // which an uncaptured noalias pointer would let LLVM see as private to the thread.
    if (warp_loop && j < ni && written_pointer(k, 1 + j, seqs_at)) continue;
    fn->addParamAttr(static_cast<unsigned>(1 + j), llvm::Attribute::NoAlias);
    if (j < ni && !written_pointer(k, 1 + j, seqs_at)) fn->addParamAttr(static_cast<unsigned>(1 + j), llvm::Attribute::ReadOnly);
  }
  for (const auto& [pointer, param] : source_param) fn->addParamAttr(param, llvm::Attribute::ReadOnly);
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  b.SetInsertPoint(entry);
  auto sreg = [&](llvm::Intrinsic::ID id) { return special_register(b, id); };
  llvm::Value* ntid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  // Thread t of block c computes instances c·ntid·U + t + u·ntid for u < U: every step of u is
  // a fully coalesced row, and U independent loads are in flight per thread.
  const int per_thread = lanes > 1 ? 1 : flatten::ptx_instances_per_thread(k.instance_at_a_time());
  llvm::Value* tid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  llvm::Value* base = b.CreateAdd(b.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                              b.CreateMul(ntid, b.getInt64(per_thread))),
                                  tid, "base");
  // The lowest failure record of the thread's instances, reported once at the end.
  llvm::Value* none = b.getInt64(flatten::kNoKernelFailure);
  llvm::Value* lowest = none;
  // Several lanes an instance (Note [Map kernels]): thread g is lane g % lanes of instance
  // g / lanes. Every lane must reach the combines of its folds, so the lanes past the last
  // instance run the last one too, and store nothing; lane 0 stores the outputs.
  Lanes group;
  llvm::Value* valid = nullptr;
  if (split) {  // block c is part c % parts of instance c / parts, which has no lanes past it
    llvm::Value* parts = fn->getArg(static_cast<unsigned>(fn->arg_size() - 1));
    llvm::Value* block = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
    llvm::Value* i = b.CreateUDiv(block, parts, "instance");
    llvm::Value* arrivals = fn->getArg(static_cast<unsigned>(fn->arg_size() - 2));
    group = Lanes{lanes, tid, tid, BlockSplit{parts, b.CreateURem(block, parts), b.CreateMul(i, parts),
                                              fn->getArg(static_cast<unsigned>(fn->arg_size() - 3)),
                                              b.CreateGEP(b.getInt32Ty(), arrivals, i)}};
    valid = b.CreateICmpSLT(i, fn->getArg(0));
    base = i;
  } else if (lanes > 1) {
    group = Lanes{lanes, b.CreateURem(base, b.getInt64(lanes)), tid};
    llvm::Value* i = b.CreateUDiv(base, b.getInt64(lanes));
    valid = b.CreateICmpSLT(i, fn->getArg(0));
    base = b.CreateSelect(valid, i, b.CreateSub(fn->getArg(0), b.getInt64(1)), "instance");
  }
  // A loop that does not fold runs no instance once an earlier kernel failed (watches_failures
  // in flatten/kernel_abi.h): every thread reads the same words, so its blocks agree. Only the
  // words taken are read, mostly one or two: all kDeferredRecordWords unrolled were ~360
  // instructions a thread, 8% of a counting loop's samples (Nsight Compute, H200, session 49).
  llvm::Value* go = b.getTrue();
  if (watches) {
    llvm::Value* records = fn->getArg(static_cast<unsigned>(fn->arg_size() - 2));
    llvm::Value* taken = fn->getArg(static_cast<unsigned>(fn->arg_size() - 1));
    llvm::Value* words = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, taken, b.getInt64(flatten::kDeferredRecordWords));
    llvm::AllocaInst* any_set = llvm::IRBuilder<>(&fn->getEntryBlock(), fn->getEntryBlock().begin()).CreateAlloca(b.getInt1Ty());
    b.CreateStore(b.getFalse(), any_set);
    counted_loop(b, b.getInt64(0), words, b.getInt64(1), [&](llvm::Value* w) {
      llvm::Value* word = b.CreateLoad(b.getInt64Ty(), b.CreateGEP(b.getInt64Ty(), records, w));
      llvm::Value* set = b.CreateICmpNE(word, b.getInt64(flatten::kNoKernelFailure));
      b.CreateStore(b.CreateOr(b.CreateLoad(b.getInt1Ty(), any_set), set), any_set);
    });
    go = b.CreateNot(b.CreateLoad(b.getInt1Ty(), any_set));
  }
  // A loop's own rows in the block's shared memory (Note [Staged rows]): a thread or a warp an
  // instance.
  std::optional<StagedRows> staged;
  auto kernel_seq_pointer = [fn, seqs_at](uint32_t j) { return fn->getArg(static_cast<unsigned>(seqs_at + j)); };
  // The segment holding element i of a spread input's segments (its first parameter p), each
  // searched for once an instance: instance_segments holds those of the instance at hand.
  // A thread's later instances walk on from its earlier one's segment (`walked`, where the
  // instances rise: a plain kernel's).
  SegmentHelpers segments;
  std::map<std::pair<unsigned, llvm::Value*>, llvm::Value*> instance_segments;
  std::map<unsigned, llvm::Value*> walked;
  auto spread_segment = [&](unsigned p, llvm::Value* i) -> llvm::Value* {
    if (auto it = instance_segments.find({p, i}); it != instance_segments.end()) return it->second;
    if (auto w = walked.find(p); w != walked.end())
      return b.CreateCall(segments.in(m).from, {fn->getArg(p), fn->getArg(p + 1), fn->getArg(p + 2), i, w->second});
    return b.CreateCall(segments.in(m).of, {fn->getArg(p), fn->getArg(p + 1), fn->getArg(p + 2), i});
  };
  auto find_instance_segments = [&](llvm::Value* i) {
    instance_segments.clear();
    for (size_t g = 0; g < gathered.size(); ++g)
      if (gathered[g].spread && gathered[g].segments_of == 0)
        instance_segments[{position_param[g], i}] = spread_segment(position_param[g], i);
  };
  // n / d for a view's divisor d, a parameter: a shift by its trailing zeros where the view
  // says d is a power of two (GatheredInput::pow2), else a 64-bit division, dozens of
  // instructions where a shift is one.
  auto quotient = [&](llvm::Value* n, llvm::Value* d, bool pow2) -> llvm::Value* {
    if (!pow2) return b.CreateUDiv(n, d);
    return b.CreateLShr(n, b.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, d, b.getTrue()));
  };
  // (i / c)·stride + offset + (i mod c)·inner, from a view's parameters c, stride, offset at p
  // on, and inner at p + 3 where `inner` says so, else 1 (Note [Regular elt views]; interleaved
  // blocks read their blocks' positions so too, inner 1).
  auto affine_position = [&](unsigned p, llvm::Value* i, bool pow2, bool inner) -> llvm::Value* {
    llvm::Value* c = fn->getArg(p);
    llvm::Value* q = quotient(i, c, pow2);
    llvm::Value* r = b.CreateSub(i, b.CreateMul(q, c));
    if (inner) r = b.CreateMul(r, fn->getArg(p + 3));
    return b.CreateAdd(b.CreateAdd(b.CreateMul(q, fn->getArg(p + 1)), fn->getArg(p + 2)), r);
  };
  // Input j of instance i: at i, at a gathered input's position, or a broadcast's one value.
  auto input_at = [&](uint32_t j, llvm::Value* i) -> llvm::Value* {
    llvm::Type* t = storage_type(ctx, k.inputs.at(j));
    llvm::Value* at = i;
    if (int g = gathered_slot(gathered, j); g >= 0 && gathered[static_cast<size_t>(g)].iota) {
      return i;  // (an int: i64 as stored)
    } else if (g >= 0 && gathered[static_cast<size_t>(g)].broadcast) {
      at = b.getInt64(0);
    } else if (g >= 0 && gathered[static_cast<size_t>(g)].spread) {
      const unsigned p = position_param[static_cast<size_t>(g)];
      at = spread_segment(p, i);
      if (gathered[static_cast<size_t>(g)].rank)  // i's place in its segment (an int)
        return b.CreateSub(i, b.CreateCall(segments.in(m).start, {fn->getArg(p), fn->getArg(p + 2), at}));
    } else if (g >= 0 && gathered[static_cast<size_t>(g)].interleaved) {
      const bool pow2 = gathered[static_cast<size_t>(g)].pow2;
      const unsigned p = position_param[static_cast<size_t>(g)];
      llvm::Value* at_both = affine_position(p, i, pow2, false);
      llvm::Value* block = fn->getArg(p + 3);
      llvm::Value* r = quotient(at_both, block, pow2);
      llvm::Value* second = b.CreateICmpNE(b.CreateAnd(r, b.getInt64(1)), b.getInt64(0));
      at = b.CreateAdd(b.CreateMul(b.CreateLShr(r, 1), block), b.CreateSub(at_both, b.CreateMul(r, block)));
      llvm::Value* source = b.CreateSelect(second, b.CreateIntToPtr(fn->getArg(p + 4), b.getPtrTy()), fn->getArg(1 + j));
      return b.CreateLoad(t, b.CreateGEP(t, source, at));
    } else if (g >= 0 && gathered[static_cast<size_t>(g)].affine) {
      at = affine_position(position_param[static_cast<size_t>(g)], i, gathered[static_cast<size_t>(g)].pow2, true);
    } else if (g >= 0) {
      llvm::Type* pt = position_type(b, gathered[static_cast<size_t>(g)]);
      at = b.CreateSExt(b.CreateLoad(pt, b.CreateGEP(pt, fn->getArg(position_param[static_cast<size_t>(g)]), i)),
                        b.getInt64Ty());
    }
    return b.CreateLoad(t, b.CreateGEP(t, fn->getArg(1 + j), at));
  };
  if (std::vector<flatten::KernelBody::StagedSeq> seqs = k.staged_seqs_on(lanes); (lanes == 1 || warp_loop) && !seqs.empty()) {
    auto source_of = [&](uint32_t j) -> llvm::Value* {
      auto it = source_param.find(j);
      return it == source_param.end() ? nullptr : fn->getArg(it->second);
    };
    staged.emplace(b, k, std::move(seqs), fn->getArg(0), kernel_seq_pointer, input_at, lanes, rows.zeroed, source_of);
    if (warp_loop) valid = staged->runs();  // the block's warps past its instances store nothing
  }
  // A map kernel block's own rows in its shared memory (Note [Block rows]): a few lanes an instance.
  std::optional<BlockRows> block_rows;
  if (std::vector<flatten::KernelBody::StagedSeq> rows = flatten::copied_block_rows(k, gathered, form, lanes); !rows.empty())
    block_rows.emplace(b, k, rows, fn->getArg(0), lanes, kernel_seq_pointer, input_at);
  // A tiled fold's grid (Note [Tiled folds]): a block is a square of it (FoldTiles).
  std::optional<FoldTiles> tiles;
  if (tiled) tiles.emplace(b, k, *shape, fn->getArg(0), fn->getArg(fn->arg_size() - 1), input_at, kernel_seq_pointer);
  auto seq_pointer = [&](uint32_t j) { return block_rows ? block_rows->pointer(j) : kernel_seq_pointer(j); };
  if (tiles) {
    const std::vector<llvm::Value*>& instances = tiles->instances();
    std::vector<InstanceValues> insts = emit_tiled_instances(
        b, k, instances, [&](size_t r, uint32_t j) { return input_at(j, instances[r]); }, kernel_seq_pointer, *tiles);
    for (size_t r = 0; r < insts.size(); ++r) {
      auto* store = llvm::BasicBlock::Create(ctx, "store", fn);
      auto* stored = llvm::BasicBlock::Create(ctx, "stored", fn);
      b.CreateCondBr(tiles->in_grid()[r], store, stored);
      b.SetInsertPoint(store);
      for (size_t o = 0; o < no; ++o) {
        llvm::Type* t = insts[r].outputs[o]->getType();
        b.CreateStore(insts[r].outputs[o], b.CreateGEP(t, fn->getArg(static_cast<unsigned>(1 + ni + o)), instances[r]));
      }
      b.CreateBr(stored);
      b.SetInsertPoint(stored);
      if (can_fail)
        lowest = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, lowest, b.CreateSelect(tiles->in_grid()[r], insts[r].failure, none));
    }
  } else {
    for (int u = 0; u < per_thread; ++u) {
      llvm::Value* i = staged ? staged->instance() : lanes > 1 ? base : b.CreateAdd(base, b.CreateMul(ntid, b.getInt64(u)), "i");
      auto* body = llvm::BasicBlock::Create(ctx, "body", fn);
      auto* next = llvm::BasicBlock::Create(ctx, "next", fn);
      llvm::BasicBlock* from = b.GetInsertBlock();
      llvm::Value* runs = staged               ? staged->runs()
                          : split || warp_loop ? valid
                          : lanes > 1          ? b.getTrue()
                                               : b.CreateICmpSLT(i, fn->getArg(0));
      b.CreateCondBr(b.CreateAnd(runs, go), body, next);
      b.SetInsertPoint(body);
      find_instance_segments(i);
      // The instance, its outputs stored; the lowest failure so far (where the kernel can fail).
      auto instance_body = [&](const std::function<llvm::Value*(uint32_t)>& pointers) -> llvm::Value* {
        InstanceValues inst = emit_instance(b, k, i, [&](uint32_t j) { return input_at(j, i); }, MathLibrary::Libdevice,
                                            pointers, group);
        auto* store = llvm::BasicBlock::Create(ctx, "store", fn);
        auto* stored = llvm::BasicBlock::Create(ctx, "stored", fn);
        llvm::Value* stores = warp_loop ? valid  // and the lane that holds the outputs (whole)
                              : lanes > 1 ? b.CreateAnd(valid, b.CreateICmpEQ(group.lane, b.getInt64(0)))
                                          : b.getTrue();
        if (inst.whole != nullptr) stores = b.CreateAnd(stores, inst.whole);
        b.CreateCondBr(stores, store, stored);
        b.SetInsertPoint(store);
        for (size_t o = 0; o < no; ++o) {
          llvm::Type* t = inst.outputs[o]->getType();
          b.CreateStore(inst.outputs[o], b.CreateGEP(t, fn->getArg(static_cast<unsigned>(1 + ni + o)), i));
        }
        b.CreateBr(stored);
        b.SetInsertPoint(stored);
        llvm::Value* failure = can_fail && lanes > 1 ? b.CreateSelect(valid, inst.failure, none) : inst.failure;
        return can_fail ? b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, lowest, failure) : nullptr;
      };
      llvm::Value* lowest_body = nullptr;
      if (staged) {  // a version for rows in shared memory and one for rows left in global memory (Note [Staged rows])
        auto* in_shared = llvm::BasicBlock::Create(ctx, "rows_in_shared", fn);
        auto* in_global = llvm::BasicBlock::Create(ctx, "rows_in_global", fn);
        auto* joined = llvm::BasicBlock::Create(ctx, "rows_joined", fn);
        b.CreateCondBr(staged->fits(), in_shared, in_global);
        llvm::PHINode* phi = can_fail ? llvm::PHINode::Create(b.getInt64Ty(), 2, "lowest", joined) : nullptr;
        auto version = [&](llvm::BasicBlock* at, const std::function<llvm::Value*(uint32_t)>& pointers) {
          b.SetInsertPoint(at);
          llvm::Value* lowest_here = instance_body(pointers);
          if (phi != nullptr) phi->addIncoming(lowest_here, b.GetInsertBlock());
          b.CreateBr(joined);
        };
        version(in_shared, [&](uint32_t j) { return staged->shared_pointer(j); });
        version(in_global, kernel_seq_pointer);
        b.SetInsertPoint(joined);
        lowest_body = phi;
      } else {
        lowest_body = instance_body(seq_pointer);
      }
      llvm::BasicBlock* body_end = b.GetInsertBlock();
      b.CreateBr(next);
      b.SetInsertPoint(next);
      if (!staged && lanes == 1 && !split)  // (past the last instance, the next ones are too: 0 serves)
        for (const auto& [at, segment] : instance_segments) {
          llvm::PHINode* phi = b.CreatePHI(b.getInt64Ty(), 2);
          phi->addIncoming(segment, body_end);
          phi->addIncoming(b.getInt64(0), from);
          walked[at.first] = phi;
        }
      if (can_fail) {
        llvm::PHINode* phi = b.CreatePHI(b.getInt64Ty(), 2);
        phi->addIncoming(lowest, from);
        phi->addIncoming(lowest_body, body_end);
        lowest = phi;
      }
    }
  }
  if (staged) staged->write_back();
  if (can_fail) {
    auto* report = llvm::BasicBlock::Create(ctx, "report", fn);
    auto* done = llvm::BasicBlock::Create(ctx, "done", fn);
    b.CreateCondBr(b.CreateICmpNE(lowest, none), report, done);
    b.SetInsertPoint(report);
    b.CreateAtomicRMW(llvm::AtomicRMWInst::UMin, fn->getArg(static_cast<unsigned>(1 + ni + no)), lowest,
                      llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic);
    b.CreateBr(done);
    b.SetInsertPoint(done);
  }
  b.CreateRetVoid();
  link_libdevice(m, "ndp_kernel");
  // The O2 pipeline for kernels whose instances loop (loop and map kernels, Note [Map kernels]),
  // whose fold loops then keep each row's offsets and other invariant loads out of the loop.
  // Elementwise kernels go straight to the backend.
  if (k.instance_at_a_time() || segments.defined()) {  // (which then are inlined)
    verify(m);
    optimize(m, *tm);
  }
  return emit_ptx(m, *tm);
}

std::string compile_element_ptx(const flatten::KernelBody& k, std::span<const GatheredInput> gathered) {
  if (k.outputs.size() != 1) throw std::runtime_error("an element function computes one output");
  if (k.can_fail()) throw std::runtime_error("an element function cannot fail (Note [Kernels that can fail])");
  for (const GatheredInput& g : gathered)
    if (g.broadcast || g.affine || g.iota || g.interleaved)
      throw std::runtime_error("an element function has no broadcast, affine, iota or interleaved inputs");
  std::unique_ptr<llvm::TargetMachine> tm = nvptx_machine();
  llvm::LLVMContext ctx;
  llvm::Module m("ndp_elements", ctx);
  m.setTargetTriple(kNvptxTriple);
  m.setDataLayout(tm->createDataLayout());
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i64 = b.getInt64Ty();
  std::vector<llvm::Type*> fields{llvm::ArrayType::get(i64, kElementWords)};
  auto* items_ty = llvm::StructType::get(ctx, fields);
  auto* fty = llvm::FunctionType::get(items_ty, {i64, i64, b.getInt32Ty(), b.getPtrTy()}, false);
  auto* fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "ndp_elements", m);
  fn->addParamAttr(3, llvm::Attribute::ReadOnly);
  llvm::Value *first = fn->getArg(0), *stride = fn->getArg(1), *count = fn->getArg(2), *ins = fn->getArg(3);
  const int bytes = static_cast<int>(storage_type(ctx, k.nodes.at(k.outputs[0]).type)->getPrimitiveSizeInBits() / 8);
  const int items = element_items(bytes);
  llvm::MDNode* invariant = llvm::MDNode::get(ctx, {});
  const size_t ni = k.inputs.size(), ng = gathered.size();

  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  b.SetInsertPoint(entry);
  auto invariant_load = [&](llvm::Type* t, llvm::Value* at) -> llvm::Value* {
    auto* x = b.CreateLoad(t, at);
    x->setMetadata(llvm::LLVMContext::MD_invariant_load, invariant);
    return x;
  };
  // The input arrays and position arrays, read once (from the caller's parameter space,
  // through a generic pointer); then each gathered input's bound, as an integer.
  std::vector<llvm::Value*> base, bound;
  for (size_t j = 0; j < ni + ng; ++j)
    base.push_back(b.CreateAddrSpaceCast(invariant_load(b.getPtrTy(), b.CreateConstGEP1_64(b.getPtrTy(), ins, j)),
                                         b.getPtrTy(1)));
  for (size_t g = 0; g < ng; ++g) bound.push_back(invariant_load(i64, b.CreateConstGEP1_64(i64, ins, ni + ng + g)));
  // A spread input's positions are its segments' offsets' address (0 where they all have one
  // length) and its bound their count, or that length (Note [Spread inputs]).
  // A thread's items rise, 32 elements apart, so each spread input over its own segments (a
  // leader: one whose segments_of is 0) searches for the first item's segment once, and every
  // item walks on from it (ndp_segment_from): where they all lie in that segment, one load of its
  // end serves them all, with no chain from item to item. Inputs over a leader's segments take
  // its segment.
  struct Spread {
    llvm::Value *offsets = nullptr, *n = nullptr, *c = nullptr;
  };
  std::vector<Spread> spreads(ng);
  SegmentHelpers segments;
  auto leader = [&](size_t g) { return gathered[g].segments_of > 0 ? gathered[g].segments_of - 1 : g; };
  // The computation state along one path through the items: the kElementWords result words,
  // then per gathered input an i64 that is 1 once a position was out of its bound.
  using State = std::vector<llvm::Value*>;
  State words(kElementWords + ng, b.getInt64(0));
  std::vector<llvm::Value*> first_segment(ng, nullptr), item_segment(ng, nullptr);
  for (size_t g = 0; g < ng; ++g) {
    if (!gathered[g].spread) continue;
    segments.in(m);
    Spread& sp = spreads[g];
    sp.offsets = invariant_load(i64, b.CreateConstGEP1_64(i64, ins, ni + g));
    llvm::Value* regular = b.CreateICmpEQ(sp.offsets, b.getInt64(0));
    sp.c = b.CreateSelect(regular, bound[g], b.getInt64(0));
    sp.n = b.CreateSelect(regular, b.getInt64(0), bound[g]);
    if (leader(g) == g) first_segment[g] = b.CreateCall(segments.of, {sp.offsets, sp.n, sp.c, first});
  }
  // Item `item` as an i64 of its bits, computed at first + item·stride.
  auto value_bits = [&](int item, State& state) {
    llvm::Value* i = b.CreateAdd(first, b.CreateMul(stride, b.getInt64(static_cast<uint64_t>(item))));
    for (size_t g = 0; g < ng; ++g)
      if (gathered[g].spread && leader(g) == g)
        item_segment[g] = b.CreateCall(segments.from, {spreads[g].offsets, spreads[g].n, spreads[g].c, i, first_segment[g]});
    std::vector<llvm::Value*> outs = emit_instance(b, k, i, [&](uint32_t j) {
      // Inputs are never written while a kernel runs: the read-only global path.
      // Streams are read at i; with gathers they go around L2 (Note [Streamed inputs beside
      // gathers]).
      llvm::Type* t = storage_type(ctx, k.inputs.at(j));
      auto stream = [&](llvm::Type* st, llvm::Value* p) -> llvm::Value* {
        return ng > 0 ? streaming_load(b, st, p) : invariant_load(st, p);
      };
      int g = gathered_slot(gathered, j);
      if (g < 0) return stream(t, b.CreateGEP(t, base.at(j), i));
      if (gathered[static_cast<size_t>(g)].spread) {  // never out of range
        const size_t gs = static_cast<size_t>(g);
        llvm::Value* seg = item_segment[leader(gs)];
        if (gathered[gs].rank) return b.CreateSub(i, b.CreateCall(segments.start, {spreads[gs].offsets, spreads[gs].c, seg}));
        return invariant_load(t, b.CreateGEP(t, base.at(j), seg));
      }
      // A position outside [0, bound) reads element 0 instead (bound > 0) and is reported.
      llvm::Type* pt = position_type(b, gathered[static_cast<size_t>(g)]);
      llvm::Value* at = b.CreateSExt(stream(pt, b.CreateGEP(pt, base.at(ni + g), i)), i64);
      llvm::Value* in_range = b.CreateICmpULT(at, bound[g]);
      llvm::Value*& bad = state[kElementWords + g];
      bad = b.CreateOr(bad, b.CreateZExt(b.CreateNot(in_range), i64));
      at = b.CreateSelect(in_range, at, b.getInt64(0));
      return invariant_load(t, b.CreateGEP(t, base.at(j), at));
    }, MathLibrary::Libdevice).outputs;
    llvm::Value* v = outs.at(0);
    llvm::Type* vt = v->getType();
    if (vt->isFloatingPointTy()) v = b.CreateBitCast(v, b.getIntNTy(vt->getPrimitiveSizeInBits()));
    return b.CreateZExt(v, i64);
  };
  // Items go to the 64 result bytes as an array of the element type: item j in word
  // j·bytes/8 at bit (j·bytes·8) mod 64. Groups of 8 items are computed without a branch per
  // item when all 8 are wanted, so their loads are in flight together; a partial group checks
  // each item against count.
  auto put = [&](State& w, int item, llvm::Value* bits) {
    int word = item * bytes / 8, shift = (item * bytes * 8) % 64;
    w[word] = b.CreateOr(w[word], shift ? b.CreateShl(bits, b.getInt64(static_cast<uint64_t>(shift))) : bits);
  };
  for (int group = 0; group < items; group += 8) {
    auto* full = llvm::BasicBlock::Create(ctx, "full", fn);
    auto* partial = llvm::BasicBlock::Create(ctx, "partial", fn);
    auto* join = llvm::BasicBlock::Create(ctx, "join", fn);
    b.CreateCondBr(b.CreateICmpSGE(count, b.getInt32(static_cast<uint32_t>(group + 8))), full, partial);
    b.SetInsertPoint(full);
    State wf = words;
    for (int j = group; j < group + 8; ++j) put(wf, j, value_bits(j, wf));
    llvm::BasicBlock* full_end = b.GetInsertBlock();
    b.CreateBr(join);
    b.SetInsertPoint(partial);
    State wp = words;
    for (int j = group; j < group + 8; ++j) {
      auto* yes = llvm::BasicBlock::Create(ctx, "item", fn);
      auto* next = llvm::BasicBlock::Create(ctx, "next", fn);
      llvm::BasicBlock* from = b.GetInsertBlock();
      b.CreateCondBr(b.CreateICmpSGT(count, b.getInt32(static_cast<uint32_t>(j))), yes, next);
      b.SetInsertPoint(yes);
      State wy = wp;
      put(wy, j, value_bits(j, wy));
      llvm::BasicBlock* yes_end = b.GetInsertBlock();
      b.CreateBr(next);
      b.SetInsertPoint(next);
      for (size_t w = 0; w < wp.size(); ++w) {
        if (wy[w] == wp[w]) continue;
        llvm::PHINode* phi = b.CreatePHI(i64, 2);
        phi->addIncoming(wy[w], yes_end);
        phi->addIncoming(wp[w], from);
        wp[w] = phi;
      }
    }
    llvm::BasicBlock* partial_end = b.GetInsertBlock();
    b.CreateBr(join);
    b.SetInsertPoint(join);
    for (size_t w = 0; w < words.size(); ++w) {
      if (wf[w] == words[w] && wp[w] == words[w]) continue;
      llvm::PHINode* phi = b.CreatePHI(i64, 2);
      phi->addIncoming(wf[w], full_end);
      phi->addIncoming(wp[w], partial_end);
      words[w] = phi;
    }
  }
  // A gathered input that met a bad position sets its word of the failure flags (ins[ni +
  // 2·ng], one 8-byte word per gathered input): the host reads them after the kernel.
  if (ng > 0) {
    llvm::Value* flags = b.CreateAddrSpaceCast(
        invariant_load(b.getPtrTy(), b.CreateConstGEP1_64(b.getPtrTy(), ins, ni + 2 * ng)), b.getPtrTy(1));
    for (size_t g = 0; g < ng; ++g) {
      auto* report = llvm::BasicBlock::Create(ctx, "report", fn);
      auto* done = llvm::BasicBlock::Create(ctx, "reported", fn);
      b.CreateCondBr(b.CreateICmpNE(words[kElementWords + g], b.getInt64(0)), report, done);
      b.SetInsertPoint(report);
      b.CreateStore(b.getInt64(1), b.CreateConstGEP1_64(i64, flags, g));
      b.CreateBr(done);
      b.SetInsertPoint(done);
    }
  }
  llvm::Value* result = llvm::UndefValue::get(items_ty);
  for (unsigned w = 0; w < kElementWords; ++w) result = b.CreateInsertValue(result, words[w], {0u, w});
  b.CreateRet(result);
  link_libdevice(m, "ndp_elements");
  if (segments.defined()) inline_always(m);
  return emit_ptx(m, *tm);
}

}  // namespace ndp::codegen
