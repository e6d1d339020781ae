// flatten::verify: the invariants of Note [Flat IR semantics] checked on a whole program (scoping,
// host/vector kinds, operand counts, call targets, and the element types each op implies).
#include <fmt/format.h>

#include <algorithm>

#include "flatten/flat_ir.h"
#include "flatten/passes/fuse_consumers.h"
#include "flatten/passes/fuse_elementwise.h"

namespace ndp::flatten {

namespace {

/// Whether node j of k, a FoldIndex, FoldAcc, Fold, Fail or SeqAppend, is well formed (Notes
/// [Folds in kernels] and [Appended sequences in loop kernels]): a fold's region lies between
/// its FoldIndex and its Fold, its count is an int and its init and next of its type, a Fail's
/// condition a bool, an append's value of its component's type; operands come earlier, and a
/// node after a region reads none of the region's nodes but its Fold.
bool kernel_region_node_ok(const KernelBody& k, uint32_t j) {
  const KernelNode& n = k.nodes[j];
  const auto type = [&](uint32_t a) { return k.nodes[a].type; };
  for (uint32_t a : n.args)
    if (a >= j) return false;
  switch (n.kind) {
    case KernelNode::Kind::FoldIndex:
      return n.input > j && n.input < k.nodes.size() && k.nodes[n.input].kind == KernelNode::Kind::Fold &&
             k.nodes[n.input].input == j && n.type && n.type->kind == lang::TypeKind::Int;
    case KernelNode::Kind::FoldAcc: {
      if (n.input <= j || n.input >= k.nodes.size() || k.nodes[n.input].kind != KernelNode::Kind::Fold) return false;
      const uint32_t start = k.nodes[n.input].input;
      return start < j && n.type == k.nodes[n.input].type;
    }
    case KernelNode::Kind::Fold:
      return n.args.size() == 3 && n.input < j && k.nodes[n.input].kind == KernelNode::Kind::FoldIndex &&
             k.nodes[n.input].input == j && n.args[0] < n.input && n.args[1] < n.input && n.args[2] > n.input &&
             type(n.args[0])->kind == lang::TypeKind::Int && type(n.args[1]) == n.type && type(n.args[2]) == n.type &&
             n.type->is_scalar() && n.type->kind != lang::TypeKind::Pair;
    case KernelNode::Kind::Fail:  // a condition, then none or two int operands of its message
      return (n.args.size() == 1 || n.args.size() == 3) && type(n.args[0])->kind == lang::TypeKind::Bool &&
             (n.args.size() == 1 || (type(n.args[1])->kind == lang::TypeKind::Int && type(n.args[2])->kind == lang::TypeKind::Int)) &&
             (n.component != kFailRaises || n.value.kind() == lang::ValueKind::Seq) && n.type && n.type->is_scalar();
    case KernelNode::Kind::SeqAppend:
      return k.loop && n.input < k.seqs.size() && k.seqs[n.input].appended && (n.args.size() == 2 || n.args.size() == 3) &&
             type(n.args[0])->kind == lang::TypeKind::Int && n.component < k.seqs[n.input].components.size() &&
             n.type == k.seqs[n.input].components[n.component] && type(n.args[1]) == n.type &&
             (n.args.size() == 2 || type(n.args[2])->kind == lang::TypeKind::Bool);
    default: return false;
  }
}

/// Whether every node reads only nodes of the regions that hold it (Note [Folds in kernels]):
/// an operand inside a region is read only inside it.
bool regions_nest(const KernelBody& k) {
  std::vector<uint32_t> open;  // the Folds of the regions around the node, innermost last
  std::vector<uint32_t> end_of(k.nodes.size(), UINT32_MAX);
  for (uint32_t j = 0; j < k.nodes.size(); ++j) {
    while (!open.empty() && open.back() < j) open.pop_back();
    const KernelNode& n = k.nodes[j];
    for (uint32_t a : n.args)  // (a Fold reads its next from its region)
      if (a < j && end_of[a] < j) return false;
    if (!open.empty() && open.back() == j) open.pop_back();  // a Fold is outside its region
    if (n.kind == KernelNode::Kind::FoldIndex) {
      if (!open.empty() && n.input >= open.back()) return false;  // regions nest
      open.push_back(n.input);
    }
    if (!open.empty()) end_of[j] = open.back();
  }
  return true;
}

using lang::Type;
using lang::TypeKind;

struct Verifier {
  const Program& prog;
  const Function& fn;
  std::vector<std::string>& problems;
  std::vector<bool> visible;  // defined and in scope here
  std::vector<bool> defined;  // defined anywhere so far (names are unique per function)
  size_t stmt_no = 0;

  void problem(const Stmt* s, const std::string& what) {
    if (s)
      problems.push_back(fmt::format("{}: statement {} ({}): {}", fn.name, stmt_no, op_name(s->op), what));
    else
      problems.push_back(fmt::format("{}: {}", fn.name, what));
  }

