// Vec: conversions to and from Values for every kind of type, and the structural operations.
#include <doctest/doctest.h>

#include "exec/host/vec.h"
#include "tests/unit/exec/host/host_helpers.h"

using namespace ndp;
using namespace ndp::test::exec_test;
using namespace ndp::exec::host;

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

// ---- uniform buffers and regular sequences (Note [Uniform buffers] in exec/host/vec.h) ----

#include <atomic>
#include <omp.h>


namespace {

Vec mk(lang::TypeContext& T, const Type* t, std::vector<Value> vs) { return from_values(T, t, vs); }

/// n instances of the int sequence [0, 1, ..., len - 1] (plus base·i), over plain buffers.
Vec int_rows(lang::TypeContext& T, int64_t n, int64_t len, int64_t base = 1000) {
  std::vector<Value> vs;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> row;
    for (int64_t j = 0; j < len; ++j) row.push_back(base * i + j);
    vs.push_back(ints(row));
  }
  return from_values(T, T.seq(T.int_()), vs);
}

void same_values(const Vec& a, const Vec& b) {
  auto va = to_values(a), vb = to_values(b);
  REQUIRE(va.size() == vb.size());
  size_t bad = 0;
  for (size_t i = 0; i < va.size(); ++i) bad += !lang::values_equal(va[i], vb[i]);
  CHECK_MESSAGE(bad == 0, bad << " of " << va.size() << " instances differ");
}

}  // namespace

TEST_CASE("uniform buffers: the value without memory, filled on first use, recognised through aliases") {
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{100000}}) {
    CAPTURE(n);
    auto buf = uniform_buffer(int64_t{-7}, n);
    const UniformBuffer* u = as_uniform(buf);
    REQUIRE(u != nullptr);
    CHECK(u->size() == n);
    CHECK(u->value<int64_t>() == -7);
    const int64_t* d = static_cast<const int64_t*>(u->data());
    CHECK(d == u->data());  // made once
    for (int64_t i = 0; i < n; ++i)
      if (d[i] != -7) FAIL("uniform data differs at " << i);
    const int64_t* off = u->offsets();
    CHECK(off[0] == 0);
    CHECK(off[n] == -7 * n);
    // An alias of the filled memory (what Vec::buffer() hands out) is still the uniform buffer.
    std::shared_ptr<const void> alias(buf, u->data());
    CHECK(as_uniform(alias) == u);
  }
  CHECK(as_uniform(std::shared_ptr<const void>()) == nullptr);
  Buf<int64_t> plain(3);
  CHECK(as_uniform(plain.share()) == nullptr);
  // Narrow storage types keep their value.
  CHECK(as_uniform(uniform_buffer(true, 3))->value<bool>() == true);
  CHECK(static_cast<const uint8_t*>(as_uniform(uniform_buffer(uint8_t{200}, 3))->data())[2] == 200);
  CHECK(static_cast<const float*>(as_uniform(uniform_buffer(2.5f, 70000))->data())[69999] == 2.5f);
  CHECK(as_uniform(uniform_buffer(-0.5, 2))->value<double>() == -0.5);
}

TEST_CASE("uniform buffers: filled once when many threads ask at the same time") {
  auto buf = uniform_buffer(int64_t{3}, 1 << 20);
  const UniformBuffer* u = as_uniform(buf);
  std::atomic<int> distinct{0};
  const void* first = nullptr;
#pragma omp parallel num_threads(4)
  {
    const void* p = u->data();
    const int64_t* o = u->offsets();
#pragma omp critical
    {
      if (!first) first = p;
      if (p != first || o[1 << 20] != 3 << 20) ++distinct;
    }
  }
  CHECK(distinct == 0);
  CHECK(static_cast<const int64_t*>(first)[12345] == 3);
}

