// Adaptive speculation: the draft length K of every step, chosen to maximise the expected
// committed tokens per second of the batch (issue 9; README "Adaptive draft length").
//
//   rate(K) = sum_i E_i(K) / (draft(K) + verify(K) + align(K))
//   E_i(K)  = 1 + a_i + a_i^2 + ... + a_i^min(K, r_i - 1)
// with a_i the row's running acceptance estimate, r_i its remaining tokens (drafts beyond
// max_tokens are wasted), and the costs from the StepCostModel. K = 0 is a plain target step:
// it always commits one token a row, so speculation is chosen only where it is predicted to pay.
// The choice never changes the output: every K yields the target's greedy tokens.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "actors/acceptance.h"
#include "actors/cost_model.h"

namespace exspec {

struct DraftLengthSettings {
  bool adaptive = true;   // "auto"; else every step uses fixed_k
  int64_t fixed_k = 3;
  int64_t k_min = 0, k_max = 8;
  // After this many consecutive K = 0 choices, one step drafts 1 token: keeps the acceptance
  // estimates fresh (they only move when drafts are verified) and bounds the draft's lag.
  int64_t probe_every = 16;
};

// What /metrics and the bench show of the policy.
struct SpeculationEstimates {
  bool adaptive = false;
  double acceptance = 0;  // engine-wide running estimate of alpha
  int64_t last_k = 0;
  double last_expected_tokens = 0, last_predicted_s = 0;  // of the last choice
  // "verify.token" -> seconds per unit of that feature (cost_model.h).
  std::vector<std::pair<std::string, double>> coefficients;
};

struct RowOutlook {
  double acceptance = 0;  // this row's estimate of alpha
  int64_t remaining = 1;  // tokens it may still produce (>= 1)
};

struct DraftChoice {
  int64_t k = 0;
  double expected_tokens = 0;  // sum over rows
  double predicted_s = 0;
};

class DraftLengthPolicy {
 public:
  explicit DraftLengthPolicy(DraftLengthSettings s);
  virtual ~DraftLengthPolicy() = default;

  // K for the next step of a batch (context: its longest sequence). Virtual so that tests can
  // drive the engines with arbitrary K sequences: any choice must leave the output unchanged.
  virtual DraftChoice choose(const std::vector<RowOutlook>& rows, int64_t context);
  // Timings of a step that ran with shape s.
  void observe_step(const StepShape& s, double draft_s, double verify_s, double align_s);
  // One row of a step: k drafts, a accepted. Updates the engine-wide estimate.
  void observe_row(int64_t k, int64_t a);
  // A row's outlook, its own estimate shrunk towards the engine-wide one.
  RowOutlook outlook(const AcceptanceEstimate& row, int64_t remaining) const;

  double acceptance() const { return global_.rate(kPriorRate, kPriorTrials); }
  const DraftLengthSettings& settings() const { return s_; }
  StepCostModel& costs() { return costs_; }
  const StepCostModel& costs() const { return costs_; }
  SpeculationEstimates estimates() const;

  static double expected_tokens(double alpha, int64_t k, int64_t remaining);
  // Per-row decay of its acceptance evidence, per step.
  static constexpr double kRowDecay = 0.9;

 private:
  static constexpr double kPriorRate = 0.5, kPriorTrials = 4;
  DraftLengthSettings s_;
  StepCostModel costs_;
  AcceptanceEstimate global_;
  int64_t zero_run_ = 0;
  DraftChoice last_;
};

}  // namespace exspec
