// The PTX of kernel bodies for sm_90 (checked by ptxas where it is installed): fused kernels,
// every one-node kernel the cuda backend runs, and element functions inside consumer programs.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <span>
#include <string>
#include <unistd.h>
#include <vector>

#include "codegen/kernel_ptx.h"
#include "runtime/gpu/consumer_program.h"
#include "tests/unit/codegen/kernel_bodies.h"
#include "tests/unit/codegen/ptxas.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;
using ndp::test::find_ptxas;

namespace {

/// The PTX sign-extends a 32-bit integer to 64 bits (as narrow gather positions are: a cvt, or
/// a widening multiply where the value only scales an address).
bool ptx_has_widening(const std::string& ptx) {
  return ptx.find("cvt.s64.s32") != std::string::npos || ptx.find("mul.wide.s32") != std::string::npos;
}

}  // namespace

TEST_CASE("kernels: PTX for sm_90 assembles with ptxas") {
  lang::TypeContext T;
  Chain c{{T.int_(), T.float_(), T.bool_(), T.f32()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
            VarId fi = prim(b, body, PrimId::ToFloat, T.float_(), {in[0]});
            VarId s = prim(b, body, PrimId::Mul, T.float_(), {fi, in[1]});
            VarId lt = prim(b, body, PrimId::Le, T.bool_(), {s, in[1]});
            VarId a = prim(b, body, PrimId::Xor, T.bool_(), {lt, in[2]});
            VarId i = prim(b, body, PrimId::Btoi, T.int_(), {a});
            VarId f3 = prim(b, body, PrimId::ToF32, T.f32(), {s});
            VarId g = prim(b, body, PrimId::Sub, T.f32(), {f3, in[3]});
            return std::vector<VarId>{prim(b, body, PrimId::Add, T.int_(), {i, in[0]}), a, g};
          }};
  BodyCase bc = kernel_of(T, c, 4, 1);
  // Inputs 1 and 3 read through positions (Note [Fused gathers]), input 3's i32 (Note [Narrow
  // gather positions]): two more parameters, and it must assemble too.
  // Also input 2 read at position 0 by every instance (Note [Broadcast inputs]): no positions.
  // And input 1 read as a regular elt view (Note [Regular elt views]): four int64 parameters.
  // And input 0 (an int) taken as the instance itself (Note [Iota inputs]): no parameter read.
  const flatten::GatheredInput gathered[] = {{1, false}, {3, true}}, broadcast[] = {{1, false}, {2, false, true}, {3, true}},
                               affine[] = {{1, false, false, true}, {3, true}},
                               iota[] = {{.input = 0, .iota = true}, {3, true}},
                               spread[] = {{.input = 1, .spread = true}, {.input = 2, .spread = true, .segments_of = 1}, {3, true}},
                               spread_apart[] = {{.input = 1, .spread = true}, {.input = 2, .spread = true}, {3, true}},
                               rank[] = {{.input = 0, .spread = true, .rank = true}, {.input = 2, .spread = true, .segments_of = 1}, {3, true}},
                               interleaved[] = {{.input = 1, .interleaved = true}, {3, true}},
                               affine2[] = {{.input = 1, .affine = true, .pow2 = true}, {3, true}},
                               interleaved2[] = {{.input = 1, .interleaved = true, .pow2 = true}, {3, true}};
  // And input 1 read through a view of two sources' blocks in turn (Note [Interleaved
  // blocks]): five int64 parameters, two divisions and a choice between the two addresses.
  // And the two views with divisors that are powers of two: shifts, no division.
  // And inputs 1 and 2 read at each element's segment (Note [Spread inputs]), searched for once
  // where input 2 names input 1's segments, twice where each has its own.
  for (std::span<const flatten::GatheredInput> g :
       {std::span<const flatten::GatheredInput>(), std::span<const flatten::GatheredInput>(gathered),
        std::span<const flatten::GatheredInput>(broadcast), std::span<const flatten::GatheredInput>(affine),
        std::span<const flatten::GatheredInput>(iota), std::span<const flatten::GatheredInput>(spread),
        std::span<const flatten::GatheredInput>(spread_apart), std::span<const flatten::GatheredInput>(rank),
        std::span<const flatten::GatheredInput>(interleaved), std::span<const flatten::GatheredInput>(affine2),
        std::span<const flatten::GatheredInput>(interleaved2)}) {
    CAPTURE(g.size());
    size_t positions = 0;
    for (const flatten::GatheredInput& gi : g)
      positions += gi.broadcast || gi.iota || gi.segments_of > 0 ? 0 : gi.interleaved ? 5 : gi.affine ? 4 : gi.spread ? 3 : 1;
    const std::string ptx = codegen::compile_ptx(*bc.body, g);
    // Only the narrow positions are widened (the body converts nothing from i32).
    CHECK(ptx_has_widening(ptx) == !g.empty());
    if (!g.empty() && (g[0].iota || g[0].rank)) {  // input 0's pointer is never read; the others' are
      CHECK(ptx.find("ndp_kernel_param_1]") == std::string::npos);
      CHECK(ptx.find("ndp_kernel_param_2]") != std::string::npos);
    }
    if (!g.empty() && (g[0].affine || g[0].interleaved) && g[0].pow2) {  // shifts by the divisors' trailing zeros
      CHECK(ptx.find("div.u64") == std::string::npos);
      CHECK(ptx.find("shr.u64") != std::string::npos);
    }
    if (!g.empty() && g[0].affine && !g[0].pow2) {  // the view's position: a division by its c, no load of positions
      CHECK(ptx.find("div.u64") != std::string::npos);
      CHECK(occurrences(ptx, "ld.global") < occurrences(codegen::compile_ptx(*bc.body, gathered), "ld.global"));
    }
    if (!g.empty() && g[0].interleaved && !g[0].pow2) {
      CHECK(occurrences(ptx, "div.u64") >= 2);
      CHECK(ptx.find("selp.b64") != std::string::npos);
    }
    if (!g.empty() && g[0].spread && !g[0].rank) {  // a division where the segments are regular, else a search
      CHECK(ptx.find("div.u64") != std::string::npos);
      const bool shared = g[1].segments_of == 1;
      const int divisions = occurrences(ptx, "div.u64"), apart = occurrences(codegen::compile_ptx(*bc.body, spread_apart), "div.u64");
      CHECK((shared ? divisions < apart : divisions == apart));
    }
    CHECK(ptx.find("ndp_kernel_param_" + std::to_string(1 + 4 + positions + 2)) != std::string::npos);
    CHECK(ptx.find("ndp_kernel_param_" + std::to_string(1 + 4 + positions + 3)) == std::string::npos);
    CHECK(ptx.find(".target sm_90") != std::string::npos);
    CHECK(ptx.find(".entry ndp_kernel") != std::string::npos);
    CHECK(ptx.find("%tid.x") != std::string::npos);
    CHECK(ptx.find("%ctaid.x") != std::string::npos);
    std::string ptxas = find_ptxas();
    if (ptxas.empty()) {
      MESSAGE("ptxas not found (NDP_PTXAS, PATH, /usr/local/cuda/bin): PTX not assembled");
      continue;
    }
    CHECK_MESSAGE(test::ptxas_accepts(ptxas, ptx), "ptxas rejected:\n" << ptx);
  }
}

