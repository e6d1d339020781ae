// Core IR: the typed, desugared program that the interpreter runs and the flattener consumes.
//
// Note [Core IR semantics]
// * Every node has a type. Inside a polymorphic function, types mention Var(i) of that
//   function's scheme; the interpreter substitutes its frame's type arguments when it needs a
//   concrete type (the identity of a reduction over an empty sequence, printing).
// * Evaluation is strict and left to right: every argument of a Prim or Call, every Tuple
//   component and every Let right-hand side is evaluated before use. Only If is lazy.
// * Map is apply-to-each: generators are evaluated left to right and must have equal lengths
//   (`Length mismatch in an apply-to-each.`); for each element the filter (if any) is evaluated
//   first and the body only where it holds (ndp rule, language.md §4.4).
// * Locals live in numbered slots of their function's frame (patterns bind slots). Names are
//   resolved: a slot is "the same variable" everywhere in its function.
// * Operators and library primitives are Prim nodes with exactly the primitive's arity of
//   arguments (a call that passes one tuple-valued argument is desugared through a Let).
// * Lambda (Note [Lambdas]) is an anonymous function `(a, b) => a + b`. Its parameter and body
//   use slots of the enclosing frame; `captures` lists the slots the body reads that are bound
//   outside it. Its value is a closure: the captured values, the frame's type arguments and the
//   node (id numbers the lambdas of a Program, for equality and hashing). A call makes a frame
//   of the enclosing size, puts the captured values back in their slots and binds the
//   parameter. Lambdas are monomorphic, like every let-bound value (language.md §3.8).
// * Integer arithmetic wraps; integer division by zero is a runtime error; float arithmetic is
//   IEEE (extensions.md §1, §4).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lang/ast.h"
#include "lang/source.h"
#include "lang/types.h"
#include "lang/value.h"

