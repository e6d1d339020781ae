// The cpu backend's executor: a direct walk over Flat IR blocks (Note [Flat IR semantics]) whose
// variables hold Vecs (vector variables) or int64 (host scalars).
//
// Note [Executor errors]
// Runtime errors travel as lang::eval::EvalError, as in the interpreter. An error raised
// without a span (a function value met by a conversion, say) takes the span of the statement
// that raised it; with set_library_files, an error whose span lies in the standard library is
// moved to the innermost Call statement in user code, as the interpreter does for calls of
// library functions. run() turns them into RunResult::error; internal errors (malformed Flat
// IR) stay lang::InternalError.
#include "exec/cpu/executor.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <vector>

#include "exec/common/flat_walk.h"
#include "exec/common/profile.h"
#include "exec/common/tuning.h"
#include "exec/cpu/append_chains.h"
#include "exec/cpu/consumer_kernels.h"
#include "exec/cpu/filter_groups.h"
#include "exec/cpu/kernels.h"
#include "exec/cpu/task_chunks.h"
#include "exec/host/convert.h"
#include "exec/host/lifted_prims.h"
#include "exec/host/parallel_loops.h"
#include "exec/host/placed_rows.h"
#include "exec/host/vec.h"
#include "flatten/passes/ir_walk.h"
#include "lang/diagnostics.h"
#include "lang/eval/deep_stack.h"
#include "lang/eval/prim_call.h"
#include "lang/eval/rand.h"
#include "lang/eval/streams.h"
#include "runtime/cpu/primitives.h"

namespace ndp::exec::cpu {

using namespace host;  // the cpu backend runs on the host vectors and primitives

using flatten::Block;
using flatten::Op;
using flatten::Stmt;
using flatten::VarId;
using lang::Span;
using lang::Type;
using lang::Value;
using lang::eval::EvalError;

struct CpuExecutor::Impl : FlatWalk<CpuExecutor::Impl, Vec> {
  lang::core::Program& prog;
  std::FILE* out;
  lang::eval::StreamTable streams;
  lang::eval::RandState rand;
  lang::eval::PrimEnv env;
  PrimContext ctx;
  lang::eval::DeepStack stack{kWalkStackBytes};
  std::span<const BoundGlobal> bound;  // for the run in progress (run_bound)

  Impl(lang::core::Program& p, std::FILE* o) : prog(p), out(o), streams(o) {
    release_dead = true;  // Note [Releasing dead vectors]
    env.types = &prog.types;
    env.out = out;
    env.streams = &streams;
    env.rand = &rand;
    ctx.types = &prog.types;
    ctx.env = &env;
  }

  // FlatWalk's backend interface
  lang::TypeContext& types() { return prog.types; }
  Vec empty_vector(const Type* t) { return from_values(prog.types, t, {}); }
  void exec_data(const Stmt& s, Frame& f);
  void exec_data_untimed(const Stmt& s, Frame& f);

  Vec rand_with_paths(const Stmt& s, Frame& f);
  Vec merge(const Vec& flags, const Vec& a, const Vec& b);
  Vec seq_lit(const Type* t, const Stmt& s, const Frame& f);

