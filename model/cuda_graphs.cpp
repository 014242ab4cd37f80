// The step runner's parts as CUDA graphs (issue 60; model/step_runner.h). Built only where
// libtorch has CUDA (CMakeLists.txt: EXSPEC_WITH_CUDA); here it is compile-checked by
// tests/gpu_syntax_check.sh against the GPU machine's own headers.
//
// Each (bucket, part) is captured at its first use: one eager warm-up run on a side stream
// (cuBLAS creates its handle and workspace there, outside the capture), then the capture, on
// the same side stream, into one memory pool that every graph of the store shares (they replay
// in the order they were captured, one at a time), then a replay. warm_up_buckets captures
// every bucket largest first at engine start, so that the smaller buckets' allocations fit in
// what the largest left in the pool. Nothing a part runs may synchronise with the host: its
// inputs are the static buffers and the earlier parts' outputs, all on the device. A capture
// that fails leaves the runner eager for good (said once on stderr): slower, never wrong.
#ifndef EXSPEC_WITH_CUDA
#error "model/cuda_graphs.cpp is the CUDA build's (EXSPEC_WITH_CUDA)"
#endif
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "model/step_runner.h"

namespace exspec {
namespace {

// A row's result must not depend on the other rows of its product (docs/gpu.md): vLLM's cuBLAS
// settings of batch invariance. Opt-in (EXSPEC_CUBLAS_BATCH_INVARIANT=1): on an H200 with PyTorch
// 2.11 / CUDA 13 a process under them crashed (SIGSEGV) at its first bfloat16 product, with the
// two variables preset to their defaults too, so it is the reduction flags; and padding every
// product to one row count did not make the rows invariant either (attention differs with the
// step's shapes). Set before the first product creates cuBLAS's handle; the environment variables
// never override what the user set.
void batch_invariant_cublas() {
  const char* v = std::getenv("EXSPEC_CUBLAS_BATCH_INVARIANT");
  if (!v || std::string(v) != "1") return;
  setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8", 0);  // a fixed workspace: no algorithm that wants more
  setenv("CUBLASLT_WORKSPACE_SIZE", "1", 0);      // KiB: cuBLASLt gets no room for split-K
  at::Context& ctx = at::globalContext();
  ctx.setAllowTF32CuBLAS(false);
  ctx.setAllowFP16ReductionCuBLAS(/*allow_reduced_precision=*/false, /*allow_splitk=*/false);
  ctx.setAllowBF16ReductionCuBLAS(/*allow_reduced_precision=*/false, /*allow_splitk=*/false);
}

class GraphParts : public PartRunner {
 public:
  explicit GraphParts(const at::Device& device) : device_(device) {
    if (!device.is_cuda()) throw std::invalid_argument("--cuda-graphs on needs --device cuda");
    pool_ = at::cuda::graph_pool_handle();
  }

  std::vector<at::Tensor> run(int64_t bucket, int64_t part, const Body& body) override {
    if (failed_) return body();
    auto it = graphs_.find({bucket, part});
    if (it == graphs_.end()) {
      try {
        it = graphs_.emplace(std::make_pair(bucket, part), capture(body)).first;
      } catch (const std::exception& e) {  // the step still runs, eagerly, and says why once
        failed_ = true;
        std::cerr << "exspec: CUDA graph capture failed (bucket " << bucket << ", part " << part
                  << "), running eagerly from here: " << e.what() << std::endl;
        return body();
      }
    }
    it->second.graph->replay();
    return it->second.outputs;
  }
  std::string name() const override { return "cuda-graphs"; }
  int64_t graphs() const override { return static_cast<int64_t>(graphs_.size()); }

 private:
  struct Captured {
    std::shared_ptr<at::cuda::CUDAGraph> graph;
    std::vector<at::Tensor> outputs;  // in the pool: each replay rewrites them
  };

  Captured capture(const Body& body) {
    c10::cuda::CUDAGuard guard(device_);
    const c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream();
    const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
    at::cuda::CUDAEvent ready, done;
    ready.record(main);  // the side stream sees the static buffers as the step filled them
    ready.block(side);
    Captured c;
    {
      c10::cuda::CUDAStreamGuard on_side(side);
      body();  // the warm-up
      c.graph = std::make_shared<at::cuda::CUDAGraph>();
      // Thread-local: the realigner's block copies on its own thread may go on meanwhile.
      c.graph->capture_begin(pool_, cudaStreamCaptureModeThreadLocal);
      try {
        c.outputs = body();
      } catch (...) {
        try {
          c.graph->capture_end();  // the side stream leaves capture mode before the error goes on
        } catch (...) {
        }
        throw;
      }
      c.graph->capture_end();
    }
    done.record(side);
    done.block(main);
    return c;
  }

  at::Device device_;
  at::cuda::MempoolId_t pool_;
  bool failed_ = false;
  std::map<std::pair<int64_t, int64_t>, Captured> graphs_;
};

}  // namespace

std::unique_ptr<PartRunner> cuda_graph_parts(const at::Device& device) { return std::make_unique<GraphParts>(device); }
void batch_invariant_products(const at::Device& device) {
  if (device.is_cuda()) batch_invariant_cublas();
}
bool cuda_graphs_built() { return true; }

}  // namespace exspec