  std::string name(VarId v) const {
    if (v >= fn.vars.size()) return fmt::format("v_{}", v);
    return fmt::format("{}_{}", fn.vars[v].hint.empty() ? "v" : fn.vars[v].hint, v);
  }

  bool exists(const Stmt* s, VarId v) {
    if (v < fn.vars.size()) return true;
    problem(s, fmt::format("variable id {} out of range ({} variables)", v, fn.vars.size()));
    return false;
  }

  /// Checks a use; returns its type (nullptr for host or unusable variables).
  const Type* use(const Stmt& s, size_t i, bool host) {
    if (i >= s.uses.size()) return nullptr;
    VarId v = s.uses[i];
    if (!exists(&s, v)) return nullptr;
    if (!visible[v]) problem(&s, fmt::format("use of {} {}", name(v), defined[v] ? "out of its scope" : "before its definition"));
    if (fn.vars[v].is_host() != host)
      problem(&s, fmt::format("operand {} ({}) must be a {} variable", i, name(v), host ? "host" : "vector"));
    return fn.vars[v].type;
  }

  void define(const Stmt* s, VarId v, std::vector<VarId>& scope) {
    if (!exists(s, v)) return;
    if (defined[v]) problem(s, fmt::format("{} is defined twice", name(v)));
    defined[v] = visible[v] = true;
    scope.push_back(v);
  }

  void expect(const Stmt& s, bool ok, const std::string& what) {
    if (!ok) problem(&s, what);
  }

  /// Checks a block whose definitions stay in `scope`; returns the type of its result
  /// (nullptr: host or unusable).
  const Type* block_in(const Block& b, std::vector<VarId>& scope, bool* result_host) {
    for (const Stmt& s : b.stmts) {
      ++stmt_no;
      stmt(s, scope);
    }
    const Type* t = nullptr;
    *result_host = false;
    if (exists(nullptr, b.result)) {
      if (!visible[b.result]) problem(nullptr, fmt::format("block result {} is not defined in scope", name(b.result)));
      *result_host = fn.vars[b.result].is_host();
      t = fn.vars[b.result].type;
    }
    return t;
  }

  void close(const std::vector<VarId>& scope) {
    for (VarId v : scope) visible[v] = false;
  }

  /// Checks a block with its own scope.
  const Type* block(const Block& b, bool* result_host) {
    std::vector<VarId> scope;
    const Type* t = block_in(b, scope, result_host);
    close(scope);
    return t;
  }

  /// Note [Recursion as loops]: P1's and T1's definitions are visible in T2 and P2, with the
  /// call's result and the branch value defined between them.
  void recursion(const Stmt& s, const Type* dst) {
    const RecursionLoop& loop = *s.loop;
    std::vector<VarId> scope;
    bool host = false;
    if (loop.param != fn.param) problem(&s, "the loop's parameter is not the function's");
    block_in(loop.prefix, scope, &host);
    if (!host) problem(&s, "the prefix must end in the host count of recursing instances");
    if (fn.has_path && loop.path != fn.path) problem(&s, "the loop's path is not the function's");
    const Type* a = block_in(loop.step, scope, &host);
    if (fn.has_path && (loop.next_path >= fn.vars.size() || !defined[loop.next_path]))
      problem(&s, "the next level's path hashes are not defined by the step");
    if (host) problem(&s, "the step must end in the next level's argument");
    else if (a && fn.arg_type && a != fn.arg_type) problem(&s, "the next level's argument is not of the argument type");
    define(&s, loop.call_result, scope);
    const Type* b = block_in(loop.combine, scope, &host);
    if (loop.branch < fn.vars.size() && b && b != fn.vars[loop.branch].type)
      problem(&s, "the combine block's result is not of the branch's type");
    define(&s, loop.branch, scope);
    const Type* r = block_in(loop.finish, scope, &host);
    if (r && dst && r != dst) problem(&s, "the finish block's result is not the result type");
    for (VarId v : loop.saved)
      if (exists(&s, v) && !defined[v]) problem(&s, fmt::format("saved {} is never defined", name(v)));
    if (const std::optional<LaidOut>& o = loop.laid_out) {  // Note [Results laid out before the calls]
      for (uint32_t i : o->early_finish)
        if (i + 1 >= loop.finish.stmts.size()) problem(&s, "the layout runs the finish's merge early");
      for (uint32_t i : o->early_combine)
        if (i + 1 >= loop.combine.stmts.size()) problem(&s, "the layout runs the combine's root early");
    }
    close(scope);
  }

