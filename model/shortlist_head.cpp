#include "model/shortlist_head.h"

#include <ATen/ATen.h>

#include <limits>
#include <stdexcept>
#include <string>

namespace exspec {

void check_shortlist(const std::vector<int64_t>& ids, int64_t vocab) {
  if (ids.empty()) throw std::invalid_argument("the draft's shortlist holds no token");
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab)
      throw std::invalid_argument("the draft's shortlist has token " + std::to_string(ids[i]) +
                                  ", outside the draft's vocabulary of " + std::to_string(vocab));
    if (i > 0 && ids[i] <= ids[i - 1])
      throw std::invalid_argument("the draft's shortlist is not ascending and distinct at token " + std::to_string(ids[i]));
  }
}

ShortlistHead::ShortlistHead(const at::Tensor& weight, const std::vector<int64_t>& ids, WeightPath path)
    : vocab_(weight.size(0)) {
  check_shortlist(ids, vocab_);
  ids_ = at::tensor(ids, at::kLong).to(weight.device());
  // Rows are independent in every form a head comes in (a float row, a Q8_0 row's blocks, a
  // tagged K-quant row), so the kept rows are the whole head's rows, quantised or packed alike.
  rows_ = Linear(weight.index_select(0, ids_), {}, path);
}

at::Tensor ShortlistHead::operator()(const at::Tensor& h) const {
  at::Tensor y = rows_(h);
  std::vector<int64_t> shape = y.sizes().vec();
  shape.back() = vocab_;
  at::Tensor out = at::full(shape, -std::numeric_limits<double>::infinity(), y.options());
  return out.index_copy_(-1, ids_, y);
}

}  // namespace exspec
