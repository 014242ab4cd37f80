// Adaptive speculation: the draft length K of every step, chosen to maximise the expected
// committed tokens per second of the batch (issue 9; README "Adaptive draft length").
//
//   rate(K) = sum_i E_i(K) / cost(K),  cost = draft + verify + align; with two batches in
//             flight (the actor pipeline) the next batch's drafting and realignment overlap
//             with this one's verification: cost = max(V, D + A) + s * min(V, D + A), with
//             s (the share that does not overlap) learned from the pipeline's real pace
//   E_i(K)  = 1 + a_i + a_i^2 + ... + a_i^min(K, r_i - 1)
// with a_i the row's running acceptance estimate, r_i its remaining tokens (drafts beyond
// max_tokens are wasted), and the costs from the StepCostModel. K = 0 is a plain target step:
// it always commits one token a row, so speculation is chosen only where it is predicted to pay.
// The choice never changes the output: every K yields the target's greedy tokens.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "actors/scheduler/acceptance.h"
#include "actors/scheduler/cost_model.h"
#include "actors/scheduler/sequence_pool.h"

namespace exspec {

struct DraftLengthSettings {
  bool adaptive = true;   // "auto"; else every step uses fixed_k
  int64_t fixed_k = 3;
  int64_t k_min = 0, k_max = 8;
  // After this many consecutive K = 0 choices, one step drafts 1 token: keeps the acceptance
  // estimates fresh (they only move when drafts are verified) and bounds the draft's lag. Each
  // probe that changes nothing doubles the interval (up to 16x): probes cost a realignment.
  // Likewise every probe_every-th step of a run of K > 0 uses K - 1, so that the cost of
  // shorter drafts (and of plain steps) is measured, not only extrapolated.
  int64_t probe_every = 16;
  // A probe's predicted extra cost over a plain step, the draft's whole catch-up included, may
  // be at most this share of the predicted time of the plain steps since the last probe. The
  // catch-up is paid at once and only repaid if the probe leads to drafting: a probe of rows
  // that never drafted (their lag is the prompt) costs several plain steps.
  double probe_budget = 0.03;
  // Two batches in flight (EngineOptions::overlap): one batch's drafting and realignment run
  // while the other is verified. How much that hides depends on the machine (on 2 cores the
  // phases share the cores), so it is learned: see observe_interval().
  bool pipelined = false;
  // Speculation must be predicted to beat a plain step by this share: a plain step is never
  // slower than nonspec decoding, while a wrong K > 0 costs drafting and a realignment, and on
  // a 2-core machine the phase times of drafting steps scatter by tens of percent (contention
  // between the drafter, the verifier and the realigner). Where speculation really pays (small
  // batches) its gain is well above the margin.
  double margin = 0.2;
  // The target's layers of experts (num_experts 0: dense): its verify's cost grows with the
  // experts B (K + 1) rows choose (actors/scheduler/cost_model.h).
  ExpertsShape target_experts;
};

// What /metrics and the bench show of the policy.
struct SpeculationEstimates {
  bool adaptive = false;
  double acceptance = 0;  // engine-wide running estimate of alpha
  std::vector<double> band_acceptance;  // per temperature band (actors/scheduler/acceptance.h)
  int64_t last_k = 0;
  double last_expected_tokens = 0, last_predicted_s = 0;  // of the last choice
  // "verify.token" -> seconds per unit of that feature (cost_model.h).
  std::vector<std::pair<std::string, double>> coefficients;
};

struct RowOutlook {
  double acceptance = 0;  // this row's estimate of alpha
  int64_t remaining = 1;  // tokens it may still produce (>= 1)
  int64_t limit = -1;     // drafts it can have (a proposal's length, actors/scheduler/proposer.h); -1: any
};

// What a choice is made from: the batch's rows, its longest sequence and its longest draft lag.
struct BatchOutlook {
  std::vector<RowOutlook> rows;
  int64_t context = 0, lag = 0;
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
  // reused: the rows are the batch they were cut from (no repad copy).
  // lag: the longest draft lag among the rows (what the draft must catch up first).
  virtual DraftChoice choose(const std::vector<RowOutlook>& rows, int64_t context, bool reused = false,
                             int64_t lag = 0);
  // Timings of a step that ran with shape s.
  void observe_step(const StepShape& s, double draft_s, double verify_s, double align_s);
  // Pipelined: the time between two step completions while the pipeline was full, and the
  // phase times of the step that completed. Moves the serial share s.
  void observe_interval(double interval_s, double draft_s, double verify_s, double align_s);
  double serial_share() const { return serial_; }
  // The start-up measurement of it (calibration), in place of the cautious 1.
  void seed_serial_share(double s) { serial_ = std::clamp(s, 0.0, 1.0); }
  // The start-up measurement of acceptance (the draft's agreement with the target's own greedy
  // text, actors/jobs/calibration.h), in place of the 0.5 prior: a cold engine then neither bets on
  // drafts it has never seen verified nor pays whole-prompt catch-ups to find out. It counts as
  // at most kSeedTrials verified drafts, so that the workload's own rows soon outweigh it.
  void seed_acceptance(double agreed, double positions);
  // One row of a step: k drafts, a accepted. Updates the engine-wide estimate.
  void observe_row(int64_t k, int64_t a);
  // What a verified row tells: the engine-wide, its temperature band's and the row's own
  // acceptance. (How far the row's draft now lags is what the step itself reports.)
  // prediction: the drafts were a request's prediction (actors/scheduler/proposer.h), whose agreement says
  // nothing of the server's proposer's: they teach the predictions' own engine-wide estimate.
  void learn(AcceptanceEstimate& row, int64_t k, int64_t a, int band = 0, bool prediction = false);
  // A row's outlook, its own estimate shrunk towards its temperature band's (or, for a
  // prediction, towards what predictions got).
  RowOutlook outlook(const AcceptanceEstimate& row, int64_t remaining, int band = 0, bool prediction = false) const;
  // The band's estimate: a hot sequence starts from what hot sequences got, not from the greedy
  // rows' rate. While every verified row was of this band it is the engine-wide estimate.
  double acceptance(int band) const;
  // The outlook of a batch of pool sequences.
  BatchOutlook outlook(const SequencePool& pool, const std::vector<SeqId>& ids) const;

