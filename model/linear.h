// y = x · Wᵀ + b: every weight product of the decoder goes through here, so the CPU fast paths are
// one seam and the model code stays device-generic.
//
// On CPU the weight is packed once, at load, into one format (model/packed_matrix.h), chosen by
// the WeightPath:
// - float32 and bfloat16: kernels of our own with one fixed order of sums per output
//   (model/f32_weight.h, model/bf16_weight.h) on AVX-512, AVX2 or plain C++, so a row's result
//   depends neither on its batch nor on the columns asked for, on any x86 CPU;
// - int8: quantised as Q8_0 blocks from any float dtype (model/int8_matmul.h); float32 in and out.
//   A GGUF file's K-quant (Q2_K to Q6_K) weight (tagged rows, model/kquant_matmul.h) keeps its blocks,
//   and its Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL or IQ4_XS weight (tagged rows, model/q4_matmul.h) its blocks;
// - oneDNN's blocked layout (model/onednn_matmul.h) only when asked for: the benchmarks'
//   comparison, whose sums change with the row count.
// Everywhere else (float64, the oracle; float16; CUDA) it is at::linear.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>

namespace exspec {

class PackedMatrix;
class Int8Matrix;
enum class WeightFormat;

enum class WeightPath {
  Plain,   // at::linear: the tests' reference and the benchmarks' "before"
  Packed,  // the default: float32 and bfloat16 packed for the fixed-order kernels
  OneDnn,  // packed for oneDNN in every dtype it takes: the benchmarks' comparison
  Int8,    // quantised to Q8_0 on the CPU (at::linear in the weight's dtype elsewhere)
};

class Linear {
 public:
  Linear() = default;
  // weight [out, in]; bias [out] or undefined. The plain copy is released once packed.
  explicit Linear(const at::Tensor& weight, const at::Tensor& bias = {}, WeightPath path = WeightPath::Packed);

  at::Tensor operator()(const at::Tensor& x) const;  // x [..., in] -> [..., out]
  // The weight's rows ids [N] -> [N, in], from the packed copy when there is one: a head tied to
  // the embedding serves the embedding's lookups, and the model holds that matrix once.
  at::Tensor rows(const at::Tensor& ids) const;
  // x [M, in], cols [M, N] -> [M, N]: the outputs cols[r] of row r, the same bits as operator()'s
  // (Int8Matrix::columns). int8 weights (Q8_0, 4-bit or K-quant blocks) without a bias only:
  // throws std::invalid_argument otherwise.
  at::Tensor columns(const at::Tensor& x, const at::Tensor& cols) const;

  int64_t numel() const { return out_ * in_ + (bias_.defined() ? out_ : 0); }
  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }
  bool packed() const { return packed_ != nullptr; }
  bool int8() const;    // Q8_0, 4- and 5-bit (Q4_0 .. IQ4_XS) or K-quant (Q2_K to Q6_K) blocks: float32 activations on integer kernels
  bool kquant() const;  // K-quant (Q2_K to Q6_K) blocks
  // The int8 kernel of a weight without a bias, or null: for several products in one split over
  // the threads (multiply_jobs, model/int8_matmul.h), as a layer of experts runs them.
  const Int8Matrix* int8_matrix() const;
  // Bytes held: the packed copy (with its layout's padding) or the plain weight, and the bias.
  int64_t bytes() const;

 private:
  at::Tensor weight_, bias_;  // weight_ is undefined once packed: the packed copy is the only one
  int64_t out_ = 0, in_ = 0;
  std::shared_ptr<const PackedMatrix> packed_;  // null: at::linear on weight_
  const Int8Matrix* int8_ = nullptr;            // packed_ when it is one of the integer kernels' (Q8_0, 4-bit, K-quant)
};

}  // namespace exspec
