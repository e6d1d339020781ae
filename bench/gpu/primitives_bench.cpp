// Issue 6: ndp's GPU segmented primitives (runtime/gpu/primitives.h) at scale, one JSON object
// per line on stdout, for bench/run_gpu.py to set against bench/baselines/gpu/cub_bench.cu and
// thrust_bench.cu.
//   build/bench/gpu_primitives_bench [--log2 28] [--sort-log2 26] [--reps 10] [--only a,b,...]
// Rows (benchmark names as in cub_bench): scan_f32, scan_i64 (flat inclusive +-scan), reduce_f32,
// seg_reduce_f32 / seg_scan_f32 at segment lengths 1, 4, 32, 1024, 32768, 2^20 (irregular
// descriptor: count + 1 int64 offsets on the device, counted in "bytes"; the *_regular rows use
// the regular descriptor, which has no array), pack_f32 (50% kept: pack_counted, which counts
// as it packs and reads the count back, what a flat PACK with no known count does;
// pack_data_f32: pack with the count known), sort_u32 (i32 keys, all non-negative, since ndp
// sorts i32 and not u32), sort_f32, and copy (cuMemcpyDtoDAsync of n f32, the bandwidth anchor).
// Each time is the median of --reps runs after a warm-up ("ms", with "min_ms" and "max_ms"),
// each between two CUDA events on ndp's stream (the GPU's time, as cub_bench measures CUB's;
// host work inside a call that leaves the GPU idle is counted), with the device synchronised
// before each run. Inputs are random (a splitmix64 hash of the index); every result is
// checked against the host, and a wrong one is reported on stderr and in the row ("ok": false),
// and makes the exit status 1. f32 inputs are small random integers (-8..8), so that every
// partial sum, in any association, is exact and results can be compared bit for bit.
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/gpu/primitives.h"
#include "runtime/cuda/cuda_driver.h"

using namespace ndp::runtime;
using cuda::CUdeviceptr;
using cuda::DeviceBuffer;
using gpu::DSegs;

namespace {

struct Rig {
  std::unique_ptr<cuda::Device> device;
  std::unique_ptr<cuda::MemoryPool> pool;
  std::unique_ptr<gpu::Primitives> prims;
};

// Never destroyed: at exit the driver's static goes first, and freeing device memory after it
// would call into an unloaded library (as tests/unit/runtime/gpu/gpu_fixture.h).
Rig& rig = *new Rig;
int reps = 10;
int failures = 0;
std::string last_error;  // the latest wrong result's description, for its row

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "gpu_primitives_bench: %s\n", what.c_str());
  std::exit(2);
}
void check(const cuda::Status& st, const char* what) {
  if (!st.ok()) die(std::string(what) + ": " + st.message());
}
void check(cuda::Result<ndp_status> r, const char* what) {
  if (!r.ok()) die(std::string(what) + ": " + r.status().message());
  if (r.value().code != NDP_OK) die(std::string(what) + ": data status " + std::to_string(r.value().code));
}
gpu::Primitives& P() { return *rig.prims; }
void sync() { check(rig.device->synchronize(), "synchronize"); }

DeviceBuffer alloc(size_t bytes) {
  auto b = rig.pool->allocate(bytes > 0 ? bytes : 1);
  if (!b.ok()) die("allocate " + std::to_string(bytes) + " bytes: " + b.status().message());
  return std::move(b.value());
}
template <class T>
DeviceBuffer upload(const std::vector<T>& v) {
  DeviceBuffer b = alloc(v.size() * sizeof(T));
  check(rig.pool->upload(b.pointer(), v.data(), v.size() * sizeof(T)), "upload");
  return b;
}
template <class T>
std::vector<T> download(CUdeviceptr p, size_t n) {
  std::vector<T> v(n);
  check(rig.pool->download(v.data(), p, n * sizeof(T)), "download");
  return v;
}

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// v[i] = f(i), on all cores.
template <class T, class F>
std::vector<T> generate(int64_t n, F f) {
  std::vector<T> v(static_cast<size_t>(n));
  unsigned nt = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < nt; ++t)
    ts.emplace_back([&, t] {
      int64_t lo = n * t / nt, hi = n * (t + 1) / nt;
      for (int64_t i = lo; i < hi; ++i) v[static_cast<size_t>(i)] = f(i);
    });
  for (auto& th : ts) th.join();
  return v;
}
/// Small random integers -8..8 as f32 (seed picks the stream).
std::vector<float> small_floats(int64_t n, uint64_t seed) {
  return generate<float>(n, [seed](int64_t i) { return static_cast<float>(static_cast<int>(mix(seed ^ (static_cast<uint64_t>(i) * 0x632BE59BD9B4E019ull)) % 17) - 8); });
}

