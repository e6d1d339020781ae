// The cuda backend's executor: FlatWalk (exec/common/flat_walk.h, shared with the cpu
// backend) with DVecs in device memory. The host holds only the
// control scalars (host variables: lengths, counts, loop conditions), which it reads back as
// they are needed; everything else stays on the device until the result comes back.
#include "exec/cuda/executor.h"

#include <cctype>
#include <chrono>
#include <new>
#include <optional>
#include <stdexcept>

#include "exec/common/flat_walk.h"
#include "exec/common/switches.h"
#include "exec/host/convert.h"
#include "exec/common/profile.h"
#include "exec/cuda/append_chains.h"
#include "exec/cuda/batched_moves.h"
#include "exec/cuda/block_levels.h"
#include "exec/cuda/consumer_kernels.h"
#include "exec/cuda/map_lanes.h"
#include "exec/cuda/device_vec_ops.h"
#include "exec/cuda/filter_groups.h"
#include "exec/cuda/kernels.h"
#include "exec/cuda/laid_out_levels.h"
#include "exec/cuda/lifted_prims.h"
#include "exec/cuda/partition_levels.h"
#include "exec/cuda/regular_levels.h"
#include "exec/host/kernel_failure.h"
#include "flatten/passes/fuse_elementwise.h"
#include "lang/diagnostics.h"
#include "lang/eval/deep_stack.h"
#include "lang/eval/prim_call.h"
#include "lang/eval/rand.h"
#include "lang/eval/streams.h"
#include "runtime/gpu/laid_out.h"
#include "runtime/gpu/rand.h"

namespace ndp::exec::cuda {

using flatten::Block;
using flatten::Op;
using flatten::Stmt;
using flatten::VarId;
using lang::Span;
using lang::Type;
using lang::Value;
using lang::eval::EvalError;

std::string CudaExecutor::unavailable_reason() {
  std::string why;
  return Gpu::get(&why) != nullptr ? std::string() : why;
}

struct CudaExecutor::Impl : FlatWalk<CudaExecutor::Impl, DVec> {
  lang::core::Program& prog;
  std::FILE* out;
  Gpu& g;
  GpuKernels kernels;
  lang::eval::StreamTable streams;
  lang::eval::RandState rand;          // the walk's per-form state; draws are the device's (draws)
  runtime::gpu::DrawCounts draws;      // rand on the device (Note [Draw counts on the device])
  lang::eval::PrimEnv env;
  GpuPrimContext ctx;
  int64_t fallbacks = 0;
  lang::eval::DeepStack stack{kWalkStackBytes};
  std::span<const host::BoundGlobal> bound;  // for the run in progress (run_bound)
  DVec entry_argument;                        // the int 0 every run's entry function takes

  Impl(lang::core::Program& p, std::FILE* o, Gpu& gpu)
      : prog(p), out(o), g(gpu), kernels(gpu), streams(o), draws(gpu.prims()) {
    env.types = &prog.types;
    env.out = out;
    env.streams = &streams;
    env.rand = &rand;
    ctx.gpu = &g;
    ctx.kernels = &kernels;
    ctx.host.types = &prog.types;
    ctx.host.env = &env;
    ctx.host_fallbacks = &fallbacks;
    ctx.defers_failures = [this](lang::Span s) { return !in_library(s); };
  }

  // FlatWalk's backend interface
  lang::TypeContext& types() { return prog.types; }
  DVec empty_vector(const Type* t) { return empty_of(g, prog.types, t); }
  /// The levels of a recursion loop run one by one on the GPU, but a regular loop's, rewritten
  /// in place from its first level (Note [Regular levels] in flatten/flat_ir.h); a laid-out
  /// loop's last levels finish in blocks as lay_out_levels runs it (Note [Levels in a block]).
  std::optional<Slot> finish_levels(const Stmt& s, Frame& f, const DVec& arg, bool& again) {
    // A regular loop asks again at the next level while its instances' lengths are not known
    // to be one (a level's halves are).
    again = s.loop->regular.has_value() && arg.size() != 1 && !arg.regular_length();
    if (!s.loop->regular) return std::nullopt;
    StmtTimer timer(*f.fn, s, arg.size());
    std::optional<DVec> r = run_regular_levels(g, kernels, *s.loop->regular, arg, type_of(f, s.dst));
    if (!r) return std::nullopt;
    Slot slot;
    slot.set = true;
    slot.vec = std::move(*r);
    return slot;
  }
  std::optional<Slot> lay_out_levels(const Stmt& s, Frame& f, const DVec& top);
  // FlatWalk's run_step_children_apart (Note [Children one after another]).
  DVec concat_vectors(std::span<const DVec> parts) { return concat(g, parts); }
  DVec known_ints(int64_t n, int64_t value) { return DVec::known(g, prog.types.int_(), n, value); }
  void exec_data(const Stmt& s, Frame& f);
  void exec_data_untimed(const Stmt& s, Frame& f);

  /// Note [Complementary flags]: each bool output of `k` that is `not` of another output.
  void remember_complements(const flatten::KernelBody& k, const std::vector<DVec>& outs) {
    for (size_t a = 0; a < k.outputs.size() && a < outs.size(); ++a) {
      const flatten::KernelNode& node = k.nodes.at(k.outputs[a]);
      if (node.kind != flatten::KernelNode::Kind::Prim || node.prim != lang::core::PrimId::Not ||
          node.type->kind != lang::TypeKind::Bool)
        continue;
      for (size_t b = 0; b < k.outputs.size() && b < outs.size(); ++b)
        if (k.outputs[b] == node.args.at(0)) remember_complement(outs[a], outs[b]);
    }
  }

