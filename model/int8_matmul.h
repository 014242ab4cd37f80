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

#include "model/packed_matrix.h"

namespace exspec {
namespace q8 {
struct Rows;
}

// What every int8 format's product does around its kernel (Int8Weight, KQuantWeight, Q4Weight):
// x [M, in] float32 on the CPU, each row quantised alone (q8_kernel.h, split over the calling
// thread's team: a split changes nothing in a row), then product(rows, y) fills y [M, out].
at::Tensor int8_product(const at::Tensor& x, int64_t in, int64_t out, const char* what,
                        const std::function<void(const q8::Rows&, float*)>& product);
// Their columns (Int8Weight::columns): tile(row, line, t) writes the 16 outputs of tile t for one
// quantised row into line [out].
at::Tensor int8_columns(const at::Tensor& x, const at::Tensor& cols, int64_t in, int64_t out, const char* what,
                        const std::function<void(const q8::Rows&, float*, int64_t)>& tile);
// Their rows: ids [N] (each checked against [0, out)) -> [N, in] float32, row(id, dst) writing
// one row's values.
at::Tensor dequantised_rows(const at::Tensor& ids, int64_t out, int64_t in, const char* what,
                            const std::function<void(int64_t, float*)>& row);

class Int8Weight : public PackedMatrix {
 public:
  // weight [out, in] on CPU in any floating dtype (converted a slice at a time); null for
  // another device. A uint8 weight [out, in / 32 * 34] is GGUF Q8_0 blocks, packed as they are
  // (model/kernels/q8_kernel.h pack_q8_0_rows_into; throws at a quant of -128).
  static std::shared_ptr<const Int8Weight> quantise(const at::Tensor& weight);

  at::Tensor multiply(const at::Tensor& x) const override;  // x [M, in] float32 -> [M, out] float32
  at::Tensor rows(const at::Tensor& ids) const override;    // ids [N] int64 -> the rows q · d, [N, in] float32
  // Some outputs of each row: x [M, in] float32, cols [M, N] int64 -> [M, N] float32, y[r, j] =
  // multiply(x)[r, cols[r, j]], the same bits, computed for those columns' tiles of row r alone
  // (a draft head's candidates, model/screened_head.h). On the calling thread.
  at::Tensor columns(const at::Tensor& x, const at::Tensor& cols) const;

  int64_t out_features() const;
  int64_t in_features() const;
  int64_t bytes() const override;  // quants and scales as stored

  WeightFormat format() const override { return WeightFormat::Q8_0; }
  ~Int8Weight() override;
  struct Impl;

 private:
  explicit Int8Weight(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace exspec
