#include "actors/scheduler/window.h"

#include <algorithm>

namespace exspec {

std::vector<SeqId> Window::refill(SequencePool& pool, const std::function<bool(const Sequence&)>& fits) {
  if (members_.size() >= capacity_) return {};
  std::vector<SeqId> fresh = pool.take_waiting(capacity_ - members_.size(), sort_by_length_, fits);
  members_.insert(members_.end(), fresh.begin(), fresh.end());
  return fresh;
}

void Window::remove(SeqId id) { members_.erase(std::remove(members_.begin(), members_.end(), id), members_.end()); }

}  // namespace exspec
