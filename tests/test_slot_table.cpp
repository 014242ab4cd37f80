// The slot table (actors/scheduler/slot_table.h) and where a step's rows move
// (actors/scheduler/slot_moves.h): plain C++, no tensors.
#include <catch2/catch.hpp>

#include "actors/scheduler/slot_moves.h"
#include "actors/scheduler/slot_table.h"

using namespace exspec;
using V = std::vector<int64_t>;

CATCH_TEST_CASE("slots are handed out lowest first, or the one preferred when it is free", "[policy][slots]") {
  SlotTable t(3);
  CATCH_CHECK(t.acquire() == 0);
  CATCH_CHECK(t.acquire(2) == 2);  // preferred and free
  CATCH_CHECK(t.acquire(0) == 1);  // preferred but taken: the lowest free one
  CATCH_CHECK(t.full());
  CATCH_CHECK(t.acquire() == -1);
  t.release(2);
  CATCH_CHECK(t.used() == 2);
  CATCH_CHECK_THROWS_AS(t.release(2), std::logic_error);  // a slot is released once
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
  // A slot move takes the new slot and frees the old one.
  SlotTable t(3);
  CATCH_REQUIRE(t.acquire() == 0);
  t.move(0, 2);
  CATCH_CHECK(t.in_use(2));
  CATCH_CHECK_FALSE(t.in_use(0));
  CATCH_CHECK(t.used() == 1);
  CATCH_CHECK(t.acquire() == 0);
  CATCH_CHECK_THROWS_AS(t.move(2, 0), std::logic_error);  // slot 0 is taken again
}
