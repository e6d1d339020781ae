// Random generation of well-typed, terminating NESL programs (definitions + a test expression).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "tests/difftest/program.h"

namespace ndp::difftest {

struct GenOptions {
  int max_depth = 5;       // expression depth of the test expression
  int max_nodes = 70;      // beyond this every new subexpression is a leaf
  bool sized_types = true; // also generate i32 and f32
  bool rand = false;        // also generate `rand` (its streams must agree across backends)
};

/// The generator's random bits: a seeded PRNG, or under a fuzzer the fuzzer's input first.
/// Each input byte pair becomes the top 16 bits of a draw (the bits a distribution scales
/// by), so a mutated byte changes one choice of the program and the rest stay; once the
/// input is used up, the PRNG (seeded from the input) goes on.
class Entropy {
 public:
  using result_type = uint64_t;
  explicit Entropy(uint64_t seed) : prng_(seed) {}
  explicit Entropy(std::span<const uint8_t> bytes);
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return ~uint64_t{0}; }
  uint64_t operator()();

 private:
  std::span<const uint8_t> bytes_;
  size_t used_ = 0;
  std::mt19937_64 prng_;
};

/// The smallest literal of a type (`0`, `f`, `[] int`, `dt(0, 0.0)`); the shrinker's last resort.
ExprP minimal_literal(const TypeP& t, const std::vector<DatatypeDef>& datatypes);

class Generator {
 public:
  Generator(uint64_t seed, GenOptions opts) : Generator(Entropy(seed), opts) {}
  Generator(Entropy entropy, GenOptions opts);
  Program program();

 private:
  struct Binding {
    std::string name;
    TypeP type;
  };
  struct Choice {
    double weight;
    std::function<ExprP()> make;
  };

  // randomness
  int uniform(int lo, int hi);
  bool chance(double p);
  std::string fresh(const char* prefix);
  ExprP choose(std::vector<Choice>& choices, const TypeP& t);

  // types
  TypeP random_type(int max_seq, int max_pair = 1);
  TypeP random_scalar(bool sized);
  TypeP random_ordinal();
  TypeP random_number();
  /// A type that an expression of type `t` is likely to be built from: t, its element, [t].
  TypeP related_type(const TypeP& t);

  // definitions
  void gen_datatype();
  void gen_helper();
  void gen_int_recursion();
  void gen_halving();
  void gen_quicksort();
  void gen_mutual();
  ExprP gen_body(const std::vector<Binding>& params, const TypeP& result, int depth);

  // expressions
  ExprP gen(const TypeP& t, int d);
  ExprP leaf(const TypeP& t);
  ExprP literal(const TypeP& t);
  ExprP var_of(const TypeP& t);
  void add_common(std::vector<Choice>& cs, const TypeP& t, int d);
  void add_number(std::vector<Choice>& cs, const TypeP& t, int d);
  void add_int(std::vector<Choice>& cs, int d);
  void add_float(std::vector<Choice>& cs, int d);
  void add_bool(std::vector<Choice>& cs, int d);
  void add_char(std::vector<Choice>& cs, int d);
  void add_sized(std::vector<Choice>& cs, const TypeP& t, int d);
  void add_seq(std::vector<Choice>& cs, const TypeP& t, int d);
  void add_pair(std::vector<Choice>& cs, const TypeP& t, int d);
  ExprP gen_each(const TypeP& elem, int d);
  ExprP gen_let(const TypeP& t, int d, const TypeP& bound_type);
  ExprP guard_divisor(const TypeP& t, int d);
  ExprP bounded_count(int d, int limit);
  ExprP clamp_seq(ExprP e);
  Pattern pattern_for(const TypeP& t, std::vector<Binding>& bound);

  Entropy rng_;
  GenOptions opts_;
  std::vector<DatatypeDef> datatypes_;
  std::vector<FunctionDef> callable_;
  std::vector<Binding> scope_;
  Program prog_;
  int counter_ = 0;
  int nodes_ = 0;
  int node_limit_ = 0;
};

}  // namespace ndp::difftest
