// The part of executing Flat IR that does not depend on where vectors live: frames of
// variables, blocks, calls, the recursion loop, the control statements and the statements that
// only restructure vectors. The cpu backend (exec/cpu/executor.cpp, vectors in host memory)
// and the cuda backend (exec/cuda/executor.cpp, in device memory) derive from FlatWalk
// (CRTP) and add the statements that touch data.
//
// A backend provides:
//   void exec_data(const flatten::Stmt&, Frame&)         every statement exec_structural leaves
//   V empty_vector(const lang::Type*)                 a vector of that type with no instances
//   lang::TypeContext& types()
//   std::optional<Slot> finish_levels(const flatten::Stmt& s, Frame& f, const V& arg, bool& again)
//                                     the rest of recursion loop s from a level whose argument
//                                     is arg, run some other way, or nothing (then the loop goes
//                                     on level by level, and asks again at the next level unless
//                                     `again` was set false)
// and, to lay out recursion loops' results before their calls (Note [Results laid out before
// the calls] in flatten/flat_ir.h), optionally
//   std::unique_ptr<PlacedRows<V>> placed_rows(const lang::Type* rows, int64_t elements)
//                                     room for a loop's results, or null for rows it cannot place
//   V concat_vectors(std::span<const V>); V known_ints(int64_t n, int64_t value)
//                                     for the children of a level one after another (Note
//                                     [Children one after another] in flatten/passes/lay_out_results.h)
//   std::vector<int64_t> host_lengths(const V&), host_ints(const V&); std::vector<uint8_t> host_bools(const V&)
//   std::optional<bool> finish_levels_into(s, f, arg, at, out, again)
//                                     finish_levels for a laid-out loop: the results placed in
//                                     out at `at`; false where a level's lengths did not lay out
// and its vector type V models FlatVector (exec/common/vector.h), as host::Vec and cuda::DVec do.
//
// Note [Executor errors] in exec/cpu/executor.cpp says how errors travel; exec() is where.
#pragma once

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "exec/common/placed_rows.h"
#include "exec/common/profile.h"
#include "exec/common/switches.h"
#include "exec/common/vector.h"
#include "flatten/flat_ir.h"
#include "flatten/kernel_abi.h"
#include "flatten/passes/lay_out_results.h"
#include "lang/diagnostics.h"
#include "lang/eval/deep_stack.h"
#include "lang/eval/interp.h"
#include "lang/eval/prim_call.h"
#include "lang/eval/rand.h"
#include "lang/runtime_errors.h"

