// Which loop kernels run a warp an instance (Note [Multiprefix loops] in flat_ir.h).
#include <algorithm>

#include "flatten/flat_ir.h"

namespace ndp::flatten {

namespace {

using Kind = KernelNode::Kind;

bool is_int(const lang::Type* t) { return t->kind == lang::TypeKind::Int; }

/// The counter's next value: `x + 1` with x an Input node of state input j, either way round.
bool counts_up(const KernelBody& k, uint32_t j) {
  const KernelNode& next = k.nodes[k.loop_next[j]];
  if (next.kind != Kind::Prim || next.prim != lang::core::PrimId::Add || !is_int(next.type)) return false;
  auto is_self = [&](uint32_t a) { return k.nodes[a].kind == Kind::Input && k.nodes[a].input == j; };
  auto is_one = [&](uint32_t a) {
    const KernelNode& c = k.nodes[a];
    return c.kind == Kind::Const && is_int(c.type) && c.value.as_int() == 1;
  };
  return (is_self(next.args[0]) && is_one(next.args[1])) || (is_one(next.args[0]) && is_self(next.args[1]));
}

/// Whether nodes a and b compute the same value: one node, or equal computations of equal
/// operands (a body computes `rem(d, 4)` once for the read and again for the write).
bool same_value(const KernelBody& k, uint32_t a, uint32_t b) {
  if (a == b) return true;
  const KernelNode& x = k.nodes[a];
  const KernelNode& y = k.nodes[b];
  if (x.kind != y.kind || x.type != y.type || x.args.size() != y.args.size()) return false;
  switch (x.kind) {
    case Kind::Const:  // (an index is computed from ints, bools and chars)
      if (x.value.kind() != y.value.kind()) return false;
      switch (x.value.kind()) {
        case lang::ValueKind::Int: return x.value.as_int() == y.value.as_int();
        case lang::ValueKind::Bool: return x.value.as_bool() == y.value.as_bool();
        case lang::ValueKind::Char: return x.value.as_char() == y.value.as_char();
        case lang::ValueKind::I32: return x.value.as_i32() == y.value.as_i32();
        default: return false;
      }
    case Kind::Input: return x.input == y.input;
    case Kind::Instance: return true;
    case Kind::Prim: case Kind::SeqLength: case Kind::SeqElt:
      if (x.prim != y.prim || x.input != y.input || x.component != y.component) return false;
      for (size_t i = 0; i < x.args.size(); ++i)
        if (!same_value(k, x.args[i], y.args[i])) return false;
      return true;
    default: return false;
  }
}

}  // namespace

std::optional<MultiprefixLoop> KernelBody::compute_multiprefix() const {
  if (!loop) return std::nullopt;
  MultiprefixLoop m;
  // The state: one counter, the rest passed on as they are.
  std::optional<uint32_t> counter;
  for (uint32_t j = 0; j < loop_next.size(); ++j) {
    const KernelNode& next = nodes[loop_next[j]];
    if (next.kind == Kind::Input && next.input == j) continue;
    if (counter || !counts_up(*this, j)) return std::nullopt;
    counter = j;
  }
  if (!counter) return std::nullopt;
  m.counter = *counter;
  for (const KernelNode& n : nodes) {
    if (n.kind == Kind::FoldIndex || n.kind == Kind::SeqAppend) return std::nullopt;
    if (n.kind == Kind::Prim && lang::core::prim_family(n.prim) == lang::core::PrimFamily::Random) return std::nullopt;
  }
  // The written sequences' roles.
  // A written row is the instance's own copy (Note [Sequence state in loop kernels]), read at
  // a row every iteration names alike, so that equal indices are one element.
  auto fixed_row = [&](uint32_t r) {
    return nodes[r].kind == Kind::Instance || (nodes[r].kind == Kind::Input && nodes[r].input != m.counter);
  };
  for (uint32_t q = 0; q < seqs.size(); ++q) {
    if (!seqs[q].written) continue;
    std::vector<uint32_t> reads, writes;
    for (uint32_t j = 0; j < nodes.size(); ++j) {
      if (nodes[j].input != q) continue;
      if (nodes[j].kind == Kind::SeqElt) reads.push_back(j);
      if (nodes[j].kind == Kind::SeqWrite) writes.push_back(j);
    }
    if (reads.empty()) {  // own-slot: written at the counter's index only, once a component
      // (two writes of one element would have to be stored in node order; the lanes store
      // in evaluation order)
      std::vector<uint32_t> components;
      for (uint32_t w : writes) components.push_back(nodes[w].component);
      std::sort(components.begin(), components.end());
      if (std::adjacent_find(components.begin(), components.end()) != components.end()) return std::nullopt;
      for (uint32_t w : writes) {
        const KernelNode& at = nodes[nodes[w].args.at(1)];
        if (at.kind != Kind::Input || at.input != m.counter || !fixed_row(nodes[w].args.at(0))) return std::nullopt;
      }
      continue;
    }
    if (reads.size() != 1 || writes.size() != 1 || seqs[q].components.size() != 1 || !is_int(seqs[q].components[0]))
      return std::nullopt;
    const KernelNode& r = nodes[reads[0]];
    const KernelNode& w = nodes[writes[0]];
    if (!same_value(*this, r.args.at(0), w.args.at(0)) || !same_value(*this, r.args.at(1), w.args.at(1)) || !fixed_row(r.args.at(0)))
      return std::nullopt;
    const KernelNode& sum = nodes[w.args.at(2)];
    if (sum.kind != Kind::Prim || sum.prim != lang::core::PrimId::Add || !is_int(sum.type)) return std::nullopt;
    uint32_t addend = 0;
    if (sum.args.at(0) == reads[0]) addend = sum.args.at(1);
    else if (sum.args.at(1) == reads[0]) addend = sum.args.at(0);
    else return std::nullopt;
    m.histograms.push_back({q, reads[0], writes[0], addend});
  }
  // A loop that writes no sequence is a search or a scalar recurrence, of few iterations as
  // often as not: it keeps a thread an instance.
  if (std::none_of(seqs.begin(), seqs.end(), [](const Seq& q) { return q.written; })) return std::nullopt;
  // The pure nodes: those that read no histogram, directly or through their operands.
  std::vector<bool> pure(nodes.size(), true);
  for (uint32_t j = 0; j < nodes.size(); ++j) {
    if (m.histogram_of(nodes[j].input) != nullptr && nodes[j].kind == Kind::SeqElt) pure[j] = false;
    for (uint32_t a : nodes[j].args) pure[j] = pure[j] && pure[a];
  }
  if (!pure[loop_done]) return std::nullopt;
  for (const MultiprefixLoop::Histogram& h : m.histograms) {
    const KernelNode& r = nodes[h.read];
    const KernelNode& w = nodes[h.write];
    // The index, the read's guard, the addend and the write's guard read no state.
    for (uint32_t a : r.args)
      if (!pure[a]) return std::nullopt;
    if (!pure[h.addend] || (w.args.size() > 3 && !pure[w.args[3]])) return std::nullopt;
  }
  for (uint32_t j = 0; j < nodes.size(); ++j)
    if (pure[j]) m.order.push_back(j);
  m.pure_count = m.order.size();
  for (uint32_t j = 0; j < nodes.size(); ++j)
    if (!pure[j]) m.order.push_back(j);
  return m;
}

}  // namespace ndp::flatten
