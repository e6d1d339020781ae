// The reference interpreter: a direct recursive evaluator of Core IR (lang/core.h).
//
// Note [Interpreter frames and types]
// Every function call gets a Frame: its `num_slots` locals and the closed types that
// instantiate the function's scheme. A Prim node's type arguments may mention the current
// function's Var(i); they are closed against the frame only when a primitive needs a concrete
// type (an empty reduction, read_object), so monomorphic code never substitutes. A FnRef's
// type arguments are closed at the reference: a function value carries closed types, and a
// direct call passes them to the callee's frame.
//
// Note [Recursion depth]
// Evaluation runs on a DeepStack thread (2 GiB of reserved address space; about 1 KiB per
// level of simple recursion, so the default max_call_depth of 1 000 000 fits). Each NESL call
// checks both `max_call_depth` and the real stack position, so exhausting either is the clean
// runtime error "Recursion too deep." rather than a crash. The evaluator keeps its C++ frames
// small (the bulky cases live in non-inlined helpers) so 100 000-deep non-tail recursion uses
// well under the reservation.
#include "lang/eval/interp.h"

#include <cctype>
#include <chrono>
#include <new>
#include <stdexcept>

#include "lang/diagnostics.h"
#include "lang/eval/deep_stack.h"
#include "lang/eval/prim_call.h"
#include "lang/eval/rand.h"
#include "lang/eval/streams.h"
#include "lang/runtime_errors.h"

namespace ndp::lang::eval {

namespace {

constexpr size_t kStackReserve = size_t{2} << 30;
const std::vector<const Type*> kNoTypes;

struct Frame {
  std::vector<Value> slots;
  const std::vector<const Type*>* targs;
};

std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

struct Interpreter::Impl {
  core::Program& prog;
  InterpOptions opts;
  uint32_t last_library_file = 0;
  bool in_library(Span s) const { return s.valid() && s.file <= last_library_file; }
  StreamTable streams;
  RandState rand;
  PrimEnv env;
  DeepStack stack{kStackReserve};
  uint64_t depth = 0;
  Value empty_seq = Value::seq({});

  Impl(core::Program& p, InterpOptions o) : prog(p), opts(o), streams(o.out) {
    env.types = &prog.types;
    env.out = opts.out;
    env.streams = &streams;
    env.rand = &rand;
  }

  [[noreturn]] static void fail(Span span, std::string msg) { throw EvalError{std::move(msg), span}; }

  Value eval(const core::Expr* e, Frame& f);
  Value eval_prim(const core::Expr* e, Frame& f);
  Value apply_located(const PrimCall& call, const Value* args);
  Value eval_call(const core::Expr* e, Frame& f);
  Value eval_map(const core::Expr* e, Frame& f);
  Value eval_seq_lit(const core::Expr* e, Frame& f);
  Value eval_time(const core::Expr* e, Frame& f);
  Value eval_global(const core::Expr* e, Frame& f);
  Value make_fn_value(uint32_t global, const std::vector<const Type*>& targs);
  Value call_value(const Value& fn, const Value& arg, Span span);
  Value make_lambda(const core::Expr* e, const Frame& f);
  Value call_lambda(const FnObj& fn, const Value& arg, Span span);
  Value call_function(const core::Function& fn, const std::vector<const Type*>* targs, const Value& arg,
                      Span span);
  Value call_prim(core::PrimId id, const std::vector<const Type*>* targs, const Value& arg, Span span);
  const std::vector<const Type*>* close_types(const std::vector<const Type*>& ts, const Frame& f,
                                              std::vector<const Type*>* storage);
  void bind(const core::Pattern* p, const Value& v, Frame& f);

