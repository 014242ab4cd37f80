// The step runner (issue 60): a forward whose rows are padded to a bucket (model/row_buckets.h)
// and whose fixed-shape parts read and write static buffers, so that each part of each bucket
// can be captured once as a CUDA graph and replayed.
//
// A bucketed forward of N content rows in a bucket of R >= N rows runs, per layer:
//   part i      (fixed shape, R rows): the residual and MLP of layer i - 1, then layer i's norm,
//               qkv product, q/k norm and rope (part 0: the embedding and the rope tables);
//   attention   (eager, the step's own shapes): the first N rows' queries over the store, and
//               their keys and values written to it;
// and then part L (the last layer's residual and MLP) and, when logits are asked for, part
// L + 1 (the final norm and the head, over all R rows). The padding rows (token 0 at position 0)
// go through the products only: attention never sees them, the store never holds them, their
// attention output is zero and their logits are dropped. So a content row's arithmetic is that
// of the unpadded forward, row for row, wherever the kernels' rows cannot see each other.
//
// A store carries its StepState (KVStore::set_step; actors/jobs/model_pair.cpp sets it from
// --row-buckets and --cuda-graphs): every forward on the store with N <= the largest bucket
// runs bucketed; larger ones (long prefill chunks) run the plain forward.
//
// Two ways to run the parts (PartRunner): eagerly, on the CPU and as the fallback, and as CUDA
// graphs (model/cuda_graphs.cpp, built only where libtorch has CUDA). The outputs a part returns
// stay valid until the store's next forward (a graph's outputs live in its memory pool).
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/row_buckets.h"

namespace exspec {

class Decoder;
class KVStore;

class PartRunner {
 public:
  using Body = std::function<std::vector<at::Tensor>()>;
  virtual ~PartRunner() = default;
  // Runs `body` for part `part` of bucket `bucket`. body reads and writes static tensors only
  // (or tensors returned by earlier parts of the same bucket) and returns its outputs; running
  // it twice gives the same outputs (its inputs are never written in place).
  virtual std::vector<at::Tensor> run(int64_t bucket, int64_t part, const Body& body) = 0;
  virtual std::string name() const = 0;  // "eager" | "cuda-graphs"
  virtual int64_t graphs() const { return 0; }  // captured so far
};

std::unique_ptr<PartRunner> eager_parts();
// CUDA graphs on `device` (a CUDA build only: elsewhere it throws std::invalid_argument). It also
// sets the batch-invariant cuBLAS settings (model/cuda_graphs.cpp).
std::unique_ptr<PartRunner> cuda_graph_parts(const at::Device& device);
bool cuda_graphs_built();  // whether this build has them
// The cuBLAS settings meant to keep a row's product independent of the other rows
// (model/cuda_graphs.cpp; a no-op without CUDA), wherever row buckets run on a GPU, graphs or
// not. Opt-in, with EXSPEC_CUBLAS_BATCH_INVARIANT=1: a diagnostic (docs/gpu.md says why).
void batch_invariant_products(const at::Device& device);
// The row buckets: RowBuckets::standard(), or the ascending sizes in EXSPEC_ROW_BUCKETS ("64",
// "8,16,32,64"): a diagnostic, to measure which buckets keep bfloat16 rows batch-invariant.
RowBuckets row_buckets_from_env();

// The static buffers of a store's bucketed forwards, sized for the largest bucket, and how
// their parts run. One per store: the store's forwards run one at a time.
class StepState {
 public:
  StepState(RowBuckets buckets, std::unique_ptr<PartRunner> runner);
  const RowBuckets& buckets() const { return buckets_; }
  PartRunner& runner() { return *runner_; }
  // What ran: bucketed forwards, their content rows and padding rows; forwards too large for a bucket.
  int64_t bucketed = 0, content_rows = 0, padding_rows = 0, unbucketed = 0;

 private:
  friend class Decoder;
  void allocate(const Decoder& m);  // the buffers, for m's sizes, at the first forward

  RowBuckets buckets_;
  std::unique_ptr<PartRunner> runner_;
  at::Tensor ids_, pos_;  // [R] int64: each row's token and position
  at::Tensor h_[2];       // [R, hidden]: the residual stream, parts alternating between the two
  at::Tensor a_;          // [R, H * D]: attention's output (padding rows zero)
};

// Runs one forward of each bucket on `store`, largest first, so that the graphs are captured
// (and cuBLAS warmed) before serving. Writes junk keys at the first positions of the store's
// slots: only for an empty store (at engine start), whose positions are written before read.
void warm_up_buckets(const Decoder& m, KVStore& store);

}  // namespace exspec