TEST_CASE("generated buffers: filled by range, stored once on first read, never a lengths buffer's memory") {
  lang::core::Program prog;
  auto& T = prog.types;
  const int64_t n = 100000;
  std::atomic<int64_t> filled{0};
  auto buf = generated_buffer(sizeof(int64_t), n, [&](int64_t begin, int64_t end, void* out) {
    filled += end - begin;
    for (int64_t i = begin; i < end; ++i) static_cast<int64_t*>(out)[i - begin] = 3 * i + 1;
  });
  const GeneratedBuffer* g = as_generated(buf);
  REQUIRE(g != nullptr);
  CHECK(as_uniform(buf) == nullptr);
  CHECK(as_generated(uniform_buffer(int64_t{1}, 4)) == nullptr);
  CHECK(!g->filled());
  int64_t slice[5];
  g->fill(700, 705, slice);  // any range, written from out[0]
  CHECK(slice[0] == 2101);
  CHECK(slice[4] == 2113);
  CHECK(!g->filled());
  Vec v = Vec::scalar(T.int_(), n, buf);
  CHECK(v.generated() == g);
  CHECK(!v.is_uniform());
  const int64_t* d = v.data<int64_t>();  // stored now, once
  CHECK(g->filled());
  CHECK(d == v.data<int64_t>());
  CHECK(filled.load() == 5 + n);
  for (int64_t i = 0; i < n; ++i)
    if (d[i] != 3 * i + 1) FAIL("generated data differs at " << i);
  CHECK(static_cast<const int64_t*>(v.buffer().get())[n - 1] == 3 * (n - 1) + 1);
  CHECK(as_generated(v.shared_buffer()) == g);
  // As the lengths of a sequence the values are stored, and that buffer is no longer generated.
  auto lens = generated_buffer(sizeof(int64_t), 3, [](int64_t begin, int64_t end, void* out) {
    for (int64_t i = begin; i < end; ++i) static_cast<int64_t*>(out)[i - begin] = i + 1;
  });
  Vec s = Vec::seq(T.seq(T.int_()), 3, lens, mk(T, T.int_(), {I(1), I(2), I(3), I(4), I(5), I(6)}));
  CHECK(as_generated(s.shared_buffer()) == nullptr);
  CHECK(s.offsets()[3] == 6);
  CHECK(s.length(2) == 3);
}

TEST_CASE("generated buffers: a generated replicate equals the stored one, at any range") {
  lang::core::Program prog;
  auto& T = prog.types;
  // Ragged lengths with empty segments (first, inside and last), and a regular descriptor.
  std::vector<Value> lens_values, values;
  for (int64_t k = 0; k < 3000; ++k) {
    lens_values.push_back(I(k == 0 || k == 2999 ? 0 : (k * 7) % 13));
    values.push_back(I(1000 + k));
  }
  Vec lens = from_values(T, T.int_(), lens_values);
  Vec v = from_values(T, T.int_(), values);
  for (bool regular : {false, true}) {
    CAPTURE(regular);
    Vec l = regular ? Vec::scalar(T.int_(), 3000, uniform_buffer(int64_t{5}, 3000)) : lens;
    LengthSegs segs = segments_of(l);
    Vec lazy = generated_replicate(v, segs);
    Vec stored = replicate_each(v, segs.view);
    REQUIRE(lazy.size() == stored.size());
    const GeneratedBuffer* g = lazy.generated();
    REQUIRE(g != nullptr);
    const int64_t* want = stored.data<int64_t>();
    std::vector<int64_t> got(static_cast<size_t>(lazy.size()));
    for (int64_t begin : {int64_t{0}, int64_t{1}, int64_t{6}, int64_t{7}, lazy.size() - 3}) {
      const int64_t end = std::min(lazy.size(), begin + 2048);
      g->fill(begin, end, got.data());
      for (int64_t p = begin; p < end; ++p)
        if (got[static_cast<size_t>(p - begin)] != want[p]) FAIL("replicate differs at " << p << " from " << begin);
    }
    same_values(lazy, stored);
  }
  // Small ones are not generated (they fit any cache).
  Vec few = replicate_each(take(v, std::vector<int64_t>{0, 1}), segments_of(take(lens, std::vector<int64_t>{1, 2})));
  CHECK(few.generated() == nullptr);
  CHECK(!generated_worthwhile(8 * kLeastGenerated, kLeastGenerated - 1));
}

