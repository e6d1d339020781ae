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

/// The values of nodes [0, end) of `k` on `inputs`; a node that fails raises its error.
std::vector<lang::Value> evaluate(const flatten::KernelBody& k, std::span<const lang::Value> inputs, size_t end) {
  std::vector<lang::Value> v;
  v.reserve(end);
  for (size_t j = 0; j < end; ++j) {
    const KernelNode& n = k.nodes[j];
    if (n.kind == KernelNode::Kind::Input) {
      v.push_back(inputs[n.input]);
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

void raise_kernel_failure(const flatten::KernelBody& k, uint64_t record, std::span<const lang::Value> inputs) {
  const uint32_t failed = flatten::failed_node(record);
  NDP_ASSERT(failed < k.nodes.size() && inputs.size() == k.inputs.size(), "a failure record that names no node");
  if (k.loop) {
    // The failing iteration is the instance's first with a failing node (Note [Loop kernels]):
    // the iterations run again until one raises.
    std::vector<lang::Value> state(inputs.begin(), inputs.end());
    for (;;) {
      std::vector<lang::Value> v = evaluate(k, state, k.nodes.size());
      if (v[k.loop_done].as_bool()) break;
      for (size_t i = 0; i < k.loop_next.size(); ++i) state[i] = v[k.loop_next[i]];
    }
  } else {
    evaluate(k, inputs, failed + 1);
  }
  throw lang::InternalError("internal error: a fused kernel reported that " + std::string(lang::core::prim_info(k.nodes[failed].prim).name) +
                            " failed at instance " + std::to_string(flatten::failed_instance(record)) +
                            ", which the host computes without an error");
}

}  // namespace ndp::exec::host
