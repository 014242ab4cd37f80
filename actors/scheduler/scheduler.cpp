// The Scheduler's plans and their outcomes: the window's newcomers take their slots (their
// blocks: the BlockManager); prompts are stored in chunks of `prefill_chunk` positions, one chunk
// between two decode steps, so a long prompt holds the running sequences up for one chunk's
// forward at a time; a step takes B stored members, neighbours in slot order around the least
// recently stepped one, with K from the draft-length policy and the rows' own proposals. The
// jobs are actors/jobs/inplace_jobs.cpp.
#include "actors/scheduler/scheduler.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <unordered_map>

#include "actors/scheduler/inplace_turn.h"
#include "actors/scheduler/step_trace.h"
#include "model/constrained.h"

namespace exspec {
namespace {

// A chosen row's tokens made ahead (null: none made for it).
std::vector<int64_t>* made_tokens(PlannedStep& made, SeqId id) {
  const std::vector<SeqId>& ids = made.choice.step_rows;
  const auto it = std::find(ids.begin(), ids.end(), id);
  return it == ids.end() ? nullptr : &made.tokens[static_cast<size_t>(it - ids.begin())];
}

}  // namespace

Scheduler::Scheduler(EngineConfig config, std::shared_ptr<DraftLengthPolicy> policy, int max_in_flight)
    : Planner(config, std::move(policy), max_in_flight), blocks_(config) {
  if (config.mode != Mode::InPlace) throw std::invalid_argument("Scheduler: the paper's modes are PaperScheduler's");
}

Work Scheduler::plan() {
  if (full()) return {};
  const auto t0 = std::chrono::steady_clock::now();
  decide_draft_prefill(admit_newcomers());
  const WindowState w = window_state();
  std::optional<PlannedStep> made = take_ahead(w);
  const Choice c = made ? made->choice : choose(w);  // the rule: actors/scheduler/plan_ahead.h
  Work out;
  for (Piece piece : c.order) {
    if (piece == Piece::Chunk) {
      PrefillPlan p = plan_prefill();
      if (p.ids.empty()) continue;
      last_was_prefill_ = true;
      out = std::move(p);
      break;
    }
    StepPlan s = plan_step(c.step_rows, made ? &*made : nullptr);
    if (s.ids.empty()) continue;
    last_was_prefill_ = false;
    steps_out_.emplace_back(s.serial, s.ids);
    out = std::move(s);
    break;
  }
  if (out.index() != 0) stats_.plan_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

// Queued sequences join the window while the stores have blocks for their tokens and first
// steps beside one block for each live sequence's next step, and each takes its slot and blocks
// as it joins (BlockManager::allocate: the slot that holds its cached prefix, else the coldest;
// the window never exceeds the slots). The first that does not fit waits, and those behind it
// with it. Returns the newcomers, in window order.
std::vector<Sequence*> Scheduler::admit_newcomers() {
  StoreBlocks promised;
  const StoreBlocks free = blocks_.available();
  const int64_t reserve = static_cast<int64_t>(window_.members().size());
  std::unordered_map<SeqId, BlockManager::Allocation> taken;
  auto fits = [&](const Sequence& s) {
    const std::vector<int64_t> tokens = s.tokens();
    const StoreBlocks a = blocks_.admission(tokens, largest_k(config_));
    if (a.target + promised.target + reserve > free.target) return false;
    if (config_.draft && a.draft + promised.draft + reserve > free.draft) return false;
    std::optional<BlockManager::Allocation> got = blocks_.allocate(tokens, /*use_cache=*/!s.scoring());
    if (!got) return false;  // a newcomer before it took blocks it had counted on
    promised.target += a.target, promised.draft += a.draft;
    taken[s.id] = *got;
    return true;
  };
  std::vector<Sequence*> newcomers;
  for (SeqId id : window_.refill(pool_, fits)) {
    Sequence& s = pool_.at(id);
    const BlockManager::Allocation& a = taken.at(id);
    s.slot = a.slot;
    stats_.prefix_copied += a.copied;
    if (trace_enabled()) trace_slot(s.slot, s.length(), a.cached.target, a.cached.draft);
    stored(s, a.cached);
    newcomers.push_back(&s);
  }
  return newcomers;
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
    s->draft_prefill = pays && s->stored.draft == s->stored.target;
    stats_.prefix_queried += before_pending;
    stats_.prefix_hit += s->stored.target;
  }
}

// Every member still storing its prompt, in window order: the model's chunk rule
// (prefill_chunk in model/inplace.h) takes the first and whichever fit the budget beside it.
// A chunk's rows either all go through the draft too or none do (the draft's chunk rule must
// see the target's lengths). A row that scores its prompt (echo) has a chunk of its own: the
// logits of every position it stores are then one row's, a chunk's worth at most.
PrefillPlan Scheduler::plan_prefill() {
  PrefillPlan p;
  p.chunk = config_.prefill_chunk;
  for (SeqId id : window_.members()) {
    Sequence& s = pool_.at(id);
    if (s.in_job() || s.state != SeqState::Prefilling) continue;
    const int64_t top = s.scoring() ? s.request.prompt_logprobs : -1;
    if (!p.ids.empty() && (s.draft_prefill != p.with_draft || top >= 0)) continue;
    p.with_draft = s.draft_prefill;
    p.prompt_logprobs = top;
    p.ids.push_back(id);
    p.rows.push_back(slot_row(s));
    if (top >= 0 || static_cast<int64_t>(p.ids.size()) >= p.chunk) break;  // each row stores >= 1 position
  }
  if (p.ids.empty()) return p;
  for (SeqId id : p.ids) p.copies.append(blocks_.take_copies(pool_.at(id).slot));
  InFlight f;
  f.prefill = true;
  p.serial = start(p.ids, f);
  prefilling_ = true;
  return p;
}

StepPlan Scheduler::plan_step(const std::vector<SeqId>& chosen, PlannedStep* made) {
  StepPlan p;
  if (chosen.empty()) return p;
  p.ids = secure(chosen);
  if (p.ids.empty()) return p;
  for (SeqId id : p.ids) {
    const Sequence& s = pool_.at(id);
    p.rows.push_back(slot_row(s, made ? made_tokens(*made, id) : nullptr));
    p.copies.append(blocks_.take_copies(s.slot));  // before the moves: copied in that order
  }
  if (config_.slot_moves) plan_moves(p);
  if (!blocks_.viewed(p.rows)) ++stats_.gathered_steps;  // counted when planned: a failed step too
  plan_k(p);
  InFlight f;
  f.k = p.k;
  f.shape = p.shape;
  note_proposals(p, f);
  p.serial = start(p.ids, f);
  return p;
}

// Where the stores lack blocks for a row, the newest sequence that is not in a job and not
// already secured for this step goes back to the queue; a row that still finds none sits the
// step out.
std::vector<SeqId> Scheduler::secure(const std::vector<SeqId>& ids) {
  std::vector<SeqId> oldest_first = ids, kept;
  std::sort(oldest_first.begin(), oldest_first.end());
  for (SeqId id : oldest_first) {
    Sequence& s = pool_.at(id);
    if (s.slot >= 0 && make_room(s, kept)) kept.push_back(id);  // slot -1: pre-empted for an older row
  }
  std::vector<SeqId> out;
  for (SeqId id : ids)
    if (std::count(kept.begin(), kept.end(), id)) out.push_back(id);
  return out;
}

// Blocks for what its step may write: K + 1 positions past its tokens, in each store.
bool Scheduler::make_room(Sequence& s, const std::vector<SeqId>& keep) {
  const int64_t need = s.length() + largest_k(config_);
  while (!blocks_.can_reserve(s.slot, need)) {
    Sequence* victim = nullptr;
    for (SeqId id : window_.members()) {
      Sequence& v = pool_.at(id);
      if (v.in_job() || v.slot < 0 || id == s.id || std::count(keep.begin(), keep.end(), id)) continue;
      if (!victim || id > victim->id) victim = &v;
    }
    if (!victim) return false;
    preempt(*victim);
    ++stats_.preemptions;
  }
  blocks_.reserve(s.slot, need);
  return true;
}

// It keeps its tokens, and its blocks stay cached for its return, so the recompute is often a
// cache hit.
void Scheduler::preempt(Sequence& s) {
  release(s, false);
  window_.remove(s.id);
  s.slot = -1, s.stored = {};
  s.draft_prefill = false;
  pool_.preempt(s.id);
}

// K for a step over p.ids (the policy's choice for these rows, or 0 without one) and the rows'
// sampling state. Rows may bring proposals of their own (actors/scheduler/proposer.h): without a draft
// model each row's drafts end where its proposal ends, and a step where no row has one is a
// plain step. Forming the batch copies nothing, so the policy prices it as reused.
void Scheduler::plan_k(StepPlan& p) {
  const int64_t rows = static_cast<int64_t>(p.ids.size());
  p.sampling = sampling_rows(pool_, p.ids);
  p.k = 0;
  p.shape = StepShape{rows, 0, 0, 0, /*reused=*/true};
  const int64_t longest = propose(p);
  if (!policy_) {
    // Predictions where nothing else drafts: verified as far as the longest reaches.
    p.k = std::min(longest, config_.max_draft_tokens);
    p.shape.k = p.k;
  } else if (config_.draft || longest > 0) {
    BatchOutlook o = policy_->outlook(pool_, p.ids);
    outlook_proposals(p, o);
    p.k = policy_->choose(o.rows, o.context, true, o.lag).k;
    if (!config_.draft) p.k = std::min(p.k, longest);
    if (trace_enabled()) trace_choice(*policy_, o, true, p.k);
    p.shape = StepShape{rows, p.k, o.context, o.lag, true};
  }
  p.by_model = p.k > 0 && config_.draft;
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
    f.forced.push_back(p.proposers[i] == Proposer::Grammar ? p.proposed[i] : std::vector<int64_t>{});
    // Without the draft model a row's drafts end where its proposal does (then filler).
    const bool filled = p.by_model || p.proposed.empty();
    f.row_k.push_back(filled ? p.k : std::min(p.k, static_cast<int64_t>(p.proposed[i].size())));
    if (p.proposers[i] == Proposer::Grammar)
      grammar_step_stats().forced_proposed.fetch_add(
          static_cast<uint64_t>(std::min(p.k, static_cast<int64_t>(p.proposed[i].size()))), std::memory_order_relaxed);
  }
}

