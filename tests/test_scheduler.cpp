// The in-place Scheduler on its own: plans out, hand-made outcomes back, no tensors and no
// actors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "actors/scheduler/inplace_turn.h"
#include "actors/scheduler/scheduler.h"
#include "tests/engine_configs.h"
#include "tests/scheduler_support.h"

using namespace exspec;

namespace {

using test::fixed_k;
using test::fixed_k_config;
using test::inplace_config;

using test::ones_request;

PrefillPlan take_prefill(Scheduler& s) { return test::take_plan<PrefillPlan>(s); }
StepPlan take_step(Scheduler& s) { return test::take_plan<StepPlan>(s); }

// Every row accepts `accepted[b]` drafts (test::accept_rows); its target slot then holds every
// token but the new pending one, its draft's slot that less the draft's lag.
StepOutcome verified(const StepPlan& p, const std::vector<int64_t>& accepted) {
  auto o = test::accept_rows<StepOutcome>(p, accepted);
  for (size_t b = 0; b < p.ids.size(); ++b) {
    const int64_t target = p.rows[b].before_pending() + accepted[b] + 1;
    o.stored.push_back({target, target - test::draft_lag_after(accepted[b], p.k)});
  }
  return o;
}

}  // namespace

namespace {

// A prefill's outcome as the model's chunk rule would give it (`stored`: per row, the
// positions its target slot holds now).
void prefill_in_place(Scheduler& s, const PrefillPlan& p, std::vector<int64_t> stored) {
  PrefillOutcome o;
  o.serial = p.serial;
  for (size_t i = 0; i < p.ids.size(); ++i) {
    o.stored.push_back({stored[i], p.rows[i].draft_len});  // the draft's unchanged
  }
  s.prefilled(std::move(o));
}

}  // namespace

CATCH_TEST_CASE("inplace: slots lowest first, chunks fill the first batch, then chunks and steps take turns",
                "[scheduler][inplace]") {
  EngineConfig c = inplace_config(2, 3, 2, 4);
  c.prefix_cache = false;  // every prompt here repeats one token: d2 would find a's in the slot a leaves
  Scheduler s(c, fixed_k(2), 1);
  const SeqId a = s.admit(ones_request(6, 2)), b = s.admit(ones_request(3, 8)), d1 = s.admit(ones_request(1, 8)), d2 = s.admit(ones_request(2, 8));
  PrefillPlan p1 = take_prefill(s);
  CATCH_CHECK(s.take_dequeued() == 3);  // the window is the slots: the fourth waits
  CATCH_CHECK(s.slots_used() == 3);
  CATCH_CHECK(p1.ids == std::vector<SeqId>{a, b});  // d1's prompt is one token: nothing to store
  CATCH_CHECK(p1.chunk == 4);
  CATCH_CHECK(p1.with_draft);  // a fixed K drafts: the draft stores the prompts as they come
  CATCH_REQUIRE(p1.rows.size() == 2);
  CATCH_CHECK(p1.rows[0].slot == 0);
  CATCH_CHECK(p1.rows[1].slot == 1);
  CATCH_CHECK(p1.rows[0].target_len == 0);
  CATCH_CHECK(std::holds_alternative<std::monostate>(s.plan()));  // one piece of work at a time
  prefill_in_place(s, p1, {4, 0});  // a's first chunk; b did not fit beside it

  // d1 is ready, but alone it is half a batch and no row has a token yet: the next chunk first.
  PrefillPlan p2 = take_prefill(s);
  CATCH_CHECK(p2.ids == std::vector<SeqId>{a, b});
  CATCH_CHECK(p2.rows[0].target_len == 4);  // where the first chunk ended
  prefill_in_place(s, p2, {5, 2});

  StepPlan st2 = take_step(s);  // none has stepped: window order, then slot order
  CATCH_CHECK(st2.ids == std::vector<SeqId>{a, b});
  CATCH_CHECK(st2.rows[0].target_len == 5);  // every token but pending
  CATCH_CHECK(st2.rows[0].draft_len == 0);   // as these hand-made outcomes said: nothing stored
  CATCH_CHECK(st2.shape.lag == 5);
  s.complete(verified(st2, {2, 0}));  // a reaches max_tokens: its slot is free
  auto ev = s.take_events();
  CATCH_REQUIRE(ev.size() == 2);
  CATCH_CHECK(ev[0].finished);
  CATCH_CHECK(ev[0].tokens.size() == 2);

  PrefillPlan p3 = take_prefill(s);  // d2 joined the window in a's slot, the lowest free
  CATCH_CHECK(p3.ids == std::vector<SeqId>{d2});
  CATCH_CHECK(p3.rows[0].slot == 0);
  CATCH_CHECK(s.slots_used() == 3);
  prefill_in_place(s, p3, {1});

  // Around the least recently stepped row (d2 and d1 never stepped: d2, the lower slot), with its
  // neighbour in slot order: consecutive slots.
  StepPlan st3 = take_step(s);
  CATCH_CHECK(st3.ids == std::vector<SeqId>{d2, b});
  CATCH_CHECK(st3.rows[1].slot == 1);
  CATCH_CHECK(st3.rows[1].target_len == 3);
  CATCH_CHECK(st3.rows[1].draft_len == 3);  // K = 2, a = 0: the draft holds up to pending
  s.complete(verified(st3, {1, 1}));
  StepPlan st4 = take_step(s);  // d1 waited longest: it and its neighbour
  CATCH_CHECK(st4.ids == std::vector<SeqId>{b, d1});
  CATCH_CHECK(st4.rows[1].slot == 2);
  CATCH_CHECK(st4.rows[1].target_len == 0);
  s.complete(verified(st4, {2, 0}));
  s.cancel(b, FinishReason::None);  // not inside a step: its slot is free at once
  CATCH_CHECK(s.slots_used() == 2);
  CATCH_CHECK(s.cancelled() == 1);
}

