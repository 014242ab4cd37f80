#include "actors/scheduler/slot_moves.h"

namespace exspec {

bool consecutive(const std::vector<int64_t>& slots) {
  for (size_t i = 1; i < slots.size(); ++i)
    if (slots[i] != slots[0] + static_cast<int64_t>(i)) return false;
  return true;
}

std::vector<RowMove> plan_row_moves(const std::vector<int64_t>& row_slots, const std::vector<bool>& taken) {
  const int64_t B = static_cast<int64_t>(row_slots.size()), S = static_cast<int64_t>(taken.size());
  if (consecutive(row_slots)) return {};
  constexpr int kFree = -1, kOther = -2;  // else: the row that holds the slot
  std::vector<int64_t> owner(static_cast<size_t>(S));
  for (int64_t s = 0; s < S; ++s) owner[s] = taken[s] ? kOther : kFree;
  for (int64_t i = 0; i < B; ++i) owner[row_slots[i]] = i;
  int64_t best = -1, best_inside = -1;
  for (int64_t t = 0; t + B <= S; ++t) {
    int64_t inside = 0;
    bool ok = true;
    for (int64_t s = t; s < t + B && ok; ++s) {
      ok = owner[s] != kOther;
      inside += owner[s] >= 0;
    }
    if (ok && inside > best_inside) best = t, best_inside = inside;
  }
  if (best < 0) return {};
  std::vector<int64_t> free_inside;
  for (int64_t s = best; s < best + B; ++s)
    if (owner[s] == kFree) free_inside.push_back(s);
  std::vector<RowMove> moves;
  for (int64_t i = 0; i < B; ++i)
    if (row_slots[i] < best || row_slots[i] >= best + B) moves.push_back({static_cast<size_t>(i), free_inside[moves.size()]});
  return moves;
}

}  // namespace exspec
