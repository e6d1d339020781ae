// Launch batches (Note [Launch batches] in launch_batch.h).
#include "launch_batch.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "device.h"
#include "trace.h"

namespace ndp::runtime::cuda {

namespace {

/// NDP_LAUNCH_BATCH: the most launches a batch holds (unset, 0 or 1: every launch goes alone).
size_t max_batch_from_environment() {
  const char* s = std::getenv("NDP_LAUNCH_BATCH");
  if (s == nullptr || *s == '\0') return 1;
  return static_cast<size_t>(std::clamp(std::atoi(s), 1, 64));
}

bool has_graph_entry_points(const Driver& d) {
  return d.cuFuncGetParamInfo && d.cuGraphCreate && d.cuGraphDestroy && d.cuGraphAddKernelNode && d.cuGraphInstantiate &&
         d.cuGraphExecKernelNodeSetParams && d.cuGraphLaunch && d.cuGraphExecDestroy;
}

// A graph's last node: writes the graph's number to the progress word, in page-locked host
// memory that the device reaches at the same address (unified addressing). A hint for the host's
// choice of when to send launches, never read for data; the fence after the store makes it
// reach the host at once (without it the host saw the GPU's progress late and held launches
// back: the counting sort of 10^6 keys took 0.71 ms batched against 0.49 unbatched, and 0.47–0.50
// against 0.43–0.44 with it; bench/results/session51/README.md).
const char kProgressPtx[] = R"(.version 7.0
.target sm_52
.address_size 64

.visible .entry ndp_batch_progress(
  .param .u64 word,
  .param .u64 number
)
{
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [word];
  ld.param.u64 %rd2, [number];
  st.volatile.global.u64 [%rd1], %rd2;
  membar.sys;
  ret;
}
)";

}  // namespace

LaunchBatch::LaunchBatch(const Driver& driver, ParameterSizes& sizes) : driver_(driver), sizes_(sizes) {
  set_max_batch(max_batch_from_environment());
}

void LaunchBatch::set_max_batch(size_t n) {
  max_batch_ = has_graph_entry_points(driver_) ? std::clamp<size_t>(n, 1, 64) : 1;
  if (max_batch_ > 1 && progress_ == nullptr) set_up_progress();
}

LaunchBatch::~LaunchBatch() {
  for (Graph& g : graphs_) destroy(g);
  if (progress_module_ != nullptr) (void)NDP_CU(driver_, cuModuleUnload, progress_module_);
  if (progress_ != nullptr) (void)NDP_CU(driver_, cuMemFreeHost, const_cast<uint64_t*>(progress_));
}

void LaunchBatch::set_up_progress() {
  void* word = nullptr;
  if (!NDP_CU(driver_, cuMemAllocHost, &word, 64).ok()) return;
  progress_ = static_cast<volatile uint64_t*>(word);
  *progress_ = 0;
  if (!NDP_CU(driver_, cuModuleLoadDataEx, &progress_module_, kProgressPtx, 0u, nullptr, nullptr).ok()) return;
  if (!NDP_CU(driver_, cuModuleGetFunction, &progress_kernel_, progress_module_, "ndp_batch_progress").ok())
    progress_kernel_ = nullptr;
}

bool LaunchBatch::worth_sending() const {
  if (queued_ >= max_batch_) return true;
  if (lone_in_flight_) return queued_ >= 2;
  const uint64_t unfinished = graphs_sent_ - *progress_;  // graphs sent that the GPU has not finished
  return unfinished == 0 || (unfinished == 1 && queued_ >= 2);
}

