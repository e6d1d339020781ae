// The interpretive kernel loop and the dispatch between it and compiled kernels.
#include "exec/cpu/kernels.h"

#include "exec/common/profile.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>

#include <mutex>
#include <string>
#include <unordered_map>

#include "exec/common/kernel_compiler.h"
#include "exec/host/convert.h"
#include "exec/host/kernel_failure.h"
#include "exec/host/parallel_loops.h"
#include "flatten/kernel_abi.h"
#include "lang/eval/prim_call.h"
#include "lang/diagnostics.h"

namespace ndp::exec::cpu {

using namespace host;  // the cpu backend runs on the host vectors and primitives

using flatten::HostKernelFn;
using flatten::KernelBody;
using flatten::KernelNode;
using lang::TypeKind;
using lang::core::PrimId;

namespace {

constexpr int64_t kChunk = 1024;
/// The pieces a loop kernel's instances are cut into for the cores: enough for every core to
/// take several, so that instances whose loops run longer even out.
constexpr int64_t kLoopChunks = 256;
/// Below this many instances the interpretive loop is cheaper than compiling (once per
/// distinct kernel and process); NDP_JIT_MIN overrides it (0: always compile).
constexpr int64_t kDefaultJitMin = int64_t{1} << 14;

int64_t jit_min() {
  static const int64_t v = [] {
    const char* s = std::getenv("NDP_JIT_MIN");
    return s && *s ? std::atoll(s) : kDefaultJitMin;
  }();
  return v;
}

template <class T>
inline constexpr bool is_int_v = std::is_same_v<T, int64_t> || std::is_same_v<T, int32_t>;

/// One node over m elements: r[i] = prim(a0[i], ...), T the storage type of the operands
/// (of the second operand for select), R of the result.
template <class T, class R>
void eval_typed(PrimId p, const void* const* a, void* rv, int64_t m) {
  R* r = static_cast<R*>(rv);
  const T* x = static_cast<const T*>(a[0]);
  const T* y = static_cast<const T*>(a[1]);
  auto map = [&](auto f) {
    for (int64_t i = 0; i < m; ++i) r[i] = static_cast<R>(f(i));
  };
  if constexpr (std::is_same_v<R, bool>) {
    switch (p) {
      case PrimId::Eq: return map([&](int64_t i) { return x[i] == y[i]; });
      case PrimId::Ne: return map([&](int64_t i) { return x[i] != y[i]; });
      case PrimId::Lt: return map([&](int64_t i) { return x[i] < y[i]; });
      case PrimId::Gt: return map([&](int64_t i) { return x[i] > y[i]; });
      case PrimId::Le: return map([&](int64_t i) { return x[i] <= y[i]; });
      case PrimId::Ge: return map([&](int64_t i) { return x[i] >= y[i]; });
      default: break;
    }
  }
  if constexpr (std::is_same_v<T, bool> && std::is_same_v<R, bool>) {
    switch (p) {
      case PrimId::Not: return map([&](int64_t i) { return !x[i]; });
      case PrimId::Or: return map([&](int64_t i) { return x[i] || y[i]; });
      case PrimId::And: return map([&](int64_t i) { return x[i] && y[i]; });
      case PrimId::Xor: return map([&](int64_t i) { return x[i] != y[i]; });
      case PrimId::Nor: return map([&](int64_t i) { return !(x[i] || y[i]); });
      case PrimId::Nand: return map([&](int64_t i) { return !(x[i] && y[i]); });
      default: break;
    }
  }
  if constexpr (std::is_same_v<T, bool> && std::is_same_v<R, int64_t>) {
    if (p == PrimId::Btoi) return map([&](int64_t i) { return int64_t{x[i] ? 1 : 0}; });
  }
  if constexpr (std::is_same_v<T, uint8_t> && std::is_same_v<R, int64_t>) {
    if (p == PrimId::CharCode) return map([&](int64_t i) { return static_cast<int64_t>(x[i]); });
  }
  if constexpr (is_int_v<T> && std::is_same_v<T, R>) {
    using U = std::make_unsigned_t<T>;
    switch (p) {
      case PrimId::Not: return map([&](int64_t i) { return T(~x[i]); });
      case PrimId::Or: return map([&](int64_t i) { return T(x[i] | y[i]); });
      case PrimId::And: return map([&](int64_t i) { return T(x[i] & y[i]); });
      case PrimId::Xor: return map([&](int64_t i) { return T(x[i] ^ y[i]); });
      case PrimId::Nor: return map([&](int64_t i) { return T(~(x[i] | y[i])); });
      case PrimId::Nand: return map([&](int64_t i) { return T(~(x[i] & y[i])); });
      case PrimId::Add: return map([&](int64_t i) { return T(U(x[i]) + U(y[i])); });
      case PrimId::Sub: return map([&](int64_t i) { return T(U(x[i]) - U(y[i])); });
      case PrimId::Mul: return map([&](int64_t i) { return T(U(x[i]) * U(y[i])); });
      case PrimId::Negate: return map([&](int64_t i) { return T(U{0} - U(x[i])); });
      default: break;
    }
  }
  if constexpr (std::is_floating_point_v<T> && std::is_same_v<T, R>) {
    switch (p) {
      case PrimId::Add: return map([&](int64_t i) { return x[i] + y[i]; });
      case PrimId::Sub: return map([&](int64_t i) { return x[i] - y[i]; });
      case PrimId::Mul: return map([&](int64_t i) { return x[i] * y[i]; });
      case PrimId::Div: return map([&](int64_t i) { return x[i] / y[i]; });
      case PrimId::Negate: return map([&](int64_t i) { return -x[i]; });
      default: break;
    }
  }
  if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<T, uint8_t> && !std::is_same_v<R, bool> &&
                !std::is_same_v<R, uint8_t>) {
    switch (p) {
      case PrimId::ToFloat: case PrimId::ToF64: case PrimId::ToF32: case PrimId::ToI64:
        return map([&](int64_t i) { return static_cast<R>(x[i]); });
      case PrimId::ToI32:
        if constexpr (is_int_v<T>) return map([&](int64_t i) { return static_cast<int32_t>(static_cast<uint32_t>(x[i])); });
        break;
      default: break;
    }
  }
  throw lang::InternalError("internal error: kernel node with a primitive the kernel loop does not know");
}

template <class T>
lang::Value boxed(T x) {
  if constexpr (std::is_same_v<T, double>) return lang::Value::float_(x);
  else if constexpr (std::is_same_v<T, float>) return lang::Value::f32(x);
  else if constexpr (std::is_same_v<T, bool>) return lang::Value::bool_(x);
  else if constexpr (std::is_same_v<T, uint8_t>) return lang::Value::char_(x);
  else if constexpr (std::is_same_v<T, int32_t>) return lang::Value::i32(x);
  else return lang::Value::int_(x);
}

template <class T>
T const_value(const lang::Value& v) {
  if constexpr (std::is_same_v<T, double>) return v.as_float();
  else if constexpr (std::is_same_v<T, float>) return v.as_f32();
  else if constexpr (std::is_same_v<T, bool>) return v.as_bool();
  else if constexpr (std::is_same_v<T, uint8_t>) return v.as_char();
  else if constexpr (std::is_same_v<T, int32_t>) return v.as_i32();
  else return v.as_int();
}

/// Element i of a flat scalar array of `kind`, as a Value.
lang::Value value_at(const void* a, TypeKind kind, int64_t i) {
  return with_scalar(kind, [&](auto tag) { return boxed(static_cast<const typename decltype(tag)::type*>(a)[i]); });
}

/// True for the nodes eval_typed computes; the others (math functions and the nodes that can
/// fail) go through the interpreter's primitives, an element at a time.
bool typed_node(const KernelBody& k, const KernelNode& n) {
  switch (n.prim) {
    case PrimId::Exp: case PrimId::Sin: case PrimId::Cos: case PrimId::Tan: case PrimId::Asin: case PrimId::Acos:
    case PrimId::Atan: case PrimId::Sinh: case PrimId::Cosh: case PrimId::Tanh: case PrimId::Eql:
      return false;
    // Integer / and rem, even by a literal they cannot fail by (KernelBody::node_can_fail).
    case PrimId::Div: case PrimId::Rem:
      return n.type->kind != TypeKind::Int && n.type->kind != TypeKind::I32 && !k.node_can_fail(n);
    default: return !k.node_can_fail(n);
  }
}

/// Lowers a failure record to `mine` (an atomic unsigned min: chunks run in parallel).
void lower_record(std::atomic_ref<uint64_t> record, uint64_t mine) {
  uint64_t seen = record.load(std::memory_order_relaxed);
  while (mine < seen && !record.compare_exchange_weak(seen, mine, std::memory_order_relaxed)) {
  }
}

/// One node over elements [first, first + m) by the interpreter's primitive. An element
/// that fails lowers `record` to its kernel_failure_record and computes 0.
void eval_by_value(const KernelBody& k, uint32_t node, const void* const* a, void* r, int64_t m, int64_t first,
                   uint64_t* record) {
  const KernelNode& n = k.nodes[node];
  lang::eval::PrimCall call{n.prim, n.span, nullptr, nullptr, nullptr};
  std::vector<lang::Value> args(n.args.size());
  with_scalar(n.type->kind, [&](auto tag) {
    using R = typename decltype(tag)::type;
    R* out = static_cast<R*>(r);
    for (int64_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n.args.size(); ++j) args[j] = value_at(a[j], k.nodes[n.args[j]].type->kind, i);
      try {
        out[i] = const_value<R>(lang::eval::apply_prim(call, args.data()));
      } catch (const lang::eval::EvalError&) {
        if (record == nullptr) throw;  // a node that cannot fail does not
        out[i] = R{};
        lower_record(std::atomic_ref<uint64_t>(*record), flatten::kernel_failure_record(node, static_cast<uint64_t>(first + i)));
      }
    }
  });
}

