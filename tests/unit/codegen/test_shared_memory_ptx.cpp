// Kernels that use a block's shared memory for their instances' rows: a loop's staged rows
// (Note [Staged rows] in codegen/staged_rows.h), a map kernel's block rows (Note [Block rows]
// in codegen/block_rows.h) and a grid's tiled fold (Note [Tiled folds] in
// flatten/tiled_folds.h): which bodies take each, and PTX that ptxas assembles.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/kernel_ptx.h"
#include "flatten/tiled_folds.h"
#include "tests/unit/codegen/ptxas.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using ndp::test::flat_ir::Flattened;
using ndp::test::check_assembles;
using ndp::test::flat_ir::occurrences;

namespace {

/// The body of the first statement of kind `op`, in any block.
const flatten::KernelBody* first_kernel(const flatten::Block& b, flatten::Op op) {
  for (const flatten::Stmt& s : b.stmts) {
    if (s.op == op) return s.kernel.get();
    for (const flatten::Block* sub : {s.then_block.get(), s.else_block.get()})
      if (sub != nullptr)
        if (const flatten::KernelBody* k = first_kernel(*sub, op)) return k;
    if (s.loop)
      for (const flatten::Block* sub : {&s.loop->prefix, &s.loop->step, &s.loop->combine, &s.loop->finish})
        if (const flatten::KernelBody* k = first_kernel(*sub, op)) return k;
  }
  return nullptr;
}

const flatten::KernelBody* first_kernel(const flatten::Program& p, flatten::Op op) {
  for (const flatten::Function& f : p.functions)
    if (const flatten::KernelBody* k = first_kernel(f.body, op)) return k;
  return nullptr;
}

/// A loop that appends to its state (Note [Appended sequences in loop kernels]).
const char* kEvens =
    "function evens(xs, i, acc) = if i >= #xs then acc "
    "else evens(xs, i + 1, (if rem(xs[i], 2) == 0 then acc ++ [xs[i]] else acc)) $ "
    "let rows = [[1, 2], [4]] in {evens(r, 0, [] int) : r in rows} $";

/// A placing loop: `next[d]` is both updated and stored as the key's place.
const char* kPlacing =
    "function place_loop(ds, i, next, places) = if i == #ds then places "
    "else let d = ds[i] in place_loop(ds, i + 1, rep(next, next[d] + 1, d), rep(places, next[d], i)) $ "
    "let rows = [[1, 0], [0, 0, 1]] in {place_loop(d, 0, [0, 5], dist(0, #d)) : d in rows} $";

const char* kCounting =
    "function count_loop(ds, i, counts) = if i == #ds then counts "
    "else count_loop(ds, i + 1, rep(counts, counts[ds[i]] + 1, ds[i])) $ ";

}  // namespace

TEST_CASE("staged rows: a loop's own rows and the rows it passes on are staged, with a fallback to global memory") {
  // ds: a shared sequence's row, passed on unchanged; counts: each instance's own, written.
  Flattened f(std::string(kCounting) + "let rows = [[1, 2], [0, 0, 3]] in {count_loop(d, 0, dist(0, 4)) : d in rows} $", true);
  const flatten::KernelBody* k = first_kernel(f.flat, flatten::Op::LoopKernel);
  REQUIRE(k != nullptr);
  std::vector<flatten::KernelBody::StagedSeq> staged = k->staged_seqs();
  REQUIRE(staged.size() == 2);
  CHECK(k->seqs[staged[0].seq].written != k->seqs[staged[1].seq].written);
  std::string ptx = codegen::compile_ptx(*k);
  CHECK(ptx.find("%dynamic_smem_size") != std::string::npos);  // a block checks what fits
  CHECK(occurrences(ptx, "bar.sync") >= 2);                      // after the copy in, before the copy out
  CHECK(ptx.find("st.global") != std::string::npos);             // the written rows go back
  // The loop in two versions: the counting step's reads and write in shared memory where the
  // rows fit, in global memory where they do not.
  CHECK(ptx.find("ld.global.u64") != std::string::npos);
  CHECK(occurrences(ptx, "ld.u64") == 0);  // no generic access to the rows
  CHECK(occurrences(ptx, "st.u64") == 0);
  check_assembles(ptx);
  // A map kernel stages nothing (its block's rows are block rows instead); a loop stages no
  // sequence it appends to.
  Flattened map("let rows = [[1, 2], [3]] in {sum(r) : r in rows} at thread $", true);
  const flatten::KernelBody* m = first_kernel(map.flat, flatten::Op::MapKernel);
  REQUIRE(m != nullptr);
  CHECK(m->staged_seqs().empty());
  CHECK(k->block_rows().empty());  // nor has a loop block rows
  Flattened evens(kEvens, true);
  const flatten::KernelBody* e = first_kernel(evens.flat, flatten::Op::LoopKernel);
  REQUIRE(e != nullptr);
  REQUIRE(e->staged_seqs().size() == 1);
  CHECK_FALSE(e->seqs[e->staged_seqs()[0].seq].appended);
}