Status LaunchBatch::add(CUfunction function, const std::string& name, const LaunchConfig& config, void** parameters,
                        CUstream stream) {
  if (!on()) return launch_now(driver_, function, name, config, parameters, stream);
  const std::vector<uint32_t>& sizes = sizes_.of(function);
  if (queued_ == queue_.size()) queue_.emplace_back();
  Queued& q = queue_[queued_++];
  q.shape = Shape{function, config.grid_x, config.block_x, config.shared_bytes};
  q.name.assign(name);
  q.first_argument = static_cast<uint32_t>(argument_at_.size());
  q.arguments = static_cast<uint32_t>(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    const size_t at = (argument_bytes_.size() + 7) & ~size_t{7};
    argument_bytes_.resize(at + sizes[i]);
    std::memcpy(argument_bytes_.data() + at, parameters[i], sizes[i]);
    argument_at_.push_back(at);
  }
  if (worth_sending()) {
    driver_.tally(queued_ >= max_batch_ ? "(launch batch sent full)" : "(launch batch sent: the GPU is nearly done)");
    send(stream);
  }
  return take_failure();
}

void LaunchBatch::flush(CUstream stream) {
  if (queued_ == 0) return;
  driver_.tally("(launch batch sent before other work or a wait)");
  send(stream);
}

void LaunchBatch::send(CUstream stream) {
  argument_pointers_.resize(argument_at_.size());
  for (size_t i = 0; i < argument_at_.size(); ++i) argument_pointers_[i] = argument_bytes_.data() + argument_at_[i];
  bool sent = false;
  if (queued_ > 1) {
    CUdeviceptr word = reinterpret_cast<uintptr_t>(progress_);
    uint64_t number = graphs_sent_ + 1;
    void* progress_arguments[] = {&word, &number};
    const char* how = nullptr;
    Graph* g = graph_for_queue(progress_arguments, how);
    if (g != nullptr && NDP_CU(driver_, cuGraphLaunch, g->exec, stream).ok()) {
      sent = true;
      graphs_sent_ = number;
      lone_in_flight_ = false;
      g->last_used = ++clock_;
      graph_launches_ += queued_;
      driver_.count_launches(queued_);
      driver_.tally(how[0] == 'r' ? "(launch batch: graph replayed)" : "(launch batch: graph built)");
      if (tracing()) std::fprintf(stderr, "%10.1f   graph of %zu launches (%s)\n", trace_microseconds(), queued_, how);
    } else if (g != nullptr) {  // not used again: its launches go alone below
      destroy(*g);
      graphs_.erase(graphs_.begin() + (g - graphs_.data()));
    }
  }
  for (size_t i = 0; !sent && i < queued_; ++i) {
    Status s = launch_alone(queue_[i], stream);
    lone_in_flight_ = true;
    driver_.tally("(launch alone)");
    if (!s.ok()) {
      if (failure_.ok()) failure_ = std::move(s);
      break;
    }
  }
  queued_ = 0;
  argument_bytes_.clear();
  argument_at_.clear();
}

Status LaunchBatch::take_failure() {
  Status f = std::move(failure_);
  failure_ = Status();
  return f;
}

void LaunchBatch::forget_kernels() {
  for (Graph& g : graphs_) destroy(g);
  graphs_.clear();
}

CUDA_KERNEL_NODE_PARAMS LaunchBatch::node_parameters(const Queued& q) {
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = q.shape.function;
  p.gridDimX = q.shape.grid;
  p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = q.shape.block;
  p.blockDimY = p.blockDimZ = 1;
  p.sharedMemBytes = q.shape.shared;
  p.kernelParams = q.arguments > 0 ? &argument_pointers_[q.first_argument] : nullptr;
  return p;
}

CUDA_KERNEL_NODE_PARAMS LaunchBatch::progress_parameters(void** arguments) const {
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = progress_kernel_;
  p.gridDimX = p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = p.blockDimY = p.blockDimZ = 1;
  p.kernelParams = arguments;
  return p;
}

uint64_t LaunchBatch::shape_key() const {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  for (size_t i = 0; i < queued_; ++i) {
    const Shape& s = queue_[i].shape;
    mix(reinterpret_cast<uintptr_t>(s.function));
    mix(s.grid);
    mix(uint64_t{s.block} << 32 | s.shared);
  }
  return h;
}

