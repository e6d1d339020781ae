// ndp's embedding API: compile ndp (NESL) source inside a C++ program and call its functions
// (libndp), or call the functions of a program compiled ahead of time by `ndp compile` through
// the header it writes (libndp_runtime). docs/embedding.md walks through both.
//
//   ndp::Context ctx;                                   // cuda where a GPU is, else cpu
//   ndp::Program prog = ctx.compile("function dot(a, b) = sum({x * y : x in a; y in b});");
//   auto dot = prog.function<double(std::span<const double>, std::span<const double>)>("dot");
//   double d = dot(xs, ys);
//
// Note [Embedding values]
// A handle's C++ signature names the ndp types of its function; each C++ type maps to one ndp
// type, and `function` checks the mapping against the function's type when it makes the handle
// (a polymorphic function is instantiated at the mapped types):
//
//   int64_t int     double float    bool bool    char char    int32_t i32    float f32
//   std::vector<T>, std::span<const T> (arguments only; read in place during the call)  [T]
//   std::string [char]      std::pair<A, B> (A, B)      std::tuple<A, B, C> (A, B, C)
//   ndp::Nested<T>  [[T]] as the values of all the inner sequences plus their lengths
//   ndp::Array<T>   [T] kept where the context computes (GPU memory on cuda) between calls
//
// A function of several arguments, `function f(a, b)`, takes them as C++ arguments in order.
// Values cross in ndp's flat layout (sequences as lengths plus all their elements, pairs as
// two vectors), so arrays are copied once, or not at all for spans, and never element by
// element into objects.
//
// Note [Embedding threads]
// Every call (compile, function, a handle's call) takes one process-wide lock: objects may be
// used from any thread, and calls run one at a time. Objects share what they were made from
// (a Function keeps its Program alive, a Program its compiled code), so they may be copied,
// moved between threads and destroyed in any order.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace ndp {

enum class Backend {
  Default,  // cuda where an NVIDIA GPU and driver are present, else cpu
  Interp,   // the reference interpreter
  Cpu,      // flattened, on the host's cores
  Cuda,     // flattened, on the GPU
};

struct Options {
  Backend backend = Backend::Default;
  /// The GPU for cuda (its CUDA ordinal). Process-wide: the process opens one GPU, the first
  /// time a context needs it; a later context asking for another is an Error.
  int device = 0;
  /// Where the programs' own output goes (print_string, print): the answers of calls are
  /// returned, never printed.
  std::FILE* output = stdout;
  /// The kernel cache folder; empty: NDP_CACHE_DIR, else $XDG_CACHE_HOME/ndp/kernels or
  /// ~/.cache/ndp/kernels; "off": none. Process-wide: the last Context made with one sets it.
  std::string cache_dir;
};

/// A compile error, a runtime error of a call, or a misuse of the API (a function that does
/// not exist, a signature that does not match). `what()` is the whole report as ndp prints it
/// (`file:line:col: error: message`, the source line and a caret line); file() is empty where
/// the error has no place in the source.
class Error : public std::runtime_error {
 public:
  Error(std::string what, std::string message, std::string file = {}, unsigned line = 0, unsigned column = 0)
      : std::runtime_error(std::move(what)), message_(std::move(message)), file_(std::move(file)), line_(line),
        column_(column) {}
  const std::string& message() const { return message_; }
  const std::string& file() const { return file_; }
  unsigned line() const { return line_; }
  unsigned column() const { return column_; }

 private:
  std::string message_, file_;
  unsigned line_, column_;
};

/// A nested sequence [[T]]: the inner sequences' elements back to back, and their lengths.
template <class T>
struct Nested {
  std::vector<T> values;
  std::vector<int64_t> lengths;
  bool operator==(const Nested&) const = default;
};

