// Planning step N + 1 while step N runs (actors/scheduler/plan_ahead.h), on its own: the choice
// from hand-made windows, and two Schedulers in lockstep, one planning ahead and one not, fed the
// same hand-made outcomes: every plan of the one equals the other's, the plans made ahead are
// kept where the results leave their facts as they were and made again where a row ends, a
// newcomer takes a slot, a cancellation lands or a pre-emption changes the window.
#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <random>
#include <variant>

#include "actors/scheduler/plan_ahead.h"
#include "actors/scheduler/scheduler.h"
#include "tests/engine_configs.h"

using namespace exspec;

namespace {

MemberFact running(SeqId id, int64_t slot, int64_t last_step) {
  return {id, slot, last_step, SeqState::Running, false, false};
}

WindowState window(std::vector<MemberFact> members, int64_t batch) {
  WindowState w;
  w.members = std::move(members);
  w.batch = batch;
  return w;
}

}  // namespace

CATCH_TEST_CASE("plan ahead: a step takes B neighbours around the least recently stepped row", "[plan_ahead]") {
  WindowState w = window({running(1, 0, 5), running(2, 1, 5), running(3, 2, 4), running(4, 3, 5)}, 2);
  Choice c = choose(w);
  CATCH_CHECK(c.order == std::vector<Piece>{Piece::Step});
  CATCH_CHECK(c.step_rows == std::vector<SeqId>{3, 4});  // row 3 waited longest; slots 2, 3
  w.members[2].busy = true;                               // a job holds it: 1 now waited longest
  CATCH_CHECK(choose(w).step_rows == std::vector<SeqId>{1, 2});
  // Its step back: free, Running, stepped at 6; the choice then is 1, 2 again (5 < 6).
  const WindowState back = assume_back(w, {3}, 6);
  CATCH_CHECK(back.members[2] == running(3, 2, 6));
  CATCH_CHECK(choose(back).step_rows == std::vector<SeqId>{1, 2});
}

CATCH_TEST_CASE("plan ahead: newcomers' chunks and held fresh rows come out of the same facts", "[plan_ahead]") {
  // Two stored rows decode, a third still stores its prompt: a chunk is due, and the last piece
  // was a step, so the chunk goes first.
  WindowState w = window({running(1, 0, 3), running(2, 1, 3), {3, 2, -1, SeqState::Prefilling, true, false}}, 4);
  CATCH_CHECK(choose(w).order == std::vector<Piece>{Piece::Chunk, Piece::Step});
  w.last_was_chunk = true;
  CATCH_CHECK(choose(w).order == std::vector<Piece>{Piece::Step, Piece::Chunk});
  // A fresh stored row among the B lowest fresh waits while another fresh one still stores.
  w = window({{1, 0, -1, SeqState::Running, true, false}, {2, 1, -1, SeqState::Prefilling, true, false}}, 2);
  CATCH_CHECK(choose(w).step_rows.empty());
}

CATCH_TEST_CASE("plan ahead: a plan is kept only when its step is back and the facts are the ones it assumed",
                "[plan_ahead]") {
  PlannedStep p;
  p.assumed = window({running(1, 0, 2), running(2, 1, 2)}, 2);
  p.choice = choose(p.assumed);
  WindowState now = p.assumed;
  CATCH_CHECK_FALSE(still_valid(p, now));  // its step is not back yet
  p.back = true;
  CATCH_CHECK(still_valid(p, now));
  for (int change = 0; change < 5; ++change) {
    WindowState w = p.assumed;
    if (change == 0) w.members.pop_back();                             // a row ended
    if (change == 1) w.members.push_back({3, 2, -1, SeqState::Prefilling, true, false});  // a newcomer
    if (change == 2) w.members[1].last_step = 3;                       // another step came back first
    if (change == 3) w.members[0].slot = 4;                            // moved
    if (change == 4) w.chunk_in_flight = true;
    CATCH_INFO("change " << change);
    CATCH_CHECK_FALSE(still_valid(p, w));
  }
}