/// The times of one row: the median of --reps runs after a warm-up, and their spread.
struct Times {
  double median, min, max;
};
Times spread_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return Times{v[v.size() / 2], v.front(), v.back()};
}

/// CUDA events on ndp's stream, through the driver library itself: the runtime's driver table
/// (runtime/cuda/cuda_functions.def) has no events, and a benchmark is no reason to add symbols
/// that every ndp would then require.
class EventTimer {
 public:
  EventTimer() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib) lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) die("dlopen libcuda.so.1 for events");
    create_ = reinterpret_cast<Create>(dlsym(lib, "cuEventCreate"));
    record_ = reinterpret_cast<Record>(dlsym(lib, "cuEventRecord"));
    sync_ = reinterpret_cast<Sync>(dlsym(lib, "cuEventSynchronize"));
    elapsed_ = reinterpret_cast<Elapsed>(dlsym(lib, "cuEventElapsedTime_v2"));
    if (!elapsed_) elapsed_ = reinterpret_cast<Elapsed>(dlsym(lib, "cuEventElapsedTime"));
    if (!create_ || !record_ || !sync_ || !elapsed_) die("the driver library lacks the event functions");
    if (create_(&start_, 0) != 0 || create_(&stop_, 0) != 0) die("cuEventCreate");
  }
  void start() { call(record_(start_, rig.device->stream()), "cuEventRecord"); }
  double stop_ms() {
    call(record_(stop_, rig.device->stream()), "cuEventRecord");
    call(sync_(stop_), "cuEventSynchronize");
    float ms = 0;
    call(elapsed_(&ms, start_, stop_), "cuEventElapsedTime");
    return ms;
  }

 private:
  using Event = void*;
  using Create = int (*)(Event*, unsigned);
  using Record = int (*)(Event, cuda::CUstream);
  using Sync = int (*)(Event);
  using Elapsed = int (*)(float*, Event, Event);
  static void call(int result, const char* what) {
    if (result != 0) die(std::string(what) + " failed: CUresult " + std::to_string(result));
  }
  Create create_ = nullptr;
  Record record_ = nullptr;
  Sync sync_ = nullptr;
  Elapsed elapsed_ = nullptr;
  Event start_ = nullptr, stop_ = nullptr;
};

/// The milliseconds of `body` (after one warm-up run), GPU time between two events.
template <class F>
Times time_ms(F&& body) {
  static EventTimer timer;
  body();
  sync();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    sync();
    timer.start();
    body();
    t.push_back(timer.stop_ms());
  }
  return spread_of(t);
}