  std::optional<Slot> finish_levels(const Stmt& s, Frame& f, const Vec& arg, bool& again);
  std::optional<bool> finish_levels_into(const Stmt& s, Frame& f, const Vec& arg, const std::vector<int64_t>& at,
                                         PlacedRows<Vec>& out, bool& again);
  std::unique_ptr<PlacedRows<Vec>> placed_rows(const Type* rows, int64_t elements) { return host::placed_rows(rows, elements); }
  std::vector<int64_t> host_lengths(const Vec& v) {
    std::vector<int64_t> r(static_cast<size_t>(v.size()));
    for (int64_t i = 0; i < v.size(); ++i) r[static_cast<size_t>(i)] = v.length(i);
    return r;
  }
  std::vector<int64_t> host_ints(const Vec& v) {
    std::span<const int64_t> x = v.values<int64_t>();
    return {x.begin(), x.end()};
  }
  std::vector<uint8_t> host_bools(const Vec& v) {
    std::span<const bool> x = v.values<bool>();
    return {x.begin(), x.end()};
  }
  /// Where the instances of a level whose argument is `arg` are cut into tasks (Note [Small
  /// segments in one task]): each chunk's first instance, then the count; or nothing.
  std::optional<std::vector<int64_t>> task_starts(const Frame& f, const Vec& arg);
  /// chunk(k, frame) for every chunk k of `start` as a task, on a frame of its own that shares
  /// f's other variables (the chunk takes its instances of the argument itself); false (and
  /// `again` false) where one raised an error that the levels one by one will meet again.
  bool run_tasks(Frame& f, const std::vector<int64_t>& start, const std::function<void(int64_t, Frame&)>& chunk, bool& again);
  // FlatWalk's run_step_children_apart (Note [Children one after another] in
  // flatten/passes/lay_out_results.h): where the partition wrote the children one after
  // another (exec/cpu/filter_groups.cpp), their concatenation is a view.
  Vec concat_vectors(std::span<const Vec> parts) { return concat(parts); }
  Vec known_ints(int64_t n, int64_t value) { return Vec::scalar(prog.types.int_(), n, uniform_buffer<int64_t>(value, n)); }
  /// The recursion loop of the function of `f` (its whole body) runs no effect, nor do the
  /// functions it calls.
  bool loop_is_pure(const Frame& f);
  std::optional<std::vector<bool>> effectful;  // flatten::effectful_functions of the program running, once asked
};

// Note [Small segments in one task]
// A flattened recursion makes one parallel step a level for all its instances, and every
// step is a pass over memory with the whole team: quicksort's 2^24 keys take some thirty
// levels, each streaming the keys several times. Once a level holds many instances, and its
// chunks balance over the threads, the levels left are run a chunk of instances at a time
// instead. The instances are cut into up to four chunks a thread of equal elements
// (task_chunks.h, which also says when tasks do not pay), and each chunk runs the rest of the
// loop, every level, as one task: an OpenMP thread, whose primitives then run serially (nested
// parallelism is off), its data in that core's caches. The chunks' results, in order, are the
// level's result, since the instances of a loop are independent. Only loops with no effect
// anywhere (no print, no rand, no time, in the loop or the functions it calls) are split, so
// running a chunk again changes nothing: where a chunk fails (an error, too deep a recursion on
// a worker's smaller stack), the levels are run one by one as before and report the error they
// meet, as they would have.
namespace {

/// Each instance's element count by its first sequence (1 for an argument without one).
std::vector<int64_t> instance_weights(const Vec& v) {
  switch (v.type()->kind) {
    case lang::TypeKind::Seq: return std::vector<int64_t>(v.lengths(), v.lengths() + v.size());
    case lang::TypeKind::Pair: {
      std::vector<int64_t> w = instance_weights(v.first());
      return std::any_of(w.begin(), w.end(), [](int64_t x) { return x != 1; }) ? w : instance_weights(v.second());
    }
    default: return std::vector<int64_t>(static_cast<size_t>(v.size()), 1);
  }
}

}  // namespace

bool CpuExecutor::Impl::loop_is_pure(const Frame& f) {
  if (!effectful) effectful = flatten::effectful_functions(*program);
  return !effectful->at(static_cast<size_t>(f.fn - program->functions.data()));
}

std::optional<std::vector<int64_t>> CpuExecutor::Impl::task_starts(const Frame& f, const Vec& arg) {
  const int threads = omp_get_max_threads();
  if (threads < 2 || omp_in_parallel() || arg.size() < 2 * int64_t{threads}) return std::nullopt;
  std::optional<std::vector<int64_t>> at = task_chunks(instance_weights(arg), threads);
  if (!at || !loop_is_pure(f)) return std::nullopt;
  return at;
}

bool CpuExecutor::Impl::run_tasks(Frame& f, const std::vector<int64_t>& start, const std::function<void(int64_t, Frame&)>& chunk,
                                  bool& again) {
  const int64_t k_count = static_cast<int64_t>(start.size()) - 1;
  std::vector<std::exception_ptr> failed(static_cast<size_t>(k_count));
#pragma omp parallel for schedule(dynamic, 1) num_threads(omp_get_max_threads())
  for (int64_t k = 0; k < k_count; ++k) {
    try {
      lang::eval::DeepStack::watch_this_thread();
      Frame own{f.fn, f.slots};  // the function's other variables (shared bases), shared
      chunk(k, own);
    } catch (...) {
      failed[static_cast<size_t>(k)] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : failed) {
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const EvalError& err) {
      if (err.message == lang::message(lang::RuntimeErrorId::Interrupted)) throw;
    } catch (const std::bad_alloc&) {
    } catch (const std::length_error&) {
    }  // anything else (an internal error) goes on up
    again = false;  // not again in this run of the loop
    return false;   // the levels one by one meet the error again, in their order
  }
  return true;
}

std::optional<CpuExecutor::Impl::Slot> CpuExecutor::Impl::finish_levels(const Stmt& s, Frame& f, const Vec& arg, bool& again) {
  const std::optional<std::vector<int64_t>> start = task_starts(f, arg);
  if (!start) return std::nullopt;
  std::vector<Vec> parts(start->size() - 1);
  auto chunk = [&](int64_t k, Frame& own) {
    const int64_t first = (*start)[static_cast<size_t>(k)], count = (*start)[static_cast<size_t>(k) + 1] - first;
    parts[static_cast<size_t>(k)] = recurse_from(s, own, slice(arg, first, count), false).vec;
  };
  if (!run_tasks(f, *start, chunk, again)) return std::nullopt;
  Slot r;
  r.set = true;
  r.vec = concat(parts);
  return r;
}

// Note [Results laid out before the calls] in flatten/flat_ir.h: each task places its
// instances' results itself, in the loop's one buffer.
std::optional<bool> CpuExecutor::Impl::finish_levels_into(const Stmt& s, Frame& f, const Vec& arg, const std::vector<int64_t>& at,
                                                          PlacedRows<Vec>& out, bool& again) {
  const std::optional<std::vector<int64_t>> start = task_starts(f, arg);
  if (!start) return std::nullopt;
  std::atomic<bool> laid_out = true;
  // Each chunk's instances a group at a time, each group taken from the argument itself (Note
  // [Groups that fit a core's cache] in task_chunks.cpp).
  const std::vector<int64_t> weight = instance_weights(arg);
  const int64_t most = task_group_elements();
  auto chunk = [&](int64_t k, Frame& own) {
    const int64_t first = (*start)[static_cast<size_t>(k)], count = (*start)[static_cast<size_t>(k) + 1] - first;
    const std::vector<int64_t> groups =
        task_groups(std::span<const int64_t>(weight).subspan(static_cast<size_t>(first), static_cast<size_t>(count)), most > 0 ? most : INT64_MAX);
    for (size_t g = 0; g + 1 < groups.size(); ++g) {
      const int64_t b = first + groups[g], e = first + groups[g + 1];
      Frame mine{own.fn, own.slots};
      if (!lay_out_from(s, mine, slice(arg, b, e - b), std::vector<int64_t>(at.begin() + b, at.begin() + e), out, false))
        laid_out = false;
    }
  };
  if (!run_tasks(f, *start, chunk, again)) return std::nullopt;
  return laid_out.load();
}

// rand (and rand_seed) with each instance's path hash (Note [rand] in lang/eval/rand.h): the
// interpreter's primitive per instance, drawing as if it ran at that instance's position (and
// refusing a rand_seed inside an apply-to-each). Instances of one context have distinct paths,
// so the order among them does not change any draw.
Vec CpuExecutor::Impl::rand_with_paths(const Stmt& s, Frame& f) {
  const int64_t* paths = vec(f, s.uses[1]).data<int64_t>();
  LiftedCall c{s.prim, s.span, &s.type_args, type_of(f, s.dst)};
  Vec bound[1] = {vec(f, s.uses[0])};
  struct ClearPath {  // also when a draw fails
    lang::eval::RandState& r;
    ~ClearPath() { r.clear_path(); }
  } clear{rand};
  return apply_fallback_prim(ctx, c, bound, [&](int64_t i) { rand.set_path(static_cast<uint64_t>(paths[i])); });
}

namespace {

/// Flat IR IndexShared on sequences of scalars: the bounds check and the gather in one pass,
/// with no position vector. A vector of one shared sequence (a sequence used inside a
/// top-level apply-to-each, the usual case) does not read `ids` at all: they are all 0.
Vec index_shared_scalars(const Vec& seqs, const int64_t* ids, const int64_t* idx, int64_t n, lang::Span span) {
  const Vec& e = seqs.elems();
  const int64_t* off = seqs.offsets();
  const int64_t* len = seqs.lengths();
  int64_t bad = n;  // the lowest failing instance
  Vec out = with_scalar(e.kind(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Buf<T> buf(n);
    T* o = buf.data();
    const T* in = e.data<T>();
    int64_t lowest = n;
    if (seqs.size() == 1) {
      const T* base = in + off[0];
      uint64_t l = static_cast<uint64_t>(len[0]);
#pragma omp parallel for schedule(static) reduction(min : lowest) if (n >= kParallelGrain)
      for (int64_t j = 0; j < n; ++j) {
        int64_t i = idx[j];
        if (static_cast<uint64_t>(i) >= l) {  // negative or past the end
          lowest = std::min(lowest, j);
          i = 0;
        }
        o[j] = l > 0 ? base[i] : T{};
      }
    } else {
#pragma omp parallel for schedule(static) reduction(min : lowest) if (n >= kParallelGrain)
      for (int64_t j = 0; j < n; ++j) {
        int64_t k = ids[j], i = idx[j];
        if (i < 0 || i >= len[k]) {
          lowest = std::min(lowest, j);
          continue;
        }
        o[j] = in[off[k] + i];
      }
    }
    bad = lowest;
    return Vec::scalar(e.type(), n, buf.share());
  });
  if (bad < n) {
    int64_t k = seqs.size() == 1 ? 0 : ids[bad];
    throw EvalError{lang::message(lang::RuntimeErrorId::SeqRefBounds, idx[bad], len[k]), span};
  }
  return out;
}

}  // namespace

/// flags[i] ? a[#T before i] : b[#F before i].
Vec CpuExecutor::Impl::merge(const Vec& flags, const Vec& a, const Vec& b) {
  int64_t n = flags.size();
  // One side empty: every flag agrees, and the other side is the result as it stands (often,
  // at the top levels of a recursion, where the vectors are largest).
  if (a.size() == 0 && b.size() == n) return b;
  if (b.size() == 0 && a.size() == n) return a;
  return merge_flags(FlagSplit(flags.data<bool>(), n), a, b);
}

/// Per instance i the sequence [uses[0][i], ..., uses[k-1][i]].
Vec CpuExecutor::Impl::seq_lit(const Type* t, const Stmt& s, const Frame& f) {
  size_t k = s.uses.size();
  NDP_ASSERT(k >= 1, "seqlit without elements");
  std::vector<Vec> parts;
  parts.reserve(k);
  for (VarId u : s.uses) parts.push_back(vec(f, u));
  int64_t n = parts[0].size();
  for (const Vec& p : parts) NDP_ASSERT(p.size() == n, "seqlit parts of different lengths");
  // Every instance holds k elements: regular, lengths and offsets never written.
  return Vec::seq(t, n, uniform_buffer(static_cast<int64_t>(k), n), interleave(parts));
}

void CpuExecutor::Impl::exec_data(const Stmt& s, Frame& f) {
  // Time's block is made of statements timed on their own.
  if (!stmt_profile_enabled() || s.op == Op::Time) return exec_data_untimed(s, f);
  StmtTimer timer(*f.fn, s, s.uses.empty() || f.fn->vars.at(s.uses[0]).is_host() ? 0 : vec(f, s.uses[0]).size());
  exec_data_untimed(s, f);
}

void CpuExecutor::Impl::exec_data_untimed(const Stmt& s, Frame& f) {
  auto use = [&](size_t i) -> const Vec& {
    NDP_ASSERT(i < s.uses.size(), "Flat IR statement lacks an operand");
    return vec(f, s.uses[i]);
  };
  switch (s.op) {
    case Op::Lit: {
      const Type* t = type_of(f, s.dst);
      set_vec(f, s.dst, from_value(prog.types, t, s.lit, host(f, s.uses.at(0))));
      return;
    }
    case Op::Global: {
      NDP_ASSERT(s.global < prog.globals.size(), "Flat IR global with a bad id");
      // The value as a vector of one instance: a call's bound argument, or a global kept as a
      // vector (Note [Globals kept as vectors] in driver/session.cpp); else made from its Value.
      const lang::core::Global& g = *prog.globals[s.global];
      const Vec* one = nullptr;
      if (const BoundGlobal* b = find_bound(bound, s.global)) {
        NDP_ASSERT(!b->device, "a device vector bound on the cpu backend");
        one = &b->value;
      } else {
        if (g.kind != lang::core::Global::Kind::Variable) fail_function_value();
        if (!g.has_value) throw EvalError{lang::message(lang::RuntimeErrorId::Undefined, upper_name(g.name)), s.span};
        if (g.vector) one = static_cast<const Vec*>(g.vector.get());
      }
      if (one != nullptr)
        set_vec(f, s.dst, replicate_one(retype(prog.types, *one, type_of(f, s.dst)), host(f, s.uses.at(0))));
      else
        set_vec(f, s.dst, from_value(prog.types, type_of(f, s.dst), g.variable_value(), host(f, s.uses.at(0))));
      return;
    }
    case Op::Empty: {
      const Type* t = type_of(f, s.dst);
      NDP_ASSERT(t->kind == lang::TypeKind::Seq, "empty of a non-sequence type");
      int64_t n = host(f, s.uses.at(0));
      set_vec(f, s.dst, Vec::seq(t, n, uniform_buffer(int64_t{0}, n), from_values(prog.types, t->a, {})));
      return;
    }
    case Op::Count: set_host(f, s.dst, count_true(use(0))); return;
    case Op::MapLanes: {  // Note [Tuning]: a task a row, or flattened
      static const int threads = omp_get_max_threads();
      static const Tuning tuning = load_tuning(cpu_device_name(threads), Tuning::cpu_defaults());
      int64_t average = 1;  // the longest average row, as the cuda backend takes it
      for (size_t i = 1; i < s.uses.size(); ++i)
        if (const Vec& rows = use(i); rows.size() > 0)
          average = std::max<int64_t>(average, (rows.elems().size() + rows.size() - 1) / rows.size());
      std::optional<int> forced = forced_map_lanes();
      set_host(f, s.dst, forced ? *forced : cpu_own_row_form(tuning, host(f, s.uses.at(0)), average, threads));
      return;
    }
    case Op::Nest: {
      const Vec& len = use(0);
      set_vec(f, s.dst, Vec::seq(type_of(f, s.dst), len.size(), len.shared_buffer(), use(1)));
      return;
    }
    case Op::Replicate: {
      LengthSegs segs = segments_of(use(1));
      set_vec(f, s.dst, replicate_each(use(0), segs));  // generated (Note [Generated buffers])
      return;
    }
    case Op::PathStep: {
      const Vec& parent = use(0);
      const Vec& lens = use(1);
      auto off = offsets_for(lens.shared_buffer(), lens.size());
      int64_t m = off[lens.size()];
      Buf<int64_t> out(m);
      const int64_t* p = parent.data<int64_t>();
      parallel_for(lens.size(), [&](int64_t seg) {
        for (int64_t k = 0; k < lens.data<int64_t>()[seg]; ++k)
          out[off[seg] + k] = static_cast<int64_t>(
              lang::eval::RandState::step(static_cast<uint64_t>(p[seg]), static_cast<uint64_t>(k)));
      });
      set_vec(f, s.dst, Vec::scalar(type_of(f, s.dst), m, out.share()));
      return;
    }
    case Op::FnTag: {
      const Vec& fns = use(0);
      std::vector<int64_t> table = host::function_tags(s.lit.elems());
      Buf<int64_t> out(fns.size());
      const int64_t* ids = fns.data<int64_t>();
      parallel_for(fns.size(), [&](int64_t i) { out[i] = table.at(static_cast<size_t>(ids[i])); });
      set_vec(f, s.dst, Vec::scalar(type_of(f, s.dst), fns.size(), out.share()));
      return;
    }
    case Op::Iota: {
      int64_t n = host(f, s.uses.at(0));
      Buf<int64_t> out(n);
      parallel_for(n, [&](int64_t i) { out[i] = i; });
      set_vec(f, s.dst, Vec::scalar(type_of(f, s.dst), n, out.share()));
      return;
    }
    case Op::Gather: {
      // From one instance every id is 0 (in range by construction), unread: that instance n
      // times, and itself for n = 1 (a shared sequence passed to a call made once: no copy).
      const Vec& ids = use(1);
      if (use(0).size() == 1) set_vec(f, s.dst, ids.size() == 1 ? use(0) : replicate_one(use(0), ids.size()));
      else set_vec(f, s.dst, take(use(0), std::span<const int64_t>(ids.data<int64_t>(), static_cast<size_t>(ids.size()))));
      return;
    }
    case Op::IndexShared: {
      // a[i] where instance j reads sequence ids[j] of the shared vector: one gather of elements.
      const Vec& seqs = use(0);
      const int64_t* ids = use(1).data<int64_t>();
      const int64_t* idx = use(2).data<int64_t>();
      int64_t n = use(1).size();
      const int64_t* off = seqs.offsets();
      const int64_t* len = seqs.lengths();
      if (is_flat_scalar(seqs.elems().type())) {
        set_vec(f, s.dst, index_shared_scalars(seqs, ids, idx, n, s.span));
        return;
      }
      if (int64_t j = first_failing(n, [&](int64_t j) { return idx[j] < 0 || idx[j] >= len[ids[j]]; }); j >= 0)
        throw EvalError{lang::message(lang::RuntimeErrorId::SeqRefBounds, idx[j], len[ids[j]]), s.span};
      Indices pos(static_cast<size_t>(n));
      parallel_for(n, [&](int64_t j) { pos[static_cast<size_t>(j)] = off[ids[j]] + idx[j]; });
      set_vec(f, s.dst, take(seqs.elems(), pos));
      return;
    }
    case Op::Pack: {
      set_vec(f, s.dst, pack(use(0), use(1)));
      return;
    }
    case Op::Merge: set_vec(f, s.dst, merge(use(0), use(1), use(2))); return;
    case Op::Concat: set_vec(f, s.dst, append(use(0), use(1))); return;
    case Op::Slice: {
      const Vec& v = use(0);
      int64_t begin = host(f, s.uses.at(1)), count = host(f, s.uses.at(2));
      set_vec(f, s.dst, slice(v, begin, count));
      return;
    }
    case Op::SeqLit: set_vec(f, s.dst, seq_lit(type_of(f, s.dst), s, f)); return;
    case Op::CheckLengths: {
      const Vec &a = use(0), &b = use(1);
      if (int64_t k = first_length_difference(a, b); k >= 0)
        throw EvalError{lang::message(lang::RuntimeErrorId::ApplyToEachLengthMismatch, a.length(k), b.length(k)), s.span};
      return;
    }
    case Op::Prim: {
      if ((s.prim == lang::core::PrimId::Rand || s.prim == lang::core::PrimId::RandSeed) && s.uses.size() == 2) {
        set_vec(f, s.dst, rand_with_paths(s, f));
        return;
      }
      // An operand read for the last time is handed over (Note [Updates in place]), unless it
      // is read twice here.
      bool hand_over = !s.uses.empty() && last_read(s, s.uses[0]) &&
                       std::count(s.uses.begin(), s.uses.end(), s.uses[0]) == 1;
      std::vector<Vec> args;
      args.reserve(s.uses.size());
      for (VarId u : s.uses) args.push_back(hand_over && u == s.uses[0] ? std::move(f.slots[u].vec) : vec(f, u));
      LiftedCall c{s.prim, s.span, &s.type_args, type_of(f, s.dst)};
      c.owns_first = hand_over;
      set_vec(f, s.dst, apply_lifted_prim(ctx, c, args));
      return;
    }
    case Op::Kernel: case Op::LoopKernel: case Op::MapKernel: {  // a loop kernel loops inside its instances
      NDP_ASSERT(s.kernel != nullptr, "kernel without its body");
      std::vector<Vec> ins;
      std::vector<const Type*> out_types;
      for (VarId u : s.uses) ins.push_back(vec(f, u));
      for (VarId o : s.outs) out_types.push_back(type_of(f, o));
      // A loop kernel's operands after its inputs are the rows of the sequences it reads.
      std::vector<Vec> seqs(ins.begin() + static_cast<std::ptrdiff_t>(s.kernel->inputs.size()), ins.end());
      ins.resize(s.kernel->inputs.size());
      out_types.resize(s.kernel->outputs.size());  // the written sequences' rows come after
      std::vector<Vec> r = run_kernel(*s.kernel, ins, out_types, seqs);
      for (size_t k = 0; k < r.size(); ++k) set_vec(f, s.outs[k], std::move(r[k]));
      return;
    }
    case Op::ReduceKernel: case Op::ScanKernel: case Op::PackKernel: {
      NDP_ASSERT(s.kernel != nullptr, "consumer kernel without its body");
      std::vector<Vec> ins;
      for (VarId u : flatten::kernel_inputs(s)) ins.push_back(vec(f, u));
      if (s.op == Op::ReduceKernel) set_vec(f, s.dst, reduce_kernel(s, use(0), ins, type_of(f, s.dst)));
      else if (s.op == Op::ScanKernel) set_vec(f, s.dst, scan_kernel(s, use(0), ins, type_of(f, s.dst)));
      else set_vec(f, s.dst, pack_kernel(s, use(0), ins));
      return;
    }
    case Op::FilterGroup: {
      std::vector<Vec> r = run_filter_group(
          s, [&](VarId v) -> const Vec& { return vec(f, v); }, [&](VarId v) { return type_of(f, v); });
      for (size_t m = 0; m < r.size(); ++m) set_vec(f, s.outs.at(m), std::move(r[m]));
      return;
    }
    case Op::AppendChain:
      set_vec(f, s.dst, run_append_chain(s, [&](VarId v) -> const Vec& { return vec(f, v); }, type_of(f, s.dst)));
      return;
    case Op::Time: {
      NDP_ASSERT(s.then_block != nullptr, "time without a block");
      auto t0 = std::chrono::steady_clock::now();
      Slot r = run_block(*s.then_block, f);
      std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
      const Type* t = type_of(f, s.dst);
      int64_t n = r.vec.size();
      Buf<double> secs(n);
      parallel_for(n, [&](int64_t i) { secs[i] = dt.count(); });
      set_vec(f, s.dst, Vec::pair(t, r.vec, Vec::scalar(t->b, n, secs.share())));
      return;
    }
    default: break;  // the structural statements: FlatWalk::exec_structural
  }
  throw lang::InternalError("internal error: cpu executor: a Flat IR op it does not handle");
}

CpuExecutor::CpuExecutor(lang::core::Program& prog, std::FILE* out) : impl_(std::make_unique<Impl>(prog, out)) {}

CpuExecutor::~CpuExecutor() = default;

void CpuExecutor::set_library_files(uint32_t last_file) { impl_->last_library_file = last_file; }

lang::eval::RunResult CpuExecutor::run(const flatten::Program& p) {
  Vec r;
  lang::eval::RunResult result = run_bound(p, {}, &r);
  if (result.ok) result.value = to_value(r, 0);
  return result;
}

lang::eval::RunResult CpuExecutor::run_bound(const flatten::Program& p, std::span<const BoundGlobal> bound,
                                             Vec* result) {
  Impl& m = *impl_;
  stmt_profile_new_program();
  m.bound = bound;
  m.effectful.reset();
  lang::eval::RunResult r = m.run_program(p, m.stack, m.rand, m.out, [&] {
    Vec arg = from_value(m.prog.types, m.prog.types.int_(), Value::int_(0), 1);
    *result = m.call(p.entry, arg, nullptr, Span{});
    NDP_ASSERT(result->size() == 1, "the entry function did not return one instance");
    return Value{};
  });
  m.bound = {};
  return r;
}

}  // namespace ndp::exec::cpu
