// Printing of Flat IR (`ndp run --dump=flat`, `:dump flat`).
#include <fmt/format.h>

#include "flatten/flat_ir.h"
#include "lang/runtime_errors.h"

namespace ndp::flatten {

const char* op_name(Op op) {
  switch (op) {
#define NDP_FLAT_OP(name, text, doc) \
  case Op::name:                     \
    return text;
#include "flatten/flat_ops.def"
#undef NDP_FLAT_OP
  }
  return "?";
}

namespace {

struct Printer {
  const Program& prog;
  const Function* fn = nullptr;
  std::string out;

  std::string var(VarId v) const {
    const Var& x = fn->vars.at(v);
    return fmt::format("{}_{}", x.hint.empty() ? "v" : x.hint, v);
  }
  std::string type_of(VarId v) const {
    const Var& x = fn->vars.at(v);
    return x.is_host() ? "host" : lang::type_to_string(x.type, {});
  }

  void block(const Block& b, int indent) {
    std::string pad(indent, ' ');
    for (const Stmt& s : b.stmts) stmt(s, indent);
    out += fmt::format("{}return {}\n", pad, var(b.result));
  }

  /// The variables of `outs` with their types: `a_1 : int, b_2 : bool`.
  std::string outs_lhs(const Stmt& s) const {
    std::string lhs;
    for (size_t i = 0; i < s.outs.size(); ++i) lhs += (i ? ", " : "") + fmt::format("{} : {}", var(s.outs[i]), type_of(s.outs[i]));
    return lhs;
  }

  /// `a_1 : int, b_2 : bool = kernel(x_0, y_1)` and one line per node: `%k = prim(%i, ...)`,
  /// inputs as `%k = in j`, outputs marked `-> var`.
  void kernel(const Stmt& s, int indent) {
    std::string pad(indent, ' ');
    std::string args;
    std::vector<VarId> ins = kernel_inputs(s);
    for (size_t i = 0; i < ins.size(); ++i) args += (i ? ", " : "") + var(ins[i]);
    if (s.op == Op::Kernel || reads_rows(s.op)) {
      // A loop kernel's state inputs come first (Note [Loop kernels]), then the rows of the
      // sequences it reads.
      std::string rows;
      for (size_t i = ins.size(); reads_rows(s.op) && i < s.uses.size(); ++i) rows += (rows.empty() ? "; rows " : ", ") + var(s.uses[i]);
      std::string level = s.op == Op::MapKernel ? " at " + lang::ast::level_text(s.level, s.subwarp_width) : "";
      if (s.op == Op::LoopKernel && s.kernel->multiprefix()) level = " (multiprefix loop: a warp an instance)";
      out += fmt::format("{}{} = {}({}{}){}\n", pad, outs_lhs(s), op_name(s.op), args, rows, level);
    } else {
      // `r : int = reduce_kernel sum(lens; x)`: the consumer, its first operand, the inputs.
      std::string prim = s.op == Op::PackKernel ? "" : fmt::format(" {}", lang::core::prim_info(s.prim).name);
      out += fmt::format("{}{} : {} = {}{}({}; {})\n", pad, var(s.dst), type_of(s.dst), op_name(s.op), prim,
                         var(s.uses.at(0)), args);
    }
    nodes(s, indent);
  }

