#include "actors/scheduler/cost_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace exspec {
namespace {

// Forgetting per observation: the last fifty or so steps dominate, so the model follows the
// pipeline's real costs (contention, other processes, longer contexts) soon after start-up.
constexpr double kForgetting = 0.98;
constexpr double kRidge = 1e-9;
// A calibration point stands for this many steps. Calibration measures each operation alone,
// while steps run next to each other in the pipeline: a couple of dozen real steps outweigh it.
constexpr double kCalibrationWeight = 0.5;
constexpr double kSpike = 1.5;

// Feature scales keep the normal equations well conditioned: each column is O(1) at typical shapes.
constexpr double kTok = 1.0 / 64, kTokCtx = 1.0 / 16384, kCtx = 1.0 / 4096;

// `forwards` draft forwards of one token a row, the first also feeding `lag` more tokens a row.
// The lag's tokens have their own coefficients: fed many at a time they run at prefill speed,
// and a catch-up of a whole prompt costs tens of single-token forwards (measured at start-up,
// actors/jobs/calibration.cpp), so it must not be read off the one-token forwards of drafting.
std::vector<double> draft_x(int64_t forwards, int64_t B, int64_t lag, int64_t S) {
  const double bt = static_cast<double>(B * forwards), bl = static_cast<double>(B * lag);
  return {static_cast<double>(forwards), bt * kTok, bt * S * kTokCtx, bl * kTok, bl * S * kTokCtx};
}

// Solves the n x n system a x = b (a symmetric positive definite) by Gaussian elimination.
std::vector<double> solve_dense(std::vector<double> a, std::vector<double> b) {
  const size_t n = b.size();
  for (size_t c = 0; c < n; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r * n + c]) > std::fabs(a[p * n + c])) p = r;
    if (std::fabs(a[p * n + c]) < 1e-300) continue;  // a dropped feature: its row stays zero
    if (p != c) {
      for (size_t k = 0; k < n; ++k) std::swap(a[c * n + k], a[p * n + k]);
      std::swap(b[c], b[p]);
    }
    for (size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = a[r * n + c] / a[c * n + c];
      if (f == 0) continue;
      for (size_t k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n, 0);
  for (size_t i = 0; i < n; ++i)
    if (std::fabs(a[i * n + i]) >= 1e-300) x[i] = b[i] / a[i * n + i];
  return x;
}

}  // namespace

OnlineFit::OnlineFit(std::vector<std::string> names, double forgetting, double ridge)
    : names_(std::move(names)), forgetting_(forgetting), ridge_(ridge),
      xtx_(names_.size() * names_.size(), 0), xty_(names_.size(), 0), coef_(names_.size(), 0) {}

void OnlineFit::observe(const std::vector<double>& x, double y, double w) {
  const size_t n = names_.size();
  if (x.size() != n) throw std::logic_error("OnlineFit: feature count");
  if (!std::isfinite(y) || y < 0 || w <= 0) return;
  for (double& v : xtx_) v *= forgetting_;
  for (double& v : xty_) v *= forgetting_;
  weight_ = weight_ * forgetting_ + w;
  for (size_t i = 0; i < n; ++i) {
    xty_[i] += w * x[i] * y;
    for (size_t j = 0; j < n; ++j) xtx_[i * n + j] += w * x[i] * x[j];
  }
  dirty_ = true;
}

// Non-negative least squares by elimination: solve, drop the most negative coefficient's
// feature, solve again. With four features that is at most four small solves.
void OnlineFit::solve() const {
  const size_t n = names_.size();
  std::vector<bool> active(n, true);
  for (size_t round = 0; round <= n; ++round) {
    std::vector<double> a(n * n, 0), b(n, 0);
    for (size_t i = 0; i < n; ++i) {
      if (!active[i]) continue;
      b[i] = xty_[i];
      for (size_t j = 0; j < n; ++j)
        if (active[j]) a[i * n + j] = xtx_[i * n + j];
      a[i * n + i] += ridge_ * (1 + xtx_[i * n + i]);
    }
    coef_ = solve_dense(a, b);
    size_t worst = n;
    for (size_t i = 0; i < n; ++i)
      if (active[i] && coef_[i] < 0 && (worst == n || coef_[i] < coef_[worst])) worst = i;
    if (worst == n) break;
    active[worst] = false;
  }
  for (double& c : coef_) c = std::max(0.0, c);
  dirty_ = false;
}

