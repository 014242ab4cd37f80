#include "actors/draft_length.h"

#include <algorithm>
#include <stdexcept>

namespace exspec {
namespace {
// The engine-wide estimate follows the workload over a few hundred rows.
constexpr double kGlobalDecay = 0.995;
// A row's own evidence counts as much as this many trials of the engine-wide rate.
constexpr double kRowPriorTrials = 4;
}  // namespace

DraftLengthPolicy::DraftLengthPolicy(DraftLengthSettings s) : s_(s) {
  if (s_.k_min < 0 || s_.k_max < s_.k_min) throw std::invalid_argument("draft_tokens bounds: need 0 <= min <= max");
  if (!s_.adaptive && s_.fixed_k < 0) throw std::invalid_argument("draft_tokens must be >= 0");
}

double DraftLengthPolicy::expected_tokens(double alpha, int64_t k, int64_t remaining) {
  const int64_t n = std::max<int64_t>(0, std::min(k, remaining - 1));
  double sum = 1, term = 1;
  for (int64_t j = 1; j <= n; ++j) sum += (term *= alpha);
  return sum;
}

RowOutlook DraftLengthPolicy::outlook(const AcceptanceEstimate& row, int64_t remaining) const {
  return {row.rate(acceptance(), kRowPriorTrials), std::max<int64_t>(1, remaining)};
}

DraftChoice DraftLengthPolicy::choose(const std::vector<RowOutlook>& rows, int64_t context) {
  const int64_t B = static_cast<int64_t>(rows.size());
  auto evaluate = [&](int64_t k) {
    DraftChoice c;
    c.k = k;
    for (const RowOutlook& r : rows) c.expected_tokens += expected_tokens(r.acceptance, k, r.remaining);
    // The lag is left out on purpose: catching up is a one-off cost that the following steps
    // share, and counting it would lock a long run of K = 0 steps in (probes bound the lag).
    c.predicted_s = costs_.predict(StepShape{B, k, context, 0});
    return c;
  };
  DraftChoice best;
  const bool trained = costs_.verify().weight() > 0;
  if (!s_.adaptive || !trained) {
    best = evaluate(s_.adaptive ? std::clamp<int64_t>(s_.fixed_k, s_.k_min, s_.k_max) : s_.fixed_k);
  } else {
    double best_rate = -1;
    for (int64_t k = s_.k_min; k <= s_.k_max; ++k) {
      DraftChoice c = evaluate(k);
      const double rate = c.predicted_s > 0 ? c.expected_tokens / c.predicted_s : 0;
      // Ties (within 0.5 %) go to the smaller K: less work for the same predicted rate.
      if (rate > best_rate * 1.005) {
        best = c;
        best_rate = rate;
      }
    }
    if (best.k == 0 && s_.k_max >= 1 && ++zero_run_ >= s_.probe_every) best = evaluate(1);
    if (best.k > 0) zero_run_ = 0;
  }
  last_ = best;
  return best;
}

void DraftLengthPolicy::observe_step(const StepShape& s, double draft_s, double verify_s, double align_s) {
  costs_.observe(s, draft_s, verify_s, align_s);
}

void DraftLengthPolicy::observe_row(int64_t k, int64_t a) { global_.observe(k, a, kGlobalDecay); }

SpeculationEstimates DraftLengthPolicy::estimates() const {
  SpeculationEstimates e;
  e.adaptive = s_.adaptive;
  e.acceptance = acceptance();
  e.last_k = last_.k;
  e.last_expected_tokens = last_.expected_tokens;
  e.last_predicted_s = last_.predicted_s;
  for (auto [name, fit] : {std::make_pair("draft", &costs_.draft()), std::make_pair("verify", &costs_.verify()),
                           std::make_pair("align", &costs_.align())})
    for (size_t i = 0; i < fit->names().size(); ++i)
      e.coefficients.emplace_back(std::string(name) + "." + fit->names()[i], fit->coefficients()[i]);
  return e;
}

}  // namespace exspec
