// Raising a failed kernel's error (see kernel_failure.h).
#include "exec/host/kernel_failure.h"

#include <string>
#include <vector>

#include "flatten/kernel_abi.h"
#include "lang/diagnostics.h"
#include "lang/eval/prim_call.h"

namespace ndp::exec::host {

using flatten::KernelNode;

namespace {

/// The flat components of a value (pairs taken apart), in order.
void components(const lang::Value& x, std::vector<lang::Value>& out) {
  if (x.kind() == lang::ValueKind::Pair) {
    components(x.first(), out);
    components(x.second(), out);
  } else {
    out.push_back(x);
  }
}

/// A sequence read or write (Notes [Sequences in loop kernels] and [Sequence state in loop
/// kernels]) on the rows of its sequence: its value, after checking its index.
lang::Value sequence_read(const KernelNode& n, const std::vector<lang::Value>& v, std::span<const std::vector<lang::Value>> seqs) {
  NDP_ASSERT(n.input < seqs.size(), "a kernel read of a sequence it was not given");
  const lang::Value& row = seqs[n.input].at(static_cast<size_t>(v[n.args.at(0)].as_int()));
  const int64_t length = static_cast<int64_t>(row.length());
  if (n.kind == KernelNode::Kind::SeqLength) return lang::Value::int_(length);
  const bool write = n.kind == KernelNode::Kind::SeqWrite;
  const size_t guard = write ? 3 : 2;
  const int64_t i = v[n.args.at(1)].as_int();
  if (i < 0 || i >= length) {
    if (n.args.size() > guard && !v[n.args[guard]].as_bool()) return v[n.args[write ? 2 : 1]];  // a branch not taken: unused
    throw lang::eval::EvalError{lang::message(lang::RuntimeErrorId::SeqRefBounds, i, length), n.span};
  }
  if (write) return v[n.args[2]];
  std::vector<lang::Value> parts;
  components(row.elems()[static_cast<size_t>(i)], parts);
  return parts.at(n.component);
}

/// The value `like` with its flat components parts[next...].
lang::Value rebuilt(const lang::Value& like, const std::vector<lang::Value>& parts, size_t& next) {
  if (like.kind() != lang::ValueKind::Pair) return parts.at(next++);
  lang::Value a = rebuilt(like.first(), parts, next);
  return lang::Value::pair(std::move(a), rebuilt(like.second(), parts, next));
}

/// Stores a SeqWrite node's value (an iteration that goes on: Note [Sequence state in loop
/// kernels]) in the rows.
void store(const KernelNode& n, const std::vector<lang::Value>& v, std::vector<std::vector<lang::Value>>& seqs) {
  if (n.args.size() > 3 && !v[n.args[3]].as_bool()) return;
  lang::Value& row = seqs[n.input].at(static_cast<size_t>(v[n.args[0]].as_int()));
  std::vector<lang::Value> elems = row.elems();
  std::vector<lang::Value> parts;
  lang::Value& at = elems.at(static_cast<size_t>(v[n.args[1]].as_int()));
  components(at, parts);
  parts.at(n.component) = v[n.args[2]];
  size_t next = 0;
  at = rebuilt(at, parts, next);
  row = lang::Value::seq(std::move(elems));
}

/// The values of nodes [0, end) of `k` on `inputs` at instance `instance`; a node that fails
/// raises its error.
std::vector<lang::Value> evaluate(const flatten::KernelBody& k, std::span<const lang::Value> inputs, size_t end,
                                  std::span<const std::vector<lang::Value>> seqs, int64_t instance) {
  std::vector<lang::Value> v;
  v.reserve(end);
  for (size_t j = 0; j < end; ++j) {
    const KernelNode& n = k.nodes[j];
    if (n.kind == KernelNode::Kind::Input) {
      v.push_back(inputs[n.input]);
    } else if (n.kind == KernelNode::Kind::Instance) {
      v.push_back(lang::Value::int_(instance));
    } else if (n.kind == KernelNode::Kind::SeqLength || n.kind == KernelNode::Kind::SeqElt || n.kind == KernelNode::Kind::SeqWrite) {
      v.push_back(sequence_read(n, v, seqs));
    } else if (n.kind == KernelNode::Kind::Const) {
      v.push_back(n.value);
    } else {
      std::vector<lang::Value> args;
      for (uint32_t a : n.args) args.push_back(v[a]);
      lang::eval::PrimCall call{n.prim, n.span, nullptr, nullptr, nullptr};
      v.push_back(lang::eval::apply_prim(call, args.data()));  // raises the node's error
    }
  }
  return v;
}

}  // namespace

void raise_kernel_failure(const flatten::KernelBody& k, uint64_t record, std::span<const lang::Value> inputs,
                          std::span<const std::vector<lang::Value>> seqs) {
  const uint32_t failed = flatten::failed_node(record);
  NDP_ASSERT(failed < k.nodes.size() && inputs.size() == k.inputs.size(), "a failure record that names no node");
  const int64_t instance = flatten::failed_instance(record);
  if (k.loop) {
    // The failing iteration is the instance's first with a failing node (Note [Loop kernels]):
    // the iterations run again until one raises.
    std::vector<lang::Value> state(inputs.begin(), inputs.end());
    std::vector<std::vector<lang::Value>> rows(seqs.begin(), seqs.end());
    for (;;) {
      std::vector<lang::Value> v = evaluate(k, state, k.nodes.size(), rows, instance);
      if (v[k.loop_done].as_bool()) break;
      for (const KernelNode& n : k.nodes)
        if (n.kind == KernelNode::Kind::SeqWrite) store(n, v, rows);
      for (size_t i = 0; i < k.loop_next.size(); ++i) state[i] = v[k.loop_next[i]];
    }
  } else {
    evaluate(k, inputs, failed + 1, seqs, instance);
  }
  const KernelNode& n = k.nodes[failed];
  const std::string what = n.kind == KernelNode::Kind::Prim ? lang::core::prim_info(n.prim).name : "a sequence read";
  throw lang::InternalError("internal error: a fused kernel reported that " + what +
                            " failed at instance " + std::to_string(flatten::failed_instance(record)) +
                            ", which the host computes without an error");
}

}  // namespace ndp::exec::host
