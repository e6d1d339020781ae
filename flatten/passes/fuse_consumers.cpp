// Fusion of maps into reductions and scans, and of filters into packs (see fuse_consumers.h).
#include "flatten/passes/fuse_consumers.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "flatten/passes/fuse_elementwise.h"
#include "flatten/passes/ir_walk.h"

namespace ndp::flatten {

using lang::Type;
using lang::TypeKind;
using lang::core::PrimId;
using lang::core::PrimOperator;

bool consumer_prim_ok(PrimId p, const Type* elem) {
  if (!lang::core::is_reduction(p) && !lang::core::is_scan(p)) return false;
  if (elem == nullptr || elem->kind > TypeKind::F32) return false;
  TypeKind k = elem->kind;
  bool number = k == TypeKind::Int || k == TypeKind::I32 || k == TypeKind::Float || k == TypeKind::F32;
  bool logical = k == TypeKind::Int || k == TypeKind::I32 || k == TypeKind::Bool;
  switch (lang::core::prim_operator(p)) {
    case PrimOperator::Plus: case PrimOperator::Mult: return number;
    case PrimOperator::Max: case PrimOperator::Min: return number || k == TypeKind::Char;
    case PrimOperator::And: case PrimOperator::Or: case PrimOperator::Xor: return logical;
    case PrimOperator::None: break;
  }
  return false;
}

namespace {

/// Bytes an element of a flat scalar type takes in a vector.
int scalar_bytes(const Type* t) {
  switch (t->kind) {
    case TypeKind::Bool: case TypeKind::Char: return 1;
    case TypeKind::I32: case TypeKind::F32: return 4;
    default: return 8;
  }
}

// Note [Stored outputs read back]
// A consumer takes in the part of its producer's kernel that computes the value it consumes,
// recomputed from the kernel's inputs. Where that part goes through another output of the
// kernel, which the kernel stores anyway, the consumer reads that output instead whenever it is
// narrower than the inputs it is computed from: quickhull's count of the points left of a line,
// sum({btoi(c > 0.0) : c in cross}), read 8 bytes of cross product an element where the flags
// `c > 0.0`, stored for the pack of the points, are one byte. An output counts as stored where
// something other than a consumer that could absorb it reads it: a pack of flat values by flags
// fuses the flags in (the plain filter `{x in s | x > 0}`, whose count and pack then form one
// filter group computing the flags once), a pack of points does not.

/// The part of `k` that computes output `output`: the nodes it needs, in order, reading only
/// the inputs they use, or k's other outputs `outs[o]` where those stay stored (`stored`) and
/// are fewer bytes (Note [Stored outputs read back]). `uses` are k's operands; returns the body
/// and its operands.
std::pair<KernelBody, std::vector<VarId>> slice_output(const KernelBody& k, const std::vector<VarId>& uses,
                                                       const std::vector<VarId>& outs, uint32_t output,
                                                       const std::function<bool(VarId)>& stored) {
  // Per node: the bytes of the distinct inputs it is computed from (a bitset of inputs when
  // there are few, else no reading back).
  const size_t n = k.nodes.size();
  std::vector<uint64_t> from(n, 0);
  const bool few_inputs = k.inputs.size() <= 64;
  for (size_t j = 0; j < n && few_inputs; ++j) {
    const KernelNode& node = k.nodes[j];
    if (node.kind == KernelNode::Kind::Input) from[j] = uint64_t{1} << node.input;
    for (uint32_t a : node.args) from[j] |= from[a];
  }
  auto input_bytes = [&](size_t j) {
    int bytes = 0;
    for (uint32_t i = 0; i < k.inputs.size(); ++i)
      if ((from[j] >> i) & 1) bytes += scalar_bytes(k.inputs[i]);
    return bytes;
  };
  std::map<uint32_t, VarId> read_back;  // node -> the stored output read in its place
  for (uint32_t o = 0; o < k.outputs.size() && few_inputs; ++o) {
    const uint32_t j = k.outputs[o];
    if (o != output && j != k.outputs.at(output) && scalar_bytes(k.nodes[j].type) < input_bytes(j) && stored(outs.at(o)))
      read_back.emplace(j, outs.at(o));
  }
  std::vector<bool> live(n, false);
  live[k.outputs.at(output)] = true;
  for (size_t j = n; j-- > 0;)
    if (live[j] && !read_back.count(static_cast<uint32_t>(j)))
      for (uint32_t a : k.nodes[j].args) live[a] = true;
  KernelBody s;
  std::vector<VarId> s_uses;
  std::vector<uint32_t> node_of(n, 0);
  std::map<uint32_t, uint32_t> input_of;  // k's input -> the slice's
  for (uint32_t j = 0; j < n; ++j) {
    if (!live[j]) continue;
    KernelNode node = k.nodes[j];
    if (auto r = read_back.find(j); r != read_back.end()) {
      KernelNode in;
      in.kind = KernelNode::Kind::Input;
      in.type = node.type;
      in.input = static_cast<uint32_t>(s.inputs.size());
      s.inputs.push_back(node.type);
      s_uses.push_back(r->second);
      node = std::move(in);
    } else if (node.kind == KernelNode::Kind::Input) {
      auto [it, fresh] = input_of.emplace(node.input, static_cast<uint32_t>(s.inputs.size()));
      if (fresh) {
        s.inputs.push_back(k.inputs.at(node.input));
        s_uses.push_back(uses.at(node.input));
      }
      node.input = it->second;
    }
    for (uint32_t& a : node.args) a = node_of[a];
    node_of[j] = static_cast<uint32_t>(s.nodes.size());
    s.nodes.push_back(std::move(node));
  }
  s.outputs.push_back(node_of[k.outputs.at(output)]);
  return {std::move(s), std::move(s_uses)};
}

struct Fuser {
  Function& fn;
  std::map<VarId, lang::Value> lits;  // vectors of n copies of a scalar literal

