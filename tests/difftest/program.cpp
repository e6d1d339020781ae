// Printing and tree surgery for generated programs.
#include "tests/difftest/program.h"

#include <cctype>

namespace ndp::difftest {

Pattern pat_var(std::string name) {
  Pattern p;
  p.kind = Pattern::Kind::Var;
  p.name = std::move(name);
  return p;
}

Pattern pat_tuple(Pattern a, Pattern b) {
  Pattern p;
  p.kind = Pattern::Kind::Tuple;
  p.kids = {std::move(a), std::move(b)};
  return p;
}

Pattern pat_con(std::string con, Pattern fields) {
  Pattern p;
  p.kind = Pattern::Kind::Con;
  p.name = std::move(con);
  p.kids = {std::move(fields)};
  return p;
}

std::string pattern_text(const Pattern& p) {
  switch (p.kind) {
    case Pattern::Kind::Var: return p.name;
    case Pattern::Kind::Tuple: return "(" + pattern_text(p.kids[0]) + ", " + pattern_text(p.kids[1]) + ")";
    case Pattern::Kind::Con: {
      const Pattern& f = p.kids[0];
      if (f.kind == Pattern::Kind::Tuple)
        return p.name + "(" + pattern_text(f.kids[0]) + ", " + pattern_text(f.kids[1]) + ")";
      return p.name + "(" + pattern_text(f) + ")";
    }
  }
  return p.name;
}

namespace {

// Every compound form prints parenthesised, so NESL's precedence rules (and the way `if` and
// `let` swallow everything to their right) never change what a generated tree means.
std::string text(const Expr& e);

// Text that is safe as the operand of a prefix operator or before `[i]`.
std::string atom(const ExprP& e) {
  std::string s = text(*e);
  bool atomic = e->kind == Expr::Kind::Var || e->kind == Expr::Kind::Call || e->kind == Expr::Kind::Index ||
                e->kind == Expr::Kind::SeqLit || e->kind == Expr::Kind::Range || e->kind == Expr::Kind::Each ||
                s.front() == '(';
  return atomic ? s : "(" + s + ")";
}

std::string join_kids(const std::vector<ExprP>& kids, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) {
    if (i > from) out += ", ";
    out += text(*kids[i]);
  }
  return out;
}

std::string text(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::Lit: return e.text.front() == '-' ? "(" + e.text + ")" : e.text;
    case Expr::Kind::Var: return e.text;
    case Expr::Kind::Call: return e.text + "(" + join_kids(e.kids, 0, e.kids.size()) + ")";
    case Expr::Kind::Binop: return "(" + text(*e.kids[0]) + " " + e.text + " " + text(*e.kids[1]) + ")";
    case Expr::Kind::Prefix: return "(" + e.text + atom(e.kids[0]) + ")";
    case Expr::Kind::Index: return atom(e.kids[0]) + "[" + text(*e.kids[1]) + "]";
    case Expr::Kind::If:
      return "(if " + text(*e.kids[0]) + " then " + text(*e.kids[1]) + " else " + text(*e.kids[2]) + ")";
    case Expr::Kind::Let:
      return "(let " + pattern_text(e.pats[0]) + " = " + text(*e.kids[0]) + " in " + text(*e.kids[1]) + ")";
    case Expr::Kind::Tuple: return "(" + text(*e.kids[0]) + ", " + text(*e.kids[1]) + ")";
    case Expr::Kind::SeqLit: return "[" + join_kids(e.kids, 0, e.kids.size()) + "]";
    case Expr::Kind::Empty: return "([] " + type_source(e.type->a) + ")";
    case Expr::Kind::Range: {
      std::string s = "[" + text(*e.kids[0]) + ":" + text(*e.kids[1]);
      if (e.kids.size() > 2) s += ":" + text(*e.kids[2]);
      return s + "]";
    }
    case Expr::Kind::Each: {
      std::string s = "{" + text(*e.kids[0]) + " : ";
      for (size_t i = 0; i < e.pats.size(); ++i) {
        if (i > 0) s += "; ";
        s += pattern_text(e.pats[i]) + " in " + text(*e.kids[i + 1]);
      }
      if (e.has_filter) s += " | " + text(*e.kids.back());
      return s + "}";
    }
  }
  return e.text;
}

void walk_impl(const ExprP& e, const std::function<bool(const ExprP&)>& visit) {
  if (!visit(e)) return;
  for (const ExprP& k : e->kids) walk_impl(k, visit);
}

ExprP replace_impl(const ExprP& e, size_t& counter, size_t target, const ExprP& repl) {
  if (counter == target) {
    counter += expr_size(e);
    return repl;
  }
  size_t after = counter + expr_size(e);
  if (target < counter || target >= after) {
    counter = after;
    return e;
  }
  ++counter;
  auto copy = std::make_shared<Expr>(*e);
  for (ExprP& k : copy->kids) k = replace_impl(k, counter, target, repl);
  return copy;
}

}  // namespace

std::string expr_text(const ExprP& e) { return text(*e); }

std::string def_text(const Program::Def& d) {
  if (d.kind == Program::Def::Kind::Datatype) {
    std::string s = "datatype " + d.data.name + "(";
    auto comps = tuple_components(d.data.fields);
    for (size_t i = 0; i < comps.size(); ++i) s += (i ? ", " : "") + type_source(comps[i]);
    return s + ") $";
  }
  const FunctionDef& f = d.fn;
  std::string params;
  for (size_t i = 0; i < f.params.size(); ++i) params += (i ? ", " : "") + f.params[i];
  std::string s = "function " + f.name + "(" + params + ")";
  if (f.typed) {
    std::string arg;
    for (size_t i = 0; i < f.param_types.size(); ++i) arg += (i ? ", " : "") + type_source(f.param_types[i]);
    if (f.param_types.size() > 1) arg = "(" + arg + ")";
    s += " : " + arg + " -> " + type_source(f.result);
  }
  if (f.body) s += " = " + expr_text(f.body);
  return s + " $";
}

std::string defs_text(const Program& p) {
  std::string out;
  for (const auto& d : p.defs) out += def_text(d) + "\n";
  return out;
}

std::string program_file(const Program& p, const std::string& header, const std::string& expected) {
  std::string out = header;
  out += defs_text(p);
  if (!p.defs.empty()) out += "\n";
  out += "%test\n" + expr_text(p.expr) + " ==> " + expected + "\n%\n";
  return out;
}

size_t expr_size(const ExprP& e) {
  size_t n = 1;
  for (const ExprP& k : e->kids) n += expr_size(k);
  return n;
}

void walk(const ExprP& e, const std::function<bool(const ExprP&)>& visit) { walk_impl(e, visit); }

ExprP replace_node(const ExprP& root, size_t target, const ExprP& repl) {
  size_t counter = 0;
  return replace_impl(root, counter, target, repl);
}

bool calls(const ExprP& e, const std::string& name) {
  bool found = false;
  walk(e, [&](const ExprP& n) {
    if (n->kind == Expr::Kind::Call && n->text == name) found = true;
    return !found;
  });
  return found;
}

bool mentions(const std::string& text, const std::string& name) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t pos = text.find(name); pos != std::string::npos; pos = text.find(name, pos + 1)) {
    bool left = pos == 0 || !word(text[pos - 1]);
    bool right = pos + name.size() >= text.size() || !word(text[pos + name.size()]);
    if (left && right) return true;
  }
  return false;
}

}  // namespace ndp::difftest
