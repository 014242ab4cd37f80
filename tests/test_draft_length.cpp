// Adaptive draft length on its own: the cost model's fit, the acceptance math and the choice
// of K. Plain C++: the timings here are synthetic, so every expectation is exact.
#include <catch2/catch.hpp>

#include <cmath>

#include "actors/scheduler/draft_length.h"

using namespace exspec;

namespace {

// A machine where a forward costs `base` seconds plus `per_token` per token fed (weights-bound
// at small batches, compute-bound at large ones), and drafting is `draft_share` of that (its
// cost per token `draft_per_token` where given).
void teach(StepCostModel& m, double base, double per_token, double draft_share, double draft_per_token = -1) {
  if (draft_per_token < 0) draft_per_token = draft_share * per_token;
  for (int64_t rows : {1, 4, 16, 32})
    for (int64_t tokens : {1, 3, 9, 32})
      for (int64_t ctx : {32, 256}) {
        if (tokens < 32) m.observe_target_forward(rows, tokens, ctx, base + per_token * rows * tokens);
        m.observe_draft_forward(rows, tokens, ctx, draft_share * base + draft_per_token * rows * tokens);
      }
  m.observe_copy(8, 64, 0.0005);
  m.observe_copy(32, 256, 0.002);
  m.observe_gather(32, 256, 0.001);
}

// Drafts verified before: the engine-wide estimate has evidence, so probes keep their schedule.
void verified(DraftLengthPolicy& p) {
  for (int i = 0; i < 32; ++i) p.observe_row(1, 1);
}

std::vector<RowOutlook> rows(int n, double alpha, int64_t remaining = 100) {
  return std::vector<RowOutlook>(n, RowOutlook{alpha, remaining});
}

double rate(const DraftLengthPolicy& p, const std::vector<RowOutlook>& r, int64_t k) {
  double tokens = 0;
  for (const auto& x : r) tokens += DraftLengthPolicy::expected_tokens(x.acceptance, k, x.remaining);
  return tokens / p.step_cost(StepShape{static_cast<int64_t>(r.size()), k, 64, 0});
}

}  // namespace

CATCH_TEST_CASE("the online fit recovers a linear cost and never goes negative", "[policy][cost]") {
  OnlineFit f({"a", "b", "c"}, 1.0, 1e-12);
  for (int i = 0; i < 50; ++i) {
    const double x1 = i % 7, x2 = (i * 3) % 11;
    f.observe({1, x1, x2}, 0.010 + 0.002 * x1 + 0.0005 * x2);
  }
  CATCH_CHECK(f.coefficients()[0] == Approx(0.010).epsilon(1e-6));
  CATCH_CHECK(f.coefficients()[1] == Approx(0.002).epsilon(1e-6));
  CATCH_CHECK(f.coefficients()[2] == Approx(0.0005).epsilon(1e-6));

  // Data that an unconstrained fit would explain with a negative slope: clamped, refitted.
  OnlineFit g({"a", "b"}, 1.0, 1e-12);
  for (int i = 0; i < 20; ++i) g.observe({1, static_cast<double>(i)}, 0.05 - 0.001 * i);
  CATCH_CHECK(g.coefficients()[1] == 0.0);
  CATCH_CHECK(g.coefficients()[0] > 0.0);
  CATCH_CHECK(g.predict({1, 100}) > 0.0);
}

CATCH_TEST_CASE("the fit forgets: it follows a machine that got slower", "[policy][cost]") {
  OnlineFit f({"a"}, 0.9, 1e-12);
  for (int i = 0; i < 50; ++i) f.observe({1}, 0.010);
  for (int i = 0; i < 100; ++i) f.observe({1}, 0.030);
  CATCH_CHECK(f.predict({1}) == Approx(0.030).epsilon(1e-3));
}

CATCH_TEST_CASE("expected committed tokens per row: the geometric series, capped by what remains", "[policy][accept]") {
  CATCH_CHECK(DraftLengthPolicy::expected_tokens(0.0, 5, 100) == 1.0);
  CATCH_CHECK(DraftLengthPolicy::expected_tokens(1.0, 5, 100) == 6.0);
  CATCH_CHECK(DraftLengthPolicy::expected_tokens(0.5, 3, 100) == Approx(1.875));
  CATCH_CHECK(DraftLengthPolicy::expected_tokens(0.9, 0, 100) == 1.0);  // K = 0: the target's token
  CATCH_CHECK(DraftLengthPolicy::expected_tokens(1.0, 8, 3) == 3.0);    // 2 drafts + bonus finish it
  CATCH_CHECK(DraftLengthPolicy::expected_tokens(1.0, 8, 1) == 1.0);
}

