// The step cost model of adaptive speculation: what one step of a batch costs, as a function of
// its shape, learned online from the timings every step records (and seeded by a calibration
// at start-up, actors/jobs/calibration.h).
//
// The timings are what the phases cost in the running pipeline, where the drafter's and the
// verifier's forwards share the cores: observed steps soon outweigh the calibration, which
// measured each operation alone.
//
// Each phase is linear in a few features of the shape (why these: a forward pass on CPU or GPU
// pays a fixed cost for reading the weights, a cost per token fed, and an attention cost per
// token and context position; realignment copies rows x context positions):
//   verify (one target forward of K+1 tokens a row):  1, B, B(K+1), B(K+1)S, B[K>0], X(B(K+1))
//     (B[K>0]: one token a row runs the matrix-vector-like fast path; measured on OpenBLAS,
//     going from 1 to 2 tokens a row costs more than each further token. X(N): a target with
//     layers of experts reads the experts its N rows choose, expected_experts(N) of them a
//     layer; a dense target has none. A dense verify reads each weight once for all rows, an
//     expert verify up to (K + 1) top-k experts a row: its cost grows with K beyond the tokens')
//   draft  (K draft forwards, the first also feeding each row's lag L):  K, BK, BKS, BL, BLS
//     (the lag's tokens go through at prefill speed, many a forward: their own coefficients)
//   align  (assemble + unpad-append-repad):  1, B, BS[not reused], BS[K>0]
// with B rows, S the longest sequence (context). Coefficients are kept non-negative, so a
// prediction never says that more work is free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace exspec {

// Least squares with exponential forgetting and a small ridge, solved on demand with the
// non-negativity constraint (an active set over at most a handful of features).
class OnlineFit {
 public:
  OnlineFit(std::vector<std::string> names, double forgetting, double ridge);
  // One observation y ~ x . theta, with a weight (calibration points count more).
  void observe(const std::vector<double>& x, double y, double weight = 1.0);
  double predict(const std::vector<double>& x) const;
  const std::vector<double>& coefficients() const;
  const std::vector<std::string>& names() const { return names_; }
  double weight() const { return weight_; }  // total (forgotten) observation weight

 private:
  void solve() const;
  std::vector<std::string> names_;
  double forgetting_, ridge_, weight_ = 0;
  std::vector<double> xtx_, xty_;  // n x n, n
  mutable std::vector<double> coef_;
  mutable bool dirty_ = false;
};

struct StepShape {
  int64_t rows = 0;     // B
  int64_t k = 0;        // drafts per row (0: a plain target step)
  int64_t context = 0;  // S: the longest sequence in the batch
  int64_t lag = 0;      // L: the longest draft lag (tokens the draft must catch up first)
  bool reused = false;  // the rows are exactly the batch they were cut from: no repad copy
};

// A target's layers of experts, as the cost model prices them: num_experts 0 for a dense one.
struct ExpertsShape {
  int64_t num_experts = 0, top_k = 0;
  // The distinct experts a layer reads for N rows, were each row's choice of top_k independent
  // and uniform: E (1 - (1 - top_k / E)^N). Real rows agree more (a sequence's drafts choose
  // alike), which the feature's learned coefficient absorbs at the shapes observed.
  double expected_experts(int64_t rows) const;
};

class StepCostModel {
 public:
  explicit StepCostModel(ExpertsShape experts = {});
  double predict_draft(const StepShape& s) const;
  double predict_verify(const StepShape& s) const;
  double predict_align(const StepShape& s) const;
  double predict(const StepShape& s) const { return predict_draft(s) + predict_verify(s) + predict_align(s); }

  // One step's measured phase times.
  void observe(const StepShape& s, double draft_s, double verify_s, double align_s);
  // Calibration: a single forward / copy measured in isolation.
  void observe_target_forward(int64_t rows, int64_t tokens, int64_t context, double seconds);
  // A draft forward of `tokens` a row counts as a one-token forward plus a catch-up of tokens - 1.
  void observe_draft_forward(int64_t rows, int64_t tokens, int64_t context, double seconds);
  void observe_copy(int64_t rows, int64_t context, double seconds);    // assemble's repad copy
  void observe_gather(int64_t rows, int64_t context, double seconds);  // realign after a ragged step

  const OnlineFit& draft() const { return draft_; }
  const OnlineFit& verify() const { return verify_; }
  const OnlineFit& align() const { return align_; }

 private:
  ExpertsShape experts_;
  OnlineFit draft_, verify_, align_;
  std::vector<double> verify_x(int64_t rows, int64_t tokens, int64_t context) const;
};

}  // namespace exspec