  void stmt(const Stmt& s, std::vector<VarId>& scope) {
    bool has_dst = s.op != Op::CheckLengths;
    const Type* dst = has_dst && s.dst < fn.vars.size() ? fn.vars[s.dst].type : nullptr;
    bool dst_host = has_dst && s.dst < fn.vars.size() && fn.vars[s.dst].is_host();
    auto arity = [&](size_t n) {
      expect(s, s.uses.size() == n, fmt::format("has {} operands, expects {}", s.uses.size(), n));
    };
    auto dst_kind = [&](bool host) {
      if (has_dst && s.dst < fn.vars.size() && dst_host != host)
        problem(&s, fmt::format("result {} must be a {} variable", name(s.dst), host ? "host" : "vector"));
    };
    auto same = [&](const Type* a, const Type* b, const char* what) {
      if (a && b && a != b)
        problem(&s, fmt::format("{}: {} vs {}", what, lang::type_to_string(a, {}), lang::type_to_string(b, {})));
    };
    auto is = [&](const Type* t, TypeKind k, const char* what) {
      if (t && t->kind != k) problem(&s, fmt::format("{} has type {}", what, lang::type_to_string(t, {})));
    };
    if (s.op != Op::FilterGroup)  // its kernel is optional (Note [Filter groups])
      expect(s, (s.kernel != nullptr) == has_kernel(s.op), has_kernel(s.op) ? "lacks its body" : "has a kernel body");
    expect(s, (s.filters != nullptr) == (s.op == Op::FilterGroup),
           s.op == Op::FilterGroup ? "lacks its members" : "has filter-group members");
    expect(s, (s.chain != nullptr) == (s.op == Op::AppendChain),
           s.op == Op::AppendChain ? "lacks its sources" : "has append-chain sources");
    expect(s, s.outs.empty() || defines_outs(s.op), "has outputs it does not define");
    expect(s, (s.loop != nullptr) == (s.op == Op::Recurse), s.op == Op::Recurse ? "lacks its loop" : "has a loop");
    bool wants_then = s.op == Op::Time || s.op == Op::IfNonEmpty || s.op == Op::TryLoop;
    bool wants_else = s.op == Op::IfNonEmpty || s.op == Op::TryLoop;
    expect(s, (s.then_block != nullptr) == wants_then, wants_then ? "lacks its block" : "has a block it cannot run");
    expect(s, (s.else_block != nullptr) == wants_else, wants_else ? "lacks its else block" : "has an else block");

    switch (s.op) {
      case Op::Lit: case Op::Global: case Op::Empty:
        arity(1);
        use(s, 0, true);
        dst_kind(false);
        if (s.op == Op::Empty) is(dst, lang::TypeKind::Seq, "the result of empty");
        break;
      case Op::Nothing: arity(0); dst_kind(false); break;
      case Op::Length: arity(1); use(s, 0, false); dst_kind(true); break;
      case Op::Count: arity(1); is(use(s, 0, false), lang::TypeKind::Bool, "the flags"); dst_kind(true); break;
      case Op::Const: arity(0); dst_kind(true); break;
      case Op::MapLanes:
        if (s.uses.size() < 2) problem(&s, "map_lanes needs the instances and at least one vector of rows");
        use(s, 0, true);
        for (size_t i = 1; i < s.uses.size(); ++i) is(use(s, i, false), lang::TypeKind::Seq, "the rows");
        dst_kind(true);
        break;
      case Op::Tuple: {
        arity(2);
        const Type* a = use(s, 0, false);
        const Type* b = use(s, 1, false);
        dst_kind(false);
        is(dst, lang::TypeKind::Pair, "the result of tuple");
        if (dst && dst->kind == lang::TypeKind::Pair) {
          same(dst->a, a, "first component");
          same(dst->b, b, "second component");
        }
        break;
      }
      case Op::First: case Op::Second: {
        arity(1);
        const Type* p = use(s, 0, false);
        dst_kind(false);
        is(p, lang::TypeKind::Pair, "the operand");
        if (p && p->kind == lang::TypeKind::Pair) same(s.op == Op::First ? p->a : p->b, dst, "component type");
        break;
      }
      case Op::Lengths:
        arity(1);
        is(use(s, 0, false), lang::TypeKind::Seq, "the operand");
        dst_kind(false);
        is(dst, lang::TypeKind::Int, "the result of lengths");
        break;
      case Op::Elements: {
        arity(1);
        const Type* q = use(s, 0, false);
        dst_kind(false);
        is(q, lang::TypeKind::Seq, "the operand");
        if (q && q->kind == lang::TypeKind::Seq) same(q->a, dst, "element type");
        break;
      }
      case Op::Retype: arity(1); use(s, 0, false); dst_kind(false); break;
      case Op::Concat: {
        arity(2);
        const Type* a = use(s, 0, false);
        const Type* b = use(s, 1, false);
        dst_kind(false);
        same(a, dst, "result type");
        same(b, dst, "result type");
        break;
      }
      case Op::Slice: {
        arity(3);
        const Type* v = use(s, 0, false);
        use(s, 1, true);
        use(s, 2, true);
        dst_kind(false);
        same(v, dst, "result type");
        break;
      }
      case Op::Nest: {
        arity(2);
        is(use(s, 0, false), lang::TypeKind::Int, "the lengths");
        const Type* e = use(s, 1, false);
        dst_kind(false);
        is(dst, lang::TypeKind::Seq, "the result of nest");
        if (dst && dst->kind == lang::TypeKind::Seq) same(dst->a, e, "element type");
        break;
      }
      case Op::Replicate: {
        arity(2);
        const Type* v = use(s, 0, false);
        is(use(s, 1, false), lang::TypeKind::Int, "the counts");
        dst_kind(false);
        same(v, dst, "result type");
        break;
      }
      case Op::PathStep:
        arity(2);
        is(use(s, 0, false), lang::TypeKind::Int, "the parent path hashes");
        is(use(s, 1, false), lang::TypeKind::Int, "the lengths");
        dst_kind(false);
        is(dst, lang::TypeKind::Int, "the result of path_step");
        break;
      case Op::FnTag:
        arity(1);
        is(use(s, 0, false), lang::TypeKind::Fn, "the function values");
        dst_kind(false);
        is(dst, lang::TypeKind::Int, "the result of fn_tag");
        expect(s, s.lit.kind() == lang::ValueKind::Seq, "lacks its sequence of functions");
        break;
      case Op::Iota:
        arity(1);
        use(s, 0, true);
        dst_kind(false);
        is(dst, lang::TypeKind::Int, "the result of iota");
        break;
      case Op::Gather: {
        arity(2);
        const Type* v = use(s, 0, false);
        is(use(s, 1, false), lang::TypeKind::Int, "the instance ids");
        dst_kind(false);
        same(v, dst, "result type");
        break;
      }
      case Op::IndexShared: {
        arity(3);
        const Type* q = use(s, 0, false);
        is(use(s, 1, false), lang::TypeKind::Int, "the instance ids");
        is(use(s, 2, false), lang::TypeKind::Int, "the indices");
        dst_kind(false);
        is(q, lang::TypeKind::Seq, "the shared sequences");
        if (q && q->kind == lang::TypeKind::Seq) same(q->a, dst, "element type");
        break;
      }
      case Op::Pack: {
        arity(2);
        const Type* v = use(s, 0, false);
        is(use(s, 1, false), lang::TypeKind::Bool, "the flags");
        dst_kind(false);
        same(v, dst, "result type");
        break;
      }
      case Op::Merge: {
        arity(3);
        is(use(s, 0, false), lang::TypeKind::Bool, "the flags");
        const Type* a = use(s, 1, false);
        const Type* b = use(s, 2, false);
        dst_kind(false);
        same(a, dst, "result type");
        same(b, dst, "result type");
        break;
      }
      case Op::SeqLit: {
        expect(s, !s.uses.empty(), "has no elements");
        dst_kind(false);
        is(dst, lang::TypeKind::Seq, "the result of seqlit");
        for (size_t i = 0; i < s.uses.size(); ++i) {
          const Type* e = use(s, i, false);
          if (dst && dst->kind == lang::TypeKind::Seq) same(dst->a, e, "element type");
        }
        break;
      }
      case Op::CheckLengths:
        arity(2);
        is(use(s, 0, false), lang::TypeKind::Seq, "operand 0");
        is(use(s, 1, false), lang::TypeKind::Seq, "operand 1");
        break;
      case Op::Prim: {
        if (s.prim >= lang::core::PrimId::Count_) {
          problem(&s, "names no primitive");
        } else {
          // rand and rand_seed may take the instances' path hashes as one more operand.
          size_t n = static_cast<size_t>(lang::core::prim_info(s.prim).arity);
          bool with_path = (s.prim == lang::core::PrimId::Rand || s.prim == lang::core::PrimId::RandSeed) &&
                           s.uses.size() == n + 1;
          if (!with_path) arity(n);
        }
        for (size_t i = 0; i < s.uses.size(); ++i) use(s, i, false);
        dst_kind(false);
        break;
      }
      case Op::Kernel: case Op::LoopKernel: case Op::MapKernel: kernel(s); break;
      case Op::FilterGroup: filter_group(s); break;
      case Op::AppendChain: dst_kind(false); append_chain(s, dst); break;
      case Op::ReduceKernel: case Op::ScanKernel: case Op::PackKernel:
        dst_kind(false);
        consumer_kernel(s, dst);
        break;
      case Op::Call: {
        bool callee_path = s.func < prog.functions.size() && prog.functions[s.func].has_path;
        size_t bases = s.func < prog.functions.size() ? prog.functions[s.func].shared_bases.size() : 0;
        arity((callee_path ? 2 : 1) + bases);
        if (callee_path && s.uses.size() == 2) is(use(s, 1, false), lang::TypeKind::Int, "the path hashes");
        const Type* a = use(s, 0, false);
        dst_kind(false);
        if (s.func >= prog.functions.size()) {
          problem(&s, fmt::format("calls function {} of {}", s.func, prog.functions.size()));
        } else {
          const Function& callee = prog.functions[s.func];
          same(callee.arg_type, a, fmt::format("argument of {}", callee.name).c_str());
          for (size_t i = 0; i < bases && first_base_operand(callee) + i < s.uses.size(); ++i)
            if (callee.shared_bases[i] < callee.vars.size())
              same(callee.vars[callee.shared_bases[i]].type, use(s, first_base_operand(callee) + i, false),
                   fmt::format("shared base {} of {}", i, callee.name).c_str());
          same(callee.result_type, dst, fmt::format("result of {}", callee.name).c_str());
        }
        break;
      }
      case Op::Time: {
        arity(0);
        dst_kind(false);
        if (s.then_block) {
          bool host = false;
          const Type* r = block(*s.then_block, &host);
          expect(s, !host, "the timed block returns a host variable");
          is(dst, lang::TypeKind::Pair, "the result of time");
          if (dst && dst->kind == lang::TypeKind::Pair) {
            same(dst->a, r, "timed value");
            is(dst->b, lang::TypeKind::Float, "the seconds");
          }
        }
        break;
      }
      case Op::Recurse: {
        arity(1);
        const Type* a = use(s, 0, false);
        dst_kind(false);
        same(fn.arg_type, a, "the first level's argument");
        if (s.loop) recursion(s, dst);
        break;
      }
      case Op::IfNonEmpty: case Op::TryLoop: {
        if (s.op == Op::IfNonEmpty) {
          arity(1);
          use(s, 0, true);
        } else {
          arity(0);
        }
        for (const Block* b : {s.then_block.get(), s.else_block.get()}) {
          if (!b) continue;
          bool host = false;
          const Type* r = block(*b, &host);
          if (has_dst && s.dst < fn.vars.size()) {
            if (host != dst_host) problem(&s, "a branch result and the result differ in host/vector kind");
            else same(r, dst, "branch result");
          }
        }
        break;
      }
    }
    if (defines_outs(s.op)) {
      for (VarId v : s.outs) define(&s, v, scope);
    } else if (has_dst) {
      define(&s, s.dst, scope);
    }
  }