TEST_CASE("generated buffers: views read in place a run at a time, through views, and fill where they cannot") {
  lang::core::Program prog;
  auto& T = prog.types;
  const int64_t n = 6000;
  std::vector<Value> values;
  for (int64_t i = 0; i < n; ++i) values.push_back(I(10 * i));
  Vec source = from_values(T, T.int_(), values);
  // Rows of 20, every second one (elt 1 of pairs of rows): 150 rows, 3000 values.
  Locate odd_rows = [&source](int64_t p) {
    const int64_t k = p / 20;
    return Located{&source, (2 * k + 1) * 20 + (p - k * 20), (k + 1) * 20};
  };
  Vec view = Vec::scalar(T.int_(), 3000, generated_view(sizeof(int64_t), 3000, odd_rows));
  const GeneratedBuffer* g = view.generated();
  REQUIRE(g != nullptr);
  int64_t end = 0;
  const int64_t* at = static_cast<const int64_t*>(g->in_place(45, end));
  REQUIRE(at != nullptr);
  CHECK(*at == 10 * (5 * 20 + 5));  // row 2 of the view is source row 5
  CHECK(end == 60);
  std::vector<int64_t> got(100);
  g->fill(15, 115, got.data());
  for (int64_t p = 15; p < 115; ++p) CHECK(got[static_cast<size_t>(p - 15)] == 10 * ((2 * (p / 20) + 1) * 20 + p % 20));
  // A view of that view (its first 1000 values, shifted by 7): runs end where either's does.
  Locate shifted = [&view](int64_t p) { return Located{&view, p + 7, 1000}; };
  const GeneratedBuffer* h = as_generated(generated_view(sizeof(int64_t), 993, shifted));
  REQUIRE(h != nullptr);
  at = static_cast<const int64_t*>(h->in_place(0, end));
  REQUIRE(at != nullptr);
  CHECK(*at == 10 * (20 + 7));
  CHECK(end == 13);  // view element 20 starts the next row
  CHECK(!g->filled());
  // Over a filled buffer nothing is in place, but the values come through its fill.
  Vec counted = Vec::scalar(T.int_(), 100, generated_buffer(sizeof(int64_t), 100, [](int64_t b, int64_t e, void* out) {
    for (int64_t i = b; i < e; ++i) static_cast<int64_t*>(out)[i - b] = -i;
  }));
  Locate all = [&counted](int64_t p) { return Located{&counted, p, 100}; };
  const GeneratedBuffer* f = as_generated(generated_view(sizeof(int64_t), 100, all));
  CHECK(f->in_place(3, end) == nullptr);
  f->fill(3, 9, got.data());
  CHECK(got[0] == -3);
  CHECK(got[5] == -8);
  // Once stored, the view is in place everywhere, to its end.
  const int64_t* d = view.data<int64_t>();
  CHECK(g->filled());
  CHECK(g->in_place(10, end) == d + 10);
  CHECK(end == 3000);
}

