// Inference-time types of the checker: mutable unification variables with NESL's classes,
// and their conversion to the interned lang::Type once a form is checked.
//
// Note [Inference types]
// Types under inference (IType) live in a per-form arena; a variable is bound by setting its
// link, and every binding (and every narrowing of a variable's class) is recorded on a trail
// so that a failed unification can be undone before its error is printed: the message then
// shows both types as they were before the attempt. Nothing here outlives one form; what
// leaves the checker is converted to lang::Type by TypeOut, which numbers the unresolved
// variables Var(0..n-1) in a deterministic order (preorder: argument before result).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "lang/types.h"

namespace ndp::frontend {

enum class IKind : uint8_t { Int, Float, Bool, Char, I32, F32, Stream, Var, Seq, Pair, Fn, Data, Error };

struct IType {
  IKind kind = IKind::Error;
  lang::TypeClass cls = lang::TypeClass::Any;  // Var
  IType* link = nullptr;                       // Var: bound to this type
  IType* a = nullptr;                          // Seq elem, Pair first, Fn argument
  IType* b = nullptr;                          // Pair second, Fn result
  const lang::DataDef* data = nullptr;         // Data
  std::vector<IType*> args;                    // Data parameters
};

class Unifier {
 public:
  Unifier();
  Unifier(const Unifier&) = delete;
  Unifier& operator=(const Unifier&) = delete;

  IType* fresh(lang::TypeClass cls = lang::TypeClass::Any);
  IType* base(lang::TypeKind k);  // a scalar kind (Int .. Stream)
  IType* error() { return error_; }
  IType* seq(IType* elem);
  IType* pair(IType* a, IType* b);
  IType* fn(IType* arg, IType* result);
  IType* data(const lang::DataDef* def, std::vector<IType*> args);

  /// The representative of `t` (follows variable links).
  IType* find(IType* t) const;
  bool unify(IType* a, IType* b);
  /// Restricts `t` to class `cls`: narrows a variable in place, checks a concrete type.
  bool constrain(IType* t, lang::TypeClass cls);

  size_t mark() const { return trail_.size(); }
  void rollback(size_t mark);

  /// Fresh variables for a scheme's classes, and a closed/scheme Type over them.
  std::vector<IType*> fresh_vars(const std::vector<lang::TypeClass>& classes);
  IType* from_type(const lang::Type* t, const std::vector<IType*>& vars);

 private:
  struct TrailEntry {
    IType* var;
    IType* old_link;
    lang::TypeClass old_cls;
  };
  IType* node(IKind k);
  bool bind(IType* v, IType* t);
  bool occurs(IType* v, IType* t) const;
  void set_cls(IType* v, lang::TypeClass c);

  std::deque<IType> nodes_;
  std::vector<TrailEntry> trail_;
  IType* bases_[7];
  IType* error_;
};

/// Converts ITypes to interned Types. Variables get indices in the order `number` meets them;
/// a variable never numbered is defaulted to int by `get` when `default_unnumbered` is set
/// (it occurs only inside a body, never in the type of what the form defines, so any type
/// would do; int is in every class).
class TypeOut {
 public:
  TypeOut(Unifier& u, lang::TypeContext& tc, bool default_unnumbered)
      : u_(u), tc_(tc), default_(default_unnumbered) {}

  /// Numbers the unresolved variables of `t` in preorder.
  void number(IType* t);
  /// Gives variable `v` (a representative) the next index.
  void number_var(IType* v);
  const lang::Type* get(IType* t);
  /// Classes of Var(0..n-1), read at call time (classes may have narrowed since numbering).
  std::vector<lang::TypeClass> classes() const;
  size_t count() const { return vars_.size(); }

 private:
  Unifier& u_;
  lang::TypeContext& tc_;
  bool default_;
  std::vector<IType*> vars_;
  std::unordered_map<const IType*, uint32_t> index_;  // lookup only, never iterated
};

/// The type printed for a message: its own variable numbering, `T :: (a in C; ...)`.
std::string itype_to_string(Unifier& u, lang::TypeContext& tc, IType* t);

/// Renumbers a scheme's variables in preorder so that equal types compare equal.
lang::TypeScheme canonical_scheme(lang::TypeContext& tc, const lang::TypeScheme& s);
bool same_scheme(lang::TypeContext& tc, const lang::TypeScheme& a, const lang::TypeScheme& b);

}  // namespace ndp::frontend
