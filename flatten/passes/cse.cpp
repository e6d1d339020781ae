// Common-subexpression elimination over Flat IR blocks (see cse.h).
#include "flatten/passes/cse.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "flatten/passes/ir_walk.h"

namespace ndp::flatten {

namespace {

bool is_pure(const Stmt& s) {
  switch (s.op) {
    case Op::Prim: return lang::core::prim_effect(s.prim) == lang::core::PrimEffect::Pure;
    case Op::Lit:
    case Op::Global:
    case Op::Empty:
    case Op::Length:
    case Op::Count:
    case Op::MapLanes:
    case Op::Const:
    case Op::Tuple:
    case Op::First:
    case Op::Second:
    case Op::Lengths:
    case Op::Elements:
    case Op::Retype:
    case Op::Nest:
    case Op::Replicate:
    case Op::PathStep:
    case Op::Iota:
    case Op::Gather:
    case Op::Pack:
    case Op::Merge:
    case Op::Concat:
    case Op::Slice:
    case Op::SeqLit:
      return true;
    default:
      return false;  // calls, control, checks, errors, effects, and ops with sub-blocks
  }
}

/// Appends a text that tells apart any two different values (format_value does not: floats
/// print to 15 digits and every function as `fn`).
void exact_key(const lang::Value& v, std::string& k) {
  using lang::ValueKind;
  k += fmt::format("{}:", static_cast<int>(v.kind()));
  switch (v.kind()) {
    case ValueKind::Int: k += std::to_string(v.as_int()); break;
    case ValueKind::Float: k += fmt::format("{:a}", v.as_float()); break;
    case ValueKind::Bool: k += v.as_bool() ? "T" : "F"; break;
    case ValueKind::Char: k += std::to_string(v.as_char()); break;
    case ValueKind::I32: k += std::to_string(v.as_i32()); break;
    case ValueKind::F32: k += fmt::format("{:a}", v.as_f32()); break;
    case ValueKind::Stream: k += std::to_string(v.as_stream()); break;
    case ValueKind::Seq:
      k += "[";
      for (const lang::Value& e : v.elems()) exact_key(e, k);
      k += "]";
      break;
    case ValueKind::Pair:
      exact_key(v.first(), k);
      exact_key(v.second(), k);
      break;
    case ValueKind::Data:
      k += fmt::format("{}", static_cast<const void*>(v.data().def));
      exact_key(v.data().fields, k);
      break;
    case ValueKind::Fn: {
      const lang::FnObj& f = v.fn();
      k += fmt::format("{}.{}.{}", static_cast<int>(f.target), f.id, static_cast<const void*>(f.lambda));
      for (const lang::Type* t : f.type_args) k += fmt::format(",{}", static_cast<const void*>(t));
      for (const lang::Value& e : f.env) exact_key(e, k);
      break;
    }
  }
  k += ";";
}

struct Cse {
  Function& fn;
  std::vector<VarId> rename;  // rename[v]: the variable that replaces v

  VarId find(VarId v) const { return rename[v]; }

  // Two statements are the same computation when every field that affects the result matches.
  // Prims that fail (bounds, division) fail the same way twice, so reusing them is sound.
  std::string key(const Stmt& s) const {
    std::string k = fmt::format("{}|{}|{}|{}|", static_cast<int>(s.op), static_cast<int>(s.prim),
                                static_cast<const void*>(s.type), s.global);
    if (s.op == Op::Lit || s.op == Op::Const) exact_key(s.lit, k);
    for (const lang::Type* t : s.type_args) k += fmt::format("{},", static_cast<const void*>(t));
    for (VarId u : s.uses) k += fmt::format("{},", u);
    // The result type matters too (a Retype or Nothing of another type is another value).
    k += fmt::format("|{}", static_cast<const void*>(fn.vars[s.dst].type));
    return k;
  }

  void rename_uses(Stmt& s) {
    for (VarId& u : s.uses) u = find(u);
  }

  // Note [Elements of a nest]
  // `m = nest(lens, x); e = elements(m)` names x twice: a map whose results a filter then reads
  // (quickhull's cross products, `{p in points; c in cross | plusp(c)}`) reads them through
  // the nest. Under one name the map and what reads its elements fuse into one kernel, where
  // they were two passes over memory. So e becomes x (`nests` maps each nest in scope to its
  // elements).
  //
  // Note [Components of a tuple]
  // `t = tuple(a, b); x = first(t)` names a twice, as the inlined call of a function of a pair
  // does (`min(block, #keys - b * block)` of the radix benchmark): under two names, the kernel
  // that computes b and the one that reads it through x stayed two launches. So x becomes a
  // (and second(t) b): `tuples` maps each tuple in scope to its components.
  using Components = std::map<VarId, std::pair<VarId, VarId>>;
  void block(Block& b, std::map<std::string, VarId> seen, std::map<VarId, VarId> nests = {},
             Components tuples = {}) {  // by value: scopes nest
    std::vector<Stmt> kept;
    for (Stmt& s : b.stmts) {
      rename_uses(s);
      for_each_sub_block(s, [&](Block& sub) { block(sub, seen, nests, tuples); });
      if (s.op == Op::Nest) nests[s.dst] = s.uses.at(1);
      if (s.op == Op::Elements)
        if (auto it = nests.find(s.uses.at(0)); it != nests.end() && fn.vars[it->second].type == fn.vars[s.dst].type) {
          rename[s.dst] = it->second;
          continue;
        }
      if (s.op == Op::Tuple) tuples[s.dst] = {s.uses.at(0), s.uses.at(1)};
      if (s.op == Op::First || s.op == Op::Second)
        if (auto it = tuples.find(s.uses.at(0)); it != tuples.end()) {
          const VarId part = s.op == Op::First ? it->second.first : it->second.second;
          if (fn.vars[part].type == fn.vars[s.dst].type) {
            rename[s.dst] = part;
            continue;
          }
        }
      if (s.loop) {  // loop parts name the function's variables directly
        RecursionLoop& l = *s.loop;
        for (VarId& v : l.saved) v = find(v);
      }
      if (is_pure(s)) {
        std::string k = key(s);
        auto it = seen.find(k);
        if (it != seen.end()) {
          rename[s.dst] = it->second;
          continue;
        }
        seen.emplace(std::move(k), s.dst);
      }
      kept.push_back(std::move(s));
    }
    b.stmts = std::move(kept);
    b.result = find(b.result);
  }
};

}  // namespace

Program cse(Program p) {
  for (Function& f : p.functions) {
    Cse c{f, {}};
    c.rename.resize(f.vars.size());
    for (VarId v = 0; v < f.vars.size(); ++v) c.rename[v] = v;
    c.block(f.body, {});
    if (!f.body.stmts.empty() && f.body.stmts[0].loop) {
      RecursionLoop& l = *f.body.stmts[0].loop;
      for (Block* part : {&l.prefix, &l.step, &l.combine, &l.finish}) part->result = c.find(part->result);
    }
  }
  return p;
}

}  // namespace ndp::flatten
