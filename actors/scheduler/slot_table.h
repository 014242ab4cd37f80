// Which slots of the in-place KV stores (model/kv_store.h) are taken: a scheduling fact, kept
// apart from the tensors. Plain C++, no torch: the Scheduler owns one. A slot is a live
// sequence's row of the step and its home in the stores (actors/scheduler/block_pool.h: its own blocks
// come from the slot's row). The lowest free slot is handed out unless the caller prefers one
// (the Scheduler does: the slot whose row holds a newcomer's cached prefix, else the coldest),
// so that the live sequences of a continuous batch stay consecutive (their keys are then read
// as a view).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace exspec {

class SlotTable {
 public:
  explicit SlotTable(int64_t slots = 0) : used_(static_cast<size_t>(slots), false) {}

  int64_t slots() const { return static_cast<int64_t>(used_.size()); }
  int64_t used() const { return used_count_; }
  bool full() const { return used_count_ == slots(); }
  bool in_use(int64_t slot) const { return used_.at(static_cast<size_t>(slot)); }

  // `preferred` if it is free, else the lowest free slot, now taken; -1 when every slot is.
  int64_t acquire(int64_t preferred = -1) {
    int64_t s = preferred >= 0 && preferred < slots() && !in_use(preferred) ? preferred : -1;
    for (int64_t i = 0; s < 0 && i < slots(); ++i)
      if (!in_use(i)) s = i;
    if (s >= 0) used_[static_cast<size_t>(s)] = true, ++used_count_;
    return s;
  }
  void release(int64_t slot) {
    if (!in_use(slot)) throw std::logic_error("SlotTable::release: slot " + std::to_string(slot) + " is free");
    used_[static_cast<size_t>(slot)] = false;
    --used_count_;
  }
  // A taken slot's sequence moves to the free slot `to`.
  void move(int64_t from, int64_t to) {
    if (in_use(to)) throw std::logic_error("SlotTable::move: slot " + std::to_string(to) + " is taken");
    if (acquire(to) != to) throw std::logic_error("SlotTable::move: slot " + std::to_string(to) + " not taken");
    release(from);
  }

 private:
  std::vector<bool> used_;
  int64_t used_count_ = 0;
};

}  // namespace exspec
