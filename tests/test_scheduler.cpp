// The Scheduler on its own: plans out, hand-made outcomes back, no tensors and no actors. The
// tensor states it moves are opaque handles here (it never looks inside them).
#include <catch2/catch.hpp>

#include <algorithm>

#include "actors/inplace_turn.h"
#include "tests/engine_configs.h"
#include "actors/scheduler.h"

using namespace exspec;

namespace {

std::shared_ptr<SeqTensors> opaque_state() {
  static int tag;
  return std::shared_ptr<SeqTensors>(std::shared_ptr<void>(), reinterpret_cast<SeqTensors*>(&tag));
}

std::shared_ptr<DraftLengthPolicy> fixed_k(int64_t k) {
  DraftLengthSettings s;
  s.adaptive = false;
  s.fixed_k = k;
  return std::make_shared<DraftLengthPolicy>(s);
}

using test::fixed_k_config;
using test::inplace_config;

SeqRequest req(size_t prompt_len, int64_t max_tokens, std::vector<int64_t> eos = {}) {
  return SeqRequest{std::vector<int64_t>(prompt_len, 1), max_tokens, std::move(eos)};
}

PrefillPlan take_prefill(Scheduler& s) {
  Work w = s.next();
  CATCH_REQUIRE(std::holds_alternative<PrefillPlan>(w));
  return std::get<PrefillPlan>(w);
}

StepPlan take_step(Scheduler& s) {
  Work w = s.next();
  CATCH_REQUIRE(std::holds_alternative<StepPlan>(w));
  return std::get<StepPlan>(w);
}

void prefill_ok(Scheduler& s, const PrefillPlan& p) {
  PrefillOutcome o;
  o.serial = p.serial;
  for (const auto& prompt : p.prompts) {
    o.states.push_back(opaque_state());
    o.draft_lag.push_back(static_cast<int64_t>(prompt.size()) - 1);
  }
  s.prefilled(std::move(o));
}

// Every row accepts `accepted[b]` drafts; the committed tokens are 100 + row, repeated.
StepOutcome verified(const StepPlan& p, const std::vector<int64_t>& accepted) {
  StepOutcome o;
  o.serial = p.serial;
  for (size_t b = 0; b < p.ids.size(); ++b) {
    o.accepted.push_back(accepted[b]);
    o.committed.push_back(std::vector<int64_t>(accepted[b] + 1, 100 + static_cast<int64_t>(b)));
    o.draft_lag.push_back(accepted[b] == p.k ? 1 : 0);
    if (p.assembly == Assembly::InPlace)  // the target's slot: every token but the new pending one
      o.stored.push_back(p.slot_rows[b].before_pending() + accepted[b] + 1);
    if (!p.keep_batch) o.rows.push_back(opaque_state());
  }
  return o;
}

}  // namespace

CATCH_TEST_CASE("exspec: prefill a batch's worth, then groups, the rows they were cut from are reused", "[scheduler]") {
  Scheduler s(fixed_k_config(Mode::ExSpec, 2, 3, 2), fixed_k(2), 1);
  const SeqId a = s.admit(req(4, 8)), b = s.admit(req(4, 8)), c = s.admit(req(6, 8));
  PrefillPlan p1 = take_prefill(s);
  CATCH_CHECK(p1.ids == std::vector<SeqId>{a, b});  // B at a time, not the whole window refill
  CATCH_CHECK(p1.with_draft);
  CATCH_CHECK(s.take_dequeued() == 3);               // all three joined the window
  CATCH_CHECK(std::holds_alternative<std::monostate>(s.next()));  // one piece of work at a time
  prefill_ok(s, p1);
  prefill_ok(s, take_prefill(s));

  StepPlan st = take_step(s);
  CATCH_CHECK(st.ids == std::vector<SeqId>{a, b});  // the same-length group
  CATCH_CHECK(st.assembly == Assembly::Stack);
  CATCH_CHECK(st.k == 2);
  CATCH_CHECK(st.shape.lag == 3);  // prompt minus the pending token: the draft's lazy prefill
  CATCH_CHECK(st.reserve == 4);    // K + 2
  s.complete(verified(st, {1, 1}));
  auto ev = s.take_events();
  CATCH_REQUIRE(ev.size() == 2);
  CATCH_CHECK(ev[0].id == a);
  CATCH_CHECK(ev[0].tokens == std::vector<int64_t>{100, 100});
  CATCH_CHECK_FALSE(ev[0].finished);
  CATCH_CHECK(s.stats().steps == 1);
  CATCH_CHECK(s.stats().accepted == 2);
  CATCH_CHECK(s.stats().grouped_steps == 1);

  // a and b are now 6 long, like c: c has waited longest, so the group is c first.
  StepPlan st2 = take_step(s);
  CATCH_CHECK(st2.ids == std::vector<SeqId>{c, a});
  CATCH_CHECK(st2.assembly == Assembly::Stack);
  CATCH_CHECK_FALSE(st2.shape.reused);
}