  double acceptance() const { return global_.rate(kPriorRate, kPriorTrials); }
  const DraftLengthSettings& settings() const { return s_; }
  StepCostModel& costs() { return costs_; }
  const StepCostModel& costs() const { return costs_; }
  SpeculationEstimates estimates() const;
  // Whether the last choice drafted: the batch former's guess for the next steps.
  virtual bool speculating() const { return last_.k > 0; }

  static double expected_tokens(double alpha, int64_t k, int64_t remaining);
  // Whether some K > 0 would beat plain steps (rate plain_rate) if the drafts were good.
  bool could_pay(const std::vector<RowOutlook>& rows, int64_t context, bool reused, int64_t lag,
                 double plain_rate) const;
  // Whether, at the engine-wide acceptance estimate, some K > 0 is predicted to beat plain steps
  // by choose()'s margin over the life of sequences of this prompt length and max_tokens, the
  // draft's prefill of the prompt included (a catch-up of the whole prompt, shared by the steps
  // the sequence has): in place, the draft stores prompts as they are prefilled only then. A pair
  // whose drafts do not pay at this batch size, or sequences too short to repay the draft's
  // prefill, then cost no draft prefill, and rare probes catch the prompt up instead.
  bool drafting_pays(int64_t rows, int64_t prompt, int64_t max_tokens) const;
  // Whether a probe (K = 1, catch-up paid whole) fits the probe budget now.
  bool probe_affordable(int64_t rows, int64_t context, bool reused, int64_t lag, double plain_s) const;
  // Expected tokens and predicted cost (catch-up of the lag included, shared over the steps
  // left) of a step at K, with every row's acceptance at least alpha_floor.
  DraftChoice evaluate(const std::vector<RowOutlook>& rows, int64_t context, bool reused, int64_t lag, int64_t k,
                       double alpha_floor) const;
  // The predicted cost of one step of this shape (see `pipelined`).
  double step_cost(const StepShape& s) const;

 private:
  static constexpr double kPriorRate = 0.5, kPriorTrials = 4;
  // Verified drafts the engine-wide estimate needs before probes wait for their schedule.
  static constexpr double kColdTrials = 16;
  static constexpr double kSeedTrials = 32;
  // Per-row decay of its acceptance evidence, per step.
  static constexpr double kRowDecay = 0.9;
  DraftLengthSettings s_;
  StepCostModel costs_;
  AcceptanceEstimate global_;
  AcceptanceEstimate bands_[kTemperatureBands];
  AcceptanceEstimate predictions_;  // requests' predictions, whatever the server's proposer
  int64_t zero_run_ = 0, spec_run_ = 0, probe_interval_ = 0;
  double plain_s_ = 0;  // predicted time of the plain steps since the last probe or drafting step
  bool probing_ = false;
  // K may rise by one per step at most above the configured K (draft_tokens, 3 by default, which
  // the calibration measures around): the cost model is trusted near the shapes it has seen,
  // and a step of a new K teaches it that K's real cost before a longer one is tried. Up to the
  // configured K it may jump: from K = 0 the way up is often through a K = 1 that does not pay
  // (a whole realignment for one draft) while K = 3 does, and rising one at a time kept auto
  // at K = 0 where K = 3 paid.
  int64_t ceiling_ = 0;
  DraftChoice last_;
  // Until calibrated, as if nothing overlapped: the cautious side (favours K = 0). Learning it
  // from the pipeline alone was not enough: while K = 0 is chosen there is no overlap to see,
  // so the cautious start kept auto at K = 0 where K = 3 paid.
  double serial_ = 1.0;
};

}  // namespace exspec
