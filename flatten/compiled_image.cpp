// Writing and reading compiled images (Note [Compiled images]).
#include "flatten/compiled_image.h"

#include <cstring>
#include <map>
#include <set>
#include <stdexcept>

#include "flatten/kernel_abi.h"
#include "flatten/passes/find_partition_levels.h"
#include "flatten/passes/find_regular_levels.h"
#include "flatten/passes/mark_releases.h"
#include "lang/diagnostics.h"

namespace ndp::flatten {

using lang::Type;
using lang::TypeKind;
using lang::Value;
using lang::ValueKind;

namespace {

/// Whether node n carries a message (a Fail of runtime_error: Note [Folds in kernels]).
bool failure_message(const KernelNode& n) { return n.kind == KernelNode::Kind::Fail && n.component == kFailRaises; }


constexpr char kMagic[8] = {'N', 'D', 'P', 'I', 'M', 'G', '0', '9'};  // 09: filter groups' adjacent packs

/// What an image depends on besides its own format: the numbering of primitives and Flat IR ops.
uint64_t fingerprint() {
  std::string all;
  for (uint16_t p = 0; p < static_cast<uint16_t>(lang::core::PrimId::Count_); ++p)
    all += std::string(lang::core::prim_info(static_cast<lang::core::PrimId>(p)).name) + ",";
#define NDP_FLAT_OP(name, text, doc) all += text ";";
#include "flatten/flat_ops.def"
#undef NDP_FLAT_OP
  return stable_hash(all);
}

// ---- writing ----

class Writer {
 public:
  explicit Writer(const lang::core::Program& core) : core_(core) {}

  std::string image(const std::vector<SourceBuffer>& sources, uint32_t library_files,
                    std::span<const CompiledEntry* const> entries) {
    // The body first: it registers the types, data definitions, kernels and globals it names,
    // whose tables then go before it.
    std::string body;
    out_ = &body;
    u32(library_files);
    u64(sources.size());
    for (const SourceBuffer& s : sources) {
      str(s.name);
      str(s.text);
      u32(s.origin.line);
      u32(s.origin.col);
    }
    u64(entries.size());
    for (const CompiledEntry* entry : entries) {
      const CompiledEntry& e = *entry;
      str(e.name);
      u32(e.argument);
      globals_.insert(e.argument);
      type(e.arg_type);
      type(e.result_type);
      program(e.flat);
    }
    std::string globals;
    out_ = &globals;
    u64(core_.globals.size());
    u64(globals_.size());
    for (uint32_t id : globals_) {
      const lang::core::Global& g = *core_.globals.at(id);
      NDP_ASSERT(g.kind == lang::core::Global::Kind::Variable, "an image names a global that is not a variable");
      u32(id);
      str(g.name);
      type(g.scheme.type);
      u8(g.has_value);
      if (g.has_value) value(g.variable_value());
    }
    std::string kernels;
    out_ = &kernels;
    u64(kernels_.size());
    for (const KernelBody* k : kernels_) kernel_body(*k);
    // Data definitions' fields may name more types and definitions: close over them.
    std::string fields;
    out_ = &fields;
    for (size_t d = 0; d < defs_.size(); ++d) type(defs_[d]->fields);
    std::string types = type_table();
    std::string defs;
    out_ = &defs;
    u64(defs_.size());
    for (const lang::DataDef* d : defs_) {
      str(d->name);
      u32(d->id);
      u64(d->params.size());
      for (lang::TypeClass c : d->params) u8(static_cast<uint8_t>(c));
    }
    std::string head;
    out_ = &head;
    head.append(kMagic, sizeof kMagic);
    u64(fingerprint());
    return head + defs + types + fields + kernels + globals + body;
  }