  /// Note [Consumer kernels]: uses[0] the lengths (reduce, scan) or the flat scalar values
  /// (pack), one kernel output of the element type the consumer takes.
  void consumer_kernel(const Stmt& s, const Type* dst) {
    expect(s, s.outs.empty(), "a consumer kernel defines only its result");
    const Type* first = use(s, 0, false);
    kernel(s);
    const KernelBody* k = s.kernel.get();
    if (!k) return;
    if (k->outputs.size() != 1 || k->outputs[0] >= k->nodes.size()) {
      problem(&s, "a consumer kernel has one output");
      return;
    }
    const Type* value = k->nodes[k->outputs[0]].type;
    if (s.op == Op::PackKernel) {
      if (first && first->kind > lang::TypeKind::F32) problem(&s, "packs a vector that is not of a flat scalar type");
      if (value->kind != lang::TypeKind::Bool) problem(&s, "the flags are not bool");
      if (first && dst && first != dst) problem(&s, "the result is not of the values' type");
      return;
    }
    if (first && first->kind != lang::TypeKind::Int) problem(&s, "the lengths are not ints");
    bool reduce = s.op == Op::ReduceKernel;
    if (!(reduce ? is_reduction(s.prim) : is_scan(s.prim)) || !consumer_prim_ok(s.prim, value))
      problem(&s, "a primitive that is not a reduction or scan of the kernel's output type");
    if (dst && (reduce ? dst != value : (dst->kind != lang::TypeKind::Seq || dst->a != value)))
      problem(&s, "the result is not of the reduced or scanned type");
  }

