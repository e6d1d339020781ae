// The Checker: the session's global environment, seeded with every primitive of
// lang/prims.def, and the entry point that checks one top-level form at a time.
#include <fmt/format.h>

#include <cctype>

#include "frontend/check_form.h"
#include "frontend/frontend.h"

namespace ndp::frontend {

namespace ast = lang::ast;
namespace core = lang::core;

struct Checker::Impl {
  Impl(core::Program& prog, lang::DiagnosticEngine& d) : env(prog), diags(d) {}
  Env env;
  lang::DiagnosticEngine& diags;
};

static bool is_identifier(const char* s) {
  if (!std::isalpha(static_cast<unsigned char>(*s)) && *s != '_') return false;
  for (; *s; ++s)
    if (!std::isalnum(static_cast<unsigned char>(*s)) && *s != '_') return false;
  return true;
}

// Each primitive's signature is NESL text (prims.def); parsing it with the ordinary signature
// parser keeps one source of truth for the library's types. Operators are entered under their
// spelling in `prims_by_name` only: they cannot be written as names, so only identifiers are
// bound in the name environment.
static void register_primitives(Env& env) {
  lang::SourceManager sm;
  ast::AstContext ctx;
  lang::DiagnosticEngine diags;
  size_t count = static_cast<size_t>(core::PrimId::Count_);
  env.prim_globals.assign(count, 0);
  for (size_t i = 0; i < count; ++i) {
    auto id = static_cast<core::PrimId>(i);
    const core::PrimInfo& info = core::prim_info(id);
    uint32_t file = sm.add(fmt::format("<primitive {}>", info.name), info.type);
    const ast::TopLevel* sig = parse_signature(ctx, sm, file, diags);
    if (!sig || !sig->signature || diags.has_errors())
      throw lang::InternalError(fmt::format("internal error: bad signature for primitive {}: {}", info.name, info.type));
    FormChecker fc(env, diags);
    std::vector<CtxVar> vars;
    fc.context_vars(sig->context, vars);
    IType* t = fc.type_expr(sig->signature, vars);
    if (fc.failed() || fc.unifier().find(t)->kind != IKind::Fn)
      throw lang::InternalError(fmt::format("internal error: bad signature for primitive {}: {}", info.name, info.type));
    TypeOut out(fc.unifier(), env.prog.types, false);
    for (const CtxVar& v : vars) out.number_var(fc.unifier().find(v.type));
    const lang::Type* type = out.get(t);
    // The argument must be a tuple of `arity` components for Prim nodes to spread it.
    const lang::Type* arg = type->a;
    for (int k = 1; k < info.arity; ++k) {
      NDP_ASSERT(arg->kind == lang::TypeKind::Pair, "primitive arity exceeds its argument tuple");
      arg = arg->b;
    }
    core::Global* g = env.prog.new_global(core::Global::Kind::Prim, info.name);
    g->prim = id;
    g->scheme = lang::TypeScheme{out.classes(), type};
    g->library = true;
    uint32_t gid = static_cast<uint32_t>(env.prog.globals.size() - 1);
    env.prim_globals[i] = gid;
    env.prims_by_name[info.name] = id;
    if (is_identifier(info.name)) env.names[info.name] = gid;
  }
}

Checker::Checker(core::Program& prog, lang::DiagnosticEngine& diags) : impl_(std::make_unique<Impl>(prog, diags)) {
  register_primitives(impl_->env);
}

Checker::~Checker() = default;

void Checker::set_library_mode(bool on) { impl_->env.library_mode = on; }

std::optional<CheckedForm> Checker::check(const ast::TopLevel& form) {
  FormChecker fc(impl_->env, impl_->diags);
  return fc.check(form);
}

void Checker::restore(const CheckedForm& form) {
  for (const auto& [name, previous] : form.replaced) {
    if (previous)
      impl_->env.names[name] = *previous;
    else
      impl_->env.names.erase(name);
  }
}

std::optional<uint32_t> Checker::lookup(std::string_view name) const {
  auto it = impl_->env.names.find(name);
  if (it == impl_->env.names.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Checker::names() const {
  std::vector<std::string> out;
  for (const auto& [name, id] : impl_->env.names) out.push_back(name);
  return out;
}

}  // namespace ndp::frontend
