// Where a step's rows move so that their slots are consecutive (the realigner's job in place).
// Rows in consecutive slots read their keys and values as one view; scattered rows gather them at
// every layer of every forward (model/kv_store.h). After ragged finishes and prefix-cache hits
// the live sequences are scattered, so a step's rows move into a run of slots that holds only
// them and free slots: the run that needs the fewest moves, the lowest among equals. A move
// copies the row's positions once; the gather it spares is a copy of every row's, every forward.
#pragma once
#include <cstdint>
#include <vector>

namespace exspec {

// Whether the slots are s, s + 1, s + 2, ... (the step's keys are then read as one view).
bool consecutive(const std::vector<int64_t>& slots);

struct RowMove {
  size_t row = 0;  // index into the step's rows
  int64_t to = -1;
};

// row_slots: the step's slots, ascending; taken: every slot of the store, true where a sequence
// holds it (the step's rows included). No moves when the rows are consecutive already or no run
// of rows.size() slots holds only them and free slots.
std::vector<RowMove> plan_row_moves(const std::vector<int64_t>& row_slots, const std::vector<bool>& taken);

}  // namespace exspec