  /// A filter group: its outputs and shared inputs, its predicates kernel (outputs marked
  /// `-> flags k`), then one line per member:
  ///   n_7 : int, y_8 : int = filter_group(e_3, p_4)
  ///       %2 : bool = <(%0, %1) -> flags 0
  ///       member n_7: count flags 0 in segments lens_2
  ///       member y_8: pack e_3 by flags 0
  ///       adjacent: y_8, z_9   (Note [Children one after another], where marked)
  void filter_group(const Stmt& s, int indent) {
    std::string pad(indent, ' ');
    const FilterGroup& g = *s.filters;
    std::vector<VarId> ins = kernel_inputs(s);
    std::string args;
    for (size_t i = 0; i < ins.size(); ++i) args += (i ? ", " : "") + var(ins[i]);
    out += fmt::format("{}{} = filter_group({})\n", pad, outs_lhs(s), args);
    if (s.kernel) nodes(s, indent);
    for (size_t m = 0; m < g.members.size() && m < s.outs.size(); ++m) {
      const FilterGroup::Member& member = g.members[m];
      size_t other = g.inputs + m;
      size_t flags_input = static_cast<size_t>(-1 - static_cast<int64_t>(member.predicate));
      std::string flags = member.predicate >= 0            ? fmt::format("flags {}", member.predicate)
                          : flags_input < ins.size() ? var(ins[flags_input])
                                                     : "?";
      std::string operand = other < s.uses.size() ? var(s.uses[other]) : "?";
      if (member.kind == FilterGroup::Kind::Count)
        out += fmt::format("{}    member {}: count {} in segments {}\n", pad, var(s.outs[m]), flags, operand);
      else
        out += fmt::format("{}    member {}: pack {} by {}\n", pad, var(s.outs[m]), operand, flags);
    }
    if (!g.adjacent_packs.empty()) {
      std::string adjacent;
      for (uint32_t m : g.adjacent_packs) adjacent += (adjacent.empty() ? "" : ", ") + (m < s.outs.size() ? var(s.outs[m]) : "?");
      out += fmt::format("{}    adjacent: {}\n", pad, adjacent);
    }
  }

  /// `r_9 : [int] = append_chain(elt(m_3, i_5), mid_4, elt(m_3, j_8))`, and the order the elts'
  /// indices are checked in when it is not the order of the sources.
  void append_chain(const Stmt& s, int indent) {
    std::string pad(indent, ' ');
    const AppendChain& c = *s.chain;
    auto operand = [&](int64_t i) { return i >= 0 && static_cast<size_t>(i) < s.uses.size() ? var(s.uses[i]) : "?"; };
    std::string parts;
    std::vector<uint32_t> elts;
    for (size_t i = 0; i < c.sources.size(); ++i) {
      const AppendChain::Source& src = c.sources[i];
      parts += i ? ", " : "";
      if (!src.is_elt()) {
        parts += operand(src.seqs);
        continue;
      }
      parts += fmt::format("elt({}, {})", operand(src.seqs), operand(src.index));
      elts.push_back(static_cast<uint32_t>(i));
    }
    out += fmt::format("{}{} : {} = append_chain({})\n", pad, var(s.dst), type_of(s.dst), parts);
    if (c.checks == elts) return;
    std::string order;
    for (uint32_t k : c.checks) order += fmt::format("{}{}", order.empty() ? "" : ", ", k);
    out += fmt::format("{}    (elts checked in the order of sources {})\n", pad, order);
  }