void eval_node(const KernelBody& k, const KernelNode& n, const void* const* a, void* r, int64_t m) {
  if (n.prim == PrimId::Select) {
    const bool* f = static_cast<const bool*>(a[0]);
    with_scalar(n.type->kind, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = static_cast<const T*>(a[1]);
      const T* y = static_cast<const T*>(a[2]);
      T* o = static_cast<T*>(r);
      for (int64_t i = 0; i < m; ++i) o[i] = f[i] ? x[i] : y[i];
    });
    return;
  }
  with_scalar(k.nodes[n.args[0]].type->kind, [&](auto ta) {
    with_scalar(n.type->kind, [&](auto tr) {
      eval_typed<typename decltype(ta)::type, typename decltype(tr)::type>(n.prim, a, r, m);
    });
  });
}

/// The installed compiler's kernel (Note [Kernel compilers]), with the inputs in the mask
/// `strided` read strided (HostKernelFn), or nullptr where there is none (an AOT program holds
/// no strided ones), NDP_NO_JIT is set or compilation failed (said at NDP_DEBUG >= 1; the
/// interpretive loop then runs). A failing kernel is not retried.
HostKernelFn host_kernel(const KernelBody& k, uint64_t strided = 0) {
  static const bool disabled = [] {
    const char* s = std::getenv("NDP_NO_JIT");
    return s && *s && std::string(s) != "0";
  }();
  exec::KernelCompiler* compiler = kernel_compiler();
  if (disabled || compiler == nullptr) return nullptr;
  static std::mutex failed_mu;
  static std::unordered_map<std::string, bool> failed;
  const std::string key = strided == 0 ? k.key() : k.key() + "|strided " + std::to_string(strided);
  try {
    {
      std::lock_guard<std::mutex> lock(failed_mu);
      if (failed.count(key)) return nullptr;
    }
    CompileTimer timer;  // Note [Compile time apart] (a lookup when compiled before)
    if (strided == 0) return compiler->host(k);
    if (HostKernelFn fn = compiler->host_strided(k, strided)) return fn;
    std::lock_guard<std::mutex> lock(failed_mu);
    failed[key] = true;  // not held: the plain kernel serves
    return nullptr;
  } catch (std::exception& e) {
    // The interpreter gives the same answers, slower; the tests make the fallback an error
    // (tests/meson.build), so that a kernel the compiler gets wrong cannot hide behind it.
    if (const char* f = std::getenv("NDP_JIT_FALLBACK"); f && std::string(f) == "error")
      throw lang::InternalError(std::string("kernel compilation failed (NDP_JIT_FALLBACK=error): ") + e.what());
    const char* d = std::getenv("NDP_DEBUG");
    if (d && std::atoi(d) >= 1)
      std::fprintf(stderr, "ndp: kernel compilation failed, interpreting it instead: %s\n", e.what());
    std::lock_guard<std::mutex> lock(failed_mu);
    failed[key] = true;
    return nullptr;
  }
}

