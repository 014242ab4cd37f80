#include "actors/paper/batch_former.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace exspec {

BatchChoice BatchFormer::form(const std::vector<Candidate>& ready, int64_t step, bool ragged) const {
  BatchChoice out;
  if (ready.empty()) return out;
  // Longest-waiting first; ids break ties so that the choice is deterministic.
  std::vector<Candidate> by_age = ready;
  std::stable_sort(by_age.begin(), by_age.end(), [](const Candidate& a, const Candidate& b) {
    return a.last_step != b.last_step ? a.last_step < b.last_step : a.id < b.id;
  });
  const size_t target = std::min(batch_size_, ready.size());
  const size_t need =
      target <= 1 || !ragged ? target
                             : std::max<size_t>(2, static_cast<size_t>(std::ceil(min_group_fill_ * static_cast<double>(target))));

  std::map<int64_t, std::vector<const Candidate*>> buckets;  // members in age order
  for (const Candidate& c : by_age) buckets[c.length].push_back(&c);

  const Candidate& oldest = by_age.front();
  const bool starving = max_wait_ >= 0 && step - oldest.last_step > max_wait_;
  const std::vector<const Candidate*>* best = nullptr;
  if (starving) {
    best = &buckets[oldest.length];
  } else {
    for (const auto& [len, members] : buckets) {
      // Strictly larger wins; on equal size the bucket whose oldest member is older wins.
      if (!best || members.size() > best->size() ||
          (members.size() == best->size() && members.front()->last_step < best->front()->last_step))
        best = &members;
    }
  }
  if (best->size() >= need) {
    out.same_length = true;
    for (size_t i = 0; i < best->size() && i < batch_size_; ++i) out.ids.push_back((*best)[i]->id);
    return out;
  }
  for (size_t i = 0; i < target; ++i) out.ids.push_back(by_age[i].id);
  out.same_length = false;
  return out;
}

}  // namespace exspec