  /// Note [Filter groups]: the shared inputs, then one lengths or values operand per member,
  /// two members or more, an output of each member's type, and flags that are bool.
  void filter_group(const Stmt& s) {
    const FilterGroup* g = s.filters.get();
    if (!g) return;
    const size_t members = g->members.size();
    expect(s, members >= 2, "a filter group of fewer than two members");
    if (s.uses.size() != g->inputs + members) {
      problem(&s, fmt::format("has {} operands for {} inputs and {} members", s.uses.size(), g->inputs, members));
      return;
    }
    expect(s, s.outs.size() == members && s.dst == s.outs[0], "its outputs are not one per member");
    if (s.kernel) {
      kernel(s);
      for (const Type* t : s.kernel->output_types())
        if (t && t->kind != lang::TypeKind::Bool) problem(&s, "a predicate is not bool");
    } else {
      for (size_t i = 0; i < g->inputs; ++i) use(s, i, false);
    }
    for (size_t m = 0; m < members && m < s.outs.size(); ++m) {
      const FilterGroup::Member& member = g->members[m];
      const Type* other = use(s, g->inputs + m, false);
      const Type* out = nullptr;
      if (exists(&s, s.outs[m])) {
        out = fn.vars[s.outs[m]].type;
        if (!out) problem(&s, fmt::format("member {} defines a host variable", m));
      }
      if (member.predicate >= 0) {
        if (!s.kernel || static_cast<size_t>(member.predicate) >= s.kernel->outputs.size())
          problem(&s, fmt::format("member {} filters by a predicate the kernel lacks", m));
      } else {
        size_t input = static_cast<size_t>(-1 - static_cast<int64_t>(member.predicate));
        if (input >= g->inputs) problem(&s, fmt::format("member {} filters by an input the group lacks", m));
        else if (const Type* f = fn.vars.at(s.uses[input]).type; f && f->kind != lang::TypeKind::Bool)
          problem(&s, fmt::format("member {} filters by an input that is not bool", m));
      }
      if (!other || !out) continue;
      if (member.kind == FilterGroup::Kind::Count) {
        if (other->kind != lang::TypeKind::Int || out->kind != lang::TypeKind::Int)
          problem(&s, fmt::format("count member {} does not take and give ints", m));
      } else if (other != out) {
        problem(&s, fmt::format("pack member {} gives another type than its values'", m));
      }
    }
    // Note [Children one after another]: distinct packs of one vector.
    for (size_t i = 0; i < g->adjacent_packs.size(); ++i) {
      const uint32_t m = g->adjacent_packs[i];
      if (m >= members || g->members[m].kind != FilterGroup::Kind::Pack ||
          std::count(g->adjacent_packs.begin(), g->adjacent_packs.end(), m) != 1 ||
          s.uses[g->inputs + m] != s.uses[g->inputs + g->adjacent_packs[0]])
        problem(&s, fmt::format("adjacent pack {} is not a pack of the first one's vector, once", m));
    }
  }