CATCH_TEST_CASE("acceptance evidence: successes over trials up to the first rejection", "[policy][accept]") {
  AcceptanceEstimate a;
  a.observe(3, 3, 1.0);  // all accepted: 3 trials, 3 successes
  a.observe(3, 1, 1.0);  // one accepted, then a rejection: 2 trials
  a.observe(0, 0, 1.0);  // a plain step tells nothing
  CATCH_CHECK(a.trials == 5.0);
  CATCH_CHECK(a.accepted == 4.0);
  CATCH_CHECK(a.rate(0.5, 0) == Approx(0.8));
  CATCH_CHECK(a.rate(0.5, 5) == Approx(0.65));  // shrunk towards the prior
  AcceptanceEstimate none;
  CATCH_CHECK(none.rate(0.3, 4) == Approx(0.3));
}

CATCH_TEST_CASE("auto picks the K with the best predicted rate, within its bounds", "[policy][choose]") {
  // Weights-bound machine (fixed cost dominates), cheap draft: speculation pays at batch 1.
  DraftLengthPolicy p(DraftLengthSettings{});
  teach(p.costs(), 0.010, 0.00002, 0.1);
  verified(p);
  auto one_good = rows(1, 0.8);
  CATCH_CHECK(p.choose(one_good, 64).k <= 4);  // K rises by one a step at most (from 3)
  int64_t k = 0;
  for (int i = 0; i < 10; ++i) k = p.choose(one_good, 64).k;
  CATCH_CHECK(k >= 3);
  for (int64_t j = 0; j <= 8; ++j) CATCH_CHECK(rate(p, one_good, k) >= rate(p, one_good, j) * 0.995);
  // The same machine, drafts that are never accepted: plain target steps.
  CATCH_CHECK(p.choose(rows(1, 0.02), 64).k == 0);

  // Compute-bound at batch 32 (every token costs, the fixed part is small): no speculation.
  DraftLengthPolicy q(DraftLengthSettings{});
  teach(q.costs(), 0.001, 0.0005, 0.2);
  CATCH_CHECK(q.choose(rows(32, 0.6), 64).k == 0);

  // Bounds are honoured even where the optimum lies outside them.
  DraftLengthSettings lo;
  lo.k_min = 2;
  DraftLengthPolicy r(lo);
  teach(r.costs(), 0.001, 0.0005, 0.2);
  CATCH_CHECK(r.choose(rows(32, 0.6), 64).k == 2);
  DraftLengthSettings hi;
  hi.k_max = 1;
  DraftLengthPolicy s(hi);
  teach(s.costs(), 0.010, 0.00002, 0.1);
  CATCH_CHECK(s.choose(one_good, 64).k == 1);
}

// Issue 72: a target of 64 experts, 8 a token. Its verify reads the experts its B (K + 1) rows
// choose: a machine where each distinct expert a layer costs as much as the dense part's weights.
// Priced as a dense model (the cost of K + 1 tokens as the tokens' own), the fit would call long
// drafts nearly free at batch 1; priced by the experts read, it learns their cost and drafts less.
CATCH_TEST_CASE("a target of experts: the verify is priced by the experts its rows read, and K follows", "[policy][choose][moe]") {
  const ExpertsShape moe{64, 8};
  CATCH_CHECK(moe.expected_experts(1) == Approx(8.0));
  CATCH_CHECK(moe.expected_experts(2) == Approx(64.0 * (1 - std::pow(56.0 / 64, 2))));
  CATCH_CHECK(moe.expected_experts(1000) == Approx(64.0));
  CATCH_CHECK(ExpertsShape{}.expected_experts(5) == 0.0);
  auto verify_cost = [&](int64_t rows, int64_t tokens) { return 0.002 + 0.0005 * moe.expected_experts(rows * tokens); };
  auto teach_moe = [&](StepCostModel& m) {
    for (int64_t rows : {1, 4, 16})
      for (int64_t tokens : {1, 2, 4, 9})
        for (int64_t ctx : {32, 256}) {
          m.observe_target_forward(rows, tokens, ctx, verify_cost(rows, tokens));
          m.observe_draft_forward(rows, tokens, ctx, 0.0002 + 0.00001 * rows * tokens);
        }
    m.observe_copy(8, 64, 0.0005);
  };
  DraftLengthSettings s;
  s.target_experts = moe;
  DraftLengthPolicy p(s);
  teach_moe(p.costs());
  verified(p);
  // The fit recovers the experts' cost: its predictions follow the verify's real cost.
  for (int64_t k : {0, 1, 3, 7})
    CATCH_CHECK(p.costs().predict_verify(StepShape{1, k, 64, 0}) == Approx(verify_cost(1, k + 1)).epsilon(0.05));
  // The choice is the best K under the real costs (the draft's too), and shorter than where
  // each K's verify cost only its tokens.
  auto good = rows(1, 0.7);
  int64_t k = 0;
  for (int i = 0; i < 12; ++i) k = p.choose(good, 64).k;
  auto real_rate = [&](int64_t j) {
    const double draft = j ? j * 0.00021 : 0.0;
    return DraftLengthPolicy::expected_tokens(0.7, j, 100) / (draft + verify_cost(1, j + 1));
  };
  int64_t best = 0;
  for (int64_t j = 1; j <= 8; ++j)
    if (real_rate(j) > real_rate(best)) best = j;
  CATCH_CHECK(std::abs(k - best) <= 1);
  DraftLengthPolicy dense(DraftLengthSettings{});
  teach(dense.costs(), 0.002 + 0.0005 * 8, 0.00001, 0.05);  // a plain step's cost, each further token nearly free
  verified(dense);
  int64_t k_dense = 0;
  for (int i = 0; i < 12; ++i) k_dense = dense.choose(good, 64).k;
  CATCH_CHECK(k < k_dense);
}