TEST_CASE("staged rows: a written sequence of regular rows takes its one length, as a thread's loop or a warp's") {
  // Note [Regular rows in kernels]: counts, dist(0, 4) in every instance, is written in place.
  Flattened f(std::string(kCounting) + "let rows = [[1, 2], [0, 0, 3]] in {count_loop(d, 0, dist(0, 4)) : d in rows} $", true);
  const flatten::KernelBody* k = first_kernel(f.flat, flatten::Op::LoopKernel);
  REQUIRE(k != nullptr);
  REQUIRE(k->multiprefix());
  uint64_t written = 0;
  for (const flatten::KernelBody::StagedSeq& s : k->staged_seqs())
    if (k->seqs[s.seq].written) written |= uint64_t{1} << s.seq;
  REQUIRE(written != 0);
  for (int lanes : {1, 32}) {
    CAPTURE(lanes);
    const std::string plain = codegen::compile_ptx(*k, {}, lanes);
    const std::string regular = codegen::compile_ptx(*k, {}, lanes, flatten::KernelForm::Instances, {.regular = written});
    CHECK(occurrences(regular, "ld.global") < occurrences(plain, "ld.global"));  // no offsets read
    check_assembles(regular);
  }
  // Written rows of zeros (Note [Zeroed rows]): zeroed in shared memory, or in global memory
  // where a block's rows do not fit, not copied in.
  for (int lanes : {1, 32}) {
    CAPTURE(lanes);
    const std::string plain = codegen::compile_ptx(*k, {}, lanes);
    const std::string zeroed = codegen::compile_ptx(*k, {}, lanes, flatten::KernelForm::Instances, {.zeroed = written});
    CHECK(occurrences(zeroed, "ld.global") < occurrences(plain, "ld.global"));
    CHECK(occurrences(zeroed, "st.shared") > 0);
    check_assembles(zeroed);
    check_assembles(codegen::compile_ptx(*k, {}, lanes, flatten::KernelForm::Instances, {.regular = written, .zeroed = written}));
  }
  // Written rows copied from sources of their own (Note [Sourced rows]): a pointer more for each
  // written component, read where the copy was; never both zeroed and sourced.
  size_t written_components = 0;
  for (uint32_t q = 0; q < k->seqs.size(); ++q)
    if (written >> q & 1) written_components += k->seqs[q].components.size();
  for (int lanes : {1, 32}) {
    CAPTURE(lanes);
    const std::string plain = codegen::compile_ptx(*k, {}, lanes);
    const std::string sourced = codegen::compile_ptx(*k, {}, lanes, flatten::KernelForm::Instances, {.sourced = written});
    CHECK(occurrences(sourced, ".param .u64") == occurrences(plain, ".param .u64") + written_components);
    CHECK(occurrences(sourced, "ld.param") > occurrences(plain, "ld.param"));  // the sources are read
    check_assembles(sourced);
    check_assembles(codegen::compile_ptx(*k, {}, lanes, flatten::KernelForm::Instances, {.regular = written, .sourced = written}));
    CHECK_THROWS(codegen::compile_ptx(*k, {}, lanes, flatten::KernelForm::Instances, {.zeroed = written, .sourced = written}));
  }
  // Only a staged sequence the loop writes can be zeroed or sourced.
  uint64_t read_only = 0;
  for (const flatten::KernelBody::StagedSeq& s : k->staged_seqs())
    if (!k->seqs[s.seq].written) read_only |= uint64_t{1} << s.seq;
  REQUIRE(read_only != 0);
  CHECK_THROWS(codegen::compile_ptx(*k, {}, 1, flatten::KernelForm::Instances, {.zeroed = read_only}));
  CHECK_THROWS(codegen::compile_ptx(*k, {}, 1, flatten::KernelForm::Instances, {.sourced = read_only}));
  // A sequence a loop appends to has slots with offsets of their own.
  Flattened evens(kEvens, true);
  const flatten::KernelBody* e = first_kernel(evens.flat, flatten::Op::LoopKernel);
  REQUIRE(e != nullptr);
  uint64_t appended = 0;
  for (uint32_t q = 0; q < e->seqs.size(); ++q)
    if (e->seqs[q].appended) appended |= uint64_t{1} << q;
  REQUIRE(appended != 0);
  CHECK_THROWS(codegen::compile_ptx(*e, {}, 1, flatten::KernelForm::Instances, {.regular = appended}));
}