void emit(const std::string& bench, int64_t n, int64_t seg_len, Times ms, double bytes, bool ok,
          const std::string& note = "") {
  std::printf("{\"bench\": \"%s\", \"impl\": \"ndp\", \"elements\": %lld, \"seg_len\": %s, \"ms\": %.6f, "
              "\"min_ms\": %.6f, \"max_ms\": %.6f, \"bytes\": %.0f, \"gbps\": %.3f, \"ok\": %s%s%s}\n",
              bench.c_str(), static_cast<long long>(n), seg_len < 0 ? "null" : std::to_string(seg_len).c_str(), ms.median,
              ms.min, ms.max, bytes, bytes / (ms.median * 1e-3) / 1e9, ok ? "true" : "false", note.empty() ? "" : (", \"note\": \"" + note + "\"").c_str(),
              ok ? "" : (", \"error\": \"" + last_error + "\"").c_str());
  std::fflush(stdout);
}
void emit_copy(int64_t n, Times ms, double bytes) {
  std::printf("{\"bench\": \"copy\", \"impl\": \"copy\", \"via\": \"cuMemcpyDtoDAsync\", \"elements\": %lld, \"seg_len\": null, "
              "\"ms\": %.6f, \"min_ms\": %.6f, \"max_ms\": %.6f, \"bytes\": %.0f, \"gbps\": %.3f, \"ok\": true}\n",
              static_cast<long long>(n), ms.median, ms.min, ms.max, bytes, bytes / (ms.median * 1e-3) / 1e9);
  std::fflush(stdout);
}
bool wrong(const std::string& bench, int64_t seg_len, const std::string& msg) {
  std::fprintf(stderr, "WRONG RESULT: %s%s: %s\n", bench.c_str(),
               seg_len < 0 ? "" : (" seg_len " + std::to_string(seg_len)).c_str(), msg.c_str());
  ++failures;
  last_error = msg;
  return false;
}

/// Compares got to want everywhere (bit for bit for floats: the inputs make them exact).
template <class T>
bool same(const std::string& bench, int64_t seg_len, const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return wrong(bench, seg_len, "size differs");
  for (size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i])) {
      std::ostringstream o;
      o << "at " << i << " of " << got.size() << ": got " << +got[i] << ", expected " << +want[i];
      return wrong(bench, seg_len, o.str());
    }
  return true;
}

bool wanted(const std::set<std::string>& only, const std::string& name) {
  return only.empty() || only.count(name) > 0;
}

// ---- the rows ----

void bench_copy(int64_t n) {
  DeviceBuffer a = upload(small_floats(n, 1)), b = alloc(static_cast<size_t>(n) * 4);
  const Times ms = time_ms([&] { check(rig.pool->copy(b.pointer(), a.pointer(), static_cast<size_t>(n) * 4), "copy"); });
  emit_copy(n, ms, 2.0 * n * 4);
}

void bench_scan_f32(int64_t n) {
  std::vector<float> h = small_floats(n, 2);
  DeviceBuffer in = upload(h), out = alloc(static_cast<size_t>(n) * 4);
  const Times ms = time_ms([&] { check(P().seg_scan(NDP_OP_PLUS, true, NDP_F32, in.pointer(), DSegs::flat(n), out.pointer()), "scan_f32"); });
  std::vector<float> want(h.size());
  float acc = 0;
  for (size_t i = 0; i < h.size(); ++i) want[i] = acc += h[i];
  bool ok = same("scan_f32", -1, download<float>(out.pointer(), h.size()), want);
  emit("scan_f32", n, -1, ms, 2.0 * n * 4, ok);
}

void bench_scan_i64(int64_t n) {
  std::vector<int64_t> h = generate<int64_t>(n, [](int64_t i) { return static_cast<int64_t>(mix(static_cast<uint64_t>(i) + 77)); });
  DeviceBuffer in = upload(h), out = alloc(static_cast<size_t>(n) * 8);
  const Times ms = time_ms([&] { check(P().seg_scan(NDP_OP_PLUS, true, NDP_I64, in.pointer(), DSegs::flat(n), out.pointer()), "scan_i64"); });
  std::vector<int64_t> want(h.size());
  uint64_t acc = 0;  // wraps, as ndp's int
  for (size_t i = 0; i < h.size(); ++i) want[i] = static_cast<int64_t>(acc += static_cast<uint64_t>(h[i]));
  bool ok = same("scan_i64", -1, download<int64_t>(out.pointer(), h.size()), want);
  emit("scan_i64", n, -1, ms, 2.0 * n * 8, ok);
}