/// A sequence node over elements [first, first + m) (Note [Sequences in loop kernels]): the
/// pointers of the sequences follow the inputs in `ins`. An index out of bounds lowers
/// `record` (where the node's guard holds) and reads 0.
void eval_seq_node(const KernelBody& k, uint32_t node, const void* const* at_args, const void* const* ins, void* r,
                   int64_t m, int64_t first, uint64_t* record) {
  const KernelNode& n = k.nodes[node];
  const size_t p = k.inputs.size() + k.seq_pointer(n.input);  // the sequence's rows' offsets
  const int64_t* offsets = static_cast<const int64_t*>(ins[p]);
  const int64_t* rows = static_cast<const int64_t*>(at_args[0]);
  if (n.kind == KernelNode::Kind::SeqLength) {
    int64_t* out = static_cast<int64_t*>(r);
    for (int64_t i = 0; i < m; ++i) out[i] = offsets[rows[i] + 1] - offsets[rows[i]];
    return;
  }
  const int64_t* index = static_cast<const int64_t*>(at_args[1]);
  // A write (Note [Sequence state in loop kernels]) is checked here and stored by the loop; its
  // value is the value written.
  const bool write = n.kind == KernelNode::Kind::SeqWrite;
  const size_t guard_arg = write ? 3 : 2;
  const bool* guard = n.args.size() > guard_arg ? static_cast<const bool*>(at_args[guard_arg]) : nullptr;
  with_scalar(n.type->kind, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* elems = static_cast<const T*>(write ? at_args[2] : ins[p + 1 + n.component]);
    T* out = static_cast<T*>(r);
    for (int64_t i = 0; i < m; ++i) {
      const int64_t start = offsets[rows[i]], length = offsets[rows[i] + 1] - start;
      if (write) out[i] = elems[i];
      if (index[i] >= 0 && index[i] < length) {
        if (!write) out[i] = elems[start + index[i]];
      } else {
        if (!write) out[i] = T{};
        if (!guard || guard[i])
          lower_record(std::atomic_ref<uint64_t>(*record), flatten::kernel_failure_record(node, static_cast<uint64_t>(first + i)));
      }
    }
  });
}

/// One instance's nodes by the node functions above at m = 1, each value in 8 bytes: the
/// interpretive loop's evaluator, which runs a fold's region once per index (Note [Folds in
/// kernels]). A failing node lowers `record`.
class OneInstance {
 public:
  /// A fold stops early once the steps pass `budget` (the instance then gives up: Note [Loops
  /// that give up]).
  OneInstance(const KernelBody& k, const void* const* ins, int64_t instance, uint64_t* record, int64_t budget)
      : k_(k), ins_(ins), instance_(instance), record_(record), budget_(budget), slot_(k.nodes.size()) {}

