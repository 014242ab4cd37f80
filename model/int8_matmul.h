// The int8 product as tensors: the seam between the decoder's Linear (model/linear.h) and the
// torch-free Q8_0 kernel (its bfloat16 twin: model/bf16_weight.h).
// - Int8Weight: a weight quantised at load as GGUF's Q8_0 (model/kernels/q8_kernel.h); each activation
//   row is quantised with its own block scales and multiplied in integers. float32 in and out.
// It splits the output columns over the calling thread's OpenMP team, so each output is
// computed whole by one thread: the same bits at any thread count.
#pragma once
#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/packed_matrix.h"

namespace exspec {
namespace q8 {
struct Rows;
}

// x's m rows [m, in] (float32, rows `ld` apart) quantised into `out`, each row alone (split over
// the calling thread's team: a split changes nothing in a row).
void quantise_rows(const float* x, int64_t ld, int64_t m, int64_t in, q8::Rows& out);

// What the int8 formats share (Int8Weight, KQuantWeight, Q4Weight): float32 rows quantised alone,
// then the product in units of output columns stored together, each unit computed whole by one
// thread, so a unit's outputs are the same bits whichever thread takes it and beside which others.
class Int8Matrix : public PackedMatrix {
 public:
  at::Tensor multiply(const at::Tensor& x) const final;  // x [M, in] float32 -> [M, out] float32
  virtual int64_t out_features() const = 0;
  virtual int64_t in_features() const = 0;
  virtual int64_t units() const = 0;
  // y [x.m, out] (rows `ldy` apart): the columns of units [u0, u1), and nothing outside them.
  virtual void multiply_units(const q8::Rows& x, float* y, int64_t ldy, int64_t u0, int64_t u1) const = 0;
  // x [M, in], cols [M, N] -> [M, N]: multiply(x)[r, cols[r, j]], the same bits, computed for
  // those columns' units of row r alone (int8_columns): a screened draft head's candidates.
  virtual at::Tensor columns(const at::Tensor& x, const at::Tensor& cols) const = 0;
};

// Several products in one split over the calling thread's team: the units of all jobs in turn,
// each thread a contiguous run of them. A layer of experts (model/experts.h) runs its chosen
// experts' products so: one fork and join, and one stream through their weights, where a call
// each would pay those a product. Every output is the bits multiply() gives it.
struct Int8Job {
  const Int8Matrix* weight;
  const q8::Rows* x;  // already quantised
  float* y;           // [x->m, weight->out_features()], contiguous
};
void multiply_jobs(const std::vector<Int8Job>& jobs);

// Their columns (Int8Weight::columns): tile(row, line, t) writes the 16 outputs of tile t for one
// quantised row into line [out].
at::Tensor int8_columns(const at::Tensor& x, const at::Tensor& cols, int64_t in, int64_t out, const char* what,
                        const std::function<void(const q8::Rows&, float*, int64_t)>& tile);
// Their rows: ids [N] (each checked against [0, out)) -> [N, in] float32, row(id, dst) writing
// one row's values.
at::Tensor dequantised_rows(const at::Tensor& ids, int64_t out, int64_t in, const char* what,
                            const std::function<void(int64_t, float*)>& row);

class Int8Weight : public Int8Matrix {
 public:
  // weight [out, in] on CPU in any floating dtype (converted a slice at a time); null for
  // another device. A uint8 weight [out, in / 32 * 34] is GGUF Q8_0 blocks, packed as they are
  // (model/kernels/q8_kernel.h pack_q8_0_rows_into; throws at a quant of -128).
  static std::shared_ptr<const Int8Weight> quantise(const at::Tensor& weight);

  at::Tensor rows(const at::Tensor& ids) const override;    // ids [N] int64 -> the rows q · d, [N, in] float32
  // Some outputs of each row: x [M, in] float32, cols [M, N] int64 -> [M, N] float32, y[r, j] =
  // multiply(x)[r, cols[r, j]], the same bits, computed for those columns' tiles of row r alone
  // (a draft head's candidates, model/screened_head.h). On the calling thread.
  at::Tensor columns(const at::Tensor& x, const at::Tensor& cols) const override;

  int64_t out_features() const override;
  int64_t in_features() const override;
  int64_t units() const override;  // groups of q8::kGroup tiles
  void multiply_units(const q8::Rows& x, float* y, int64_t ldy, int64_t u0, int64_t u1) const override;
  int64_t bytes() const override;  // quants and scales as stored

  WeightFormat format() const override { return WeightFormat::Q8_0; }
  ~Int8Weight() override;
  struct Impl;

 private:
  explicit Int8Weight(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace exspec