void bench_reduce_f32(int64_t n) {
  std::vector<float> h = small_floats(n, 3);
  DeviceBuffer in = upload(h), out = alloc(4);
  const Times ms = time_ms([&] { check(P().seg_reduce(NDP_OP_PLUS, NDP_F32, in.pointer(), DSegs::flat(n), out.pointer()), "reduce_f32"); });
  double want = 0;
  for (float x : h) want += x;
  bool ok = same("reduce_f32", -1, download<float>(out.pointer(), 1), std::vector<float>{static_cast<float>(want)});
  emit("reduce_f32", n, -1, ms, n * 4.0 + 4, ok);
}

/// Segmented reduce and scan at segment length L, with the irregular descriptor (offsets on the
/// device) and, for comparison, the regular one.
void bench_segmented(int64_t n, int64_t L, const std::set<std::string>& only) {
  if (!wanted(only, "seg_reduce_f32") && !wanted(only, "seg_reduce_f32_regular") && !wanted(only, "seg_scan_f32") &&
      !wanted(only, "seg_scan_f32_regular"))
    return;
  L = std::min(L, n);
  const int64_t count = n / L, total = count * L;
  std::vector<float> h = small_floats(total, 4 + static_cast<uint64_t>(L));
  std::vector<int64_t> off = generate<int64_t>(count + 1, [L](int64_t k) { return k * L; });
  DeviceBuffer in = upload(h), doff = upload(off);
  off = {};
  const DSegs irregular = DSegs::irregular(count, total, doff.pointer());
  const DSegs regular{count, total, 0, L};
  const double desc_bytes = 8.0 * static_cast<double>(count + 1);

  bool do_reduce = wanted(only, "seg_reduce_f32"), do_reduce_r = wanted(only, "seg_reduce_f32_regular");
  if (do_reduce || do_reduce_r) {
    std::vector<float> want(static_cast<size_t>(count));
    for (int64_t k = 0; k < count; ++k) {
      float acc = 0;
      for (int64_t j = k * L; j < (k + 1) * L; ++j) acc += h[static_cast<size_t>(j)];
      want[static_cast<size_t>(k)] = acc;
    }
    DeviceBuffer out = alloc(static_cast<size_t>(count) * 4);
    for (int form = 0; form < 2; ++form) {
      if (!(form == 0 ? do_reduce : do_reduce_r)) continue;
      std::string name = form == 0 ? "seg_reduce_f32" : "seg_reduce_f32_regular";
      DSegs s = form == 0 ? irregular : regular;
      check(rig.pool->fill_words(out, 0xBADC0FFEu, static_cast<size_t>(count)), "poison");
      const Times ms = time_ms([&] { check(P().seg_reduce(NDP_OP_PLUS, NDP_F32, in.pointer(), s, out.pointer()), name.c_str()); });
      bool ok = same(name, L, download<float>(out.pointer(), static_cast<size_t>(count)), want);
      emit(name, total, L, ms, 4.0 * total + 4.0 * count + (form == 0 ? desc_bytes : 0), ok);
    }
  }
  bool do_scan = wanted(only, "seg_scan_f32"), do_scan_r = wanted(only, "seg_scan_f32_regular");
  if (do_scan || do_scan_r) {
    std::vector<float> want(h.size());
    for (int64_t k = 0; k < count; ++k) {
      float acc = 0;
      for (int64_t j = k * L; j < (k + 1) * L; ++j) want[static_cast<size_t>(j)] = acc += h[static_cast<size_t>(j)];
    }
    DeviceBuffer out = alloc(static_cast<size_t>(total) * 4);
    for (int form = 0; form < 2; ++form) {
      if (!(form == 0 ? do_scan : do_scan_r)) continue;
      std::string name = form == 0 ? "seg_scan_f32" : "seg_scan_f32_regular";
      DSegs s = form == 0 ? irregular : regular;
      check(rig.pool->fill_words(out, 0xBADC0FFEu, static_cast<size_t>(total)), "poison");
      const Times ms = time_ms([&] { check(P().seg_scan(NDP_OP_PLUS, true, NDP_F32, in.pointer(), s, out.pointer()), name.c_str()); });
      bool ok = same(name, L, download<float>(out.pointer(), h.size()), want);
      emit(name, total, L, ms, 8.0 * total + (form == 0 ? desc_bytes : 0), ok);
    }
  }
}