namespace ndp::exec {

/// The interpreter's limit on nested calls (and on recursion-loop levels).
inline constexpr uint64_t kMaxCallDepth = 1'000'000;

/// The stack an executor runs its walk on (lang::eval::DeepStack): room for kMaxCallDepth calls.
inline constexpr size_t kWalkStackBytes = size_t{2} << 30;

/// The name of a global as NESL's messages spell it (upper case).
inline std::string upper_name(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

template <class Derived, FlatVector V>
class FlatWalk {
 public:
  /// Whether statement `s` reads variable `v` for the last time (so its vector may be handed
  /// over: Note [Updates in place] in exec/host/lifted_prims.h).
  bool last_read(const flatten::Stmt& s, flatten::VarId v) const {
    if (!release_dead) return false;
    for (flatten::VarId r : s.releases)
      if (r == v) return true;
    return false;
  }

  /// A variable's value: a host integer or a vector.
  struct Slot {
    bool set = false;
    int64_t host = 0;
    V vec;
  };
  struct Frame {
    const flatten::Function* fn;
    std::vector<Slot> slots;
  };

  uint32_t last_library_file = 0;
  const flatten::Program* program = nullptr;
  /// Calls in progress (atomic: the cpu backend's tasks call at once, Note [Small segments in
  /// one task] in exec/cpu/executor.cpp).
  std::atomic<uint64_t> depth = 0;
  /// Drop each statement's `releases` once it has run (Note [Releasing dead vectors] in
  /// flatten/passes/mark_releases.h).
  bool release_dead = false;

  bool in_library(lang::Span s) const { return last_library_file != 0 && s.valid() && s.file <= last_library_file; }

  // ---- variables ----
  const Slot& slot(const Frame& f, flatten::VarId v) const {
    NDP_ASSERT(v < f.slots.size() && f.slots[v].set, "Flat IR use of an undefined variable");
    return f.slots[v];
  }
  int64_t host(const Frame& f, flatten::VarId v) const { return slot(f, v).host; }
  const V& vec(const Frame& f, flatten::VarId v) const { return slot(f, v).vec; }
  const lang::Type* type_of(const Frame& f, flatten::VarId v) const {
    const lang::Type* t = f.fn->vars.at(v).type;
    NDP_ASSERT(t != nullptr, "Flat IR vector statement defines a host variable");
    return t;
  }
  void set_host(Frame& f, flatten::VarId v, int64_t x) {
    Slot& s = f.slots.at(v);
    s.set = true;
    s.host = x;
  }
  void set_vec(Frame& f, flatten::VarId v, V x) {
    Slot& s = f.slots.at(v);
    s.set = true;
    s.vec = std::move(x);
  }

  // ---- execution ----
  Slot run_block(const flatten::Block& b, Frame& f) {
    for (const flatten::Stmt& s : b.stmts) exec(s, f);
    return slot(f, b.result);
  }

  /// The literal of the children that ends laid-out `loop`'s step (flatten::children_literal),
  /// whose children then go one after another; null where there is none, or where
  /// NDP_CHILD_MAJOR=0 keeps the literal's order (for measuring).
  static const flatten::Stmt* children_apart(const flatten::RecursionLoop& loop) {
    return children_apart_on() ? flatten::children_literal(loop) : nullptr;
  }

  /// The step of laid-out `loop` whose `rec` instances recurse, with its children literal `lit`
  /// (flatten::children_literal) made one child after another: every instance's first child,
  /// then every second one (Note [Children one after another] in
  /// flatten/passes/lay_out_results.h).
  Slot run_step_children_apart(const flatten::RecursionLoop& loop, const flatten::Stmt& lit, Frame& f, int64_t rec) {
    const std::vector<flatten::Stmt>& st = loop.step.stmts;
    for (size_t i = 0; i + 3 < st.size(); ++i) exec(st[i], f);
    std::vector<V> kids;
    for (flatten::VarId u : lit.uses) kids.push_back(vec(f, u));
    {
      StmtTimer timer(*f.fn, lit, rec);
      set_vec(f, st[st.size() - 1].dst, self().concat_vectors(kids));
    }
    set_vec(f, st[st.size() - 2].dst, self().known_ints(rec, static_cast<int64_t>(kids.size())));
    for (flatten::VarId v : lit.releases) f.slots[v] = Slot{};
    return slot(f, loop.step.result);
  }

  void exec(const flatten::Stmt& s, Frame& f) {
    if (take_interrupt()) throw lang::eval::EvalError{lang::message(lang::RuntimeErrorId::Interrupted), s.span};
    try {
      if (!exec_structural(s, f)) self().exec_data(s, f);
      if (release_dead)
        for (flatten::VarId v : s.releases) f.slots[v] = Slot{};
    } catch (lang::eval::EvalError& err) {
      if (!err.span.valid()) err.span = s.span;
      // A library error surfaces at the user's call (Interpreter::Impl::call_function).
      if (s.op == flatten::Op::Call && s.span.valid() && !in_library(s.span) && in_library(err.span)) err.span = s.span;
      throw;
    } catch (const Interrupted&) {  // a loop stopped early (Note [Cancellation] in ndp/interrupt.h)
      interrupt_flag().store(false);
      throw lang::eval::EvalError{lang::message(lang::RuntimeErrorId::Interrupted), s.span};
    } catch (std::bad_alloc&) {  // the innermost statement names where memory ran out
      throw lang::eval::EvalError{lang::message(lang::RuntimeErrorId::OutOfMemory), s.span};
    } catch (std::length_error&) {
      throw lang::eval::EvalError{lang::message(lang::RuntimeErrorId::OutOfMemory), s.span};
    }
  }

  V call(flatten::FuncId id, const V& arg, const V* path, lang::Span span, std::vector<const V*> bases = {}) {
    NDP_ASSERT(id < program->functions.size(), "Flat IR call of a bad function id");
    if (depth >= kMaxCallDepth || lang::eval::DeepStack::nearly_full())
      throw lang::eval::EvalError{lang::message(lang::RuntimeErrorId::RecursionTooDeep), span};
    struct DepthGuard {
      std::atomic<uint64_t>& d;
      explicit DepthGuard(std::atomic<uint64_t>& x) : d(x) { ++d; }
      ~DepthGuard() { --d; }
    } guard(depth);
    const flatten::Function& fn = program->functions[id];
    Frame frame{&fn, std::vector<Slot>(fn.vars.size())};
    set_vec(frame, fn.param, arg);
    if (fn.has_path) {
      NDP_ASSERT(path != nullptr, "call of a function with a path parameter without paths");
      set_vec(frame, fn.path, *path);
    }
    NDP_ASSERT(bases.size() == fn.shared_bases.size(), "call without the callee's shared bases");
    for (size_t i = 0; i < bases.size(); ++i) set_vec(frame, fn.shared_bases[i], *bases[i]);
    Slot r = run_block(fn.body, frame);
    NDP_ASSERT(!fn.vars.at(fn.body.result).is_host(), "a function returns a host variable");
    return r.vec;
  }

  // Note [Recursion as loops] in flatten/flat_ir.h: the descent runs P1 and T1 level by level,
  // pushing each level's `saved` values; the ascent pops them and runs T2 and P2. Levels live
  // on a heap stack, so depth costs no C++ stack; the interpreter's depth limit still applies.
  Slot recurse(const flatten::Stmt& s, Frame& f) {
    NDP_ASSERT(s.loop != nullptr, "while without its loop");
    // The first level's argument is handed over when the loop reads it for the last time
    // (Note [Releasing dead vectors]).
    V arg = last_read(s, s.uses.at(0)) ? std::move(f.slots[s.uses[0]].vec) : vec(f, s.uses.at(0));
    if (std::optional<Slot> r = recurse_laid_out(s, f, arg)) return std::move(*r);
    return recurse_from(s, f, std::move(arg), true);
  }

  // ---- Note [Results laid out before the calls] in flatten/flat_ir.h ----

  /// Loop s from the level whose argument is `top`, its results laid out before the calls; or
  /// nothing where the loop is not laid out, the backend places no such rows, or a level's
  /// lengths turn out not to lay out (the loop then runs as Note [Recursion as loops] says).
  std::optional<Slot> recurse_laid_out(const flatten::Stmt& s, Frame& f, const V& top) {
    // A backend that places the results itself, level by level (the cuda backend's on the device).
    if constexpr (requires(Derived& d) { d.lay_out_levels(s, f, top); }) {
      return self().lay_out_levels(s, f, top);
    } else if constexpr (requires(Derived& d) { d.placed_rows(nullptr, int64_t{0}); }) {
      if (!s.loop->laid_out || f.fn->has_path) return std::nullopt;
      std::optional<std::vector<int64_t>> len = laid_out_lengths(top);
      if (!len) return std::nullopt;
      std::vector<int64_t> at(len->size());
      int64_t total = 0;
      for (size_t i = 0; i < at.size(); ++i) {
        at[i] = total;
        total += (*len)[i];
      }
      auto out = self().placed_rows(type_of(f, s.dst), total);
      if (!out || !lay_out_from(s, f, top, std::move(at), *out, true)) return std::nullopt;
      Slot r;
      r.set = true;
      r.vec = out->rows(type_of(f, s.dst), *len);
      return r;
    }
    return std::nullopt;
  }

  /// The lengths a laid-out level checks its results against: each instance's row of the
  /// argument's first sequence (any one would do, the same at every level); nothing for an
  /// argument without one.
  std::optional<std::vector<int64_t>> laid_out_lengths(const V& arg) {
    switch (arg.type()->kind) {
      case lang::TypeKind::Seq: return self().host_lengths(arg);
      case lang::TypeKind::Pair:
        if (auto l = laid_out_lengths(arg.first())) return l;
        return laid_out_lengths(arg.second());
      default: return std::nullopt;
    }
  }

  /// The levels of laid-out loop s from the one whose argument is `arg`, instance i's result
  /// placed in `out` at at[i]; false where a level's lengths do not lay out. With
  /// `may_hand_off`, the backend may run the levels from one on itself (finish_levels_into).
  /// The placing is NDP_PROFILE's row of the loop statement itself.
  bool lay_out_from(const flatten::Stmt& s, Frame& f, V arg, std::vector<int64_t> at, PlacedRows<V>& out, bool may_hand_off) {
    using Piece = flatten::LaidOut::Piece;
    const flatten::RecursionLoop& loop = *s.loop;
    const flatten::LaidOut& plan = *loop.laid_out;
    const int64_t children = plan.children();
    const bool hand_over_step = release_dead && std::find(loop.saved.begin(), loop.saved.end(), loop.step.result) == loop.saved.end();
    const flatten::Stmt* lit = children_apart(loop);  // the children one after another, where not null
    // Skipped, where not null: the base rows are placed from the argument (Note [Base rows from
    // the argument] in flatten/passes/lay_out_results.h).
    const flatten::Stmt* base_rows = flatten::base_from_argument(loop);
    std::optional<std::vector<int64_t>> len = laid_out_lengths(arg);  // the level's, then the next's
    for (uint64_t level = 0;; ++level) {
      if (level >= kMaxCallDepth)
        throw lang::eval::EvalError{lang::message(lang::RuntimeErrorId::RecursionTooDeep), s.span};
      if (may_hand_off)
        if (std::optional<bool> done = self().finish_levels_into(s, f, arg, at, out, may_hand_off)) return *done;
      if (!len) return false;
      // The argument itself, for placing base rows from it: a statement of the prefix may
      // release its slot once it has read it for the last time.
      std::optional<V> argument;
      if (base_rows != nullptr) argument = arg;
      set_vec(f, loop.param, std::move(arg));
      for (const flatten::Stmt& st : loop.prefix.stmts)
        if (&st != base_rows) exec(st, f);
      const int64_t recursing = slot(f, loop.prefix.result).host;
      for (uint32_t i : plan.early_finish)
        if (&loop.finish.stmts[i] != base_rows) exec(loop.finish.stmts[i], f);
      std::vector<int64_t> rec;  // the recursing instances
      {
        // The finished instances' results go to their places.
        StmtTimer placing(*f.fn, s, static_cast<int64_t>(len->size()));
        const std::vector<uint8_t> flags = self().host_bools(vec(f, plan.flags));
        if (flags.size() != len->size()) return false;
        // Each instance written to both lists, and kept by the one its flag names: the flags of a
        // deep level are coin tosses, which a branch would mispredict half the time. (Each list
        // has one slot more than it keeps, for the last instance's write to the other.)
        size_t n_base = 0;
        for (uint8_t flag : flags) n_base += static_cast<bool>(flag) == plan.base_when;
        std::vector<int64_t> base_at(n_base + 1);
        rec.resize(flags.size() - n_base + 1);
        size_t b = 0, r = 0;
        for (size_t i = 0; i < flags.size(); ++i) {
          const bool base = static_cast<bool>(flags[i]) == plan.base_when;
          base_at[b] = rec[r] = static_cast<int64_t>(i);
          b += base;
          r += !base;
        }
        base_at.pop_back();
        rec.pop_back();
        if (static_cast<int64_t>(rec.size()) != std::max<int64_t>(recursing, 0)) return false;
        if (!base_at.empty() && base_rows != nullptr) {
          std::vector<int64_t> place(base_at.size());
          for (size_t k = 0; k < base_at.size(); ++k) place[k] = at[static_cast<size_t>(base_at[k])];
          out.put_rows_of(*argument, base_at, place);
        } else if (!base_at.empty()) {
          const V& base = vec(f, plan.base);
          const std::vector<int64_t> base_len = self().host_lengths(base);
          if (base_len.size() != base_at.size()) return false;
          for (size_t k = 0; k < base_at.size(); ++k) {
            if (base_len[k] != (*len)[static_cast<size_t>(base_at[k])]) return false;
            base_at[k] = at[static_cast<size_t>(base_at[k])];
          }
          out.put(base, base_at);
        }
      }
      argument.reset();  // (not held through the step, which may update the argument in place)
      if (rec.empty()) return true;
      Slot next = lit != nullptr ? run_step_children_apart(loop, *lit, f, static_cast<int64_t>(rec.size())) : run_block(loop.step, f);
      if (hand_over_step) f.slots[loop.step.result] = Slot{};
      for (uint32_t i : plan.early_combine) exec(loop.combine.stmts[i], f);
      // Each recursing instance's children and pieces, one after another in its place.
      StmtTimer placing(*f.fn, s, static_cast<int64_t>(rec.size()));
      std::optional<std::vector<int64_t>> child_len = laid_out_lengths(next.vec);
      const std::vector<int64_t> counts = self().host_ints(vec(f, plan.child_counts));
      if (!child_len || counts.size() != rec.size()) return false;
      std::vector<std::vector<int64_t>> piece_len(plan.pieces.size()), piece_at(plan.pieces.size());
      for (size_t p = 0; p < plan.pieces.size(); ++p) {
        if (plan.pieces[p].kind != Piece::Kind::Rows) continue;
        piece_len[p] = self().host_lengths(vec(f, plan.pieces[p].rows));
        if (piece_len[p].size() != rec.size()) return false;
        piece_at[p].resize(rec.size());
      }
      std::vector<int64_t> next_at(child_len->size());
      size_t first_child = 0;  // the instance's first child among the next level's instances
      for (size_t j = 0; j < rec.size(); ++j) {
        if (counts[j] != children || first_child + static_cast<size_t>(counts[j]) > next_at.size()) return false;
        const int64_t start = at[static_cast<size_t>(rec[j])];
        int64_t pos = start;
        for (size_t p = 0; p < plan.pieces.size(); ++p) {
          const Piece& piece = plan.pieces[p];
          switch (piece.kind) {
            case Piece::Kind::Child: {
              const size_t c = lit != nullptr ? piece.child * rec.size() + j : first_child + piece.child;
              next_at[c] = pos;
              pos += (*child_len)[c];
              break;
            }
            case Piece::Kind::Rows:
              piece_at[p][j] = pos;
              pos += piece_len[p][j];
              break;
          }
        }
        if (pos - start != (*len)[static_cast<size_t>(rec[j])]) return false;
        first_child += static_cast<size_t>(counts[j]);
      }
      if (first_child != next_at.size()) return false;
      for (size_t p = 0; p < plan.pieces.size(); ++p)
        if (plan.pieces[p].kind == Piece::Kind::Rows) out.put(vec(f, plan.pieces[p].rows), piece_at[p]);
      arg = std::move(next.vec);
      at = std::move(next_at);
      len = std::move(child_len);
    }
  }

  /// The loop of `s` from the level whose argument is `arg`; with `may_hand_off`, the backend
  /// may run the levels from one on itself (Backend::finish_levels).
  Slot recurse_from(const flatten::Stmt& s, Frame& f, V arg, bool may_hand_off) {
    const flatten::RecursionLoop& loop = *s.loop;
    std::vector<std::vector<Slot>> stack;
    // The step's result is handed over unless the loop saves it: then each level's vectors are
    // held by their variables alone (Note [Releasing dead vectors]).
    bool hand_over_step = release_dead && std::find(loop.saved.begin(), loop.saved.end(), loop.step.result) == loop.saved.end();
    V next_path;  // the next level's rand path hashes, for functions that carry them
    Slot result;
    for (uint64_t level = 0;; ++level) {
      if (level >= kMaxCallDepth)
        throw lang::eval::EvalError{lang::message(lang::RuntimeErrorId::RecursionTooDeep), s.span};
      if (may_hand_off && !f.fn->has_path) {
        if (std::optional<Slot> rest = self().finish_levels(s, f, arg, may_hand_off)) {
          result = std::move(*rest);
          break;
        }
      }
      set_vec(f, loop.param, std::move(arg));
      if (level > 0 && f.fn->has_path) set_vec(f, loop.path, next_path);
      if (run_block(loop.prefix, f).host <= 0) {
        set_vec(f, loop.branch, self().empty_vector(type_of(f, loop.branch)));
        result = run_block(loop.finish, f);
        break;
      }
      Slot next = run_block(loop.step, f);
      if (hand_over_step) f.slots[loop.step.result] = Slot{};
      if (f.fn->has_path) next_path = vec(f, loop.next_path);
      std::vector<Slot> saved;
      saved.reserve(loop.saved.size());
      for (flatten::VarId v : loop.saved) saved.push_back(f.slots.at(v));
      stack.push_back(std::move(saved));
      arg = std::move(next.vec);
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

  /// Runs the entry function of `p` on the deep stack `stack`: `entry()` calls it and returns
  /// the answer as a Value. Runtime errors (and running out of memory) become the RunResult's
  /// error; internal errors stay exceptions. `out` is flushed either way.
  template <class Entry>
  lang::eval::RunResult run_program(const flatten::Program& p, lang::eval::DeepStack& stack, lang::eval::RandState& rand,
                                    std::FILE* out, Entry&& entry) {
    lang::eval::RunResult result;
    stack.run([&] {
      rand.begin_form();
      depth = 0;
      program = &p;
      try {
        result.value = entry();
        result.ok = true;
      } catch (lang::eval::EvalError& err) {
        result.error = lang::eval::RuntimeError{std::move(err.message), err.span};
      } catch (std::bad_alloc&) {
        result.error = lang::eval::RuntimeError{lang::message(lang::RuntimeErrorId::OutOfMemory), lang::Span{}};
      } catch (std::length_error&) {
        result.error = lang::eval::RuntimeError{lang::message(lang::RuntimeErrorId::OutOfMemory), lang::Span{}};
      }
      std::fflush(out);
      program = nullptr;
    });
    return result;
  }

  /// The statements that move no data; false for the others.
  bool exec_structural(const flatten::Stmt& s, Frame& f) {
    auto use = [&](size_t i) -> const V& {
      NDP_ASSERT(i < s.uses.size(), "Flat IR statement lacks an operand");
      return vec(f, s.uses[i]);
    };
    switch (s.op) {
      case flatten::Op::Length: set_host(f, s.dst, use(0).size()); return true;
      case flatten::Op::Const: set_host(f, s.dst, s.lit.as_int()); return true;
      case flatten::Op::Tuple: set_vec(f, s.dst, V::pair(type_of(f, s.dst), use(0), use(1))); return true;
      case flatten::Op::First: set_vec(f, s.dst, use(0).first()); return true;
      case flatten::Op::Second: set_vec(f, s.dst, use(0).second()); return true;
      case flatten::Op::Lengths: set_vec(f, s.dst, use(0).lengths_vec(type_of(f, s.dst))); return true;
      case flatten::Op::Elements: set_vec(f, s.dst, use(0).elems()); return true;
      case flatten::Op::Retype: set_vec(f, s.dst, retype(self().types(), use(0), type_of(f, s.dst))); return true;
      case flatten::Op::Nothing: set_vec(f, s.dst, self().empty_vector(type_of(f, s.dst))); return true;
      case flatten::Op::Call: {
        const flatten::Function& callee = program->functions.at(s.func);
        std::vector<const V*> bases;
        for (size_t i = flatten::first_base_operand(callee); i < s.uses.size(); ++i) bases.push_back(&use(i));
        set_vec(f, s.dst, call(s.func, use(0), callee.has_path ? &use(1) : nullptr, s.span, std::move(bases)));
        return true;
      }
      case flatten::Op::TryLoop: {  // Note [Folds in kernels]
        NDP_ASSERT(s.then_block != nullptr && s.else_block != nullptr, "try_loop without both blocks");
        Slot r;
        try {
          r = run_block(*s.then_block, f);
        } catch (const flatten::LoopGaveUp&) {
          r = run_block(*s.else_block, f);
        }
        f.slots.at(s.dst) = std::move(r);
        return true;
      }
      case flatten::Op::IfNonEmpty: {
        NDP_ASSERT(s.then_block != nullptr && s.else_block != nullptr, "if_nonempty without both blocks");
        Slot r = run_block(host(f, s.uses.at(0)) > 0 ? *s.then_block : *s.else_block, f);
        f.slots.at(s.dst) = std::move(r);
        return true;
      }
      case flatten::Op::Recurse: f.slots.at(s.dst) = recurse(s, f); return true;
      default: return false;
    }
  }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
};

}  // namespace ndp::exec
