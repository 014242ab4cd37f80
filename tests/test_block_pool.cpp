// The paged stores' block bookkeeping (actors/scheduler/block_pool.h): home blocks first, borrowing beyond
// them, all-or-nothing growth, and the exact prefix cache (a chain of whole keys, least recently
// used evicted first, held blocks never). Plain C++, no tensors.
#include <catch2/catch.hpp>

#include "actors/scheduler/block_pool.h"

using namespace exspec;
using V = std::vector<int64_t>;

CATCH_TEST_CASE("a sequence takes its slot's own blocks first, then borrows, all or nothing", "[policy][blocks]") {
  BlockPool p(2, 3, 4, false);  // 2 slots x 3 blocks of 4 positions
  CATCH_CHECK(p.blocks() == 6);
  BlockTable a;
  CATCH_REQUIRE(p.grow(a, 1, 9));  // 3 blocks: slot 1's own
  CATCH_CHECK(a == V{3, 4, 5});
  CATCH_CHECK(p.at_home(a, 1));
  CATCH_CHECK(p.grow(a, 1, 12));  // still 3 blocks
  CATCH_REQUIRE(p.grow(a, 1, 13));  // beyond its row: the lowest free block elsewhere
  CATCH_CHECK(a == V{3, 4, 5, 0});
  CATCH_CHECK_FALSE(p.at_home(a, 1));
  BlockTable b;
  CATCH_REQUIRE(p.grow(b, 0, 5));  // its first home block is borrowed: it takes the next free ones
  CATCH_CHECK(b == V{1, 2});
  CATCH_CHECK(p.available() == 0);
  CATCH_CHECK_FALSE(p.grow(b, 0, 9));  // nothing left: nothing taken
  CATCH_CHECK(b.size() == 2);
  CATCH_CHECK_FALSE(p.home_free(0, 1));
  p.release(a);
  CATCH_CHECK(a.empty());
  CATCH_CHECK(p.available() == 4);
  CATCH_CHECK(p.home_free(1, 3));
  CATCH_CHECK(p.take_home(1, 2) == V{3, 4});
  CATCH_CHECK(p.held() == 4);
  CATCH_CHECK(p.cached() == 0);  // this pool does not cache
  CATCH_CHECK(p.match(V{1, 2, 3, 4, 5}, 5).empty());
}

CATCH_TEST_CASE("full blocks a sequence leaves are found again by their whole prefix", "[policy][blocks][prefix]") {
  BlockPool p(2, 4, 2);  // 2 slots x 4 blocks of 2 positions
  const V tokens{1, 2, 3, 4, 5, 6, 7};
  BlockTable a;
  CATCH_REQUIRE(p.grow(a, 0, 7));
  p.publish(a, tokens, 5);  // positions 0..4 hold content: blocks 0 and 1 are full
  p.release(a);
  CATCH_CHECK(p.cached() == 2);
  CATCH_CHECK(p.available() == 8);
  CATCH_CHECK(p.match(tokens, 6) == V{0, 1});
  CATCH_CHECK(p.match(tokens, 3) == V{0});  // capped: a sequence computes its pending token
  CATCH_CHECK(p.match(V{1, 2, 3, 9}, 4) == V{0});
  CATCH_CHECK(p.match(V{9, 2, 3, 4}, 4).empty());
  // A block is keyed by everything before it: the same two tokens after another start miss.
  CATCH_CHECK(p.match(V{3, 4, 3, 4}, 4).empty());
  // A hit is shared: two sequences hold it, and it is not free while either does.
  BlockTable b, c;
  const BlockTable hit = p.match(tokens, 6);
  CATCH_CHECK(p.unheld(hit) == 2);
  p.take(b, hit);
  p.take(c, p.match(tokens, 2));
  CATCH_CHECK(p.held() == 2);
  CATCH_CHECK(p.unheld(hit) == 0);
  CATCH_REQUIRE(p.grow(b, 1, 6));  // writes go to a block of its own
  CATCH_CHECK(b == V{0, 1, 6});
  // b's third block joins the chain when it ends; c's copy of the first is the same entry.
  p.publish(b, V{1, 2, 3, 4, 5, 6, 0}, 6);
  p.release(b);
  p.publish(c, tokens, 2);
  p.release(c);
  CATCH_CHECK(p.cached() == 3);
  CATCH_CHECK(p.match(V{1, 2, 3, 4, 5, 6, 0}, 6) == V{0, 1, 6});
  CATCH_CHECK(p.held() == 0);
  // Slot 1's first blocks are free but block 6 caches: taking them would forget it.
  CATCH_CHECK(p.home_free(1, 3));
  CATCH_CHECK(p.home_clean(1, 2));
  CATCH_CHECK_FALSE(p.home_clean(1, 3));
}

CATCH_TEST_CASE("the least recently used cached block is borrowed first, a chain's tail before its head", "[policy][blocks][prefix]") {
  BlockPool p(1, 4, 1);  // 4 blocks of 1 position, one slot
  BlockTable a;
  CATCH_REQUIRE(p.grow(a, 0, 2));
  p.publish(a, V{7, 8, 9}, 2);  // blocks 0 (7) and 1 (7 8) cached
  p.release(a);
  BlockTable b;
  CATCH_REQUIRE(p.grow(b, 0, 4));  // its home blocks 0..3, whatever they cached
  CATCH_CHECK(p.cached() == 0);
  p.publish(b, V{1, 2, 3, 4, 5}, 4);
  p.release(b);
  CATCH_CHECK(p.cached() == 4);
  // Something must be borrowed (slot 0's row is the whole store, and taken from the row's
  // start by a hit): the chain's tail goes first, its head stays findable.
  BlockTable c;
  p.take(c, p.match(V{1, 2, 9}, 2));
  CATCH_CHECK(c == V{0, 1});
  BlockTable d;
  CATCH_REQUIRE(p.grow(d, 0, 1));  // home block 0 is held by c: it borrows the least recently used
  CATCH_CHECK(d == V{3});
  CATCH_CHECK(p.match(V{1, 2, 3, 4, 5}, 5) == V{0, 1, 2});
  CATCH_CHECK(p.cached() == 3);
}
