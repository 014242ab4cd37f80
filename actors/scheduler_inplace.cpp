// The Scheduler's in-place mode (issue 18): continuous batching over the slots of the KV stores
// (model/kv_store.h, model/inplace.h). The window is the set of sequences holding a slot; a
// step is any B of its prefilled members, taken least recently stepped first: forming it copies
// nothing, so sequences join and leave between any two steps. Prompts are stored in chunks of
// `prefill_chunk` positions, one chunk between two decode steps, so a long prompt holds the
// running sequences up for one chunk's forward at a time.
#include <algorithm>

#include "actors/scheduler.h"

namespace exspec {

bool Scheduler::prefilled_in_place(const Sequence& s) const {
  return s.slot >= 0 && s.stored == static_cast<int64_t>(s.request.prompt.size()) - 1;
}

SlotRow Scheduler::slot_row(const Sequence& s) const {
  SlotRow r;
  r.slot = s.slot;
  r.tokens = s.request.prompt;
  r.tokens.insert(r.tokens.end(), s.generated.begin(), s.generated.end());
  const int64_t before_pending = static_cast<int64_t>(r.tokens.size()) - 1;
  r.target_len = prefilled_in_place(s) ? before_pending : s.stored;
  r.draft_len = before_pending - s.draft_lag;
  return r;
}

Work Scheduler::next_in_place() {
  dequeued_ += window_.refill(pool_).size();
  bool prefill_due = false;
  for (SeqId id : window_.members()) {
    Sequence& s = pool_.at(id);
    if (s.slot < 0) {  // a newcomer takes the lowest free slot (the window never exceeds the slots)
      s.slot = slots_.acquire();
      if (s.slot < 0) throw std::logic_error("Scheduler: a window member found no free slot");
      s.stored = 0;
      // The draft's slot is empty; with a draft it stores each prompt chunk with the target.
      s.draft_lag = static_cast<int64_t>(s.request.prompt.size()) - 1;
    }
    prefill_due = prefill_due || (!s.busy && !prefilled_in_place(s));
  }
  // A prefill chunk and a decode step take turns while both have work.
  if (prefill_due && !prefilling_ && !last_was_prefill_) {
    PrefillPlan p = plan_inplace_prefill();
    if (!p.ids.empty()) {
      last_was_prefill_ = true;
      return p;
    }
  }
  StepPlan s = plan_inplace_step();
  if (!s.ids.empty()) {
    last_was_prefill_ = false;
    return s;
  }
  if (prefill_due && !prefilling_) {
    PrefillPlan p = plan_inplace_prefill();
    if (!p.ids.empty()) {
      last_was_prefill_ = true;
      return p;
    }
  }
  return {};
}

// Every member still storing its prompt, in window order: the model's chunk rule
// (prefill_chunk in model/inplace.h) takes the first and whichever fit the budget beside it.
PrefillPlan Scheduler::plan_inplace_prefill() {
  PrefillPlan p;
  p.chunk = config_.prefill_chunk;
  p.with_draft = policy_ != nullptr;
  for (SeqId id : window_.members()) {
    const Sequence& s = pool_.at(id);
    if (s.busy || prefilled_in_place(s)) continue;
    p.ids.push_back(id);
    p.slot_rows.push_back(slot_row(s));
    if (static_cast<int64_t>(p.ids.size()) >= p.chunk) break;  // each row stores >= 1 position
  }
  if (p.ids.empty()) return p;
  InFlight f;
  f.prefill = true;
  f.in_place = true;
  p.serial = start(p.ids, f);
  prefilling_ = true;
  return p;
}

StepPlan Scheduler::plan_inplace_step() {
  StepPlan p;
  std::vector<SeqId> ready;
  for (SeqId id : window_.members()) {
    const Sequence& s = pool_.at(id);
    if (!s.busy && prefilled_in_place(s)) ready.push_back(id);
  }
  if (ready.empty()) return p;
  std::stable_sort(ready.begin(), ready.end(),
                   [&](SeqId a, SeqId b) { return pool_.at(a).last_step < pool_.at(b).last_step; });
  if (static_cast<int64_t>(ready.size()) > config_.batch_size) ready.resize(static_cast<size_t>(config_.batch_size));
  // Slot order: consecutive slots read their keys as a view.
  std::sort(ready.begin(), ready.end(), [&](SeqId a, SeqId b) { return pool_.at(a).slot < pool_.at(b).slot; });
  p.ids = ready;
  p.assembly = Assembly::InPlace;
  for (SeqId id : p.ids) p.slot_rows.push_back(slot_row(pool_.at(id)));
  plan_k(p, /*reused=*/true);  // no copy to put the batch together, ever
  InFlight f;
  f.in_place = true;
  f.k = p.k;
  f.shape = p.shape;
  p.serial = start(p.ids, f);
  return p;
}

}  // namespace exspec
