// Vec: conversions to and from Values for every kind of type, and the structural operations.
#include <doctest/doctest.h>

#include "codegen/cpu/vec.h"
#include "tests/unit/cpu/cpu_helpers.h"

using namespace ndp;
using namespace ndp::test::cpu;
using namespace ndp::codegen::cpu;

namespace {

void roundtrip(lang::TypeContext& T, const Type* t, const std::vector<Value>& vs) {
  Vec v = from_values(T, t, vs);
  CHECK(v.size() == static_cast<int64_t>(vs.size()));
  CHECK(v.type() == t);
  auto back = to_values(v);
  REQUIRE(back.size() == vs.size());
  for (size_t i = 0; i < vs.size(); ++i) CHECK(lang::values_equal(back[i], vs[i]));
}

}  // namespace

TEST_CASE("Vec: scalars of every type round-trip") {
  lang::core::Program prog;
  auto& T = prog.types;
  roundtrip(T, T.int_(), {I(1), I(-5), I(INT64_MIN)});
  roundtrip(T, T.float_(), {F(1.5), F(-0.0)});
  roundtrip(T, T.bool_(), {B(true), B(false)});
  roundtrip(T, T.char_(), {Value::char_('a'), Value::char_(255)});
  roundtrip(T, T.i32(), {Value::i32(-7)});
  roundtrip(T, T.f32(), {Value::f32(2.5f)});
  roundtrip(T, T.stream(), {Value::stream(2)});
  roundtrip(T, T.int_(), {});
}

TEST_CASE("Vec: nested sequences, tuples and datatypes round-trip") {
  lang::core::Program prog;
  auto& T = prog.types;
  const Type* nested = T.seq(T.seq(T.int_()));
  roundtrip(T, nested, {seq({ints({1, 2}), ints({}), ints({3})}), seq({}), seq({ints({})})});
  const Type* pairs = T.seq(T.pair(T.int_(), T.seq(T.char_())));
  roundtrip(T, pairs, {seq({Value::pair(I(1), Value::string("ab")), Value::pair(I(2), Value::string(""))}), seq({})});
  lang::DataDef* def = T.new_datadef("box");
  def->params = {lang::TypeClass::Any};
  def->fields = T.pair(T.var(0, lang::TypeClass::Any), T.int_());
  const Type* box = T.data(def, {T.float_()});
  roundtrip(T, T.seq(box), {seq({Value::data(def, Value::pair(F(1.5), I(3)))}), seq({})});
  Vec v = from_values(T, box, std::vector<Value>{Value::data(def, Value::pair(F(0.5), I(9)))});
  CHECK(v.fields().type() == T.pair(T.float_(), T.int_()));
}

TEST_CASE("Vec: structure is shared, not copied") {
  lang::core::Program prog;
  auto& T = prog.types;
  Vec v = from_values(T, T.seq(T.int_()), std::vector<Value>{ints({1, 2, 3}), ints({4})});
  CHECK(v.total() == 4);
  CHECK(v.offsets()[1] == 3);
  Vec e = v.elems();
  CHECK(e.data<int64_t>() == v.elems().data<int64_t>());
}

TEST_CASE("Vec: take, concat and pack move whole nested instances") {
  lang::core::Program prog;
  auto& T = prog.types;
  const Type* t = T.pair(T.seq(T.seq(T.int_())), T.bool_());
  std::vector<Value> vs = {Value::pair(seq({ints({1}), ints({2, 3})}), B(true)), Value::pair(seq({}), B(false)),
                           Value::pair(seq({ints({}), ints({4, 5, 6})}), B(true))};
  Vec v = from_values(T, t, vs);
  std::vector<int64_t> idx = {2, 2, 0, 1};
  auto taken = to_values(take(v, idx));
  REQUIRE(taken.size() == 4);
  CHECK(lang::values_equal(taken[0], vs[2]));
  CHECK(lang::values_equal(taken[1], vs[2]));
  CHECK(lang::values_equal(taken[2], vs[0]));
  CHECK(lang::values_equal(taken[3], vs[1]));

  auto joined = to_values(append(v, take(v, std::vector<int64_t>{1})));
  REQUIRE(joined.size() == 4);
  CHECK(lang::values_equal(joined[3], vs[1]));

  bool flags[3] = {false, true, true};
  auto packed = to_values(pack(v, flags));
  REQUIRE(packed.size() == 2);
  CHECK(lang::values_equal(packed[0], vs[1]));
  CHECK(lang::values_equal(packed[1], vs[2]));

  std::unique_ptr<bool[]> fl(new bool[100000]);
  int64_t expect = 0;
  for (int i = 0; i < 100000; ++i) expect += (fl[i] = (i * 7919) % 3 == 0);
  auto pos = true_positions(fl.get(), 100000);
  CHECK(static_cast<int64_t>(pos.size()) == expect);
  CHECK(pos[1] == 3);
}