TEST_CASE("Vec: uniform scalars and regular sequences read like any other") {
  lang::core::Program prog;
  auto& T = prog.types;
  Vec u = Vec::scalar(T.int_(), 4, uniform_buffer(int64_t{9}, 4));
  CHECK(u.is_uniform());
  CHECK(u.uniform_value<int64_t>() == 9);
  CHECK(u.data<int64_t>()[3] == 9);
  // buffer() is memory (code outside the backend reads it); shared_buffer() stays unfilled.
  CHECK(static_cast<const int64_t*>(u.buffer().get())[2] == 9);
  CHECK(as_uniform(u.shared_buffer()) != nullptr);
  CHECK(Vec::scalar(T.int_(), 4, u.buffer()).is_uniform());
  same_values(u, mk(T, T.int_(), {I(9), I(9), I(9), I(9)}));
  // One instance is uniform whatever its buffer; none or several plain ones are not.
  CHECK(mk(T, T.float_(), {F(1.5)}).is_uniform());
  CHECK(mk(T, T.float_(), {F(1.5)}).uniform_value<double>() == 1.5);
  CHECK(!mk(T, T.int_(), {I(1), I(1)}).is_uniform());
  CHECK(!mk(T, T.seq(T.int_()), {ints({1})}).is_uniform());  // sequences are regular, not uniform

  Vec elems = mk(T, T.int_(), {I(1), I(2), I(3), I(4), I(5), I(6)});
  Vec r = Vec::seq(T.seq(T.int_()), 3, uniform_buffer(int64_t{2}, 3), elems);
  CHECK(r.is_regular());
  CHECK(r.regular_length() == 2);
  CHECK(r.total() == 6);
  CHECK(r.length(2) == 2);
  CHECK(r.offsets()[3] == 6);
  CHECK(r.offsets_buffer() == nullptr);
  CHECK(r.segs().is_regular());
  CHECK(r.segs().regular_length() == 2);
  same_values(r, mk(T, T.seq(T.int_()), {ints({1, 2}), ints({3, 4}), ints({5, 6})}));
  // Lengths of a regular Vec are a uniform int Vec, as FlatWalk's Lengths makes them.
  Vec lens = Vec::scalar(T.int_(), 3, r.buffer());
  CHECK(lens.is_uniform());
  CHECK(lens.uniform_value<int64_t>() == 2);
  CHECK(Vec::seq(T.seq(T.int_()), 3, lens.shared_buffer(), elems).is_regular());
  CHECK(retype(T, r, r.type()).is_regular());
  // One sequence is always regular; no sequences with a uniform buffer too.
  Vec one = mk(T, T.seq(T.int_()), {ints({4, 5, 6})});
  CHECK(one.is_regular());
  CHECK(one.regular_length() == 3);
  Vec none = Vec::seq(T.seq(T.int_()), 0, uniform_buffer(int64_t{5}, 0), mk(T, T.int_(), {}));
  CHECK(none.total() == 0);
  CHECK(to_values(none).empty());
  // Empty sequences, regular.
  Vec empties = Vec::seq(T.seq(T.int_()), 4, uniform_buffer(int64_t{0}, 4), mk(T, T.int_(), {}));
  same_values(empties, mk(T, T.seq(T.int_()), {ints({}), ints({}), ints({}), ints({})}));
}

