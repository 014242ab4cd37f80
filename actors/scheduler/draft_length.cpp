#include "actors/scheduler/draft_length.h"

#include <algorithm>
#include <stdexcept>

namespace exspec {
namespace {
// The engine-wide estimate follows the workload over a few hundred rows.
constexpr double kGlobalDecay = 0.995;
// A row's own evidence counts as much as this many trials of the engine-wide rate.
constexpr double kRowPriorTrials = 4;
}  // namespace

DraftLengthPolicy::DraftLengthPolicy(DraftLengthSettings s) : s_(s), costs_(s.target_experts) {
  if (s_.k_min < 0 || s_.k_max < s_.k_min) throw std::invalid_argument("draft_tokens bounds: need 0 <= min <= max");
  if (!s_.adaptive && s_.fixed_k < 0) throw std::invalid_argument("draft_tokens must be >= 0");
  probe_interval_ = std::max<int64_t>(1, s_.probe_every);
  ceiling_ = std::clamp<int64_t>(s_.fixed_k, s_.k_min, s_.k_max) + 1;
}

double DraftLengthPolicy::expected_tokens(double alpha, int64_t k, int64_t remaining) {
  const int64_t n = std::max<int64_t>(0, std::min(k, remaining - 1));
  double sum = 1, term = 1;
  for (int64_t j = 1; j <= n; ++j) sum += (term *= alpha);
  return sum;
}

RowOutlook DraftLengthPolicy::outlook(const AcceptanceEstimate& row, int64_t remaining, int band, bool prediction) const {
  const double prior = prediction ? predictions_.rate(kPriorRate, kPriorTrials) : acceptance(band);
  return {row.rate(prior, kRowPriorTrials), std::max<int64_t>(1, remaining)};
}

double DraftLengthPolicy::acceptance(int band) const {
  const AcceptanceEstimate& b = bands_[band];
  // The same evidence as the engine-wide estimate (one band only so far): exactly it.
  if (b.trials == global_.trials && b.accepted == global_.accepted) return acceptance();
  return b.rate(acceptance(), kPriorTrials);
}

BatchOutlook DraftLengthPolicy::outlook(const SequencePool& pool, const std::vector<SeqId>& ids) const {
  BatchOutlook o;
  for (SeqId id : ids) {
    const Sequence& s = pool.at(id);
    o.rows.push_back(outlook(s.acceptance, s.request.max_tokens - static_cast<int64_t>(s.generated.size()),
                             temperature_band(s.request.sampling.temperature)));
    o.context = std::max(o.context, s.length());
    o.lag = std::max(o.lag, s.draft_lag());
  }
  return o;
}

DraftChoice DraftLengthPolicy::evaluate(const std::vector<RowOutlook>& rows, int64_t context, bool reused, int64_t lag,
                                        int64_t k, double alpha_floor) const {
  const int64_t B = static_cast<int64_t>(rows.size());
  double remaining = 0;
  DraftChoice c;
  c.k = k;
  for (const RowOutlook& r : rows) {
    remaining += static_cast<double>(r.remaining);
    const int64_t drafts = r.limit >= 0 ? std::min(k, r.limit) : k;
    c.expected_tokens += expected_tokens(std::max(alpha_floor, r.acceptance), drafts, r.remaining);
  }
  c.predicted_s = step_cost(StepShape{B, k, context, 0, reused});
  if (k > 0 && lag > 0) {
    // Catching the draft up (the prompt, at first; then the tokens of plain steps) is paid
    // once and buys drafting for the rest of these sequences: shared by the steps they have
    // left at this K. Counting it whole would lock long runs of plain steps in; ignoring it
    // switches to drafting where a few steps cannot repay it.
    const double catch_up = costs_.predict_draft(StepShape{B, k, context, lag, reused}) -
                            costs_.predict_draft(StepShape{B, k, context, 0, reused});
    const double steps_left = std::max(1.0, remaining / std::max(1.0, c.expected_tokens));
    c.predicted_s += catch_up / steps_left;
  }
  return c;
}

DraftChoice DraftLengthPolicy::choose(const std::vector<RowOutlook>& rows, int64_t context, bool reused, int64_t lag) {
  auto evaluate = [&](int64_t k) { return this->evaluate(rows, context, reused, lag, k, 0.0); };
  DraftChoice best;
  const bool trained = costs_.verify().weight() > 0;
  if (!s_.adaptive || !trained) {
    best = evaluate(s_.adaptive ? std::clamp<int64_t>(s_.fixed_k, s_.k_min, s_.k_max) : s_.fixed_k);
  } else {
    double best_rate = -1;
    for (int64_t k = s_.k_min; k <= std::min(s_.k_max, std::max(s_.k_min, ceiling_)); ++k) {
      DraftChoice c = evaluate(k);
      double rate = c.predicted_s > 0 ? c.expected_tokens / c.predicted_s : 0;
      if (k > 0) rate /= 1 + s_.margin;
      // Ties (within 0.5 %) go to the smaller K: less work for the same predicted rate.
      if (rate > best_rate * 1.005) {
        best = c;
        best_rate = rate;
      }
    }
    if (best.k == 0) {
      // Until drafts have been verified at all, the acceptance estimate is only its prior and
      // plain steps teach it nothing: probe at once (a few steps in an engine's life) rather
      // than let a guess decide every step after.
      const bool cold = global_.trials < kColdTrials;
      // A probe that was followed by K = 0 again: the estimates stand, probe less often.
      if (probing_ && !cold) probe_interval_ = std::min(16 * std::max<int64_t>(1, s_.probe_every), 2 * probe_interval_);
      probing_ = false;
      plain_s_ += best.predicted_s;
      // Probe only where acceptance could change the answer: if even drafts accepted 9 times in
      // 10 would not pay at these costs (a large batch on a busy machine), probing only costs.
      ++zero_run_;
      if (s_.k_max >= 1 && (cold || zero_run_ >= probe_interval_) && could_pay(rows, context, reused, lag, best_rate) &&
          (cold || probe_affordable(static_cast<int64_t>(rows.size()), context, reused, lag, best.predicted_s))) {
        best = evaluate(1);
        probing_ = true;
      }
    } else {
      probe_interval_ = std::max<int64_t>(1, s_.probe_every);
      if (!probing_ && ++spec_run_ >= std::max<int64_t>(1, s_.probe_every) && best.k > s_.k_min) {
        best = evaluate(best.k - 1);
        spec_run_ = 0;
      }
      probing_ = false;
    }
    if (best.k == 0) spec_run_ = 0;
    if (best.k > 0) zero_run_ = 0, plain_s_ = 0;
    ceiling_ = std::max(best.k + 1, std::clamp<int64_t>(s_.fixed_k, s_.k_min, s_.k_max));
  }
  last_ = best;
  return best;
}

bool DraftLengthPolicy::could_pay(const std::vector<RowOutlook>& rows, int64_t context, bool reused, int64_t lag,
                                  double plain_rate) const {
  for (int64_t k = std::max<int64_t>(1, s_.k_min); k <= s_.k_max; ++k) {
    const DraftChoice c = evaluate(rows, context, reused, lag, k, 0.9);
    if (c.predicted_s > 0 && c.expected_tokens / c.predicted_s > plain_rate * (1 + s_.margin)) return true;
  }
  return false;
}

bool DraftLengthPolicy::drafting_pays(int64_t rows, int64_t prompt, int64_t max_tokens) const {
  if (!s_.adaptive) return s_.fixed_k > 0;
  if (costs_.verify().weight() <= 0) return true;  // uncalibrated: nothing to judge by
  const std::vector<RowOutlook> r(static_cast<size_t>(std::max<int64_t>(1, rows)),
                                  RowOutlook{acceptance(), std::max<int64_t>(1, max_tokens)});
  const int64_t lag = std::max<int64_t>(0, prompt - 1);  // every prompt token but pending
  auto rate = [&](int64_t k) {
    const DraftChoice c = evaluate(r, prompt, true, lag, k, 0.0);
    return c.predicted_s > 0 ? c.expected_tokens / c.predicted_s : 0.0;
  };
  const double plain = rate(0);  // beaten by the margin choose() asks, or it would not draft
  for (int64_t k = std::max<int64_t>(1, s_.k_min); k <= s_.k_max; ++k)
    if (rate(k) > plain * (1 + s_.margin)) return true;
  return false;
}

bool DraftLengthPolicy::probe_affordable(int64_t rows, int64_t context, bool reused, int64_t lag,
                                         double plain_s) const {
  const double extra = step_cost(StepShape{rows, 1, context, lag, reused}) - plain_s;
  return extra <= s_.probe_budget * plain_s_;
}

double DraftLengthPolicy::step_cost(const StepShape& s) const {
  const double d = costs_.predict_draft(s), v = costs_.predict_verify(s), a = costs_.predict_align(s);
  if (!s_.pipelined) return d + v + a;
  return std::max(v, d + a) + serial_ * std::min(v, d + a);
}

void DraftLengthPolicy::observe_interval(double interval_s, double draft_s, double verify_s, double align_s) {
  const double hi = std::max(verify_s, draft_s + align_s), lo = std::min(verify_s, draft_s + align_s);
  // Only steps where there is something to overlap say anything about the overlap.
  if (!s_.pipelined || lo < 0.1 * hi || interval_s <= 0) return;
  const double sample = std::clamp((interval_s - hi) / lo, 0.0, 1.0);
  serial_ += 0.1 * (sample - serial_);
}

void DraftLengthPolicy::observe_step(const StepShape& s, double draft_s, double verify_s, double align_s) {
  costs_.observe(s, draft_s, verify_s, align_s);
}

void DraftLengthPolicy::observe_row(int64_t k, int64_t a) { global_.observe(k, a, kGlobalDecay); }

void DraftLengthPolicy::seed_acceptance(double agreed, double positions) {
  if (!(positions > 0) || agreed < 0 || agreed > positions) return;
  const double w = std::min(1.0, kSeedTrials / positions);
  // Greedy text: the greedy band's evidence, and (every band shrinks towards it) the engine's.
  global_ = bands_[0] = AcceptanceEstimate{agreed * w, positions * w};
}

void DraftLengthPolicy::learn(AcceptanceEstimate& row, int64_t k, int64_t a, int band, bool prediction) {
  row.observe(k, a, kRowDecay);
  if (prediction) {
    predictions_.observe(k, a, kGlobalDecay);
    return;
  }
  observe_row(k, a);
  bands_[band].observe(k, a, kGlobalDecay);
}

SpeculationEstimates DraftLengthPolicy::estimates() const {
  SpeculationEstimates e;
  e.adaptive = s_.adaptive;
  e.acceptance = acceptance();
  for (int b = 0; b < kTemperatureBands; ++b) e.band_acceptance.push_back(acceptance(b));
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