  /// Note [Append chains]: sources that name the operands in order, a result of sequences of
  /// flat scalars, whole sources of the result's type, elt sources of nested sequences of it.
  void append_chain(const Stmt& s, const Type* dst) {
    const AppendChain* c = s.chain.get();
    if (!c) return;
    expect(s, c->sources.size() >= 2, "a chain of fewer than two sources");
    if (dst && (dst->kind != lang::TypeKind::Seq || !is_flat_scalar(dst->a)))
      problem(&s, fmt::format("the result has type {}, not a sequence of flat scalars", lang::type_to_string(dst, {})));
    size_t next = 0;  // the operand the next source must name
    std::vector<uint32_t> elts;
    for (size_t i = 0; i < c->sources.size(); ++i) {
      const AppendChain::Source& src = c->sources[i];
      if (src.seqs != next || (src.is_elt() && static_cast<size_t>(src.index) != next + 1)) {
        problem(&s, fmt::format("source {} does not name the operands that follow the last source's", i));
        return;
      }
      next += src.is_elt() ? 2 : 1;
      const Type* seqs = use(s, src.seqs, false);
      if (!src.is_elt()) {
        if (seqs && dst && seqs != dst) problem(&s, fmt::format("source {} is not of the result's type", i));
        continue;
      }
      elts.push_back(static_cast<uint32_t>(i));
      const Type* index = use(s, static_cast<size_t>(src.index), false);
      if (index && index->kind != lang::TypeKind::Int) problem(&s, fmt::format("elt source {}'s indices are not ints", i));
      if (seqs && dst && (seqs->kind != lang::TypeKind::Seq || seqs->a != dst))
        problem(&s, fmt::format("elt source {} is not of nested sequences of the result's type", i));
    }
    expect(s, next == s.uses.size(), fmt::format("has {} operands for sources that name {}", s.uses.size(), next));
    std::vector<uint32_t> checks = c->checks;
    std::sort(checks.begin(), checks.end());
    expect(s, checks == elts, "the elts' checks are not its elt sources, each once");
  }

