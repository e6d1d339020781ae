// Fusion of elementwise primitives into Kernel statements (see fuse_elementwise.h).
#include "flatten/passes/fuse_elementwise.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "flatten/passes/ir_walk.h"

namespace ndp::flatten {

using lang::Type;
using lang::TypeKind;
using lang::core::PrimId;

namespace {

bool plain(const Type* t) { return t != nullptr && t->kind <= TypeKind::F32; }
bool is_int(const Type* t) { return t->kind == TypeKind::Int || t->kind == TypeKind::I32; }
bool is_float(const Type* t) { return t->kind == TypeKind::Float || t->kind == TypeKind::F32; }
bool is_number(const Type* t) { return is_int(t) || is_float(t); }

}  // namespace

bool kernel_prim_ok(PrimId p, const std::vector<const Type*>& a, const Type* r) {
  if (!plain(r)) return false;
  for (const Type* t : a)
    if (!plain(t)) return false;
  auto unary = [&](bool ok) { return a.size() == 1 && ok; };
  auto binary_same = [&](bool ok) { return a.size() == 2 && a[0] == a[1] && ok; };
  switch (p) {
    case PrimId::Not: return unary((a[0]->kind == TypeKind::Bool || is_int(a[0])) && r == a[0]);
    case PrimId::Or: case PrimId::And: case PrimId::Xor: case PrimId::Nor: case PrimId::Nand:
      return binary_same((a[0]->kind == TypeKind::Bool || is_int(a[0])) && r == a[0]);
    case PrimId::Eq: case PrimId::Ne: case PrimId::Lt: case PrimId::Gt: case PrimId::Le: case PrimId::Ge:
      return binary_same(r->kind == TypeKind::Bool);
    case PrimId::Add: case PrimId::Sub: case PrimId::Mul: return binary_same(is_number(a[0]) && r == a[0]);
    case PrimId::Div: return binary_same(is_float(a[0]) && r == a[0]);  // integer / can fail
    case PrimId::Negate: return unary(is_number(a[0]) && r == a[0]);
    case PrimId::Select: return a.size() == 3 && a[0]->kind == TypeKind::Bool && a[1] == a[2] && r == a[1];
    case PrimId::Btoi: return unary(a[0]->kind == TypeKind::Bool && r->kind == TypeKind::Int);
    case PrimId::CharCode: return unary(a[0]->kind == TypeKind::Char && r->kind == TypeKind::Int);
    case PrimId::ToFloat: return unary(a[0]->kind == TypeKind::Int && r->kind == TypeKind::Float);
    case PrimId::ToF64: return unary(is_number(a[0]) && r->kind == TypeKind::Float);
    case PrimId::ToF32: return unary(is_number(a[0]) && r->kind == TypeKind::F32);
    case PrimId::ToI64: return unary(is_int(a[0]) && r->kind == TypeKind::Int);  // from floats it can fail
    case PrimId::ToI32: return unary(is_int(a[0]) && r->kind == TypeKind::I32);
    case PrimId::Exp: case PrimId::Sin: case PrimId::Cos: case PrimId::Tan: case PrimId::Asin: case PrimId::Acos:
    case PrimId::Atan: case PrimId::Sinh: case PrimId::Cosh: case PrimId::Tanh:
      return unary(a[0]->kind == TypeKind::Float && r->kind == TypeKind::Float);
    case PrimId::Eql: return binary_same(r->kind == TypeKind::Bool);  // of flat scalars: ==
    default: return false;
  }
}

bool kernel_prim_fallible(PrimId p, const std::vector<const Type*>& a, const Type* r) {
  if (!plain(r)) return false;
  for (const Type* t : a)
    if (!plain(t)) return false;
  auto unary = [&](bool ok) { return a.size() == 1 && ok; };
  auto is = [](const Type* t, TypeKind k) { return t->kind == k; };
  switch (p) {
    case PrimId::Div: return a.size() == 2 && a[0] == a[1] && is_int(a[0]) && r == a[0];
    case PrimId::Rem: case PrimId::Lshift: case PrimId::Rshift:
      return a.size() == 2 && is(a[0], TypeKind::Int) && is(a[1], TypeKind::Int) && is(r, TypeKind::Int);
    case PrimId::Power: return a.size() == 2 && is_number(a[0]) && is(a[1], TypeKind::Int) && r == a[0];
    case PrimId::Sqrt: case PrimId::Ln: return unary(is(a[0], TypeKind::Float) && is(r, TypeKind::Float));
    case PrimId::Expt:
      return a.size() == 2 && is(a[0], TypeKind::Float) && is(a[1], TypeKind::Float) && is(r, TypeKind::Float);
    case PrimId::Ceil: case PrimId::Floor: case PrimId::Trunc: case PrimId::Round:
      return unary(is(a[0], TypeKind::Float) && is(r, TypeKind::Int));
    case PrimId::CodeChar: return unary(is(a[0], TypeKind::Int) && is(r, TypeKind::Char));
    case PrimId::ToI64: return unary(is_float(a[0]) && is(r, TypeKind::Int));
    case PrimId::ToI32: return unary(is_float(a[0]) && is(r, TypeKind::I32));
    case PrimId::Hash: return a.size() == 2 && is(a[1], TypeKind::Int) && is(r, TypeKind::Int);  // a modulus < 1
    default: return false;
  }
}

namespace {

std::vector<const Type*> node_arg_types(const KernelBody& k, const KernelNode& n) {
  std::vector<const Type*> t;
  for (uint32_t a : n.args) t.push_back(k.nodes[a].type);
  return t;
}

}  // namespace

bool KernelBody::indexed_by_its_fold(const KernelNode& n) const {
  if (n.kind != KernelNode::Kind::SeqElt) return false;
  const KernelNode& index = nodes.at(n.args.at(1));
  if (index.kind != KernelNode::Kind::FoldIndex) return false;
  const KernelNode& count = nodes.at(nodes.at(index.input).args.at(0));
  return count.kind == KernelNode::Kind::SeqLength && count.input == n.input && count.args.at(0) == n.args.at(0);
}

bool KernelBody::node_can_fail(const KernelNode& n) const {
  // An index out of bounds, unless the fold that makes it runs over the row's own length (the
  // kernel then takes no failure record: a map kernel summing rows has nothing to wait for).
  if (n.kind == KernelNode::Kind::SeqElt) return !indexed_by_its_fold(n);
  if (n.kind == KernelNode::Kind::SeqWrite || n.kind == KernelNode::Kind::Fail) return true;
  // A loop's fold gives up past its budget, which its kernel reports as a failure (Note [Loops
  // that give up]), whether or not a node of its region can fail. A map kernel's fold has no
  // budget (Note [Map kernels]); one over a range too long to store has a Fail node of its own.
  if (n.kind == KernelNode::Kind::Fold) return loop;
  if (n.kind != KernelNode::Kind::Prim) return false;
  // An integer / or rem fails only by a zero divisor, so not by a literal other than zero (the
  // `#a / 2` of every halving recursion): the kernel has no failure to read back.
  if ((n.prim == lang::core::PrimId::Div || n.prim == lang::core::PrimId::Rem) && n.args.size() == 2) {
    const KernelNode& d = nodes.at(n.args[1]);
    if (d.kind == KernelNode::Kind::Const && ((d.value.kind() == lang::ValueKind::Int && d.value.as_int() != 0) ||
                                              (d.value.kind() == lang::ValueKind::I32 && d.value.as_i32() != 0)))
      return false;
  }
  return kernel_prim_fallible(n.prim, node_arg_types(*this, n), n.type);
}

bool KernelBody::compute_can_fail() const {
  return std::any_of(nodes.begin(), nodes.end(), [&](const KernelNode& n) { return node_can_fail(n); });
}

KernelBody one_node_kernel(PrimId p, const std::vector<const Type*>& args, const Type* result, lang::Span span) {
  KernelBody k;
  k.inputs = args;
  KernelNode node;
  node.kind = KernelNode::Kind::Prim;
  node.prim = p;
  node.type = result;
  node.span = span;
  for (uint32_t i = 0; i < args.size(); ++i) {
    KernelNode in;
    in.kind = KernelNode::Kind::Input;
    in.input = i;
    in.type = args[i];
    k.nodes.push_back(in);
    node.args.push_back(i);
  }
  k.nodes.push_back(node);
  k.outputs.push_back(static_cast<uint32_t>(args.size()));
  return k;
}

uint64_t const_bits(const lang::Value& v) {
  switch (v.kind()) {
    case lang::ValueKind::Float: return std::bit_cast<uint64_t>(v.as_float());
    case lang::ValueKind::F32: return std::bit_cast<uint32_t>(v.as_f32());
    case lang::ValueKind::Bool: return v.as_bool();
    case lang::ValueKind::Char: return v.as_char();
    case lang::ValueKind::I32: return static_cast<uint32_t>(v.as_i32());
    default: return static_cast<uint64_t>(v.as_int());
  }
}

bool const_ok(const lang::Value& v, const Type* t) {
  return plain(t) && static_cast<int>(v.kind()) == static_cast<int>(t->kind);
}

std::string KernelBody::compute_key() const {
  std::string k;
  for (const Type* t : inputs) k += fmt::format("i{},", static_cast<int>(t->kind));
  k += "|";
  for (const KernelNode& n : nodes) {
    if (n.kind == KernelNode::Kind::Input) {
      k += fmt::format("in{}", n.input);
    } else if (n.kind == KernelNode::Kind::Const) {
      k += fmt::format("c{}:{}", static_cast<int>(n.type->kind), const_bits(n.value));
    } else if (n.kind == KernelNode::Kind::Instance) {
      k += "inst";
    } else if (n.kind != KernelNode::Kind::Prim) {  // sequence, fold and fail nodes
      k += fmt::format("s{}:{}.{}:{}(", static_cast<int>(n.kind), n.input, n.component, static_cast<int>(n.type->kind));
      for (uint32_t a : n.args) k += fmt::format("{},", a);
      k += ")";
    } else {
      k += fmt::format("p{}:{}(", static_cast<int>(n.prim), static_cast<int>(n.type->kind));
      for (uint32_t a : n.args) k += fmt::format("{},", a);
      k += ")";
    }
    k += ";";
  }
  k += "|";
  for (uint32_t o : outputs) k += fmt::format("{},", o);
  if (loop) {
    k += fmt::format("|loop{}:", loop_done);
    for (uint32_t x : loop_next) k += fmt::format("{},", x);
    for (const Seq& seq : seqs) {
      k += seq.written ? "|wseq" : seq.appended ? "|aseq" : "|seq";
      for (const Type* t : seq.components) k += fmt::format("{},", static_cast<int>(t->kind));
    }
    k += "|seqout";
    for (uint32_t q : seq_outputs) k += fmt::format("{},", q);
  }
  return k;
}

namespace {

struct Group {
  std::vector<size_t> members;  // statement indices, increasing
  size_t last = 0;              // where the kernel goes: the last member not hoisted
  bool open = true;             // no statement outside the group has read a member yet
  bool fails = false;           // a member can fail (Note [Kernels that can fail])
  int merged_into = -1;
};

// Note [Members hoisted into a kernel]
// A map whose results a structural statement reads before another elementwise statement reads
// them, `c = cross(...); m = nest(lens, c); f = c > 0.0` (quickhull's cross products and the
// filter's flags), closes c's group at the nest, and f made a kernel and a pass of its own. A
// member that cannot fail and reads only the closed group's members, literals and variables
// defined before the group's kernel computes the same value at the kernel's place, earlier than
// its own: it joins the group there (the kernel stays at its last member not hoisted). Nothing
// reads its result before its own place, so moving it up changes no value; it can fail no
// way, so no error comes earlier either. Past a statement that can fail, such as the check that
// an apply-to-each's sequences have one length, it may read only the group's members and
// literals: an operand of its own might be of another length, which that check reports, and
// computed before it the kernel would read past the shorter one.

struct Fuser {
  Function& fn;
  std::vector<uint32_t> count;
  std::map<VarId, lang::Value> lits;  // vectors of n copies of a scalar literal (copied values)