  /// The nodes in [begin, end), the first `nstate` inputs read from `state`.
  void range(uint32_t begin, uint32_t end, const uint64_t* state, size_t nstate) {
    for (uint32_t j = begin; j < end; ++j) {
      const KernelNode& n = k_.nodes[j];
      void* r = &slot_[j];
      const void* args[4] = {nullptr, nullptr, nullptr, nullptr};
      for (size_t a = 0; a < n.args.size() && a < 4; ++a) args[a] = &slot_[n.args[a]];
      if (n.args.size() < 2) args[1] = args[0];
      switch (n.kind) {
        case KernelNode::Kind::Input: {
          const size_t w = storage_width(n.type->kind);
          if (n.input < nstate) std::memcpy(r, &state[n.input], w);
          else std::memcpy(r, static_cast<const char*>(ins_[n.input]) + static_cast<size_t>(instance_) * w, w);
          break;
        }
        case KernelNode::Kind::Instance: std::memcpy(r, &instance_, sizeof instance_); break;
        case KernelNode::Kind::Const:
          with_scalar(n.type->kind, [&](auto tag) {
            using T = typename decltype(tag)::type;
            T x = const_value<T>(n.value);
            std::memcpy(r, &x, sizeof x);
          });
          break;
        case KernelNode::Kind::SeqLength: case KernelNode::Kind::SeqElt: case KernelNode::Kind::SeqWrite:
          eval_seq_node(k_, j, args, ins_, r, 1, instance_, record_);
          break;
        case KernelNode::Kind::SeqAppend: slot_[j] = slot_[n.args[1]]; break;
        case KernelNode::Kind::Fail:
          slot_[j] = 0;
          if (get<bool>(n.args[0]))
            lower_record(std::atomic_ref<uint64_t>(*record_), flatten::kernel_failure_record(j, static_cast<uint64_t>(instance_)));
          break;
        case KernelNode::Kind::FoldIndex: {
          const uint32_t f = n.input;
          const KernelNode& fold = k_.nodes[f];
          uint64_t acc = slot_[fold.args[1]];
          const int64_t count = get<int64_t>(fold.args[0]);
          for (int64_t i = 0; i < count && steps_ <= budget_; ++i) {
            ++steps_;
            std::memcpy(r, &i, sizeof i);
            for (uint32_t a = j + 1; a < f; ++a)
              if (k_.nodes[a].kind == KernelNode::Kind::FoldAcc && k_.nodes[a].input == f) slot_[a] = acc;
            range(j + 1, f, state, nstate);
            acc = slot_[fold.args[2]];
          }
          slot_[f] = acc;
          j = f;
          break;
        }
        case KernelNode::Kind::FoldAcc: case KernelNode::Kind::Fold: break;  // set by the FoldIndex
        case KernelNode::Kind::Prim:
          slot_[j] = 0;
          if (typed_node(k_, n)) eval_node(k_, n, args, r, 1);
          else eval_by_value(k_, j, args, r, 1, instance_, record_);
          break;
      }
    }
  }

  template <class T>
  T get(uint32_t node) const {
    T x;
    std::memcpy(&x, &slot_[node], sizeof x);
    return x;
  }
  uint64_t bits(uint32_t node) const { return slot_[node]; }
  /// The fold steps made (Note [Loops that give up]).
  int64_t steps() const { return steps_; }

 private:
  const KernelBody& k_;
  const void* const* ins_;
  int64_t instance_;
  uint64_t* record_;
  int64_t budget_;
  std::vector<uint64_t> slot_;
  int64_t steps_ = 0;
};

/// Where an appended sequence's pointers are among `ins` (Note [Appended sequences in loop
/// kernels]): its input rows' offsets and components, then its slots.
struct AppendedPointers {
  const int64_t* offsets;
  size_t first_component;  // in ins
  const int64_t* slots;
  int64_t* lengths;
  size_t first_slot_component;
};

AppendedPointers appended_pointers(const KernelBody& k, uint32_t q, const void* const* ins) {
  const size_t p = k.inputs.size() + k.seq_pointer(q), ncomp = k.seqs[q].components.size();
  return {static_cast<const int64_t*>(ins[p]), p + 1, static_cast<const int64_t*>(ins[p + 1 + ncomp]),
          static_cast<int64_t*>(const_cast<void*>(ins[p + 2 + ncomp])), p + 3 + ncomp};
}

/// A loop kernel by the interpretive loop (Note [Loop kernels]): each instance runs one
/// iteration at a time; a map kernel's (Note [Map kernels]) runs its body once. Slow, a
/// fallback where nothing compiles kernels.
void interpret_loop(const KernelBody& k, int64_t begin, int64_t end, const void* const* ins, void* const* outs) {
  const size_t nstate = k.loop_next.size(), nresults = k.outputs.size();
  uint64_t* record = k.can_fail() ? static_cast<uint64_t*>(outs[nresults]) : nullptr;
  std::vector<uint64_t> state(nstate);
  for (int64_t i = begin; i < end; ++i) {
    for (size_t j = 0; j < nstate; ++j) {
      const size_t w = storage_width(k.inputs[j]->kind);
      state[j] = 0;
      std::memcpy(&state[j], static_cast<const char*>(ins[j]) + static_cast<size_t>(i) * w, w);
    }
    // Each appended sequence's row so far: its input row, copied to the slot (what fits).
    std::vector<int64_t> count(k.seqs.size(), 0);
    for (uint32_t q = 0; q < k.seqs.size(); ++q) {
      if (!k.seqs[q].appended) continue;
      const AppendedPointers a = appended_pointers(k, q, ins);
      const int64_t length = a.offsets[i + 1] - a.offsets[i], cap = a.slots[i + 1] - a.slots[i];
      for (size_t c = 0; c < k.seqs[q].components.size(); ++c) {
        const size_t w = storage_width(k.seqs[q].components[c]->kind);
        std::memcpy(static_cast<char*>(const_cast<void*>(ins[a.first_slot_component + c])) + static_cast<size_t>(a.slots[i]) * w,
                    static_cast<const char*>(ins[a.first_component + c]) + static_cast<size_t>(a.offsets[i]) * w,
                    static_cast<size_t>(std::min(length, cap)) * w);
      }
      count[q] = length;
    }
    // Fold steps (Note [Loops that give up]); a map kernel has no budget (Note [Map kernels]).
    const int64_t budget = k.loop ? flatten::kFoldBudget : std::numeric_limits<int64_t>::max();
    int64_t spent = 0;
    for (;;) {
      uint64_t mine = flatten::kNoKernelFailure;
      OneInstance e(k, ins, i, &mine, budget - spent);
      e.range(0, static_cast<uint32_t>(k.nodes.size()), state.data(), nstate);
      spent += e.steps();
      if (spent > budget)
        lower_record(std::atomic_ref<uint64_t>(mine), flatten::kernel_failure_record(k.nodes.size(), static_cast<uint64_t>(i)));
      if (mine != flatten::kNoKernelFailure) {
        lower_record(std::atomic_ref<uint64_t>(*record), mine);
        break;
      }
      const bool done = !k.loop || e.get<bool>(k.loop_done);
      for (uint32_t j = 0; j < k.nodes.size(); ++j) {
        const KernelNode& n = k.nodes[j];
        const size_t w = n.type ? storage_width(n.type->kind) : 0;
        if (n.kind == KernelNode::Kind::SeqWrite && !done) {  // the written sequences' arrays are the executor's copies
          if (n.args.size() > 3 && !e.get<bool>(n.args[3])) continue;
          const size_t p = k.inputs.size() + k.seq_pointer(n.input);
          const int64_t* offsets = static_cast<const int64_t*>(ins[p]);
          const int64_t row = e.get<int64_t>(n.args[0]), index = e.get<int64_t>(n.args[1]);
          if (index < 0 || index >= offsets[row + 1] - offsets[row]) continue;
          char* elems = static_cast<char*>(const_cast<void*>(ins[p + 1 + n.component]));
          const uint64_t x = e.bits(n.args[2]);
          std::memcpy(elems + static_cast<size_t>(offsets[row] + index) * w, &x, w);
        } else if (n.kind == KernelNode::Kind::SeqAppend) {  // done or not
          if (n.args.size() > 2 && !e.get<bool>(n.args[2])) continue;
          const AppendedPointers a = appended_pointers(k, n.input, ins);
          if (count[n.input] < a.slots[i + 1] - a.slots[i]) {
            char* out = static_cast<char*>(const_cast<void*>(ins[a.first_slot_component + n.component]));
            const uint64_t x = e.bits(n.args[1]);
            std::memcpy(out + static_cast<size_t>(a.slots[i] + count[n.input]) * w, &x, w);
          }
          if (n.component + 1 == k.seqs[n.input].components.size()) ++count[n.input];
        }
      }
      if (done) {
        for (size_t o = 0; o < nresults; ++o) {
          const size_t w = storage_width(k.nodes[k.outputs[o]].type->kind);
          const uint64_t x = e.bits(k.outputs[o]);
          std::memcpy(static_cast<char*>(outs[o]) + static_cast<size_t>(i) * w, &x, w);
        }
        break;
      }
      for (size_t j = 0; j < nstate; ++j) state[j] = e.bits(k.loop_next[j]);
    }
    for (uint32_t q = 0; q < k.seqs.size(); ++q)
      if (k.seqs[q].appended) appended_pointers(k, q, ins).lengths[i] = count[q];
  }
}

}  // namespace

