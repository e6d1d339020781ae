// A readable, indented S-expression dump of Core IR (`--dump=core`, `:dump core`).
#include <fmt/format.h>

#include "lang/core.h"

namespace ndp::lang::core {

namespace {

// Types are printed with explicit indices (`'0`) rather than the answer printer's renaming,
// so that a reader can match Var(i) across the nodes of one function.
std::string type_str(const Type* t) {
  if (!t) return "?";
  switch (t->kind) {
    case TypeKind::Var: return fmt::format("'{}", t->index);
    case TypeKind::Seq: return "[" + type_str(t->a) + "]";
    case TypeKind::Pair: return "(" + type_str(t->a) + ", " + type_str(t->b) + ")";
    case TypeKind::Fn: return "(" + type_str(t->a) + " -> " + type_str(t->b) + ")";
    case TypeKind::Data: {
      std::string s = t->data ? t->data->name : "?";
      if (!t->args.empty()) {
        s += "(";
        for (size_t i = 0; i < t->args.size(); ++i) s += (i ? ", " : "") + type_str(t->args[i]);
        s += ")";
      }
      return s;
    }
    default: return base_type_name(t->kind);
  }
}

std::string scheme_str(const TypeScheme& s) {
  std::string out = type_str(s.type);
  if (!s.vars.empty()) {
    out += " :: (";
    for (size_t i = 0; i < s.vars.size(); ++i) out += fmt::format("{}'{} in {}", i ? "; " : "", i, class_name(s.vars[i]));
    out += ")";
  }
  return out;
}

std::string pattern_str(const Pattern* p) {
  if (!p) return "?";
  switch (p->kind) {
    case PatternKind::Var: return fmt::format("{}@{}", p->name, p->slot);
    case PatternKind::Tuple: return "(" + pattern_str(p->left) + ", " + pattern_str(p->right) + ")";
    case PatternKind::Con: return (p->data ? p->data->name : std::string("?")) + "(" + pattern_str(p->left) + ")";
  }
  return "?";
}

std::string lit_str(const Value& v) {
  switch (v.kind()) {
    case ValueKind::Int: return fmt::format("{}", v.as_int());
    case ValueKind::Float: return fmt::format("{}", v.as_float());
    case ValueKind::Bool: return v.as_bool() ? "T" : "F";
    case ValueKind::Char: return fmt::format("`{}", static_cast<char>(v.as_char()));
    case ValueKind::I32: return fmt::format("{}i32", v.as_i32());
    case ValueKind::F32: return fmt::format("{}f32", v.as_f32());
    case ValueKind::Seq: {
      // String literals are the only sequence literals the front end makes.
      std::string s = "\"";
      for (const Value& c : v.elems()) {
        if (c.kind() != ValueKind::Char) return "[...]";
        char ch = static_cast<char>(c.as_char());
        if (ch == '"' || ch == '\\') s += '\\';
        s += ch;
      }
      return s + "\"";
    }
    default: return "<value>";
  }
}

class Dumper {
 public:
  explicit Dumper(const Program& prog) : prog_(prog) {}

  void expr(const Expr* e, int indent) {
    pad(indent);
    if (!e) {
      out_ += "<null>\n";
      return;
    }
    std::string head = header(e);
    std::string ty = " : " + type_str(e->type);
    switch (e->kind) {
      case Kind::Lit:
      case Kind::Local:
      case Kind::Global:
      case Kind::FnRef:
      case Kind::EmptySeq:
        out_ += "(" + head + ")" + ty + "\n";
        return;
      default: break;
    }
    out_ += "(" + head + ty + "\n";
    if (e->kind == Kind::Let || e->kind == Kind::Lambda) {
      pad(indent + 2);
      out_ += "pattern " + pattern_str(e->pattern) + "\n";
    }
    if (e->kind == Kind::Map) {
      for (size_t i = 0; i < e->gens.size(); ++i) {
        pad(indent + 2);
        out_ += "in " + pattern_str(e->gens[i]) + "\n";
        expr(e->args[i], indent + 4);
      }
      pad(indent + 2);
      out_ += "body\n";
      expr(e->args[e->gens.size()], indent + 4);
      if (e->has_filter) {
        pad(indent + 2);
        out_ += "filter\n";
        expr(e->args[e->gens.size() + 1], indent + 4);
      }
    } else {
      for (const Expr* a : e->args) expr(a, indent + 2);
    }
    pad(indent);
    out_ += ")\n";
  }

  std::string take() { return std::move(out_); }
  std::string& out() { return out_; }

 private:
  std::string global_name(uint32_t id) const {
    if (id < prog_.globals.size()) return fmt::format("{}#{}", prog_.globals[id]->name, id);
    return fmt::format("?#{}", id);
  }

  static std::string targs(const Expr* e) {
    if (e->type_args.empty()) return "";
    std::string s = " [";
    for (size_t i = 0; i < e->type_args.size(); ++i) s += (i ? ", " : "") + type_str(e->type_args[i]);
    return s + "]";
  }

  std::string header(const Expr* e) const {
    switch (e->kind) {
      case Kind::Lit: return "lit " + lit_str(e->lit);
      case Kind::Local: return fmt::format("local @{}", e->slot);
      case Kind::Global: return "global " + global_name(e->id) + targs(e);
      case Kind::FnRef: return "fnref " + global_name(e->id) + targs(e);
      case Kind::Prim: return std::string("prim ") + prim_info(e->prim).name + targs(e);
      case Kind::Call: return "call";
      case Kind::Tuple: return "tuple";
      case Kind::If: return "if";
      case Kind::Let: return "let";
      case Kind::Map:
        if (e->level != ast::AtLevel::Auto) return "map at " + ast::level_text(e->level, e->subwarp_width);
        return "map";
      case Kind::SeqLit: return "seq";
      case Kind::EmptySeq: return "empty";
      case Kind::Con: return "con " + (e->data ? e->data->name : std::string("?"));
      case Kind::Time: return "time";
      case Kind::Lambda: {
        std::string s = fmt::format("lambda #{}", e->id);
        for (size_t i = 0; i < e->captures.size(); ++i) s += fmt::format("{}@{}", i ? " " : " captures ", e->captures[i]);
        return s;
      }
    }
    return "?";
  }

  void pad(int n) { out_.append(static_cast<size_t>(n), ' '); }

  const Program& prog_;
  std::string out_;
};

}  // namespace

std::string dump_expr(const Program& prog, const Expr* e) {
  Dumper d(prog);
  d.expr(e, 0);
  return d.take();
}

std::string dump_function(const Program& prog, const Function& f) {
  Dumper d(prog);
  d.out() += fmt::format("(function {}#{} : {}\n", f.name, f.global, scheme_str(f.scheme));
  d.out() += fmt::format("  param {}\n  slots {}\n", pattern_str(f.param), f.num_slots);
  if (f.body) d.expr(f.body, 2);
  else d.out() += "  <declared, no body>\n";
  d.out() += ")\n";
  return d.take();
}

}  // namespace ndp::lang::core