  void find_lits(const Block& b) {
    for (const Stmt& s : b.stmts) {
      if (s.op == Op::Lit && const_ok(s.lit, fn.vars[s.dst].type)) lits.emplace(s.dst, s.lit);
      for_each_sub_block(s, [&](const Block& sub) { find_lits(sub); });
    }
  }

  /// Removes scalar Lit statements nobody reads any more (their readers became kernels that
  /// hold the constant).
  void drop_dead_lits(Block& b, const std::vector<uint32_t>& uses) {
    std::vector<Stmt> kept;
    for (Stmt& s : b.stmts) {
      for_each_sub_block(s, [&](Block& sub) { drop_dead_lits(sub, uses); });
      if (s.op == Op::Lit && uses[s.dst] == 0 && lits.count(s.dst)) continue;
      kept.push_back(std::move(s));
    }
    b.stmts = std::move(kept);
  }

  std::vector<const Type*> arg_types(const Stmt& s) const {
    std::vector<const Type*> t;
    for (VarId u : s.uses) t.push_back(fn.vars[u].type);
    return t;
  }

  bool fusible(const Stmt& s) const {
    return s.op == Op::Prim && (kernel_prim_ok(s.prim, arg_types(s), fn.vars[s.dst].type) || can_fail(s));
  }
  bool can_fail(const Stmt& s) const {
    return s.op == Op::Prim && kernel_prim_fallible(s.prim, arg_types(s), fn.vars[s.dst].type);
  }