void interpret_kernel(const KernelBody& k, int64_t begin, int64_t end, const void* const* ins, void* const* outs) {
  size_t nn = k.nodes.size();
  if (end <= begin) return;
  if (k.instance_at_a_time()) return interpret_loop(k, begin, end, ins, outs);
  // A kernel that can fail has its failure record after the outputs (flatten/kernel_abi.h).
  uint64_t* record = k.can_fail() ? static_cast<uint64_t*>(outs[k.outputs.size()]) : nullptr;
  // 8 bytes per element (the widest storage) per node; left uninitialised, as every row is
  // written before it is read.
  size_t rows = static_cast<size_t>(std::min(kChunk, end - begin));
  std::unique_ptr<uint64_t[]> scratch(new uint64_t[nn * rows]);
  std::vector<const void*> at(nn);
  const void* args[4] = {nullptr, nullptr, nullptr, nullptr};
  for (int64_t c = begin; c < end; c += kChunk) {
    int64_t m = std::min(kChunk, end - c);
    for (size_t j = 0; j < nn; ++j) {
      const KernelNode& n = k.nodes[j];
      if (n.kind == KernelNode::Kind::Input) {
        at[j] = static_cast<const char*>(ins[n.input]) + static_cast<size_t>(c) * storage_width(n.type->kind);
        continue;
      }
      void* r = scratch.get() + j * rows;
      at[j] = r;
      if (n.kind == KernelNode::Kind::Const) {
        with_scalar(n.type->kind, [&](auto tag) {
          using T = typename decltype(tag)::type;
          T x = const_value<T>(n.value);
          T* o = static_cast<T*>(r);
          for (int64_t i = 0; i < m; ++i) o[i] = x;
        });
        continue;
      }
      for (size_t a = 0; a < n.args.size() && a < 4; ++a) args[a] = at[n.args[a]];
      if (n.args.size() < 2) args[1] = args[0];
      if (n.kind == KernelNode::Kind::SeqLength || n.kind == KernelNode::Kind::SeqElt || n.kind == KernelNode::Kind::SeqWrite)
        eval_seq_node(k, static_cast<uint32_t>(j), args, ins, r, m, c, record);
      else if (typed_node(k, n)) eval_node(k, n, args, r, m);
      else eval_by_value(k, static_cast<uint32_t>(j), args, r, m, c, record);
    }
    for (size_t o = 0; o < k.outputs.size(); ++o) {
      const KernelNode& n = k.nodes[k.outputs[o]];
      size_t w = storage_width(n.type->kind);
      std::memcpy(static_cast<char*>(outs[o]) + static_cast<size_t>(c) * w, at[k.outputs[o]], static_cast<size_t>(m) * w);
    }
  }
}

void run_chunks(HostKernelFn fn, int64_t n, const void* const* ins, void* const* outs, int64_t grain) {
  if (n <= grain) {
    if (n > 0) flatten::call_host_kernel(fn, 0, n, ins, outs);
    return;
  }
  int64_t chunks = (n + grain - 1) / grain;
  parallel_blocks_for(chunks, [&](int64_t c) {
    flatten::call_host_kernel(fn, c * grain, std::min(n, (c + 1) * grain), ins, outs);
  });
}