TEST_CASE("Vec: structural operations keep uniform and regular vectors so, with the same values") {
  lang::core::Program prog;
  auto& T = prog.types;
  const Type* si = T.seq(T.int_());
  Vec u = broadcast_first(mk(T, T.int_(), {I(4)}), 50000);
  Vec w = broadcast_first(mk(T, T.int_(), {I(5)}), 50000);
  CHECK(u.is_uniform());
  std::vector<int64_t> idx = {0, 49999, 7};
  Vec taken = take(u, idx);
  CHECK(taken.is_uniform());
  same_values(taken, mk(T, T.int_(), {I(4), I(4), I(4)}));
  Vec parts[2] = {u, u};
  CHECK(concat(parts).is_uniform());
  CHECK(concat(parts).size() == 100000);
  CHECK(interleave(parts).is_uniform());
  Vec mixed[2] = {u, w};
  Vec inter = interleave(mixed);
  CHECK(!inter.is_uniform());
  CHECK(inter.data<int64_t>()[1] == 5);
  CHECK(inter.data<int64_t>()[99998] == 4);
  CHECK(!concat(mixed).is_uniform());
  std::unique_ptr<bool[]> fl(new bool[50000]);
  for (int i = 0; i < 50000; ++i) fl[i] = i % 3 == 0;
  Vec packed = pack(u, fl.get());
  CHECK(packed.is_uniform());
  CHECK(packed.size() == 16667);
  CHECK(replicate_each(take(u, std::vector<int64_t>{0, 1}), runtime::SegView::regular(2, 3)).is_uniform());
  // merge of equal uniform sides stays uniform; of different ones is per instance.
  Vec merged = merge_flags(FlagSplit(fl.get(), 50000), take(u, std::vector<int64_t>(16667, 0)),
                           take(w, std::vector<int64_t>(33333, 0)));
  CHECK(merged.data<int64_t>()[0] == 4);
  CHECK(merged.data<int64_t>()[1] == 5);
  CHECK(merge_flags(FlagSplit(fl.get(), 50000), take(u, std::vector<int64_t>(16667, 0)),
                    take(u, std::vector<int64_t>(33333, 0)))
            .is_uniform());

  // Uniform flags: count at once; pack keeps all or nothing.
  Vec yes = broadcast_first(mk(T, T.bool_(), {B(true)}), 3);
  Vec no = broadcast_first(mk(T, T.bool_(), {B(false)}), 3);
  CHECK(count_true(yes) == 3);
  CHECK(count_true(no) == 0);
  Vec rows = uniform_form(int_rows(T, 3, 2));
  CHECK(rows.is_regular());
  CHECK(pack(rows, yes).elems().data<int64_t>() == rows.elems().data<int64_t>());
  CHECK(pack(rows, no).size() == 0);
  CHECK(pack(rows, no).total() == 0);

  // Regular sequences through take, concat, interleave: regular results, the same values as
  // the plain representation gives. (Two parts of rows of 2, 4 and 8 take interleave's
  // unrolled copy, of 16 its view.)
  for (int64_t c : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}, int64_t{8}, int64_t{16}}) {
    CAPTURE(c);
    Vec plain = int_rows(T, 20000, c), plain2 = int_rows(T, 20000, c, -7);
    Vec reg = uniform_form(plain), reg2 = uniform_form(plain2);
    REQUIRE(reg.is_regular());
    std::vector<int64_t> ix = {19999, 0, 5, 5};
    CHECK(take(reg, ix).is_regular());
    same_values(take(reg, ix), take(plain, ix));
    Vec rp[2] = {reg, reg2}, pp[2] = {plain, plain2};
    CHECK(concat(rp).is_regular());
    same_values(concat(rp), concat(pp));
    CHECK(interleave(rp).is_regular());
    same_values(interleave(rp), interleave(pp));
    // Three parts, and sequences of pairs (the element index path).
    Vec rp3[3] = {reg, reg2, reg}, pp3[3] = {plain, plain2, plain};
    same_values(interleave(rp3), interleave(pp3));
    const Type* tp = T.pair(si, T.bool_());
    Vec flags = from_values(T, T.bool_(), std::vector<Value>(20000, B(true)));
    Vec pr[2] = {Vec::pair(tp, reg, flags), Vec::pair(tp, reg2, flags)};
    Vec pl[2] = {Vec::pair(tp, plain, flags), Vec::pair(tp, plain2, flags)};
    same_values(interleave(pr), interleave(pl));
    const Type* snested = T.seq(si);
    Vec nr = Vec::seq(snested, 4000, uniform_buffer(int64_t{5}, 4000), reg);
    Vec nr2 = Vec::seq(snested, 4000, uniform_buffer(int64_t{5}, 4000), reg2);
    Vec np = Vec::seq(snested, 4000, uniform_buffer(int64_t{5}, 4000), plain);
    Vec np2 = Vec::seq(snested, 4000, uniform_buffer(int64_t{5}, 4000), plain2);
    Vec nrs[2] = {nr, nr2}, nps[2] = {np, np2};
    same_values(interleave(nrs), interleave(nps));
  }
  // One huge sequence per part (the top of a recursion: the copy is split inside the run).
  Vec big = uniform_form(int_rows(T, 1, 100000)), big2 = uniform_form(int_rows(T, 1, 100000, 0));
  Vec bp[2] = {big, big2};
  Vec bi = interleave(bp);
  CHECK(bi.is_regular());
  CHECK(bi.regular_length() == 100000);
  CHECK(bi.elems().data<int64_t>()[99999] == 99999);
  CHECK(bi.elems().data<int64_t>()[100000 + 77] == 77);
  // Different lengths: not regular, still right.
  Vec r1 = uniform_form(int_rows(T, 5, 1)), r2 = uniform_form(int_rows(T, 5, 2));
  Vec rr[2] = {r1, r2}, rq[2] = {int_rows(T, 5, 1), int_rows(T, 5, 2)};
  CHECK(!interleave(rr).is_regular());
  same_values(interleave(rr), interleave(rq));
  CHECK(!concat(rr).is_regular());
  same_values(concat(rr), concat(rq));

  // replicate_one of a sequence is regular.
  Vec lit = replicate_one(mk(T, si, {ints({1, 2, 3})}), 1000);
  CHECK(lit.is_regular());
  CHECK(lit.elems().data<int64_t>()[2998] == 2);
  CHECK(replicate_one(mk(T, T.int_(), {I(3)}), 1000).is_uniform());
}