TEST_CASE("kernels: a spread input over the segments of a later or unspread input is refused") {
  lang::TypeContext T;
  Chain c{{T.int_(), T.int_()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
            VarId s = prim(b, body, PrimId::Add, T.int_(), {in[0], in[1]});
            return std::vector<VarId>{prim(b, body, PrimId::Mul, T.int_(), {s, in[1]})};
          }};
  BodyCase bc = kernel_of(T, c, 2, 1);
  // segments_of names gathered[segments_of - 1], which must come earlier and be a spread itself.
  const flatten::GatheredInput later[] = {{.input = 0, .spread = true, .segments_of = 2}, {.input = 1, .spread = true}},
                               unspread[] = {{.input = 0, .affine = true}, {.input = 1, .spread = true, .segments_of = 1}},
                               good[] = {{.input = 0, .spread = true}, {.input = 1, .spread = true, .segments_of = 1}};
  CHECK_THROWS_WITH_AS(codegen::compile_ptx(*bc.body, later), doctest::Contains("segments of a later or other input"),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(codegen::compile_ptx(*bc.body, unspread), doctest::Contains("segments of a later or other input"),
                       std::runtime_error);
  CHECK(codegen::compile_ptx(*bc.body, good).find(".entry ndp_kernel") != std::string::npos);
}

// The cuda backend runs every elementwise primitive that kernel_prim_ok or
// kernel_prim_fallible accepts as a one-node kernel (exec/cuda/lifted_prims.cpp); each such
// kernel (the math functions with libdevice linked in) must assemble for sm_90.
TEST_CASE("kernels: every one-node kernel the cuda backend can generate assembles with ptxas") {
  lang::TypeContext T;
  std::vector<const lang::Type*> plain = {T.int_(), T.float_(), T.bool_(), T.char_(), T.i32(), T.f32()};
  char dir[] = "/tmp/ndp_onenode_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  int count = 0, without_libdevice = 0;
  for (int p = 0; p < static_cast<int>(lang::core::PrimId::Count_); ++p) {
    auto id = static_cast<lang::core::PrimId>(p);
    int arity = lang::core::prim_info(id).arity;
    if (arity < 1 || arity > 3) continue;
    std::vector<size_t> pick(static_cast<size_t>(arity), 0);
    for (;;) {
      std::vector<const lang::Type*> args;
      for (size_t i : pick) args.push_back(plain[i]);
      for (const lang::Type* r : plain) {
        if (!flatten::kernel_prim_ok(id, args, r) && !flatten::kernel_prim_fallible(id, args, r)) continue;
        flatten::KernelBody k = flatten::one_node_kernel(id, args, r);
        std::string ptx;
        try {
          ptx = codegen::compile_ptx(k);
        } catch (const std::runtime_error& e) {
          // A build without the CUDA toolkit has no libdevice: math kernels are refused, by name.
          if (codegen::has_libdevice() || std::string(e.what()).find("without libdevice") == std::string::npos) throw;
          ++without_libdevice;
          continue;
        }
        std::ofstream(std::string(dir) + "/k" + std::to_string(count++) + ".ptx") << ptx;
      }
      size_t d = 0;
      while (d < pick.size() && ++pick[d] == plain.size()) pick[d++] = 0;
      if (d == pick.size()) break;
    }
  }
  CHECK(count > 50);  // LLVM generated every kernel (compile_ptx throws otherwise)
  if (without_libdevice > 0) MESSAGE(without_libdevice << " math kernels skipped: this build has no libdevice");
  std::string ptxas = find_ptxas();
  if (ptxas.empty()) {
    MESSAGE("ptxas not found (NDP_PTXAS, PATH, /usr/local/cuda/bin): PTX generated but not assembled");
  } else {
    std::string cmd = std::string("for f in ") + dir + "/*.ptx; do " + ptxas + " -arch=sm_90 -o /dev/null $f || exit 1; done";
    CHECK(std::system(cmd.c_str()) == 0);
  }
  std::system((std::string("rm -rf ") + dir).c_str());
}

// The consumer kernels' element function (compile_element_ptx) for every element type a
// reduction, scan or pack consumes, put into the consumer kernels of its type as the cuda backend
// does (Note [Consumer programs] in runtime/gpu/consumer_program.h): the program keeps just the
// entries its use runs, and ptxas compiles it as the driver's JIT does, as one program, where no
// call passes the element function's result through the stack.
TEST_CASE("kernels: element functions compile into their consumer programs with no call through the stack") {
  lang::TypeContext T;
  using runtime::gpu::ConsumerUse;
  struct Case {
    const lang::Type* t;
    const char* image;
    runtime::gpu::ConsumerKernels use;
  } cases[] = {{T.int_(), "i64", runtime::gpu::consumer_kernels(ConsumerUse::ReduceOne, NDP_OP_PLUS, NDP_I64)},
               {T.float_(), "f64", runtime::gpu::consumer_kernels(ConsumerUse::ReduceSegments, NDP_OP_PLUS, NDP_F64)},
               {T.i32(), "i32", runtime::gpu::consumer_kernels(ConsumerUse::ScanSegments, NDP_OP_MAX, NDP_I32)},
               {T.f32(), "f32", runtime::gpu::consumer_kernels(ConsumerUse::ScanOne, NDP_OP_MIN, NDP_F32)},
               {T.bool_(), "bool", runtime::gpu::consumer_kernels(ConsumerUse::Pack, NDP_OP_OR, NDP_F64)},
               {T.char_(), "char", runtime::gpu::consumer_kernels(ConsumerUse::ReduceSegments, NDP_OP_MAX, NDP_CHAR)}};
  char dir[] = "/tmp/ndp_element_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  std::string ptxas = find_ptxas();
  for (const Case& c : cases) {
    const std::string image = c.image;
    CAPTURE(image);
    // max(x, x): an output of the type read from an input of the type (char and bool too).
    flatten::KernelBody k = c.t->kind == lang::TypeKind::Bool ? flatten::one_node_kernel(PrimId::Not, {c.t}, c.t)
                         : c.t->kind == lang::TypeKind::Char
                             ? flatten::one_node_kernel(PrimId::Select, {T.bool_(), c.t, c.t}, c.t)
                             : flatten::one_node_kernel(PrimId::Add, {c.t, c.t}, c.t);
    // Also with input 0 read through int64 and i32 positions (Note [Fused gathers] in
    // exec/cuda/kernels.h, Note [Narrow gather positions] in exec/cuda/device_vec.h).
    // And input 0 spread over segments (Note [Spread inputs]), or for an int the element's
    // place in its segment, computed.
    const flatten::GatheredInput wide[] = {{0, false}}, narrow[] = {{0, true}}, spread[] = {{.input = 0, .spread = true}},
                                 rank[] = {{.input = 0, .spread = true, .rank = true}},
                                 both[] = {{.input = 0, .spread = true}, {.input = 1, .spread = true, .segments_of = 1, .rank = true}};
    const bool ints = c.t->kind == lang::TypeKind::Int;
    for (std::span<const flatten::GatheredInput> g :
         {std::span<const flatten::GatheredInput>(), std::span<const flatten::GatheredInput>(wide),
          std::span<const flatten::GatheredInput>(narrow), std::span<const flatten::GatheredInput>(spread),
          ints ? std::span<const flatten::GatheredInput>(rank) : std::span<const flatten::GatheredInput>(),
          ints ? std::span<const flatten::GatheredInput>(both) : std::span<const flatten::GatheredInput>()}) {
      CAPTURE(g.size());
      const bool narrowed = !g.empty() && g[0].narrow;
      CAPTURE(narrowed);
      std::string ptx = codegen::compile_element_ptx(k, g);
      if (!g.empty() && g[0].spread)  // the segment searched for, inlined (a division where regular)
        CHECK((ptx.find("div.u64") != std::string::npos && ptx.find("call") == std::string::npos));
      // Narrow positions load 4 bytes and widen them; int64 ones load 8 as they are.
      CHECK(ptx_has_widening(ptx) == narrowed);
      CHECK(ptx.find(".visible .func  (.param .align 8 .b8 func_retval0[64]) ndp_elements(") != std::string::npos);
      // With a gather, the streamed inputs and positions load evict-first (Note [Streamed
      // inputs beside gathers]); without, nothing does.
      // (A spread input's values are not streamed: only the other inputs, where there are any.)
      CHECK((ptx.find("ld.global.cs.nc.") != std::string::npos) ==
            (!g.empty() && (!g[0].spread || k.inputs.size() > g.size())));
      std::string_view consumers = runtime::gpu::consumer_ptx(c.use.image);
      if (consumers.empty()) {
        MESSAGE("a build without the consumer kernels: no program to put the element function in");
        continue;
      }
      runtime::cuda::Result<std::string> program = runtime::gpu::consumer_program(consumers, ptx, c.use.entries);
      REQUIRE_MESSAGE(program.ok(), program.status().message());
      // The function, internal to the program, in place of the declaration; only the use's entries.
      CHECK(program->find(".extern .func") == std::string::npos);
      CHECK(program->find("\n.func  (.param .align 8 .b8 func_retval0[64]) ndp_elements(") != std::string::npos);
      size_t entries = 0;
      for (size_t at = program->find(".entry "); at != std::string::npos; at = program->find(".entry ", at + 1)) ++entries;
      CHECK(entries == c.use.entries.size());
      for (const std::string& e : c.use.entries) CHECK(program->find(".entry " + e + "(") != std::string::npos);
      if (ptxas.empty()) continue;
      std::string file = std::string(dir) + "/" + c.image + ".ptx", log = std::string(dir) + "/" + c.image + ".log";
      std::ofstream(file) << program.value();
      CHECK(std::system((ptxas + " -arch=sm_90 -v -o /dev/null " + file + " > " + log + " 2>&1").c_str()) == 0);
      std::ifstream in(log);
      // ptxas reports each function's frame: the element function has none, and no kernel's
      // holds the 64-byte result (a kernel may keep a few bytes of its own).
      std::string line, function;
      int frames = 0;
      while (std::getline(in, line)) {
        if (line.find("Function properties for") != std::string::npos) function = line;
        if (line.find("bytes stack frame") == std::string::npos) continue;
        ++frames;
        const int bytes = std::atoi(line.c_str() + line.find_first_not_of(' '));
        CAPTURE(function);
        CAPTURE(line);
        CHECK(bytes < 64);
        if (function.find("ndp_elements") != std::string::npos) CHECK(bytes == 0);
      }
      CHECK(frames >= static_cast<int>(c.use.entries.size()));
    }
  }
  std::system((std::string("rm -rf ") + dir).c_str());
}
