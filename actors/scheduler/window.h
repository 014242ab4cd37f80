// The sliding window of ExSpec: up to W active sequences that batches are formed from, refilled
// from the pool's waiting queue as sequences finish.
#pragma once
#include <cstddef>
#include <vector>

#include "actors/scheduler/sequence_pool.h"

namespace exspec {

class Window {
 public:
  Window(size_t capacity, bool sort_by_length) : capacity_(capacity), sort_by_length_(sort_by_length) {}

  // Activates waiting sequences until the window is full; returns the new ones (to prefill).
  // fits: SequencePool::take_waiting's.
  std::vector<SeqId> refill(SequencePool& pool, const std::function<bool(const Sequence&)>& fits = {});
  void remove(SeqId id);
  const std::vector<SeqId>& members() const { return members_; }
  size_t capacity() const { return capacity_; }

 private:
  size_t capacity_;
  bool sort_by_length_;
  std::vector<SeqId> members_;
};

}  // namespace exspec
