// The slot table's prefix cache (model/slot_table.h) and where a step's rows move
// (actors/slot_moves.h): plain C++, no tensors.
#include <catch2/catch.hpp>

#include "actors/slot_moves.h"
#include "model/slot_table.h"

using namespace exspec;
using V = std::vector<int64_t>;

CATCH_TEST_CASE("a free slot keeps its tokens for the next sequence that starts with them", "[policy][prefix]") {
  SlotTable t(3);
  CATCH_CHECK(t.acquire(V{1, 2, 3}, 2).slot == 0);  // nothing cached: the lowest free slot
  CATCH_CHECK(t.acquire(V{4, 5, 6}, 2).slot == 1);
  t.release(0, V{1, 2, 3, 9}, 2);  // the target holds 4 positions, the draft 2
  t.release(1, V{4, 5});
  // The longest cached prefix wins, capped by max_reuse (the pending token is never reused).
  SlotReuse r = t.acquire(V{1, 2, 3, 9, 7}, 4);
  CATCH_CHECK(r.slot == 0);
  CATCH_CHECK(r.target == 4);
  CATCH_CHECK(r.draft == 2);
  t.release(0, V{1, 2, 3, 9});
  r = t.acquire(V{1, 2, 3, 9}, 3);
  CATCH_CHECK((r.slot == 0 && r.target == 3 && r.draft == 0));
  // A taken slot forgets: released without tokens it holds nothing reusable.
  t.release(0);
  r = t.acquire(V{1, 2, 3}, 2);
  CATCH_CHECK((r.slot == 0 && r.target == 0));
  // No match anywhere: the lowest free slot, whatever it held (slot 1 held 4 5).
  r = t.acquire(V{8, 8}, 1);
  CATCH_CHECK((r.slot == 1 && r.target == 0));
  CATCH_CHECK(t.acquire(V{3}, 0).slot == 2);
  CATCH_CHECK(t.full());
  CATCH_CHECK(t.acquire(V{1}, 0).slot == -1);
  // The draft keeps at most what the target does.
  t.release(2, V{5, 5}, 9);
  r = t.acquire(V{5, 5, 5}, 2);
  CATCH_CHECK((r.slot == 2 && r.target == 2 && r.draft == 2));
}

CATCH_TEST_CASE("a step's scattered rows move into the run of slots that needs the fewest moves", "[policy][slots]") {
  using M = std::vector<std::pair<size_t, int64_t>>;
  auto moves = [](std::vector<int64_t> rows, std::vector<bool> taken) {
    M out;
    for (const RowMove& m : plan_row_moves(rows, taken)) out.emplace_back(m.row, m.to);
    return out;
  };
  CATCH_CHECK(moves({2, 3, 4}, {false, true, true, true, true}).empty());  // consecutive already
  CATCH_CHECK(moves({0, 2}, {true, false, true, false}) == M{{1, 1}});     // the gap a finish left
  // Slot 1 belongs to another sequence: the only run is 2..3.
  CATCH_CHECK(moves({0, 3}, {true, true, false, true}) == M{{0, 2}});
  CATCH_CHECK(moves({0, 2}, {true, true, true}).empty());  // no run holds only them and free slots
  // Runs 1..3 and 2..4 both hold two of the rows: the lower one.
  CATCH_CHECK(moves({1, 3, 4}, {false, true, false, true, true}) == M{{2, 2}});
  // Two rows move, each into the next free slot of the run, in row order.
  CATCH_CHECK(moves({0, 3, 6}, {true, false, false, true, false, false, true}) == M{{1, 1}, {2, 2}});
  // A slot move keeps the vacated slot's prefix for the next sequence, as a release does.
  SlotTable t(3);
  CATCH_REQUIRE(t.acquire() == 0);
  t.move(0, 2, {4, 5, 6}, 2);
  CATCH_CHECK(t.in_use(2));
  CATCH_CHECK_FALSE(t.in_use(0));
  CATCH_CHECK(t.used() == 1);
  const SlotReuse r = t.acquire({4, 5, 6, 7}, 3);
  CATCH_CHECK(r.slot == 0);
  CATCH_CHECK(r.target == 3);
  CATCH_CHECK(r.draft == 2);
  CATCH_CHECK_THROWS_AS(t.move(2, 0, {}, 0), std::logic_error);  // slot 0 is taken again
}
