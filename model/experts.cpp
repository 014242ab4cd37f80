#include "model/experts.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace exspec {
namespace {

// One row's softmax in a fixed order (the maximum, then the exponentials and their sum in expert
// order), top k by probability with ties to the lower expert, renormalised in rank order.
template <class T>
void route_row(const T* logit, int64_t E, int64_t k, bool normalise, int64_t* expert, double* weight) {
  T max = logit[0];
  for (int64_t e = 1; e < E; ++e) max = std::max(max, logit[e]);
  std::vector<T> p(static_cast<size_t>(E));
  T sum = 0;
  for (int64_t e = 0; e < E; ++e) sum += (p[e] = std::exp(logit[e] - max));
  for (int64_t e = 0; e < E; ++e) p[e] /= sum;
  std::vector<int64_t> order(static_cast<size_t>(E));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int64_t a, int64_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
  T kept = 0;
  for (int64_t i = 0; i < k; ++i) kept += p[order[i]];
  std::vector<std::pair<int64_t, T>> chosen;
  for (int64_t i = 0; i < k; ++i) chosen.push_back({order[i], normalise ? p[order[i]] / kept : p[order[i]]});
  std::sort(chosen.begin(), chosen.end());  // ascending expert order, the order of the sum
  for (int64_t i = 0; i < k; ++i) expert[i] = chosen[i].first, weight[i] = static_cast<double>(chosen[i].second);
}

}  // namespace

Routing route(const at::Tensor& logits, int64_t top_k, bool normalise) {
  const int64_t N = logits.size(0), E = logits.size(1);
  if (top_k < 1 || top_k > E) throw std::invalid_argument("route: top_k must be in [1, experts]");
  Routing r;
  r.rows = N, r.top_k = top_k;
  r.expert.resize(static_cast<size_t>(N * top_k));
  r.weight.resize(static_cast<size_t>(N * top_k));
  const bool f64 = logits.scalar_type() == at::kDouble;
  const at::Tensor l = logits.to(at::kCPU, f64 ? at::kDouble : at::kFloat).contiguous();
  for (int64_t n = 0; n < N; ++n) {
    if (f64) route_row(l.data_ptr<double>() + n * E, E, top_k, normalise, &r.expert[n * top_k], &r.weight[n * top_k]);
    else route_row(l.data_ptr<float>() + n * E, E, top_k, normalise, &r.expert[n * top_k], &r.weight[n * top_k]);
  }
  return r;
}

at::Tensor Experts::operator()(const at::Tensor& x, const std::function<at::Tensor(const at::Tensor&)>& act,
                               int64_t* read) const {
  const int64_t N = x.size(0), E = static_cast<int64_t>(gate_up.size());
  const Routing r = route(router(x), top_k, norm_topk_prob);
  // Each expert's rows, and each row's weight for it, in row order.
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(E));
  std::vector<std::vector<double>> weights(static_cast<size_t>(E));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < top_k; ++i) {
      const int64_t e = r.expert[n * top_k + i];
      rows[e].push_back(n);
      weights[e].push_back(r.weight[n * top_k + i]);
    }
  at::Tensor out = at::zeros_like(x);
  if (read) *read = std::count_if(rows.begin(), rows.end(), [](const std::vector<int64_t>& r) { return !r.empty(); });
  const auto index = at::TensorOptions().dtype(at::kLong);
  // Ascending expert order: each row's sum is over its experts in that order, from zero.
  for (int64_t e = 0; e < E; ++e) {
    if (rows[e].empty()) continue;
    const at::Tensor idx = at::tensor(rows[e], index).to(x.device());
    const at::Tensor w = at::tensor(weights[e], at::TensorOptions().dtype(at::kDouble)).to(x.device(), x.scalar_type()).unsqueeze(1);
    at::Tensor y = down[e](act(gate_up[e](x.index_select(0, idx))));
    out.index_add_(0, idx, y.mul_(w));
  }
  return out;
}

int64_t Experts::expert_bytes() const { return gate_up.empty() ? 0 : gate_up[0].bytes() + down[0].bytes(); }

}  // namespace exspec
