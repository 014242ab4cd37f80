// The scheduling policy on its own: plain C++, no tensors.
#include <catch2/catch.hpp>

#include <algorithm>

#include "actors/paper/batch_former.h"
#include "actors/scheduler/sequence_pool.h"
#include "actors/scheduler/window.h"

using namespace exspec;

namespace {
SeqRequest req(size_t prompt_len, int64_t max_tokens, std::vector<int64_t> eos = {}) {
  return SeqRequest{std::vector<int64_t>(prompt_len, 1), max_tokens, std::move(eos)};
}
bool contains(const std::vector<SeqId>& v, SeqId id) { return std::find(v.begin(), v.end(), id) != v.end(); }
}  // namespace

CATCH_TEST_CASE("write-back stops exactly at EOS or max_tokens and frees the caches", "[policy][pool]") {
  SequencePool pool;
  SeqId a = pool.admit(req(3, 10, {9}));
  SeqId b = pool.admit(req(3, 4));
  CATCH_CHECK(pool.take_waiting(5, false).size() == 2);
  const int64_t toks[] = {5, 9, 7, 8};
  CATCH_CHECK(pool.at(a).state == SeqState::Prefilling);
  CATCH_CHECK_THROWS(pool.write_back(a, toks, 1));  // no token before its prompt is stored
  pool.at(a).state = pool.at(b).state = SeqState::Running;  // as the Scheduler sets it once prefilled
  CATCH_CHECK(pool.write_back(a, toks, 4) == 2);  // EOS kept, tokens after it dropped
  CATCH_CHECK(pool.at(a).generated == std::vector<int64_t>{5, 9});
  CATCH_CHECK(pool.at(a).finish == FinishReason::Stop);
  CATCH_CHECK(pool.write_back(b, toks + 2, 2) == 2);
  CATCH_CHECK(pool.write_back(b, toks, 4) == 2);  // max_tokens 4 reached inside the step
  CATCH_CHECK(pool.at(b).finish == FinishReason::Length);
  CATCH_CHECK(pool.at(b).generated.size() == 4);
  CATCH_CHECK(pool.unfinished() == 0);
  CATCH_CHECK(pool.at(b).state == SeqState::Finished);
  CATCH_CHECK_THROWS(pool.write_back(b, toks, 1));
}

CATCH_TEST_CASE("waiting order: priority, then arrival or prompt length, cancel frees", "[policy][pool]") {
  SequencePool pool;
  SeqId long_prompt = pool.admit(req(30, 5));
  SeqId short_prompt = pool.admit(req(2, 5));
  SeqId urgent = pool.admit(req(50, 5), /*priority=*/1);
  SeqId cancelled = pool.admit(req(1, 5));
  pool.cancel(cancelled);
  CATCH_CHECK(pool.waiting() == 3);
  auto first = pool.take_waiting(2, /*sort_by_length=*/true);
  CATCH_CHECK(first == std::vector<SeqId>{urgent, short_prompt});
  CATCH_CHECK(pool.take_waiting(5, false) == std::vector<SeqId>{long_prompt});
  CATCH_CHECK(pool.unfinished() == 3);
  CATCH_CHECK(pool.admit(req(1, 0)) > 0);  // max_tokens 0 finishes at once
  CATCH_CHECK(pool.unfinished() == 3);
}

CATCH_TEST_CASE("the window refills up to W as sequences leave", "[policy][window]") {
  SequencePool pool;
  for (int i = 0; i < 5; ++i) pool.admit(req(4, 3));
  Window w(3, false);
  auto first = w.refill(pool);
  CATCH_CHECK(first.size() == 3);
  CATCH_CHECK(w.refill(pool).empty());
  w.remove(first[1]);
  auto more = w.refill(pool);
  CATCH_CHECK(more.size() == 1);
  CATCH_CHECK(w.members().size() == 3);
  CATCH_CHECK_FALSE(contains(w.members(), first[1]));
}

CATCH_TEST_CASE("batch formation prefers same-length groups, else the longest-waiting mixed batch", "[policy][grouping]") {
  BatchFormer f(/*B=*/4, /*min_group_fill=*/0.5, /*max_wait=*/8);
  // lengths: 10,10,10,12,13,14 — a group of 3 >= max(2, ceil(0.5*4))
  std::vector<Candidate> ready{{1, 10, 5}, {2, 12, 1}, {3, 10, 4}, {4, 13, 0}, {5, 10, 6}, {6, 14, 2}};
  auto c = f.form(ready, 7);
  CATCH_CHECK(c.same_length);
  CATCH_CHECK(c.ids == std::vector<SeqId>{3, 1, 5});  // oldest first inside the group

  // No bucket reaches 2: a mixed batch of the 4 longest-waiting.
  std::vector<Candidate> spread{{1, 10, 5}, {2, 11, 1}, {3, 12, 4}, {4, 13, 0}, {5, 14, 6}};
  auto m = f.form(spread, 7);
  CATCH_CHECK_FALSE(m.same_length);
  CATCH_CHECK(m.ids == std::vector<SeqId>{4, 2, 3, 1});

  // Equal-size buckets: the one holding the longest-waiting sequence wins.
  std::vector<Candidate> tie{{1, 10, 5}, {2, 10, 6}, {3, 20, 1}, {4, 20, 7}};
  CATCH_CHECK(f.form(tie, 8).ids == std::vector<SeqId>{3, 4});

  // Starvation: id 9 has waited more than max_wait steps, so its bucket (or a mixed batch) goes first.
  std::vector<Candidate> starving{{1, 10, 20}, {2, 10, 20}, {3, 10, 20}, {9, 30, 5}};
  auto s = f.form(starving, 21);
  CATCH_CHECK(contains(s.ids, 9));
  CATCH_CHECK_FALSE(s.same_length);

  // B = 1: every batch is a trivial group.
  BatchFormer one(1, 0.5, 8);
  auto o = one.form(spread, 7);
  CATCH_CHECK(o.same_length);
  CATCH_CHECK(o.ids == std::vector<SeqId>{4});

  // Plain steps ahead (not ragged): the group of 3 would save no realignment, so the 4
  // longest-waiting go together; a full group still goes as a group.
  auto plain = f.form(ready, 7, /*ragged=*/false);
  CATCH_CHECK_FALSE(plain.same_length);
  CATCH_CHECK(plain.ids == std::vector<SeqId>{4, 2, 6, 3});
  std::vector<Candidate> full{{1, 10, 5}, {2, 10, 1}, {3, 10, 4}, {4, 10, 0}, {5, 11, 0}};
  auto g = f.form(full, 7, false);
  CATCH_CHECK(g.same_length);
  CATCH_CHECK(g.ids == std::vector<SeqId>{4, 2, 3, 1});
}
