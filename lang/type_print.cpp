// Printing of types (language.md §3.9) and the line model of answers (§5.5).
#include "lang/types.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace ndp::lang {

// ---- §5.5 line lists ----

namespace {

constexpr size_t kMaxColumns = 120;

void append_indented(Lines& out, Lines::const_iterator from, Lines::const_iterator to, int by) {
  for (auto it = from; it != to; ++it) out.push_back(PrintLine{it->indent + by, it->text});
}

}  // namespace

Lines join_lines(const Lines& a, const Lines& b) {
  // join is total here although §5.5 only defines it on non-empty lists: an empty side is the
  // identity, so callers may build parts conditionally.
  if (a.empty()) return b;
  if (b.empty()) return a;
  // §5.5 recurses down A's lines; only A's last line ever meets B.
  Lines out(a.begin(), a.end() - 1);
  const PrintLine& last = a.back();
  const size_t width = static_cast<size_t>(last.indent) + last.text.size();
  if (width + b.front().text.size() > kMaxColumns) {
    out.push_back(last);
    append_indented(out, b.begin(), b.end(), last.indent);
    return out;
  }
  out.push_back(PrintLine{last.indent, last.text + b.front().text});
  append_indented(out, b.begin() + 1, b.end(), static_cast<int>(width));
  return out;
}

Lines lines_of(std::string s) { return Lines{PrintLine{0, std::move(s)}}; }

Lines join_all(const std::vector<Lines>& parts) {
  // Right to left: join is not associative, and CMU's layout is the right-nested one.
  Lines acc;
  for (size_t i = parts.size(); i-- > 0;) acc = join_lines(parts[i], acc);
  return acc;
}

std::string render_lines(const Lines& lines) {
  std::string out;
  for (const PrintLine& l : lines) {
    out.append(static_cast<size_t>(std::max(l.indent, 0)), ' ');
    out += l.text;
    out += '\n';
  }
  return out;
}

// ---- §3.9 type printing ----

namespace {

// The leaves in CMU's order: a function type lists its result before its argument, which is
// why `m = fn : (b, a, b) -> (b, a)` names the result's first variable `a`.
//
// A function type inside the argument of the printed function type (a functional parameter,
// as in `map` or `scan`) also has one hidden leaf of its own, before its result: CMU gives such
// a parameter an extra type variable that is named and listed in the context but never shown
// in the type. That is why CMU prints `ap = fn : (c -> b, c) -> b :: (a in any; b in any;
// c in any)` and library.md writes `map : (c -> b, [c]) -> [b]`.
constexpr uint32_t kHiddenBase = 1u << 30;  // indices of hidden leaves, never real variables

void collect_leaves(const Type* t, std::vector<uint32_t>& out, bool in_argument, uint32_t& hidden) {
  switch (t->kind) {
    case TypeKind::Var: out.push_back(t->index); return;
    case TypeKind::Seq: collect_leaves(t->a, out, in_argument, hidden); return;
    case TypeKind::Pair:
      collect_leaves(t->a, out, in_argument, hidden);
      collect_leaves(t->b, out, in_argument, hidden);
      return;
    case TypeKind::Fn:
      if (in_argument) out.push_back(kHiddenBase + hidden++);
      collect_leaves(t->b, out, in_argument, hidden);
      collect_leaves(t->a, out, true, hidden);
      return;
    case TypeKind::Data:
      for (const Type* arg : t->args) collect_leaves(arg, out, in_argument, hidden);
      return;
    default: return;
  }
}

void collect_classes(const Type* t, std::map<uint32_t, TypeClass>& out) {
  switch (t->kind) {
    case TypeKind::Var: out[t->index] = t->cls; return;
    case TypeKind::Seq: collect_classes(t->a, out); return;
    case TypeKind::Pair:
    case TypeKind::Fn:
      collect_classes(t->a, out);
      collect_classes(t->b, out);
      return;
    case TypeKind::Data:
      for (const Type* arg : t->args) collect_classes(arg, out);
      return;
    default: return;
  }
}

// Names of the variables that occur in one printed type, and their context in name order.
class VarNames {
 public:
  VarNames(const Type* t, const std::vector<TypeClass>& var_classes) {
    std::vector<uint32_t> leaves;
    uint32_t hidden = 0;
    collect_leaves(t, leaves, false, hidden);
    std::map<uint32_t, TypeClass> leaf_class;
    collect_classes(t, leaf_class);
    // Keep each variable's last occurrence; the order of those positions is the name order.
    std::map<uint32_t, size_t> last;
    for (size_t i = 0; i < leaves.size(); ++i) last[leaves[i]] = i;
    std::vector<uint32_t> order;
    for (size_t i = 0; i < leaves.size(); ++i)
      if (last[leaves[i]] == i) order.push_back(leaves[i]);
    const bool short_names = order.size() <= 5;
    for (size_t k = 0; k < order.size(); ++k) {
      std::string name = short_names ? std::string(1, static_cast<char>('a' + k)) : "a" + std::to_string(k);
      uint32_t index = order[k];
      TypeClass cls = index >= kHiddenBase      ? TypeClass::Any
                      : index < var_classes.size() ? var_classes[index]
                                                   : leaf_class[index];
      names_[index] = name;
      binds_.push_back(name + " in " + class_name(cls));
    }
  }

