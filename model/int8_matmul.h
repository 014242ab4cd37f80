// The CPU products whose rows cannot see each other, as tensors: the seam between the decoder's
// Linear (model/linear.h) and the torch-free kernels.
// - Int8Weight: a weight quantised at load as GGUF's Q8_0 (model/kernels/q8_kernel.h); each activation
//   row is quantised with its own block scales and multiplied in integers. float32 in and out.
// - Bf16Weight: a bfloat16 weight packed for vdpbf16ps (model/kernels/bf16_kernel.h), one fixed order of
//   float32 sums per output. bfloat16 in and out; null where the CPU has no BF16 instructions.
// Both split the output columns over the calling thread's OpenMP team, so each output is
// computed whole by one thread: the same bits at any thread count.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
#include <string>

namespace exspec {

class Int8Weight {
 public:
  // weight [out, in] on CPU in any floating dtype (converted a slice at a time); null for
  // another device. A uint8 weight [out, in / 32 * 34] is GGUF Q8_0 blocks, packed as they are
  // (model/kernels/q8_kernel.h pack_q8_0_rows_into; throws at a quant of -128).
  static std::shared_ptr<const Int8Weight> quantise(const at::Tensor& weight);

  at::Tensor multiply(const at::Tensor& x) const;  // x [M, in] float32 -> [M, out] float32
  at::Tensor rows(const at::Tensor& ids) const;    // ids [N] int64 -> the rows q · d, [N, in] float32

  int64_t out_features() const;
  int64_t in_features() const;
  int64_t bytes() const;  // quants and scales as stored

  ~Int8Weight();
  struct Impl;

 private:
  explicit Int8Weight(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Bf16Weight {
 public:
  // weight [out, in] on CPU in bfloat16; null for another device or dtype, or without BF16
  // instructions (then oneDNN or at::linear, as before).
  static std::shared_ptr<const Bf16Weight> pack(const at::Tensor& weight);

  at::Tensor multiply(const at::Tensor& x) const;  // x [M, in] bfloat16 -> [M, out] bfloat16
  at::Tensor rows(const at::Tensor& ids) const;    // ids [N] int64 -> the weight's rows [N, in] bfloat16
  int64_t bytes() const;                            // the packed layout's

  ~Bf16Weight();
  struct Impl;

 private:
  explicit Bf16Weight(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One line for logs: the instruction set of each kernel here, e.g.
// "int8 avx512_vnni, bfloat16 avx512_bf16".
std::string row_kernels_support();

}  // namespace exspec