CATCH_TEST_CASE("plan ahead: a row's tokens made ahead catch up with the sequence's", "[plan_ahead]") {
  Sequence s;
  s.request.prompt = {7, 8};
  s.generated = {1, 2};
  std::vector<int64_t> made = s.tokens();
  s.generated.insert(s.generated.end(), {3, 4, 5});
  CATCH_REQUIRE(catch_up(made, s));
  CATCH_CHECK(made == s.tokens());
  std::vector<int64_t> longer = s.tokens();
  longer.push_back(9);
  CATCH_CHECK_FALSE(catch_up(longer, s));
}

namespace {

void same_rows(const std::vector<SlotRow>& a, const std::vector<SlotRow>& b) {
  CATCH_REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CATCH_CHECK(a[i].slot == b[i].slot);
    CATCH_CHECK(a[i].tokens == b[i].tokens);
    CATCH_CHECK(a[i].target_len == b[i].target_len);
    CATCH_CHECK(a[i].draft_len == b[i].draft_len);
    CATCH_CHECK(a[i].target_blocks == b[i].target_blocks);
    CATCH_CHECK(a[i].draft_blocks == b[i].draft_blocks);
  }
}

void same_copies(const BlockCopies& a, const BlockCopies& b) {
  CATCH_CHECK(a.target == b.target);
  CATCH_CHECK(a.draft == b.draft);
}

// Every field of the two plans.
void same_work(const Work& on, const Work& off) {
  CATCH_REQUIRE(on.index() == off.index());
  if (const auto* a = std::get_if<PrefillPlan>(&on)) {
    const auto& b = std::get<PrefillPlan>(off);
    CATCH_CHECK(a->serial == b.serial);
    CATCH_CHECK(a->ids == b.ids);
    same_rows(a->rows, b.rows);
    CATCH_CHECK(a->with_draft == b.with_draft);
    CATCH_CHECK(a->chunk == b.chunk);
    same_copies(a->copies, b.copies);
  } else if (const auto* a = std::get_if<StepPlan>(&on)) {
    const auto& b = std::get<StepPlan>(off);
    CATCH_CHECK(a->serial == b.serial);
    CATCH_CHECK(a->ids == b.ids);
    same_rows(a->rows, b.rows);
    CATCH_REQUIRE(a->moves.size() == b.moves.size());
    for (size_t i = 0; i < a->moves.size(); ++i) {
      CATCH_CHECK(a->moves[i].from == b.moves[i].from);
      CATCH_CHECK(a->moves[i].to == b.moves[i].to);
      CATCH_CHECK(a->moves[i].target == b.moves[i].target);
      CATCH_CHECK(a->moves[i].draft == b.moves[i].draft);
    }
    same_copies(a->copies, b.copies);
    CATCH_CHECK(a->k == b.k);
    CATCH_CHECK(a->shape.rows == b.shape.rows);
    CATCH_CHECK(a->shape.context == b.shape.context);
    CATCH_CHECK(a->sampling.size() == b.sampling.size());
    CATCH_CHECK(a->proposed == b.proposed);
    CATCH_CHECK(a->by_model == b.by_model);
  }
}

// What a script does to both schedulers at a piece of work (counted from 0): admit, cancel.
struct Script {
  std::map<int64_t, std::vector<SeqRequest>> arrive;  // before the piece's plan
  std::map<int64_t, size_t> cancel;                   // the i-th sequence admitted
};

// A piece's outcome, the same for both: a chunk stores every prompt token but pending; a step's
// row accepts a random count of its K drafts (seeded by the serial), committing 100 + b.
StepOutcome step_outcome(const StepPlan& p, std::mt19937& rng) {
  StepOutcome o;
  o.serial = p.serial;
  for (size_t b = 0; b < p.ids.size(); ++b) {
    const int64_t a = std::uniform_int_distribution<int64_t>(0, p.k)(rng);
    o.accepted.push_back(a);
    o.committed.push_back(std::vector<int64_t>(static_cast<size_t>(a + 1), 100 + static_cast<int64_t>(b)));
    const int64_t target = p.rows[b].before_pending() + a + 1;
    o.stored.push_back({target, target - (a == p.k ? 1 : 0)});
  }
  return o;
}

PrefillOutcome chunk_outcome(const PrefillPlan& p) {
  PrefillOutcome o;
  o.serial = p.serial;
  for (const SlotRow& r : p.rows) o.stored.push_back({r.before_pending(), r.draft_len});
  return o;
}