  /// The nodes of a statement's kernel, one line each.
  void nodes(const Stmt& s, int indent) {
    std::string pad(indent, ' ');
    const KernelBody& k = *s.kernel;
    std::vector<VarId> ins = kernel_inputs(s);
    for (size_t j = 0; j < k.nodes.size(); ++j) {
      const KernelNode& n = k.nodes[j];
      std::string rhs;
      if (n.kind == KernelNode::Kind::Input) {
        rhs = fmt::format("in {}", n.input < ins.size() ? var(ins[n.input]) : "?");
      } else if (n.kind == KernelNode::Kind::Const) {
        rhs = "const " + lang::format_value(n.value, n.type);
      } else if (n.kind == KernelNode::Kind::Instance) {
        rhs = "instance";
      } else if (n.kind == KernelNode::Kind::SeqWrite) {
        // `rows[%r][%i].c := %v`: stored when the iteration goes on.
        size_t at = k.inputs.size() + n.input;
        rhs = fmt::format("{}[%{}][%{}].{} := %{}{}", at < s.uses.size() ? var(s.uses[at]) : "?", n.args.at(0), n.args.at(1),
                          n.component, n.args.at(2), n.args.size() > 3 ? fmt::format(" if %{}", n.args[3]) : "");
      } else if (n.kind == KernelNode::Kind::SeqLength || n.kind == KernelNode::Kind::SeqElt) {
        // `#rows[%r]` and `rows[%r][%i].c`: the rows are the statement's operands after the inputs.
        size_t at = k.inputs.size() + n.input;
        std::string rows = at < s.uses.size() ? var(s.uses[at]) : "?";
        rhs = n.kind == KernelNode::Kind::SeqLength
                  ? fmt::format("#{}[%{}]", rows, n.args.at(0))
                  : fmt::format("{}[%{}][%{}].{}{}", rows, n.args.at(0), n.args.at(1), n.component,
                                n.args.size() > 2 ? fmt::format(" if %{}", n.args[2]) : "");
      } else if (n.kind == KernelNode::Kind::SeqAppend) {
        // `rows[%r] ++= %v.c`: made at the end of the iteration (Note [Appended sequences ...]).
        size_t at = k.inputs.size() + n.input;
        rhs = fmt::format("{}[%{}].{} ++= %{}{}", at < s.uses.size() ? var(s.uses[at]) : "?", n.args.at(0), n.component,
                          n.args.at(1), n.args.size() > 2 ? fmt::format(" if %{}", n.args[2]) : "");
      } else if (n.kind == KernelNode::Kind::FoldIndex) {
        rhs = fmt::format("fold index, to %{}", n.input);
      } else if (n.kind == KernelNode::Kind::FoldAcc) {
        rhs = fmt::format("fold accumulator of %{}", n.input);
      } else if (n.kind == KernelNode::Kind::Fold) {
        // `fold %count from %init by %next` over the nodes after its FoldIndex (Note [Folds in kernels]).
        rhs = fmt::format("{} fold from %{}: %{} times %{} from %{} by %{}", lang::core::prim_info(n.prim).name, n.input,
                          n.args.at(0), n.args.at(1), n.args.at(1), n.args.at(2));
      } else if (n.kind == KernelNode::Kind::Fail) {
        rhs = fmt::format("fail if %{}: {}", n.args.at(0),
                          n.component == kFailRaises ? n.value.to_string()
                                                     : lang::message(static_cast<lang::RuntimeErrorId>(n.component)));
      } else {
        rhs = std::string(n.prim < lang::core::PrimId::Count_ ? lang::core::prim_info(n.prim).name : "?") + "(";
        for (size_t a = 0; a < n.args.size(); ++a) rhs += fmt::format("{}%{}", a ? ", " : "", n.args[a]);
        rhs += ")";
      }
      std::string outs;
      if (k.loop && k.loop_done == j) outs += " -> done";
      for (size_t i = 0; k.loop && i < k.loop_next.size(); ++i)
        if (k.loop_next[i] == j) outs += fmt::format(" -> next {}", i < ins.size() ? var(ins[i]) : "?");
      if (s.op == Op::Kernel || reads_rows(s.op)) {
        for (size_t o = 0; o < k.outputs.size() && o < s.outs.size(); ++o)
          if (k.outputs[o] == j) outs += fmt::format(" -> {}", var(s.outs[o]));
      } else if (s.op == Op::FilterGroup) {
        for (size_t o = 0; o < k.outputs.size(); ++o)
          if (k.outputs[o] == j) outs += fmt::format(" -> flags {}", o);
      } else if (!k.outputs.empty() && k.outputs[0] == j) {
        outs += s.op == Op::PackKernel ? " -> flags" : " ->";
      }
      out += fmt::format("{}    %{} : {} = {}{}\n", pad, j, lang::type_to_string(n.type, {}), rhs, outs);
    }
  }

