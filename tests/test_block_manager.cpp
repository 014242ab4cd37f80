// The in-place stores' slots and blocks on their own (actors/scheduler/block_manager.h): what a
// newcomer costs and takes, a step's reservation, the prefix cache it leaves, prefix copies
// handed to one job, slot moves. Plain C++, no tensors, no sequences.
#include <catch2/catch.hpp>

#include "actors/scheduler/block_manager.h"

using namespace exspec;
using V = std::vector<int64_t>;

namespace {

// `slots` rows of 4 blocks of 2 positions in each store (8 positions a slot).
EngineConfig geometry(int64_t slots, bool draft, bool cache = true) {
  EngineConfig c;
  c.slots = slots;
  c.block_size = 2;
  c.slot_positions = 8;
  c.draft = draft;
  c.prefix_cache = cache;
  return c;
}

}  // namespace

CATCH_TEST_CASE("a newcomer costs its tokens and a step, takes the lowest free slot, all or nothing", "[policy][blocks][manager]") {
  BlockManager m(geometry(2, true));
  CATCH_CHECK(m.slots() == 2);
  CATCH_CHECK(m.available().target == 8);
  CATCH_CHECK(m.available().draft == 8);
  const V five{1, 2, 3, 4, 5};
  CATCH_CHECK(m.admission(five, 2).target == 4);  // 7 positions: 4 blocks, nothing cached
  CATCH_CHECK(m.admission(five, 2).draft == 4);
  auto a = m.allocate(five, true);
  CATCH_REQUIRE(a);
  CATCH_CHECK(a->slot == 0);
  CATCH_CHECK(a->cached.target == 0);
  CATCH_CHECK(m.target_table(0) == V{0, 1});  // its 4 positions before pending, in its own row
  CATCH_CHECK(m.draft_table(0) == V{0, 1});
  CATCH_CHECK(m.used() == 1);
  // A step of K = 2: positions up to 7.
  CATCH_CHECK(m.can_reserve(0, 7));
  m.reserve(0, 7);
  CATCH_CHECK(m.target_table(0) == V{0, 1, 2, 3});
  // Beyond its row it borrows, and the stores run out: nothing is taken.
  CATCH_CHECK(m.can_reserve(0, 16));
  CATCH_CHECK_FALSE(m.can_reserve(0, 17));
  CATCH_CHECK_THROWS_AS(m.reserve(0, 17), std::logic_error);
  CATCH_CHECK(m.target_table(0).size() == 4);
  const V long_prompt(13, 7);  // 12 positions before pending: 6 blocks, only 4 free
  CATCH_CHECK_FALSE(m.allocate(long_prompt, true));
  CATCH_CHECK(m.used() == 1);
  CATCH_CHECK(m.available().target == 4);
  CATCH_CHECK(m.available().draft == 4);
  m.free(0);
  CATCH_CHECK(m.used() == 0);
  CATCH_CHECK(m.counts().held == 0);
  CATCH_CHECK(m.counts().cached == 0);  // nothing was published
}

CATCH_TEST_CASE("what a sequence published is found by the next with the same prefix, in the same slot", "[policy][blocks][manager][prefix]") {
  for (bool draft : {false, true}) {
    CATCH_INFO("draft " << draft);
    BlockManager m(geometry(3, draft));
    const V tokens{5, 6, 7, 8, 9, 10, 11};
    auto a = m.allocate(tokens, true);
    CATCH_REQUIRE(a);
    m.publish(a->slot, tokens, {6, 3});  // the target holds 6 positions, the draft 3
    m.free(a->slot);
    CATCH_CHECK(m.counts().cached == 3);
    // A newcomer with the same first five tokens: two whole blocks cached before its pending one
    // (the draft's: one, its blocks hold 3 positions), and it takes the slot whose row holds them.
    const V again{5, 6, 7, 8, 9, 99};
    const StoreBlocks cost = m.admission(again, 0);
    // 3 blocks, 2 of them cached: held by no one, they lower what is available as new ones would.
    CATCH_CHECK(cost.target == 3);
    auto b = m.allocate(again, true);
    CATCH_REQUIRE(b);
    CATCH_CHECK(b->slot == a->slot);
    CATCH_CHECK(b->cached.target == 4);
    CATCH_CHECK(b->cached.draft == (draft ? 2 : 0));
    CATCH_CHECK(b->copied == 0);  // in its own row already
    CATCH_CHECK(m.take_copies(b->slot).empty());
    // Without the cache (a request that must compute every position) nothing is found.
    auto c = m.allocate(again, false);
    CATCH_REQUIRE(c);
    CATCH_CHECK(c->cached.target == 0);
    CATCH_CHECK(c->slot != b->slot);
  }
}