namespace detail {

/// n values of one ndp type in ndp's flat layout (opaque; the library's).
struct Data;
using DataPtr = std::shared_ptr<const Data>;

enum class Scalar : uint8_t { Int, Float, Bool, Char, I32, F32 };

/// n scalars, room to write them (the returned pointer) before the Data is used.
std::pair<DataPtr, void*> make_scalars(Scalar k, int64_t n);
/// n scalars read in place from `p`, which must outlive the Data (a call's argument).
DataPtr borrow_scalars(Scalar k, const void* p, int64_t n);
/// n sequences cutting `elements` (all their elements, in order) by `lengths`.
DataPtr make_nest(const DataPtr& elements, const int64_t* lengths, int64_t n);
/// n pairs from n firsts and n seconds.
DataPtr pair_of(const DataPtr& first, const DataPtr& second);
/// Throws Error: an Array may be an argument, a result or a part of a tuple, not an element.
[[noreturn]] void fail_nested_array();

int64_t size_of(const Data& d);
/// The same values on the host: `d` itself, or a copy of it from the GPU. The readers below
/// need it (first_of and second_of do not: a pair's parts stay where they are).
DataPtr host_of(const DataPtr& d);
/// For one sequence instance: the number of its elements (wherever it is).
int64_t elements_count(const Data& d);
/// The elements of n scalars of kind k, in their storage (bool and char: one byte).
const void* scalars_of(const Data& d, Scalar k);
/// For n sequences: their n lengths, and all their elements.
const int64_t* lengths_of(const Data& d);
DataPtr elements_of(const Data& d);
DataPtr first_of(const Data& d);
DataPtr second_of(const Data& d);

template <class T, class = void>
struct Traits;  // for each supported C++ type T: type(), build(begin, n), read(data), and
                // keeps_device: whether a result of type T stays on the GPU (it holds an Array)

template <class T, Scalar K, class Storage = T>
struct ScalarTraits {
  static constexpr bool keeps_device = false;
  static constexpr Scalar kind = K;
  static std::string type() {
    constexpr const char* names[] = {"int", "float", "bool", "char", "i32", "f32"};
    return names[static_cast<int>(K)];
  }
  template <class It>
  static DataPtr build(It it, int64_t n) {
    auto [d, p] = make_scalars(K, n);
    Storage* out = static_cast<Storage*>(p);
    for (int64_t i = 0; i < n; ++i, ++it) out[i] = static_cast<Storage>(*it);
    return d;
  }
  static std::vector<T> read(const DataPtr& data) {
    DataPtr d = host_of(data);
    const Storage* p = static_cast<const Storage*>(scalars_of(*d, K));
    return std::vector<T>(p, p + size_of(*d));
  }
};

template <> struct Traits<int64_t> : ScalarTraits<int64_t, Scalar::Int> {};
template <> struct Traits<double> : ScalarTraits<double, Scalar::Float> {};
template <> struct Traits<bool> : ScalarTraits<bool, Scalar::Bool, uint8_t> {};
template <> struct Traits<char> : ScalarTraits<char, Scalar::Char, uint8_t> {};
template <> struct Traits<int32_t> : ScalarTraits<int32_t, Scalar::I32> {};
template <> struct Traits<float> : ScalarTraits<float, Scalar::F32> {};

/// Sequences of T from the elements of `n` sequences in ranges (a container or a string each).
template <class Elem, class It>
DataPtr build_sequences(It it, int64_t n) {
  std::vector<int64_t> lengths(static_cast<size_t>(n));
  std::vector<Elem> all;
  for (int64_t i = 0; i < n; ++i, ++it) {
    lengths[static_cast<size_t>(i)] = static_cast<int64_t>(std::size(*it));
    all.insert(all.end(), std::begin(*it), std::end(*it));
  }
  return make_nest(Traits<Elem>::build(all.begin(), static_cast<int64_t>(all.size())), lengths.data(), n);
}

/// The n sequences of `d`, each as a Seq built from its elements' range.
template <class Seq, class Elem>
std::vector<Seq> read_sequences(const DataPtr& data) {
  DataPtr d = host_of(data);
  std::vector<Elem> all = Traits<Elem>::read(elements_of(*d));
  const int64_t* lengths = lengths_of(*d);
  std::vector<Seq> out;
  out.reserve(static_cast<size_t>(size_of(*d)));
  size_t at = 0;
  for (int64_t i = 0; i < size_of(*d); ++i) {
    size_t len = static_cast<size_t>(lengths[i]);
    out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(at), all.begin() + static_cast<std::ptrdiff_t>(at + len));
    at += len;
  }
  return out;
}

template <class T>
struct Traits<std::vector<T>> {
  static constexpr bool keeps_device = false;
  static std::string type() { return "[" + Traits<T>::type() + "]"; }
  template <class It>
  static DataPtr build(It it, int64_t n) {
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>) {
      if (n == 1) {  // one flat array: its elements are a copy of it, made in one pass
        int64_t len = static_cast<int64_t>(it->size());
        return make_nest(Traits<T>::build(it->data(), len), &len, 1);
      }
    }
    return build_sequences<T>(it, n);
  }
  static std::vector<std::vector<T>> read(const DataPtr& d) { return read_sequences<std::vector<T>, T>(d); }
};