  /// Note [Results laid out before the calls]: what the descent places, in the finish's terms.
  void laid_out(const LaidOut& l, const std::string& pad) {
    std::string pieces;
    for (const LaidOut::Piece& p : l.pieces) {
      if (!pieces.empty()) pieces += ", ";
      switch (p.kind) {
        case LaidOut::Piece::Kind::Child: pieces += fmt::format("child {}", p.child); break;
        case LaidOut::Piece::Kind::Rows: pieces += var(p.rows); break;
      }
    }
    out += fmt::format("{}  (results laid out before the calls: {} where {} is {}; else {} by {})\n", pad, var(l.base),
                       var(l.flags), l.base_when ? "T" : "F", pieces, var(l.child_counts));
  }

  /// Note [Partition levels]: the plan, in terms of the level's argument a and its length L.
  void partition(const PartitionLevels& p, const std::string& pad) {
    auto scalar = [&](uint32_t e) { return fmt::format("s{}", e); };
    std::string scalars;
    for (size_t e = 0; e < p.scalars.size(); ++e) {
      const PartitionLevels::Scalar& x = p.scalars[e];
      std::string rhs;
      switch (x.kind) {
        case PartitionLevels::Scalar::Kind::Length: rhs = "L"; break;
        case PartitionLevels::Scalar::Kind::Const: rhs = fmt::format("{}", x.value); break;
        case PartitionLevels::Scalar::Kind::Element: rhs = fmt::format("a[{}]", scalar(x.args.at(0))); break;
        case PartitionLevels::Scalar::Kind::Kernel:
          rhs = fmt::format("kernel output {} of (", x.output);
          for (size_t a = 0; a < x.args.size(); ++a) rhs += (a ? ", " : "") + scalar(x.args[a]);
          rhs += ")";
          break;
      }
      scalars += fmt::format("{}{} = {}", e ? "; " : "", scalar(static_cast<uint32_t>(e)), rhs);
    }
    std::string ins = "the element", parts;
    for (uint32_t q : p.predicate_scalars) ins += ", " + scalar(q);
    for (size_t j = 0; j < p.parts.size(); ++j)
      parts += fmt::format("{}{} {}", j ? ", " : "", p.parts[j].child ? "child of predicate" : "predicate", p.parts[j].output);
    out += fmt::format("{}  (partition levels: {}; recurse where {}; predicates on {}; in order {})\n", pad, scalars,
                       scalar(p.recurse), ins, parts);
  }

  /// Note [Regular levels]: the plan, in terms of the level's length L.
  void regular(const RegularLevels& r, const std::string& pad) {
    auto expr = [&](uint32_t e) { return fmt::format("e{}", e); };
    std::string exprs;
    for (size_t e = 0; e < r.exprs.size(); ++e) {
      const RegularLevels::LenExpr& x = r.exprs[e];
      std::string rhs = x.kind == RegularLevels::LenExpr::Kind::Length ? "L"
                        : x.kind == RegularLevels::LenExpr::Kind::Const ? fmt::format("{}", x.value)
                                                                        : fmt::format("kernel output {} of (", x.output);
      if (x.kind == RegularLevels::LenExpr::Kind::Kernel) {
        for (size_t a = 0; a < x.args.size(); ++a) rhs += (a ? ", " : "") + expr(x.args[a]);
        rhs += ")";
      }
      exprs += fmt::format("{}{} = {}", e ? "; " : "", expr(static_cast<uint32_t>(e)), rhs);
    }
    std::string parts, ins, children;
    for (size_t c = 0; c < r.parts.size(); ++c) parts += (c ? ", " : "") + expr(r.parts[c]);
    for (size_t q = 0; q < r.input_parts.size(); ++q) ins += fmt::format("{}part {}", q ? ", " : "", r.input_parts[q]);
    for (size_t c = 0; c < r.child_outputs.size(); ++c) children += fmt::format("{}output {}", c ? ", " : "", r.child_outputs[c]);
    std::string what = fmt::format("the map reads {}; children {}", ins, children);
    if (r.callee) {  // Note [Regular ascents]
      std::string pieces;
      for (size_t p = 0; p < r.pieces.size(); ++p)
        pieces += fmt::format("{}child {}{}", p ? ", " : "", r.pieces[p].child, r.pieces[p].reversed ? " reversed" : "");
      what = fmt::format("children the parts; the ascent calls a regular loop on {}", pieces);
    }
    out += fmt::format("{}  (regular levels: {}; recurse where {}, the argument where {} is {}; parts of lengths {}; {})\n", pad,
                       exprs, expr(r.recurse), expr(r.base_flags), r.base_when ? "T" : "F", parts, what);
  }

