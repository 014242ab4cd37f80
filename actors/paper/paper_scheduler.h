// The paper's modes, kept as baselines (they reproduce the paper, and the oracle sweeps run
// them): nonspec (fixed batches of plain steps), EqSpec (fixed batches, realigned after every
// verification) and ExSpec (Algorithm 3: a pool and a window, same-length groups first,
// realignment as the fallback). Their rows are tensor states cut out of one batch and put
// together into the next (model/paper/spec_batch.h); the PaperScheduler moves them, never looks inside.
#pragma once
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "actors/scheduler/planner.h"
#include "actors/paper/batch_former.h"
#include "actors/paper/paper_plan.h"

namespace exspec {

class PaperScheduler : public Planner {
 public:
  PaperScheduler(EngineConfig config, std::shared_ptr<DraftLengthPolicy> policy, int max_in_flight);

  // The next piece of work; monostate when nothing is ready or max_in_flight are out.
  PaperWork plan();
  void prefilled(PaperPrefillOutcome outcome);
  void complete(PaperStepOutcome outcome);

 private:
  // A fixed batch (nonspec, EqSpec) between its steps: it lives until all its rows finish.
  struct FixedBatch {
    std::vector<SeqId> ids;
    std::vector<std::shared_ptr<SeqTensors>> rows;  // before its first step: the prefilled rows
    std::shared_ptr<SpecBatch> batch;               // after: the batch itself
    std::vector<int64_t> drop_rows;
  };
  // An ExSpec row between steps: its state, and the step whose batch it was cut from (row
  // `cut_row` of `cut_rows`).
  struct PoolRow {
    std::shared_ptr<SeqTensors> tensors;
    int64_t cut_step = -1, cut_row = -1, cut_rows = 0;
  };

  bool fixed_batches() const { return config_.mode == Mode::NonSpec || config_.mode == Mode::EqSpec; }
  PaperPrefillPlan plan_prefill();
  PaperStepPlan plan_fixed_step();
  PaperStepPlan plan_pool_step();
  void plan_k(PaperStepPlan& plan, bool reused);
  bool reuses_cut_batch(const std::vector<SeqId>& ids) const;
  bool same_length(const std::vector<SeqId>& ids) const;
  void release(const Sequence& s, bool failed) override;
  static Stored held(const Sequence& s, int64_t draft_lag);

  int64_t reserve_;  // spare cache positions: the largest K a step may draft, + 2
  BatchFormer former_;
  std::deque<FixedBatch> ready_fixed_;
  std::unordered_map<SeqId, PoolRow> rows_;  // ExSpec
};

}  // namespace exspec