CATCH_TEST_CASE("inplace: with decoding rows, a chunk and a step take turns", "[scheduler][inplace]") {
  const EngineConfig c = inplace_config(2, 3, 2, 4);
  Scheduler s(c, fixed_k(2), 1);
  const SeqId a = s.admit(ones_request(1, 8)), b = s.admit(ones_request(1, 8));
  StepPlan st = take_step(s);  // one-token prompts: nothing to store
  CATCH_CHECK(st.ids == std::vector<SeqId>{a, b});
  s.complete(verified(st, {0, 0}));
  const SeqId d = s.admit(ones_request(12, 8));  // a long prompt arrives: three chunks
  for (int chunk = 0; chunk < 3; ++chunk) {
    PrefillPlan p = take_prefill(s);
    CATCH_CHECK(p.ids == std::vector<SeqId>{d});
    prefill_in_place(s, p, {4 * (chunk + 1) - (chunk == 2 ? 1 : 0)});
    StepPlan between = take_step(s);  // the decoding rows wait one chunk at most
    CATCH_CHECK(between.ids.size() == 2);
    s.complete(verified(between, {0, 0}));
  }
}

CATCH_TEST_CASE("inplace: with twice B rows ready, steps alternate between blocks of consecutive slots",
                "[scheduler][inplace]") {
  Scheduler s(fixed_k_config(Mode::InPlace, 3, 6, 1), fixed_k(1), 1);
  std::vector<SeqId> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(s.admit(ones_request(1, 8)));  // one-token prompts: all ready
  const std::vector<SeqId> low{ids[0], ids[1], ids[2]}, high{ids[3], ids[4], ids[5]};
  for (int round = 0; round < 3; ++round) {
    StepPlan a = take_step(s);
    CATCH_CHECK(a.ids == low);
    CATCH_CHECK(a.rows[0].slot == 0);
    s.complete(verified(a, {0, 0, 0}));
    StepPlan b = take_step(s);
    CATCH_CHECK(b.ids == high);
    CATCH_CHECK(b.rows[0].slot == 3);
    s.complete(verified(b, {0, 0, 0}));
  }
  s.cancel(ids[4], FinishReason::None);  // a gap: slots 3 and 5 are left of the upper block
  StepPlan c = take_step(s);  // the lower block stepped longest ago
  CATCH_CHECK(c.ids == low);
  s.complete(verified(c, {0, 0, 0}));
  StepPlan d = take_step(s);  // slot 3 waited longest: it and the next two ready rows
  CATCH_CHECK(d.ids == std::vector<SeqId>{ids[2], ids[3], ids[5]});
}