template <>
struct Traits<std::string> {
  static constexpr bool keeps_device = false;
  static std::string type() { return "[char]"; }
  template <class It>
  static DataPtr build(It it, int64_t n) { return build_sequences<char>(it, n); }
  static std::vector<std::string> read(const DataPtr& d) { return read_sequences<std::string, char>(d); }
};

/// A span argument is read in place for the call: no copy on the host.
template <class T>
struct Traits<std::span<const T>> {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, "a span argument holds int64_t, double, int32_t, float or char");
  static constexpr bool keeps_device = false;
  static std::string type() { return "[" + Traits<T>::type() + "]"; }
  template <class It>
  static DataPtr build(It it, int64_t n) {
    if (n != 1) return build_sequences<T>(it, n);
    int64_t len = static_cast<int64_t>(it->size());
    return make_nest(borrow_scalars(Traits<T>::kind, it->data(), len), &len, 1);
  }
};

template <class T>
struct Traits<Nested<T>> {
  static constexpr bool keeps_device = false;
  static std::string type() { return "[[" + Traits<T>::type() + "]]"; }
  template <class It>
  static DataPtr build(It it, int64_t n) {
    std::vector<std::vector<T>> values;
    std::vector<std::vector<int64_t>> lengths;
    std::vector<int64_t> outer(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i, ++it) {
      values.push_back(it->values);
      lengths.push_back(it->lengths);
      outer[static_cast<size_t>(i)] = static_cast<int64_t>(it->lengths.size());
    }
    std::vector<int64_t> inner;
    std::vector<T> all;
    for (size_t i = 0; i < values.size(); ++i) {
      inner.insert(inner.end(), lengths[i].begin(), lengths[i].end());
      all.insert(all.end(), values[i].begin(), values[i].end());
    }
    DataPtr seqs = make_nest(Traits<T>::build(all.begin(), static_cast<int64_t>(all.size())), inner.data(),
                             static_cast<int64_t>(inner.size()));
    return make_nest(seqs, outer.data(), n);
  }
  static std::vector<Nested<T>> read(const DataPtr& data) {
    DataPtr d = host_of(data);
    DataPtr seqs = elements_of(*d);
    std::vector<T> all = Traits<T>::read(elements_of(*seqs));
    const int64_t* outer = lengths_of(*d);
    const int64_t* inner = lengths_of(*seqs);
    std::vector<Nested<T>> out(static_cast<size_t>(size_of(*d)));
    size_t s = 0, e = 0;
    for (Nested<T>& v : out) {
      int64_t count = outer[&v - out.data()];
      for (int64_t k = 0; k < count; ++k, ++s) {
        v.lengths.push_back(inner[s]);
        v.values.insert(v.values.end(), all.begin() + static_cast<std::ptrdiff_t>(e),
                        all.begin() + static_cast<std::ptrdiff_t>(e + static_cast<size_t>(inner[s])));
        e += static_cast<size_t>(inner[s]);
      }
    }
    return out;
  }
};

template <class A, class B>
struct Traits<std::pair<A, B>> {
  static constexpr bool keeps_device = Traits<A>::keeps_device || Traits<B>::keeps_device;
  static std::string type() { return "(" + Traits<A>::type() + ", " + Traits<B>::type() + ")"; }
  template <class It>
  static DataPtr build(It it, int64_t n) {
    std::vector<A> as;
    std::vector<B> bs;
    for (int64_t i = 0; i < n; ++i, ++it) {
      as.push_back(it->first);
      bs.push_back(it->second);
    }
    return pair_of(Traits<A>::build(as.begin(), n), Traits<B>::build(bs.begin(), n));
  }
  static std::vector<std::pair<A, B>> read(const DataPtr& d) {
    std::vector<A> as = Traits<A>::read(first_of(*d));
    std::vector<B> bs = Traits<B>::read(second_of(*d));
    std::vector<std::pair<A, B>> out;
    for (size_t i = 0; i < as.size(); ++i) out.emplace_back(std::move(as[i]), std::move(bs[i]));
    return out;
  }
};