 private:
  void u8(uint8_t v) { out_->push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void i64(int64_t v) { raw(&v, 8); }
  void raw(const void* p, size_t n) { out_->append(static_cast<const char*>(p), n); }
  void str(std::string_view s) {
    u64(s.size());
    out_->append(s);
  }
  void span(lang::Span s) {
    u32(s.file);
    u32(s.begin);
    u32(s.end);
  }

  uint32_t def_id(const lang::DataDef* d) {
    auto [it, fresh] = def_ids_.emplace(d, static_cast<uint32_t>(defs_.size()));
    if (fresh) defs_.push_back(d);
    return it->second;
  }
  /// Registers t (its parts first) and returns its index; 0 is "no type".
  uint32_t type_id(const Type* t) {
    if (!t) return 0;
    if (auto it = type_ids_.find(t); it != type_ids_.end()) return it->second;
    type_id(t->a);
    type_id(t->b);
    for (const Type* a : t->args) type_id(a);
    if (t->data) def_id(t->data);
    uint32_t id = static_cast<uint32_t>(types_.size() + 1);
    type_ids_.emplace(t, id);
    types_.push_back(t);
    return id;
  }
  void type(const Type* t) { u32(type_id(t)); }
  std::string type_table() {
    std::string table;
    out_ = &table;
    u64(types_.size());
    for (const Type* t : types_) {
      u8(static_cast<uint8_t>(t->kind));
      u8(static_cast<uint8_t>(t->cls));
      u32(t->index);
      u32(type_id(t->a));
      u32(type_id(t->b));
      u32(t->data ? def_ids_.at(t->data) : 0);
      u64(t->args.size());
      for (const Type* a : t->args) u32(type_id(a));
    }
    return table;
  }

  void value(const Value& v) {
    u8(static_cast<uint8_t>(v.kind()));
    switch (v.kind()) {
      case ValueKind::Int:
      case ValueKind::Stream: i64(v.as_int()); return;
      case ValueKind::Float: {
        double d = v.as_float();
        raw(&d, 8);
        return;
      }
      case ValueKind::Bool: u8(v.as_bool()); return;
      case ValueKind::Char: u8(v.as_char()); return;
      case ValueKind::I32: u32(static_cast<uint32_t>(v.as_i32())); return;
      case ValueKind::F32: {
        float f = v.as_f32();
        raw(&f, 4);
        return;
      }
      case ValueKind::Seq:
        u64(v.length());
        for (const Value& e : v.elems()) value(e);
        return;
      case ValueKind::Pair:
        value(v.first());
        value(v.second());
        return;
      case ValueKind::Data:
        u32(def_id(v.data().def));
        value(v.data().fields);
        return;
      case ValueKind::Fn: {
        const lang::FnObj& f = v.fn();
        u8(static_cast<uint8_t>(f.target));
        u32(f.id);
        u32(f.data ? def_id(f.data) + 1 : 0);
        u64(f.type_args.size());
        for (const Type* t : f.type_args) type(t);
        return;
      }
    }
  }

  uint32_t kernel_id(const std::shared_ptr<const KernelBody>& k) {
    if (!k) return 0;
    auto [it, fresh] = kernel_ids_.emplace(k.get(), static_cast<uint32_t>(kernels_.size() + 1));
    if (fresh) kernels_.push_back(k.get());
    return it->second;
  }
  void kernel_body(const KernelBody& k) {
    u64(k.inputs.size());
    for (const Type* t : k.inputs) type(t);
    u64(k.nodes.size());
    for (const KernelNode& n : k.nodes) {
      u8(static_cast<uint8_t>(n.kind));
      u32(n.input);
      u32(n.component);
      if (n.kind == KernelNode::Kind::Const || failure_message(n)) value(n.value);
      u32(static_cast<uint32_t>(n.prim));
      u64(n.args.size());
      for (uint32_t a : n.args) u32(a);
      type(n.type);
      span(n.span);
    }
    u64(k.outputs.size());
    for (uint32_t o : k.outputs) u32(o);
    u8(k.loop);
    u32(k.loop_done);
    u64(k.loop_next.size());
    for (uint32_t x : k.loop_next) u32(x);
    u64(k.seqs.size());
    for (const KernelBody::Seq& seq : k.seqs) {
      u64(seq.components.size());
      for (const Type* t : seq.components) type(t);
      u8(seq.written);
      u8(seq.appended);
    }
    u64(k.seq_outputs.size());
    for (uint32_t q : k.seq_outputs) u32(q);
  }

  void program(const Program& p) {
    u32(p.entry);
    u64(p.functions.size());
    for (const Function& f : p.functions) {
      str(f.name);
      type(f.arg_type);
      type(f.result_type);
      u32(f.param);
      u8(f.has_path);
      u32(f.path);
      u64(f.shared_bases.size());
      for (VarId b : f.shared_bases) u32(b);
      u64(f.vars.size());
      for (const Var& v : f.vars) {
        str(v.hint);
        type(v.type);
      }
      block(f.body);
    }
  }
  void block(const Block& b) {
    u64(b.stmts.size());
    for (const Stmt& s : b.stmts) stmt(s);
    u32(b.result);
  }
  void optional_block(const std::unique_ptr<Block>& b) {
    u8(b != nullptr);
    if (b) block(*b);
  }
  void stmt(const Stmt& s) {
    u8(static_cast<uint8_t>(s.op));
    u32(s.dst);
    u64(s.uses.size());
    for (VarId u : s.uses) u32(u);
    span(s.span);
    // The literal of Lit and Const (a default Value elsewhere, a bool: written as it is).
    value(s.lit);
    type(s.type);
    u32(s.global);
    if (s.op == Op::Global) globals_.insert(s.global);
    u32(static_cast<uint32_t>(s.prim));
    u64(s.type_args.size());
    for (const Type* t : s.type_args) type(t);
    u32(s.func);
    optional_block(s.then_block);
    optional_block(s.else_block);
    u8(s.loop != nullptr);
    if (s.loop) {
      const RecursionLoop& l = *s.loop;
      block(l.prefix);
      block(l.step);
      block(l.combine);
      block(l.finish);
      for (VarId v : {l.param, l.path, l.next_path, l.call_result, l.branch}) u32(v);
      u64(l.saved.size());
      for (VarId v : l.saved) u32(v);
      u8(l.laid_out.has_value());
      if (l.laid_out) {
        for (VarId v : {l.laid_out->flags, l.laid_out->base, l.laid_out->child_counts}) u32(v);
        u8(l.laid_out->base_when);
        u64(l.laid_out->pieces.size());
        for (const LaidOut::Piece& p : l.laid_out->pieces) {
          u8(static_cast<uint8_t>(p.kind));
          u32(p.child);
          u32(p.rows);
        }
        for (const std::vector<uint32_t>* early : {&l.laid_out->early_finish, &l.laid_out->early_combine}) {
          u64(early->size());
          for (uint32_t i : *early) u32(i);
        }
      }
    }
    u32(kernel_id(s.kernel));
    u64(s.outs.size());
    for (VarId v : s.outs) u32(v);
    u8(static_cast<uint8_t>(s.level));
    u8(s.subwarp_width);
    u8(s.filters != nullptr);
    if (s.filters) {
      u32(s.filters->inputs);
      u64(s.filters->members.size());
      for (const FilterGroup::Member& m : s.filters->members) {
        u8(static_cast<uint8_t>(m.kind));
        u32(static_cast<uint32_t>(m.predicate));
      }
      u64(s.filters->adjacent_packs.size());
      for (uint32_t m : s.filters->adjacent_packs) u32(m);
    }
    u8(s.chain != nullptr);
    if (s.chain) {
      u64(s.chain->sources.size());
      for (const AppendChain::Source& src : s.chain->sources) {
        u32(src.seqs);
        u32(static_cast<uint32_t>(src.index));
        span(src.span);
      }
      u64(s.chain->checks.size());
      for (uint32_t c : s.chain->checks) u32(c);
    }
  }

  const lang::core::Program& core_;
  std::string* out_ = nullptr;
  std::map<const Type*, uint32_t> type_ids_;
  std::vector<const Type*> types_;
  std::map<const lang::DataDef*, uint32_t> def_ids_;
  std::vector<const lang::DataDef*> defs_;
  std::map<const KernelBody*, uint32_t> kernel_ids_;
  std::vector<const KernelBody*> kernels_;
  std::set<uint32_t> globals_;
};

// ---- reading ----

class Reader {
 public:
  Reader(std::string_view bytes, lang::core::Program& core) : in_(bytes), core_(core) {}

