// The lengths of a regular recursion's levels (see regular_chain.h).
#include "exec/host/regular_chain.h"

#include "exec/host/kernel_failure.h"

namespace ndp::exec::host {

namespace {

/// Every expression of `plan` at a level of length L, in order; nothing where one fails.
std::optional<std::vector<lang::Value>> evaluate(const flatten::RegularLevels& plan, int64_t length) {
  using Kind = flatten::RegularLevels::LenExpr::Kind;
  std::vector<lang::Value> v;
  v.reserve(plan.exprs.size());
  for (const flatten::RegularLevels::LenExpr& e : plan.exprs) {
    if (e.kind == Kind::Length || e.kind == Kind::Const) {
      v.push_back(lang::Value::int_(e.kind == Kind::Length ? length : e.value));
      continue;
    }
    std::vector<lang::Value> args;
    for (uint32_t a : e.args) {
      if (a >= v.size()) return std::nullopt;
      args.push_back(v[a]);
    }
    std::optional<std::vector<lang::Value>> outs = uniform_outputs(*e.kernel, args);
    if (!outs || e.output >= outs->size()) return std::nullopt;
    v.push_back((*outs)[e.output]);
  }
  return v;
}

std::optional<std::vector<int64_t>> compute_chain(const flatten::RegularLevels& plan, int64_t length) {
  std::vector<int64_t> levels;
  const int64_t k = static_cast<int64_t>(plan.parts.size());
  for (int64_t l = length;;) {
    std::optional<std::vector<lang::Value>> v = evaluate(plan, l);
    if (!v) return std::nullopt;
    auto boolean = [&](uint32_t e) -> std::optional<bool> {
      if (e >= v->size() || (*v)[e].kind() != lang::ValueKind::Bool) return std::nullopt;
      return (*v)[e].as_bool();
    };
    std::optional<bool> recurse = boolean(plan.recurse), base = boolean(plan.base_flags);
    if (!recurse || !base || *recurse == (*base == plan.base_when)) return std::nullopt;
    if (!*recurse) return levels;
    int64_t m = -1;
    for (uint32_t p : plan.parts) {
      if (p >= v->size() || (*v)[p].kind() != lang::ValueKind::Int) return std::nullopt;
      const int64_t part = (*v)[p].as_int();
      if (m >= 0 && part != m) return std::nullopt;
      m = part;
    }
    if (k == 0 || m < 0 || m >= l || m * k != l) return std::nullopt;
    levels.push_back(l);
    l = m;
  }
}

}  // namespace

std::optional<std::vector<int64_t>> regular_chain(const flatten::RegularLevels& plan, int64_t length) {
  flatten::RegularLevels::ChainMemo& memo = *plan.chain_memo;
  {
    std::lock_guard<std::mutex> lock(memo.mu);
    if (auto it = memo.chains.find(length); it != memo.chains.end()) return it->second;
  }
  std::optional<std::vector<int64_t>> chain = compute_chain(plan, length);
  std::lock_guard<std::mutex> lock(memo.mu);
  if (memo.chains.size() >= 256) memo.chains.clear();  // (a program of many lengths: bounded)
  return memo.chains.emplace(length, std::move(chain)).first->second;
}

}  // namespace ndp::exec::host