void bench_pack(int64_t n, const std::set<std::string>& only) {
  if (!wanted(only, "pack_f32") && !wanted(only, "pack_data_f32")) return;
  std::vector<float> h = small_floats(n, 5);
  std::vector<uint8_t> f = generate<uint8_t>(n, [](int64_t i) { return static_cast<uint8_t>(mix(static_cast<uint64_t>(i) ^ 0xF1A65ull) >> 63); });
  std::vector<float> want;
  for (size_t i = 0; i < h.size(); ++i)
    if (f[i]) want.push_back(h[i]);
  const int64_t kept = static_cast<int64_t>(want.size());
  // Room for every element: a flat PACK whose count is unknown packs into that (pack_counted).
  DeviceBuffer in = upload(h), flags = upload(f), out = alloc(static_cast<size_t>(n) * 4);
  const double bytes = 4.0 * n + 1.0 * n + 4.0 * kept + 8;  // values, flags, kept values, the count
  if (wanted(only, "pack_f32")) {
    int64_t got_count = -1;
    check(rig.pool->fill_words(out, 0xBADC0FFEu, static_cast<size_t>(kept)), "poison");
    const Times ms = time_ms([&] {
      auto c = P().pack_counted(NDP_F32, in.pointer(), flags.pointer(), n, out.pointer());
      if (!c.ok()) die("pack_counted: " + c.status().message());
      got_count = c.value();
    });
    bool ok = got_count == kept ? same("pack_f32", -1, download<float>(out.pointer(), want.size()), want)
                                : wrong("pack_f32", -1, "pack_counted gave " + std::to_string(got_count) + ", expected " + std::to_string(kept));
    emit("pack_f32", n, -1, ms, bytes, ok, "pack_counted (the count read back)");
  }
  if (wanted(only, "pack_data_f32")) {
    check(rig.pool->fill_words(out, 0xBADC0FFEu, static_cast<size_t>(kept)), "poison");
    const Times ms = time_ms([&] { check(P().pack(NDP_F32, in.pointer(), flags.pointer(), n, out.pointer()), "pack"); });
    bool ok = same("pack_data_f32", -1, download<float>(out.pointer(), want.size()), want);
    emit("pack_data_f32", n, -1, ms, bytes - 8, ok, "pack alone (count known)");
  }
}

/// Sorted (by `less`) and the same multiset (a wrapping sum of hashed bit patterns).
template <class T>
bool sorted_permutation(const std::string& bench, const std::vector<T>& in, const std::vector<T>& got) {
  if (got.size() != in.size()) return wrong(bench, -1, "size differs");
  for (size_t i = 1; i < got.size(); ++i)
    if (got[i] < got[i - 1]) {
      std::ostringstream o;
      o << "not sorted at " << i << ": " << got[i - 1] << " then " << got[i];
      return wrong(bench, -1, o.str());
    }
  auto digest = [](const std::vector<T>& v) {
    uint64_t s = 0, x = 0;
    for (const T& e : v) {
      uint32_t bits;
      std::memcpy(&bits, &e, 4);
      s += mix(bits);
      x ^= mix(bits + 0x1234567ull);
    }
    return s ^ (x * 31);
  };
  if (digest(in) != digest(got)) return wrong(bench, -1, "not a permutation of the input");
  return true;
}