CATCH_TEST_CASE("exspec: the rows of the last step, in its order, are reused with no copy", "[scheduler]") {
  Scheduler s(fixed_k_config(Mode::ExSpec, 2, 2, 2), fixed_k(2), 1);
  const SeqId a = s.admit(req(4, 8)), b = s.admit(req(7, 8));
  prefill_ok(s, take_prefill(s));
  StepPlan st = take_step(s);
  CATCH_CHECK(st.ids == std::vector<SeqId>{a, b});
  CATCH_CHECK(st.assembly == Assembly::Repad);  // mixed lengths
  s.complete(verified(st, {2, 0}));
  StepPlan again = take_step(s);
  CATCH_CHECK(again.ids == st.ids);
  CATCH_CHECK(again.assembly == Assembly::Reuse);
  CATCH_CHECK(again.shape.reused);
  s.complete(verified(again, {0, 0}));
  s.cancel(b, FinishReason::None);  // not inside a step: ends now
  StepPlan alone = take_step(s);
  CATCH_CHECK(alone.ids == std::vector<SeqId>{a});
  CATCH_CHECK(alone.assembly == Assembly::Stack);  // a subset of the batch: no longer that batch
  CATCH_CHECK(s.stats().reused_steps == 1);
}

CATCH_TEST_CASE("finished, cancelled and failed rows leave at the step boundary, producers hear once", "[scheduler]") {
  Scheduler s(fixed_k_config(Mode::ExSpec, 3, 3, 1), fixed_k(1), 1);
  const SeqId a = s.admit(req(3, 2)), b = s.admit(req(3, 9)), c = s.admit(req(3, 9));
  const SeqId none = s.admit(req(3, 0));  // max_tokens 0: ends at once
  auto ev0 = s.take_events();
  CATCH_REQUIRE(ev0.size() == 1);
  CATCH_CHECK(ev0[0].id == none);
  CATCH_CHECK(ev0[0].finished->finish == FinishReason::Length);
  prefill_ok(s, take_prefill(s));
  StepPlan st = take_step(s);
  s.cancel(b, FinishReason::Stop);  // inside the step: it waits for the boundary
  CATCH_CHECK(s.take_events().empty());
  s.complete(verified(st, {1, 1, 0}));  // a reaches max_tokens 2
  auto ev = s.take_events();
  CATCH_REQUIRE(ev.size() == 3);
  CATCH_CHECK(ev[0].id == a);
  CATCH_CHECK(ev[0].finished->finish == FinishReason::Length);
  CATCH_CHECK(ev[0].finished->tokens.size() == 2);
  CATCH_CHECK(ev[1].id == b);  // cancelled: its tokens of this step are not delivered
  CATCH_CHECK(ev[1].tokens.empty());
  CATCH_CHECK(ev[1].finished->finish == FinishReason::Stop);  // the reason the producer gave
  CATCH_CHECK(ev[2].id == c);
  CATCH_CHECK(ev[2].tokens == std::vector<int64_t>{102});
  CATCH_CHECK_FALSE(ev[2].finished);
  CATCH_CHECK(s.finished() == 3);
  CATCH_CHECK(s.cancelled() == 0);

  StepPlan st2 = take_step(s);
  CATCH_CHECK(st2.ids == std::vector<SeqId>{c});
  StepOutcome failed;
  failed.serial = st2.serial;
  failed.error = "verification failed: out of memory";
  s.complete(failed);
  auto ev2 = s.take_events();
  CATCH_REQUIRE(ev2.size() == 1);
  CATCH_CHECK(ev2[0].finished->error == failed.error);
  CATCH_CHECK(ev2[0].finished->finish == FinishReason::None);
  CATCH_CHECK(s.cancelled() == 1);
  CATCH_CHECK(s.idle());
  CATCH_CHECK(s.stats().steps == 1);  // a failed step is not counted as run
}