void Scheduler::plan_moves(StepPlan& p) {
  p.moves = blocks_.plan_moves(p.rows);
  stats_.slot_moves += static_cast<int64_t>(p.moves.size());
  std::vector<size_t> order(p.ids.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
    pool_.at(p.ids[i]).slot = p.rows[i].slot;
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p.rows[a].slot < p.rows[b].slot; });
  std::vector<SeqId> ids;
  std::vector<SlotRow> rows;
  for (size_t i : order) ids.push_back(p.ids[i]), rows.push_back(std::move(p.rows[i]));
  p.ids = std::move(ids), p.rows = std::move(rows);
}

SlotRow Scheduler::slot_row(const Sequence& s, std::vector<int64_t>* made) const {
  SlotRow r;
  r.slot = s.slot;
  if (made && catch_up(*made, s)) r.tokens = std::move(*made);
  else r.tokens = s.tokens();
  r.target_len = s.stored.target;
  r.draft_len = s.stored.draft;
  r.target_blocks = blocks_.target_table(s.slot);
  r.draft_blocks = blocks_.draft_table(s.slot);
  return r;
}

// What each store holds of it now; it runs once the target's holds every token but pending (at
// once for a one-token prompt, or a prompt found whole in the cache).
void Scheduler::stored(Sequence& s, Stored stored) {
  s.stored = stored;
  if (stored.target == s.length() - 1) s.state = SeqState::Running;
}