  CompiledImage image() {
    if (in_.size() < sizeof kMagic || std::memcmp(in_.data(), kMagic, sizeof kMagic) != 0)
      fail("this is not a compiled ndp program");
    pos_ = sizeof kMagic;
    if (u64() != fingerprint()) fail("the program was compiled by another version of ndp; compile it again");
    size_t ndefs = count();
    for (size_t d = 0; d < ndefs; ++d) {
      lang::DataDef* def = core_.types.new_datadef(str());
      def->id = u32();
      size_t nparams = count();
      for (size_t p = 0; p < nparams; ++p) def->params.push_back(static_cast<lang::TypeClass>(u8()));
      defs_.push_back(def);
    }
    size_t ntypes = count();
    types_.push_back(nullptr);  // index 0: no type
    for (size_t t = 0; t < ntypes; ++t) types_.push_back(read_type_entry());
    for (lang::DataDef* d : defs_) d->fields = type();
    size_t nkernels = count();
    kernels_.push_back(nullptr);
    for (size_t k = 0; k < nkernels; ++k) kernels_.push_back(kernel_body());
    size_t nglobals = count();
    for (size_t g = 0; g < nglobals; ++g) core_.new_global(lang::core::Global::Kind::Function, "");
    size_t nvars = count();
    for (size_t v = 0; v < nvars; ++v) {
      uint32_t id = u32();
      if (id >= core_.globals.size()) fail("a global out of range");
      lang::core::Global& g = *core_.globals[id];
      g.kind = lang::core::Global::Kind::Variable;
      g.name = str();
      g.scheme.type = type();
      if (u8() != 0) g.set_value(value());
    }
    CompiledImage img;
    img.library_files = u32();
    size_t nsources = count();
    for (size_t s = 0; s < nsources; ++s) {
      SourceBuffer b;
      b.name = str();
      b.text = str();
      b.origin.line = u32();
      b.origin.col = u32();
      img.sources.push_back(std::move(b));
    }
    size_t nentries = count();
    for (size_t e = 0; e < nentries; ++e) {
      CompiledEntry entry;
      entry.name = str();
      entry.argument = u32();
      entry.arg_type = type();
      entry.result_type = type();
      entry.flat = program();
      // A damaged image is refused here, not by an executor's assertion; the plans of regular
      // and partition levels and the releases (none stored) are found and marked again, as the
      // pipeline's last passes do.
      if (std::vector<std::string> problems = verify(entry.flat); !problems.empty())
        fail("entry " + entry.name + " is not valid Flat IR: " + problems.front());
      entry.flat = mark_releases(find_partition_levels(find_regular_levels(std::move(entry.flat))));
      img.entries.push_back(std::move(entry));
    }
    if (pos_ != in_.size()) fail("bytes after the end");
    return img;
  }

