// Type classes, interning and substitution.
#include "lang/types.h"

#include <cctype>

#include <fmt/format.h>

namespace ndp::lang {

const char* class_name(TypeClass c) {
  switch (c) {
    case TypeClass::Any: return "any";
    case TypeClass::Ordinal: return "ordinal";
    case TypeClass::Number: return "number";
    case TypeClass::Logical: return "logical";
  }
  return "any";
}

static bool class_contains(TypeClass outer, TypeClass inner) {
  if (outer == inner || outer == TypeClass::Any) return true;
  return outer == TypeClass::Ordinal && inner == TypeClass::Number;
}

bool meet_class(TypeClass a, TypeClass b, TypeClass* out) {
  if (class_contains(a, b)) { *out = b; return true; }
  if (class_contains(b, a)) { *out = a; return true; }
  return false;
}

bool Type::in_class(TypeClass c) const {
  switch (c) {
    case TypeClass::Any: return true;
    case TypeClass::Number:
      return kind == TypeKind::Int || kind == TypeKind::Float || kind == TypeKind::I32 || kind == TypeKind::F32;
    case TypeClass::Ordinal: return in_class(TypeClass::Number) || kind == TypeKind::Char;
    case TypeClass::Logical: return kind == TypeKind::Int || kind == TypeKind::Bool || kind == TypeKind::I32;
  }
  return false;
}

TypeContext::TypeContext() {
  int_t_ = intern(Type{TypeKind::Int});
  float_t_ = intern(Type{TypeKind::Float});
  bool_t_ = intern(Type{TypeKind::Bool});
  char_t_ = intern(Type{TypeKind::Char});
  i32_t_ = intern(Type{TypeKind::I32});
  f32_t_ = intern(Type{TypeKind::F32});
  stream_t_ = intern(Type{TypeKind::Stream});
}

TypeContext::~TypeContext() = default;

// The interning key spells out the node with its children's addresses; children are already
// interned, so equal keys mean structurally equal types.
const Type* TypeContext::intern(Type t) {
  std::string key = fmt::format("{}:{}:{}:{}:{}:{}", static_cast<int>(t.kind), static_cast<int>(t.cls), t.index,
                                static_cast<const void*>(t.a), static_cast<const void*>(t.b),
                                static_cast<const void*>(t.data));
  for (const Type* arg : t.args) key += fmt::format(",{}", static_cast<const void*>(arg));
  std::lock_guard<std::mutex> lock(mu_);
  auto it = table_.find(key);
  if (it != table_.end()) return it->second;
  owned_.push_back(std::make_unique<Type>(std::move(t)));
  const Type* p = owned_.back().get();
  table_.emplace(std::move(key), p);
  return p;
}

const Type* TypeContext::var(uint32_t index, TypeClass cls) {
  Type t{TypeKind::Var};
  t.index = index;
  t.cls = cls;
  return intern(std::move(t));
}

const Type* TypeContext::seq(const Type* elem) {
  Type t{TypeKind::Seq};
  t.a = elem;
  return intern(std::move(t));
}

const Type* TypeContext::pair(const Type* a, const Type* b) {
  Type t{TypeKind::Pair};
  t.a = a;
  t.b = b;
  return intern(std::move(t));
}

const Type* TypeContext::fn(const Type* arg, const Type* result) {
  Type t{TypeKind::Fn};
  t.a = arg;
  t.b = result;
  return intern(std::move(t));
}

const Type* TypeContext::data(const DataDef* def, std::vector<const Type*> args) {
  Type t{TypeKind::Data};
  t.data = def;
  t.args = std::move(args);
  return intern(std::move(t));
}

const Type* TypeContext::subst(const Type* t, const std::vector<const Type*>& args) {
  switch (t->kind) {
    case TypeKind::Var:
      return t->index < args.size() && args[t->index] ? args[t->index] : t;
    case TypeKind::Seq: {
      const Type* e = subst(t->a, args);
      return e == t->a ? t : seq(e);
    }
    case TypeKind::Pair:
    case TypeKind::Fn: {
      const Type* a = subst(t->a, args);
      const Type* b = subst(t->b, args);
      if (a == t->a && b == t->b) return t;
      return t->kind == TypeKind::Pair ? pair(a, b) : fn(a, b);
    }
    case TypeKind::Data: {
      if (t->args.empty()) return t;
      std::vector<const Type*> new_args;
      bool changed = false;
      for (const Type* arg : t->args) {
        new_args.push_back(subst(arg, args));
        changed |= new_args.back() != arg;
      }
      return changed ? data(t->data, std::move(new_args)) : t;
    }
    default:
      return t;
  }
}

DataDef* TypeContext::new_datadef(std::string name) {
  datadefs_.push_back(std::make_unique<DataDef>());
  DataDef* d = datadefs_.back().get();
  d->name = std::move(name);
  d->id = static_cast<uint32_t>(datadefs_.size());
  return d;
}

bool contains_vars(const Type* t) {
  switch (t->kind) {
    case TypeKind::Var: return true;
    case TypeKind::Seq: return contains_vars(t->a);
    case TypeKind::Pair:
    case TypeKind::Fn: return contains_vars(t->a) || contains_vars(t->b);
    case TypeKind::Data:
      for (const Type* a : t->args)
        if (contains_vars(a)) return true;
      return false;
    default: return false;
  }
}

namespace {

/// A recursive-descent reader of read_plain_type's syntax.
class TypeReader {
 public:
  TypeReader(lang::TypeContext& types, std::string_view text) : types_(types), text_(text) {}

  const Type* read() {
    const Type* t = type();
    skip_space();
    return pos_ == text_.size() ? t : nullptr;
  }

 private:
  const Type* type() {
    skip_space();
    if (pos_ >= text_.size()) return nullptr;
    if (text_[pos_] == '[') {
      ++pos_;
      const Type* e = type();
      return e && eat(']') ? types_.seq(e) : nullptr;
    }
    if (text_[pos_] == '(') {
      ++pos_;
      std::vector<const Type*> parts;
      do {
        const Type* p = type();
        if (!p) return nullptr;
        parts.push_back(p);
      } while (eat(','));
      if (!eat(')')) return nullptr;
      const Type* t = parts.back();
      for (size_t i = parts.size() - 1; i-- > 0;) t = types_.pair(parts[i], t);
      return t;
    }
    size_t start = pos_;
    while (pos_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    std::string_view word = text_.substr(start, pos_ - start);
    if (word == "int") return types_.int_();
    if (word == "float") return types_.float_();
    if (word == "bool") return types_.bool_();
    if (word == "char") return types_.char_();
    if (word == "i32") return types_.i32();
    if (word == "f32") return types_.f32();
    if (word == "stream") return types_.stream();
    return nullptr;
  }
  void skip_space() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  lang::TypeContext& types_;
  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

const Type* read_plain_type(TypeContext& types, std::string_view text) { return TypeReader(types, text).read(); }

}  // namespace ndp::lang
