// The Scheduler: every decision of the engine, in plain C++ (no actors, no tensors). It owns the
// SequencePool, the window and the batch former (ExSpec, Algorithm 3), the fixed batches
// (nonspec, EqSpec), the draft-length policy, which sequences are inside a step, pending
// cancellations and the run statistics. Its interface is that of vLLM's scheduler:
//   admit / cancel        requests in
//   next()                the next piece of work, planned in full (actors/plan.h)
//   prefilled / complete  its outcome back: tokens written, sequences finished, policy taught
//   take_events()         what the producers hear (token deltas, results)
// Two drivers run it: the actor pipeline (actors/pool_manager.cpp, up to two pieces of work in
// flight) and the sequential loop (actors/sequential_driver.h, one at a time). The steps
// themselves are actors/step_phases.h.
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "actors/batch_former.h"
#include "actors/draft_length.h"
#include "actors/engine_config.h"
#include "actors/plan.h"
#include "actors/proposer.h"
#include "actors/run_stats.h"
#include "actors/sequence_pool.h"
#include "actors/window.h"
#include "model/slot_table.h"

namespace exspec {

class Scheduler {
 public:
  // policy: null in nonspec mode (every step plain). max_in_flight: pieces of work out at once.
  Scheduler(EngineConfig config, std::shared_ptr<DraftLengthPolicy> policy, int max_in_flight);

  // A new sequence waits for the window (ExSpec) or a fixed batch. id 0: the pool picks one.
  SeqId admit(SeqRequest request, int priority = 0, SeqId id = 0);
  // Ends a sequence now, or at the end of the step it is in. Unknown or finished ids: no-op.
  void cancel(SeqId id, FinishReason reason);
  void cancel_all();

  // The next piece of work; monostate when nothing is ready or max_in_flight are out.
  Work next();
  void prefilled(PrefillOutcome outcome);
  void complete(StepOutcome outcome);

  // Token deltas and results since the last call, in order.
  std::vector<SeqEvent> take_events();
  // Sequences that left the waiting queue since the last call (the front's queue bound).
  size_t take_dequeued();

  // Nothing in flight and nothing unfinished.
  bool idle() const { return in_flight_.empty() && pool_.unfinished() == 0; }
  const RunStats& stats() const { return stats_; }
  size_t active() const { return pool_.unfinished() - pool_.waiting(); }
  size_t waiting() const { return pool_.waiting(); }
  size_t submitted() const { return submitted_; }
  size_t finished() const { return finished_; }
  size_t cancelled() const { return cancelled_; }
  const std::shared_ptr<DraftLengthPolicy>& policy() const { return policy_; }
  // In place: the stores' slots (each store has this many) and how many are taken.
  const SlotTable& slots() const { return slots_; }

 private:
  // A fixed batch (nonspec, EqSpec) between its steps: it lives until all its rows finish.
  struct FixedBatch {
    std::vector<SeqId> ids;
    std::vector<std::shared_ptr<SeqTensors>> rows;  // before its first step: the prefilled rows
    std::shared_ptr<SpecBatch> batch;               // after: the batch itself
    std::vector<int64_t> drop_rows;
  };
  // What the scheduler remembers of a piece of work until its outcome returns.
  struct InFlight {
    std::vector<SeqId> ids;
    bool prefill = false, fixed = false, grouped = false, in_place = false;
    int64_t k = 0;
    StepShape shape;
    // In place: the drafts each row had, and by whom (empty: k each, the server's proposer)
    std::vector<int64_t> row_k;
    std::vector<Proposer> proposers;
  };

  bool fixed_batches() const { return config_.mode == Mode::NonSpec || config_.mode == Mode::EqSpec; }
  bool in_place() const { return config_.mode == Mode::InPlace; }
  // In place (actors/scheduler_inplace.cpp): continuous batching over store slots, prompts
  // prefilled in chunks between decode steps.
  Work next_in_place();
  PrefillPlan plan_inplace_prefill();
  // Whether the B lowest-slot sequences without a token yet are all stored and free to step.
  bool first_block_stored(std::vector<const Sequence*> fresh) const;
  void decide_draft_prefill(const std::vector<Sequence*>& newcomers);
  StepPlan plan_inplace_step(bool hold_fresh);  // hold_fresh: rows without a token wait
  SlotRow slot_row(const Sequence& s) const;
  void take_slot(Sequence& s);                     // a newcomer's slot, its cached prefix kept
  void release_slot(const Sequence& s, bool failed);  // what the slot keeps for the next one
  // Where a sequence's drafts come from: its prediction, else the server's proposer.
  Proposer proposer_of(const Sequence& s) const;
  // In place: each row's proposal without the draft model into p.proposed (cleared when no
  // row has one); returns the longest.
  int64_t propose(StepPlan& p) const;
  // In place, adaptive K: predictions priced by what predictions got, and without the draft
  // model each row's drafts capped by its proposal.
  void outlook_proposals(const StepPlan& p, BatchOutlook& o) const;
  // In place: what the step tells about each row's drafts (InFlight::row_k, proposers).
  void note_proposals(const StepPlan& p, InFlight& f) const;
  void stored_in_place(Sequence& s, int64_t stored);
  PrefillPlan plan_prefill();
  StepPlan plan_fixed_step();
  StepPlan plan_pool_step();
  void plan_k(StepPlan& plan, bool reused);
  int64_t start(std::vector<SeqId> ids, InFlight f);
  bool reuses_cut_batch(const std::vector<SeqId>& ids) const;
  bool same_length(const std::vector<SeqId>& ids) const;
  void count_step(const InFlight& f, const StepOutcome& o);
  // Writes one verified row back; true when the sequence goes on.
  bool write_row(SeqId id, const InFlight& f, const StepOutcome& o, size_t row);
  void end(SeqId id, FinishReason reason, const std::string& error = "");
  SeqEvent& event_for(SeqId id);
  void time_pipeline(const StepOutcome& o);

  EngineConfig config_;
  std::shared_ptr<DraftLengthPolicy> policy_;
  size_t max_in_flight_;
  int64_t reserve_;  // spare cache positions: the largest K a step may draft, + 2

  SequencePool pool_;
  Window window_;
  BatchFormer former_;
  std::deque<FixedBatch> ready_fixed_;
  std::map<int64_t, InFlight> in_flight_;  // by serial
  bool prefilling_ = false;
  SlotTable slots_;               // in place
  bool last_was_prefill_ = false;  // in place: prefill chunks and decode steps take turns
  int64_t serial_ = 0, step_ = 0;

  RunStats stats_;
  size_t submitted_ = 0, finished_ = 0, cancelled_ = 0, dequeued_ = 0;
  std::vector<SeqEvent> events_;
  // The pipeline's pace (adaptive K): when the last step completed, and whether the pipeline
  // was full of steps then.
  std::chrono::steady_clock::time_point last_done_;
  bool last_full_ = false;
};

}  // namespace exspec
