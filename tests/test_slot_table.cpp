// The slot table's prefix cache (model/slot_table.h): plain C++, no tensors.
#include <catch2/catch.hpp>

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