TEST_CASE("Vec: first_length_difference and segments_of on regular and irregular vectors") {
  lang::core::Program prog;
  auto& T = prog.types;
  Vec a = int_rows(T, 4, 2), b = uniform_form(int_rows(T, 4, 2)), c = uniform_form(int_rows(T, 4, 3));
  CHECK(first_length_difference(a, b) == -1);
  CHECK(first_length_difference(b, b) == -1);
  CHECK(first_length_difference(b, c) == 0);
  CHECK(first_length_difference(a, c) == 0);
  Vec d = mk(T, T.seq(T.int_()), {ints({1, 2}), ints({3, 4}), ints({5}), ints({6, 7})});
  CHECK(first_length_difference(a, d) == 2);
  Vec e0 = Vec::seq(T.seq(T.int_()), 0, uniform_buffer(int64_t{1}, 0), mk(T, T.int_(), {}));
  Vec e1 = Vec::seq(T.seq(T.int_()), 0, uniform_buffer(int64_t{2}, 0), mk(T, T.int_(), {}));
  CHECK(first_length_difference(e0, e1) == -1);
  LengthSegs s = segments_of(broadcast_first(mk(T, T.int_(), {I(3)}), 10));
  CHECK(s.view.is_regular());
  CHECK(s.view.total() == 30);
  LengthSegs t = segments_of(mk(T, T.int_(), {I(3), I(0), I(2)}));
  CHECK(!t.view.is_regular());
  CHECK(t.view.total() == 5);
  CHECK(t.view.begin(2) == 3);
}

TEST_CASE("Vec: sequences of points and datatypes are taken, and points replicated, a leaf at a time") {
  lang::core::Program prog;
  auto& T = prog.types;
  lang::DataDef* def = T.new_datadef("pt");
  def->fields = T.pair(T.float_(), T.pair(T.i32(), T.bool_()));
  const Type* pt = T.data(def, {});
  auto point = [&](double x, int32_t y, bool z) { return Value::data(def, Value::pair(F(x), Value::pair(Value::i32(y), B(z)))); };
  // Sequences of a datatype of flat leaves: each taken instance is its old run, leaf by leaf.
  std::vector<Value> rows = {seq({point(1.5, 2, true), point(-1, 3, false)}), seq({}), seq({point(7, -7, true)})};
  Vec v = from_values(T, T.seq(pt), rows);
  auto taken = to_values(take(v, std::vector<int64_t>{2, 0, 1, 0}));
  REQUIRE(taken.size() == 4);
  CHECK(lang::values_equal(taken[0], rows[2]));
  CHECK(lang::values_equal(taken[1], rows[0]));
  CHECK(lang::values_equal(taken[2], rows[1]));
  CHECK(lang::values_equal(taken[3], rows[0]));
  // Regular sequences of pairs (two each) stay regular, taken a leaf at a time too.
  const Type* xy = T.pair(T.float_(), T.int_());
  std::vector<Value> six;
  for (int i = 0; i < 6; ++i) six.push_back(Value::pair(F(i + 0.5), I(10 * i)));
  Vec regular = Vec::seq(T.seq(xy), 3, uniform_buffer<int64_t>(2, 3), from_values(T, xy, six));
  REQUIRE(regular.is_regular());
  Vec taken_regular = take(regular, std::vector<int64_t>{2, 0});
  CHECK(taken_regular.is_regular());
  auto tr = to_values(taken_regular);
  REQUIRE(tr.size() == 2);
  CHECK(lang::values_equal(tr[0], seq({six[4], six[5]})));
  CHECK(lang::values_equal(tr[1], seq({six[0], six[1]})));
  // A pair of points over irregular segments (lengths 2, 0, 3): each copied into its segment.
  const Type* line = T.pair(T.pair(T.float_(), T.float_()), T.int_());
  std::vector<Value> lines = {Value::pair(Value::pair(F(1), F(2)), I(10)), Value::pair(Value::pair(F(3), F(4)), I(20)),
                              Value::pair(Value::pair(F(5), F(6)), I(30))};
  Vec lv = from_values(T, line, lines);
  Vec lens = from_values(T, T.int_(), std::vector<Value>{I(2), I(0), I(3)});
  LengthSegs segs = segments_of(lens);
  auto spread = to_values(replicate_each(lv, segs.view));
  REQUIRE(spread.size() == 5);
  for (size_t i : {0, 1}) CHECK(lang::values_equal(spread[i], lines[0]));
  for (size_t i : {2, 3, 4}) CHECK(lang::values_equal(spread[i], lines[2]));
  auto boxes = to_values(replicate_each(from_values(T, pt, std::vector<Value>{point(0.5, 1, false), point(2, 2, true)}),
                                        runtime::SegView::regular(2, 2)));
  REQUIRE(boxes.size() == 4);
  CHECK(lang::values_equal(boxes[3], point(2, 2, true)));
  CHECK(lang::values_equal(boxes[0], point(0.5, 1, false)));
}