  void stmt(const Stmt& s, int indent) {
    std::string pad(indent, ' ');
    std::string args;
    for (size_t i = 0; i < s.uses.size(); ++i) args += (i ? ", " : "") + var(s.uses[i]);
    if (has_kernel(s.op) && s.kernel) return kernel(s, indent);
    if (s.op == Op::FilterGroup && s.filters) return filter_group(s, indent);
    if (s.op == Op::AppendChain && s.chain) return append_chain(s, indent);
    std::string lhs = s.op == Op::CheckLengths ? "" : fmt::format("{} : {} = ", var(s.dst), type_of(s.dst));
    std::string what = op_name(s.op);
    switch (s.op) {
      case Op::Lit: what += " " + lang::format_value(s.lit, s.type); break;
      case Op::Const: what += fmt::format(" {}", s.lit.as_int()); break;
      case Op::FnTag: what += fmt::format(" among {}", s.lit.length()); break;
      case Op::Global: what += fmt::format(" #{}", s.global); break;
      case Op::Prim: what += std::string(" ") + lang::core::prim_info(s.prim).name; break;
      case Op::Call: what += " " + prog.functions.at(s.func).name; break;
      default: break;
    }
    std::string dropped;  // Note [Releasing dead vectors]
    for (VarId v : s.releases) dropped += (dropped.empty() ? "  -- last read of " : ", ") + var(v);
    out += fmt::format("{}{}{}({}){}\n", pad, lhs, what, args, dropped);
    if (s.then_block) {
      out += pad + "  then:\n";
      block(*s.then_block, indent + 4);
    }
    if (s.else_block) {
      out += pad + "  else:\n";
      block(*s.else_block, indent + 4);
    }
    if (s.loop) {
      const RecursionLoop& l = *s.loop;
      out += fmt::format("{}  descend, once per recursion level ({} := the level's argument):\n", pad, var(l.param));
      block(l.prefix, indent + 4);
      out += fmt::format("{}    (instances that recurse: {}; if none, {} := nothing and finish)\n", pad,
                         var(l.prefix.result), var(l.branch));
      block(l.step, indent + 4);
      std::string saved;
      for (VarId v : l.saved) saved += (saved.empty() ? "" : ", ") + var(v);
      out += fmt::format("{}    (push [{}]; next level's argument: {})\n", pad, saved, var(l.step.result));
      out += fmt::format("{}  ascend, once per pushed level ({} := the result of the level below):\n", pad,
                         var(l.call_result));
      block(l.combine, indent + 4);
      out += fmt::format("{}    ({} := {})\n", pad, var(l.branch), var(l.combine.result));
      out += fmt::format("{}  finish every level:\n", pad);
      block(l.finish, indent + 4);
      if (l.laid_out) laid_out(*l.laid_out, pad);
      if (l.regular) regular(*l.regular, pad);
      if (l.partition) partition(*l.partition, pad);
    }
  }
};

}  // namespace

std::string print_program(const Program& p) {
  Printer pr{p};
  for (size_t i = 0; i < p.functions.size(); ++i) {
    const Function& f = p.functions[i];
    pr.fn = &f;
    std::string path = f.has_path ? ", " + pr.var(f.path) + " : rand path" : "";
    pr.out += fmt::format("{}function {}({} : {}{}) : {}\n", i == p.entry ? "entry " : "", f.name, pr.var(f.param),
                          lang::type_to_string(f.arg_type, {}), path, lang::type_to_string(f.result_type, {}));
    pr.block(f.body, 2);
    pr.out += "\n";
  }
  return pr.out;
}

}  // namespace ndp::flatten