TEST_CASE("Vec: interleave and merge_flags build instances from several Vecs, at every element type") {
  lang::core::Program prog;
  auto& T = prog.types;
  // Sequences of scalars (copied segment by segment), of sequences and of pairs (through the
  // element index), and plain scalars.
  std::vector<const Type*> types = {T.seq(T.int_()), T.seq(T.seq(T.int_())), T.pair(T.seq(T.char_()), T.float_()),
                                    T.int_()};
  std::vector<std::vector<Value>> a = {
      {ints({1, 2}), ints({}), ints({3})},
      {seq({ints({1}), ints({})}), seq({}), seq({ints({2, 3})})},
      {Value::pair(Value::string("ab"), F(1.0)), Value::pair(Value::string(""), F(2.0)),
       Value::pair(Value::string("c"), F(3.0))},
      {I(1), I(2), I(3)}};
  std::vector<std::vector<Value>> b = {
      {ints({9}), ints({8, 7, 6, 5, 4, 3}), ints({})},
      {seq({}), seq({ints({4})}), seq({ints({}), ints({5})})},
      {Value::pair(Value::string("xyz"), F(-1.0)), Value::pair(Value::string("w"), F(-2.0)),
       Value::pair(Value::string(""), F(-3.0))},
      {I(7), I(8), I(9)}};
  for (size_t c = 0; c < types.size(); ++c) {
    CAPTURE(c);
    Vec va = from_values(T, types[c], a[c]), vb = from_values(T, types[c], b[c]);
    Vec parts[2] = {va, vb};
    auto inter = to_values(interleave(parts));
    REQUIRE(inter.size() == 6);
    for (size_t i = 0; i < 3; ++i) {
      CHECK(lang::values_equal(inter[2 * i], a[c][i]));
      CHECK(lang::values_equal(inter[2 * i + 1], b[c][i]));
    }
    // flags T F F T T F: a0 b0 b1 a1 a2 b2
    bool flags[6] = {true, false, false, true, true, false};
    auto merged = to_values(merge_flags(FlagSplit(flags, 6), va, vb));
    REQUIRE(merged.size() == 6);
    std::vector<Value> want = {a[c][0], b[c][0], b[c][1], a[c][1], a[c][2], b[c][2]};
    for (size_t i = 0; i < 6; ++i) CHECK(lang::values_equal(merged[i], want[i]));
  }
  // Many instances (parallel blocks, each starting at the right place in a and b).
  int64_t n = 200000;
  std::unique_ptr<bool[]> fl(new bool[n]);
  std::vector<Value> xs, ys, want;
  for (int64_t i = 0; i < n; ++i) {
    fl[i] = (i * 7919) % 5 < 2;
    (fl[i] ? xs : ys).push_back(ints({i, -i}));
    want.push_back(ints({i, -i}));
  }
  Vec vx = from_values(T, T.seq(T.int_()), xs), vy = from_values(T, T.seq(T.int_()), ys);
  Vec m = merge_flags(FlagSplit(fl.get(), n), vx, vy);
  CHECK(m.total() == 2 * n);
  CHECK(m.elems().data<int64_t>()[2 * 12345] == 12345);
  CHECK(lang::values_equal(to_value(m, n - 1), want[n - 1]));
}