 private:
  [[noreturn]] void fail(const std::string& why) { throw std::runtime_error("compiled ndp program: " + why); }
  void raw(void* p, size_t n) {
    if (in_.size() - pos_ < n) fail("it ends early (truncated?)");
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
  }
  uint8_t u8() {
    uint8_t v;
    raw(&v, 1);
    return v;
  }
  uint32_t u32() {
    uint32_t v;
    raw(&v, 4);
    return v;
  }
  uint64_t u64() {
    uint64_t v;
    raw(&v, 8);
    return v;
  }
  int64_t i64() {
    int64_t v;
    raw(&v, 8);
    return v;
  }
  /// A count of things that follow, each at least a byte: no more than the bytes left.
  size_t count() {
    uint64_t n = u64();
    if (n > in_.size() - pos_) fail("a count larger than the image");
    return static_cast<size_t>(n);
  }
  std::string str() {
    size_t n = count();
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  lang::Span span() {
    lang::Span s;
    s.file = u32();
    s.begin = u32();
    s.end = u32();
    return s;
  }
  const Type* type() {
    uint32_t id = u32();
    if (id >= types_.size()) fail("a type out of range");
    return types_[id];
  }
  const Type* read_type_entry() {
    auto kind = static_cast<TypeKind>(u8());
    auto cls = static_cast<lang::TypeClass>(u8());
    uint32_t index = u32();
    const Type* a = type();
    const Type* b = type();
    uint32_t def = u32();
    size_t nargs = count();
    std::vector<const Type*> args;
    for (size_t i = 0; i < nargs; ++i) args.push_back(type());
    lang::TypeContext& t = core_.types;
    switch (kind) {
      case TypeKind::Int: return t.int_();
      case TypeKind::Float: return t.float_();
      case TypeKind::Bool: return t.bool_();
      case TypeKind::Char: return t.char_();
      case TypeKind::I32: return t.i32();
      case TypeKind::F32: return t.f32();
      case TypeKind::Stream: return t.stream();
      case TypeKind::Var: return t.var(index, cls);
      case TypeKind::Seq: return t.seq(a);
      case TypeKind::Pair: return t.pair(a, b);
      case TypeKind::Fn: return t.fn(a, b);
      case TypeKind::Data:
        if (def >= defs_.size()) fail("a data definition out of range");
        return t.data(defs_[def], std::move(args));
    }
    fail("an unknown type kind");
  }
  const lang::DataDef* def() {
    uint32_t id = u32();
    if (id >= defs_.size()) fail("a data definition out of range");
    return defs_[id];
  }

  Value value() {
    auto kind = static_cast<ValueKind>(u8());
    switch (kind) {
      case ValueKind::Int: return Value::int_(i64());
      case ValueKind::Stream: return Value::stream(i64());
      case ValueKind::Float: {
        double d;
        raw(&d, 8);
        return Value::float_(d);
      }
      case ValueKind::Bool: return Value::bool_(u8() != 0);
      case ValueKind::Char: return Value::char_(u8());
      case ValueKind::I32: return Value::i32(static_cast<int32_t>(u32()));
      case ValueKind::F32: {
        float f;
        raw(&f, 4);
        return Value::f32(f);
      }
      case ValueKind::Seq: {
        size_t n = count();
        std::vector<Value> elems;
        elems.reserve(n);
        for (size_t i = 0; i < n; ++i) elems.push_back(value());
        return Value::seq(std::move(elems));
      }
      case ValueKind::Pair: {
        Value a = value();
        return Value::pair(std::move(a), value());
      }
      case ValueKind::Data: {
        const lang::DataDef* d = def();
        return Value::data(d, value());
      }
      case ValueKind::Fn: {
        auto f = std::make_shared<lang::FnObj>();
        f->target = static_cast<lang::FnObj::Target>(u8());
        f->id = u32();
        uint32_t d = u32();
        if (d > defs_.size()) fail("a data definition out of range");
        f->data = d ? defs_[d - 1] : nullptr;
        size_t n = count();
        for (size_t i = 0; i < n; ++i) f->type_args.push_back(type());
        return Value::fn(std::move(f));
      }
    }
    fail("an unknown value kind");
  }

  std::shared_ptr<const KernelBody> kernel_body() {
    auto k = std::make_shared<KernelBody>();
    size_t ninputs = count();
    for (size_t i = 0; i < ninputs; ++i) k->inputs.push_back(type());
    size_t nnodes = count();
    for (size_t i = 0; i < nnodes; ++i) {
      KernelNode n;
      uint8_t kind = u8();
      if (kind > static_cast<uint8_t>(KernelNode::Kind::SeqAppend)) fail("a kernel node of no kind");
      n.kind = static_cast<KernelNode::Kind>(kind);
      n.input = u32();
      n.component = u32();
      if (n.kind == KernelNode::Kind::Const || failure_message(n)) n.value = value();
      n.prim = prim();
      size_t nargs = count();
      for (size_t a = 0; a < nargs; ++a) n.args.push_back(u32());
      n.type = type();
      n.span = span();
      k->nodes.push_back(std::move(n));
    }
    size_t nouts = count();
    for (size_t i = 0; i < nouts; ++i) k->outputs.push_back(u32());
    k->loop = u8() != 0;
    k->loop_done = u32();
    size_t nnext = count();
    for (size_t i = 0; i < nnext; ++i) k->loop_next.push_back(u32());
    size_t nseqs = count();
    for (size_t i = 0; i < nseqs; ++i) {
      size_t ncomponents = count();
      KernelBody::Seq seq;
      for (size_t c = 0; c < ncomponents; ++c) seq.components.push_back(type());
      seq.written = u8() != 0;
      seq.appended = u8() != 0;
      k->seqs.push_back(std::move(seq));
    }
    size_t nseq_outputs = count();
    for (size_t i = 0; i < nseq_outputs; ++i) k->seq_outputs.push_back(u32());
    return k;
  }
  lang::core::PrimId prim() {
    uint32_t p = u32();
    if (p > static_cast<uint32_t>(lang::core::PrimId::Count_)) fail("a primitive out of range");
    return static_cast<lang::core::PrimId>(p);
  }

  Program program() {
    Program p;
    p.entry = u32();
    size_t nfuncs = count();
    for (size_t i = 0; i < nfuncs; ++i) {
      Function f;
      f.name = str();
      f.arg_type = type();
      f.result_type = type();
      f.param = u32();
      f.has_path = u8() != 0;
      f.path = u32();
      size_t nbases = count();
      for (size_t b = 0; b < nbases; ++b) f.shared_bases.push_back(u32());
      size_t nvars = count();
      for (size_t v = 0; v < nvars; ++v) {
        Var var;
        var.hint = str();
        var.type = type();
        f.vars.push_back(std::move(var));
      }
      f.body = block();
      p.functions.push_back(std::move(f));
    }
    return p;
  }
  Block block() {
    Block b;
    size_t n = count();
    for (size_t i = 0; i < n; ++i) b.stmts.push_back(stmt());
    b.result = u32();
    return b;
  }
  std::unique_ptr<Block> optional_block() {
    if (!u8()) return nullptr;
    return std::make_unique<Block>(block());
  }
  Stmt stmt() {
    Stmt s;
    uint8_t op = u8();
    if (op > static_cast<uint8_t>(Op::Recurse)) fail("an unknown statement");
    s.op = static_cast<Op>(op);
    s.dst = u32();
    size_t nuses = count();
    for (size_t i = 0; i < nuses; ++i) s.uses.push_back(u32());
    s.span = span();
    s.lit = value();
    s.type = type();
    s.global = u32();
    s.prim = prim();
    size_t ntargs = count();
    for (size_t i = 0; i < ntargs; ++i) s.type_args.push_back(type());
    s.func = u32();
    s.then_block = optional_block();
    s.else_block = optional_block();
    if (u8()) {
      auto l = std::make_unique<RecursionLoop>();
      l->prefix = block();
      l->step = block();
      l->combine = block();
      l->finish = block();
      l->param = u32();
      l->path = u32();
      l->next_path = u32();
      l->call_result = u32();
      l->branch = u32();
      size_t nsaved = count();
      for (size_t i = 0; i < nsaved; ++i) l->saved.push_back(u32());
      if (u8()) {
        LaidOut& o = l->laid_out.emplace();
        o.flags = u32();
        o.base = u32();
        o.child_counts = u32();
        o.base_when = u8() != 0;
        size_t npieces = count();
        for (size_t i = 0; i < npieces; ++i) {
          const uint8_t kind = u8();
          if (kind > static_cast<uint8_t>(LaidOut::Piece::Kind::Rows)) fail("an unknown laid-out piece");
          LaidOut::Piece p{static_cast<LaidOut::Piece::Kind>(kind), u32(), 0};
          p.rows = u32();
          o.pieces.push_back(p);
        }
        for (std::vector<uint32_t>* early : {&o.early_finish, &o.early_combine}) {
          size_t n = count();
          for (size_t i = 0; i < n; ++i) early->push_back(u32());
        }
      }
      s.loop = std::move(l);
    }
    uint32_t k = u32();
    if (k >= kernels_.size()) fail("a kernel out of range");
    s.kernel = kernels_[k];
    size_t nouts = count();
    for (size_t i = 0; i < nouts; ++i) s.outs.push_back(u32());
    const uint8_t level = u8();
    if (level > static_cast<uint8_t>(lang::ast::AtLevel::Seq)) fail("an unknown level");
    s.level = static_cast<lang::ast::AtLevel>(level);
    s.subwarp_width = u8();
    if (u8()) {
      auto g = std::make_shared<FilterGroup>();
      g->inputs = u32();
      size_t nmembers = count();
      for (size_t i = 0; i < nmembers; ++i) {
        FilterGroup::Member m;
        m.kind = static_cast<FilterGroup::Kind>(u8());
        m.predicate = static_cast<int32_t>(u32());
        g->members.push_back(m);
      }
      size_t nadjacent = count();
      for (size_t i = 0; i < nadjacent; ++i) g->adjacent_packs.push_back(u32());
      s.filters = std::move(g);
    }
    if (u8()) {
      auto c = std::make_shared<AppendChain>();
      size_t nsources = count();
      for (size_t i = 0; i < nsources; ++i) {
        AppendChain::Source src;
        src.seqs = u32();
        src.index = static_cast<int32_t>(u32());
        src.span = span();
        c->sources.push_back(src);
      }
      size_t nchecks = count();
      for (size_t i = 0; i < nchecks; ++i) c->checks.push_back(u32());
      s.chain = std::move(c);
    }
    return s;
  }

  std::string_view in_;
  size_t pos_ = 0;
  lang::core::Program& core_;
  std::vector<lang::DataDef*> defs_;
  std::vector<const Type*> types_;
  std::vector<std::shared_ptr<const KernelBody>> kernels_;
};

void collect_kernels(const Block& b, std::set<std::string>& seen, std::vector<const KernelBody*>& out) {
  for (const Stmt& s : b.stmts) {
    if (s.kernel && seen.insert(s.kernel->key()).second) out.push_back(s.kernel.get());
    for (const Block* inner : {s.then_block.get(), s.else_block.get()})
      if (inner) collect_kernels(*inner, seen, out);
    if (s.loop)
      for (const Block* inner : {&s.loop->prefix, &s.loop->step, &s.loop->combine, &s.loop->finish})
        collect_kernels(*inner, seen, out);
  }
}

}  // namespace

std::string write_image(const lang::core::Program& core, const std::vector<SourceBuffer>& sources,
                        uint32_t library_files, std::span<const CompiledEntry* const> entries) {
  return Writer(core).image(sources, library_files, entries);
}

CompiledImage read_image(std::string_view bytes, lang::core::Program& core) { return Reader(bytes, core).image(); }

std::vector<const KernelBody*> image_kernels(std::span<const CompiledEntry* const> entries) {
  std::set<std::string> seen;
  std::vector<const KernelBody*> out;
  for (const CompiledEntry* e : entries)
    for (const Function& f : e->flat.functions) collect_kernels(f.body, seen, out);
  return out;
}

}  // namespace ndp::flatten
