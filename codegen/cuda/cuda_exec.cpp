// The cuda backend's executor: the walk of the cpu backend's (codegen/cpu/flat_exec.cpp, Note
// [Executor errors] applies unchanged) with DVecs in device memory. The host holds only the
// control scalars (host variables: lengths, counts, loop conditions), which it reads back as
// they are needed; everything else stays on the device until the result comes back.
#include "codegen/cuda/cuda_exec.h"

#include <cctype>
#include <chrono>
#include <new>
#include <stdexcept>

#include "codegen/cpu/convert.h"
#include "codegen/cuda/dvec_ops.h"
#include "codegen/cuda/kernels.h"
#include "codegen/cuda/lifted_prims.h"
#include "lang/diagnostics.h"
#include "lang/eval/deep_stack.h"
#include "lang/eval/prim_call.h"
#include "lang/eval/rand.h"
#include "lang/eval/streams.h"

namespace ndp::codegen::cuda {

using flat::Block;
using flat::Op;
using flat::Stmt;
using flat::VarId;
using lang::Span;
using lang::Type;
using lang::Value;
using lang::eval::EvalError;

namespace {

constexpr size_t kStackReserve = size_t{2} << 30;
constexpr uint64_t kMaxCallDepth = 1'000'000;

struct Slot {
  bool set = false;
  int64_t host = 0;
  DVec vec;
};

struct Frame {
  const flat::Function* fn;
  std::vector<Slot> slots;
};

std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

std::string CudaExecutor::unavailable_reason() {
  std::string why;
  return Gpu::get(&why) != nullptr ? std::string() : why;
}

struct CudaExecutor::Impl {
  lang::core::Program& prog;
  std::FILE* out;
  Gpu& g;
  GpuKernels kernels;
  lang::eval::StreamTable streams;
  lang::eval::RandState rand;
  lang::eval::PrimEnv env;
  GpuPrimContext ctx;
  int64_t fallbacks = 0;
  lang::eval::DeepStack stack{kStackReserve};
  uint32_t last_library_file = 0;
  const flat::Program* program = nullptr;
  uint64_t depth = 0;

  Impl(lang::core::Program& p, std::FILE* o, Gpu& gpu) : prog(p), out(o), g(gpu), kernels(gpu), streams(o) {
    env.types = &prog.types;
    env.out = out;
    env.streams = &streams;
    env.rand = &rand;
    ctx.gpu = &g;
    ctx.kernels = &kernels;
    ctx.host.types = &prog.types;
    ctx.host.env = &env;
    ctx.host_fallbacks = &fallbacks;
  }

  bool in_library(Span s) const { return last_library_file != 0 && s.valid() && s.file <= last_library_file; }

  const Slot& slot(const Frame& f, VarId v) const {
    NDP_ASSERT(v < f.slots.size() && f.slots[v].set, "Flat IR use of an undefined variable");
    return f.slots[v];
  }
  int64_t host(const Frame& f, VarId v) const { return slot(f, v).host; }
  const DVec& vec(const Frame& f, VarId v) const { return slot(f, v).vec; }
  const Type* type_of(const Frame& f, VarId v) const {
    const Type* t = f.fn->vars.at(v).type;
    NDP_ASSERT(t != nullptr, "Flat IR vector statement defines a host variable");
    return t;
  }
  void set_host(Frame& f, VarId v, int64_t x) {
    Slot& s = f.slots.at(v);
    s.set = true;
    s.host = x;
  }
  void set_vec(Frame& f, VarId v, DVec x) {
    Slot& s = f.slots.at(v);
    s.set = true;
    s.vec = std::move(x);
  }

  /// n copies of a host value, on the device.
  DVec constant(const Type* t, const Value& v, int64_t n) {
    return replicate_one(g, upload(g, cpu::from_value(prog.types, t, v, 1)), n);
  }

