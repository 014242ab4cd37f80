// The Scheduler: how exspec serves, in place (issue 18), with or without a draft model (without
// one every step has K = 0: plain decoding, continuously batched). Every decision in plain C++
// (no actors, no tensors): the window is the set of sequences holding a KV slot
// (actors/scheduler/slot_table.h) and the blocks of their positions (actors/scheduler/block_pool.h); a step is any B
// of its stored members, formed without a copy, so sequences join and leave between any two
// steps; prompts are stored in chunks between decode
// steps; the draft-length policy picks K; each row's drafts come from the draft model, prompt
// lookup or the request's prediction (actors/scheduler/proposer.h). Its interface is vLLM's:
//   plan()                the next piece of work, planned in full (actors/scheduler/plan.h)
//   prefilled / complete  its outcome back: tokens written, sequences finished, policy taught
// and, as an Executor (actors/scheduler/executor.h), the same wrapped as jobs (actors/jobs/inplace_jobs.h).
#pragma once
#include <memory>
#include <vector>

#include "actors/scheduler/executor.h"
#include "actors/scheduler/block_pool.h"
#include "actors/scheduler/slot_table.h"

namespace exspec {

class Scheduler : public Executor {
 public:
  Scheduler(EngineConfig config, std::shared_ptr<DraftLengthPolicy> policy, int max_in_flight);

  // The next piece of work; monostate when nothing is ready or max_in_flight are out.
  Work plan();
  void prefilled(PrefillOutcome outcome);
  void complete(StepOutcome outcome);

  std::shared_ptr<Job> next() override;  // plan(), as a job (actors/jobs/inplace_jobs.cpp)
  void done(std::shared_ptr<Job> job) override;

  int64_t slots() const override { return slots_.slots(); }
  int64_t slots_used() const override { return slots_.used(); }
  BlockCounts blocks() const override;

 private:
  PrefillPlan plan_prefill();
  // Whether the B lowest-slot sequences without a token yet are all stored and free to step.
  bool first_block_stored(std::vector<const Sequence*> fresh) const;
  void decide_draft_prefill(const std::vector<Sequence*>& newcomers);
  StepPlan plan_step(bool hold_fresh);  // hold_fresh: rows without a token wait
  void plan_k(StepPlan& plan);
  // Blocks (actors/scheduler/scheduler_blocks.cpp, actors/scheduler/block_pool.h).
  struct Hits {
    BlockTable target, draft;  // cached blocks of a newcomer's prefix in each store
  };
  struct Admission {
    int64_t target = 0, draft = 0;  // blocks a newcomer takes that no sequence holds now
  };
  struct SlotBlocks {
    BlockTable target, draft;            // the live sequence's tables in each store
    BlockTable target_from, draft_from;  // cached blocks copied into them, held until copied
    BlockCopies pending;                 // those copies, until a job takes them
    uint64_t released = 0;               // when its last sequence left (what it caches is that old)
  };
  static int64_t row_blocks(const EngineConfig& c);
  void admit_newcomers();
  Hits hits(const std::vector<int64_t>& tokens) const;
  Admission admission(const Sequence& s) const;
  SlotRow slot_row(const Sequence& s) const;
  bool take_slot(Sequence& s);  // false: back in the queue
  // For a newcomer without its prefix in a free slot's row: the lowest free slot whose first n
  // own blocks cache nothing, else the one whose sequence left longest ago; -1: none free.
  int64_t coldest_free_slot(int64_t n) const;
  void take_prefix(BlockPool& pool, const BlockTable& hit, int64_t slot, BlockTable& table, BlockTable& from,
                   std::vector<std::pair<int64_t, int64_t>>& copies);
  void hand_copies(const std::vector<SeqId>& ids, BlockCopies& into);  // to the job over ids
  void copied(const std::vector<SeqId>& ids);  // a job over ids returned: its copies are done
  void publish(const Sequence& s);  // its full stored blocks into the cache (others may share them)
  void release(const Sequence& s, bool failed) override;  // its full blocks cached, its slot freed
  // A sequence's tables given back, their full blocks among what it stored cached (tokens: its
  // tokens, empty to cache nothing).
  void give_back(BlockTable& target, BlockTable& draft, const Sequence& s, const std::vector<int64_t>& tokens);
  int64_t draft_held(const Sequence& s) const;  // positions the draft's store holds
  void requeue(Sequence& s);  // back to the queue, its blocks released
  std::vector<SeqId> secure(const std::vector<SeqId>& ids);
  bool make_room(Sequence& s, const std::vector<SeqId>& keep);
  // Moves the step's rows into consecutive slots where that is possible (actors/scheduler/slot_moves.h).
  void plan_moves(StepPlan& p);
  bool viewed(const StepPlan& p) const;
  static std::vector<int64_t> slots_of(const StepPlan& p);
  void stored(Sequence& s, int64_t stored);
  // Where a sequence's drafts come from: its prediction, else the server's proposer.
  Proposer proposer_of(const Sequence& s) const;
  // Each row's proposal without the draft model into p.proposed (cleared when no row has one);
  // returns the longest.
  int64_t propose(StepPlan& p) const;
  // Adaptive K: predictions priced by what predictions got, and without the draft model each
  // row's drafts capped by its proposal.
  void outlook_proposals(const StepPlan& p, BatchOutlook& o) const;
  // What the step tells about each row's drafts (InFlight::row_k, proposers).
  void note_proposals(const StepPlan& p, InFlight& f) const;

  SlotTable slots_;
  BlockPool target_blocks_, draft_blocks_;  // which blocks of each store hold what
  std::vector<SlotBlocks> tables_;          // by slot
  uint64_t releases_ = 0;
  bool last_was_prefill_ = false;  // prefill chunks and decode steps take turns
};

}  // namespace exspec