TEST_CASE("block rows: a map kernel's own rows read whole, copied by its block on up to 16 lanes") {
  // SpMV: the matrix's rows are its own and read whole; x is a free sequence, read at its id.
  Flattened spmv("let m = [[(0, 2.0), (1, 1.0)], [(1, 3.0)]]; x = [1.0, 2.0] in "
                 "{sum({v * x[c] : (c, v) in row}) : row in m} at subwarp(4) $",
                 true);
  const flatten::KernelBody* k = first_kernel(spmv.flat, flatten::Op::MapKernel);
  REQUIRE(k != nullptr);
  REQUIRE(k->block_rows().size() == 1);
  CHECK(k->seqs[k->block_rows()[0].seq].components.size() == 2);  // columns and values
  CHECK(k->nodes[k->block_rows()[0].row].kind == flatten::KernelNode::Kind::Instance);
  for (int lanes : {1, 4, 16}) {
    CAPTURE(lanes);
    std::string ptx = codegen::compile_ptx(*k, {}, lanes);
    CHECK(ptx.find("%dynamic_smem_size") != std::string::npos);  // a block checks what fits
    CHECK(occurrences(ptx, "bar.sync") == 1);                      // after the copy, before any instance
    CHECK(ptx.find("bar.red") == std::string::npos);               // its own rows: consecutive
    check_assembles(ptx);
  }
  // From a warp on, the loads take whole sectors: no copy.
  CHECK(codegen::compile_ptx(*k, {}, 32).find("%dynamic_smem_size") == std::string::npos);
  // Not block rows: a row read at one index only (not whole); rows read whole by a body that
  // gathers from no other sequence (a sum of each row: the copy would only cost).
  for (const char* src : {"let rows = [[1, 2], [3]]; tb = [4, 5] in {r[0] + sum({tb[x] : x in r}) : r in rows} at subwarp(4) $",
                          "let rows = [[1, 2], [3]] in {sum(r) : r in rows} at subwarp(4) $"}) {
    CAPTURE(src);
    Flattened other(src, true);
    const flatten::KernelBody* o = first_kernel(other.flat, flatten::Op::MapKernel);
    REQUIRE(o != nullptr);
    CHECK(o->block_rows().empty());
    CHECK(codegen::compile_ptx(*o, {}, 4).find("%dynamic_smem_size") == std::string::npos);
  }
  // A row given by an id input (a free sequence's, here the same row for every instance): the
  // block checks that its ids are consecutive, with a barrier that ands every thread's answer.
  Flattened pairs("let xs = [1, 0, 1]; tb = [4, 5] in {sum({y * tb[x] : x in xs}) : y in xs} at subwarp(4) $", true);
  const flatten::KernelBody* p = first_kernel(pairs.flat, flatten::Op::MapKernel);
  REQUIRE(p != nullptr);
  REQUIRE(p->block_rows().size() == 1);
  CHECK(p->nodes[p->block_rows()[0].row].kind == flatten::KernelNode::Kind::Input);
  std::string ptx = codegen::compile_ptx(*p, {}, 4);
  CHECK(ptx.find("bar.red.and") != std::string::npos);
  check_assembles(ptx);
}

TEST_CASE("tiled folds: the shape of a grid's fold, and the tiled kernel") {
  Flattened mm("let a = [[1, 2], [3, 4]]; bt = [[5, 6], [7, 8]] in {{sum({x * y : x in r; y in c}) : c in bt} : r in a} $",
               true);
  const flatten::KernelBody* k = first_kernel(mm.flat, flatten::Op::MapKernel);
  REQUIRE(k != nullptr);
  std::optional<flatten::TiledFold> shape = flatten::tiled_fold(*k);
  REQUIRE(shape.has_value());
  CHECK(shape->rows < shape->columns);
  REQUIRE(shape->tiles.size() == 2);
  CHECK(shape->tiles[0].columns != shape->tiles[1].columns);
  std::string ptx = codegen::compile_ptx(*k, {}, 1, flatten::KernelForm::Tiled);
  CHECK(ptx.find("bar.red.and") != std::string::npos);  // the block decides together
  CHECK(ptx.find(".minnctapersm 3") != std::string::npos);
  CHECK(ptx.find("ld.shared") != std::string::npos);
  check_assembles(ptx);
  CHECK_THROWS(codegen::compile_ptx(*k, {}, 8, flatten::KernelForm::Tiled));  // not on lanes
  // Not a tiled fold: an index that is not the fold's own, two folds.
  for (const char* src : {
           "let a = [[1, 2], [3, 4]]; bt = [[5, 6], [7, 8]] in {{sum({x * c[1] : x in r}) : c in bt} : r in a} $",
           "let a = [[1, 2], [3, 4]]; bt = [[5, 6], [7, 8]] in "
           "{{sum({x * y : x in r; y in c}) + max_val(c) : c in bt} : r in a} $"}) {
    CAPTURE(src);
    Flattened other(src, true);
    const flatten::KernelBody* o = first_kernel(other.flat, flatten::Op::MapKernel);
    REQUIRE(o != nullptr);
    CHECK_FALSE(flatten::tiled_fold(*o).has_value());
    CHECK_THROWS(codegen::compile_ptx(*o, {}, 1, flatten::KernelForm::Tiled));
  }
}