  void find_lits(const Block& b) {
    for (const Stmt& s : b.stmts) {
      if (s.op == Op::Lit && const_ok(s.lit, fn.vars[s.dst].type)) lits.emplace(s.dst, s.lit);
      for_each_sub_block(s, [&](const Block& sub) { find_lits(sub); });
    }
  }

  std::vector<const Type*> arg_types(const Stmt& s) const {
    std::vector<const Type*> t;
    for (VarId u : s.uses) t.push_back(fn.vars[u].type);
    return t;
  }

  /// A single fusible primitive as a kernel body; literal operands become constants when
  /// another operand remains to give the kernel its instance count.
  std::pair<KernelBody, std::vector<VarId>> prim_body(const Stmt& s) const {
    KernelBody k = one_node_kernel(s.prim, arg_types(s), fn.vars[s.dst].type);
    bool absorb = false;
    for (VarId u : s.uses) absorb = absorb || !lits.count(u);
    std::vector<VarId> uses;
    KernelBody out;
    KernelNode prim = k.nodes.back();
    std::map<VarId, uint32_t> node_of;  // an operand read twice (x * x) is one input
    for (uint32_t i = 0; i < s.uses.size(); ++i) {
      if (auto it = node_of.find(s.uses[i]); it != node_of.end()) {
        prim.args[i] = it->second;
        continue;
      }
      KernelNode n = k.nodes[i];
      if (absorb && lits.count(s.uses[i])) {
        n.kind = KernelNode::Kind::Const;
        n.value = lits.at(s.uses[i]);
      } else {
        n.input = static_cast<uint32_t>(out.inputs.size());
        out.inputs.push_back(k.inputs[i]);
        uses.push_back(s.uses[i]);
      }
      prim.args[i] = static_cast<uint32_t>(out.nodes.size());
      node_of.emplace(s.uses[i], prim.args[i]);
      out.nodes.push_back(std::move(n));
    }
    out.outputs = {static_cast<uint32_t>(out.nodes.size())};
    out.nodes.push_back(std::move(prim));
    return {std::move(out), std::move(uses)};
  }

  /// Whether some statement reads v other than one that may take v's computation in: a pack of
  /// flat values by flags v, or a nest (which a reduction or scan may consume). Walks the whole
  /// function; only producers of several outputs ask.
  bool stays_stored(VarId v) const {
    bool kept = false;
    std::function<void(const Block&)> walk = [&](const Block& b) {
      for (const Stmt& s : b.stmts) {
        if (kept) return;
        for_each_sub_block(s, walk);
        if (std::find(s.uses.begin(), s.uses.end(), v) == s.uses.end()) continue;
        const bool fusible_pack = s.op == Op::Pack && s.uses.at(1) == v && s.uses.at(0) != v &&
                                  fn.vars[s.uses.at(0)].type->kind <= TypeKind::F32;
        if (!fusible_pack && s.op != Op::Nest) kept = true;
      }
      if (b.result == v) kept = true;
    };
    walk(fn.body);
    return kept;
  }

  /// True for the primitives an element function may not hold: sin, cos and tan, whose
  /// argument reduction on the GPU (libdevice's, Note [Math functions on the GPU]) keeps an
  /// array in local memory, and then the consumer program passes the element function's
  /// 64-byte result through the stack (Note [Consumer programs]). Their map stays a kernel
  /// of its own.
  static bool needs_local_memory(PrimId p) { return p == PrimId::Sin || p == PrimId::Cos || p == PrimId::Tan; }

  /// The body computing `v` from the producer `p` (a Kernel or a fusible Prim), if it is one.
  /// Consumer kernels cannot fail, so neither can what they take in (Note [Kernels that can fail]).
  std::optional<std::pair<KernelBody, std::vector<VarId>>> producer_body(const Stmt& p, VarId v) const {
    if (p.op == Op::Kernel) {
      if (p.kernel->can_fail()) return std::nullopt;
      for (const KernelNode& n : p.kernel->nodes)
        if (n.kind == KernelNode::Kind::Prim && needs_local_memory(n.prim)) return std::nullopt;
      for (uint32_t o = 0; o < p.outs.size(); ++o)
        if (p.outs[o] == v) return slice_output(*p.kernel, p.uses, p.outs, o, [&](VarId w) { return stays_stored(w); });
      return std::nullopt;
    }
    if (p.op == Op::Prim && kernel_prim_ok(p.prim, arg_types(p), fn.vars[p.dst].type) && !needs_local_memory(p.prim))
      return prim_body(p);
    return std::nullopt;
  }

