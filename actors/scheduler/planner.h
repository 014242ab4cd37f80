// The planner interface: what the two drivers (the actor pipeline, actors/pool_manager.cpp, and
// the sequential driver, actors/sequential_driver.h) see of an engine's scheduling, whichever
// mode plans it. Sequences in (admit, cancel), plans out and outcomes back (each planner's own
// types, as jobs through its adapter: actors/jobs/job_planner.h), and what the producers hear
// (take_events). Two planners implement it:
//   Scheduler       in place: continuous batching over KV slots, how exspec serves (actors/scheduler/scheduler.h)
//   PaperScheduler  the paper's nonspec / EqSpec / ExSpec, kept as baselines (actors/paper/)
// The bookkeeping they share lives here, once: the SequencePool, the window, cancellations at the
// step boundary, writing a verified row back, the run statistics and the events. Plain C++: no
// tensors, no actors.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "actors/scheduler/draft_length.h"
#include "actors/scheduler/engine_config.h"
#include "actors/scheduler/plan.h"
#include "actors/scheduler/proposer.h"
#include "actors/scheduler/run_stats.h"
#include "actors/scheduler/sequence_pool.h"
#include "actors/scheduler/window.h"

namespace exspec {

class Planner {
 public:
  virtual ~Planner() = default;

  // A new sequence waits for the window (or a fixed batch). id 0: the pool picks one.
  SeqId admit(SeqRequest request, int priority = 0, SeqId id = 0);
  // Ends a sequence now, or at the end of the job it is in. Unknown or finished ids: no-op.
  void cancel(SeqId id, FinishReason reason);
  void cancel_all();

  // Called while the jobs handed out run: work that can be done before they are back (in place:
  // the next step chosen ahead, actors/scheduler/plan_ahead.h).
  virtual void plan_ahead() {}

  // Token deltas and results since the last call, in order.
  std::vector<SeqEvent> take_events();
  // Sequences that left the waiting queue since the last call (the front's queue bound).
  size_t take_dequeued() { return pool_.take_dequeued(); }

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
  virtual int64_t slots() const { return 0; }
  virtual int64_t slots_used() const { return 0; }
  // In place: the target's store's blocks (actors/scheduler/block_pool.h).
  virtual BlockCounts blocks() const { return {}; }

 protected:
  // policy: null in nonspec mode (every step plain). max_in_flight: jobs out at once.
  Planner(EngineConfig config, std::shared_ptr<DraftLengthPolicy> policy, int max_in_flight);

  // What the planner remembers of a job until it returns.
  struct InFlight {
    std::vector<SeqId> ids;
    bool prefill = false;
    bool grouped = false;  // ExSpec: a same-length group
    bool fixed = false;    // nonspec, EqSpec: a fixed batch, which holds its rows between its steps
    int64_t k = 0;
    StepShape shape;
    // Each row's drafts, and by whom (empty: k each, the server's proposer).
    std::vector<int64_t> row_k;
    std::vector<Proposer> proposers;
    // Grammar rows: the tokens the grammar forced (the whole proposal, past row_k too); what
    // tells the chat page's origins a forced token (TokenOrigin::Grammar).
    std::vector<std::vector<int64_t>> forced;
  };
  int64_t start(std::vector<SeqId> ids, InFlight f);
  bool full() const { return in_flight_.size() >= max_in_flight_; }
  // A prefill back: no longer in flight, its time counted; the ids of its sequences.
  std::vector<SeqId> prefill_done(const PrefillResult& o);
  // A step back: no longer in flight, the pipeline's pace and the step counted (the policy
  // learns its timings); what was planned for it.
  InFlight step_done(const StepResult& o);

  // A sequence of a returned prefill: no job holds it now; false when it ended instead
  // (cancelled meanwhile, or the prefill failed; it has been ended). Its progress is the
  // planner's to record.
  bool prefill_row(SeqId id, const PrefillResult& o);
  // A row of a returned step: its statistics, its tokens written back and told; false when the
  // sequence ended (finished, cancelled or failed; it has been ended). In place its progress is
  // recorded before (the commit's counts are absolute), in the paper's modes after.
  bool write_row(SeqId id, const InFlight& f, const StepResult& o, size_t row);
  // Entries of the prompt tokens first + 1 ... that a prefill scored for s: those it lacks are
  // kept, and once its prompt is scored they go out (once).
  void scored(Sequence& s, const std::vector<TokenLogprob>& entries, size_t first);
  // A sequence whose prefill is done: ends it when all it asked for was its prompt's logprobs
  // (max_tokens 0). Returns whether it goes on.
  bool goes_on(Sequence& s);
  // Ends a sequence that is not inside a job: frees it and tells its producer.
  void end(SeqId id, FinishReason reason, const std::string& error = "");
  // What a sequence leaves behind when it ends (in place: its slot).
  virtual void release(const Sequence&, bool /*failed*/) {}

  EngineConfig config_;
  std::shared_ptr<DraftLengthPolicy> policy_;
  SequencePool pool_;
  Window window_;
  bool prefilling_ = false;
  int64_t step_ = 0;
  RunStats stats_;

 private:
  InFlight finish(int64_t serial, bool prefill);  // throws on a job it does not know
  void count_step(const InFlight& f, const StepResult& o);
  // Two step completions in a row with the pipeline full of steps: the time between them is
  // what a step really costs when phases overlap (the policy learns the overlap from it).
  void time_pipeline(const StepResult& o);
  SeqEvent& event_for(SeqId id);

  size_t max_in_flight_;
  std::map<int64_t, InFlight> in_flight_;  // by serial
  int64_t serial_ = 0;
  size_t submitted_ = 0, finished_ = 0, cancelled_ = 0;
  std::vector<SeqEvent> events_;
  std::chrono::steady_clock::time_point last_done_;
  bool last_full_ = false;
};

}  // namespace exspec
