// The Scheduler's blocks (actors/scheduler/block_pool.h): a newcomer takes a slot and the cached blocks of
// its longest cached prefix (blocks others stored: full ones are published after every job),
// then blocks for the rest of its prompt; a step's rows get the blocks
// their step may write first, and when the stores have too few a newer sequence goes back to the
// queue (pre-empted: it keeps its tokens, and its blocks stay cached for its return, so the
// recompute is often a cache hit); an ending sequence leaves its full blocks to the cache.
#include <algorithm>
#include <stdexcept>

#include "actors/scheduler/scheduler.h"
#include "actors/scheduler/slot_moves.h"
#include "actors/scheduler/step_trace.h"

namespace exspec {

// Blocks of each slot's own row: the resolved geometry (fit_store), else a whole context.
int64_t Scheduler::row_blocks(const EngineConfig& c) {
  constexpr int64_t kUnsizedContext = 4096;  // a Scheduler built without fit_store (unit tests)
  const int64_t positions = c.slot_positions > 0 ? c.slot_positions
                                                 : (c.context > 0 ? c.context : kUnsizedContext) + largest_k(c);
  return (positions + c.block_size - 1) / c.block_size;
}

SlotRow Scheduler::slot_row(const Sequence& s) const {
  SlotRow r;
  r.slot = s.slot;
  r.tokens = s.tokens();
  r.target_len = s.stored;
  r.draft_len = r.before_pending() - s.draft_lag;
  r.target_blocks = tables_.at(static_cast<size_t>(s.slot)).target;
  r.draft_blocks = tables_[static_cast<size_t>(s.slot)].draft;
  return r;
}

// The cached blocks of the longest prefix of these tokens before the pending one, in each store:
// the draft's at most the target's.
Scheduler::Hits Scheduler::hits(const std::vector<int64_t>& tokens) const {
  Hits h;
  h.target = target_blocks_.match(tokens, static_cast<int64_t>(tokens.size()) - 1);
  if (config_.draft) h.draft = draft_blocks_.match(tokens, static_cast<int64_t>(h.target.size()) * config_.block_size);
  return h;
}

Scheduler::Admission Scheduler::admission(const Sequence& s) const {
  const int64_t need = s.length() + largest_k(config_);  // its prompt and its first step
  const Hits h = hits(s.tokens());
  Admission a;
  a.target = target_blocks_.blocks_for(need) - static_cast<int64_t>(h.target.size()) + target_blocks_.unheld(h.target);
  if (config_.draft)
    a.draft = draft_blocks_.blocks_for(need) - static_cast<int64_t>(h.draft.size()) + draft_blocks_.unheld(h.draft);
  return a;
}

// A newcomer's slot: the free one whose row holds the first block of its cached prefix (its keys
// are then read as a view); else the coldest free one (what it caches is what this newcomer
// evicts; a prefix cached elsewhere is copied into it when it caches nothing: take_prefix). It
// takes the cached blocks, and blocks for the rest of its prompt; what the draft's cache
// lacks of the prompt is its lag. False (the sequence is back in the queue) when the blocks ran
// out after all: a newcomer admitted with it took blocks this one had counted on.
bool Scheduler::take_slot(Sequence& s) {
  const int64_t before_pending = s.length() - 1, bs = config_.block_size;
  const Hits h = hits(s.tokens());
  const BlockTable &hit = h.target, &dhit = h.draft;
  int64_t preferred = hit.empty() ? -1 : hit[0] / target_blocks_.blocks_per_slot();
  if (preferred >= 0 && (hit[0] != target_blocks_.home(preferred, 0) || slots_.in_use(preferred))) preferred = -1;
  if (preferred < 0) preferred = coldest_free_slot(target_blocks_.blocks_for(before_pending));
  s.slot = slots_.acquire(preferred);
  if (s.slot < 0) throw std::logic_error("Scheduler: a window member found no free slot");
  SlotBlocks& t = tables_[static_cast<size_t>(s.slot)];
  take_prefix(target_blocks_, hit, s.slot, t.target, t.target_from, t.pending.target);
  take_prefix(draft_blocks_, dhit, s.slot, t.draft, t.draft_from, t.pending.draft);
  const bool room = target_blocks_.grow(t.target, s.slot, before_pending) &&
                    (!config_.draft || draft_blocks_.grow(t.draft, s.slot, before_pending));
  if (!room) {  // nothing is stored yet: the release below must cache none of these blocks
    s.stored = 0, s.draft_lag = before_pending;
    requeue(s);
    return false;
  }
  const int64_t target = static_cast<int64_t>(hit.size()) * bs, draft = static_cast<int64_t>(dhit.size()) * bs;
  if (trace_enabled()) trace_slot(s.slot, before_pending + 1, target, draft);
  stored(s, target);
  s.draft_lag = before_pending - draft;
  return true;
}

int64_t Scheduler::coldest_free_slot(int64_t n) const {
  int64_t coldest = -1;
  for (int64_t c = 0; c < slots_.slots(); ++c) {
    if (slots_.in_use(c)) continue;
    if (target_blocks_.home_clean(c, std::min(n, target_blocks_.blocks_per_slot()))) return c;
    if (coldest < 0 || tables_[static_cast<size_t>(c)].released < tables_[static_cast<size_t>(coldest)].released) coldest = c;
  }
  return coldest;
}

// A cached prefix into a newcomer's table: as it is when it lies in the slot's own blocks;
// copied into them when they are free and cache nothing (the copy, a read of the prefix once, is
// the next job's, and the cached blocks are held until it returns), so that attention never
// gathers this row; shared otherwise (its keys then gathered at every forward).
void Scheduler::take_prefix(BlockPool& pool, const BlockTable& hit, int64_t slot, BlockTable& table, BlockTable& from,
                            std::vector<std::pair<int64_t, int64_t>>& copies) {
  const int64_t n = static_cast<int64_t>(hit.size());
  // (A clean home holds none of the cached blocks it would copy.)
  const bool own = n > 0 && !pool.at_home(hit, slot) && pool.home_clean(slot, n);
  if (!own) return pool.take(table, hit);
  pool.take(from, hit);
  table = pool.take_home(slot, n);
  for (int64_t i = 0; i < n; ++i) copies.emplace_back(hit[i], table[i]);
  stats_.prefix_copied += n;
}

void Scheduler::hand_copies(const std::vector<SeqId>& ids, BlockCopies& into) {
  for (SeqId id : ids) {
    SlotBlocks& t = tables_.at(static_cast<size_t>(pool_.at(id).slot));
    into.append(t.pending);
    t.pending = {};
  }
}

void Scheduler::copied(const std::vector<SeqId>& ids) {
  for (SeqId id : ids) {
    const Sequence& s = pool_.at(id);
    if (s.slot < 0) continue;
    SlotBlocks& t = tables_[static_cast<size_t>(s.slot)];
    if (!t.pending.empty()) continue;  // no job took them yet
    target_blocks_.release(t.target_from, {}, 0);
    draft_blocks_.release(t.draft_from, {}, 0);
  }
}

void Scheduler::publish(const Sequence& s) {
  if (s.slot < 0) return;
  const SlotBlocks& t = tables_[static_cast<size_t>(s.slot)];
  const std::vector<int64_t> tokens = s.tokens();
  target_blocks_.publish(t.target, tokens, s.stored);
  draft_blocks_.publish(t.draft, tokens, draft_held(s));
}

// What an ending sequence leaves: its full blocks to the cache (the target's stored positions,
// at most its tokens: a step may have stored committed tokens past its EOS; the draft's held
// ones), nothing after a failure; its slot.
void Scheduler::release(const Sequence& s, bool failed) {
  if (s.slot < 0) return;  // never took one
  SlotBlocks& t = tables_.at(static_cast<size_t>(s.slot));
  give_back(t.target, t.draft, s, failed ? std::vector<int64_t>{} : s.tokens());
  target_blocks_.release(t.target_from, {}, 0);
  draft_blocks_.release(t.draft_from, {}, 0);
  t.pending = {};
  t.released = ++releases_;
  slots_.release(s.slot);
}

void Scheduler::give_back(BlockTable& target, BlockTable& draft, const Sequence& s, const std::vector<int64_t>& tokens) {
  target_blocks_.release(target, tokens, s.stored);
  draft_blocks_.release(draft, tokens, draft_held(s));
}

int64_t Scheduler::draft_held(const Sequence& s) const {
  return config_.draft ? std::max<int64_t>(0, s.length() - 1 - s.draft_lag) : 0;
}

void Scheduler::requeue(Sequence& s) {
  release(s, false);
  window_.remove(s.id);
  s.slot = -1, s.stored = 0, s.draft_lag = 0;
  s.draft_prefill = false;
  s.preempted = true;  // its dequeue was counted once
  pool_.requeue(s.id);
}

// The step's rows, oldest first, each with blocks for what the step may write (K + 1 positions
// past its tokens, in each store). Where the stores lack them, the newest sequence that is not
// in a job and not already secured for this step goes back to the queue; a row that still finds
// none sits the step out. Returns the rows kept, in the given order.
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

bool Scheduler::make_room(Sequence& s, const std::vector<SeqId>& keep) {
  const int64_t need = s.length() + largest_k(config_);
  SlotBlocks& t = tables_[static_cast<size_t>(s.slot)];
  auto short_of = [&](const BlockPool& pool, const BlockTable& table) {
    return pool.blocks_for(need) - static_cast<int64_t>(table.size()) > pool.available();
  };
  while (short_of(target_blocks_, t.target) || (config_.draft && short_of(draft_blocks_, t.draft))) {
    Sequence* victim = nullptr;
    for (SeqId id : window_.members()) {
      Sequence& v = pool_.at(id);
      if (v.busy || v.slot < 0 || id == s.id || std::count(keep.begin(), keep.end(), id)) continue;
      if (!victim || id > victim->id) victim = &v;
    }
    if (!victim) return false;
    requeue(*victim);
    ++stats_.preemptions;
  }
  target_blocks_.grow(t.target, s.slot, need);
  if (config_.draft) draft_blocks_.grow(t.draft, s.slot, need);
  return true;
}

// The moved rows take their new slots' own blocks now; the realigner copies their contents
// before the step's forwards (StepJob::assemble). The blocks they leave are released as an
// ending sequence's are (cached). Jobs reach the realigner in the order they are planned, so a
// later job that takes a left block writes it only after the copy has read it. A move whose new
// home blocks are held (borrowed by a long sequence) is left out.
void Scheduler::plan_moves(StepPlan& p) {
  std::vector<bool> taken(static_cast<size_t>(slots_.slots()));
  for (int64_t s = 0; s < slots_.slots(); ++s) taken[static_cast<size_t>(s)] = slots_.in_use(s);
  for (const RowMove& m : plan_row_moves(slots_of(p), taken)) {
    SlotRow& r = p.rows[m.row];
    Sequence& s = pool_.at(p.ids[m.row]);
    SlotBlocks& from = tables_[static_cast<size_t>(r.slot)];
    const int64_t nt = static_cast<int64_t>(from.target.size()), nd = static_cast<int64_t>(from.draft.size());
    if (!target_blocks_.home_free(m.to, nt) || !draft_blocks_.home_free(m.to, nd)) continue;
    SlotBlocks to{target_blocks_.take_home(m.to, nt), draft_blocks_.take_home(m.to, nd)};
    SlotMove mv{r.slot, m.to, {}, {}};
    for (int64_t i = 0; i < target_blocks_.blocks_for(s.stored); ++i) mv.target.emplace_back(from.target[i], to.target[i]);
    for (int64_t i = 0; i < draft_blocks_.blocks_for(draft_held(s)); ++i) mv.draft.emplace_back(from.draft[i], to.draft[i]);
    give_back(from.target, from.draft, s, s.tokens());
    tables_[static_cast<size_t>(m.to)] = std::move(to);
    slots_.move(r.slot, m.to);
    s.slot = r.slot = m.to;
    r.target_blocks = tables_[static_cast<size_t>(m.to)].target;
    r.draft_blocks = tables_[static_cast<size_t>(m.to)].draft;
    p.moves.push_back(std::move(mv));
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

// Whether attention reads the step's keys as one view: consecutive slots, each row in its own.
bool Scheduler::viewed(const StepPlan& p) const {
  if (!consecutive(slots_of(p))) return false;
  return std::all_of(p.rows.begin(), p.rows.end(), [&](const SlotRow& r) { return target_blocks_.at_home(r.target_blocks, r.slot); });
}

BlockCounts Scheduler::blocks() const {
  return {target_blocks_.blocks(), target_blocks_.held(), target_blocks_.cached()};
}

}  // namespace exspec