CATCH_TEST_CASE("inplace: the first step is a block of the lowest slots, not the first rows stored",
                "[scheduler][inplace]") {
  const EngineConfig c = inplace_config(2, 4, 1, 4);
  Scheduler s(c, fixed_k(1), 1);
  const SeqId a = s.admit(ones_request(10, 8)), b = s.admit(ones_request(1, 8)), d1 = s.admit(ones_request(1, 8)), d2 = s.admit(ones_request(1, 8));
  // b, d1 and d2 have nothing to store, but the first block is slots 0 and 1: a's prompt first.
  for (int64_t stored : {4, 8, 9}) {
    PrefillPlan p = take_prefill(s);
    CATCH_CHECK(p.ids == std::vector<SeqId>{a});
    prefill_in_place(s, p, {stored});
  }
  StepPlan first = take_step(s);
  CATCH_CHECK(first.ids == std::vector<SeqId>{a, b});
  s.complete(verified(first, {0, 0}));
  StepPlan second = take_step(s);
  CATCH_CHECK(second.ids == std::vector<SeqId>{d1, d2});
  CATCH_CHECK(second.rows[0].slot == 2);
}

CATCH_TEST_CASE("inplace: the draft stores prompts only where drafting is predicted to pay",
                "[scheduler][inplace]") {
  const EngineConfig c = inplace_config(2, 3, 2, 8);
  DraftLengthSettings ds;  // adaptive
  auto never = std::make_shared<DraftLengthPolicy>(ds);
  auto feed = [](DraftLengthPolicy& p, double draft_s) {  // plain steps 10 ms; a K = 1 step: + draft_s
    for (int i = 0; i < 40; ++i) {
      p.observe_step(StepShape{2, 0, 8, 0, true}, 0, 0.010, 0);
      for (int64_t k = 1; k <= 8; ++k) p.observe_step(StepShape{2, k, 8, 0, true}, draft_s * k, 0.010 + 0.002 * k, 0);
    }
  };
  feed(*never, 0.010);
  never->seed_acceptance(0, 64);  // a draft that never agrees
  Scheduler s(c, never, 1);
  s.admit(ones_request(6, 8));
  CATCH_CHECK_FALSE(take_prefill(s).with_draft);

  auto good = std::make_shared<DraftLengthPolicy>(ds);
  feed(*good, 0.001);
  good->seed_acceptance(60, 64);
  Scheduler t(c, good, 1);
  t.admit(ones_request(6, 8));
  CATCH_CHECK(take_prefill(t).with_draft);
}

CATCH_TEST_CASE("inplace: sequences that take their slots together decide the draft's prefill together",
                "[scheduler][inplace]") {
  // The draft's prefill costs 1 ms a prompt token a row: a 3-token prompt repays it in 8 tokens,
  // a 60-token one does not. Apart, the two would go into different chunks (a chunk's rows all
  // go through the draft or none do), and their steps would catch the long prompt up anyway.
  const EngineConfig c = inplace_config(2, 2, 2, 64);
  DraftLengthSettings ds;
  auto policy = std::make_shared<DraftLengthPolicy>(ds);
  for (int i = 0; i < 40; ++i)
    for (int64_t lag : {0, 8, 32}) {
      policy->observe_step(StepShape{2, 0, 8, 0, true}, 0, 0.010, 0);
      for (int64_t k = 1; k <= 8; ++k) policy->observe_step(StepShape{2, k, 8, lag, true}, 0.0005 * k + 0.002 * lag, 0.010, 0);
    }
  policy->seed_acceptance(60, 64);
  CATCH_REQUIRE(policy->drafting_pays(2, 3, 8));
  CATCH_REQUIRE_FALSE(policy->drafting_pays(2, 60, 8));
  Scheduler s(c, policy, 1);
  const SeqId a = s.admit(ones_request(3, 8)), b = s.admit(ones_request(60, 8));
  PrefillPlan p = take_prefill(s);
  CATCH_CHECK(p.ids == std::vector<SeqId>{a, b});  // one chunk: one answer, at their mean prompt
  CATCH_CHECK(p.with_draft == policy->drafting_pays(2, 31, 8));
}

CATCH_TEST_CASE("inplace: the turn rule: chunks and steps alternate, newcomers' chunks fill the first block",
                "[scheduler][inplace]") {
  using P = std::vector<Piece>;
  auto facts = [](bool due, bool in_flight, bool decoding, bool hold, bool last_chunk) {
    return WindowFacts{due, in_flight, decoding, hold, last_chunk};
  };
  // Both have work: they take turns.
  CATCH_CHECK(turn_order(facts(true, false, true, false, false)) == P{Piece::Chunk, Piece::Step});
  CATCH_CHECK(turn_order(facts(true, false, true, false, true)) == P{Piece::Step, Piece::Chunk});
  // One chunk at a time: with one out, only a step.
  CATCH_CHECK(turn_order(facts(true, true, true, false, false)) == P{Piece::Step});
  // Nothing to store: steps only.
  CATCH_CHECK(turn_order(facts(false, false, true, false, true)) == P{Piece::Step});
  // Newcomers wait for their block and nothing decodes: chunks back to back, and while one is
  // out, nothing (it brings more rows).
  CATCH_CHECK(turn_order(facts(true, false, false, true, true)) == P{Piece::Chunk, Piece::Step});
  CATCH_CHECK(turn_order(facts(true, true, false, true, true)).empty());
  // Newcomers wait but others decode: the turns hold.
  CATCH_CHECK(turn_order(facts(true, false, true, true, true)) == P{Piece::Step, Piece::Chunk});
}