  void block(Block& b) {
    for (Stmt& s : b.stmts) for_each_sub_block(s, [&](Block& sub) { block(sub); });
    std::vector<Group> groups;
    std::map<VarId, int> group_of;  // result of a member -> its group (before merging)
    auto find = [&](int g) {
      while (groups[g].merged_into >= 0) g = groups[g].merged_into;
      return g;
    };
    auto group_var = [&](VarId v) {
      auto it = group_of.find(v);
      return it == group_of.end() ? -1 : find(it->second);
    };
    std::map<VarId, size_t> member_at;  // result of a member -> its statement
    std::map<VarId, size_t> defined_at;  // result of any statement of this block -> its index
    std::optional<size_t> checked;       // the last statement so far that can fail or has an effect
    // The closed group g that statement s may join at g's kernel (Note [Members hoisted into a
    // kernel]), or -1.
    auto hoist_into = [&](const Stmt& s) {
      if (can_fail(s)) return -1;
      int into = -1;
      for (VarId u : s.uses) {
        const int g = group_var(u);
        if (g >= 0 && !groups[g].open) {
          if (into >= 0 && into != g) return -1;
          into = g;
        }
      }
      if (into < 0) return -1;
      bool has_input = false;  // the kernel keeps an input besides literals (its instance count)
      for (size_t m : groups[into].members)
        for (VarId u : b.stmts[m].uses)
          if (group_var(u) != into && !lits.count(u)) has_input = true;
      for (VarId u : s.uses) {
        if (group_var(u) == into) continue;
        if (lits.count(u) && has_input) continue;  // becomes a constant of the kernel
        if (group_var(u) >= 0 || (checked && *checked > groups[into].last)) return -1;
        auto d = defined_at.find(u);
        if (d != defined_at.end() && d->second > groups[into].last) return -1;
      }
      return into;
    };
    // A variable defined outside every group with the instances of member result v: an
    // operand of its chain that no member computes.
    std::function<VarId(VarId)> same_instances = [&](VarId v) {
      const Stmt& m = b.stmts[member_at.at(v)];
      for (VarId u : m.uses)
        if (!member_at.count(u)) return u;
      return same_instances(m.uses[0]);
    };
    for (size_t i = 0; i < b.stmts.size(); ++i) {
      Stmt& s = b.stmts[i];
      // `length(v)` of a member needs only the instance count, which any operand of the chain
      // has: it reads one, so the group goes on (an inlined function's `length(param)`).
      if (s.op == Op::Length && member_at.count(s.uses[0])) s.uses[0] = same_instances(s.uses[0]);
      defined_at[s.dst] = i;
      if (fusible(s)) {
        std::set<int> parents;
        for (VarId u : s.uses) {
          int g = group_var(u);
          if (g >= 0 && groups[g].open) parents.insert(g);
        }
        if (parents.empty())
          if (const int g = hoist_into(s); g >= 0) {
            groups[g].members.push_back(i);
            group_of[s.dst] = g;
            member_at[s.dst] = i;
            continue;
          }
        // A node that can fail joins every open group that holds one: as separate kernels, the
        // later of them could run first and report its error first. In one kernel the nodes
        // keep statement order (one block: the same instances, so any open groups may join).
        if (can_fail(s))
          for (size_t o = 0; o < groups.size(); ++o)
            if (groups[o].merged_into < 0 && groups[o].open && groups[o].fails) parents.insert(static_cast<int>(o));
        int g;
        if (parents.empty()) {
          g = static_cast<int>(groups.size());
          groups.emplace_back();
        } else {
          g = *parents.begin();
          for (int other : parents) {
            if (other == g) continue;
            groups[g].members.insert(groups[g].members.end(), groups[other].members.begin(), groups[other].members.end());
            groups[g].fails = groups[g].fails || groups[other].fails;
            groups[g].last = std::max(groups[g].last, groups[other].last);
            groups[other].members.clear();
            groups[other].merged_into = g;
          }
        }
        groups[g].members.push_back(i);
        groups[g].last = i;
        groups[g].fails = groups[g].fails || can_fail(s);
        group_of[s.dst] = g;
        member_at[s.dst] = i;
      } else {
        // A member that can fail is not delayed past a statement that can fail or has an effect.
        if (!pure_and_total(fn, s)) {
          checked = i;
          for (Group& gr : groups)
            if (gr.fails) gr.open = false;
        }
        std::set<VarId> read;
        collect_uses(s, read);
        if (s.loop) {
          read.insert(s.loop->saved.begin(), s.loop->saved.end());
          read.insert(s.loop->next_path);
        }
        for (VarId v : read) {
          int g = group_var(v);
          if (g >= 0) groups[g].open = false;
        }
      }
    }
    // Rebuild the block: each group of two or more becomes a kernel at its last member (not
    // hoisted).
    std::vector<int> kernel_at(b.stmts.size(), -1);
    std::vector<bool> removed(b.stmts.size(), false);
    for (size_t g = 0; g < groups.size(); ++g) {
      Group& gr = groups[g];
      if (gr.merged_into >= 0 || gr.members.size() < 2) continue;
      std::sort(gr.members.begin(), gr.members.end());
      for (size_t m : gr.members) removed[m] = true;
      kernel_at[gr.last] = static_cast<int>(g);
    }
    std::vector<Stmt> out;
    for (size_t i = 0; i < b.stmts.size(); ++i) {
      if (kernel_at[i] >= 0) out.push_back(make_kernel(b, groups[static_cast<size_t>(kernel_at[i])].members, i));
      else if (!removed[i]) out.push_back(std::move(b.stmts[i]));
    }
    b.stmts = std::move(out);
  }