  const std::string& name(uint32_t index) const { return names_.at(index); }
  const std::vector<std::string>& binds() const { return binds_; }

 private:
  std::map<uint32_t, std::string> names_;
  std::vector<std::string> binds_;  // "a in number", in name order
};

Lines wrap_lines(bool parens, Lines x) {
  if (!parens) return x;
  return join_all({lines_of("("), std::move(x), lines_of(")")});
}

// §5.5's TYPE(t, p). Every sub-result is a finished line list before it is joined, exactly as
// the spec nests it, because join is not associative.
Lines type_doc(const Type* t, int p, const VarNames& names);

// R(P, rest...) = J(", ", TYPE(P, 1), R(rest...)); R() = "".
Lines data_rest(const std::vector<const Type*>& params, size_t from, const VarNames& names) {
  if (from == params.size()) return lines_of("");
  return join_all({lines_of(", "), type_doc(params[from], 1, names), data_rest(params, from + 1, names)});
}

Lines type_doc(const Type* t, int p, const VarNames& names) {
  switch (t->kind) {
    case TypeKind::Var: return lines_of(names.name(t->index));
    case TypeKind::Seq: return join_all({lines_of("["), type_doc(t->a, 1, names), lines_of("]")});
    case TypeKind::Pair:
      return wrap_lines(p > 0, join_all({type_doc(t->a, 1, names), lines_of(", "), type_doc(t->b, 0, names)}));
    case TypeKind::Fn:
      return wrap_lines(p > 2, join_all({type_doc(t->a, 3, names), lines_of(" -> "), type_doc(t->b, 2, names)}));
    case TypeKind::Data:
      if (t->args.empty()) return lines_of(t->data->name);
      return join_all({lines_of(t->data->name), lines_of("("), type_doc(t->args[0], 1, names),
                       data_rest(t->args, 1, names), lines_of(")")});
    default: return lines_of(base_type_name(t->kind));
  }
}

// The same layout with no line breaks, for error messages and `:type`.
std::string type_text(const Type* t, int p, const VarNames& names) {
  auto wrap = [](bool parens, std::string s) { return parens ? "(" + s + ")" : s; };
  switch (t->kind) {
    case TypeKind::Var: return names.name(t->index);
    case TypeKind::Seq: return "[" + type_text(t->a, 1, names) + "]";
    case TypeKind::Pair: return wrap(p > 0, type_text(t->a, 1, names) + ", " + type_text(t->b, 0, names));
    case TypeKind::Fn: return wrap(p > 2, type_text(t->a, 3, names) + " -> " + type_text(t->b, 2, names));
    case TypeKind::Data: {
      if (t->args.empty()) return t->data->name;
      std::string s = t->data->name + "(";
      for (size_t i = 0; i < t->args.size(); ++i) {
        if (i > 0) s += ", ";
        s += type_text(t->args[i], 1, names);
      }
      return s + ")";
    }
    default: return base_type_name(t->kind);
  }
}

}  // namespace

Lines type_lines(const Type* t, const std::vector<TypeClass>& var_classes) {
  VarNames names(t, var_classes);
  Lines type = type_doc(t, 0, names);
  if (names.binds().empty()) return join_all({std::move(type), lines_of("")});
  std::vector<Lines> bind_parts;
  for (const std::string& b : names.binds()) {
    if (!bind_parts.empty()) bind_parts.push_back(lines_of("; "));
    bind_parts.push_back(lines_of(b));
  }
  return join_all({std::move(type), lines_of(" :: "), lines_of("("), join_all(bind_parts), lines_of(")")});
}

std::string type_to_string(const Type* t, const std::vector<TypeClass>& var_classes) {
  VarNames names(t, var_classes);
  std::string s = type_text(t, 0, names);
  if (names.binds().empty()) return s;
  s += " :: (";
  for (size_t i = 0; i < names.binds().size(); ++i) {
    if (i > 0) s += "; ";
    s += names.binds()[i];
  }
  return s + ")";
}

std::string type_to_string(const TypeScheme& s) { return type_to_string(s.type, s.vars); }

const char* base_type_name(TypeKind k) {
  switch (k) {
    case TypeKind::Int: return "int";
    case TypeKind::Float: return "float";
    case TypeKind::Bool: return "bool";
    case TypeKind::Char: return "char";
    case TypeKind::I32: return "i32";
    case TypeKind::F32: return "f32";
    case TypeKind::Stream: return "stream";
    default: return "?";
  }
}

}  // namespace ndp::lang