namespace ndp::lang::core {

enum class PrimId : uint16_t {
#define NDP_PRIM(id, name, type, arity, family, op, identity, effect) id,
#include "lang/prims.def"
#undef NDP_PRIM
  Count_
};

// Note [Primitive table]
// lang/prims.def classifies every primitive once; no other file lists primitives by kind.
// * The family says which group of code implements it: the interpreter's apply_prim picks its
//   scalar, sequence or I/O group by it, the cpu backend's lifted primitives run Elementwise
//   ones on scalar buffers, and every layer sends Scan, Reduce and Combine to one generic
//   routine that takes the operator.
// * The operator (scans, reductions, *_combine) is what the routine folds with. Each runtime
//   layer maps it to its own enum in one function (exec/host's scan_op to runtime::Op, which
//   shares ndp_op's values), since lang does not include runtime.
// * The identity (scans and reductions) is the value the fold starts from, so an empty
//   reduction's result and a scan's first element; *_combine folds onto its destination and
//   has none. It follows from the operator; the column states it so that the interpreter
//   reads it rather than deriving it again.
// * The effect tells passes what they may not do: Ordered primitives may not be reordered,
//   merged or removed, and a Raises primitive (runtime_error) exists for its error, so it is
//   never shared as a value.

/// Which group of code implements a primitive (Note [Primitive table]).
enum class PrimFamily : uint8_t {
  Elementwise,  // a stateless function of scalars, instance by instance (arithmetic, comparisons,
                // conversions, select)
  Random,       // rand, rand_seed: scalars that read and advance the random state
  Sequence,     // every other primitive on sequences and whole values (generators, element
                // access, reordering, packing, nesting, ordering, strings)
  Scan,         // exclusive scan with an operator (plus_scan ...)
  Reduce,       // reduction with an operator (sum ...)
  Combine,      // irregular reduction by index with an operator (plus_combine ...)
  Io,           // printing, errors, streams, files, processes
};

/// The associative operator of a scan, reduction or combine (library.md §5).
enum class PrimOperator : uint8_t { None, Plus, Mult, Max, Min, And, Or, Xor };

/// The identity of a fold's operator, for each element type: Zero (0, 0.0, F), One (1, 1.0),
/// AllOnes (-1, T), Lowest (the least int, -inf, code 0), Highest (the greatest int, inf,
/// code 255).
enum class PrimIdentity : uint8_t { None, Zero, One, AllOnes, Lowest, Highest };

/// What a primitive does besides computing its value (Note [Primitive table]).
enum class PrimEffect : uint8_t {
  Pure,     // nothing (it may still fail, the same way each time)
  Raises,   // always raises its argument as a runtime error (runtime_error)
  Ordered,  // its order of evaluation is observable: random numbers (the per-site draw
            // counts, rand_seed) and every kind of I/O
};

struct PrimInfo {
  const char* name;  // NESL name (operators spelled as in source: "+", "==", "->")
  const char* type;  // NESL signature, e.g. "[a] -> [a] :: (a in number)"
  int arity;         // number of tuple components the argument is spread into
  PrimFamily family;
  PrimOperator op;
  PrimIdentity identity;
  PrimEffect effect;
};
const PrimInfo& prim_info(PrimId id);

inline PrimFamily prim_family(PrimId id) { return prim_info(id).family; }
inline PrimOperator prim_operator(PrimId id) { return prim_info(id).op; }
inline PrimIdentity prim_identity(PrimId id) { return prim_info(id).identity; }
inline PrimEffect prim_effect(PrimId id) { return prim_info(id).effect; }
inline bool is_elementwise(PrimId id) { return prim_family(id) == PrimFamily::Elementwise; }
inline bool is_scan(PrimId id) { return prim_family(id) == PrimFamily::Scan; }
inline bool is_reduction(PrimId id) { return prim_family(id) == PrimFamily::Reduce; }
inline bool is_combine(PrimId id) { return prim_family(id) == PrimFamily::Combine; }
/// prim_max_index / prim_min_index: the least index holding the extreme that this reduction
/// (max_val / min_val) gives; anything else: nullopt.
inline std::optional<PrimId> index_of_extreme(PrimId id) {
  if (id == PrimId::MaxIndexPrim) return PrimId::MaxVal;
  if (id == PrimId::MinIndexPrim) return PrimId::MinVal;
  return std::nullopt;
}
/// True for primitives whose order of evaluation is observable (PrimEffect::Ordered). Passes
/// may not reorder or merge them.
inline bool prim_has_effect(PrimId id) { return prim_effect(id) == PrimEffect::Ordered; }

enum class PatternKind : uint8_t { Var, Tuple, Con };

struct Pattern {
  PatternKind kind;
  const Type* type = nullptr;
  Span span;
  uint32_t slot = 0;               // Var
  std::string name;                // Var: source name (for dumps)
  const Pattern* left = nullptr;   // Tuple first / Con argument
  const Pattern* right = nullptr;  // Tuple second
  const DataDef* data = nullptr;   // Con
};

enum class Kind : uint8_t {
  Lit,     // lit
  Local,   // slot
  Global,  // id = global variable id (its value); type_args instantiate its scheme
  FnRef,   // id = global id of a function/primitive/constructor used as a value; type_args
  Prim,    // prim, args (exactly arity), type_args instantiate the primitive's scheme
  Call,    // args[0] callee (FnRef for direct calls), args[1] argument
  Tuple,   // args[0], args[1]
  If,      // args[0] cond, args[1] then, args[2] else
  Let,     // pattern = args[0] in args[1]
  Map,     // gens[i] in args[i] for i < gens.size(); then body, then filter if has_filter
  SeqLit,  // args: elements (at least one)
  EmptySeq,// [] of type->a
  Con,     // data constructor applied to args[0]
  Time,    // time(args[0]) -> (value, seconds)
  Lambda,  // pattern => args[0]: an anonymous function over its enclosing frame (Note [Lambdas])
};

struct Expr {
  Kind kind;
  const Type* type = nullptr;
  Span span;
  Value lit;
  uint32_t slot = 0;
  uint32_t id = 0;
  PrimId prim = PrimId::Count_;
  const DataDef* data = nullptr;
  std::vector<const Type*> type_args;
  std::vector<const Expr*> args;
  const Pattern* pattern = nullptr;       // Let
  std::vector<const Pattern*> gens;       // Map
  bool has_filter = false;                // Map
  ast::AtLevel level = ast::AtLevel::Auto;  // Map
  int subwarp_width = 0;
  std::vector<uint32_t> captures;         // Lambda: the enclosing frame's slots its body reads
  std::vector<std::string> capture_names; // Lambda: their source names (for messages)
};

/// A top-level function: one parameter pattern and a body over its frame's slots.
struct Function {
  std::string name;
  uint32_t global = 0;
  TypeScheme scheme;               // Fn(arg, result) over Var(0..n-1)
  const Pattern* param = nullptr;
  const Expr* body = nullptr;      // nullptr while only declared
  uint32_t num_slots = 0;
  std::string doc;
  Span span;
};

/// Every global name binding of a session. Ids are indices into Program::globals and never
/// change; redefinition with a new type makes a new Global (language.md §4.2).
struct Global {
  enum class Kind : uint8_t { Variable, Function, Prim, Constructor } kind;
  std::string name;
  TypeScheme scheme;
  bool library = false;        // defined by stdlib/ (user code may shadow, never overwrite)
  PrimId prim = PrimId::Count_;  // Prim
  const DataDef* data = nullptr; // Constructor
  Function fn;                   // Function
  bool has_value = false;        // Variable: its form has run

