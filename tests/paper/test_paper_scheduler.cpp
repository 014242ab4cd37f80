// The PaperScheduler (nonspec, EqSpec, ExSpec) on its own: plans out, hand-made outcomes back,
// no tensors and no actors. The tensor states it moves are opaque handles here (it never looks
// inside them). The bookkeeping every planner shares (actors/scheduler/planner.h) is tested here too:
// cancellations at the step boundary, failed steps, two jobs in flight.
#include <catch2/catch.hpp>

#include <algorithm>

#include "actors/paper/paper_scheduler.h"
#include "tests/engine_configs.h"
#include "tests/scheduler_support.h"

using namespace exspec;

namespace {

std::shared_ptr<SeqTensors> opaque_state() {
  static int tag;
  return std::shared_ptr<SeqTensors>(std::shared_ptr<void>(), reinterpret_cast<SeqTensors*>(&tag));
}

using test::fixed_k;
using test::fixed_k_config;
using test::ones_request;

PaperPrefillPlan take_prefill(PaperScheduler& s) { return test::take_plan<PaperPrefillPlan>(s); }
PaperStepPlan take_step(PaperScheduler& s) { return test::take_plan<PaperStepPlan>(s); }

void prefill_ok(PaperScheduler& s, const PaperPrefillPlan& p) {
  PaperPrefillOutcome o;
  o.serial = p.serial;
  for (const auto& prompt : p.prompts) {
    o.states.push_back(opaque_state());
    o.draft_lag.push_back(static_cast<int64_t>(prompt.size()) - 1);
  }
  s.prefilled(std::move(o));
}

// Every row accepts `accepted[b]` drafts (test::accept_rows); each comes back as its own state
// unless the batch is kept whole.
PaperStepOutcome verified(const PaperStepPlan& p, const std::vector<int64_t>& accepted) {
  auto o = test::accept_rows<PaperStepOutcome>(p, accepted);
  for (size_t b = 0; b < p.ids.size(); ++b) o.draft_lag.push_back(test::draft_lag_after(accepted[b], p.k));
  for (size_t b = 0; b < p.ids.size() && !p.keep_batch; ++b) o.rows.push_back(opaque_state());
  return o;
}

}  // namespace

CATCH_TEST_CASE("exspec: prefill a batch's worth, then groups, the rows they were cut from are reused", "[scheduler]") {
  PaperScheduler s(fixed_k_config(Mode::ExSpec, 2, 3, 2), fixed_k(2), 1);
  const SeqId a = s.admit(ones_request(4, 8)), b = s.admit(ones_request(4, 8)), c = s.admit(ones_request(6, 8));
  PaperPrefillPlan p1 = take_prefill(s);
  CATCH_CHECK(p1.ids == std::vector<SeqId>{a, b});  // B at a time, not the whole window refill
  CATCH_CHECK(p1.with_draft);
  CATCH_CHECK(s.take_dequeued() == 3);               // all three joined the window
  CATCH_CHECK(std::holds_alternative<std::monostate>(s.plan()));  // one piece of work at a time
  prefill_ok(s, p1);
  prefill_ok(s, take_prefill(s));

  PaperStepPlan st = take_step(s);
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
  PaperStepPlan st2 = take_step(s);
  CATCH_CHECK(st2.ids == std::vector<SeqId>{c, a});
  CATCH_CHECK(st2.assembly == Assembly::Stack);
  CATCH_CHECK_FALSE(st2.shape.reused);
}

CATCH_TEST_CASE("exspec: the rows of the last step, in its order, are reused with no copy", "[scheduler]") {
  PaperScheduler s(fixed_k_config(Mode::ExSpec, 2, 2, 2), fixed_k(2), 1);
  const SeqId a = s.admit(ones_request(4, 8)), b = s.admit(ones_request(7, 8));
  prefill_ok(s, take_prefill(s));
  PaperStepPlan st = take_step(s);
  CATCH_CHECK(st.ids == std::vector<SeqId>{a, b});
  CATCH_CHECK(st.assembly == Assembly::Repad);  // mixed lengths
  s.complete(verified(st, {2, 0}));
  PaperStepPlan again = take_step(s);
  CATCH_CHECK(again.ids == st.ids);
  CATCH_CHECK(again.assembly == Assembly::Reuse);
  CATCH_CHECK(again.shape.reused);
  s.complete(verified(again, {0, 0}));
  s.cancel(b, FinishReason::None);  // not inside a step: ends now
  PaperStepPlan alone = take_step(s);
  CATCH_CHECK(alone.ids == std::vector<SeqId>{a});
  CATCH_CHECK(alone.assembly == Assembly::Stack);  // a subset of the batch: no longer that batch
  CATCH_CHECK(s.stats().reused_steps == 1);
}