CATCH_TEST_CASE("eqspec: a fixed batch lives on as one batch, finished rows are dropped from it", "[scheduler]") {
  Scheduler s(fixed_k_config(Mode::EqSpec, 3, 3, 3), fixed_k(3), 2);
  const SeqId a = s.admit(req(3, 9, {100})), b = s.admit(req(5, 9)), c = s.admit(req(4, 9)), d = s.admit(req(4, 9));
  PrefillPlan p = take_prefill(s);
  CATCH_CHECK(p.ids == std::vector<SeqId>{a, b, c});
  CATCH_CHECK(std::holds_alternative<std::monostate>(s.next()));  // one prefill at a time; no pool steps
  prefill_ok(s, p);
  StepPlan first = take_step(s);  // the fixed batch's first step, before the next prefill
  CATCH_CHECK(first.assembly == Assembly::Repad);
  CATCH_CHECK(first.keep_batch);
  CATCH_CHECK_FALSE(first.shape.reused);
  PrefillPlan p2 = take_prefill(s);  // the second slot: the next fixed batch's prefill
  CATCH_CHECK(p2.ids == std::vector<SeqId>{d});
  s.cancel(c, FinishReason::None);  // inside the fixed batch: at its next boundary

  StepOutcome o = verified(first, {0, 1, 2});  // row a commits token 100, its EOS
  o.batch = std::shared_ptr<SpecBatch>(std::shared_ptr<void>(), reinterpret_cast<SpecBatch*>(&o));
  s.complete(o);
  StepPlan next = take_step(s);
  CATCH_CHECK(next.assembly == Assembly::Continue);
  CATCH_CHECK(next.ids == std::vector<SeqId>{b});
  CATCH_CHECK(next.drop_rows == std::vector<int64_t>{0, 2});  // a finished, c cancelled
  CATCH_CHECK(next.batch == o.batch);
  CATCH_CHECK(next.shape.reused);
  auto ev = s.take_events();
  CATCH_REQUIRE(ev.size() == 3);
  CATCH_CHECK(ev[0].finished->finish == FinishReason::Stop);
  CATCH_CHECK(ev[1].id == b);
  CATCH_CHECK(ev[2].id == c);
  CATCH_CHECK(ev[2].finished->finish == FinishReason::None);
}

CATCH_TEST_CASE("two pieces of work in flight never share a row, cancel_all ends everything", "[scheduler]") {
  Scheduler s(fixed_k_config(Mode::ExSpec, 2, 4, 2), fixed_k(2), 2);
  std::vector<SeqId> ids;
  for (size_t n : {3, 3, 5, 7}) ids.push_back(s.admit(req(n, 9)));
  PrefillPlan p = take_prefill(s);
  prefill_ok(s, p);
  PrefillPlan p2 = take_prefill(s);
  StepPlan st = take_step(s);  // while the second prefill runs
  for (SeqId id : st.ids) CATCH_CHECK(std::find(p2.ids.begin(), p2.ids.end(), id) == p2.ids.end());
  CATCH_CHECK(std::holds_alternative<std::monostate>(s.next()));  // two out
  s.cancel_all();
  CATCH_CHECK(s.take_events().empty());  // every row is inside a piece of work
  prefill_ok(s, p2);
  s.complete(verified(st, {0, 0}));
  auto ev = s.take_events();
  CATCH_CHECK(ev.size() == 4);
  for (const auto& e : ev) CATCH_CHECK(e.finished->finish == FinishReason::None);
  CATCH_CHECK(s.idle());
}

namespace {

// In place: a prefill's outcome as the model's chunk rule would give it (`stored`: per row, the
// positions its target slot holds now).
void prefill_in_place(Scheduler& s, const PrefillPlan& p, std::vector<int64_t> stored) {
  PrefillOutcome o;
  o.serial = p.serial;
  for (size_t i = 0; i < p.ids.size(); ++i) {
    o.stored.push_back(stored[i]);
    o.draft_lag.push_back(static_cast<int64_t>(p.slot_rows[i].tokens.size()) - 1 - p.slot_rows[i].draft_len);
  }
  s.prefilled(std::move(o));
}

}  // namespace