CATCH_TEST_CASE("inplace: a row left apart by a finish moves next to the others before their step",
                "[scheduler][inplace]") {
  Scheduler s(fixed_k_config(Mode::InPlace, 3, 4, 1), fixed_k(1), 1);
  const SeqId a = s.admit(ones_request(1, 8)), b = s.admit(ones_request(1, 2)), c = s.admit(ones_request(1, 8));
  StepPlan first = take_step(s);
  CATCH_CHECK(first.ids == std::vector<SeqId>{a, b, c});
  CATCH_CHECK(first.moves.empty());  // slots 0, 1, 2
  s.complete(verified(first, {1, 1, 1}));  // b reaches max_tokens: slot 1 is free
  StepPlan next = take_step(s);
  CATCH_REQUIRE(next.moves.size() == 1);
  CATCH_CHECK(next.moves[0].from == 2);
  CATCH_CHECK(next.moves[0].to == 1);
  // c's tokens but pending: one block (16 positions), copied into slot 1's first own block.
  CATCH_REQUIRE(next.moves[0].target.size() == 1);
  CATCH_CHECK(next.moves[0].target[0].second == next.rows[1].target_blocks.at(0));
  CATCH_CHECK(next.moves[0].target[0].first != next.moves[0].target[0].second);
  CATCH_CHECK(next.ids == std::vector<SeqId>{a, c});
  CATCH_CHECK(next.rows[1].slot == 1);
  CATCH_CHECK(s.stats().slot_moves == 1);
  CATCH_CHECK(s.stats().gathered_steps == 0);
  s.complete(verified(next, {0, 0}));
  CATCH_CHECK(take_step(s).moves.empty());  // consecutive now
  EngineConfig off = fixed_k_config(Mode::InPlace, 3, 4, 1);
  off.slot_moves = false;
  Scheduler t(off, fixed_k(1), 1);
  for (int64_t n : {8, 2, 8}) t.admit(ones_request(1, n));
  t.complete(verified(take_step(t), {1, 1, 1}));
  CATCH_CHECK(take_step(t).moves.empty());
  CATCH_CHECK(t.stats().gathered_steps == 1);  // slots 0 and 2, gathered
}

CATCH_TEST_CASE("inplace: each committed token's origin: the accepted drafts, then the target's, and each step's K",
                "[scheduler][inplace]") {
  EngineConfig c = inplace_config(2, 2, 2, 4);
  c.prefix_cache = false;
  Scheduler s(c, fixed_k(2), 1);
  const SeqId a = s.admit(ones_request(3, 8)), b = s.admit(ones_request(3, 2));
  prefill_in_place(s, take_prefill(s), {2, 2});
  StepPlan st = take_step(s);
  CATCH_REQUIRE(st.ids == std::vector<SeqId>{a, b});
  s.complete(verified(st, {1, 2}));  // b reaches max_tokens after its 2 drafts: its bonus is cut off
  std::map<SeqId, SeqEvent> ev;
  for (SeqEvent& e : s.take_events()) ev[e.id] = std::move(e);
  using O = TokenOrigin;
  CATCH_CHECK(ev[a].origins.tokens == std::vector<O>{O::Model, O::Target});
  CATCH_CHECK(ev[a].origins.step_k == std::vector<int64_t>{2});
  CATCH_CHECK(ev[b].origins.tokens == std::vector<O>{O::Model, O::Model});
  CATCH_CHECK(ev[b].tokens.size() == ev[b].origins.tokens.size());
  CATCH_CHECK(ev[b].finished);
  s.complete(verified(take_step(s), {0}));  // a alone: a rejected draft, the target's correction
  auto next = s.take_events();
  CATCH_REQUIRE(next.size() == 1);
  CATCH_CHECK(next[0].origins.tokens == std::vector<O>{O::Target});
  CATCH_CHECK(std::string(origin_name(O::Model)) == "draft");
  CATCH_CHECK(std::string(origin_name(O::Grammar)) == "grammar");
}
