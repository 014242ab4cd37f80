// The Scheduler: how exspec serves, in place (issue 18), with or without a draft model (without
// one every step has K = 0: plain decoding, continuously batched). Every decision in plain C++
// (no actors, no tensors): the window is the set of sequences holding a KV slot; a step is any
// B of its stored members, formed without a copy, so sequences join and leave between any two
// steps; prompts are stored in chunks between decode steps; the draft-length policy picks K;
// each row's drafts come from the draft model, prompt lookup or the request's prediction
// (actors/scheduler/proposer.h). Slots and blocks are the BlockManager's
// (actors/scheduler/block_manager.h): the Scheduler asks it for them and decides who gets them.
// Its interface is vLLM's:
//   plan()                the next piece of work, planned in full (actors/scheduler/plan.h)
//   prefilled / complete  its outcome back: tokens written, sequences finished, policy taught
// and, through its adapter (InplaceJobPlanner, actors/jobs/inplace_jobs.h), the same as jobs.
#pragma once
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "actors/scheduler/block_manager.h"
#include "actors/scheduler/planner.h"
#include "actors/scheduler/plan_ahead.h"

namespace exspec {

class Scheduler : public Planner {
 public:
  Scheduler(EngineConfig config, std::shared_ptr<DraftLengthPolicy> policy, int max_in_flight);

  // The next piece of work; monostate when nothing is ready or max_in_flight are out.
  Work plan();
  void prefilled(PrefillOutcome outcome);
  void complete(StepOutcome outcome);

  // While steps run: the step after the oldest chosen (actors/scheduler/plan_ahead.h), kept for
  // plan() when that step is back. Nothing when plan_ahead is off or no step is out.
  void plan_ahead() override;

  int64_t slots() const override { return blocks_.slots(); }
  int64_t slots_used() const override { return blocks_.used(); }
  BlockCounts blocks() const override { return blocks_.counts(); }

 private:
  // Newcomers: the window takes queued sequences while the stores have blocks for them, each
  // with its slot; the draft's prefill is decided for them together.
  std::vector<Sequence*> admit_newcomers();
  void decide_draft_prefill(const std::vector<Sequence*>& newcomers);
  // What the choice of the next piece reads (actors/scheduler/plan_ahead.h).
  WindowState window_state() const;
  // The plan made ahead when it is still the one the facts give (taken out of ahead_ either way
  // once its step is back), else none; counted.
  std::optional<PlannedStep> take_ahead(const WindowState& now);
  PrefillPlan plan_prefill();
  // A step over the chosen rows (Choice::step_rows); `made`: the plan made ahead for them,
  // whose rows' tokens are caught up rather than copied again.
  StepPlan plan_step(const std::vector<SeqId>& chosen, PlannedStep* made);
  // The step's rows, oldest first, each with blocks for what the step may write; a newer
  // sequence is pre-empted where the stores lack them. Returns the rows kept, in the given order.
  std::vector<SeqId> secure(const std::vector<SeqId>& ids);
  bool make_room(Sequence& s, const std::vector<SeqId>& keep);
  void preempt(Sequence& s);  // back to the queue, its blocks released (what it stored cached)
  // Moves the step's rows into consecutive slots where that is possible (block_manager.h).
  void plan_moves(StepPlan& p);
  // made: its tokens made ahead (plan_ahead), caught up and moved in instead of copied again.
  SlotRow slot_row(const Sequence& s, std::vector<int64_t>* made = nullptr) const;
  void stored(Sequence& s, Stored stored);
  void publish(const Sequence& s);  // its full stored blocks into the cache (others may share them)
  void release(const Sequence& s, bool failed) override;  // its full blocks cached, its slot freed
  void copied(const std::vector<SeqId>& ids);  // a job over ids returned: its copies are done

  // K: the policy's choice for the rows, and where each row's drafts come from: its
  // prediction, else the server's proposer.
  void plan_k(StepPlan& plan);
  Proposer proposer_of(const Sequence& s) const;
  // Each row's proposal without the draft model into p.proposed (cleared when no row has one);
  // returns the longest.
  int64_t propose(StepPlan& p) const;
  // Adaptive K: predictions priced by what predictions got, and without the draft model each
  // row's drafts capped by its proposal.
  void outlook_proposals(const StepPlan& p, BatchOutlook& o) const;
  // What the step tells about each row's drafts (InFlight::row_k, proposers).
  void note_proposals(const StepPlan& p, InFlight& f) const;

  BlockManager blocks_;
  bool last_was_prefill_ = false;  // prefill chunks and decode steps take turns
  // The steps out (serial, rows), oldest first: the oldest comes back first (the verifier runs
  // them in order), and the step after it is the one planned ahead.
  std::deque<std::pair<int64_t, std::vector<SeqId>>> steps_out_;
  std::optional<PlannedStep> ahead_;
};

}  // namespace exspec