CATCH_TEST_CASE("inplace: slots lowest first, chunks fill the first batch, then chunks and steps take turns",
                "[scheduler][inplace]") {
  EngineConfig c = inplace_config(2, 3, 2, 4);
  c.prefix_cache = false;  // every prompt here repeats one token: d2 would find a's in the slot a leaves
  Scheduler s(c, fixed_k(2), 1);
  const SeqId a = s.admit(req(6, 2)), b = s.admit(req(3, 8)), d1 = s.admit(req(1, 8)), d2 = s.admit(req(2, 8));
  PrefillPlan p1 = take_prefill(s);
  CATCH_CHECK(s.take_dequeued() == 3);  // the window is the slots: the fourth waits
  CATCH_CHECK(s.slots().used() == 3);
  CATCH_CHECK(p1.ids == std::vector<SeqId>{a, b});  // d1's prompt is one token: nothing to store
  CATCH_CHECK(p1.chunk == 4);
  CATCH_CHECK(p1.with_draft);  // a fixed K drafts: the draft stores the prompts as they come
  CATCH_REQUIRE(p1.slot_rows.size() == 2);
  CATCH_CHECK(p1.slot_rows[0].slot == 0);
  CATCH_CHECK(p1.slot_rows[1].slot == 1);
  CATCH_CHECK(p1.slot_rows[0].target_len == 0);
  CATCH_CHECK(std::holds_alternative<std::monostate>(s.next()));  // one piece of work at a time
  prefill_in_place(s, p1, {4, 0});  // a's first chunk; b did not fit beside it

  // d1 is ready, but alone it is half a batch and no row has a token yet: the next chunk first.
  PrefillPlan p2 = take_prefill(s);
  CATCH_CHECK(p2.ids == std::vector<SeqId>{a, b});
  CATCH_CHECK(p2.slot_rows[0].target_len == 4);  // where the first chunk ended
  prefill_in_place(s, p2, {5, 2});

  StepPlan st2 = take_step(s);  // none has stepped: window order, then slot order
  CATCH_CHECK(st2.ids == std::vector<SeqId>{a, b});
  CATCH_CHECK(st2.assembly == Assembly::InPlace);
  CATCH_CHECK(st2.slot_rows[0].target_len == 5);  // every token but pending
  CATCH_CHECK(st2.slot_rows[0].draft_len == 0);   // as these hand-made outcomes said: nothing stored
  CATCH_CHECK(st2.shape.lag == 5);
  s.complete(verified(st2, {2, 0}));  // a reaches max_tokens: its slot is free
  auto ev = s.take_events();
  CATCH_REQUIRE(ev.size() == 2);
  CATCH_CHECK(ev[0].finished);
  CATCH_CHECK(ev[0].tokens.size() == 2);

  PrefillPlan p3 = take_prefill(s);  // d2 joined the window in a's slot, the lowest free
  CATCH_CHECK(p3.ids == std::vector<SeqId>{d2});
  CATCH_CHECK(p3.slot_rows[0].slot == 0);
  CATCH_CHECK(s.slots().used() == 3);
  prefill_in_place(s, p3, {1});

  // Around the least recently stepped row (d2 and d1 never stepped: d2, the lower slot), with its
  // neighbour in slot order: consecutive slots.
  StepPlan st3 = take_step(s);
  CATCH_CHECK(st3.ids == std::vector<SeqId>{d2, b});
  CATCH_CHECK(st3.slot_rows[1].slot == 1);
  CATCH_CHECK(st3.slot_rows[1].target_len == 3);
  CATCH_CHECK(st3.slot_rows[1].draft_len == 3);  // K = 2, a = 0: the draft holds up to pending
  s.complete(verified(st3, {1, 1}));
  StepPlan st4 = take_step(s);  // d1 waited longest: it and its neighbour
  CATCH_CHECK(st4.ids == std::vector<SeqId>{b, d1});
  CATCH_CHECK(st4.slot_rows[1].slot == 2);
  CATCH_CHECK(st4.slot_rows[1].target_len == 0);
  s.complete(verified(st4, {2, 0}));
  s.cancel(b, FinishReason::None);  // not inside a step: its slot is free at once
  CATCH_CHECK(s.slots().used() == 2);
  CATCH_CHECK(s.cancelled() == 1);
}

CATCH_TEST_CASE("inplace: with decoding rows, a chunk and a step take turns", "[scheduler][inplace]") {
  const EngineConfig c = inplace_config(2, 3, 2, 4);
  Scheduler s(c, fixed_k(2), 1);
  const SeqId a = s.admit(req(1, 8)), b = s.admit(req(1, 8));
  StepPlan st = take_step(s);  // one-token prompts: nothing to store
  CATCH_CHECK(st.ids == std::vector<SeqId>{a, b});
  s.complete(verified(st, {0, 0}));
  const SeqId d = s.admit(req(12, 8));  // a long prompt arrives: three chunks
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
  for (int i = 0; i < 6; ++i) ids.push_back(s.admit(req(1, 8)));  // one-token prompts: all ready
  const std::vector<SeqId> low{ids[0], ids[1], ids[2]}, high{ids[3], ids[4], ids[5]};
  for (int round = 0; round < 3; ++round) {
    StepPlan a = take_step(s);
    CATCH_CHECK(a.ids == low);
    CATCH_CHECK(a.slot_rows[0].slot == 0);
    s.complete(verified(a, {0, 0, 0}));
    StepPlan b = take_step(s);
    CATCH_CHECK(b.ids == high);
    CATCH_CHECK(b.slot_rows[0].slot == 3);
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
  const SeqId a = s.admit(req(10, 8)), b = s.admit(req(1, 8)), d1 = s.admit(req(1, 8)), d2 = s.admit(req(1, 8));
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
  CATCH_CHECK(second.slot_rows[0].slot == 2);
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
  s.admit(req(6, 8));
  CATCH_CHECK_FALSE(take_prefill(s).with_draft);

  auto good = std::make_shared<DraftLengthPolicy>(ds);
  feed(*good, 0.001);
  good->seed_acceptance(60, 64);
  Scheduler t(c, good, 1);
  t.admit(req(6, 8));
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
  const SeqId a = s.admit(req(3, 8)), b = s.admit(req(60, 8));
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