  /// Note [Fused kernels]: operands match the inputs, nodes only read earlier nodes with
  /// primitives a kernel may hold (ones that can fail only in a Kernel statement: Note [Kernels
  /// that can fail]), and each output variable has its node's type.
  void kernel(const Stmt& s) {
    const KernelBody* k = s.kernel.get();
    if (!k) return;
    // kernel_inputs: all operands of a Kernel, uses[1..] of a consumer, a group's first ones.
    const bool plain = s.op == Op::Kernel || reads_rows(s.op);
    const size_t first = plain || s.op == Op::FilterGroup ? 0 : 1;
    const size_t end = s.op == Op::FilterGroup ? std::min<size_t>(s.filters->inputs, s.uses.size())
                       : reads_rows(s.op) ? std::min(k->inputs.size(), s.uses.size())
                                                : s.uses.size();
    const size_t ninputs = end > first ? end - first : 0;
    expect(s, ninputs == k->inputs.size(), fmt::format("has {} operands for {} kernel inputs", ninputs, k->inputs.size()));
    for (size_t i = first; i < end; ++i) {
      const Type* t = use(s, i, false);
      if (i - first < k->inputs.size() && t && t != k->inputs[i - first])
        problem(&s, fmt::format("operand {} is not of its input's type", i));
    }
    for (size_t j = 0; j < k->nodes.size(); ++j) {
      const KernelNode& n = k->nodes[j];
      if (n.kind == KernelNode::Kind::Input) {
        if (n.input >= k->inputs.size() || n.type != k->inputs[n.input]) problem(&s, fmt::format("kernel node {}: bad input", j));
        continue;
      }
      if (n.kind == KernelNode::Kind::Const) {
        if (!n.type || !const_ok(n.value, n.type)) problem(&s, fmt::format("kernel node {}: bad constant", j));
        continue;
      }
      if (n.kind == KernelNode::Kind::Instance) {
        if (k->seqs.empty() || !n.args.empty() || !n.type || n.type->kind != lang::TypeKind::Int)
          problem(&s, fmt::format("kernel node {}: a bad instance number", j));
        continue;
      }
      if (n.kind == KernelNode::Kind::SeqLength || n.kind == KernelNode::Kind::SeqElt || n.kind == KernelNode::Kind::SeqWrite) {
        // Notes [Sequences in loop kernels] and [Sequence state in loop kernels]: a row id, an
        // index (ints), the value written (of the component's type), then maybe a guard.
        const size_t fixed = n.kind == KernelNode::Kind::SeqLength ? 1 : n.kind == KernelNode::Kind::SeqElt ? 2 : 3;
        bool ok = n.input < k->seqs.size() && n.type && (n.args.size() == fixed || (fixed > 1 && n.args.size() == fixed + 1));
        for (size_t a = 0; ok && a < n.args.size(); ++a) {
          ok = n.args[a] < j;
          const Type* t = ok ? k->nodes[n.args[a]].type : nullptr;
          if (ok && a < 2) ok = t->kind == lang::TypeKind::Int;
          else if (ok && a == fixed) ok = t->kind == lang::TypeKind::Bool;
          else if (ok) ok = t == n.type;  // a write's value
        }
        if (ok && n.kind == KernelNode::Kind::SeqLength) ok = n.type->kind == lang::TypeKind::Int;
        else if (ok) ok = n.component < k->seqs[n.input].components.size() && n.type == k->seqs[n.input].components[n.component];
        if (ok && n.kind == KernelNode::Kind::SeqWrite) ok = k->seqs[n.input].written;
        if (!ok) problem(&s, fmt::format("kernel node {}: a bad read or write of a sequence", j));
        continue;
      }
      if (n.kind != KernelNode::Kind::Prim) {
        if (!kernel_region_node_ok(*k, static_cast<uint32_t>(j)))
          problem(&s, fmt::format("kernel node {}: a bad fold, failure or append", j));
        continue;
      }
      std::vector<const Type*> args;
      bool ok = true;
      for (uint32_t a : n.args) {
        if (a >= j) ok = false;
        else args.push_back(k->nodes[a].type);
      }
      if (!ok) problem(&s, fmt::format("kernel node {} reads a later node", j));
      else if (!kernel_prim_ok(n.prim, args, n.type) &&
               !((plain || !k->node_can_fail(n)) && kernel_prim_fallible(n.prim, args, n.type)))
        problem(&s, fmt::format("kernel node {}: primitive {} cannot be fused at these types", j,
                                n.prim < lang::core::PrimId::Count_ ? lang::core::prim_info(n.prim).name : "?"));
    }
    expect(s, regions_nest(*k), "a kernel node reads a node of a fold's region from outside it");
    expect(s, k->loop == (s.op == Op::LoopKernel), "a loop body outside loop_kernel, or a loop_kernel without one");
    expect(s, k->seqs.empty() || reads_rows(s.op), "sequences read by a kernel that takes no rows");
    if (s.op == Op::MapKernel) {  // Note [Map kernels]: it reads sequences, and changes none
      expect(s, k->seq_outputs.empty(), "a map kernel with a sequence output");
      for (const KernelBody::Seq& q : k->seqs) expect(s, !q.written && !q.appended, "a map kernel that changes a sequence");
    }
    if (reads_rows(s.op)) {  // the rows of each sequence it reads follow the inputs
      expect(s, s.uses.size() == k->inputs.size() + k->seqs.size(),
             fmt::format("has {} operands for {} inputs and {} sequences", s.uses.size(), k->inputs.size(), k->seqs.size()));
      for (size_t q = 0; q < k->seqs.size() && k->inputs.size() + q < s.uses.size(); ++q) {
        const Type* rows = use(s, k->inputs.size() + q, false);
        std::vector<const Type*> components;
        if (rows && rows->kind == lang::TypeKind::Seq) flat_components(rows->a, components);
        if (components != k->seqs[q].components)
          problem(&s, fmt::format("operand {} is not a sequence of its components", k->inputs.size() + q));
      }
      for (uint32_t q : k->seq_outputs)
        expect(s, q < k->seqs.size() && (k->seqs[q].written || k->seqs[q].appended), "a sequence output that is not written");
      for (const KernelBody::Seq& q : k->seqs) expect(s, !(q.written && q.appended), "a sequence both written and appended");
    }
    if (k->loop) {  // Note [Loop kernels]
      expect(s, k->loop_done < k->nodes.size() && k->nodes[k->loop_done].type->kind == lang::TypeKind::Bool,
             "the loop's done node is not a bool node");
      expect(s, k->loop_next.size() <= k->inputs.size(), "the loop has more state than inputs");
      for (size_t i = 0; i < k->loop_next.size(); ++i)
        expect(s, k->loop_next[i] < k->nodes.size() && k->nodes[k->loop_next[i]].type == k->inputs[i],
               fmt::format("the loop's next state {} is not a node of its input's type", i));
    }
    if (!plain) return;  // consumer_kernel and filter_group check the outputs
    expect(s, !s.outs.empty() && s.outs.size() == k->outputs.size() + k->seq_outputs.size() && s.outs[0] == s.dst,
           "kernel outputs do not match its result variables");
    for (size_t o = 0; o < k->seq_outputs.size() && k->outputs.size() + o < s.outs.size(); ++o) {
      // A written sequence's rows, changed: of its operand's type.
      const uint32_t q = k->seq_outputs[o];
      const VarId out = s.outs[k->outputs.size() + o];
      if (exists(&s, out) && q < k->seqs.size() && k->inputs.size() + q < s.uses.size() &&
          fn.vars[out].type != fn.vars[s.uses[k->inputs.size() + q]].type)
        problem(&s, fmt::format("sequence output {} is not of its sequence's type", o));
    }
    for (size_t o = 0; o < s.outs.size() && o < k->outputs.size(); ++o) {
      if (!exists(&s, s.outs[o])) continue;
      if (k->outputs[o] >= k->nodes.size()) problem(&s, fmt::format("kernel output {} names no node", o));
      else if (fn.vars[s.outs[o]].type != k->nodes[k->outputs[o]].type)
        problem(&s, fmt::format("kernel output {} ({}) is not of its node's type", o, name(s.outs[o])));
    }
  }
};

}  // namespace

std::vector<std::string> verify(const Program& p) {
  std::vector<std::string> problems;
  if (p.entry >= p.functions.size())
    problems.push_back(fmt::format("entry function {} of {}", p.entry, p.functions.size()));
  for (const Function& fn : p.functions) {
    Verifier v{p, fn, problems, std::vector<bool>(fn.vars.size()), std::vector<bool>(fn.vars.size())};
    std::vector<VarId> top;
    if (fn.param >= fn.vars.size()) {
      v.problem(nullptr, fmt::format("parameter id {} out of range", fn.param));
    } else {
      if (fn.vars[fn.param].is_host()) v.problem(nullptr, "the parameter is a host variable");
      else if (fn.arg_type && fn.vars[fn.param].type != fn.arg_type) v.problem(nullptr, "the parameter's type is not arg_type");
      v.define(nullptr, fn.param, top);
    }
    if (fn.has_path) {
      if (fn.path >= fn.vars.size() || fn.vars[fn.path].is_host() || fn.vars[fn.path].type->kind != lang::TypeKind::Int)
        v.problem(nullptr, "the rand path parameter must be an int vector");
      else
        v.define(nullptr, fn.path, top);
    }
    for (VarId b : fn.shared_bases) {  // Note [Shared arguments]
      if (b >= fn.vars.size() || fn.vars[b].is_host() || fn.vars[b].type->kind != lang::TypeKind::Seq)
        v.problem(nullptr, "a shared base must be a sequence vector");
      else
        v.define(nullptr, b, top);
    }
    bool host = false;
    const Type* r = v.block(fn.body, &host);
    if (host) v.problem(nullptr, "the body returns a host variable");
    else if (r && fn.result_type && r != fn.result_type) v.problem(nullptr, "the body's result type is not result_type");
  }
  return problems;
}

}  // namespace ndp::flatten