namespace {

/// A kernel input whose buffer is generated (Note [Generated buffers] in exec/host/vec.h) and
/// not yet in memory: read in place or filled where the kernel runs.
struct GeneratedInput {
  size_t input;
  const GeneratedBuffer* buffer;
};

/// The generated inputs among `ins`.
std::vector<GeneratedInput> generated_inputs(std::span<const Vec> ins) {
  std::vector<GeneratedInput> g;
  for (size_t j = 0; j < ins.size(); ++j)
    if (const GeneratedBuffer* b = ins[j].generated(); b && !b->filled()) g.push_back({j, b});
  return g;
}

/// The instances a generated input is filled for at once: its slice stays in the core's L1
/// and L2 caches until the kernel reads it.
constexpr int64_t kFillSlice = 2048;

/// The pointer whose element i is `element` (as an address: it may lie before any buffer).
const void* moved_to(const void* element, int64_t i, size_t width) {
  return reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(element) - static_cast<uintptr_t>(i) * width);
}

/// run(begin, end, ins) over instances [from, to) with `ins` (pointers at instance 0; the
/// generated inputs' are not read), a slice at a time: within a slice, a view is read in place,
/// its pointer moved over each run's source and the kernel run a run at a time, and any other
/// generated input (or a view whose source is not in memory, or whose run is short) is filled
/// into scratch of its own for the rest of the slice. Either way instance i reads it at i. The
/// kernel's instance i is element `first` + i of the generated buffers.
template <class Run>
void run_generated(int64_t from, int64_t to, const std::vector<const void*>& ins, std::span<const GeneratedInput> generated,
                   const Run& run, int64_t first = 0) {
  std::vector<const void*> at = ins;
  struct Reading {
    const void* base = nullptr;  // instance i's value at i
    int64_t until = 0;           // for instances before this one
    std::unique_ptr<uint64_t[]> scratch;
  };
  std::vector<Reading> reading(generated.size());
  for (int64_t b = from; b < to; b += kFillSlice) {
    const int64_t e = std::min(to, b + kFillSlice);
    for (Reading& r : reading) r.until = b;
    for (int64_t p = b; p < e;) {
      int64_t stop = e;
      for (size_t g = 0; g < generated.size(); ++g) {
        Reading& r = reading[g];
        const GeneratedBuffer& buf = *generated[g].buffer;
        if (r.until <= p) {  // the next run in place, else the rest of the slice filled
          int64_t run_end = 0;
          const void* q = buf.in_place(first + p, run_end);
          // (a short run costs a kernel call for a few instances: filled, it costs a copy)
          if (q && run_end - first < e && run_end - (first + p) < kLeastGeneratedRun) q = nullptr;
          if (q) {
            r.base = moved_to(q, p, buf.width());
            r.until = std::min(e, run_end - first);
          } else {
            if (!r.scratch) r.scratch.reset(new uint64_t[static_cast<size_t>(kFillSlice)]);
            buf.fill(first + p, first + e, r.scratch.get());
            r.base = moved_to(r.scratch.get(), p, buf.width());
            r.until = e;
          }
        }
        at[generated[g].input] = r.base;
        stop = std::min(stop, r.until);
      }
      run(p, stop, at.data());
      p = stop;
    }
  }
}

}  // namespace

std::function<void(int64_t, int64_t, void*)> kernel_generator(const KernelBody& k, std::span<const Vec> ins) {
  NDP_ASSERT(!ins.empty() && ins.size() == k.inputs.size() && ins.size() <= flatten::kMaxConsumerInputs &&
                 k.outputs.size() == 1 && !k.can_fail(),
             "consumer kernel operands do not match its body");
  struct Inputs {
    std::array<const char*, flatten::kMaxConsumerInputs> base{};
    std::array<size_t, flatten::kMaxConsumerInputs> width{};
  } in;
  for (size_t j = 0; j < ins.size(); ++j) {
    NDP_ASSERT(ins[j].size() == ins[0].size(), "kernel operands of different lengths");
    in.base[j] = static_cast<const char*>(ins[j].raw_data());
    in.width[j] = storage_width(k.inputs[j]->kind);
  }
  HostKernelFn fn = ins[0].size() >= jit_min() ? host_kernel(k) : nullptr;
  std::vector<GeneratedInput> generated = generated_inputs(ins);
  for (const GeneratedInput& g : generated) in.base[g.input] = nullptr;  // filled a slice at a time
  return [&k, in, fn, ninputs = ins.size(), generated = std::move(generated)](int64_t begin, int64_t end, void* out) {
    // The inputs moved to `begin`, so the kernel's instances [0, end - begin) are the window.
    std::vector<const void*> at(ninputs);
    for (size_t j = 0; j < ninputs; ++j) at[j] = in.base[j] ? in.base[j] + static_cast<size_t>(begin) * in.width[j] : nullptr;
    auto run = [&](int64_t from, int64_t to, const void* const* moved) {
      void* outs[1] = {out};
      if (fn) flatten::call_host_kernel(fn, from, to, moved, outs);
      else interpret_kernel(k, from, to, moved, outs);
    };
    if (generated.empty()) run(0, end - begin, at.data());
    else run_generated(0, end - begin, at, generated, run, begin);
  };
}

namespace {

/// The element arrays of the flat components of `v` (Note [Sequences in loop kernels]).
void component_pointers(const Vec& v, std::vector<const void*>& out) {
  if (v.type()->kind == TypeKind::Pair) {
    component_pointers(v.first(), out);
    component_pointers(v.second(), out);
  } else {
    out.push_back(v.raw_data());
  }
}

/// A copy of `v` (flat scalars and pairs of them) in buffers of its own, for a loop to change
/// (Note [Sequence state in loop kernels]).
Vec fresh_copy(const Vec& v) {
  if (v.type()->kind == TypeKind::Pair) return Vec::pair(v.type(), fresh_copy(v.first()), fresh_copy(v.second()));
  return with_scalar(v.type()->kind, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Buf<T> b(v.size());
    if (v.size() > 0) std::memcpy(b.data(), v.raw_data(), static_cast<size_t>(v.size()) * sizeof(T));
    return Vec::scalar(v.type(), v.size(), b.share());
  });
}

}  // namespace

