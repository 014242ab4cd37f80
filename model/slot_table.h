// Which slots of the in-place KV stores (model/kv_store.h) are taken: a scheduling fact, kept
// apart from the tensors. Plain C++, no torch: the Scheduler owns one; the stores only hold the
// slots' contents and lengths. The lowest free slot is handed out first, so that the live
// sequences of a continuous batch stay consecutive (their keys are then read as a view).
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

  // The lowest free slot, now taken; -1 when every slot is.
  int64_t acquire() {
    for (size_t s = 0; s < used_.size(); ++s) {
      if (used_[s]) continue;
      used_[s] = true;
      ++used_count_;
      return static_cast<int64_t>(s);
    }
    return -1;
  }
  void release(int64_t slot) {
    if (!in_use(slot)) throw std::logic_error("SlotTable::release: slot " + std::to_string(slot) + " is free");
    used_[static_cast<size_t>(slot)] = false;
    --used_count_;
  }

 private:
  std::vector<bool> used_;
  int64_t used_count_ = 0;
};

}  // namespace exspec