/// Tuples are right-nested pairs, as in NESL: (a, b, c) is (a, (b, c)).
template <class A, class... Rest>
struct Traits<std::tuple<A, Rest...>, std::enable_if_t<(sizeof...(Rest) >= 1)>> {
  using Tail = std::conditional_t<sizeof...(Rest) == 1, std::tuple_element_t<0, std::tuple<Rest..., void>>,
                                  std::tuple<Rest...>>;
  using AsPair = std::pair<A, Tail>;
  static constexpr bool keeps_device = Traits<AsPair>::keeps_device;
  static std::string type() { return Traits<AsPair>::type(); }  // (A, (B, C)) is NESL's (A, B, C)
  static Tail tail(const std::tuple<A, Rest...>& t) {
    if constexpr (sizeof...(Rest) == 1) return std::get<1>(t);
    else return std::apply([](const A&, const Rest&... r) { return std::tuple<Rest...>(r...); }, t);
  }
  template <class It>
  static DataPtr build(It it, int64_t n) {
    std::vector<AsPair> pairs;
    for (int64_t i = 0; i < n; ++i, ++it) pairs.emplace_back(std::get<0>(*it), tail(*it));
    return Traits<AsPair>::build(pairs.begin(), n);
  }
  static std::vector<std::tuple<A, Rest...>> read(const DataPtr& d) {
    std::vector<std::tuple<A, Rest...>> out;
    for (AsPair& p : Traits<AsPair>::read(d)) {
      if constexpr (sizeof...(Rest) == 1) out.emplace_back(std::move(p.first), std::move(p.second));
      else out.push_back(std::tuple_cat(std::tuple<A>(std::move(p.first)), std::move(p.second)));
    }
    return out;
  }
};

template <class T>
using Plain = std::remove_cvref_t<T>;

/// The argument of a function of the parameters Args: one value, or right-nested pairs.
template <class A>
DataPtr build_argument(const A& a) {
  return Traits<Plain<A>>::build(&a, 1);
}
template <class A, class B, class... Rest>
DataPtr build_argument(const A& a, const B& b, const Rest&... rest) {
  return pair_of(Traits<Plain<A>>::build(&a, 1), build_argument(b, rest...));
}
template <class A>
std::string argument_type() {
  return Traits<Plain<A>>::type();
}
template <class A, class B, class... Rest>
std::string argument_type() {
  return "(" + Traits<Plain<A>>::type() + ", " + argument_type<B, Rest...>() + ")";
}

struct ProgramImpl;
struct FunctionImpl;
struct ContextImpl;

/// A fused kernel of a program compiled ahead of time for the cpu (`ndp compile --target=cpu`):
/// the stable hash of its body's key and its code (flatten/kernel_abi.h's HostKernelFn).
struct CompiledKernel {
  uint64_t key_hash;
  void (*fn)(int64_t begin, int64_t end, const void* const* ins, void* const* outs);
};
/// A GPU module of a program compiled ahead of time: the key the executor looks it up by, and
/// its fatbinary (exec/cuda/kernels.h, Note [Precompiled modules]).
struct CompiledModule {
  const char* key;
  const void* image;
};
/// Makes compiled kernels and GPU modules known to the process (a generated header does this
/// before it loads its program). The arrays must outlive the process's use of them.
void register_compiled_kernels(const CompiledKernel* kernels, size_t count);
void register_compiled_modules(const CompiledModule* modules, size_t count);

/// Calls a handle's function on one argument; returns the one result (left on the GPU with
/// `device_result`, on the cuda backend).
DataPtr call(const FunctionImpl& f, const DataPtr& argument, bool device_result);
/// The values of `host` where the context computes: on the GPU for cuda, else `host` itself.
DataPtr upload(const ContextImpl& c, const DataPtr& host);
std::shared_ptr<const FunctionImpl> find_function(const std::shared_ptr<ProgramImpl>& p, std::string_view name,
                                                  const std::string& argument_type, const std::string& result_type);

}  // namespace detail

/// A sequence [T] of int64_t, double, int32_t, float or char that stays where its context
/// computes: in GPU memory on the cuda backend, in host memory on the others. Functions take
/// it and return it (`Function<ndp::Array<double>(double, ndp::Array<double>)>`) without a
/// copy to the host, so a chain of calls keeps its data on the device; Context::upload makes
/// one and to_host() copies it back. A result holding an Array (in a pair, say) stays on the
/// device as a whole; its other parts are copied when read.
template <class T>
class Array {
 public:
  Array() = default;
  /// The number of elements (no copy).
  size_t size() const { return data_ ? static_cast<size_t>(detail::elements_count(*data_)) : 0; }
  /// The elements, copied to the host.
  std::vector<T> to_host() const {
    return data_ ? std::move(detail::Traits<std::vector<T>>::read(data_).at(0)) : std::vector<T>{};
  }