namespace {

/// n elements of type t (flat scalars and pairs of them) in fresh buffers, uninitialised; the
/// pointer of each flat component goes to `ptrs`.
Vec blank(const lang::Type* t, int64_t n, std::vector<const void*>& ptrs) {
  if (t->kind == TypeKind::Pair) {
    Vec a = blank(t->a, n, ptrs);
    return Vec::pair(t, std::move(a), blank(t->b, n, ptrs));
  }
  return with_scalar(t->kind, [&](auto tag) {
    Buf<typename decltype(tag)::type> b(n);
    ptrs.push_back(b.data());
    return Vec::scalar(t, n, b.share());
  });
}

/// The room an appended row gets beyond its input row in the first run (Note [Appended
/// sequences in loop kernels]): what the kernel last needed, by its key, else a guess.
std::mutex room_mu;
std::unordered_map<std::string, int64_t> room_by_kernel;
constexpr int64_t kFirstRoom = 16, kMostRoom = 4096;

int64_t appended_room(const KernelBody& k) {
  std::lock_guard<std::mutex> lock(room_mu);
  auto it = room_by_kernel.find(k.key());
  return it == room_by_kernel.end() ? kFirstRoom : it->second;
}

void note_appended_room(const KernelBody& k, int64_t room) {
  std::lock_guard<std::mutex> lock(room_mu);
  int64_t& r = room_by_kernel[k.key()];
  r = std::min(kMostRoom, std::max(r, room));
}

/// An appended sequence's slots for one run and the rows the kernel left in them.
struct Slots {
  std::shared_ptr<int64_t[]> offsets;  // n + 1
  Buf<int64_t> lengths;                // n, written by the kernel
  Vec elems;                           // the slots' elements
  std::vector<const void*> components;
};

/// The rows of `slots` packed one after another: the sequence of rows (Note [Appended sequences
/// in loop kernels]).
Vec packed_rows(const lang::Type* t, const std::vector<const lang::Type*>& components, int64_t n, Slots& slots, bool exact) {
  auto total_offsets = std::shared_ptr<int64_t[]>(new int64_t[static_cast<size_t>(n) + 1]);
  total_offsets[0] = 0;
  for (int64_t i = 0; i < n; ++i) total_offsets[i + 1] = total_offsets[i] + slots.lengths[i];
  std::shared_ptr<const void> lengths = slots.lengths.share();
  if (exact) return Vec::seq(t, n, lengths, std::move(total_offsets), std::move(slots.elems));
  std::vector<const void*> out;
  Vec elems = blank(t->a, total_offsets[n], out);
  parallel_blocks_for((n + kParallelGrain - 1) / kParallelGrain, [&](int64_t c) {
    for (int64_t i = c * kParallelGrain; i < std::min(n, (c + 1) * kParallelGrain); ++i)
      for (size_t comp = 0; comp < out.size(); ++comp) {
        const size_t w = storage_width(components[comp]->kind);
        std::memcpy(static_cast<char*>(const_cast<void*>(out[comp])) + static_cast<size_t>(total_offsets[i]) * w,
                    static_cast<const char*>(slots.components[comp]) + static_cast<size_t>(slots.offsets[i]) * w,
                    static_cast<size_t>(total_offsets[i + 1] - total_offsets[i]) * w);
      }
  });
  return Vec::seq(t, n, lengths, std::move(total_offsets), std::move(elems));
}

}  // namespace

