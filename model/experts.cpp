#include "model/experts.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "model/int8_matmul.h"
#include "model/kernels/q8_kernel.h"
#include "model/kernels/row_ops.h"

namespace exspec {
namespace {

// One row's working space, made once for all of a call's rows.
template <class T>
struct RouteScratch {
  std::vector<T> p;
  std::vector<int64_t> order;
  std::vector<std::pair<int64_t, T>> chosen;
  RouteScratch(int64_t E, int64_t k) : p(static_cast<size_t>(E)), order(static_cast<size_t>(E)), chosen(static_cast<size_t>(k)) {}
};

// One row's softmax in a fixed order (the maximum, then the exponentials and their sum in expert
// order), top k by probability with ties to the lower expert, renormalised in rank order.
template <class T>
void route_row(const T* logit, int64_t E, int64_t k, bool normalise, RouteScratch<T>& s, int64_t* expert, double* weight) {
  std::vector<T>& p = s.p;
  T max = logit[0];
  for (int64_t e = 1; e < E; ++e) max = std::max(max, logit[e]);
  T sum = 0;
  for (int64_t e = 0; e < E; ++e) sum += (p[e] = std::exp(logit[e] - max));
  for (int64_t e = 0; e < E; ++e) p[e] /= sum;
  std::iota(s.order.begin(), s.order.end(), 0);
  std::partial_sort(s.order.begin(), s.order.begin() + k, s.order.end(),
                    [&](int64_t a, int64_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
  T kept = 0;
  for (int64_t i = 0; i < k; ++i) kept += p[s.order[i]];
  for (int64_t i = 0; i < k; ++i) s.chosen[i] = {s.order[i], normalise ? p[s.order[i]] / kept : p[s.order[i]]};
  std::sort(s.chosen.begin(), s.chosen.end());  // ascending expert order, the order of the sum
  for (int64_t i = 0; i < k; ++i) expert[i] = s.chosen[i].first, weight[i] = static_cast<double>(s.chosen[i].second);
}

template <class T>
void route_rows(const T* logits, int64_t N, int64_t E, int64_t k, bool normalise, Routing& r) {
  RouteScratch<T> scratch(E, k);
  for (int64_t n = 0; n < N; ++n) route_row(logits + n * E, E, k, normalise, scratch, &r.expert[n * k], &r.weight[n * k]);
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
  if (f64) route_rows(l.data_ptr<double>(), N, E, top_k, normalise, r);
  else route_rows(l.data_ptr<float>(), N, E, top_k, normalise, r);
  return r;
}

namespace {

// One chosen expert's rows (in row order) and their weights for it.
struct Chosen {
  int64_t expert = 0;
  std::vector<int64_t> rows;
  std::vector<double> weight;
};

// The experts some row chose, in ascending expert order: the order of every row's sum.
std::vector<Chosen> chosen_experts(const Routing& r, int64_t E) {
  std::vector<Chosen> by_expert(static_cast<size_t>(E));
  for (int64_t n = 0; n < r.rows; ++n)
    for (int64_t i = 0; i < r.top_k; ++i) {
      Chosen& c = by_expert[static_cast<size_t>(r.expert[n * r.top_k + i])];
      c.rows.push_back(n);
      c.weight.push_back(r.weight[n * r.top_k + i]);
    }
  std::vector<Chosen> chosen;
  for (int64_t e = 0; e < E; ++e)
    if (!by_expert[e].rows.empty()) {
      chosen.push_back(std::move(by_expert[e]));
      chosen.back().expert = e;
    }
  return chosen;
}

// Rows `rows` of the quantised x: each row was quantised alone, so these are the bits its
// gathered float rows would quantise to.
void gather_rows(const q8::Rows& x, const std::vector<int64_t>& rows, q8::Rows& out) {
  q8::resize_rows(out, static_cast<int64_t>(rows.size()), x.in);
  const int64_t nb = x.blocks;
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t r = rows[i];
    std::copy_n(x.q.begin() + r * nb * q8::kBlock, nb * q8::kBlock, out.q.begin() + static_cast<int64_t>(i) * nb * q8::kBlock);
    std::copy_n(x.d.begin() + r * nb, nb, out.d.begin() + static_cast<int64_t>(i) * nb);
    std::copy_n(x.corr.begin() + r * nb, nb, out.corr.begin() + static_cast<int64_t>(i) * nb);
  }
}

bool all_rows(const std::vector<int64_t>& rows, int64_t n) {
  return static_cast<int64_t>(rows.size()) == n;  // rows ascend without repeats
}

// Every chosen expert's gate_up in one split over the threads, the activation over all their
// rows at once (row by row), then every down in one split: two forks a layer, where a product
// each cost two an expert. Each output is the bits Linear's product gives it (model/int8_matmul.h).
at::Tensor on_int8_kernels(const at::Tensor& x, const std::vector<Chosen>& chosen, const std::vector<const Int8Matrix*>& gu,
                           const std::vector<const Int8Matrix*>& dn, const std::function<at::Tensor(const at::Tensor&)>& act) {
  const int64_t N = x.size(0), H = x.size(1), n = static_cast<int64_t>(chosen.size());
  const at::Tensor xc = x.contiguous();
  q8::Rows all;
  quantise_rows(xc.data_ptr<float>(), H, N, H, all);
  std::vector<q8::Rows> gathered(static_cast<size_t>(n)), inner(static_cast<size_t>(n));
  std::vector<int64_t> first(static_cast<size_t>(n) + 1, 0);  // chosen[j]'s rows in the stacked outputs
  for (int64_t j = 0; j < n; ++j) first[j + 1] = first[j] + static_cast<int64_t>(chosen[j].rows.size());
  const int64_t I2 = gu[0]->out_features();
  at::Tensor stacked = at::empty({first[n], I2}, at::kFloat);
  std::vector<Int8Job> jobs;
  for (int64_t j = 0; j < n; ++j) {
    const bool whole = all_rows(chosen[j].rows, N);
    if (!whole) gather_rows(all, chosen[j].rows, gathered[j]);
    jobs.push_back({gu[j], whole ? &all : &gathered[j], stacked.data_ptr<float>() + first[j] * I2});
  }
  multiply_jobs(jobs);
  const at::Tensor h = act(stacked).contiguous();  // [rows, I]: each row alone
  const int64_t I = h.size(1);
  at::Tensor y = at::empty({first[n], H}, at::kFloat);
  jobs.clear();
  for (int64_t j = 0; j < n; ++j) {
    quantise_rows(h.data_ptr<float>() + first[j] * I, I, first[j + 1] - first[j], I, inner[j]);
    jobs.push_back({dn[j], &inner[j], y.data_ptr<float>() + first[j] * H});
  }
  multiply_jobs(jobs);
  at::Tensor out = at::zeros({N, H}, at::kFloat);
  float* o = out.data_ptr<float>();
  for (int64_t j = 0; j < n; ++j)
    for (size_t i = 0; i < chosen[j].rows.size(); ++i)
      rowops::weighted_add(y.data_ptr<float>() + (first[j] + static_cast<int64_t>(i)) * H,
                           static_cast<float>(chosen[j].weight[i]), o + chosen[j].rows[i] * H, H);
  return out;
}

}  // namespace

at::Tensor Experts::operator()(const at::Tensor& x, const std::function<at::Tensor(const at::Tensor&)>& act,
                               int64_t* read) const {
  const int64_t E = static_cast<int64_t>(gate_up.size());
  const std::vector<Chosen> chosen = chosen_experts(route(router(x), top_k, norm_topk_prob), E);
  if (read) *read = static_cast<int64_t>(chosen.size());
  if (x.device().is_cpu() && x.scalar_type() == at::kFloat && x.dim() == 2 && !chosen.empty()) {
    std::vector<const Int8Matrix*> gu, dn;
    for (const Chosen& c : chosen) {
      gu.push_back(gate_up[c.expert].int8_matrix());
      dn.push_back(down[c.expert].int8_matrix());
    }
    if (std::all_of(gu.begin(), gu.end(), [](auto* m) { return m; }) && std::all_of(dn.begin(), dn.end(), [](auto* m) { return m; }))
      return on_int8_kernels(x, chosen, gu, dn, act);
  }
  at::Tensor out = at::zeros_like(x);
  const auto index = at::TensorOptions().dtype(at::kLong);
  // Ascending expert order: each row's sum is over its experts in that order, from zero.
  for (const Chosen& c : chosen) {
    const at::Tensor idx = at::tensor(c.rows, index).to(x.device());
    const at::Tensor w = at::tensor(c.weight, at::TensorOptions().dtype(at::kDouble)).to(x.device(), x.scalar_type()).unsqueeze(1);
    at::Tensor y = down[c.expert](act(gate_up[c.expert](x.index_select(0, idx))));
    out.index_add_(0, idx, y.mul_(w));
  }
  return out;
}

int64_t Experts::expert_bytes() const { return gate_up.empty() ? 0 : gate_up[0].bytes() + down[0].bytes(); }

}  // namespace exspec