CATCH_TEST_CASE("a prefix cached in another live slot is copied into the newcomer's own blocks, once", "[policy][blocks][manager][prefix]") {
  BlockManager m(geometry(3, false));
  const V prompt{1, 2, 3, 4, 5};
  auto a = m.allocate(prompt, true);
  CATCH_REQUIRE(a);
  m.publish(a->slot, prompt, {4, 0});  // a still decodes: its two full blocks are cached and held
  const int64_t held = m.counts().held;
  CATCH_CHECK(m.admission(prompt, 0).target == 1);  // the cached blocks a holds cost nothing more
  auto b = m.allocate(prompt, true);
  CATCH_REQUIRE(b);
  CATCH_CHECK(b->slot != a->slot);
  CATCH_CHECK(b->cached.target == 4);
  CATCH_CHECK(b->copied == 2);
  CATCH_CHECK(m.target_table(b->slot) == V{b->slot * 4, b->slot * 4 + 1});  // its own row: read as a view
  const BlockCopies copies = m.take_copies(b->slot);
  CATCH_CHECK(copies.target == std::vector<std::pair<int64_t, int64_t>>{{0, b->slot * 4}, {1, b->slot * 4 + 1}});
  CATCH_CHECK(m.take_copies(b->slot).empty());  // handed to one job only
  CATCH_CHECK(m.counts().held == held + 2);     // its own two, and a's (held by a anyway)
  m.free(a->slot);  // a ends: the cached blocks the copy reads stay held until the job returns
  CATCH_CHECK(m.counts().held == 4);
  m.copied(b->slot);
  CATCH_CHECK(m.counts().held == 2);
}

CATCH_TEST_CASE("a step's scattered rows move into consecutive slots, and a pending prefix copy moves with its row", "[policy][blocks][manager][slots]") {
  BlockManager m(geometry(4, false));
  // Slots 0, 1, 2 taken; 1 leaves: rows in 0 and 2 are apart.
  const V p0{1, 1, 1}, p1{2, 2, 2}, p2{3, 3, 3};
  auto s0 = m.allocate(p0, true), s1 = m.allocate(p1, true), s2 = m.allocate(p2, true);
  CATCH_REQUIRE((s0 && s1 && s2));
  m.publish(s1->slot, p1, {2, 0});
  m.free(s1->slot);
  // A newcomer with s1's prompt in slot 3 (1 is clean? no: it caches p1's block): its prefix is
  // found in slot 1's row, which is free, so it takes slot 1 and reads it in place.
  auto s3 = m.allocate(V{2, 2, 5}, true);
  CATCH_REQUIRE(s3);
  CATCH_CHECK(s3->slot == 1);
  m.free(s3->slot);
  std::vector<SlotRow> rows(2);
  rows[0].slot = s0->slot, rows[0].tokens = p0, rows[0].target_len = 2;
  rows[1].slot = s2->slot, rows[1].tokens = p2, rows[1].target_len = 2;
  for (SlotRow& r : rows) r.target_blocks = m.target_table(r.slot);
  CATCH_CHECK_FALSE(m.viewed(rows));
  const std::vector<SlotMove> moves = m.plan_moves(rows);
  CATCH_REQUIRE(moves.size() == 1);
  CATCH_CHECK(m.viewed(rows));
  CATCH_CHECK(rows[0].slot + 1 == rows[1].slot);
  CATCH_CHECK(moves[0].target.size() == 1);  // the one block it stored, copied to its new home
  CATCH_CHECK(m.used() == 2);
  CATCH_CHECK(m.counts().held == 2);

  // A newcomer whose prefix is copied from a live row, moved in its first step before the copy's
  // job returned: the cached blocks the copy reads are let go when that job returns.
  BlockManager n(geometry(4, false));
  const V shared{4, 4, 4, 4, 4};
  auto keep = n.allocate(shared, true);
  CATCH_REQUIRE(keep);
  n.publish(keep->slot, shared, {4, 0});
  auto gap = n.allocate(V{6, 6}, true);
  auto fresh = n.allocate(shared, true);
  CATCH_REQUIRE((gap && fresh));
  CATCH_CHECK(fresh->copied == 2);
  n.free(gap->slot);
  const BlockCopies c = n.take_copies(fresh->slot);
  CATCH_CHECK(c.target.size() == 2);
  std::vector<SlotRow> step(2);
  step[0].slot = keep->slot, step[0].tokens = shared, step[0].target_len = 4;
  step[1].slot = fresh->slot, step[1].tokens = shared, step[1].target_len = 4;
  for (SlotRow& r : step) r.target_blocks = n.target_table(r.slot);
  CATCH_REQUIRE(n.plan_moves(step).size() == 1);
  CATCH_CHECK(step[1].slot == keep->slot + 1);
  n.free(keep->slot);
  n.copied(step[1].slot);
  CATCH_CHECK(n.counts().held == 2);  // only the moved row's own blocks
  n.free(step[1].slot);
  CATCH_CHECK(n.counts().held == 0);
}
