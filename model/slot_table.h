// Which slots of the in-place KV stores (model/kv_store.h) are taken, and what a free slot still
// holds: a scheduling fact, kept apart from the tensors. Plain C++, no torch: the Scheduler owns
// one; the stores only hold the slots' contents and lengths.
//
// A slot whose sequence ended keeps its keys and values until it is taken again: the tokens they
// were computed from are remembered, so a new sequence whose prompt starts with them takes that
// slot and stores only the rest (exact prefix caching: a position's keys and values depend only
// on the tokens up to it). Otherwise the lowest free slot is handed out, so that the live
// sequences of a continuous batch stay consecutive (their keys are then read as a view); what a
// higher free slot holds lives on until the slots below it are taken.
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace exspec {

// A slot handed out, and how many leading positions of each store it already holds for the
// sequence that takes it.
struct SlotReuse {
  int64_t slot = -1;
  int64_t target = 0, draft = 0;
};

class SlotTable {
 public:
  explicit SlotTable(int64_t slots = 0) : slots_(static_cast<size_t>(slots)) {}

  int64_t slots() const { return static_cast<int64_t>(slots_.size()); }
  int64_t used() const { return used_count_; }
  bool full() const { return used_count_ == slots(); }
  bool in_use(int64_t slot) const { return slots_.at(static_cast<size_t>(slot)).used; }

  // The lowest free slot, now taken (what it held is forgotten); -1 when every slot is.
  int64_t acquire() { return acquire({}, 0).slot; }
  // A free slot for a sequence of these tokens, now taken: the one holding the longest prefix of
  // them (at most max_reuse positions; the lowest among equals), else the lowest. slot -1 when
  // every slot is taken.
  SlotReuse acquire(const std::vector<int64_t>& tokens, int64_t max_reuse) {
    size_t best = slots_.size();
    int64_t best_len = 0;
    for (size_t s = 0; s < slots_.size(); ++s) {
      if (slots_[s].used) continue;
      const int64_t n = std::min(common_prefix(slots_[s].held, tokens), max_reuse);
      if (best == slots_.size() || n > best_len) best = s, best_len = n;
    }
    if (best == slots_.size()) return {};
    const SlotReuse r{static_cast<int64_t>(best), best_len, std::min(best_len, slots_[best].draft_held)};
    take(best);
    return r;
  }
  // held: the tokens whose keys and values the target's slot keeps (empty: nothing reusable);
  // draft_held: how many of them the draft's slot keeps.
  void release(int64_t slot, std::vector<int64_t> held = {}, int64_t draft_held = 0) {
    if (!in_use(slot)) throw std::logic_error("SlotTable::release: slot " + std::to_string(slot) + " is free");
    Slot& s = slots_[static_cast<size_t>(slot)];
    s.used = false;
    s.draft_held = std::min<int64_t>(draft_held, static_cast<int64_t>(held.size()));
    s.held = std::move(held);
    --used_count_;
  }
  // A taken slot's sequence moves to the free slot `to` (which forgets what it held); `from` is
  // free then and keeps what the sequence leaves there, as release() would.
  void move(int64_t from, int64_t to, std::vector<int64_t> held, int64_t draft_held) {
    if (in_use(to)) throw std::logic_error("SlotTable::move: slot " + std::to_string(to) + " is taken");
    take(static_cast<size_t>(to));
    release(from, std::move(held), draft_held);
  }

 private:
  struct Slot {
    bool used = false;
    std::vector<int64_t> held;
    int64_t draft_held = 0;
  };
  static int64_t common_prefix(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    const size_t n = std::min(a.size(), b.size());
    return static_cast<int64_t>(std::mismatch(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n), b.begin()).first - a.begin());
  }
  void take(size_t s) {
    slots_[s].used = true;
    slots_[s].held.clear();  // the new sequence writes past what it reuses: the rest is stale
    slots_[s].draft_held = 0;
    ++used_count_;
  }

  std::vector<Slot> slots_;
  int64_t used_count_ = 0;
};

}  // namespace exspec