  RunResult guarded(const std::function<Value(std::vector<Value>*)>& body);
};

void Interpreter::Impl::bind(const core::Pattern* p, const Value& v, Frame& f) {
  switch (p->kind) {
    case core::PatternKind::Var: f.slots[p->slot] = v; return;
    case core::PatternKind::Tuple:
      bind(p->left, v.first(), f);
      bind(p->right, v.second(), f);
      return;
    case core::PatternKind::Con:
      NDP_ASSERT(v.data().def == p->data, "constructor pattern applied to another datatype");
      bind(p->left, v.data().fields, f);
      return;
  }
}

Value Interpreter::Impl::eval(const core::Expr* e, Frame& f) {
  switch (e->kind) {
    case core::Kind::Lit: return e->lit;
    case core::Kind::Local: return f.slots[e->slot];
    case core::Kind::Global: return eval_global(e, f);
    case core::Kind::FnRef: return eval_global(e, f);
    case core::Kind::Prim: return eval_prim(e, f);
    case core::Kind::Call: return eval_call(e, f);
    case core::Kind::Tuple: {
      Value a = eval(e->args[0], f);
      return Value::pair(std::move(a), eval(e->args[1], f));
    }
    case core::Kind::If: return eval(eval(e->args[0], f).as_bool() ? e->args[1] : e->args[2], f);
    case core::Kind::Let:
      bind(e->pattern, eval(e->args[0], f), f);
      return eval(e->args[1], f);
    case core::Kind::Map:
      try {
        return eval_map(e, f);
      } catch (std::bad_alloc&) {  // the results of an apply-to-each outgrew memory
        fail(e->span, message(RuntimeErrorId::OutOfMemory));
      }
    case core::Kind::SeqLit: return eval_seq_lit(e, f);
    case core::Kind::EmptySeq: return empty_seq;
    case core::Kind::Con: return Value::data(e->data, eval(e->args[0], f));
    case core::Kind::Time: return eval_time(e, f);
    case core::Kind::Lambda: return make_lambda(e, f);
  }
  throw InternalError("internal error: eval: unknown Core node kind");
}

// Global reads a variable (late binding: its current value); FnRef, or a Global naming a
// function, makes a function value.
[[gnu::noinline]] Value Interpreter::Impl::eval_global(const core::Expr* e, Frame& f) {
  NDP_ASSERT(e->id < prog.globals.size(), "Global node with a bad id");
  const core::Global& g = *prog.globals[e->id];
  if (e->kind == core::Kind::FnRef || g.kind != core::Global::Kind::Variable) {
    std::vector<const Type*> storage;
    return make_fn_value(e->id, *close_types(e->type_args, f, &storage));
  }
  if (!g.has_value) fail(e->span, message(RuntimeErrorId::Undefined, upper(g.name)));
  return g.variable_value();
}

[[gnu::noinline]] Value Interpreter::Impl::eval_prim(const core::Expr* e, Frame& f) {
  Value args[4];
  size_t n = e->args.size();
  NDP_ASSERT(n <= 4 && static_cast<int>(n) == core::prim_info(e->prim).arity, "Prim node with a wrong arity");
  for (size_t i = 0; i < n; ++i) args[i] = eval(e->args[i], f);
  PrimCall call{e->prim, e->span, &e->type_args, f.targs, &env};
  return apply_located(call, args);
}

// Out of memory in a primitive is raised at its call: the place that asked for the memory.
Value Interpreter::Impl::apply_located(const PrimCall& call, const Value* args) {
  try {
    return apply_prim(call, args);
  } catch (std::bad_alloc&) {
    fail(call.span, message(RuntimeErrorId::OutOfMemory));
  } catch (std::length_error&) {
    fail(call.span, message(RuntimeErrorId::OutOfMemory));
  }
}

const std::vector<const Type*>* Interpreter::Impl::close_types(const std::vector<const Type*>& ts, const Frame& f,
                                                               std::vector<const Type*>* storage) {
  if (ts.empty() || f.targs->empty()) return &ts;
  bool open = false;
  for (const Type* t : ts) open = open || contains_vars(t);
  if (!open) return &ts;
  storage->clear();
  for (const Type* t : ts) storage->push_back(prog.types.subst(t, *f.targs));
  return storage;
}

Value Interpreter::Impl::make_fn_value(uint32_t global, const std::vector<const Type*>& targs) {
  NDP_ASSERT(global < prog.globals.size(), "FnRef with a bad global id");
  const core::Global& g = *prog.globals[global];
  auto obj = std::make_shared<FnObj>();
  obj->type_args = targs;
  switch (g.kind) {
    case core::Global::Kind::Function:
      obj->target = FnObj::Target::Global;
      obj->id = global;
      break;
    case core::Global::Kind::Prim:
      obj->target = FnObj::Target::Prim;
      obj->id = static_cast<uint32_t>(g.prim);
      break;
    case core::Global::Kind::Constructor:
      obj->target = FnObj::Target::Constructor;
      obj->id = g.data->id;
      obj->data = g.data;
      break;
    case core::Global::Kind::Variable:
      throw InternalError("internal error: FnRef to a variable");
  }
  return Value::fn(std::move(obj));
}

[[gnu::noinline]] Value Interpreter::Impl::eval_call(const core::Expr* e, Frame& f) {
  const core::Expr* callee = e->args[0];
  if (callee->kind == core::Kind::FnRef) {
    // A direct call: no function value is built.
    NDP_ASSERT(callee->id < prog.globals.size(), "call of a bad global id");
    const core::Global& g = *prog.globals[callee->id];
    Value arg = eval(e->args[1], f);
    std::vector<const Type*> storage;
    const std::vector<const Type*>* targs = close_types(callee->type_args, f, &storage);
    switch (g.kind) {
      case core::Global::Kind::Function: return call_function(g.fn, targs, arg, e->span);
      case core::Global::Kind::Prim: return call_prim(g.prim, targs, arg, e->span);
      case core::Global::Kind::Constructor: return Value::data(g.data, arg);
      case core::Global::Kind::Variable: break;
    }
    throw InternalError("internal error: call of a variable through FnRef");
  }
  Value fn = eval(callee, f);
  Value arg = eval(e->args[1], f);
  return call_value(fn, arg, e->span);
}

Value Interpreter::Impl::call_value(const Value& fnv, const Value& arg, Span span) {
  const FnObj& fn = fnv.fn();
  switch (fn.target) {
    case FnObj::Target::Global:
      NDP_ASSERT(fn.id < prog.globals.size(), "function value with a bad global id");
      return call_function(prog.globals[fn.id]->fn, &fn.type_args, arg, span);
    case FnObj::Target::Prim: return call_prim(static_cast<core::PrimId>(fn.id), &fn.type_args, arg, span);
    case FnObj::Target::Constructor: return Value::data(fn.data, arg);
    case FnObj::Target::Lambda: return call_lambda(fn, arg, span);
  }
  throw InternalError("internal error: bad function value");
}

Value Interpreter::Impl::call_prim(core::PrimId id, const std::vector<const Type*>* targs, const Value& arg,
                                   Span span) {
  // A primitive used as a value takes its arguments as one tuple: spread it.
  int arity = core::prim_info(id).arity;
  NDP_ASSERT(arity >= 1 && arity <= 4, "primitive arity out of range");
  Value args[4];
  Value rest = arg;
  for (int i = 0; i + 1 < arity; ++i) {
    args[i] = rest.first();
    Value next = rest.second();
    rest = std::move(next);
  }
  args[arity - 1] = rest;
  PrimCall call{id, span, targs, nullptr, &env};
  return apply_located(call, args);
}

std::atomic<bool>& interrupt_requested() { return interrupt_flag(); }

static void poll_interrupt(Span span) {
  if (interrupt_pending() && take_interrupt()) throw EvalError{message(RuntimeErrorId::Interrupted), span};
}

/// One more level of NESL calls for as long as it lives (Note [Recursion depth]): an interrupt
/// or too deep a recursion is the runtime error at `span`.
struct CallLevel {
  uint64_t& depth;
  CallLevel(uint64_t& d, uint64_t max_depth, Span span) : depth(d) {
    poll_interrupt(span);
    if (depth >= max_depth || DeepStack::nearly_full()) throw EvalError{message(RuntimeErrorId::RecursionTooDeep), span};
    ++depth;
  }
  ~CallLevel() { --depth; }
  CallLevel(const CallLevel&) = delete;
  CallLevel& operator=(const CallLevel&) = delete;
};

[[gnu::noinline]] Value Interpreter::Impl::call_function(const core::Function& fn,
                                                         const std::vector<const Type*>* targs, const Value& arg,
                                                         Span span) {
  if (!fn.body) fail(span, message(RuntimeErrorId::NoBody, upper(fn.name)));
  CallLevel level(depth, opts.max_call_depth, span);
  Frame frame{std::vector<Value>(fn.num_slots), targs};
  bind(fn.param, arg, frame);
  if (!prog.globals[fn.global]->library || in_library(span) || !span.valid()) return eval(fn.body, frame);
  // A user call of a library function: errors raised inside it point here instead.
  try {
    return eval(fn.body, frame);
  } catch (EvalError& err) {
    if (!err.span.valid() || in_library(err.span)) err.span = span;
    throw;
  }
}

[[gnu::noinline]] Value Interpreter::Impl::make_lambda(const core::Expr* e, const Frame& f) {
  auto obj = std::make_shared<FnObj>();
  obj->target = FnObj::Target::Lambda;
  obj->id = e->id;
  obj->lambda = e;
  obj->type_args = *f.targs;
  obj->frame_slots = static_cast<uint32_t>(f.slots.size());
  obj->env.reserve(e->captures.size());
  for (uint32_t s : e->captures) obj->env.push_back(f.slots[s]);
  return Value::fn(std::move(obj));
}

// Note [Lambdas] in lang/core.h: a frame of the enclosing size with the captured values back in
// their slots.
[[gnu::noinline]] Value Interpreter::Impl::call_lambda(const FnObj& fn, const Value& arg, Span span) {
  CallLevel level(depth, opts.max_call_depth, span);
  Frame frame{std::vector<Value>(fn.frame_slots), &fn.type_args};
  for (size_t i = 0; i < fn.env.size(); ++i) frame.slots[fn.lambda->captures[i]] = fn.env[i];
  bind(fn.lambda->pattern, arg, frame);
  return eval(fn.lambda->args[0], frame);
}

[[gnu::noinline]] Value Interpreter::Impl::eval_map(const core::Expr* e, Frame& f) {
  size_t g = e->gens.size();
  NDP_ASSERT(g >= 1 && e->args.size() == g + 1 + (e->has_filter ? 1 : 0), "malformed Map node");
  std::vector<Value> gens;
  gens.reserve(g);
  for (size_t i = 0; i < g; ++i) gens.push_back(eval(e->args[i], f));
  size_t n = gens[0].length();
  for (size_t i = 1; i < g; ++i)
    if (gens[i].length() != n) fail(e->span, message(RuntimeErrorId::ApplyToEachLengthMismatch, n, gens[i].length()));
  const core::Expr* body = e->args[g];
  const core::Expr* filter = e->has_filter ? e->args[g + 1] : nullptr;
  std::vector<Value> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    poll_interrupt(e->span);
    rand.push_element(i);
    for (size_t j = 0; j < g; ++j) bind(e->gens[j], gens[j].elems()[i], f);
    // ndp evaluates the filter first and the body only where it holds (language.md §4.4).
    if (!filter || eval(filter, f).as_bool()) out.push_back(eval(body, f));
    rand.pop_element();
  }
  return Value::seq(std::move(out));
}

[[gnu::noinline]] Value Interpreter::Impl::eval_seq_lit(const core::Expr* e, Frame& f) {
  std::vector<Value> out;
  out.reserve(e->args.size());
  for (const core::Expr* a : e->args) out.push_back(eval(a, f));
  return Value::seq(std::move(out));
}

[[gnu::noinline]] Value Interpreter::Impl::eval_time(const core::Expr* e, Frame& f) {
  auto t0 = std::chrono::steady_clock::now();
  Value v = eval(e->args[0], f);
  std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
  return Value::pair(std::move(v), Value::float_(dt.count()));
}

RunResult Interpreter::Impl::guarded(const std::function<Value(std::vector<Value>*)>& body) {
  RunResult result;
  stack.run([&] {
    rand.begin_form();
    depth = 0;
    try {
      result.value = body(&result.frame);
      result.ok = true;
    } catch (EvalError& err) {
      result.error = RuntimeError{std::move(err.message), err.span};
    } catch (std::bad_alloc&) {
      result.error = RuntimeError{message(RuntimeErrorId::OutOfMemory), Span{}};
    } catch (std::length_error&) {
      result.error = RuntimeError{message(RuntimeErrorId::OutOfMemory), Span{}};
    }
    std::fflush(opts.out);
  });
  return result;
}

Interpreter::Interpreter(core::Program& prog, InterpOptions opts) : impl_(std::make_unique<Impl>(prog, opts)) {}

Interpreter::~Interpreter() = default;

void Interpreter::set_library_files(uint32_t last_file) { impl_->last_library_file = last_file; }

RunResult Interpreter::run(const core::TopExpr& top) {
  return impl_->guarded([&](std::vector<Value>* slots) {
    Frame frame{std::vector<Value>(top.num_slots), &kNoTypes};
    struct SaveSlots {  // the slots are returned even when the form fails
      Frame& f;
      std::vector<Value>* out;
      ~SaveSlots() { *out = std::move(f.slots); }
    } save{frame, slots};
    return impl_->eval(top.body, frame);
  });
}

RunResult Interpreter::call(uint32_t global, const std::vector<const Type*>& type_args, const Value& arg) {
  return impl_->guarded([&](std::vector<Value>*) {
    Value fn = impl_->make_fn_value(global, type_args);
    return impl_->call_value(fn, arg, Span{});
  });
}

}  // namespace ndp::lang::eval