void Scheduler::publish(const Sequence& s) {
  if (s.slot >= 0) blocks_.publish(s.slot, s.tokens(), s.stored);
}

// What an ending sequence leaves: its full blocks to the cache (the target's stored positions,
// at most its tokens: a step may have stored committed tokens past its EOS; the draft's held
// ones), nothing after a failure; its slot.
void Scheduler::release(const Sequence& s, bool failed) {
  if (s.slot < 0) return;  // never took one
  if (!failed) publish(s);
  blocks_.free(s.slot);
}

void Scheduler::copied(const std::vector<SeqId>& ids) {
  for (SeqId id : ids)
    if (pool_.at(id).slot >= 0) blocks_.copied(pool_.at(id).slot);
}

void Scheduler::prefilled(PrefillOutcome o) {
  const std::vector<SeqId> ids = prefill_done(o);
  copied(ids);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!prefill_row(ids[i], o)) continue;
    Sequence& s = pool_.at(ids[i]);
    if (!o.prompt_logprobs.empty()) scored(s, o.prompt_logprobs[i], static_cast<size_t>(s.stored.target));
    stored(s, o.stored[i]);
    publish(s);
    if (s.state == SeqState::Running) goes_on(s);
  }
}

void Scheduler::complete(StepOutcome o) {
  if (ahead_ && ahead_->after == o.serial) ahead_->back = true;
  for (auto it = steps_out_.begin(); it != steps_out_.end(); ++it)
    if (it->first == o.serial) {
      steps_out_.erase(it);
      break;
    }
  const InFlight f = step_done(o);
  copied(f.ids);
  for (size_t b = 0; b < f.ids.size(); ++b) {
    Sequence& s = pool_.at(f.ids[b]);
    if (o.error.empty() && !s.cancel) s.stored = o.stored.at(b);  // what the commit set
    if (write_row(f.ids[b], f, o, b)) publish(pool_.at(f.ids[b]));
  }
  ++step_;
}

}  // namespace exspec
