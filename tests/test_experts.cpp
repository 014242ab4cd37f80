// Issue 72: a layer of experts (model/experts.h): the routing (softmax, top k, renormalised), and
// the mixture against a dense formulation of the same sum; a row's result the same bits alone and
// among rows that chose other experts.
#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>

#include "model/experts.h"
#include "model/runtime.h"
#include "tests/support.h"

using namespace exspec;

namespace {

// E experts (gate_up [2 I, hidden], down [hidden, I]) and their router, drawn from one seed.
Experts random_experts(int64_t E, int64_t hidden, int64_t I, int64_t k, bool norm, at::ScalarType dt, WeightPath path) {
  at::manual_seed(11);
  Experts x;
  // the router in the activations' dtype, as the Decoder keeps it (float32 under int8)
  x.router = Linear(at::randn({E, hidden}, at::kDouble).mul(2.0 / std::sqrt(hidden)).to(dt), {},
                    path == WeightPath::Int8 ? WeightPath::Packed : path);
  for (int64_t e = 0; e < E; ++e) {
    x.gate_up.emplace_back(at::randn({2 * I, hidden}, at::kDouble).mul(0.2).to(dt), at::Tensor(), path);
    x.down.emplace_back(at::randn({hidden, I}, at::kDouble).mul(0.2).to(dt), at::Tensor(), path);
  }
  x.top_k = k, x.norm_topk_prob = norm;
  return x;
}

at::Tensor swiglu(const at::Tensor& gu) {
  const int64_t I = gu.size(-1) / 2;
  return at::silu(gu.narrow(-1, 0, I)) * gu.narrow(-1, I, I);
}

}  // namespace

CATCH_TEST_CASE("routing: softmax, the top k with ties to the lower expert, renormalised, in ascending order", "[moe]") {
  const at::Tensor logits = at::tensor({0.5, 2.0, -1.0, 2.0, 1.0, 0.0, 3.0, -2.0}, at::kDouble).view({2, 4});
  const Routing r = route(logits, 2, false);
  CATCH_REQUIRE(r.expert.size() == 4);
  // row 0: experts 1 and 3 tie at the top; row 1: 2 (3.0) then 0 (1.0)
  CATCH_CHECK(r.expert[0] == 1);
  CATCH_CHECK(r.expert[1] == 3);
  CATCH_CHECK(r.expert[2] == 0);
  CATCH_CHECK(r.expert[3] == 2);
  const at::Tensor p = at::softmax(logits, -1);
  CATCH_CHECK(std::abs(r.weight[0] - p[0][1].item<double>()) < 1e-15);
  CATCH_CHECK(std::abs(r.weight[3] - p[1][2].item<double>()) < 1e-15);
  // a tie for the last place goes to the lower expert
  const Routing tie = route(at::tensor({1.0, 0.0, 1.0, 1.0}, at::kDouble).view({1, 4}), 2, true);
  CATCH_CHECK(tie.expert == std::vector<int64_t>{0, 2});
  CATCH_CHECK(tie.weight[0] == 0.5);
  CATCH_CHECK(tie.weight[1] == 0.5);
  const Routing n = route(logits, 2, true);
  CATCH_CHECK(std::abs(n.weight[2] + n.weight[3] - 1.0) < 1e-15);
  CATCH_CHECK(std::abs(n.weight[3] / n.weight[2] - r.weight[3] / r.weight[2]) < 1e-12);
  // float32 logits: the softmax in float32
  const Routing f = route(logits.to(at::kFloat), 2, false);
  CATCH_CHECK(f.weight[3] == static_cast<double>(at::softmax(logits.to(at::kFloat), -1)[1][2].item<float>()));
  CATCH_CHECK_THROWS_AS(route(logits, 5, false), std::invalid_argument);
}

CATCH_TEST_CASE("the mixture equals every expert weighted densely, and a row's bits do not depend on the others", "[moe][invariance]") {
  // float64 on at::linear: the sum over the chosen experts equals the dense sum with zeros elsewhere
  const Experts x = random_experts(8, 64, 32, 2, true, at::kDouble, WeightPath::Plain);
  const at::Tensor h = at::randn({12, 64}, at::kDouble);
  const at::Tensor got = x(h, swiglu);
  const Routing r = route(x.router(h), 2, true);
  at::Tensor dense = at::zeros_like(h);
  for (int64_t e = 0; e < 8; ++e) {
    at::Tensor w = at::zeros({12, 1}, at::kDouble);
    for (int64_t n = 0; n < 12; ++n)
      for (int64_t i = 0; i < 2; ++i)
        if (r.expert[n * 2 + i] == e) w[n][0] = r.weight[n * 2 + i];
    dense += x.down[e](swiglu(x.gate_up[e](h))) * w;
  }
  CATCH_CHECK((got - dense).abs().max().item<double>() < 1e-14);
  std::set<int64_t> used(r.expert.begin(), r.expert.end());
  CATCH_CHECK(used.size() > 4);  // the rows chose different experts

  // every dtype on its kernels: each row alone gives the same bits as in the batch
  for (at::ScalarType dt : test::invariant_dtypes()) {
    CATCH_INFO(dtype_name(dt));
    const bool int8 = dt == at::kChar;
    const at::ScalarType act = int8 ? at::kFloat : dt;
    const Experts m = random_experts(8, 64, 32, 2, true, act, int8 ? WeightPath::Int8 : WeightPath::Packed);
    const at::Tensor in = h.to(act);
    const at::Tensor all = m(in, swiglu);
    for (int64_t n : {0, 5, 11}) CATCH_CHECK(at::equal(m(in.narrow(0, n, 1), swiglu), all.narrow(0, n, 1)));
    CATCH_CHECK(at::equal(m(in.narrow(0, 3, 4), swiglu), all.narrow(0, 3, 4)));
  }
}

CATCH_TEST_CASE("int8 experts in one split over the threads give each expert's own product, summed in ascending order", "[moe][int8]") {
  // k 2: experts take some rows (gathered); k 8 of 8: every expert takes every row (read in place)
  for (int64_t k : {2, 8}) {
    CATCH_INFO("top " << k);
    const Experts m = random_experts(8, 64, 32, k, true, at::kFloat, WeightPath::Int8);
    const at::Tensor h = at::randn({12, 64}, at::kFloat);
    const Routing r = route(m.router(h), k, true);
    // What a product an expert gives: Linear's own calls, weighted and added in ascending order.
    at::Tensor want = at::zeros_like(h);
    for (int64_t e = 0; e < 8; ++e) {
      std::vector<int64_t> rows;
      std::vector<float> w;
      for (int64_t n = 0; n < 12; ++n)
        for (int64_t i = 0; i < k; ++i)
          if (r.expert[n * k + i] == e) rows.push_back(n), w.push_back(static_cast<float>(r.weight[n * k + i]));
      if (rows.empty()) continue;
      const at::Tensor idx = at::tensor(rows, at::kLong);
      at::Tensor y = m.down[e](swiglu(m.gate_up[e](h.index_select(0, idx))));
      want.index_add_(0, idx, y.mul_(at::tensor(w, at::kFloat).unsqueeze(1)));
    }
    int64_t read = 0;
    CATCH_CHECK(at::equal(m(h, swiglu, &read), want));
    CATCH_CHECK(read == static_cast<int64_t>(std::set<int64_t>(r.expert.begin(), r.expert.end()).size()));
  }
}