LaunchBatch::Graph* LaunchBatch::graph_for_queue(void** progress_arguments, const char*& how) {
  const uint64_t key = shape_key();
  Graph* same = nullptr;
  Graph* oldest = nullptr;          // the least recently used graph
  Graph* oldest_as_long = nullptr;  // and of those of as many nodes
  size_t as_long = 0;
  for (Graph& g : graphs_) {
    if (g.key == key && same_shape(g)) same = &g;
    if (oldest == nullptr || g.last_used < oldest->last_used) oldest = &g;
    if (g.nodes.size() != queued_ + 1) continue;
    ++as_long;
    if (oldest_as_long == nullptr || g.last_used < oldest_as_long->last_used) oldest_as_long = &g;
  }
  if (same != nullptr && set_parameters(*same, progress_arguments)) {
    how = "replayed";
    return same;
  }
  // A graph of this shape that refused its parameters may be half set, and goes; else room is
  // made where this length or all graphs are at their bound.
  Graph* dropped = nullptr;
  if (same != nullptr) dropped = same;
  else if (as_long >= kGraphsOfOneLength) dropped = oldest_as_long;
  else if (graphs_.size() >= kMaxGraphs) dropped = oldest;
  if (dropped != nullptr) {
    destroy(*dropped);
    graphs_.erase(graphs_.begin() + (dropped - graphs_.data()));
  }
  how = "built";
  return build_graph(progress_arguments);
}

bool LaunchBatch::same_shape(const Graph& g) const {
  if (g.shapes.size() != queued_) return false;
  for (size_t i = 0; i < queued_; ++i)
    if (!(g.shapes[i] == queue_[i].shape)) return false;
  return true;
}

bool LaunchBatch::set_parameters(Graph& g, void** progress_arguments) {
  for (size_t i = 0; i <= queued_; ++i) {
    CUDA_KERNEL_NODE_PARAMS p = i < queued_ ? node_parameters(queue_[i]) : progress_parameters(progress_arguments);
    if (!NDP_CU(driver_, cuGraphExecKernelNodeSetParams, g.exec, g.nodes[i], &p).ok()) return false;
  }
  return true;
}

LaunchBatch::Graph* LaunchBatch::build_graph(void** progress_arguments) {
  Graph g;
  g.key = shape_key();
  for (size_t i = 0; i < queued_; ++i) g.shapes.push_back(queue_[i].shape);
  bool ok = NDP_CU(driver_, cuGraphCreate, &g.graph, 0u).ok();
  g.nodes.resize(queued_ + 1);
  for (size_t i = 0; ok && i <= queued_; ++i) {  // a chain: each node after the one before, the progress node last
    CUDA_KERNEL_NODE_PARAMS p = i < queued_ ? node_parameters(queue_[i]) : progress_parameters(progress_arguments);
    ok = NDP_CU(driver_, cuGraphAddKernelNode, &g.nodes[i], g.graph, i > 0 ? &g.nodes[i - 1] : nullptr, i > 0 ? 1 : 0, &p).ok();
  }
  ok = ok && NDP_CU(driver_, cuGraphInstantiate, &g.exec, g.graph, 0ull).ok();
  if (!ok) {
    destroy(g);
    return nullptr;
  }
  ++graphs_built_;
  graphs_.push_back(std::move(g));
  return &graphs_.back();
}

void LaunchBatch::destroy(Graph& g) {
  // An executable graph still running is freed when it finishes (cuGraphExecDestroy).
  if (g.exec != nullptr) (void)NDP_CU(driver_, cuGraphExecDestroy, g.exec);
  if (g.graph != nullptr) (void)NDP_CU(driver_, cuGraphDestroy, g.graph);
  g.exec = nullptr;
  g.graph = nullptr;
}

Status LaunchBatch::launch_alone(const Queued& q, CUstream stream) {
  return launch_now(driver_, q.shape.function, q.name, LaunchConfig{q.shape.grid, q.shape.block, q.shape.shared},
                    q.arguments > 0 ? &argument_pointers_[q.first_argument] : nullptr, stream);
}

}  // namespace ndp::runtime::cuda