 private:
  template <class, class>
  friend struct detail::Traits;
  friend class Context;
  explicit Array(detail::DataPtr d) : data_(std::move(d)) {}
  detail::DataPtr data_;  // one instance of [T]
};

namespace detail {

template <class T>
struct Traits<Array<T>> {
  static constexpr bool keeps_device = true;
  static std::string type() { return "[" + Traits<T>::type() + "]"; }
  template <class It>
  static DataPtr build(It it, int64_t n) {
    if (n != 1) fail_nested_array();
    return it->data_ ? it->data_ : Traits<std::vector<T>>::build(std::vector<std::vector<T>>(1).begin(), 1);
  }
  static std::vector<Array<T>> read(const DataPtr& d) {
    if (size_of(*d) != 1) fail_nested_array();
    return {Array<T>(d)};
  }
};

}  // namespace detail

template <class Signature>
class Function;

/// A typed handle to a function of a Program: compiled once, when the handle is made.
template <class R, class... Args>
class Function<R(Args...)> {
  static_assert(sizeof...(Args) >= 1, "an ndp function takes at least one argument");

 public:
  /// Calls the function; throws Error for a runtime error (with the failing place in the
  /// source).
  R operator()(const detail::Plain<Args>&... args) const {
    detail::DataPtr result = detail::call(*impl_, detail::build_argument(args...), detail::Traits<R>::keeps_device);
    return std::move(detail::Traits<R>::read(result).at(0));
  }

 private:
  friend class Program;
  explicit Function(std::shared_ptr<const detail::FunctionImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const detail::FunctionImpl> impl_;
};

/// The definitions of one compiled source (functions, datatypes, global variables), in a
/// namespace of its own.
class Program {
 public:
  /// The handle of function `name` at the signature's types (Note [Embedding values]). Throws
  /// Error when there is no such function or its type does not fit the signature. Flattening
  /// happens here; kernels are compiled on the first call and kept (on disk too, for cuda).
  template <class Signature>
  Function<Signature> function(std::string_view name) const {
    return make<Signature>(name, static_cast<Signature*>(nullptr));
  }

  /// Evaluates one expression of the program and returns its value as ndp prints it
  /// (`[1, 2, 3]`); throws Error. Only for programs compiled from source (Context::compile).
  std::string eval(std::string_view expression) const;

 private:
  friend class Context;
  explicit Program(std::shared_ptr<detail::ProgramImpl> impl) : impl_(std::move(impl)) {}
  template <class Signature, class R, class... Args>
  Function<Signature> make(std::string_view name, R (*)(Args...)) const {
    return Function<Signature>(
        detail::find_function(impl_, name, detail::argument_type<Args...>(), detail::Traits<R>::type()));
  }
  std::shared_ptr<detail::ProgramImpl> impl_;
};

/// Where programs run: a backend and its settings.
class Context {
 public:
  /// Throws Error when the backend asked for cannot run here (no GPU for cuda).
  explicit Context(Options options = {});
  /// The backend programs run on (Default resolved).
  Backend backend() const;
  /// Compiles every top-level form of `source` (functions, datatypes, assignments; `name`
  /// names it in errors). Top-level expressions run once, as in `ndp run`, with their answers
  /// dropped. Throws Error with the first error's place; what() holds every diagnostic.
  Program compile(std::string_view source, std::string_view name = "<source>") const;
  /// compile() of a file's text, named by its path.
  Program compile_file(const std::string& path) const;
  /// An Array of `values` where this context computes (copied to the GPU on cuda).
  template <class T>
  Array<T> upload(std::span<const T> values) const {
    std::span<const T> one[] = {values};
    return Array<T>(detail::upload(*impl_, detail::Traits<std::span<const T>>::build(one, 1)));
  }
  template <class T>
  Array<T> upload(const std::vector<T>& values) const {
    return upload(std::span<const T>(values));
  }
  /// A program compiled ahead of time by `ndp compile`, from the image its object file holds
  /// (the generated header passes it). Needs only ndp's runtime library (libndp_runtime), not
  /// the compiler; the program's eval() is not available then. Throws Error for an image of
  /// another ndp version.
  Program load(const unsigned char* image, size_t size) const;

 private:
  std::shared_ptr<detail::ContextImpl> impl_;
};

/// The name of a backend: "interp", "cpu", "cuda" ("default" for Default).
const char* backend_name(Backend b);

}  // namespace ndp