void bench_sort(int64_t n, const std::set<std::string>& only) {
  if (wanted(only, "sort_u32")) {
    // ndp sorts i32, not u32: non-negative i32 keys (31 random bits) stand in for u32.
    std::vector<int32_t> h = generate<int32_t>(n, [](int64_t i) { return static_cast<int32_t>(mix(static_cast<uint64_t>(i) + 999) >> 33); });
    DeviceBuffer in = upload(h), out = alloc(static_cast<size_t>(n) * 4);
    const Times ms = time_ms([&] { check(P().sort(NDP_I32, in.pointer(), DSegs::flat(n), NDP_ASCENDING, out.pointer()), "sort_u32"); });
    bool ok = sorted_permutation("sort_u32", h, download<int32_t>(out.pointer(), h.size()));
    emit("sort_u32", n, -1, ms, 2.0 * n * 4, ok, "i32 keys in [0, 2^31)");
  }
  if (wanted(only, "sort_f32")) {
    // Random finite floats of both signs, none -0.0: (random i32) / 256.
    std::vector<float> h = generate<float>(n, [](int64_t i) {
      return static_cast<float>(static_cast<int32_t>(mix(static_cast<uint64_t>(i) + 4242) >> 32)) * (1.0f / 256);
    });
    DeviceBuffer in = upload(h), out = alloc(static_cast<size_t>(n) * 4);
    const Times ms = time_ms([&] { check(P().sort(NDP_F32, in.pointer(), DSegs::flat(n), NDP_ASCENDING, out.pointer()), "sort_f32"); });
    bool ok = sorted_permutation("sort_f32", h, download<float>(out.pointer(), h.size()));
    emit("sort_f32", n, -1, ms, 2.0 * n * 4, ok);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int log2n = 28, sort_log2 = -1;
  std::set<std::string> only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--log2") log2n = std::atoi(next().c_str());
    else if (a == "--sort-log2") sort_log2 = std::atoi(next().c_str());
    else if (a == "--reps") reps = std::atoi(next().c_str());
    else if (a == "--only") {
      std::stringstream ss(next());
      for (std::string s; std::getline(ss, s, ',');) only.insert(s);
    } else if (a == "--help" || a == "-h") {
      std::printf("usage: gpu_primitives_bench [--log2 28] [--sort-log2 LOG2-2] [--reps 10] [--only NAME,...]\n");
      return 0;
    } else {
      die("unknown argument " + a);
    }
  }
  if (sort_log2 < 0) sort_log2 = std::max(1, log2n - 2);
  if (log2n < 1 || log2n > 31 || reps < 1) die("bad --log2 or --reps");
  const int64_t n = int64_t{1} << log2n;

  cuda::Status why;
  const cuda::Driver* driver = cuda::Driver::system(&why);
  if (driver == nullptr) die("no CUDA driver: " + why.message());
  auto d = cuda::Device::open(*driver);
  if (!d.ok()) die("no device: " + d.status().message());
  rig.device = std::move(d.value());
  auto p = cuda::MemoryPool::create(*rig.device);
  if (!p.ok()) die("pool: " + p.status().message());
  rig.pool = std::move(p.value());
  auto prims = gpu::Primitives::load(*rig.device, *rig.pool);
  if (!prims.ok()) die("primitives: " + prims.status().message());
  rig.prims = std::move(prims.value());
  std::fprintf(stderr, "gpu_primitives_bench: %s, n = 2^%d, sort n = 2^%d, median of %d\n",
               rig.device->properties().name.c_str(), log2n, sort_log2, reps);

  if (wanted(only, "copy")) bench_copy(n);
  if (wanted(only, "scan_f32")) bench_scan_f32(n);
  if (wanted(only, "scan_i64")) bench_scan_i64(n);
  if (wanted(only, "reduce_f32")) bench_reduce_f32(n);
  for (int64_t L : {int64_t{1}, int64_t{4}, int64_t{32}, int64_t{1024}, int64_t{32768}, int64_t{1} << 20}) bench_segmented(n, L, only);
  bench_pack(n, only);
  bench_sort(int64_t{1} << sort_log2, only);
  if (failures > 0) {
    std::fprintf(stderr, "gpu_primitives_bench: %d WRONG RESULT(S), see above\n", failures);
    return 1;
  }
  return 0;
}
