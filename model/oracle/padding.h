// Left padding of ragged token lists into a rectangular batch, and content position ids: the
// dense forward's input (model/oracle/dense_forward.h).
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace exspec {

struct PaddedBatch {
  at::Tensor ids;        // [B, T] int64, padding = pad_id
  at::Tensor mask;       // [B, T] int64, 1 = content
  at::Tensor positions;  // [B, T] int64, content positions (first content token is 0)
};

PaddedBatch left_pad(const std::vector<std::vector<int64_t>>& seqs, int64_t pad_id, at::Device device);

// Content positions from a left-padding mask: padding never shifts them; padding slots get 0.
at::Tensor positions_from_mask(const at::Tensor& mask);

}  // namespace exspec