  /// n copies of a host value, on the device.
  // Note [Literals as fills]
  // A flattened level makes a literal's copies for each level (qsort's `lit 2`, the `0` and `1`
  // of its append): sent up and gathered, that was an upload and two launches a literal. A flat
  // scalar's copies are instead a deferred broadcast (Note [Deferred vectors]) of its bits: a
  // kernel that reads it reads the one value in place, and anything else gets one fill.
  DVec constant(const Type* t, const Value& v, int64_t n) {
    // A function value is its interned id (Note [Vec representation]), known like a number.
    if (t->kind == lang::TypeKind::Fn && v.kind() == lang::ValueKind::Fn)
      return DVec::known(g, t, n, static_cast<uint64_t>(host::function_id(v.fn())));
    if (!flatten::const_ok(v, t)) return replicate_one(g, upload(g, host::from_value(prog.types, t, v, 1)), n);
    return DVec::known(g, t, n, flatten::const_bits(v));
  }
  /// A kernel whose every input is a known value (Note [Known values] in device_vec.cpp): its
  /// outputs computed once on the host, known too. False where that does not apply.
  bool known_kernel(const Stmt& s, std::span<const DVec> ins, std::span<const Type* const> out_types, Frame& f) {
    if (ins.empty()) return false;  // (every kernel reads an input: its instances' count)
    std::vector<Value> values;
    for (const DVec& v : ins) {
      std::optional<uint64_t> bits = v.known_bits();
      if (!bits) return false;
      values.push_back(value_of_bits(v.type(), *bits));
    }
    std::optional<std::vector<Value>> outs = host::uniform_outputs(*s.kernel, values);
    if (!outs) return false;
    const int64_t n = ins[0].size();
    for (size_t k = 0; k < outs->size(); ++k)
      set_vec(f, s.outs[k], DVec::known(g, out_types[k], n, flatten::const_bits((*outs)[k])));
    return true;
  }
  /// The same for a lone elementwise primitive of known arguments (a loop's counter `k - 1`):
  /// known too, so that the loop's test of it is decided on the host, with no launch and no
  /// wait, and the loop's iterations queue on the GPU one after another.
  bool known_prim(const host::LiftedCall& c, std::span<const DVec> args, Frame& f, VarId dst) {
    if (args.empty()) return false;
    std::vector<Value> values;
    for (const DVec& v : args) {
      std::optional<uint64_t> bits = v.known_bits();
      if (!bits || !host::computed_alike(v.type())) return false;  // (a float's bits are not an int's)
      values.push_back(value_of_bits(v.type(), *bits));
    }
    std::optional<Value> r = host::uniform_prim(c.id, c.type_args, values, c.result);
    if (!r) return false;
    set_vec(f, dst, DVec::known(g, c.result, args[0].size(), flatten::const_bits(*r)));
    return true;
  }
  /// The value of a known vector's bits at type t (an int, bool, char or i32: host::uniform_outputs' types).
  static Value value_of_bits(const Type* t, uint64_t bits) {
    switch (t->kind) {
      case lang::TypeKind::Bool: return Value::bool_((bits & 1) != 0);
      case lang::TypeKind::Char: return Value::char_(static_cast<unsigned char>(bits));
      case lang::TypeKind::I32: return Value::i32(static_cast<int32_t>(static_cast<uint32_t>(bits)));
      default: return Value::int_(static_cast<int64_t>(bits));
    }
  }
  /// IndexShared where the rows and the places read are formulas of the instance over rows of
  /// one known length, and in bounds: a view of the elements, or a gather through positions
  /// one launch computes (Note [Affine indices] in affine_index.h); nullopt elsewhere.
  std::optional<DVec> index_by_formula(const DVec& seqs, const DVec& ids, const DVec& idx) {
    const int64_t n = idx.size();
    const DVec& elems = seqs.elems();
    if (n == 0) return std::nullopt;
    // (one sequence: every id is 0, and its elements are the row, from 0)
    const bool one = seqs.size() == 1;
    const std::optional<int64_t> length = one ? std::optional(elems.size()) : seqs.regular_length();
    const std::optional<AffineIndex> row = one ? std::optional(AffineIndex::constant(0)) : ids.index_form();
    const std::optional<AffineIndex> place = idx.index_form();
    if (!length || !row || !place || !within(*row, n, seqs.size()) || !within(*place, n, *length)) return std::nullopt;
    const std::optional<AffineIndex> pos = row_major(*row, *place, *length, n);
    if (!pos) return std::nullopt;
    const lang::Type* t = elems.type();
    if (elems.index_form() == AffineIndex::iota()) return DVec::deferred_index(g, t, n, *pos);  // the positions themselves
    if (host::is_flat_scalar(t) && !elems.pending())
      return DVec::deferred_view(g, elems, n, DVec::Affine{pos->c, pos->a, pos->k, pos->b});
    DVec positions = DVec::deferred_index(g, prog.types.int_(), n, *pos);
    if (host::is_flat_scalar(t)) return DVec::deferred_gather(g, elems, std::move(positions));
    return take(g, elems, positions.data(), n);
  }
  /// Instance k of v repeated over segment k of segs (whose offsets `off` holds, if any). A flat
  /// scalar's copies, and each flat component's of a pair or datatype (a point, a line), are
  /// deferred (Note [Deferred vectors] in device_vec.h): often nothing reads them stored.
  DVec spread(const DVec& v, runtime::gpu::DSegs segs, const DBuf& off) {
    switch (v.kind()) {
      case lang::TypeKind::Pair: return DVec::pair(v.type(), spread(v.first(), segs, off), spread(v.second(), segs, off));
      case lang::TypeKind::Data: return DVec::data(v.type(), spread(v.fields(), segs, off));
      default: break;
    }
    const int64_t total = segs.total;
    if (!host::is_flat_scalar(v.type())) {
      DBuf ids = g.alloc(total * 8);
      g.check(g.prims().segment_ids(segs, ids->pointer()));
      return take(g, v, ids->pointer(), total);
    }
    if (std::optional<uint64_t> bits = v.known_bits()) return DVec::known(g, v.type(), total, *bits);
    Gpu& gpu = g;
    auto make = [&gpu, v, off, segs] {
      DBuf buf = gpu.alloc(segs.total * elem_bytes(v.type()));
      // Instance ids spread are each element's segment: one pass, without storing the ids.
      if (v.pending_iota()) gpu.check(gpu.prims().segment_ids(segs, buf->pointer()));
      else gpu.check(gpu.prims().dist(elem_type(v.type()), v.data(), segs, buf->pointer()));
      return buf;
    };
    // One value over every instance (a call's free scalar), or a value a segment: kernels may
    // read them in place (Note [Spread inputs] in kernels.h).
    return segs.count == 1 ? DVec::deferred_broadcast(v.type(), total, v, make)
                           : DVec::deferred_spread(v.type(), v, segs, off, make);
  }
  /// a[0], b[0], a[1], b[1] ...: for flat scalars, and pairs and datatypes of them, an append
  /// of one-element segments a component at a time (no positions); nothing for other values.
  std::optional<DVec> interleave_two(const DVec& a, const DVec& b) {
    const int64_t n = a.size();
    const runtime::gpu::DSegs one{n, n, 0, 1};
    AppendBatch batch(g, one, one, runtime::gpu::DSegs{n, 2 * n, 0, 2});  // Note [Gathers launched together]
    std::optional<DVec> out = zip_components(a, b, [&](const DVec& u, const DVec& w) -> std::optional<DVec> {
      if (!host::is_flat_scalar(u.type()) || u.gather_unchecked() || w.gather_unchecked()) return std::nullopt;
      return batch.add(u, w);
    });
    if (out) batch.send();  // (else nothing reads what it holds)
    return out;
  }
  DVec rand_with_paths(const Stmt& s, Frame& f);
  DVec rand_seed(const Stmt& s, Frame& f);
  DVec merge(const DVec& flags, const DVec& a, const DVec& b);
  DVec seq_lit(const Type* t, const Stmt& s, const Frame& f);
};

// Note [Results laid out on the GPU] in exec/cuda/laid_out_levels.h: the levels of laid-out
// loop s from the one whose argument is `top`, each instance's result placed in one buffer at
// its place; nothing where the loop is not laid out, or where a level's lengths do not lay
// out (read once, at the end), and FlatWalk then runs the loop as before.
std::optional<CudaExecutor::Impl::Slot> CudaExecutor::Impl::lay_out_levels(const Stmt& s, Frame& f, const DVec& top) {
  const flatten::RecursionLoop& loop = *s.loop;
  const Type* result_type = type_of(f, s.dst);
  if (!loop.laid_out || f.fn->has_path || top.kind() != lang::TypeKind::Seq ||
      !host::is_flat_scalar(top.type()->a) || result_type->kind != lang::TypeKind::Seq || !host::is_flat_scalar(result_type->a))
    return std::nullopt;
  if (loop.partition) {  // Note [Partition levels]: the whole loop as partitions in place
    StmtTimer timer(*f.fn, s, top.size());
    if (std::optional<DVec> r = run_partition_levels(g, kernels, *loop.partition, top, result_type)) {
      Slot slot;
      slot.set = true;
      slot.vec = std::move(*r);
      return slot;
    }
  }
  const flatten::LaidOut& plan = *loop.laid_out;
  const int64_t children = plan.children(), total = top.total();
  const Type* int_type = prog.types.int_();
  DBuf out = g.alloc(std::max<int64_t>(1, total) * elem_bytes(result_type->a));
  DBuf failed = g.alloc(4);
  g.check(g.prims().fill(failed->pointer(), 1, 4, 0));
  BlockLevels blocks(g, *f.fn, s);
  bool blocks_on = blocks.ok();
  const Stmt* lit = children_apart(loop);
  DVec arg = top;
  DVec at = DVec::scalar(int_type, top.size(), top.offsets_buffer());  // (n + 1 offsets: the first n)
  for (uint64_t level = 0;; ++level) {
    if (level >= kMaxCallDepth) throw EvalError{lang::message(lang::RuntimeErrorId::RecursionTooDeep), s.span};
    // Once the level holds few elements, the instances that fit a block finish there.
    if (blocks_on && arg.size() > 0 && arg.total() <= BlockLevels::most_elements(g)) {
      StmtTimer timer(*f.fn, s, arg.size());
      const BlockLevels::Fit fit = blocks.fit(arg);
      const bool all = fit.small == fit.instances;
      if (fit.small > 0 && (all || fit.small_elements * 4 >= fit.elements)) {
        DVec small = DVec::scalar(prog.types.bool_(), fit.instances, fit.small_flags);
        if (blocks.run(all ? arg : pack(g, arg, small), all ? at.data() : pack(g, at, small).data(), out->pointer())) {
          if (all) break;
          DVec large = DVec::scalar(prog.types.bool_(), fit.instances, fit.large_flags);
          arg = pack(g, arg, large);
          at = pack(g, at, large);
        } else {
          // A block could not finish (an error, its capacity, lengths that do not lay out): the
          // levels go on one by one, and place again whatever the blocks placed; they meet the
          // error, or the check, as ever.
          blocks_on = false;
        }
      }
    }
    const int64_t n = arg.size();
    set_vec(f, loop.param, arg);
    const int64_t recursing = std::max<int64_t>(run_block(loop.prefix, f).host, 0);
    for (uint32_t i : plan.early_finish) exec(loop.finish.stmts[i], f);
    DVec rec_flags, lengths;
    {
      // The finished instances' results to their places.
      StmtTimer placing(*f.fn, s, n);
      const DVec& flags = vec(f, plan.flags);
      if (flags.size() != n) return std::nullopt;
      const DVec not_flags = flags_not(g, flags);
      const DVec& finished = plan.base_when ? flags : not_flags;
      rec_flags = plan.base_when ? not_flags : flags;
      remember_count_true(finished, n - recursing);
      remember_count_true(rec_flags, recursing);
      lengths = arg.lengths_vec(int_type);
      if (recursing < n) {
        const DVec& base = vec(f, plan.base);
        if (base.size() != n - recursing) return std::nullopt;
        check_lengths(g, pack(g, lengths, finished), base, failed->pointer());
        place_rows(g, base, pack(g, at, finished).data(), out->pointer());
      }
    }
    if (recursing == 0) break;
    Slot next = lit != nullptr ? run_step_children_apart(loop, *lit, f, recursing) : run_block(loop.step, f);
    for (uint32_t i : plan.early_combine) exec(loop.combine.stmts[i], f);
    // Each recursing instance's children and pieces, one after another in its place.
    StmtTimer placing(*f.fn, s, recursing);
    const DVec& counts = vec(f, plan.child_counts);
    if (next.vec.kind() != lang::TypeKind::Seq || counts.size() != recursing || next.vec.size() != recursing * children)
      return std::nullopt;
    std::vector<LaidOutPart> parts;
    for (const flatten::LaidOut::Piece& piece : plan.pieces) {
      LaidOutPart part;
      if (piece.kind == flatten::LaidOut::Piece::Kind::Child) {
        part.child = static_cast<int>(piece.child);
      } else {
        part.rows = &vec(f, piece.rows);
        if (part.rows->size() != recursing) return std::nullopt;
      }
      parts.push_back(part);
    }
    if (parts.size() > static_cast<size_t>(runtime::gpu::LaidOutPieces::kMost)) return std::nullopt;
    std::vector<DBuf> rows_at;
    DBuf next_at = place_parts(g, parts, recursing, pack(g, at, rec_flags).data(), pack(g, lengths, rec_flags).data(), counts,
                               children, lit != nullptr, next.vec, rows_at, failed->pointer());
    for (size_t q = 0, r = 0; q < parts.size(); ++q)
      if (parts[q].child < 0) place_rows(g, *parts[q].rows, rows_at[r++]->pointer(), out->pointer());
    arg = std::move(next.vec);
    at = DVec::scalar(int_type, arg.size(), std::move(next_at));
  }
  int32_t bad = 0;
  g.check(g.pool().download(&bad, failed->pointer(), 4));
  if (bad != 0) return std::nullopt;
  Slot r;
  r.set = true;
  r.vec = DVec::seq(result_type, top.size(), top.buffer(), top.offsets_buffer(), DVec::scalar(result_type->a, total, std::move(out)));
  return r;
}

// rand with per-instance path hashes, drawn on the device as the interpreter draws (Note
// [Draw counts on the device] in runtime/gpu/rand.h).
DVec CudaExecutor::Impl::rand_with_paths(const Stmt& s, Frame& f) {
  const DVec& bounds = vec(f, s.uses[0]);
  const DVec& paths = vec(f, s.uses[1]);
  const Type* t = type_of(f, s.dst);
  int64_t n = bounds.size();
  DBuf out = g.alloc(n * elem_bytes(t));
  if (g.check(draws.draw(elem_type(t), s.span.begin, bounds.data(), paths.data(), n, out->pointer())) >= 0)
    throw EvalError{lang::message(lang::RuntimeErrorId::RandNotPositive), s.span};
  return DVec::scalar(t, n, std::move(out));
}

/// rand_seed over every instance: the last seed wins, as in the interpreter's order. It is
/// serial only: with path hashes (the program draws), every instance's must be the top
/// level's, 0 (one instance as a rule, so the read-back is a word).
DVec CudaExecutor::Impl::rand_seed(const Stmt& s, Frame& f) {
  const DVec& seeds = vec(f, s.uses[0]);
  if (s.uses.size() == 2) {
    host::Vec paths = download(g, vec(f, s.uses[1]));
    for (int64_t i = 0; i < paths.size(); ++i)
      if (paths.data<int64_t>()[i] != 0) throw EvalError{lang::message(lang::RuntimeErrorId::RandSeedInParallel), s.span};
  }
  g.check(draws.reseed(seeds.data(), seeds.size()));
  return constant(type_of(f, s.dst), Value::bool_(true), seeds.size());
}

/// flags[i] ? a[#T before i] : b[#F before i].
DVec CudaExecutor::Impl::merge(const DVec& flags, const DVec& a, const DVec& b) {
  int64_t n = flags.size();
  NDP_ASSERT(a.size() + b.size() == n, "merge of vectors that do not match their flags");
  if (a.size() == 0) return b;  // every flag false: b as it stands
  if (b.size() == 0) return a;
  DBuf idx = g.alloc(n * 8);
  g.check(g.prims().merge_positions(flags.data(), n, a.size(), idx->pointer()));
  return take_appended(g, a, b, idx->pointer(), n);
}

namespace {

/// NDP_INTERLEAVE_IN_PLACE=0 appends [x, y]'s blocks at once (for measuring).
bool interleaves_in_place() {
  static const bool on = !switched_off("NDP_INTERLEAVE_IN_PLACE");
  return on;
}

}  // namespace

/// Per instance i the sequence [uses[0][i], ..., uses[k-1][i]].
DVec CudaExecutor::Impl::seq_lit(const Type* t, const Stmt& s, const Frame& f) {
  int64_t k = static_cast<int64_t>(s.uses.size());
  NDP_ASSERT(k >= 1, "seqlit without elements");
  std::vector<DVec> parts;
  for (VarId u : s.uses) parts.push_back(vec(f, u));
  int64_t n = parts[0].size();
  // Every instance holds k elements: regular (Note [Known values] in device_vec.cpp).
  if (k == 1) return DVec::regular(g, t, n, 1, std::move(parts[0]));  // [x]: each x in place
  std::optional<uint64_t> same = parts[0].known_bits();
  for (const DVec& p : parts)
    if (p.known_bits() != same) same.reset();
  if (same) return DVec::regular(g, t, n, k, DVec::known(g, t->a, n * k, *same));
  if (std::optional<int64_t> c = parts[0].regular_length();
      k == 2 && c && parts[1].regular_length() == c && host::is_flat_scalar(parts[0].elems().type())) {
    // [x, y] of two regular sequences of c elements: each instance's 2c elements are its x's
    // and then its y's, one append over regular segments (no positions, no offsets), deferred:
    // a kernel may read the two in place (Note [Interleaved blocks] in kernels.h).
    const DVec &x = parts[0].elems(), &y = parts[1].elems();
    const runtime::gpu::DSegs sx = parts[0].segs(), sy = parts[1].segs(), out{n, 2 * n * *c, 0, 2 * *c};
    Gpu& gpu = g;
    auto make = [&gpu, x, y, sx, sy, out] { return append_flat(gpu, x, sx, y, sy, out).buffer(); };
    DVec xy = *c > 0 && interleaves_in_place() ? DVec::deferred_interleave(t->a->a, x, y, *c, make)
                                               : append_flat(g, x, sx, y, sy, out);
    return DVec::regular(g, t, n, 2, DVec::regular(g, t->a, 2 * n, *c, std::move(xy)));
  }
  if (k == 2) {
    if (std::optional<DVec> pairs = interleave_two(parts[0], parts[1])) return DVec::regular(g, t, n, 2, std::move(*pairs));
  }
  DBuf idx = g.alloc(n * k * 8);
  g.check(g.prims().seq_lit_positions(n, k, idx->pointer()));
  DVec elems = k == 2 ? take_appended(g, parts[0], parts[1], idx->pointer(), n * k)
                      : take(g, concat(g, parts), idx->pointer(), n * k);
  return DVec::regular(g, t, n, k, std::move(elems));
}

// NDP_PROFILE=1 (exec/common/profile.h): each statement waits for its kernels, so that
// the table shows device time where it is spent (and the program runs slower). NDP_PROFILE=host:
// it does not, and the table shows the host's time.
void CudaExecutor::Impl::exec_data(const Stmt& s, Frame& f) {
  if (!stmt_profile_enabled() || s.op == Op::Time) {
    exec_data_untimed(s, f);
  } else {
    const bool counted = !s.uses.empty() && !f.fn->vars.at(s.uses[0]).is_host();
    StmtTimer timer(*f.fn, s, counted ? vec(f, s.uses[0]).size() : 0);
    const runtime::cuda::Driver::Clock before = g.device().driver().clock();
    exec_data_untimed(s, f);
    const runtime::cuda::Driver::Clock after = g.device().driver().clock();  // before the profile's own wait
    timer.stream_used({after.waits - before.waits, after.launches - before.launches, after.wait_ns - before.wait_ns,
                       after.call_ns - before.call_ns, after.allocs - before.allocs});
    if (!stmt_profile_host_only()) g.synchronize();
  }
  // Gathers that went unread during the statement (Note [Checked gathers] in device_vec.h).
  g.run_deferred_checks();
}

void CudaExecutor::Impl::exec_data_untimed(const Stmt& s, Frame& f) {
  auto use = [&](size_t i) -> const DVec& {
    NDP_ASSERT(i < s.uses.size(), "Flat IR statement lacks an operand");
    return vec(f, s.uses[i]);
  };
  switch (s.op) {
    case Op::Lit: set_vec(f, s.dst, constant(type_of(f, s.dst), s.lit, host(f, s.uses.at(0)))); return;
    case Op::Global: {
      NDP_ASSERT(s.global < prog.globals.size(), "Flat IR global with a bad id");
      // The value as a vector of one instance, on the device or on the host: a call's bound
      // argument, or a global kept as a vector (Note [Globals kept as vectors] in
      // driver/session.cpp), uploaded once; else made from its Value.
      const lang::core::Global& gl = *prog.globals[s.global];
      const Type* t = type_of(f, s.dst);
      std::shared_ptr<const void> device;
      const host::Vec* on_host = nullptr;
      if (const host::BoundGlobal* b = host::find_bound(bound, s.global)) {
        device = b->device;
        on_host = &b->value;
      } else {
        if (gl.kind != lang::core::Global::Kind::Variable) host::fail_function_value();
        if (!gl.has_value) throw EvalError{lang::message(lang::RuntimeErrorId::Undefined, upper_name(gl.name)), s.span};
        if (gl.vector && !gl.device_vector)
          gl.device_vector = std::make_shared<const DVec>(upload(g, *static_cast<const host::Vec*>(gl.vector.get())));
        device = gl.device_vector;
      }
      if (device || on_host) {
        DVec one = device ? retype(prog.types, *static_cast<const DVec*>(device.get()), t) : upload(g, host::retype(prog.types, *on_host, t));
        set_vec(f, s.dst, replicate_one(g, one, host(f, s.uses.at(0))));
      } else {
        set_vec(f, s.dst, constant(t, gl.variable_value(), host(f, s.uses.at(0))));
      }
      return;
    }
    case Op::Empty: {
      const Type* t = type_of(f, s.dst);
      set_vec(f, s.dst, DVec::regular(g, t, host(f, s.uses.at(0)), 0, empty_of(g, prog.types, t->a)));
      return;
    }
    case Op::Count: set_host(f, s.dst, count_true(g, use(0))); return;
    case Op::MapLanes: {
      std::vector<const DVec*> rows;
      for (size_t i = 1; i < s.uses.size(); ++i) rows.push_back(&use(i));
      set_host(f, s.dst, own_row_form(host(f, s.uses.at(0)), rows, g.device().properties(), g.tuning()));
      return;
    }
    case Op::Nest: {
      set_vec(f, s.dst, seq_from_lengths(g, type_of(f, s.dst), use(0), use(1)));  // regular where known
      return;
    }
    case Op::Replicate: {
      const DVec& v = use(0);
      const DVec& counts = use(1);
      int64_t n = counts.size();
      runtime::gpu::DSegs segs;
      DBuf off;
      if (std::optional<uint64_t> c = counts.known_bits()) {  // Note [Known values]: no offsets
        segs = runtime::gpu::DSegs{n, n * static_cast<int64_t>(*c), 0, static_cast<int64_t>(*c)};
      } else {
        // The lengths of a known sequence need no scan, and their total no read-back.
        KnownSegments known = segments_of_valid_lengths(g, n, counts.buffer());
        off = std::move(known.offsets);
        segs = runtime::gpu::DSegs::irregular(n, known.total, off->pointer());
      }
      set_vec(f, s.dst, spread(v, segs, off));
      return;
    }
    case Op::PathStep: {
      // rand path hashes (Note [rand]): element j of instance k gets step(parent[k], j).
      const DVec& lens = use(1);
      auto [off, total] = segments_of_valid_lengths(g, lens.size(), lens.buffer());
      DBuf buf = g.alloc(total * 8);
      g.check(g.prims().path_step(use(0).data(), runtime::gpu::DSegs::irregular(lens.size(), total, off->pointer()),
                                  buf->pointer()));
      set_vec(f, s.dst, DVec::scalar(type_of(f, s.dst), total, std::move(buf)));
      return;
    }
    case Op::Iota: {
      // Deferred (Note [Deferred vectors] in device_vec.h): a lifted function's instance ids are
      // often read by nothing that needs them stored.
      const int64_t n = host(f, s.uses.at(0));
      if (n == 1) {  // one instance, id 0: known (Note [Known values]), read in place by kernels
        set_vec(f, s.dst, DVec::known(g, type_of(f, s.dst), 1, 0));
        return;
      }
      set_vec(f, s.dst, DVec::deferred_iota(g, type_of(f, s.dst), n));
      return;
    }
    case Op::Gather: {
      // From one instance every id is 0 (a gather's ids name whole instances, in range by
      // construction), unread: that instance n times, and itself for n = 1, so a shared
      // sequence passed to a function called once is not copied (Note [Shared arguments]).
      const DVec& from = use(0);
      const DVec& ids = use(1);
      const int64_t n = ids.size();
      if (from.size() == 1) {
        set_vec(f, s.dst, n == 1 ? from : replicate_one(g, from, n));
        return;
      }
      // Ids that are instance ids spread over regular segments of c (a shared sequence passed
      // to a function applied to each of a literal's c elements, as quickhull's two halves):
      // every instance's row is taken c times, so the rows' total is known, not read back.
      std::optional<int64_t> rows_total;
      if (const DVec* src = ids.spread_source();
          src && src->pending_iota() && src->size() == from.size() && ids.spread_segments().offsets == 0 &&
          from.kind() == lang::TypeKind::Seq)
        rows_total = ids.spread_segments().regular_length * from.total();
      set_vec(f, s.dst, take(g, from, ids.data(), n, rows_total));
      return;
    }
    case Op::FnTag: {
      // The tag of every function id so far, a small table, gathered by the vector's ids.
      std::vector<int64_t> table = host::function_tags(s.lit.elems());
      // One known function (a function passed down a recursion): its tag is known too, and the
      // dispatch on it costs no launch and no wait (Note [Known values]).
      if (std::optional<uint64_t> id = use(0).known_bits(); id && *id < table.size()) {
        set_vec(f, s.dst, DVec::known(g, type_of(f, s.dst), use(0).size(), static_cast<uint64_t>(table[*id])));
        return;
      }
      DBuf buf = g.alloc(static_cast<int64_t>(table.size()) * 8);
      g.check(g.pool().upload(buf->pointer(), table.data(), table.size() * 8));
      DVec tags = DVec::scalar(type_of(f, s.dst), static_cast<int64_t>(table.size()), std::move(buf));
      set_vec(f, s.dst, take(g, tags, use(0).data(), use(0).size()));
      return;
    }
    case Op::IndexShared: {
      // Instance j reads element idx[j] of sequence ids[j] of seqs.
      const DVec& seqs = use(0);
      const DVec& idx = use(2);
      const int64_t n = idx.size();
      const DVec& elems = seqs.elems();
      const lang::Span span = s.span;
      GatherFailure fail = [span](int64_t index, int64_t length) {
        throw EvalError{lang::message(lang::RuntimeErrorId::SeqRefBounds, index, length), span};
      };
      if (n > 0 && elems.size() == 0) fail(g.read_int(idx.data(), 0), 0);
      if (std::optional<DVec> read = index_by_formula(seqs, use(1), idx)) {
        set_vec(f, s.dst, std::move(*read));
        return;
      }
      // A flat gather is deferred: a kernel that reads it gathers itself (Note [Fused gathers]).
      const bool deferred = host::is_flat_scalar(elems.type());
      if (seqs.size() == 1) {
        // One sequence (a lifted function called once): every id is 0, unread, and the indices
        // are the positions. A deferred gather leaves their check to its reader (Note [Checked
        // gathers] in device_vec.h).
        if (deferred) {
          set_vec(f, s.dst, DVec::deferred_gather(g, elems, idx, fail, !in_library(span)));
        } else {
          if (int64_t j = g.check(g.prims().first_out_of_range(idx.data(), n, elems.size())); j >= 0)
            fail(g.read_int(idx.data(), j), elems.size());
          set_vec(f, s.dst, take(g, elems, idx.data(), n));
        }
        return;
      }
      DBuf pos = g.alloc(n * 8);
      const DVec& ids = use(1);
      if (!in_library(span)) {
        // The check is read with the next read-back, as a kernel's failure record is (Note
        // [Deferred failure records] in gpu.h): a recursion level (quickhull's far point of
        // each line) no longer waits here. A failed index reads position 0 meanwhile, in range.
        // The operands are made before the record is taken (a read-back would free it).
        const CUdeviceptr offsets = seqs.offsets(), id_at = ids.data(), idx_at = idx.data();
        CUdeviceptr record = g.deferred_record(
            [gpu = &g, ids, idx, lengths = DVec::scalar(prog.types.int_(), seqs.size(), seqs.buffer()),
             fail](uint64_t j) {
              const auto at = static_cast<int64_t>(j);
              fail(gpu->read_int(idx.data(), at), gpu->read_int(lengths.data(), gpu->read_int(ids.data(), at)));
            },
            8 * (2 * n + seqs.size()));
        g.check(g.prims().index_shared_positions_into(offsets, id_at, idx_at, n, pos->pointer(), record));
      } else if (int64_t j = g.check(g.prims().index_shared_positions(seqs.offsets(), ids.data(), idx.data(), n, pos->pointer()));
                 j >= 0) {
        fail(g.read_int(idx.data(), j), g.read_int(seqs.lengths(), g.read_int(ids.data(), j)));
      }
      DVec positions = DVec::scalar(prog.types.int_(), n, std::move(pos));
      if (deferred)
        set_vec(f, s.dst, DVec::deferred_gather(g, elems, std::move(positions)));
      else
        set_vec(f, s.dst, take(g, elems, positions.data(), n));
      return;
    }
    case Op::Pack: {
      set_vec(f, s.dst, pack(g, use(0), use(1)));
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
      // One instance (a top-level apply-to-each): its length is the element count, which the
      // host knows, so nothing waits for the device.
      if (a.size() == 1) {
        if (a.elems().size() != b.elems().size())
          throw EvalError{lang::message(lang::RuntimeErrorId::ApplyToEachLengthMismatch, a.elems().size(), b.elems().size()),
                          s.span};
        return;
      }
      // Both regular (Note [Known values]): their one lengths, compared here.
      if (std::optional<int64_t> ca = a.regular_length(), cb = b.regular_length(); ca && cb) {
        if (*ca != *cb)
          throw EvalError{lang::message(lang::RuntimeErrorId::ApplyToEachLengthMismatch, *ca, *cb), s.span};
        return;
      }
      // The same lengths (generators cut alike, Note [Segment descriptor cache]): equal.
      if (a.lengths() == b.lengths()) return;
      if (int64_t k = g.check(g.prims().first_difference(a.lengths(), b.lengths(), a.size())); k >= 0)
        throw EvalError{lang::message(lang::RuntimeErrorId::ApplyToEachLengthMismatch, g.read_int(a.lengths(), k),
                                      g.read_int(b.lengths(), k)),
                        s.span};
      return;
    }
    case Op::Prim: {
      // Output (a print, a file) happens after every earlier kernel's failure is known (Note
      // [Deferred failure records] in gpu.h): its arguments may be known on the host, unread.
      if (lang::core::prim_family(s.prim) == lang::core::PrimFamily::Io) g.check_deferred_records();
      if (s.prim == lang::core::PrimId::Rand && s.uses.size() == 2) {
        set_vec(f, s.dst, rand_with_paths(s, f));
        return;
      }
      if (s.prim == lang::core::PrimId::RandSeed) {
        set_vec(f, s.dst, rand_seed(s, f));
        return;
      }
      std::vector<DVec> args;
      for (VarId u : s.uses) args.push_back(vec(f, u));
      host::LiftedCall c{s.prim, s.span, &s.type_args, type_of(f, s.dst)};
      if (known_prim(c, args, f, s.dst)) return;
      if (s.prim == lang::core::PrimId::ToI64 && args.at(0).kind() == lang::TypeKind::I32) {
        // Deferred, keeping the i32 values (Note [Narrow gather positions] in device_vec.h).
        const GpuPrimContext* pc = &ctx;
        set_vec(f, s.dst, DVec::deferred_widening(c.result, args[0], [pc, c, narrow = args[0]] {
                  return apply_lifted_prim(*pc, c, std::span<const DVec>(&narrow, 1)).buffer();
                }));
        return;
      }
      set_vec(f, s.dst, apply_lifted_prim(ctx, c, args));
      return;
    }
    case Op::Kernel: case Op::LoopKernel: case Op::MapKernel: {  // a loop kernel loops inside its instances
      NDP_ASSERT(s.kernel != nullptr, "kernel without its body");
      std::vector<DVec> ins;
      std::vector<const Type*> out_types;
      for (VarId u : s.uses) ins.push_back(vec(f, u));
      for (VarId o : s.outs) out_types.push_back(type_of(f, o));
      // A loop kernel's operands after its inputs are the rows of the sequences it reads.
      std::vector<DVec> seqs(ins.begin() + static_cast<std::ptrdiff_t>(s.kernel->inputs.size()), ins.end());
      ins.resize(s.kernel->inputs.size());
      out_types.resize(s.kernel->outputs.size());  // the written sequences' rows come after
      // Note [Map kernel dispatch]: the threads of each instance.
      // Note [Tiled folds]: a grid of instances whose fold reads a row and a column of it.
      if (const int64_t columns = tiled_columns(s, ins, g, kernels); columns > 0) {
        std::vector<DVec> r = kernels.run(*s.kernel, ins, out_types, seqs, {.lanes = 1, .columns = columns});
        for (size_t k = 0; k < r.size(); ++k) set_vec(f, s.outs[k], std::move(r[k]));
        return;
      }
      if (s.op == Op::Kernel && known_kernel(s, ins, out_types, f)) return;
      const int64_t n = ins.at(0).size();
      InstanceThreads threads;
      if (s.op == Op::LoopKernel && loop_kernel_lanes(s, n, seqs) > 1 &&
          kernels.form_available(*s.kernel, flatten::KernelForm::Instances, 32))
        threads.lanes = 32;  // a warp an instance (Note [Multiprefix loops])
      if (s.op == Op::MapKernel) {
        threads.lanes = map_kernel_lanes(s, n, seqs, g.device().properties(), g.tuning());
        threads.parts = map_kernel_parts(*s.kernel, threads.lanes, n, seqs, g.device().properties());
        if (threads.parts > 1 && !kernels.form_available(*s.kernel, flatten::KernelForm::SplitRows, threads.lanes)) threads.parts = 1;
      }
      // Note [Deferred failure records] in gpu.h: read later, unless in the library.
      std::vector<DVec> r = kernels.run(*s.kernel, ins, out_types, seqs, threads,
                                        in_library(s.span) ? std::nullopt : std::optional<Span>(s.span));
      if (s.op == Op::Kernel) remember_complements(*s.kernel, r);
      for (size_t k = 0; k < r.size(); ++k) set_vec(f, s.outs[k], std::move(r[k]));
      return;
    }
    case Op::ReduceKernel: case Op::ScanKernel: case Op::PackKernel: {
      NDP_ASSERT(s.kernel != nullptr, "consumer kernel without its body");
      std::vector<DVec> ins;
      for (VarId u : flatten::kernel_inputs(s)) ins.push_back(vec(f, u));
      if (s.op == Op::ReduceKernel) set_vec(f, s.dst, reduce_kernel(g, kernels, s, use(0), ins, type_of(f, s.dst)));
      else if (s.op == Op::ScanKernel) set_vec(f, s.dst, scan_kernel(g, kernels, s, use(0), ins, type_of(f, s.dst)));
      else set_vec(f, s.dst, pack_kernel(g, kernels, s, use(0), ins, prog.types));
      return;
    }
    case Op::FilterGroup: {
      std::vector<DVec> r = run_filter_group(
          g, kernels, s, [&](VarId v) -> const DVec& { return vec(f, v); }, [&](VarId v) { return type_of(f, v); });
      for (size_t m = 0; m < r.size(); ++m) set_vec(f, s.outs.at(m), std::move(r[m]));
      return;
    }
    case Op::AppendChain:
      set_vec(f, s.dst, run_append_chain(g, s, [&](VarId v) -> const DVec& { return vec(f, v); }, type_of(f, s.dst)));
      return;
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
    default: break;  // the structural statements: FlatWalk::exec_structural
  }
  throw lang::InternalError("internal error: cuda executor: a Flat IR op it does not handle");
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

lang::eval::RunResult CudaExecutor::run(const flatten::Program& p) {
  host::Vec r;
  lang::eval::RunResult result = run_bound(p, {}, &r);
  if (result.ok) result.value = host::to_value(r, 0);
  return result;
}

lang::eval::RunResult CudaExecutor::run_bound(const flatten::Program& p, std::span<const host::BoundGlobal> bound,
                                              host::Vec* result, std::shared_ptr<const void>* device_result) {
  Impl& m = *impl_;
  stmt_profile_new_program();
  m.bound = bound;
  lang::eval::RunResult r = m.run_program(p, m.stack, m.rand, m.out, [&] {
    m.g.check(m.g.device().make_current());  // this thread is the deep-stack thread
    m.g.begin_evaluation();
    m.g.check(m.draws.restart(0));  // a top-level form starts with seed 0 and no draws
    // The entry's argument, the int 0: made once (vectors are never written after they are made).
    if (m.entry_argument.size() != 1) m.entry_argument = m.constant(m.prog.types.int_(), Value::int_(0), 1);
    DVec r;
    try {
      r = m.call(p.entry, m.entry_argument, nullptr, Span{});
      m.g.check_deferred_records();
    } catch (...) {
      // A kernel's failure queued before this error or exception comes first; else it as it was.
      std::exception_ptr original = std::current_exception();
      m.g.check_deferred_records();
      std::rethrow_exception(original);
    }
    NDP_ASSERT(r.size() == 1, "the entry function did not return one instance");
    m.g.run_deferred_checks();  // gathers that went with the entry function's frame
    if (device_result) {
      *device_result = std::make_shared<const DVec>(r);
      if (result == nullptr) return Value{};
    }
    *result = download(m.g, r);
    m.g.synchronize();
    return Value{};
  });
  m.bound = {};
  return r;
}

}  // namespace ndp::exec::cuda
