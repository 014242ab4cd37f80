// A draft's head over a shortlist of the vocabulary (issue 62): only the shortlisted rows of the
// head are multiplied, and every other token's logit is -inf, so whatever reads the draft's
// logits (its argmax, a grammar's masked argmax) proposes from the shortlist. Only a draft is
// loaded so: the target verifies over its whole vocabulary, and a draft is accepted exactly when
// it is the target's own choice (model/accept.h), so the output cannot change; the shortlist
// moves only how many drafts are accepted and what a draft token costs.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "model/linear.h"

namespace exspec {

class ShortlistHead {
 public:
  ShortlistHead() = default;
  // weight: the whole head [vocab, ...] in any form Linear takes (floats, a GGUF's Q8_0 bytes or
  // tagged K-quant rows): its rows `ids` (check_shortlist's rules) are kept, in `path`.
  ShortlistHead(const at::Tensor& weight, const std::vector<int64_t>& ids, WeightPath path);

  bool active() const { return ids_.defined(); }
  int64_t size() const { return active() ? ids_.size(0) : 0; }
  // h [..., in] -> [..., vocab]: the kept rows' logits at their ids, -inf elsewhere.
  at::Tensor operator()(const at::Tensor& h) const;
  const Linear& rows() const { return rows_; }

 private:
  Linear rows_;     // [S, in]: the head's rows of the shortlist, in its order
  at::Tensor ids_;  // [S] int64, ascending, on the weight's device
  int64_t vocab_ = 0;
};

// Throws std::invalid_argument naming the first id that is out of [0, vocab), repeated or out
// of ascending order, or when there is none.
void check_shortlist(const std::vector<int64_t>& ids, int64_t vocab);

}  // namespace exspec