CATCH_TEST_CASE("finished, cancelled and failed rows leave at the step boundary, producers hear once", "[scheduler]") {
  PaperScheduler s(fixed_k_config(Mode::ExSpec, 3, 3, 1), fixed_k(1), 1);
  const SeqId a = s.admit(ones_request(3, 2)), b = s.admit(ones_request(3, 9)), c = s.admit(ones_request(3, 9));
  const SeqId none = s.admit(ones_request(3, 0));  // max_tokens 0: ends at once
  auto ev0 = s.take_events();
  CATCH_REQUIRE(ev0.size() == 1);
  CATCH_CHECK(ev0[0].id == none);
  CATCH_CHECK(ev0[0].finished->finish == FinishReason::Length);
  prefill_ok(s, take_prefill(s));
  PaperStepPlan st = take_step(s);
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

  PaperStepPlan st2 = take_step(s);
  CATCH_CHECK(st2.ids == std::vector<SeqId>{c});
  PaperStepOutcome failed;
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
  PaperScheduler s(fixed_k_config(Mode::EqSpec, 3, 3, 3), fixed_k(3), 2);
  const SeqId a = s.admit(ones_request(3, 9, {100})), b = s.admit(ones_request(5, 9)), c = s.admit(ones_request(4, 9)), d = s.admit(ones_request(4, 9));
  PaperPrefillPlan p = take_prefill(s);
  CATCH_CHECK(p.ids == std::vector<SeqId>{a, b, c});
  CATCH_CHECK(std::holds_alternative<std::monostate>(s.plan()));  // one prefill at a time; no pool steps
  prefill_ok(s, p);
  PaperStepPlan first = take_step(s);  // the fixed batch's first step, before the next prefill
  CATCH_CHECK(first.assembly == Assembly::Repad);
  CATCH_CHECK(first.keep_batch);
  CATCH_CHECK_FALSE(first.shape.reused);
  PaperPrefillPlan p2 = take_prefill(s);  // the second slot: the next fixed batch's prefill
  CATCH_CHECK(p2.ids == std::vector<SeqId>{d});
  s.cancel(c, FinishReason::None);  // inside the fixed batch: at its next boundary

  PaperStepOutcome o = verified(first, {0, 1, 2});  // row a commits token 100, its EOS
  o.batch = std::shared_ptr<SpecBatch>(std::shared_ptr<void>(), reinterpret_cast<SpecBatch*>(&o));
  s.complete(o);
  PaperStepPlan next = take_step(s);
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
  PaperScheduler s(fixed_k_config(Mode::ExSpec, 2, 4, 2), fixed_k(2), 2);
  std::vector<SeqId> ids;
  for (size_t n : {3, 3, 5, 7}) ids.push_back(s.admit(ones_request(n, 9)));
  PaperPrefillPlan p = take_prefill(s);
  prefill_ok(s, p);
  PaperPrefillPlan p2 = take_prefill(s);
  PaperStepPlan st = take_step(s);  // while the second prefill runs
  for (SeqId id : st.ids) CATCH_CHECK(std::find(p2.ids.begin(), p2.ids.end(), id) == p2.ids.end());
  CATCH_CHECK(std::holds_alternative<std::monostate>(s.plan()));  // two out
  s.cancel_all();
  CATCH_CHECK(s.take_events().empty());  // every row is inside a piece of work
  prefill_ok(s, p2);
  s.complete(verified(st, {0, 0}));
  auto ev = s.take_events();
  CATCH_CHECK(ev.size() == 4);
  for (const auto& e : ev) CATCH_CHECK(e.finished->finish == FinishReason::None);
  CATCH_CHECK(s.idle());
}