  /// Removes output v from its producer (the whole statement when nothing else is left).
  static bool drop_output(Stmt& p, VarId v) {
    if (p.op != Op::Kernel) return false;
    auto body = std::make_shared<KernelBody>(*p.kernel);
    body->outputs.clear();
    std::vector<VarId> outs;
    for (size_t o = 0; o < p.outs.size(); ++o) {
      if (p.outs[o] == v) continue;
      outs.push_back(p.outs[o]);
      body->outputs.push_back(p.kernel->outputs[o]);
    }
    if (outs.empty()) return false;
    p.outs = std::move(outs);
    p.dst = p.outs[0];
    p.kernel = std::move(body);
    return true;
  }

  /// A statement that may absorb its producer: a reduction or scan of one nested operand, or
  /// a pack (the conditions below decide).
  static bool consumer_candidate(const Stmt& s) {
    return (s.op == Op::Prim && s.uses.size() == 1 && (lang::core::is_reduction(s.prim) || lang::core::is_scan(s.prim))) ||
           s.op == Op::Pack;
  }

  void block(Block& b) {
    for (Stmt& s : b.stmts) for_each_sub_block(s, [&](Block& sub) { block(sub); });
    for (size_t i = 0; i < b.stmts.size(); ++i) {
      // Only a consumer pays for the counts and definitions below, so that a block of many
      // other statements (a literal of 10^5 elements) is not quadratic.
      if (!consumer_candidate(b.stmts[i])) continue;
      // Recounted per consumer: every fusion moves reads from one variable to others.
      std::vector<uint32_t> count = use_counts(fn);
      std::map<VarId, size_t> def;  // this block's definitions, up to i
      for (size_t j = 0; j < i; ++j) {
        const Stmt& d = b.stmts[j];
        if (defines_outs(d.op)) for (VarId o : d.outs) def[o] = j;
        else if (d.op != Op::CheckLengths) def[d.dst] = j;
      }
      auto defined_here = [&](VarId v) -> std::optional<size_t> {
        auto it = def.find(v);
        if (it == def.end()) return std::nullopt;
        return it->second;
      };
      Stmt& s = b.stmts[i];
      std::optional<size_t> nest, producer;
      VarId value = 0, first_operand = 0;  // the value fused away; uses[0] of the fused statement
      Op fused;
      if (s.op == Op::Prim && s.uses.size() == 1 && (lang::core::is_reduction(s.prim) || lang::core::is_scan(s.prim))) {
        nest = defined_here(s.uses[0]);
        if (!nest || b.stmts[*nest].op != Op::Nest || count[s.uses[0]] != 1) continue;
        first_operand = b.stmts[*nest].uses.at(0);  // the lengths
        value = b.stmts[*nest].uses.at(1);
        if (!consumer_prim_ok(s.prim, fn.vars[value].type)) continue;
        fused = lang::core::is_reduction(s.prim) ? Op::ReduceKernel : Op::ScanKernel;
      } else if (s.op == Op::Pack) {
        const Type* t = fn.vars[s.uses.at(0)].type;
        if (t->kind > TypeKind::F32) continue;  // flat scalar values only
        first_operand = s.uses.at(0);  // the values
        value = s.uses.at(1);
        fused = Op::PackKernel;
      } else {
        continue;
      }
      producer = defined_here(value);
      if (!producer || count[value] != 1) continue;
      auto body = producer_body(b.stmts[*producer], value);
      // A body of constants alone would not know its instance count.
      if (!body || body->second.empty() || body->second.size() > kMaxConsumerInputs) continue;
      Stmt k;
      k.op = fused;
      k.dst = s.dst;
      k.span = s.span;
      k.prim = s.prim;
      k.type = s.type;
      k.type_args = s.type_args;
      k.uses.push_back(first_operand);
      k.uses.insert(k.uses.end(), body->second.begin(), body->second.end());
      k.kernel = std::make_shared<const KernelBody>(std::move(body->first));
      s = std::move(k);
      std::vector<bool> gone(b.stmts.size(), false);
      if (nest) gone[*nest] = true;
      if (!drop_output(b.stmts[*producer], value)) gone[*producer] = true;
      std::vector<Stmt> kept;
      size_t at = i;
      for (size_t j = 0; j < b.stmts.size(); ++j) {
        if (!gone[j]) kept.push_back(std::move(b.stmts[j]));
        else if (j < i) --at;
      }
      i = at;
      b.stmts = std::move(kept);
    }
  }
};

}  // namespace

Program fuse_consumers(Program p) {
  for (Function& f : p.functions) {
    Fuser fu{f, {}};
    fu.find_lits(f.body);
    fu.block(f.body);
  }
  return p;
}

}  // namespace ndp::flatten