const std::vector<double>& OnlineFit::coefficients() const {
  if (dirty_) solve();
  return coef_;
}

double OnlineFit::predict(const std::vector<double>& x) const {
  const auto& c = coefficients();
  double y = 0;
  for (size_t i = 0; i < c.size(); ++i) y += c[i] * x[i];
  return y;
}

double ExpertsShape::expected_experts(int64_t rows) const {
  if (num_experts <= 0 || rows <= 0) return 0;
  const double miss = 1.0 - static_cast<double>(top_k) / static_cast<double>(num_experts);
  return static_cast<double>(num_experts) * (1.0 - std::pow(miss, static_cast<double>(rows)));
}

StepCostModel::StepCostModel(ExpertsShape experts)
    : experts_(experts),
      draft_({"forward", "token", "token_context", "lag_token", "lag_token_context"}, kForgetting, kRidge),
      verify_({"forward", "row", "token", "token_context", "row_multi_token", "experts"}, kForgetting, kRidge),
      align_({"step", "row", "row_context", "row_context_ragged"}, kForgetting, kRidge) {}

// The experts feature is the expected distinct experts as a share of them all (O(1)).
std::vector<double> StepCostModel::verify_x(int64_t B, int64_t tokens, int64_t S) const {
  const double bt = static_cast<double>(B * tokens);
  const double experts = experts_.num_experts > 0 ? experts_.expected_experts(B * tokens) / static_cast<double>(experts_.num_experts) : 0.0;
  return {1.0, static_cast<double>(B) / 8, bt * kTok, bt * S * kTokCtx, tokens > 1 ? static_cast<double>(B) / 8 : 0.0, experts};
}

namespace {
std::vector<double> align_x(const StepShape& s) {
  const double bs = static_cast<double>(s.rows * s.context) * kCtx;
  return {1.0, static_cast<double>(s.rows) / 8, s.reused ? 0.0 : bs, s.k > 0 ? bs : 0.0};
}
}  // namespace

double StepCostModel::predict_draft(const StepShape& s) const {
  if (s.k == 0) return 0;
  return draft_.predict(draft_x(s.k, s.rows, s.lag, s.context));
}
double StepCostModel::predict_verify(const StepShape& s) const {
  return verify_.predict(verify_x(s.rows, s.k + 1, s.context));
}
double StepCostModel::predict_align(const StepShape& s) const { return align_.predict(align_x(s)); }

namespace {
// A phase time far above the prediction is mostly the other batch's work on the same cores (on
// 2 cores: a draft catching up a prompt next to this verification), not this shape's cost.
// Clipped, one spike does not teach that plain steps are slow, which had tipped a B = 16 batch
// into drafting; a machine that really got slower is still followed, at up to 1.5x a step.
void observe_clipped(OnlineFit& f, const std::vector<double>& x, double y) {
  if (f.weight() > 0) {
    const double p = f.predict(x);
    if (p > 0) y = std::min(y, kSpike * p);
  }
  f.observe(x, y);
}
}  // namespace

void StepCostModel::observe(const StepShape& s, double draft_s, double verify_s, double align_s) {
  if (s.k > 0) observe_clipped(draft_, draft_x(s.k, s.rows, s.lag, s.context), draft_s);
  observe_clipped(verify_, verify_x(s.rows, s.k + 1, s.context), verify_s);
  observe_clipped(align_, align_x(s), align_s);
}

void StepCostModel::observe_target_forward(int64_t rows, int64_t tokens, int64_t context, double seconds) {
  verify_.observe(verify_x(rows, tokens, context), seconds, kCalibrationWeight);
}
void StepCostModel::observe_draft_forward(int64_t rows, int64_t tokens, int64_t context, double seconds) {
  draft_.observe(draft_x(1, rows, tokens - 1, context), seconds, kCalibrationWeight);
}
void StepCostModel::observe_copy(int64_t rows, int64_t context, double seconds) {
  align_.observe(align_x(StepShape{rows, 0, context, 0, false}), seconds, kCalibrationWeight);
}
void StepCostModel::observe_gather(int64_t rows, int64_t context, double seconds) {
  const double bs = static_cast<double>(rows * context) * kCtx;
  align_.observe({0.0, 0.0, 0.0, bs}, seconds, kCalibrationWeight);
}

}  // namespace exspec