TEST_CASE("Vec: shown_value keeps what an answer prints: `keep` elements a sequence at every depth, strings whole") {
  lang::core::Program prog;
  auto& T = prog.types;
  auto seqs = [](std::vector<Value> xs) { return Value::seq(std::move(xs)); };
  auto str = [](const std::string& s) {
    std::vector<Value> cs;
    for (char c : s) cs.push_back(Value::char_(static_cast<unsigned char>(c)));
    return Value::seq(std::move(cs));
  };
  // [[0..4], [], [7]] cut to 2: [[0, 1], []]
  std::vector<Value> one_nested{seqs({ints({0, 1, 2, 3, 4}), ints({}), ints({7})})};
  Vec nested = from_values(T, T.seq(T.seq(T.int_())), one_nested);
  CHECK(lang::values_equal(shown_value(nested, 0, 2), seqs({ints({0, 1}), ints({})})));
  CHECK(lang::values_equal(shown_value(nested, 0, 5), seqs({ints({0, 1, 2, 3, 4}), ints({}), ints({7})})));
  // Pairs cut on both sides; a string inside stays whole.
  const Type* t = T.seq(T.pair(T.seq(T.char_()), T.seq(T.int_())));
  std::vector<Value> one_pairs{seqs({Value::pair(str("long words"), ints({1, 2, 3})), Value::pair(str("x"), ints({})),
                                     Value::pair(str(""), ints({4}))})};
  Vec pairs = from_values(T, t, one_pairs);
  CHECK(lang::values_equal(shown_value(pairs, 0, 2),
                           seqs({Value::pair(str("long words"), ints({1, 2})), Value::pair(str("x"), ints({}))})));
  // Several instances: instance i alone.
  std::vector<Value> two{ints({1, 2, 3}), ints({4, 5, 6, 7})};
  Vec many = from_values(T, T.seq(T.int_()), two);
  CHECK(lang::values_equal(shown_value(many, 1, 3), ints({4, 5, 6})));
  CHECK(lang::values_equal(shown_value(many, 0, 0), ints({})));
}

TEST_CASE("Vec: concat of parts one after another in one buffer is a view of it; of others, a copy") {
  lang::core::Program prog;
  auto& T = prog.types;
  // One buffer of 10 ints, cut in three parts (as a partition writes adjacent packs).
  Buf<int64_t> buf(10);
  for (int64_t i = 0; i < 10; ++i) buf[i] = i * 3;
  int64_t* base = buf.data();
  const Vec::Buffer whole = buf.share();
  Vec a = Vec::scalar(T.int_(), 4, Vec::Buffer(whole, base));
  Vec empty = Vec::scalar(T.int_(), 0, uniform_buffer<int64_t>(7, 0));
  Vec b = Vec::scalar(T.int_(), 6, Vec::Buffer(whole, base + 4));
  Vec in_order[3] = {a, empty, b};
  Vec joined = concat(in_order);
  CHECK(joined.size() == 10);
  CHECK(joined.data<int64_t>() == base);  // no copy
  for (int64_t i = 0; i < 10; ++i) CHECK(joined.data<int64_t>()[i] == i * 3);
  // Out of order, or parts of another buffer: copied, with the same values as ever.
  Vec swapped[2] = {b, a};
  Vec s = concat(swapped);
  CHECK(s.data<int64_t>() != base + 4);
  CHECK(to_values(s).at(0).as_int() == 12);
  CHECK(to_values(s).at(6).as_int() == 0);
  const std::vector<Value> two = {I(30), I(33)};
  Vec other = from_values(T, T.int_(), two);
  Vec elsewhere[2] = {a, other};
  Vec e = concat(elsewhere);
  CHECK(e.data<int64_t>() != base);
  CHECK(to_values(e).at(4).as_int() == 30);
  // A gap between the parts: copied.
  Vec c = Vec::scalar(T.int_(), 2, Vec::Buffer(whole, base + 5));
  Vec gap[2] = {a, c};
  Vec g = concat(gap);
  CHECK(g.data<int64_t>() != base);
  CHECK(to_values(g).at(4).as_int() == 15);
}

