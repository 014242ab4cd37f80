#include "model/oracle/padding.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>

namespace exspec {

PaddedBatch left_pad(const std::vector<std::vector<int64_t>>& seqs, int64_t pad_id, at::Device device) {
  const int64_t B = static_cast<int64_t>(seqs.size());
  int64_t T = 0;
  for (const auto& s : seqs) T = std::max<int64_t>(T, static_cast<int64_t>(s.size()));
  at::Tensor ids = at::full({B, T}, pad_id, at::kLong);
  at::Tensor mask = at::zeros({B, T}, at::kLong);
  auto ia = ids.accessor<int64_t, 2>();
  auto ma = mask.accessor<int64_t, 2>();
  for (int64_t b = 0; b < B; ++b) {
    const int64_t off = T - static_cast<int64_t>(seqs[b].size());
    for (size_t j = 0; j < seqs[b].size(); ++j) {
      ia[b][off + static_cast<int64_t>(j)] = seqs[b][j];
      ma[b][off + static_cast<int64_t>(j)] = 1;
    }
  }
  PaddedBatch pb;
  pb.ids = ids.to(device);
  pb.mask = mask.to(device);
  pb.positions = positions_from_mask(pb.mask);
  return pb;
}

at::Tensor positions_from_mask(const at::Tensor& mask) {
  return (mask.cumsum(-1) - 1).clamp_min(0) * mask;
}

}  // namespace exspec
