// The Scheduler's plans: the window's newcomers take their slots (their blocks:
// actors/scheduler_blocks.cpp); prompts are stored in chunks of
// `prefill_chunk` positions, one chunk between two decode steps, so a long prompt holds the
// running sequences up for one chunk's forward at a time; a step takes B stored members,
// neighbours in slot order around the least recently stepped one.
#include <algorithm>

#include "actors/inplace_turn.h"
#include "actors/slot_moves.h"
#include "actors/scheduler.h"
#include "actors/step_trace.h"
#include "model/constrained.h"

namespace exspec {

// The target's slot holds `stored` positions; the sequence decodes once that is every token but
// pending (at once for a one-token prompt).
void Scheduler::stored(Sequence& s, int64_t stored) {
  s.stored = stored;
  if (stored == s.length() - 1) s.state = SeqState::Decoding;
}

// The step's slots, in row order.
std::vector<int64_t> Scheduler::slots_of(const StepPlan& p) {
  std::vector<int64_t> slots;
  for (const SlotRow& r : p.rows) slots.push_back(r.slot);
  return slots;
}

// Waiting sequences join the window while the stores have blocks for their prompts and first
// steps beside one block for each live sequence's next step (model/block_pool.h); the first that
// does not fit waits, and those behind it with it.
void Scheduler::admit_newcomers() {
  Admission promised;
  const int64_t reserve = static_cast<int64_t>(window_.members().size());
  auto fits = [&](const Sequence& s) {
    const Admission a = admission(s);
    if (a.target + promised.target + reserve > target_blocks_.available()) return false;
    if (config_.draft && a.draft + promised.draft + reserve > draft_blocks_.available()) return false;
    promised.target += a.target, promised.draft += a.draft;
    return true;
  };
  for (SeqId id : window_.refill(pool_, fits)) left_queue(pool_.at(id));
}

bool Scheduler::first_block_stored(std::vector<const Sequence*> fresh) const {
  std::sort(fresh.begin(), fresh.end(), [](const Sequence* a, const Sequence* b) { return a->slot < b->slot; });
  const size_t n = std::min(fresh.size(), static_cast<size_t>(config_.batch_size));
  for (size_t i = 0; i < n; ++i)
    if (fresh[i]->busy || fresh[i]->state != SeqState::Decoding) return false;
  return true;
}

Work Scheduler::plan() {
  if (full()) return {};
  admit_newcomers();
  WindowFacts f;
  f.chunk_in_flight = prefilling_;
  f.last_was_chunk = last_was_prefill_;
  bool storing = false;                // a member's prompt is not stored yet (in a chunk, or due)
  std::vector<const Sequence*> fresh;  // no token yet: ready or still storing
  std::vector<Sequence*> newcomers;
  for (SeqId id : std::vector<SeqId>(window_.members())) {
    Sequence& s = pool_.at(id);
    if (s.slot >= 0) continue;
    if (take_slot(s)) newcomers.push_back(&s);  // a newcomer (the window never exceeds the slots)
  }
  decide_draft_prefill(newcomers);
  for (SeqId id : window_.members()) {
    const Sequence& s = pool_.at(id);
    const bool stored = s.state == SeqState::Decoding;
    storing = storing || !stored;
    if (s.generated.empty()) fresh.push_back(&s);
    if (s.busy) continue;
    f.chunk_due = f.chunk_due || !stored;
    f.decoding = f.decoding || (stored && !s.generated.empty());
  }
  f.hold_fresh = storing && !first_block_stored(fresh);
  for (Piece piece : turn_order(f)) {  // the rule: actors/inplace_turn.h
    if (piece == Piece::Chunk) {
      PrefillPlan p = plan_prefill();
      if (p.ids.empty()) continue;
      last_was_prefill_ = true;
      return p;
    }
    StepPlan s = plan_step(f.hold_fresh);
    if (s.ids.empty()) continue;
    last_was_prefill_ = false;
    return s;
  }
  return {};
}

// Whether the draft stores the prompts of the sequences that took their slots together: one
// answer for all of them (drafting_pays, at their mean prompt and max_tokens). They step
// together, and a step catches up its longest lag first, so a block split between stored and
// unstored prompts would pay the draft's prefill and then not draft anyway.
void Scheduler::decide_draft_prefill(const std::vector<Sequence*>& newcomers) {
  if (newcomers.empty()) return;
  int64_t prompt = 0, max_tokens = 0;
  for (const Sequence* s : newcomers)
    prompt += static_cast<int64_t>(s->request.prompt.size()), max_tokens += s->request.max_tokens;
  const int64_t n = static_cast<int64_t>(newcomers.size());
  const bool pays = config_.draft && policy_ && policy_->drafting_pays(config_.batch_size, prompt / n, max_tokens / n);
  for (Sequence* s : newcomers) {
    // The draft's prompt chunks follow the target's, from the same count: where its slot held
    // less of the prompt than the target's (prefix cache), it catches the rest up when it first
    // drafts instead, and the target keeps what it held.
    const int64_t before_pending = s->length() - 1;  // a pre-empted one's tokens are its prompt now
    s->draft_prefill = pays && before_pending - s->draft_lag == s->stored;
    stats_.prefix_queried += before_pending;
    stats_.prefix_hit += s->stored;
  }
}

// Every member still storing its prompt, in window order: the model's chunk rule
// (prefill_chunk in model/inplace.h) takes the first and whichever fit the budget beside it.
// A chunk's rows either all go through the draft too or none do (the draft's chunk rule must
// see the target's lengths).
PrefillPlan Scheduler::plan_prefill() {
  PrefillPlan p;
  p.chunk = config_.prefill_chunk;
  for (SeqId id : window_.members()) {
    Sequence& s = pool_.at(id);
    if (s.busy || s.state != SeqState::Prefilling) continue;
    if (!p.ids.empty() && s.draft_prefill != p.with_draft) continue;
    p.with_draft = s.draft_prefill;
    p.ids.push_back(id);
    p.rows.push_back(slot_row(s));
    if (static_cast<int64_t>(p.ids.size()) >= p.chunk) break;  // each row stores >= 1 position
  }
  if (p.ids.empty()) return p;
  hand_copies(p.ids, p.copies);
  InFlight f;
  f.prefill = true;
  p.serial = start(p.ids, f);
  prefilling_ = true;
  return p;
}

StepPlan Scheduler::plan_step(bool hold_fresh) {
  StepPlan p;
  std::vector<SeqId> ready;
  for (SeqId id : window_.members()) {
    const Sequence& s = pool_.at(id);
    if (!s.busy && s.state == SeqState::Decoding && !(hold_fresh && s.generated.empty())) ready.push_back(id);
  }
  if (ready.empty()) return p;
  // B ready rows, neighbours in slot order, around the least recently stepped one (the lowest
  // slot among equals): it is always in, so no row waits for long, and rows in consecutive
  // slots read their keys as a view, where a scattered set gathers them at every layer
  // (measured with decoder_bench --slots 1: docs/speculation.md).
  std::sort(ready.begin(), ready.end(), [&](SeqId a, SeqId b) { return pool_.at(a).slot < pool_.at(b).slot; });
  const size_t n = ready.size(), take = std::min(n, static_cast<size_t>(config_.batch_size));
  size_t oldest = 0;
  for (size_t i = 1; i < n; ++i)
    if (pool_.at(ready[i]).last_step < pool_.at(ready[oldest]).last_step) oldest = i;
  const size_t first = std::min(oldest, n - take);
  p.ids = secure({ready.begin() + static_cast<std::ptrdiff_t>(first), ready.begin() + static_cast<std::ptrdiff_t>(first + take)});
  if (p.ids.empty()) return p;
  for (SeqId id : p.ids) p.rows.push_back(slot_row(pool_.at(id)));
  hand_copies(p.ids, p.copies);  // before the moves: the realigner copies in that order
  if (config_.slot_moves) plan_moves(p);
  if (!viewed(p)) ++stats_.gathered_steps;  // counted when planned: a failed step too
  plan_k(p);
  InFlight f;
  f.k = p.k;
  f.shape = p.shape;
  note_proposals(p, f);
  p.serial = start(p.ids, f);
  return p;
}

Proposer Scheduler::proposer_of(const Sequence& s) const {
  if (!s.request.prediction.empty()) return Proposer::Prediction;
  return config_.speculate == Speculate::Ngram ? Proposer::Lookup : Proposer::Model;
}

int64_t Scheduler::propose(StepPlan& p) const {
  const int64_t k = largest_k(config_);
  int64_t longest = 0;
  p.proposed.assign(p.ids.size(), {});
  p.proposers.assign(p.ids.size(), Proposer::Model);
  for (size_t i = 0; i < p.ids.size(); ++i) {
    const Sequence& s = pool_.at(p.ids[i]);
    // What the grammar forces comes first: no model computes it, and the target accepts it
    // unless the model would split the text into other tokens.
    if (s.matcher) p.proposed[i] = forced_tokens(*s.matcher, k);
    if (!p.proposed[i].empty()) {
      p.proposers[i] = Proposer::Grammar;
      longest = std::max(longest, static_cast<int64_t>(p.proposed[i].size()));
      continue;
    }
    const Proposer by = p.proposers[i] = proposer_of(s);
    if (by == Proposer::Prediction) p.proposed[i] = propose_prediction(s.request.prediction, s.generated, k);
    else if (by == Proposer::Lookup) p.proposed[i] = propose_lookup(p.rows[i].tokens, k);
    longest = std::max(longest, static_cast<int64_t>(p.proposed[i].size()));
  }
  if (longest == 0) p.proposed.clear();
  return longest;
}

void Scheduler::outlook_proposals(const StepPlan& p, BatchOutlook& o) const {
  if (!config_.draft) o.lag = 0;  // no draft model: nothing to catch up
  for (size_t i = 0; i < p.ids.size(); ++i) {
    const Sequence& s = pool_.at(p.ids[i]);
    if (p.proposers[i] == Proposer::Prediction || p.proposers[i] == Proposer::Grammar)
      o.rows[i].acceptance = policy_->outlook(s.acceptance, o.rows[i].remaining,
                                              temperature_band(s.request.sampling.temperature), true).acceptance;
    // Without the draft model a row's drafts end where its proposal does.
    if (!config_.draft) o.rows[i].limit = p.proposed.empty() ? 0 : static_cast<int64_t>(p.proposed[i].size());
  }
}

void Scheduler::note_proposals(const StepPlan& p, InFlight& f) const {
  for (size_t i = 0; i < p.ids.size(); ++i) {
    f.proposers.push_back(p.proposers[i]);
    // Without the draft model a row's drafts end where its proposal does (then filler).
    const bool filled = p.by_model || p.proposed.empty();
    f.row_k.push_back(filled ? p.k : std::min(p.k, static_cast<int64_t>(p.proposed[i].size())));
    if (p.proposers[i] == Proposer::Grammar)
      grammar_step_stats().forced_proposed.fetch_add(
          static_cast<uint64_t>(std::min(p.k, static_cast<int64_t>(p.proposed[i].size()))), std::memory_order_relaxed);
  }
}

}  // namespace exspec