CATCH_TEST_CASE("rows about to finish do not earn long drafts", "[policy][choose]") {
  DraftLengthPolicy p(DraftLengthSettings{});
  teach(p.costs(), 0.010, 0.00002, 0.1);
  CATCH_CHECK(p.choose(rows(1, 0.95, 100), 64).k > 2);
  CATCH_CHECK(p.choose(rows(1, 0.95, 2), 64).k <= 1);  // one more token at most from drafts
  CATCH_CHECK(p.choose(rows(1, 0.95, 1), 64).k == 0);  // only the bonus token is left
}

CATCH_TEST_CASE("a long run of plain steps is interrupted by a probe that drafts", "[policy][choose]") {
  DraftLengthSettings cfg;
  cfg.probe_every = 5;
  DraftLengthPolicy p(cfg), cold(cfg);
  teach(p.costs(), 0.010, 0.00002, 0.1);
  teach(cold.costs(), 0.010, 0.00002, 0.1);
  verified(p);
  std::vector<int64_t> ks;
  for (int i = 0; i < 26; ++i) ks.push_back(p.choose(rows(4, 0.0), 64).k);
  // The 5th plain step of a run is a probe; each probe that K = 0 follows doubles that to 10.
  std::vector<int64_t> want(26, 0);
  want[4] = want[14] = 1;
  CATCH_CHECK(ks == want);
  // An engine whose drafts were never verified probes at once, every step, until its rows
  // have reported 16 verified drafts (4 rows a step here, the oldest evidence decaying: five
  // steps); then the schedule goes on, the last of those probes counting as one that failed.
  ks.clear();
  for (int i = 0; i < 26; ++i) {
    ks.push_back(cold.choose(rows(4, 0.0), 64).k);
    for (int r = 0; r < 4; ++r) cold.observe_row(ks.back(), 0);
  }
  want.assign(26, 0);
  want[0] = want[1] = want[2] = want[3] = want[4] = want[14] = 1;
  CATCH_CHECK(ks == want);
}

CATCH_TEST_CASE("a probe pays its catch-up from a budget: rows whose draft lags far are probed later", "[policy][choose]") {
  // Fed many at a time, the lag's tokens are cheap per token, but a lag of a whole prompt still
  // costs the draft several plain steps' worth at once.
  DraftLengthSettings cfg;
  cfg.probe_every = 4;
  DraftLengthPolicy near(cfg), far(cfg);
  for (auto* p : {&near, &far}) teach(p->costs(), 0.010, 0.00002, 0.1, 0.0001), verified(*p);
  const double catch_up = far.costs().predict_draft(StepShape{16, 1, 200, 50}) -
                          far.costs().predict_draft(StepShape{16, 1, 200, 0});
  CATCH_CHECK(catch_up == Approx(0.0001 * 16 * 50).epsilon(0.02));
  auto probes = [](DraftLengthPolicy& p, int64_t lag) {
    std::vector<int> at;
    for (int i = 0; i < 400; ++i)
      if (p.choose(rows(16, 0.0), 200, true, lag).k > 0) at.push_back(i);
    return at;
  };
  const std::vector<int> a = probes(near, 1), b = probes(far, 50);
  // The first probe comes once the plain steps before it have earned its extra cost
  // 1 / probe_budget times over (and not before the schedule's 4th step).
  auto first = [&](int64_t lag) {
    const double plain = far.step_cost(StepShape{16, 0, 200, 0, true});
    const double extra = far.step_cost(StepShape{16, 1, 200, lag, true}) - plain;
    return std::max(3, static_cast<int>(std::ceil(extra / (cfg.probe_budget * plain))) - 1);
  };
  CATCH_REQUIRE(a.size() >= 2);
  CATCH_REQUIRE(!b.empty());
  CATCH_CHECK(std::abs(a[0] - first(1)) <= 1);
  CATCH_CHECK(std::abs(b[0] - first(50)) <= 1);
  CATCH_CHECK(b[0] > 5 * a[0]);
  CATCH_CHECK(b.size() < a.size());
}