TEST_CASE("Vec: replicate_one fills every kind of value, and pack returns an all-true input itself") {
  lang::core::Program prog;
  auto& T = prog.types;
  Value x = Value::pair(ints({1, 2}), B(true));
  Vec one = from_values(T, T.pair(T.seq(T.int_()), T.bool_()), std::vector<Value>{x});
  auto many = to_values(replicate_one(one, 5));
  REQUIRE(many.size() == 5);
  for (const Value& v : many) CHECK(lang::values_equal(v, x));
  CHECK(replicate_one(one, 0).size() == 0);
  Vec s = from_values(T, T.seq(T.int_()), std::vector<Value>{ints({1}), ints({2, 3})});
  bool all[2] = {true, true};
  CHECK(pack(s, all).elems().data<int64_t>() == s.elems().data<int64_t>());
  CHECK(count_true(all, 2) == 2);
}

TEST_CASE("Vec: function values are interned ids and round-trip; empty ones too") {
  lang::core::Program prog;
  auto& T = prog.types;
  const Type* fn = T.fn(T.int_(), T.int_());
  auto sq = std::make_shared<lang::FnObj>();
  sq->target = lang::FnObj::Target::Global;
  sq->id = 7;
  auto neg = std::make_shared<lang::FnObj>();
  neg->target = lang::FnObj::Target::Prim;
  neg->id = 3;
  std::vector<Value> fs = {Value::fn(sq), Value::fn(neg), Value::fn(sq)};
  Vec v = from_values(T, fn, fs);
  REQUIRE(v.size() == 3);
  CHECK(v.data<int64_t>()[0] == v.data<int64_t>()[2]);  // equal values share an id
  CHECK(v.data<int64_t>()[0] != v.data<int64_t>()[1]);
  std::vector<Value> back = to_values(v);
  REQUIRE(back.size() == 3);
  CHECK(back[0].fn().target == lang::FnObj::Target::Global);
  CHECK(back[0].fn().id == 7);
  CHECK(back[1].fn().target == lang::FnObj::Target::Prim);
  CHECK(lang::values_equal(back[2], fs[2]));
  Vec empty = from_values(T, T.seq(fn), std::vector<Value>{seq({}), seq({})});
  CHECK(empty.size() == 2);
  CHECK(to_values(empty).size() == 2);
}

#include "codegen/cpu/buffer_pool.h"

TEST_CASE("buffer pool: large blocks are reused by size class, small ones are not pooled") {
  using namespace ndp::codegen::cpu;
  void* a = pooled_alloc(3 << 20);  // class 4 MiB
  CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
  static_cast<char*>(a)[(3 << 20) - 1] = 1;  // the whole requested size is usable
  size_t cached = pooled_cached_bytes();
  pooled_free(a, 3 << 20);
  CHECK(pooled_cached_bytes() == cached + (4 << 20));
  void* b = pooled_alloc((5 << 20) / 2);  // 2.5 MiB: the same class, so the same block
  CHECK(b == a);
  CHECK(pooled_cached_bytes() == cached);
  pooled_free(b, (5 << 20) / 2);
  void* c = pooled_alloc(5 << 20);  // class 8 MiB: never the 4 MiB block, though it is free
  CHECK(c != b);
  pooled_free(c, 5 << 20);
  // Small blocks go straight back to the allocator.
  size_t before_small = pooled_cached_bytes();
  void* s = pooled_alloc(100);
  CHECK(reinterpret_cast<uintptr_t>(s) % 64 == 0);
  pooled_free(s, 100);
  CHECK(pooled_cached_bytes() == before_small);
  // The cap: a 1 GiB-class block (address space only; nothing is touched) is kept only while
  // the total stays within kPooledMaxCachedBytes.
  void* big = pooled_alloc((size_t{600} << 20));
  pooled_free(big, size_t{600} << 20);
  CHECK(pooled_cached_bytes() <= kPooledMaxCachedBytes);
  // A Buf's memory goes back to the pool when the last Vec sharing it is gone.
  void* first = nullptr;
  {
    Buf<int64_t> buf(1 << 19);  // 4 MiB
    first = buf.data();
    std::shared_ptr<const void> shared = buf.share();
  }
  Buf<double> again(1 << 19);
  CHECK(static_cast<void*>(again.data()) == first);
}
