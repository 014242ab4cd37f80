// The Scheduler's plans: the window's newcomers take their slots; prompts are stored in chunks of
// `prefill_chunk` positions, one chunk between two decode steps, so a long prompt holds the
// running sequences up for one chunk's forward at a time; a step takes B stored members,
// neighbours in slot order around the least recently stepped one.
#include <algorithm>

#include "actors/inplace_turn.h"
#include "actors/slot_moves.h"
#include "actors/scheduler.h"
#include "actors/step_trace.h"

namespace exspec {

// The target's slot holds `stored` positions; the sequence decodes once that is every token but
// pending (at once for a one-token prompt).
void Scheduler::stored(Sequence& s, int64_t stored) {
  s.stored = stored;
  if (stored == s.length() - 1) s.state = SeqState::Decoding;
}

SlotRow Scheduler::slot_row(const Sequence& s) const {
  SlotRow r;
  r.slot = s.slot;
  r.tokens = s.tokens();
  r.target_len = s.stored;
  r.draft_len = r.before_pending() - s.draft_lag;
  return r;
}

// A newcomer's slot: a free one that holds the longest prefix of its prompt (it then stores only
// the rest), else the lowest free one (model/slot_table.h). What the draft's slot lacks of the
// prompt is its lag.
void Scheduler::take_slot(Sequence& s) {
  const std::vector<int64_t>& prompt = s.request.prompt;
  const int64_t before_pending = static_cast<int64_t>(prompt.size()) - 1;
  const SlotReuse r = slots_.acquire(prompt, config_.prefix_cache ? before_pending : 0);
  if (r.slot < 0) throw std::logic_error("Scheduler: a window member found no free slot");
  s.slot = r.slot;
  if (trace_enabled()) trace_slot(r.slot, before_pending + 1, r.target, r.draft);
  stored(s, r.target);
  s.draft_lag = before_pending - (config_.draft ? r.draft : 0);
}

// What an ending sequence's slot keeps for the next one: the tokens whose keys and values it
// holds (the target's stored positions, at most the sequence's tokens: a step may have stored
// committed tokens past its EOS), and how many of them the draft's holds. Nothing after a failure.
void Scheduler::release(const Sequence& s, bool failed) {
  if (s.slot < 0) return;  // never took one
  if (failed) return slots_.release(s.slot);
  slots_.release(s.slot, held_tokens(s), draft_held(s));
}

std::vector<int64_t> Scheduler::held_tokens(const Sequence& s) const {
  if (!config_.prefix_cache) return {};  // nothing reusable: the slot table keeps no prefix
  std::vector<int64_t> tokens = s.tokens();
  tokens.resize(static_cast<size_t>(std::clamp<int64_t>(s.stored, 0, s.length())));
  return tokens;
}

int64_t Scheduler::draft_held(const Sequence& s) const {
  return config_.draft ? std::max<int64_t>(0, s.length() - 1 - s.draft_lag) : 0;
}

// The moved rows take their new slots now; the realigner copies their contents before the
// step's forwards (StepJob::assemble). Jobs reach the realigner in the order they are planned,
// so a later job that takes a vacated slot writes it only after the copy has read it.
std::vector<int64_t> Scheduler::slots_of(const StepPlan& p) {
  std::vector<int64_t> slots;
  for (const SlotRow& r : p.rows) slots.push_back(r.slot);
  return slots;
}

void Scheduler::plan_moves(StepPlan& p) {
  std::vector<bool> taken(static_cast<size_t>(slots_.slots()));
  for (int64_t s = 0; s < slots_.slots(); ++s) taken[static_cast<size_t>(s)] = slots_.in_use(s);
  for (const RowMove& m : plan_row_moves(slots_of(p), taken)) {
    SlotRow& r = p.rows[m.row];
    Sequence& s = pool_.at(p.ids[m.row]);
    p.moves.push_back(SlotMove{r.slot, m.to, r.target_len, draft_held(s)});
    slots_.move(r.slot, m.to, held_tokens(s), draft_held(s));
    s.slot = r.slot = m.to;
  }
  stats_.slot_moves += static_cast<int64_t>(p.moves.size());
  std::vector<size_t> order(p.ids.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p.rows[a].slot < p.rows[b].slot; });
  std::vector<SeqId> ids;
  std::vector<SlotRow> rows;
  for (size_t i : order) ids.push_back(p.ids[i]), rows.push_back(std::move(p.rows[i]));
  p.ids = std::move(ids), p.rows = std::move(rows);
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
  dequeued_ += window_.refill(pool_).size();
  WindowFacts f;
  f.chunk_in_flight = prefilling_;
  f.last_was_chunk = last_was_prefill_;
  bool storing = false;                // a member's prompt is not stored yet (in a chunk, or due)
  std::vector<const Sequence*> fresh;  // no token yet: ready or still storing
  std::vector<Sequence*> newcomers;
  for (SeqId id : window_.members()) {
    Sequence& s = pool_.at(id);
    if (s.slot >= 0) continue;
    take_slot(s);  // a newcomer (the window never exceeds the slots)
    newcomers.push_back(&s);
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
    const int64_t before_pending = static_cast<int64_t>(s->request.prompt.size()) - 1;
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
  p.ids.assign(ready.begin() + static_cast<std::ptrdiff_t>(first), ready.begin() + static_cast<std::ptrdiff_t>(first + take));
  for (SeqId id : p.ids) p.rows.push_back(slot_row(pool_.at(id)));
  if (config_.slot_moves) plan_moves(p);
  if (!consecutive(slots_of(p))) ++stats_.gathered_steps;  // counted when planned: a failed step too
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
  for (size_t i = 0; i < p.ids.size(); ++i) {
    const Sequence& s = pool_.at(p.ids[i]);
    const Proposer by = proposer_of(s);
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
    if (proposer_of(s) == Proposer::Prediction)
      o.rows[i].acceptance = policy_->outlook(s.acceptance, o.rows[i].remaining,
                                              temperature_band(s.request.sampling.temperature), true).acceptance;
    // Without the draft model a row's drafts end where its proposal does.
    if (!config_.draft) o.rows[i].limit = p.proposed.empty() ? 0 : static_cast<int64_t>(p.proposed[i].size());
  }
}

void Scheduler::note_proposals(const StepPlan& p, InFlight& f) const {
  for (size_t i = 0; i < p.ids.size(); ++i) {
    f.proposers.push_back(proposer_of(pool_.at(p.ids[i])));
    // Without the draft model a row's drafts end where its proposal does (then filler).
    const bool filled = p.by_model || p.proposed.empty();
    f.row_k.push_back(filled ? p.k : std::min(p.k, static_cast<int64_t>(p.proposed[i].size())));
  }
}

}  // namespace exspec