CATCH_TEST_CASE("a seeded acceptance estimate: no cold probes, and a draft that agrees drafts at once", "[policy][choose]") {
  DraftLengthSettings cfg;
  cfg.probe_every = 5;
  DraftLengthPolicy bad(cfg), good(cfg);
  for (auto* p : {&bad, &good}) teach(p->costs(), 0.010, 0.00002, 0.1);
  bad.seed_acceptance(0, 128);
  good.seed_acceptance(115, 128);
  CATCH_CHECK(bad.acceptance() < 0.1);
  CATCH_CHECK(good.acceptance() > 0.8);
  CATCH_CHECK(bad.acceptance(2) == bad.acceptance());  // a hot band without evidence starts there too
  // Seeded, the engine is not cold: plain steps until the probe schedule's 5th step.
  std::vector<int64_t> ks;
  for (int i = 0; i < 5; ++i) ks.push_back(bad.choose(rows(4, bad.acceptance()), 64).k);
  CATCH_CHECK(ks == std::vector<int64_t>{0, 0, 0, 0, 1});
  CATCH_CHECK(good.choose(rows(1, good.acceptance()), 64).k > 0);
  // The seed counts as 32 verified drafts at most: the workload's own rows soon outweigh it.
  for (int i = 0; i < 64; ++i) good.observe_row(1, 0);
  CATCH_CHECK(good.acceptance() < 0.5);
  bad.seed_acceptance(5, 0);  // nothing measured: ignored
  CATCH_CHECK(bad.acceptance() < 0.1);
}

CATCH_TEST_CASE("the draft stores a prompt only where the sequences can repay its prefill", "[policy][choose]") {
  // The draft's prefill of a prompt is a catch-up of the whole prompt (0.1 ms a token a row
  // here), paid once: long outputs repay it, short ones after a long prompt do not.
  DraftLengthSettings cfg;
  DraftLengthPolicy good(cfg), bad(cfg);
  for (auto* p : {&good, &bad}) teach(p->costs(), 0.010, 0.00002, 0.1, 0.0001);
  good.seed_acceptance(115, 128);
  bad.seed_acceptance(0, 128);
  CATCH_CHECK(good.drafting_pays(8, 1, 4));      // nothing to catch up: the steps decide
  CATCH_CHECK_FALSE(good.drafting_pays(8, 200, 4));  // 160 ms of draft prefill for 4 tokens a row
  CATCH_CHECK(good.drafting_pays(8, 200, 2000));
  CATCH_CHECK_FALSE(bad.drafting_pays(8, 1, 2000));  // drafts that never agree never pay
  DraftLengthSettings fixed = cfg;
  fixed.adaptive = false;
  CATCH_CHECK(DraftLengthPolicy(fixed).drafting_pays(8, 200, 4));  // a fixed K > 0 drafts whatever it costs
}

CATCH_TEST_CASE("fixed K ignores the model, an untrained auto starts at its configured K", "[policy][choose]") {
  DraftLengthSettings fixed;
  fixed.adaptive = false;
  fixed.fixed_k = 5;
  DraftLengthPolicy p(fixed);
  teach(p.costs(), 0.001, 0.0005, 0.2);
  CATCH_CHECK(p.choose(rows(32, 0.0), 64).k == 5);
  DraftLengthPolicy cold(DraftLengthSettings{});
  CATCH_CHECK(cold.choose(rows(8, 0.5), 64).k == 3);
  CATCH_CHECK_THROWS(DraftLengthPolicy(DraftLengthSettings{true, 3, 4, 2, 16}));
}

CATCH_TEST_CASE("the engine-wide acceptance estimate follows what rows report", "[policy][accept]") {
  DraftLengthPolicy p(DraftLengthSettings{});
  CATCH_CHECK(p.acceptance() == Approx(0.5));  // the prior
  for (int i = 0; i < 200; ++i) p.observe_row(4, 0);
  CATCH_CHECK(p.acceptance() < 0.05);
  // A fresh row starts at the engine-wide rate; its own evidence moves it.
  AcceptanceEstimate row;
  CATCH_CHECK(p.outlook(row, 10).acceptance == Approx(p.acceptance()));
  row.observe(4, 4, 1.0);
  row.observe(4, 4, 1.0);
  CATCH_CHECK(p.outlook(row, 10).acceptance > 0.6);
}

