// The shrinker: greedy first-improvement search over type-preserving program edits.
#include "tests/difftest/shrink.h"

#include <set>

#include "tests/difftest/generator.h"

namespace ndp::difftest {

namespace {

struct Located {
  size_t index;  // preorder number in its tree
  ExprP node;
};

// Nodes that may be rewritten, with their preorder numbers; frozen subtrees are skipped.
void collect(const ExprP& e, size_t& counter, std::vector<Located>& out) {
  if (e->frozen) {
    counter += expr_size(e);
    return;
  }
  out.push_back({counter++, e});
  for (const ExprP& k : e->kids) collect(k, counter, out);
}

bool calls_any(const ExprP& e, const std::set<std::string>& names) {
  bool found = false;
  walk(e, [&](const ExprP& n) {
    if (n->kind == Expr::Kind::Call && names.count(n->text)) found = true;
    return !found;
  });
  return found;
}

ExprP with_kids(const ExprP& e, std::vector<ExprP> kids) {
  auto c = std::make_shared<Expr>(*e);
  c->kids = std::move(kids);
  return c;
}

ExprP with_text(const ExprP& e, std::string text) {
  auto c = std::make_shared<Expr>(*e);
  c->text = std::move(text);
  return c;
}

// `e` with every use of variable `name` replaced by `repl` (names are unique in generated
// programs, so there is no shadowing to respect).
ExprP substitute(const ExprP& e, const std::string& name, const ExprP& repl) {
  if (e->kind == Expr::Kind::Var && e->text == name) return repl;
  std::vector<ExprP> kids;
  bool changed = false;
  for (const ExprP& k : e->kids) {
    kids.push_back(substitute(k, name, repl));
    changed |= kids.back() != k;
  }
  return changed ? with_kids(e, std::move(kids)) : e;
}

// Smaller variants of one node, each of the node's type.
std::vector<ExprP> node_variants(const ExprP& n, bool in_recursive_body, const std::set<std::string>& recursive,
                                 const std::vector<DatatypeDef>& datatypes) {
  std::vector<ExprP> out;
  out.push_back(minimal_literal(n->type, datatypes));
  walk(n, [&](const ExprP& d) {
    if (d == n) return true;
    if (d->frozen) return false;
    if (same_type(d->type, n->type) && !(in_recursive_body && calls_any(d, recursive))) out.push_back(d);
    return true;
  });
  switch (n->kind) {
    case Expr::Kind::Let:
      // Inline a variable binding.
      if (n->pats[0].kind == Pattern::Kind::Var) out.push_back(substitute(n->kids[1], n->pats[0].name, n->kids[0]));
      break;
    case Expr::Kind::SeqLit:
      for (size_t i = 0; n->kids.size() > 1 && i < n->kids.size(); ++i) {
        std::vector<ExprP> kids = n->kids;
        kids.erase(kids.begin() + static_cast<long>(i));
        out.push_back(with_kids(n, kids));
      }
      break;
    case Expr::Kind::Each: {
      if (n->has_filter) {
        auto c = std::make_shared<Expr>(*n);
        c->kids.pop_back();
        c->has_filter = false;
        out.push_back(c);
      }
      for (size_t g = 0; n->pats.size() > 1 && g < n->pats.size(); ++g) {
        auto c = std::make_shared<Expr>(*n);
        c->pats.erase(c->pats.begin() + static_cast<long>(g));
        c->kids.erase(c->kids.begin() + static_cast<long>(g + 1));
        out.push_back(c);
      }
      break;
    }
    case Expr::Kind::Lit: {
      const std::string& t = n->text;
      if (n->type->kind == Type::Kind::Int) {
        long long v = std::strtoll(t.c_str(), nullptr, 10);
        for (long long s : {0LL, 1LL, v / 2, -v}) out.push_back(with_text(n, std::to_string(s)));
      } else if (t.size() > 2 && t.front() == '"') {
        out.push_back(with_text(n, t.substr(0, t.size() - 2) + "\""));
      } else if (n->type->kind == Type::Kind::Float) {
        out.push_back(with_text(n, "1.0"));
      }
      break;
    }
    default: break;
  }
  return out;
}

std::vector<DatatypeDef> datatypes_of(const Program& p) {
  std::vector<DatatypeDef> out;
  for (const auto& d : p.defs)
    if (d.kind == Program::Def::Kind::Datatype) out.push_back(d.data);
  return out;
}

std::set<std::string> recursive_names(const Program& p) {
  std::set<std::string> out;
  for (const auto& d : p.defs)
    if (d.kind == Program::Def::Kind::Function && d.fn.recursive) out.insert(d.fn.name);
  return out;
}

// Every candidate for one round, most promising (largest cut) first.
std::vector<Program> candidates(const Program& p) {
  std::vector<Program> out;
  for (size_t i = p.defs.size(); i-- > 0;) {
    Program c = p;
    c.defs.erase(c.defs.begin() + static_cast<long>(i));
    out.push_back(std::move(c));
  }
  std::vector<DatatypeDef> dts = datatypes_of(p);
  std::set<std::string> rec = recursive_names(p);
  // Tree -1 is the test expression; tree i >= 0 is the body of definition i.
  for (int tree = -1; tree < static_cast<int>(p.defs.size()); ++tree) {
    ExprP root;
    bool rec_body = false;
    if (tree < 0) {
      root = p.expr;
    } else {
      const auto& d = p.defs[static_cast<size_t>(tree)];
      if (d.kind != Program::Def::Kind::Function || !d.fn.body) continue;
      root = d.fn.body;
      rec_body = d.fn.recursive;
    }
    std::vector<Located> nodes;
    size_t counter = 0;
    collect(root, counter, nodes);
    for (const Located& loc : nodes) {
      for (const ExprP& v : node_variants(loc.node, rec_body, rec, dts)) {
        ExprP replaced = replace_node(root, loc.index, v);
        Program c = p;
        if (tree < 0) c.expr = replaced;
        else c.defs[static_cast<size_t>(tree)].fn.body = replaced;
        out.push_back(std::move(c));
      }
    }
  }
  return out;
}

}  // namespace

size_t program_size(const Program& p) { return defs_text(p).size() + expr_text(p.expr).size(); }

Program shrink(Program p, const std::function<bool(const Program&)>& still_fails, int max_attempts, ShrinkStats* stats) {
  ShrinkStats local;
  ShrinkStats& st = stats ? *stats : local;
  bool progress = true;
  while (progress && st.attempts < max_attempts) {
    progress = false;
    size_t size = program_size(p);
    for (Program& c : candidates(p)) {
      if (program_size(c) >= size) continue;
      if (st.attempts >= max_attempts) break;
      ++st.attempts;
      if (still_fails(c)) {
        p = std::move(c);
        ++st.accepted;
        progress = true;
        break;
      }
    }
  }
  return p;
}

}  // namespace ndp::difftest