TEST_CASE("Vec: pack of irregular rows equals take of the kept rows, for rows of scalars and of flat tuples") {
  lang::core::Program prog;
  auto& T = prog.types;
  // Rows of 0-5 elements and a few long ones, flags coin tosses: sizes that one block holds
  // and sizes that many blocks split, with runs of kept rows of every length.
  for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{70000}}) {
    std::vector<Value> ints_rows, pair_rows;
    std::unique_ptr<bool[]> keep(new bool[static_cast<size_t>(n)]);
    std::vector<int64_t> kept_at;
    uint64_t h = 88172645463325252ull;
    for (int64_t i = 0; i < n; ++i) {
      h ^= h << 13, h ^= h >> 7, h ^= h << 17;
      const int64_t len = i % 997 == 5 ? 3000 : static_cast<int64_t>(h % 6);
      std::vector<Value> xs, ps;
      for (int64_t x = 0; x < len; ++x) {
        xs.push_back(I(i * 10 + x));
        ps.push_back(Value::pair(F(static_cast<double>(x) + 0.5), B(x % 2 == 0)));
      }
      ints_rows.push_back(seq(xs));
      pair_rows.push_back(seq(ps));
      keep[static_cast<size_t>(i)] = (h >> 20) % 2 == 0;
      if (keep[static_cast<size_t>(i)]) kept_at.push_back(i);
    }
    for (const auto& [t, rows] : {std::pair{T.seq(T.int_()), &ints_rows}, std::pair{T.seq(T.pair(T.float_(), T.bool_())), &pair_rows}}) {
      Vec v = from_values(T, t, *rows);
      CHECK((n == 1 || !v.is_regular()));  // one row is regular, and takes the other path
      Vec packed = pack(v, keep.get());
      CHECK(packed.size() == static_cast<int64_t>(kept_at.size()));
      CHECK(packed.total() == take(v, kept_at).total());
      auto got = to_values(packed);
      REQUIRE(got.size() == kept_at.size());
      for (size_t k = 0; k < kept_at.size(); ++k) CHECK(lang::values_equal(got[k], (*rows)[static_cast<size_t>(kept_at[k])]));
      for (size_t k = 0; k < kept_at.size(); ++k) CHECK(packed.offsets()[k + 1] - packed.offsets()[k] == packed.length(static_cast<int64_t>(k)));
    }
  }
}

TEST_CASE("Vec: iota_indices counts from its first, and slice is a take of a range, or the vector itself") {
  lang::core::Program prog;
  auto& T = prog.types;
  const Indices idx = iota_indices(5, 7);
  REQUIRE(idx.size() == 5);
  for (size_t i = 0; i < 5; ++i) CHECK(idx[i] == 7 + static_cast<int64_t>(i));
  CHECK(iota_indices(0).size() == 0);
  std::vector<Value> rows = {seq({I(1)}), seq({}), seq({I(2), I(3)}), seq({I(4)})};
  Vec v = from_values(T, T.seq(T.int_()), rows);
  Vec whole = slice(v, 0, 4);
  CHECK(whole.shared_buffer() == v.shared_buffer());  // no copy
  auto mid = to_values(slice(v, 1, 2));
  REQUIRE(mid.size() == 2);
  CHECK(lang::values_equal(mid[0], rows[1]));
  CHECK(lang::values_equal(mid[1], rows[2]));
  CHECK(slice(v, 4, 0).size() == 0);
}
