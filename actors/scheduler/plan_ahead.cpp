#include "actors/scheduler/plan_ahead.h"

#include <algorithm>

namespace exspec {

bool operator==(const MemberFact& a, const MemberFact& b) {
  return a.id == b.id && a.slot == b.slot && a.last_step == b.last_step && a.state == b.state && a.fresh == b.fresh &&
         a.busy == b.busy;
}

bool operator==(const WindowState& a, const WindowState& b) {
  return a.members == b.members && a.chunk_in_flight == b.chunk_in_flight && a.last_was_chunk == b.last_was_chunk &&
         a.batch == b.batch;
}

namespace {

bool by_slot(const MemberFact* a, const MemberFact* b) { return a->slot < b->slot; }

// Whether the B lowest-slot members without a token yet are all stored and free to step.
bool first_block_stored(std::vector<const MemberFact*> fresh, int64_t batch) {
  std::sort(fresh.begin(), fresh.end(), by_slot);
  const size_t n = std::min(fresh.size(), static_cast<size_t>(batch));
  for (size_t i = 0; i < n; ++i)
    if (fresh[i]->busy || fresh[i]->state != SeqState::Running) return false;
  return true;
}

// B ready rows, neighbours in slot order, around the least recently stepped one (the lowest
// slot among equals): it is always in, so no row waits for long, and rows in consecutive slots
// read their keys as a view, where a scattered set gathers them at every layer.
std::vector<SeqId> step_rows(const WindowState& w, bool hold_fresh) {
  std::vector<const MemberFact*> ready;
  for (const MemberFact& m : w.members)
    if (!m.busy && m.state == SeqState::Running && !(hold_fresh && m.fresh)) ready.push_back(&m);
  if (ready.empty()) return {};
  std::sort(ready.begin(), ready.end(), by_slot);
  const size_t n = ready.size(), take = std::min(n, static_cast<size_t>(w.batch));
  size_t oldest = 0;
  for (size_t i = 1; i < n; ++i)
    if (ready[i]->last_step < ready[oldest]->last_step) oldest = i;
  const size_t first = std::min(oldest, n - take);
  std::vector<SeqId> ids;
  for (size_t i = first; i < first + take; ++i) ids.push_back(ready[i]->id);
  return ids;
}

}  // namespace

Choice choose(const WindowState& w) {
  WindowFacts f;
  f.chunk_in_flight = w.chunk_in_flight;
  f.last_was_chunk = w.last_was_chunk;
  bool storing = false;                   // a member's prompt is not stored yet (in a chunk, or due)
  std::vector<const MemberFact*> fresh;  // no token yet: ready or still storing
  for (const MemberFact& m : w.members) {
    const bool stored = m.state == SeqState::Running;
    storing = storing || !stored;
    if (m.fresh) fresh.push_back(&m);
    if (m.busy) continue;
    f.chunk_due = f.chunk_due || !stored;
    f.decoding = f.decoding || (stored && !m.fresh);
  }
  f.hold_fresh = storing && !first_block_stored(fresh, w.batch);
  Choice c;
  c.order = turn_order(f);
  if (std::count(c.order.begin(), c.order.end(), Piece::Step)) c.step_rows = step_rows(w, f.hold_fresh);
  return c;
}

WindowState assume_back(WindowState w, const std::vector<SeqId>& rows, int64_t step) {
  for (MemberFact& m : w.members)
    if (std::count(rows.begin(), rows.end(), m.id)) {
      m.busy = false, m.fresh = false;
      m.state = SeqState::Running;
      m.last_step = step;
    }
  return w;
}

bool still_valid(const PlannedStep& p, const WindowState& now) { return p.back && p.assumed == now; }

bool catch_up(std::vector<int64_t>& made, const Sequence& s) {
  const size_t prompt = s.request.prompt.size(), n = made.size();
  // A sequence's tokens only grow while it holds its slot (a pre-emption, which changes the
  // window's facts, keeps them too): the sizes say what was added.
  if (n < prompt || n > static_cast<size_t>(s.length())) return false;
  made.insert(made.end(), s.generated.begin() + static_cast<std::ptrdiff_t>(n - prompt), s.generated.end());
  return true;
}

}  // namespace exspec