TEST_CASE("staged rows: a warp's loop stages no own-slot sequence, a thread's loop does") {
  Flattened f(kPlacing, true);
  const flatten::KernelBody* k = first_kernel(f.flat, flatten::Op::LoopKernel);
  REQUIRE(k != nullptr);
  REQUIRE(k->multiprefix());
  const std::vector<flatten::KernelBody::StagedSeq> thread = k->staged_seqs_on(1), warp = k->staged_seqs_on(32);
  CHECK(thread.size() == k->staged_seqs().size());
  REQUIRE(warp.size() + 1 == thread.size());
  for (const flatten::KernelBody::StagedSeq& s : thread) {
    const bool own_slot = k->seqs[s.seq].written && k->multiprefix()->histogram_of(s.seq) == nullptr;
    CHECK(own_slot == std::none_of(warp.begin(), warp.end(), [&](const auto& w) { return w.seq == s.seq; }));
  }
  // The lanes of one index by ballots of its bits, match.any only where the histogram's length
  // has too many (Note [Peers by ballots] in codegen/warp_ops.cpp), in each of the loop's two
  // versions (rows in shared memory or not).
  const std::string warp_ptx = codegen::compile_ptx(*k, {}, 32);
  CHECK(occurrences(warp_ptx, "match.any.sync") == 2);
  CHECK(occurrences(warp_ptx, "vote.sync.ballot") >= 4);
  check_assembles(warp_ptx);
  // Its own-slot rows of zeros, not staged, are zeroed in global memory by the warp (Note
  // [Zeroed rows] in codegen/staged_rows.h).
  uint64_t own = 0;
  for (const flatten::KernelBody::StagedSeq& s : thread)
    if (std::none_of(warp.begin(), warp.end(), [&](const auto& w) { return w.seq == s.seq; })) own |= uint64_t{1} << s.seq;
  const std::string zeroed = codegen::compile_ptx(*k, {}, 32, flatten::KernelForm::Instances, {.zeroed = own});
  CHECK(occurrences(zeroed, "st.global") > occurrences(warp_ptx, "st.global"));
  check_assembles(zeroed);
  // Or copied there from their sources (Note [Sourced rows]).
  const std::string sourced = codegen::compile_ptx(*k, {}, 32, flatten::KernelForm::Instances, {.sourced = own});
  CHECK(occurrences(sourced, "ld.global") > occurrences(warp_ptx, "ld.global"));
  check_assembles(sourced);
}

TEST_CASE("multiprefix loops: a histogram only added to takes an atomic add a lane, one whose value is used its peers") {
  // Note [Counted histograms] in codegen/kernel_ir.cpp.
  Flattened f(std::string(kCounting) + "let rows = [[1, 0, 1], [2]] in {count_loop(d, 0, dist(0, 3)) : d in rows} $", true);
  const flatten::KernelBody* k = first_kernel(f.flat, flatten::Op::LoopKernel);
  REQUIRE(k != nullptr);
  REQUIRE(k->multiprefix());
  const std::string counting = codegen::compile_ptx(*k, {}, 32);
  // In each version (staged in shared memory, or left in global memory), in two 32-bit halves.
  CHECK(occurrences(counting, "atom.shared.add.u32") == 2);
  CHECK(occurrences(counting, "atom.global.add.u32") + occurrences(counting, "atom.add.u32") == 2);
  CHECK(occurrences(counting, "match.any.sync") == 0);
  check_assembles(counting);
  // A placing loop's `next[d]` is stored as a key's place: its lanes still find their peers.
  Flattened g(kPlacing, true);
  const flatten::KernelBody* placing = first_kernel(g.flat, flatten::Op::LoopKernel);
  REQUIRE(placing != nullptr);
  REQUIRE(placing->multiprefix());
  const std::string placed = codegen::compile_ptx(*placing, {}, 32);
  CHECK(occurrences(placed, "atom.shared.add") + occurrences(placed, "atom.global.add") + occurrences(placed, "atom.add") == 0);
  CHECK(occurrences(placed, "vote.sync.ballot") >= 4);
}