// Runs the script to the end on a scheduler planning ahead and one that does not, with at most
// `in_flight` pieces out (back in the order they went out); every plan compared. Returns the
// planning-ahead one's stats.
RunStats lockstep(EngineConfig c, int in_flight, const Script& script, uint32_t seed) {
  c.plan_ahead = Toggle::On;
  Scheduler on(c, test::fixed_k(c.draft_tokens), in_flight);
  c.plan_ahead = Toggle::Off;
  Scheduler off(c, test::fixed_k(c.draft_tokens), in_flight);
  std::mt19937 rng(seed);
  std::deque<Work> out;
  std::vector<SeqId> ids;
  for (int64_t piece = 0; piece < 2000; ++piece) {
    if (auto it = script.arrive.find(piece); it != script.arrive.end())
      for (const SeqRequest& r : it->second) {
        ids.push_back(on.admit(r));
        CATCH_REQUIRE(off.admit(r) == ids.back());
      }
    if (auto it = script.cancel.find(piece); it != script.cancel.end()) {
      on.cancel(ids.at(it->second), FinishReason::None);
      off.cancel(ids.at(it->second), FinishReason::None);
    }
    for (;;) {
      Work a = on.plan(), b = off.plan();
      CATCH_INFO("piece " << piece);
      same_work(a, b);
      if (a.index() == 0) break;
      out.push_back(std::move(a));
      on.plan_ahead();  // while it runs
    }
    if (out.empty()) {
      if (on.idle() && off.idle() && piece >= script.arrive.rbegin()->first) return on.stats();
      continue;
    }
    Work w = std::move(out.front());
    out.pop_front();
    if (auto* p = std::get_if<PrefillPlan>(&w)) {
      on.prefilled(chunk_outcome(*p));
      off.prefilled(chunk_outcome(*p));
    } else {
      const StepOutcome o = step_outcome(std::get<StepPlan>(w), rng);
      on.complete(o);
      off.complete(o);
    }
    on.plan_ahead();
  }
  CATCH_FAIL("the script did not end");
  return {};
}

std::vector<SeqRequest> ones(size_t n, size_t prompt, int64_t max_tokens) {
  return std::vector<SeqRequest>(n, test::ones_request(prompt, max_tokens));
}

}  // namespace

CATCH_TEST_CASE("plan ahead: steps kept while rows go on, made again when one ends, equal to planning after the results",
                "[plan_ahead][scheduler]") {
  // Two rows with room for many steps: every step after the first is chosen ahead and kept,
  // until a row reaches max_tokens (its last step's plan ahead assumed it would go on).
  Script s;
  s.arrive[0] = {test::ones_request(3, 40), test::ones_request(4, 60)};
  EngineConfig c = test::inplace_config(2, 2, 3, 64);
  const RunStats st = lockstep(c, 1, s, 7);
  CATCH_CHECK(st.plans_kept > 5);
  CATCH_CHECK(st.plans_redone >= 1);  // the first row's end
  CATCH_CHECK(st.plans_kept + st.plans_redone <= st.steps);
}

CATCH_TEST_CASE("plan ahead: newcomers, cancellations and pre-emptions re-plan, and every plan equals planning after",
                "[plan_ahead][scheduler]") {
  for (int in_flight : {1, 2}) {
    for (uint32_t seed : {1u, 2u, 3u}) {
      CATCH_INFO("in flight " << in_flight << ", seed " << seed);
      Script s;
      s.arrive[0] = ones(3, 5, 24);
      s.arrive[6] = ones(2, 9, 30);   // newcomers while steps run
      s.arrive[15] = ones(4, 2, 12);
      s.cancel[9] = 1;                // a row inside a step, or waiting
      EngineConfig c = test::inplace_config(3, 4, 3, 8);
      c.block_size = 4;
      c.slot_positions = 12;          // 12 blocks a store: growing rows borrow, then pre-empt
      const RunStats st = lockstep(c, in_flight, s, seed);
      CATCH_CHECK(st.plans_kept > 0);
      CATCH_CHECK(st.plans_redone > 0);
      CATCH_CHECK(st.preemptions > 0);
    }
  }
}