CATCH_TEST_CASE("pipelined, drafting hides behind verification: speculation pays sooner", "[policy][choose]") {
  // A batch where drafting plus verification in sequence just loses to plain steps, but with
  // the next batch's drafting overlapped with this one's verification it wins.
  DraftLengthSettings seq, pipe;
  pipe.pipelined = true;
  DraftLengthPolicy a(seq), b(pipe);
  for (auto* p : {&a, &b}) teach(p->costs(), 0.010, 0.0004, 0.8);
  const StepShape s{8, 3, 64, 0, true};
  // Until the pipeline's pace is measured, nothing is assumed to overlap.
  CATCH_CHECK(b.step_cost(s) == Approx(a.step_cost(s)));
  CATCH_CHECK(a.step_cost(s) == Approx(a.costs().predict(s)));
  // Steps completing every max(V, D + A): drafting and realignment hid behind verification.
  const double v = b.costs().predict_verify(s), da = b.costs().predict_draft(s) + b.costs().predict_align(s);
  for (int i = 0; i < 60; ++i) b.observe_interval(std::max(v, da), b.costs().predict_draft(s), v, b.costs().predict_align(s));
  CATCH_CHECK(b.serial_share() < 0.01);
  CATCH_CHECK(b.step_cost(s) == Approx(std::max(v, da)).epsilon(0.01));
  CATCH_CHECK(a.choose(rows(8, 0.6), 64, true).k == 0);
  CATCH_CHECK(b.choose(rows(8, 0.6), 64, true).k > 0);
  // A machine where they did not overlap at all brings it back.
  for (int i = 0; i < 60; ++i) b.observe_interval(v + da, b.costs().predict_draft(s), v, b.costs().predict_align(s));
  CATCH_CHECK(b.serial_share() > 0.99);
}

CATCH_TEST_CASE("no probes where even good drafts could not pay", "[policy][choose]") {
  DraftLengthSettings cfg;
  cfg.probe_every = 3;
  DraftLengthPolicy p(cfg);
  teach(p.costs(), 0.001, 0.0005, 0.9);  // compute-bound, and the draft costs nearly as much
  for (int i = 0; i < 40; ++i) CATCH_CHECK(p.choose(rows(32, 0.1), 64).k == 0);
}

CATCH_TEST_CASE("acceptance per temperature band: a hot sequence gets a smaller K than a greedy one", "[policy][accept]") {
  DraftLengthPolicy p(DraftLengthSettings{});
  teach(p.costs(), 0.010, 0.00002, 0.1);
  // Greedy rows accept their drafts; rows at temperature 1.5 mostly do not (p(d) is small).
  for (int i = 0; i < 100; ++i) {
    AcceptanceEstimate greedy, hot;
    p.learn(greedy, 4, 4, temperature_band(0.0));
    p.learn(hot, 4, 0, temperature_band(1.5));
  }
  CATCH_CHECK(temperature_band(0.0) == 0);
  CATCH_CHECK(temperature_band(0.7) == 2);
  CATCH_CHECK(temperature_band(1.5) == 3);
  // Fresh sequences of each temperature start from their band's rate, not the mixed engine-wide one.
  const AcceptanceEstimate fresh;
  const RowOutlook g = p.outlook(fresh, 100, temperature_band(0.0));
  const RowOutlook h = p.outlook(fresh, 100, temperature_band(1.5));
  CATCH_CHECK(g.acceptance > 0.9);
  CATCH_CHECK(h.acceptance < 0.1);
  CATCH_CHECK(h.acceptance < p.acceptance());
  CATCH_CHECK(g.acceptance > p.acceptance());
  // In the same window and on the same machine, the hot batch drafts less.
  int64_t k_greedy = 0, k_hot = 0;
  for (int i = 0; i < 10; ++i) k_greedy = p.choose(std::vector<RowOutlook>(1, g), 64).k;
  for (int i = 0; i < 10; ++i) k_hot = p.choose(std::vector<RowOutlook>(1, h), 64).k;
  CATCH_CHECK(k_hot < k_greedy);
  const SpeculationEstimates e = p.estimates();
  CATCH_REQUIRE(e.band_acceptance.size() == kTemperatureBands);
  CATCH_CHECK(e.band_acceptance[3] < e.band_acceptance[0]);
}