std::vector<Vec> run_kernel(const KernelBody& k, std::span<const Vec> ins, std::span<const lang::Type* const> out_types,
                            std::span<const Vec> seqs) {
  NDP_ASSERT(!ins.empty() && ins.size() == k.inputs.size() && out_types.size() == k.outputs.size() &&
                 seqs.size() == k.seqs.size(),
             "kernel operands do not match its body");
  int64_t n = ins[0].size();
  for (const Vec& v : ins) NDP_ASSERT(v.size() == n, "kernel operands of different lengths");
  // Uniform inputs give uniform outputs (Note [Uniform buffers]): one instance computes them.
  if (n > 1 && k.seqs.empty() && all_uniform(ins)) {  // (each instance may read its own row)
    std::vector<Vec> r = run_kernel(k, first_instances(ins), out_types, seqs);
    for (Vec& v : r) v = broadcast_first(v, n);
    return r;
  }
  // Each appended row's slot: its input row and some room, or, on a second run, its length.
  const int64_t room = appended_room(k);
  const std::vector<GeneratedInput> generated = generated_inputs(ins);
  std::vector<std::vector<int64_t>> exact(seqs.size());
  for (bool again = false;; again = true) {
    std::vector<const void*> in_ptrs;  // (a generated input's is set where it is filled)
    for (size_t j = 0; j < ins.size(); ++j)
      in_ptrs.push_back(std::any_of(generated.begin(), generated.end(), [&](const GeneratedInput& g) { return g.input == j; })
                            ? nullptr
                            : ins[j].raw_data());
    // After the inputs: each sequence's offsets and components, a copy where the loop writes,
    // and an appended one's slots.
    std::vector<Vec> written(seqs.size());
    std::vector<Slots> slots(seqs.size());
    for (size_t q = 0; q < seqs.size(); ++q) {
      in_ptrs.push_back(seqs[q].offsets());
      if (k.seqs[q].written) written[q] = fresh_copy(seqs[q].elems());
      component_pointers(k.seqs[q].written ? written[q] : seqs[q].elems(), in_ptrs);
      if (!k.seqs[q].appended) continue;
      Slots& sl = slots[q];
      sl.offsets = std::shared_ptr<int64_t[]>(new int64_t[static_cast<size_t>(n) + 1]);
      sl.offsets[0] = 0;
      for (int64_t i = 0; i < n; ++i)
        sl.offsets[i + 1] = sl.offsets[i] + (again ? exact[q][static_cast<size_t>(i)] : seqs[q].length(i) + room);
      sl.lengths = Buf<int64_t>(n);
      sl.elems = blank(seqs[q].type()->a, sl.offsets[n], sl.components);
      in_ptrs.push_back(sl.offsets.get());
      in_ptrs.push_back(sl.lengths.data());
      in_ptrs.insert(in_ptrs.end(), sl.components.begin(), sl.components.end());
    }
    std::vector<std::shared_ptr<const void>> bufs;
    std::vector<void*> out_ptrs;
    for (const lang::Type* t : out_types) {
      with_scalar(t->kind, [&](auto tag) {
        Buf<typename decltype(tag)::type> b(n);
        out_ptrs.push_back(b.data());
        bufs.push_back(b.share());
      });
    }
    uint64_t record = flatten::kNoKernelFailure;  // Note [Kernels that can fail]
    if (k.can_fail()) out_ptrs.push_back(&record);
    // A loop kernel's instances may run long: it is compiled whatever their number.
    const bool at_a_time = k.instance_at_a_time();
    const bool compiled = n >= jit_min() || at_a_time;
    // Strided views of short rows, read strided by the compiled kernel (a run of a few instances
    // a call would cost more than the instances): their sources and numbers in `ins`.
    uint64_t mask = 0;
    std::vector<std::pair<size_t, Strided>> strided;
    for (const GeneratedInput& g : generated)
      if (std::optional<Strided> s = g.buffer->strided(); compiled && s && s->c < kLeastGeneratedRun && g.input < 64) {
        mask |= uint64_t{1} << g.input;
        strided.emplace_back(g.input, *s);
      }
    HostKernelFn fn = mask != 0 ? host_kernel(k, mask) : nullptr;
    if (fn == nullptr) mask = 0;
    if (fn == nullptr && compiled) fn = host_kernel(k);
    std::vector<GeneratedInput> rest = generated;
    if (mask != 0) {
      NDP_ASSERT(in_ptrs.size() == k.inputs.size() + k.seq_pointers(), "a strided kernel's numbers after other pointers");
      for (const auto& [j, s] : strided) {
        in_ptrs[j] = s.source->raw_data();
        for (int64_t x : {s.c, s.stride, s.offset}) in_ptrs.push_back(reinterpret_cast<const void*>(static_cast<intptr_t>(x)));
      }
      std::erase_if(rest, [&](const GeneratedInput& g) { return mask >> g.input & 1; });
    }
    // A loop's instances are each a loop's work (a map kernel's, each a fold's), so they go to
    // the cores a few at a time, not in chunks sized for one elementwise pass (Note [Loop
    // kernels]).
    const int64_t grain = at_a_time ? std::max<int64_t>(1, n / kLoopChunks) : kParallelGrain;
    auto run = [&](int64_t begin, int64_t end, const void* const* at) {
      if (fn) flatten::call_host_kernel(fn, begin, end, at, out_ptrs.data());
      else interpret_kernel(k, begin, end, at, out_ptrs.data());
    };
    auto chunk = [&](int64_t begin, int64_t end) {
      if (rest.empty()) run(begin, end, in_ptrs.data());
      else run_generated(begin, end, in_ptrs, rest, run);
    };
    if (n <= grain) {
      chunk(0, n);
    } else {
      const int64_t chunks = (n + grain - 1) / grain;
      parallel_blocks_for(chunks, [&](int64_t c) { chunk(c * grain, std::min(n, (c + 1) * grain)); });
    }
    if (flatten::gave_up(record, k.nodes.size())) throw flatten::LoopGaveUp{};
    if (record != flatten::kNoKernelFailure) {
      std::vector<lang::Value> at;
      std::vector<std::vector<lang::Value>> rows;
      for (const Vec& v : ins) at.push_back(to_value(v, flatten::failed_instance(record)));
      for (const Vec& v : seqs) rows.push_back(to_values(v));
      raise_kernel_failure(k, record, at, rows);
    }
    // A row that outgrew its slot: every row's length is known now, so run again with them.
    bool outgrown = false;
    for (size_t q = 0; q < seqs.size(); ++q) {
      if (!k.seqs[q].appended || again) continue;
      exact[q].resize(static_cast<size_t>(n));
      int64_t most = 0;
      for (int64_t i = 0; i < n; ++i) {
        exact[q][static_cast<size_t>(i)] = slots[q].lengths[i];
        most = std::max(most, slots[q].lengths[i] - seqs[q].length(i));
        outgrown = outgrown || slots[q].lengths[i] > slots[q].offsets[i + 1] - slots[q].offsets[i];
      }
      note_appended_room(k, most);
    }
    if (outgrown) continue;
    std::vector<Vec> out;
    for (size_t o = 0; o < out_types.size(); ++o) out.push_back(Vec::scalar(out_types[o], n, bufs[o]));
    for (uint32_t q : k.seq_outputs) {
      if (k.seqs[q].appended) out.push_back(packed_rows(seqs[q].type(), k.seqs[q].components, n, slots[q], again));
      else  // the written rows, in the shape they came in
        out.push_back(Vec::seq(seqs[q].type(), seqs[q].size(), seqs[q].buffer(), seqs[q].offsets_buffer(), written[q]));
    }
    return out;
  }
}

}  // namespace ndp::exec::cpu