  /// The kernel of `members`, placed at statement `at`, whose span it takes.
  Stmt make_kernel(Block& b, const std::vector<size_t>& members, size_t at) {
    auto body = std::make_shared<KernelBody>();
    Stmt k;
    k.op = Op::Kernel;
    k.span = b.stmts[at].span;
    std::map<VarId, uint32_t> node_of;  // variable -> node computing it (member or input)
    std::map<VarId, uint32_t> internal;  // reads of each variable by the members
    std::set<VarId> defined;
    for (size_t m : members) defined.insert(b.stmts[m].dst);
    // Literals become constants only if some other operand remains to give the kernel its n.
    bool absorb = false;
    for (size_t m : members)
      for (VarId u : b.stmts[m].uses)
        if (!defined.count(u) && !lits.count(u)) absorb = true;
    for (size_t m : members) {
      const Stmt& s = b.stmts[m];
      KernelNode n;
      n.kind = KernelNode::Kind::Prim;
      n.prim = s.prim;
      n.type = fn.vars[s.dst].type;
      n.span = s.span;
      for (VarId u : s.uses) {
        ++internal[u];
        auto it = node_of.find(u);
        if (it == node_of.end() && absorb && lits.count(u)) {
          KernelNode c;
          c.kind = KernelNode::Kind::Const;
          c.value = lits.at(u);
          c.type = fn.vars[u].type;
          body->nodes.push_back(std::move(c));
          it = node_of.emplace(u, static_cast<uint32_t>(body->nodes.size() - 1)).first;
        }
        if (it == node_of.end()) {
          KernelNode in;
          in.kind = KernelNode::Kind::Input;
          in.input = static_cast<uint32_t>(body->inputs.size());
          in.type = fn.vars[u].type;
          body->inputs.push_back(in.type);
          k.uses.push_back(u);
          body->nodes.push_back(std::move(in));
          it = node_of.emplace(u, static_cast<uint32_t>(body->nodes.size() - 1)).first;
        }
        n.args.push_back(it->second);
      }
      body->nodes.push_back(std::move(n));
      node_of[s.dst] = static_cast<uint32_t>(body->nodes.size() - 1);
    }
    for (size_t m : members) {
      VarId d = b.stmts[m].dst;
      if (count[d] > internal[d]) {
        body->outputs.push_back(node_of[d]);
        k.outs.push_back(d);
      }
    }
    if (k.outs.empty()) {  // a dead chain: keep its last value so the statement defines something
      VarId d = b.stmts[members.back()].dst;
      body->outputs.push_back(node_of[d]);
      k.outs.push_back(d);
    }
    k.dst = k.outs[0];
    k.type = fn.vars[k.dst].type;
    k.kernel = std::move(body);
    return k;
  }
};

}  // namespace

Program fuse_elementwise(Program p) {
  for (Function& f : p.functions) {
    Fuser fu{f, use_counts(f), {}};
    fu.find_lits(f.body);
    fu.block(f.body);
    fu.drop_dead_lits(f.body, use_counts(f));
  }
  return p;
}

}  // namespace ndp::flatten
