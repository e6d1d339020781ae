// Kernel launches queued and sent to the GPU a batch at a time, as one launch of a CUDA graph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuda_driver.h"
#include "errors.h"
#include "launch_now.h"
#include "mini_cuda.h"

namespace ndp::runtime::cuda {

struct LaunchConfig;

// Note [Launch batches]
// A kernel launch (cuLaunchKernel) costs the host 3.3–4.7 µs on the GPU machines, more than
// many of ndp's kernels take on the GPU, so a program of small steps (a loop's pass, a
// recursion's level) is bound by the host's launches. A graph of k kernel nodes, instantiated
// once and launched again with each node's arguments set anew, costs 0.7–1.0 µs a kernel
// (bench/results/session51/launch_micro). So launches are queued here, with a copy of their
// arguments, and go to the GPU as one graph launch, a chain of nodes in queue order.
//
// Holding launches back helps only while the GPU has other work: a GPU left idle while the host
// fills a batch costs more than the launches save (batches of a fixed 16, sent whenever full,
// made the counting sort of 10^6 keys twice as slow). So each graph ends with a node that writes
// the graph's number into page-locked host memory (`progress`), and the queue goes out
//  - when the GPU has finished every graph sent (it is idle, or about to be): a lone launch goes
//    out by cuLaunchKernel, and since its end cannot be seen, the launches after it are held
//    until there are two;
//  - when the GPU has one graph left to finish and two launches are queued, so that it finds the
//    next batch waiting; while it has more, launches gather, up to N (NDP_LAUNCH_BATCH);
//  - before anything else is put on the stream (Device::stream() flushes first), so the stream
//    keeps the program's order, and before the host waits for it.
// So a host that runs ahead of the GPU sends batches, and one that the GPU keeps up with sends
// launches nearly one at a time. The progress node costs the GPU a kernel's start, so batches
// pay where the host is the bound and cost a little where the GPU is.
//
// Graphs are kept by their shape (each node's function, grid, block and shared memory): a batch
// of a shape seen before replays its graph with each node's arguments set anew (0.7 µs a node);
// a new shape builds and instantiates one (10–75 µs), kGraphsOfOneLength at most of each length,
// the least recently used going first. A graph's nodes never get another function, though
// the driver allows it: with graphs set to other functions and grids the counting sort of 10^6
// keys took 0.61 ms against 0.48 without (H200, session 51), likely because a node keeps the
// attributes (shared memory carveout, dynamic shared memory) of the function it was made with.
//
// Batches are off unless NDP_LAUNCH_BATCH=N (N > 1, at most N launches a batch) asks for them:
// they pay where the host is the bound (a counting sort of 1000 keys: 0.29–0.37 ms against
// 0.49–0.52), and where host and GPU are even, batches stay small and the progress nodes cost
// more than the launches save (10^6 keys: 0.48–0.53 ms against 0.44–0.48; H200, session 51).
// Where the driver lacks an entry point (before CUDA 12.4) or the progress word or its kernel
// cannot be had, every launch goes out alone. A failure to
// build or launch a graph sends the batch out launch by launch, so that a failing launch is named
// as it would be without batches; that failure is kept and reported by the next wait
// (Device::synchronize, a read-back).
class LaunchBatch {
 public:
  static constexpr size_t kMaxGraphs = 256;
  static constexpr size_t kGraphsOfOneLength = 16;

  /// `sizes`: the device's, which must outlive this.
  LaunchBatch(const Driver& driver, ParameterSizes& sizes);
  ~LaunchBatch();
  LaunchBatch(const LaunchBatch&) = delete;
  LaunchBatch& operator=(const LaunchBatch&) = delete;

  /// At most `n` launches a batch (1: none are batched); the queue must be empty.
  void set_max_batch(size_t n);

  /// Whether launches are batched at all.
  bool on() const { return max_batch_ > 1 && progress_kernel_ != nullptr; }

  /// Queues a launch of `function` (named `name` in errors) with `parameters` (each pointing at
  /// an argument's value, copied here), and sends the queue to `stream` where it should go.
  Status add(CUfunction function, const std::string& name, const LaunchConfig& config, void** parameters, CUstream stream);

  /// Sends every queued launch to `stream`; a failure is kept for take_failure().
  void flush(CUstream stream);

  /// The host has waited for the stream: every launch sent so far has finished.
  void waited() { lone_in_flight_ = false; }

  /// The first failure of a flush since the last call, if any.
  Status take_failure();

  /// Forgets every graph (a module is unloaded: its functions' handles may be reused). The queue
  /// must be empty.
  void forget_kernels();

  /// Launches sent out in graphs, and graphs built, so far (for tests).
  uint64_t graph_launches() const { return graph_launches_; }
  uint64_t graphs_built() const { return graphs_built_; }

 private:
  struct Shape {
    CUfunction function;
    unsigned grid, block, shared;
    bool operator==(const Shape&) const = default;
  };
  struct Queued {
    Shape shape;
    std::string name;
    uint32_t first_argument = 0, arguments = 0;  // in argument_at_
  };
  struct Graph {
    uint64_t key = 0;  // shape_key() of `shapes`
    std::vector<Shape> shapes;
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    std::vector<CUgraphNode> nodes;
    uint64_t last_used = 0;
  };

  /// Sends the queue (not empty) to `stream`: as a graph, or launch by launch.
  void send(CUstream stream);
  CUDA_KERNEL_NODE_PARAMS node_parameters(const Queued& q);
  CUDA_KERNEL_NODE_PARAMS progress_parameters(void** arguments) const;
  /// The graph a batch of this shape goes in (Note [Launch batches]), its nodes' parameters set;
  /// null where none could be had. `how` says which kind it was.
  Graph* graph_for_queue(void** progress_arguments, const char*& how);
  bool same_shape(const Graph& g) const;
  bool set_parameters(Graph& g, void** progress_arguments);
  Graph* build_graph(void** progress_arguments);
  void set_up_progress();
  /// Whether the queue should go now (Note [Launch batches]), as far as the progress word tells.
  bool worth_sending() const;
  void destroy(Graph& g);
  Status launch_alone(const Queued& q, CUstream stream);
  uint64_t shape_key() const;

  const Driver& driver_;
  size_t max_batch_ = 1;
  /// The last graph's number (its progress node writes it), and the word it writes it to.
  uint64_t graphs_sent_ = 0;
  volatile uint64_t* progress_ = nullptr;
  CUmodule progress_module_ = nullptr;
  CUfunction progress_kernel_ = nullptr;
  /// A launch went out alone since the last graph or wait: its end cannot be seen.
  bool lone_in_flight_ = false;
  std::vector<Queued> queue_;
  size_t queued_ = 0;  // queue_'s entries in use (their strings keep their room)
  std::vector<unsigned char> argument_bytes_;
  std::vector<size_t> argument_at_;  // each queued argument's offset in argument_bytes_
  std::vector<void*> argument_pointers_;
  ParameterSizes& sizes_;
  std::vector<Graph> graphs_;  // at most kMaxGraphs
  uint64_t clock_ = 0;
  uint64_t graph_launches_ = 0, graphs_built_ = 0;
  Status failure_;
};

}  // namespace ndp::runtime::cuda
