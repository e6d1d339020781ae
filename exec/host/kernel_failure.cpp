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

/// The values of the nodes of `k`, on `inputs` at instance `instance`; a node that fails raises
/// its error. A fold's region runs once per index (Note [Folds in kernels]).
class Evaluator {
 public:
  Evaluator(const flatten::KernelBody& k, std::span<const lang::Value> inputs, std::span<const std::vector<lang::Value>> seqs,
            int64_t instance)
      : k_(k), inputs_(inputs), seqs_(seqs), instance_(instance), v_(k.nodes.size()) {}

  /// Nodes [0, end), and the whole of a region that `end` falls in.
  std::vector<lang::Value> run(size_t end) {
    range(0, static_cast<uint32_t>(k_.nodes.size()), static_cast<uint32_t>(end));
    return std::move(v_);
  }

 private:
  const flatten::KernelBody& k_;
  std::span<const lang::Value> inputs_;
  std::span<const std::vector<lang::Value>> seqs_;
  int64_t instance_;
  std::vector<lang::Value> v_;

  void range(uint32_t begin, uint32_t end, uint32_t stop) {
    for (uint32_t j = begin; j < end && j < stop; ++j) {
      const KernelNode& n = k_.nodes[j];
      switch (n.kind) {
        case KernelNode::Kind::Input: v_[j] = inputs_[n.input]; break;
        case KernelNode::Kind::Instance: v_[j] = lang::Value::int_(instance_); break;
        case KernelNode::Kind::Const: v_[j] = n.value; break;
        case KernelNode::Kind::SeqLength: case KernelNode::Kind::SeqElt: case KernelNode::Kind::SeqWrite:
          v_[j] = sequence_read(n, v_, seqs_);
          break;
        case KernelNode::Kind::SeqAppend: v_[j] = v_[n.args.at(1)]; break;  // nothing reads the rows
        case KernelNode::Kind::Fail: fail(n); v_[j] = flatten::identity_of_plain(n.type); break;
        case KernelNode::Kind::FoldIndex: {
          const KernelNode& fold = k_.nodes.at(n.input);
          lang::Value acc = v_.at(fold.args.at(1));
          const int64_t count = v_.at(fold.args.at(0)).as_int();
          for (int64_t i = 0; i < count; ++i) {
            v_[j] = lang::Value::int_(i);
            for (uint32_t a = j + 1; a < n.input; ++a)
              if (k_.nodes[a].kind == KernelNode::Kind::FoldAcc && k_.nodes[a].input == n.input) v_[a] = acc;
            range(j + 1, n.input, n.input);
            acc = v_.at(fold.args.at(2));
          }
          v_[n.input] = acc;
          j = n.input;
          break;
        }
        case KernelNode::Kind::FoldAcc: break;  // set by its fold
        case KernelNode::Kind::Fold: NDP_ASSERT(false, "a Fold outside its region");
        case KernelNode::Kind::Prim: {
          std::vector<lang::Value> args;
          for (uint32_t a : n.args) args.push_back(v_[a]);
          lang::eval::PrimCall call{n.prim, n.span, nullptr, nullptr, nullptr};
          v_[j] = lang::eval::apply_prim(call, args.data());  // raises the node's error
          break;
        }
      }
    }
  }

  /// A Fail node raises its error where its condition holds.
  void fail(const KernelNode& n) const {
    if (!v_.at(n.args.at(0)).as_bool()) return;
    if (n.component == flatten::kFailRaises) throw lang::eval::EvalError{n.value.to_string(), n.span};
    const auto id = static_cast<lang::RuntimeErrorId>(n.component);
    if (n.args.size() == 3) throw lang::eval::EvalError{lang::message(id, v_[n.args[1]].as_int(), v_[n.args[2]].as_int()), n.span};
    throw lang::eval::EvalError{lang::message(id), n.span};
  }
};

std::vector<lang::Value> evaluate(const flatten::KernelBody& k, std::span<const lang::Value> inputs, size_t end,
                                  std::span<const std::vector<lang::Value>> seqs, int64_t instance) {
  return Evaluator(k, inputs, seqs, instance).run(end);
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

bool computed_alike(const lang::Type* t) {
  return t->kind == lang::TypeKind::Int || t->kind == lang::TypeKind::Bool || t->kind == lang::TypeKind::Char ||
         t->kind == lang::TypeKind::I32;
}

std::optional<lang::Value> uniform_prim(lang::core::PrimId prim, const std::vector<const lang::Type*>* type_args,
                                       std::span<const lang::Value> args, const lang::Type* result) {
  if (!lang::core::is_elementwise(prim) || !computed_alike(result)) return std::nullopt;
  for (const lang::Value& a : args)
    if (a.kind() != lang::ValueKind::Int && a.kind() != lang::ValueKind::Bool && a.kind() != lang::ValueKind::Char &&
        a.kind() != lang::ValueKind::I32)
      return std::nullopt;
  try {
    lang::eval::PrimCall call{prim, {}, type_args, nullptr, nullptr};
    return lang::eval::apply_prim(call, args.data());
  } catch (const lang::eval::EvalError&) {
    return std::nullopt;
  }
}

std::optional<std::vector<lang::Value>> uniform_outputs(const flatten::KernelBody& k, std::span<const lang::Value> inputs) {
  if (k.loop || !k.seqs.empty() || inputs.size() != k.inputs.size()) return std::nullopt;
  for (const KernelNode& n : k.nodes) {
    const bool plain = n.kind == KernelNode::Kind::Input || n.kind == KernelNode::Kind::Const || n.kind == KernelNode::Kind::Prim;
    if (!plain || !computed_alike(n.type)) return std::nullopt;
  }
  try {
    std::vector<lang::Value> v = evaluate(k, inputs, k.nodes.size(), {}, 0);
    std::vector<lang::Value> out;
    for (uint32_t o : k.outputs) out.push_back(v.at(o));
    return out;
  } catch (const lang::eval::EvalError&) {
    return std::nullopt;
  }
}

}  // namespace ndp::exec::host