  /// Variable: the value (has_value), made from `vector` the first time something needs it.
  const Value& variable_value() const {
    if (make_value) {
      value = make_value();
      make_value = nullptr;
    }
    return value;
  }
  /// Variable: its value as an interpreter Value.
  void set_value(Value v) {
    value = std::move(v);
    has_value = true;
    vector = nullptr;
    device_vector = nullptr;
    make_value = nullptr;
  }
  /// Variable: its value as a flat backend's vector (and its copy on the GPU, if made there),
  /// made into a Value only where one is needed (Note [Globals kept as vectors] in
  /// driver/session.cpp).
  void set_vector(std::shared_ptr<const void> v, std::shared_ptr<const void> device, std::function<Value()> make) {
    value = {};
    has_value = true;
    vector = std::move(v);
    device_vector = std::move(device);
    make_value = std::move(make);
  }
  /// Variable: its value where it is a function value, else null. A value kept as a vector
  /// holds no functions, and is not made into a Value to find that out.
  const Value* function_value() const {
    if (!has_value || vector) return nullptr;
    const Value& v = variable_value();
    return v.kind() == ValueKind::Fn ? &v : nullptr;
  }
  /// Variable: no value (its form has not run, or the embedding API's call is over).
  void clear_value() {
    set_value({});
    has_value = false;
  }

  std::shared_ptr<const void> vector;                // an exec::host::Vec of one instance, or null
  mutable std::shared_ptr<const void> device_vector;  // its copy on the GPU (exec::cuda::DVec), once made

 private:
  mutable Value value;
  mutable std::function<Value()> make_value;
};

/// The growing program of a session (library + user forms).
struct Program {
  TypeContext types;
  std::vector<std::unique_ptr<Global>> globals;
  std::deque<std::unique_ptr<Expr>> exprs;        // arena for Core nodes
  std::deque<std::unique_ptr<Pattern>> patterns;
  uint32_t lambda_count = 0;  // Lambda ids handed out so far

  Expr* new_expr(Kind k, const Type* t, Span s) {
    exprs.push_back(std::make_unique<Expr>());
    Expr* e = exprs.back().get();
    e->kind = k;
    e->type = t;
    e->span = s;
    return e;
  }
  Pattern* new_pattern(PatternKind k, const Type* t, Span s) {
    patterns.push_back(std::make_unique<Pattern>());
    Pattern* p = patterns.back().get();
    p->kind = k;
    p->type = t;
    p->span = s;
    return p;
  }
  Global* new_global(Global::Kind k, std::string name) {
    globals.push_back(std::make_unique<Global>());
    Global* g = globals.back().get();
    g->kind = k;
    g->name = std::move(name);
    return g;
  }
};

/// A compiled top-level expression or assignment: a body over its own frame.
struct TopExpr {
  const Expr* body = nullptr;
  uint32_t num_slots = 0;
};

/// Prints Core IR for `--dump=core` / `:dump core`.
std::string dump_expr(const Program& prog, const Expr* e);
std::string dump_function(const Program& prog, const Function& f);

}  // namespace ndp::lang::core