  Slot run_block(const Block& b, Frame& f) {
    for (const Stmt& s : b.stmts) exec(s, f);
    return slot(f, b.result);
  }
  void exec(const Stmt& s, Frame& f);
  void exec_stmt(const Stmt& s, Frame& f);
  DVec call(flat::FuncId id, const DVec& arg, const DVec* path, Span span);
  Slot recurse(const Stmt& s, Frame& f);
  DVec rand_with_paths(const Stmt& s, Frame& f);
  DVec merge(const DVec& flags, const DVec& a, const DVec& b);
  DVec seq_lit(const Type* t, const Stmt& s, const Frame& f);
};

// Note [Recursion as loops] in flatten/flat_ir.h; the same level stack as the cpu backend's.
Slot CudaExecutor::Impl::recurse(const Stmt& s, Frame& f) {
  NDP_ASSERT(s.loop != nullptr, "while without its loop");
  const flat::RecursionLoop& loop = *s.loop;
  std::vector<std::vector<Slot>> stack;
  DVec arg = vec(f, s.uses.at(0));
  DVec next_path;
  Slot result;
  for (uint64_t level = 0;; ++level) {
    if (level >= kMaxCallDepth) throw EvalError{"Recursion too deep.", s.span};
    set_vec(f, loop.param, arg);
    if (level > 0 && f.fn->has_path) set_vec(f, loop.path, next_path);
    if (run_block(loop.prefix, f).host <= 0) {
      set_vec(f, loop.branch, empty_of(g, prog.types, type_of(f, loop.branch)));
      result = run_block(loop.finish, f);
      break;
    }
    Slot next = run_block(loop.step, f);
    if (f.fn->has_path) next_path = vec(f, loop.next_path);
    std::vector<Slot> saved;
    saved.reserve(loop.saved.size());
    for (VarId v : loop.saved) saved.push_back(f.slots.at(v));
    stack.push_back(std::move(saved));
    arg = next.vec;
  }
  while (!stack.empty()) {
    std::vector<Slot>& saved = stack.back();
    for (size_t i = 0; i < saved.size(); ++i) f.slots[loop.saved[i]] = std::move(saved[i]);
    stack.pop_back();
    f.slots.at(loop.call_result) = std::move(result);
    f.slots.at(loop.branch) = run_block(loop.combine, f);
    result = run_block(loop.finish, f);
  }
  return result;
}

// rand with per-instance path hashes: on the host, as the cpu backend draws (flat_exec.cpp).
DVec CudaExecutor::Impl::rand_with_paths(const Stmt& s, Frame& f) {
  cpu::Vec paths = download(g, vec(f, s.uses[1]));
  const int64_t* p = paths.data<int64_t>();
  cpu::LiftedCall c{s.prim, s.span, &s.type_args, type_of(f, s.dst)};
  DVec bound[1] = {vec(f, s.uses[0])};
  struct ClearPath {
    lang::eval::RandState& r;
    ~ClearPath() { r.clear_path(); }
  } clear{rand};
  return host_prim(ctx, c, bound, [&](int64_t i) { rand.set_path(static_cast<uint64_t>(p[i])); });
}

void CudaExecutor::Impl::exec(const Stmt& s, Frame& f) {
  if (lang::eval::interrupt_requested().load(std::memory_order_relaxed)) {
    lang::eval::interrupt_requested().store(false);
    throw EvalError{"Interrupted.", s.span};
  }
  try {
    exec_stmt(s, f);
  } catch (EvalError& err) {
    if (!err.span.valid()) err.span = s.span;
    if (s.op == Op::Call && s.span.valid() && !in_library(s.span) && in_library(err.span)) err.span = s.span;
    throw;
  } catch (std::length_error&) {
    throw EvalError{"Out of memory.", s.span};
  }
}

DVec CudaExecutor::Impl::call(flat::FuncId id, const DVec& arg, const DVec* path, Span span) {
  NDP_ASSERT(id < program->functions.size(), "Flat IR call of a bad function id");
  if (depth >= kMaxCallDepth || lang::eval::DeepStack::nearly_full()) throw EvalError{"Recursion too deep.", span};
  struct DepthGuard {
    uint64_t& d;
    explicit DepthGuard(uint64_t& x) : d(x) { ++d; }
    ~DepthGuard() { --d; }
  } guard(depth);
  const flat::Function& fn = program->functions[id];
  Frame frame{&fn, std::vector<Slot>(fn.vars.size())};
  set_vec(frame, fn.param, arg);
  if (fn.has_path) {
    NDP_ASSERT(path != nullptr, "call of a function with a path parameter without paths");
    set_vec(frame, fn.path, *path);
  }
  Slot r = run_block(fn.body, frame);
  NDP_ASSERT(!fn.vars.at(fn.body.result).is_host(), "a function returns a host variable");
  return r.vec;
}

/// flags[i] ? a[#T before i] : b[#F before i].
DVec CudaExecutor::Impl::merge(const DVec& flags, const DVec& a, const DVec& b) {
  int64_t n = flags.size();
  NDP_ASSERT(a.size() + b.size() == n, "merge of vectors that do not match their flags");
  DBuf idx = g.alloc(n * 8);
  g.check(g.prims().merge_positions(flags.data(), n, a.size(), idx->pointer()));
  return take(g, append(g, a, b), idx->pointer(), n);
}

/// Per instance i the sequence [uses[0][i], ..., uses[k-1][i]].
DVec CudaExecutor::Impl::seq_lit(const Type* t, const Stmt& s, const Frame& f) {
  int64_t k = static_cast<int64_t>(s.uses.size());
  NDP_ASSERT(k >= 1, "seqlit without elements");
  std::vector<DVec> parts;
  for (VarId u : s.uses) parts.push_back(vec(f, u));
  int64_t n = parts[0].size();
  DBuf idx = g.alloc(n * k * 8), len = g.alloc(n * 8);
  g.check(g.prims().seq_lit_positions(n, k, idx->pointer()));
  g.check(g.prims().fill(len->pointer(), n, 8, static_cast<uint64_t>(k)));
  return seq_from_lengths(g, t, n, std::move(len), take(g, concat(g, parts), idx->pointer(), n * k));
}

void CudaExecutor::Impl::exec_stmt(const Stmt& s, Frame& f) {
  auto use = [&](size_t i) -> const DVec& {
    NDP_ASSERT(i < s.uses.size(), "Flat IR statement lacks an operand");
    return vec(f, s.uses[i]);
  };
  switch (s.op) {
    case Op::Lit: set_vec(f, s.dst, constant(type_of(f, s.dst), s.lit, host(f, s.uses.at(0)))); return;
    case Op::Global: {
      NDP_ASSERT(s.global < prog.globals.size(), "Flat IR global with a bad id");
      const lang::core::Global& gl = *prog.globals[s.global];
      if (gl.kind != lang::core::Global::Kind::Variable) cpu::fail_function_value();
      if (!gl.has_value) throw EvalError{upper(gl.name) + " is undefined.", s.span};
      set_vec(f, s.dst, constant(type_of(f, s.dst), gl.value, host(f, s.uses.at(0))));
      return;
    }
    case Op::Empty: {
      const Type* t = type_of(f, s.dst);
      int64_t n = host(f, s.uses.at(0));
      DBuf len = g.alloc(n * 8), off = g.alloc((n + 1) * 8);
      g.check(g.prims().fill(len->pointer(), n, 8, 0));
      g.check(g.prims().fill(off->pointer(), n + 1, 8, 0));
      set_vec(f, s.dst, DVec::seq(t, n, std::move(len), std::move(off), empty_of(g, prog.types, t->a)));
      return;
    }
    case Op::Nothing: set_vec(f, s.dst, empty_of(g, prog.types, type_of(f, s.dst))); return;
    case Op::Length: set_host(f, s.dst, use(0).size()); return;
    case Op::Count: set_host(f, s.dst, g.check(g.prims().count_true(use(0).data(), use(0).size()))); return;
    case Op::Const: set_host(f, s.dst, s.lit.as_int()); return;
    case Op::Tuple: set_vec(f, s.dst, DVec::pair(type_of(f, s.dst), use(0), use(1))); return;
    case Op::First: set_vec(f, s.dst, use(0).first()); return;
    case Op::Second: set_vec(f, s.dst, use(0).second()); return;
    case Op::Lengths: set_vec(f, s.dst, DVec::scalar(type_of(f, s.dst), use(0).size(), use(0).buffer())); return;
    case Op::Elements: set_vec(f, s.dst, use(0).elems()); return;
    case Op::Retype: set_vec(f, s.dst, retype(prog.types, use(0), type_of(f, s.dst))); return;
    case Op::Nest: {
      const DVec& len = use(0);
      set_vec(f, s.dst, seq_from_lengths(g, type_of(f, s.dst), len.size(), len.buffer(), use(1)));
      return;
    }
    case Op::Replicate: {
      const DVec& v = use(0);
      const DVec& counts = use(1);
      int64_t n = counts.size();
      DBuf off = g.alloc((n + 1) * 8);
      int64_t total = 0;
      ndp_status st = g.check(g.prims().offsets_from_lengths(counts.data(), n, off->pointer(), &total));
      NDP_ASSERT(st.code == NDP_OK, "replicate with a negative count");
      rt::gpu::DSegs segs = rt::gpu::DSegs::irregular(n, total, off->pointer());
      if (cpu::is_flat_scalar(v.type())) {
        DBuf buf = g.alloc(total * elem_bytes(v.type()));
        g.check(g.prims().dist(elem_type(v.type()), v.data(), segs, buf->pointer()));
        set_vec(f, s.dst, DVec::scalar(v.type(), total, std::move(buf)));
        return;
      }
      DBuf ids = g.alloc(total * 8);
      g.check(g.prims().segment_ids(segs, ids->pointer()));
      set_vec(f, s.dst, take(g, v, ids->pointer(), total));
      return;
    }
    case Op::PathStep: {
      // rand path hashes (Note [rand]): computed on the host, where the hash is defined.
      cpu::Vec parent = download(g, use(0)), lens = download(g, use(1));
      const int64_t* p = parent.data<int64_t>();
      const int64_t* len = lens.data<int64_t>();
      std::vector<int64_t> steps;
      for (int64_t seg = 0; seg < lens.size(); ++seg)
        for (int64_t k = 0; k < len[seg]; ++k)
          steps.push_back(static_cast<int64_t>(
              lang::eval::RandState::step(static_cast<uint64_t>(p[seg]), static_cast<uint64_t>(k))));
      DBuf buf = g.alloc(static_cast<int64_t>(steps.size()) * 8);
      g.check(g.pool().upload(buf->pointer(), steps.data(), steps.size() * 8));
      set_vec(f, s.dst, DVec::scalar(type_of(f, s.dst), static_cast<int64_t>(steps.size()), std::move(buf)));
      return;
    }
    case Op::Iota: {
      int64_t n = host(f, s.uses.at(0));
      DBuf buf = g.alloc(n * 8);
      g.check(g.prims().iota(buf->pointer(), n));
      set_vec(f, s.dst, DVec::scalar(type_of(f, s.dst), n, std::move(buf)));
      return;
    }
    case Op::Gather: set_vec(f, s.dst, take(g, use(0), use(1).data(), use(1).size())); return;
    case Op::IndexShared: {
      const DVec& seqs = use(0);
      int64_t n = use(1).size();
      DBuf pos = g.alloc(n * 8);
      int64_t bad = g.check(g.prims().index_shared_positions(seqs.offsets(), use(1).data(), use(2).data(), n, pos->pointer()));
      if (bad >= 0) throw EvalError{"Sequence reference (a[i]) out of bounds.", s.span};
      set_vec(f, s.dst, take(g, seqs.elems(), pos->pointer(), n));
      return;
    }
    case Op::Pack: {
      NDP_ASSERT(use(0).size() == use(1).size(), "pack with flags of another length");
      set_vec(f, s.dst, pack(g, use(0), use(1).data()));
      return;
    }
    case Op::Merge: set_vec(f, s.dst, merge(use(0), use(1), use(2))); return;
    case Op::Concat: set_vec(f, s.dst, append(g, use(0), use(1))); return;
    case Op::Slice: {
      const DVec& v = use(0);
      int64_t begin = host(f, s.uses.at(1)), count = host(f, s.uses.at(2));
      NDP_ASSERT(begin >= 0 && count >= 0 && begin + count <= v.size(), "slice out of range");
      if (begin == 0 && count == v.size()) {
        set_vec(f, s.dst, v);
        return;
      }
      DBuf idx = g.alloc(count * 8);
      g.check(g.prims().iota(idx->pointer(), count, begin));
      set_vec(f, s.dst, take(g, v, idx->pointer(), count));
      return;
    }
    case Op::SeqLit: set_vec(f, s.dst, seq_lit(type_of(f, s.dst), s, f)); return;
    case Op::CheckLengths: {
      const DVec &a = use(0), &b = use(1);
      NDP_ASSERT(a.size() == b.size(), "check_lengths of vectors with different instance counts");
      if (g.check(g.prims().first_difference(a.lengths(), b.lengths(), a.size())) >= 0)
        throw EvalError{"Length mismatch in an apply-to-each.", s.span};
      return;
    }
    case Op::Prim: {
      if (s.prim == lang::core::PrimId::Rand && s.uses.size() == 2) {
        set_vec(f, s.dst, rand_with_paths(s, f));
        return;
      }
      std::vector<DVec> args;
      for (VarId u : s.uses) args.push_back(vec(f, u));
      cpu::LiftedCall c{s.prim, s.span, &s.type_args, type_of(f, s.dst)};
      set_vec(f, s.dst, apply_lifted_prim(ctx, c, args));
      return;
    }
    case Op::Kernel: {
      NDP_ASSERT(s.kernel != nullptr, "kernel without its body");
      std::vector<DVec> ins;
      std::vector<const Type*> out_types;
      for (VarId u : s.uses) ins.push_back(vec(f, u));
      for (VarId o : s.outs) out_types.push_back(type_of(f, o));
      std::vector<DVec> r = kernels.run(*s.kernel, ins, out_types);
      for (size_t k = 0; k < r.size(); ++k) set_vec(f, s.outs[k], std::move(r[k]));
      return;
    }
    case Op::Call: set_vec(f, s.dst, call(s.func, use(0), s.uses.size() > 1 ? &use(1) : nullptr, s.span)); return;
    case Op::Time: {
      NDP_ASSERT(s.then_block != nullptr, "time without a block");
      g.synchronize();
      auto t0 = std::chrono::steady_clock::now();
      Slot r = run_block(*s.then_block, f);
      g.synchronize();  // the kernels the block queued are part of its time
      std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
      const Type* t = type_of(f, s.dst);
      set_vec(f, s.dst, DVec::pair(t, r.vec, constant(t->b, Value::float_(dt.count()), r.vec.size())));
      return;
    }
    case Op::IfNonEmpty: {
      NDP_ASSERT(s.then_block != nullptr && s.else_block != nullptr, "if_nonempty without both blocks");
      Slot r = run_block(host(f, s.uses.at(0)) > 0 ? *s.then_block : *s.else_block, f);
      f.slots.at(s.dst) = std::move(r);
      return;
    }
    case Op::Recurse: f.slots.at(s.dst) = recurse(s, f); return;
  }
  throw lang::InternalError("internal error: cuda executor: unknown Flat IR op");
}

CudaExecutor::CudaExecutor(lang::core::Program& prog, std::FILE* out) {
  Gpu* g = Gpu::get();
  NDP_ASSERT(g != nullptr, "a cuda executor without a GPU");
  impl_ = std::make_unique<Impl>(prog, out, *g);
}

CudaExecutor::~CudaExecutor() = default;

void CudaExecutor::set_library_files(uint32_t last_file) { impl_->last_library_file = last_file; }

int64_t CudaExecutor::host_fallbacks() const { return impl_->fallbacks; }

std::string CudaExecutor::kernel_stats() const {
  const GpuKernels::Stats& s = impl_->kernels.stats();
  return std::to_string(s.compiled) + " compiled, " + std::to_string(s.disk_hits) + " from the disk cache, " +
         std::to_string(s.memory_hits) + " launches of loaded kernels";
}

lang::eval::RunResult CudaExecutor::run(const flat::Program& p) {
  Impl& m = *impl_;
  lang::eval::RunResult result;
  m.stack.run([&] {
    m.rand.begin_form();
    m.depth = 0;
    m.program = &p;
    try {
      m.g.check(m.g.device().make_current());  // this thread is the deep-stack thread
      DVec arg = m.constant(m.prog.types.int_(), Value::int_(0), 1);
      DVec r = m.call(p.entry, arg, nullptr, Span{});
      NDP_ASSERT(r.size() == 1, "the entry function did not return one instance");
      result.value = cpu::to_value(download(m.g, r), 0);
      m.g.synchronize();
      result.ok = true;
    } catch (EvalError& err) {
      result.error = lang::eval::RuntimeError{std::move(err.message), err.span};
    } catch (std::bad_alloc&) {
      result.error = lang::eval::RuntimeError{"Out of memory.", Span{}};
    } catch (std::length_error&) {
      result.error = lang::eval::RuntimeError{"Out of memory.", Span{}};
    }
    std::fflush(m.out);
    m.program = nullptr;
  });
  return result;
}

}  // namespace ndp::codegen::cuda
