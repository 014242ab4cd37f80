// A layer of experts (Mlp::Experts, model/layer_kind.h), as Qwen3MoeSparseMoeBlock computes it:
// a router's logits over the experts, their softmax, the top k of them for each row (renormalised
// to sum to 1 with norm_topk_prob), and the chosen experts' gated MLPs weighted and summed.
//
// Exact under batching: a row's routing is a function of its own logits, each expert multiplies
// the rows that chose it on a kernel whose every row's result is the same bits alone and in any
// batch (model/linear.h), and each row's sum runs over its experts in ascending order (as Hugging
// Face's index_add_ does), whichever other rows share the step. Only the chosen experts are read.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "model/linear.h"

namespace exspec {

// Each row's chosen experts in ascending order and their weights (the softmax's, renormalised
// with norm_topk_prob), from the router's logits [N, E]: pure logic on the host.
struct Routing {
  int64_t rows = 0, top_k = 0;
  std::vector<int64_t> expert;  // [rows * top_k]: row r's in ascending expert order
  std::vector<double> weight;   // [rows * top_k]: the same order, in the softmax's precision
};
// Softmax in float32, or float64 for float64 logits (the precision of logits as given); the top
// k by probability, ties to the lower expert; renormalised over the k when `normalise`.
Routing route(const at::Tensor& logits, int64_t top_k, bool normalise);

struct Experts {
  Linear router;                 // [E, hidden]: in the activations' dtype (float32 under int8)
  std::vector<Linear> gate_up;   // one an expert, [2 I, hidden]: gate, then up
  std::vector<Linear> down;      // one an expert, [hidden, I]
  int64_t top_k = 0;
  bool norm_topk_prob = false;
  bool active() const { return !gate_up.empty(); }
  // x [N, hidden] -> [N, hidden]; act: the gated activation of [n, 2 I] (gate, then up) -> [n, I].
  // read: set to the distinct experts multiplied (each read once, whatever its rows).
  at::Tensor operator()(const at::Tensor& x, const std::function<at::Tensor(const at::Tensor&)>& act,
                        int64_t* read = nullptr) const;
  int64_t expert_bytes() const;  // one expert's gate_up and down, as held
};

}  // namespace exspec
